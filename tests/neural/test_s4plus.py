"""S4+ (State Memory Replay) and S4++: equations against independent numpy code, modes."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from lds_toolkit.neural import S4, S4Plus, S4PlusPlus, StateMemoryReplay
from lds_toolkit.neural.layers.s4plus import relative_position_bucket

from .conftest import randomize_zero_params, run_steps


def _sigmoid(z):
    return 1 / (1 + np.exp(-z))


def _silu(z):
    return z * _sigmoid(z)


def _smr_numpy(u, weight, bias, tau, pad, depthwise):
    """u (B, L, d); weight (d, 1 or d, tau); eq. 15 written as an explicit loop."""
    B, L, d = u.shape
    if pad == "replicate":
        hist = np.repeat(u[:, :1], tau - 1, axis=1)
    else:
        hist = np.zeros((B, tau - 1, d))
    up = np.concatenate([hist, u], axis=1)  # up[k + tau - 1] = u[k]
    z = np.zeros((B, L, d))
    for k in range(L):
        window = up[:, k : k + tau]  # u[k-tau+1 .. k]
        for c in range(d):
            if depthwise:
                z[:, k, c] = bias[c] + window[:, :, c] @ weight[c, 0]
            else:
                z[:, k, c] = bias[c] + np.einsum("bjm,mj->b", window, weight[c])
    return u * _sigmoid(z)


@pytest.mark.parametrize("pad", ["replicate", "zeros"])
@pytest.mark.parametrize("depthwise", [True, False])
@pytest.mark.parametrize("tau", [1, 4])
def test_smr_matches_eq15(pad, depthwise, tau):
    smr = StateMemoryReplay(3, tau, depthwise=depthwise, pad=pad).double()
    u = torch.randn(2, 11, 3, dtype=torch.float64)
    got = smr(u).detach().numpy()
    w, b = smr.conv.weight.detach().numpy(), smr.conv.bias.detach().numpy()
    ref = _smr_numpy(u.numpy(), w, b, tau, pad, depthwise)
    np.testing.assert_allclose(got, ref, rtol=0, atol=1e-13)
    # the factor is a sigmoid: |u_adj| < |u| elementwise (Remark 1: ||h_tau||_inf < 1)
    assert (np.abs(got) <= np.abs(u.numpy())).all()


def test_s4plus_is_s4_on_adjusted_input():
    plus = S4Plus(4, d_state=8, tau=3, seed=0).double()
    s4 = S4(4, d_state=8, seed=0).double()
    s4.ssm.load_state_dict(plus.ssm.state_dict())
    s4.out.load_state_dict(plus.out.state_dict())
    x = torch.randn(2, 30, 4, dtype=torch.float64)
    with torch.no_grad():
        torch.testing.assert_close(plus(x), s4(plus.smr(x)), rtol=0, atol=1e-13)


@pytest.mark.parametrize("pad", ["replicate", "zeros"])
@pytest.mark.parametrize("dtype, tol", [(torch.float64, 1e-10), (torch.float32, 1e-4)])
def test_s4plus_conv_mode_equals_step_mode(pad, dtype, tol):
    layer = S4Plus(8, smr_pad=pad, seed=1).to(dtype)
    x = torch.randn(2, 1024, 8, generator=torch.Generator().manual_seed(1)).to(dtype)
    with torch.no_grad():
        y_conv, y_step = layer(x), run_steps(layer, x)[0]
    assert y_conv.abs().max() > 0.1
    np.testing.assert_allclose(y_step.numpy(), y_conv.numpy(), rtol=0, atol=tol)


def test_s4plus_chunks_with_state():
    layer = S4Plus(4, d_state=8, tau=5, seed=2).double()
    x = torch.randn(2, 90, 4, dtype=torch.float64)
    with torch.no_grad():
        y = layer(x)
        y1, s = layer(x[:, :2], return_state=True)  # shorter than tau - 1
        y2, s = layer(x[:, 2:40], s, return_state=True)
        y3 = layer(x[:, 40:], s)
    torch.testing.assert_close(torch.cat([y1, y2, y3], 1), y, rtol=0, atol=1e-10)


# --- S4++ ----------------------------------------------------------------------------------
def _bucket_py(rel, bidirectional, num_buckets, max_distance):
    """T5 relative-position bucket of one offset rel = key - query (plain python)."""
    ret, n = 0, -rel
    if bidirectional:
        num_buckets //= 2
        ret += num_buckets if n < 0 else 0
        n = abs(n)
    else:
        n = max(n, 0)
    max_exact = num_buckets // 2
    if n < max_exact:
        return ret + n
    large = max_exact + int(
        math.log(n / max_exact) / math.log(max_distance / max_exact) * (num_buckets - max_exact)
        + 1e-9  # exact bucket edges (n = 64 of 128) belong to the upper bucket
    )
    return ret + min(large, num_buckets - 1)


def test_relative_position_bucket():
    rel = torch.arange(-400, 401)
    for bidir in (False, True):
        got = relative_position_bucket(rel, bidir, 32, 128).tolist()
        assert got == [_bucket_py(r, bidir, 32, 128) for r in rel.tolist()]
    causal = relative_position_bucket(-torch.arange(0, 400), False, 32, 128)
    assert torch.equal(causal[:16], torch.arange(16))  # exact buckets for short distances
    assert (causal.diff() >= 0).all() and causal.max() == 31


def _p(layer, name):
    return dict(layer.named_parameters())[name].detach().numpy()


def _s4pp_numpy(layer: S4PlusPlus, x: np.ndarray) -> np.ndarray:
    """Eqs. 18-28 written directly in numpy, one softmax row at a time."""
    B, L, d = x.shape
    h = layer.n_heads
    smr = layer.smr
    u_adj = _smr_numpy(
        x, smr.conv.weight.detach().numpy(), smr.conv.bias.detach().numpy(), smr.tau,
        smr.pad, smr.depthwise,
    )
    K_ssm = layer.ssm.kernel(L, torch.float64).detach().numpy()
    D = _p(layer, "ssm.D")
    s4 = np.zeros_like(x)
    for b in range(B):
        for c in range(d):
            s4[b, :, c] = np.convolve(u_adj[b, :, c], K_ssm[c])[:L] + D[c] * u_adj[b, :, c]

    def lin(name, z, bias=True):
        out = z @ _p(layer, f"{name}.weight").T
        return out + _p(layer, f"{name}.bias") if bias else out

    Q, K, V = _silu(lin("q_proj", x)), _silu(lin("k_proj", s4)), _silu(lin("v_proj", x))
    w_pos = _p(layer, "pos_bias.weight")
    dq, dv = layer.d_qk // h, layer.d_v // h
    O = np.zeros((B, L, layer.d_v))
    for b in range(B):
        for head in range(h):
            qh = Q[b, :, head * dq : (head + 1) * dq]
            kh = K[b, :, head * dq : (head + 1) * dq]
            vh = V[b, :, head * dv : (head + 1) * dv]
            for i in range(L):
                js = range(i + 1) if layer.causal else range(L)
                scores = np.array([
                    qh[i] @ kh[j] / math.sqrt(dq)
                    + w_pos[head, _bucket_py(j - i, not layer.causal, 32, 128)]
                    for j in js
                ])
                p = np.exp(scores - scores.max())
                p /= p.sum()
                O[b, i, head * dv : (head + 1) * dv] = p @ vh[list(js)]
    rho = _silu(lin("rho_proj", s4))
    S = lin("s_proj", s4)
    H = _silu(lin("h_proj", rho * O, bias=False) + S)
    psi = _sigmoid(lin("psi_proj", s4))
    return psi * H + (1 - psi) * x


@pytest.mark.parametrize("causal", [True, False])
@pytest.mark.parametrize("n_heads, attn_block", [(1, 1024), (2, 7)])
def test_s4plusplus_matches_equations(causal, n_heads, attn_block):
    layer = S4PlusPlus(
        6, d_state=8, d_qk=4, d_v=8, n_heads=n_heads, tau=3, causal=causal,
        attn_block=attn_block, seed=4,
    ).double()
    randomize_zero_params(layer, seed=1)
    x = torch.randn(2, 23, 6, dtype=torch.float64, generator=torch.Generator().manual_seed(2))
    with torch.no_grad():
        got = layer(x).numpy()
    np.testing.assert_allclose(got, _s4pp_numpy(layer, x.numpy()), rtol=0, atol=1e-10)


def test_s4plusplus_bidirectional_sees_the_future():
    layer = S4PlusPlus(4, d_state=8, causal=False, seed=5).double()
    x = torch.randn(1, 20, 4, dtype=torch.float64)
    x2 = x.clone()
    x2[:, 15:] += 1.0
    with torch.no_grad():
        delta = (layer(x2)[:, :15] - layer(x)[:, :15]).abs().max()
    assert delta > 1e-4


@pytest.mark.parametrize("dtype, tol", [(torch.float64, 1e-10), (torch.float32, 1e-4)])
def test_s4plusplus_step_mode_equals_forward(dtype, tol):
    layer = S4PlusPlus(8, n_heads=2, attn_block=50, seed=6).to(dtype)
    randomize_zero_params(layer, seed=2)
    x = torch.randn(2, 130, 8, generator=torch.Generator().manual_seed(3)).to(dtype)
    with torch.no_grad():
        np.testing.assert_allclose(
            run_steps(layer, x)[0].numpy(), layer(x).numpy(), rtol=0, atol=tol
        )


def test_s4plusplus_blocked_attention_gradients_match_single_block():
    x = torch.randn(2, 40, 4, dtype=torch.float64)
    grads = []
    for block in (1024, 6):
        layer = S4PlusPlus(4, d_state=8, attn_block=block, seed=7).double()
        randomize_zero_params(layer, seed=3)
        xi = x.clone().requires_grad_(True)
        layer(xi).pow(2).sum().backward()
        grads.append([xi.grad] + [p.grad for p in layer.parameters()])
    for a, b in zip(*grads):
        torch.testing.assert_close(a, b, rtol=0, atol=1e-10)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"n_heads": 3}, "divisible by n_heads"),
        ({"d_qk": 6, "n_heads": 4}, "d_qk=6 must be divisible"),
        ({"smr_pad": "reflect"}, "pad"),
        ({"tau": 0}, "tau"),
        ({"attn_block": 0}, "attn_block"),
    ],
)
def test_s4plusplus_bad_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        S4PlusPlus(8, **kwargs)


def test_step_needs_causal_and_a_state():
    layer = S4PlusPlus(4, causal=False)
    with pytest.raises(ValueError, match="causal"):
        layer.initial_state(1)
    with pytest.raises(TypeError, match="S4PlusPlusState"):
        S4PlusPlus(4).step(torch.randn(1, 4), None)
    with pytest.raises(TypeError, match="S4PlusState"):
        S4Plus(4).step(torch.randn(1, 4), None)


def test_attention_weights_are_causal_rows_of_a_softmax():
    layer = S4PlusPlus(4, d_state=8, n_heads=2, seed=8).double()
    randomize_zero_params(layer, seed=4)
    x = torch.randn(1, 12, 4, dtype=torch.float64)
    P = layer.attention_weights(x)
    assert P.shape == (1, 2, 12, 12)
    torch.testing.assert_close(P.sum(-1), torch.ones(1, 2, 12, dtype=torch.float64))
    lower = torch.tril(torch.ones(12, 12, dtype=torch.bool))
    assert P[0, 0][~lower].abs().max() == 0 and (P[0, 0][lower] > 0).all()
    # O = P V reproduces the layer's attention output
    silu = torch.nn.functional.silu
    with torch.no_grad():
        s4 = layer.ssm(layer.smr(x))
        Q, K, V = silu(layer.q_proj(x)), silu(layer.k_proj(s4)), silu(layer.v_proj(x))
        O = (P @ layer._heads(V)).transpose(1, 2).reshape(1, 12, 4)
        torch.testing.assert_close(layer.attention(Q, K, V), O, rtol=0, atol=1e-12)
