"""Tests of LaS attention: the fast (no L x L) form against the explicit L x L eq. 3, the
pooling identity, causality (and the leak of the paper's centred pool), alpha initialisation,
LaS-chunk, gradients, errors."""

from __future__ import annotations

import doctest
import math
import warnings

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from lds_toolkit.neural.layers import _scored_attention
from lds_toolkit.neural.layers._las_core import (
    alibi_bias,
    alibi_slopes,
    causal_weighted_pool,
    eld_factors,
    las_alpha_init,
    las_attention,
)
from lds_toolkit.neural.layers._las_reference import las_attention_dense, las_attention_matrix
from lds_toolkit.neural.layers.las import LaSAttention

from .conftest import assert_parameter_gradcheck

F64 = torch.float64
ORDERS = ["after_softmax", "before_softmax"]


def qkv(n=2, h=4, t=40, d=3, seed=0, dtype=F64):
    g = torch.Generator().manual_seed(seed)
    return tuple(torch.randn(n, h, t, d, generator=g, dtype=dtype) for _ in range(3))


def make_input(bsz=2, length=50, d=16, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(bsz, length, d, generator=g, dtype=F64)


def make_layer(d=16, seed=0, **kw):
    torch.manual_seed(seed)
    return LaSAttention(d, **kw).to(F64)


# ---------------------------------------------------------------- alpha


@pytest.mark.parametrize("h,bound", [(8, 1e-3), (8, 1e-4), (3, 0.5), (2, 2.0)])
def test_alpha_init(h, bound):
    alpha = las_alpha_init(h, bound).numpy()
    assert alpha[0] == 0.0  # head 0: vanilla attention
    assert alpha[-1] == pytest.approx(bound, rel=1e-12)
    assert np.all(np.diff(alpha) > 0)
    decay = np.exp(-alpha)  # evenly spaced in "exponential space"
    np.testing.assert_allclose(np.diff(decay), np.diff(decay)[0], rtol=1e-9)
    assert las_alpha_init(1, bound).tolist() == [0.0]


def test_alpha_schedules():
    b = 1e-3
    lin = las_alpha_init(8, b, "linear").numpy()
    np.testing.assert_allclose(lin, b * np.arange(8) / 7, rtol=0, atol=1e-18)
    exp_u = las_alpha_init(8, b, "exp_uniform").numpy()
    # the two readings of "[0, B]" agree to O(B^2): within 0.05 % at B = 1e-3
    np.testing.assert_allclose(exp_u[1:], lin[1:], rtol=5e-4)
    log = las_alpha_init(8, b, "log").numpy()
    assert log[0] == 0.0 and log[1] == pytest.approx(b) and log[-1] == pytest.approx(1.0)
    ratios = log[2:] / log[1:-1]  # log-spaced: constant ratio B^(-1/6)
    np.testing.assert_allclose(ratios, b ** (-1 / 6), rtol=1e-12)
    assert las_alpha_init(2, 0.3, "log").tolist() == [0.0, 0.3]
    for sched in ("exp_uniform", "linear", "log"):
        assert las_alpha_init(8, 0.0, sched).tolist() == [0.0] * 8  # B = 0: no decay
    with pytest.raises(ValueError, match="schedule"):
        las_alpha_init(8, b, "geometric")


def test_alpha_list_round_trips():
    rates = [0.0, 1e-3, 0.02, 0.5]
    layer = LaSAttention(16, n_heads=4, alpha=rates).to(F64)
    assert layer.alpha.dtype == F64 and layer.alpha.tolist() == rates  # exactly
    assert LaSAttention(16, n_heads=4, alpha=rates).alpha.tolist() == rates  # float32 layer
    assert layer.alpha_schedule == "custom" and "alpha=[0.0, 0.001, 0.02, 0.5]" in repr(layer)
    # through a state dict into a layer built with another schedule
    other = LaSAttention(16, n_heads=4, alpha_schedule="log").to(F64)
    other.load_state_dict(layer.state_dict())
    assert torch.equal(other.alpha, layer.alpha)
    # the rates are the ones used: equal to the explicit L x L form with those rates
    q, k, v = qkv(h=4, t=30)
    fast = las_attention(q, k, v, layer.alpha, 3)
    torch.testing.assert_close(fast, las_attention_dense(q, k, v, torch.tensor(rates, dtype=F64),
                                                         3), rtol=0, atol=1e-12)
    # a tensor is accepted too
    assert LaSAttention(16, n_heads=4, alpha=torch.tensor(rates)).alpha.shape == (4,)


def test_eld_factor_matches_its_formula():
    """exp(-alpha_c d), and equal to the first column of the explicit ELD matrix."""
    layer = LaSAttention(16, alpha_schedule="log", chunk_size=128)
    f = layer.eld_factors()
    assert f.shape == (8, 128) and f.dtype == F64
    d = np.arange(128)
    alpha = layer.alpha.double().numpy()
    np.testing.assert_allclose(f.numpy(), np.exp(-alpha[:, None] * d), rtol=1e-15)
    # the ELD matrix exp(-alpha D_L) is Toeplitz with that first column
    i, j = np.meshgrid(d, d, indexing="ij")
    eld = np.exp(-alpha[:, None, None] * np.clip(i - j, 0, None))
    np.testing.assert_allclose(eld[:, :, 0], f.numpy(), rtol=1e-15)
    np.testing.assert_allclose(eld[:, 100, 100 - d[:101]], f.numpy()[:, :101], rtol=1e-15)
    # how far ELD reaches inside a 128-token chunk under each reading, at B = 1e-3
    low = {s: float(eld_factors(las_alpha_init(8, 1e-3, s), 128)[:, -1].min())
           for s in ("exp_uniform", "linear", "log")}
    assert low["exp_uniform"] == pytest.approx(math.exp(-0.127), rel=1e-9)
    assert low["linear"] == pytest.approx(math.exp(-0.127), rel=1e-9)
    assert low["log"] == pytest.approx(math.exp(-127.0), rel=1e-9)
    with pytest.raises(ValueError, match="length"):
        layer.eld_factors(0)


def test_alibi_follows_eq1_against_a_naive_loop():
    """softmax((q.k - m_h (i - j)) / sqrt(d)) over j <= i, m_h = 2^(-8h/H): eq. 1."""
    torch.manual_seed(0)
    layer = LaSAttention(16, n_heads=4, pool_size=1, decay_bound=0.0, alibi=True).to(F64)
    x = make_input(2, 11, 16)
    y = layer(x)
    q, k, v = layer.q_proj(x), layer.k_proj(x), layer.v_proj(x)
    slopes = [2.0 ** (-8 * (h + 1) / 4) for h in range(4)]
    assert alibi_slopes(4).tolist() == slopes
    naive = torch.zeros(2, 11, 16, dtype=F64)
    for b in range(2):
        for h in range(4):
            sl = slice(4 * h, 4 * h + 4)
            for i in range(11):
                s_ = torch.stack([(q[b, i, sl] @ k[b, j, sl] - slopes[h] * (i - j)) / 2.0
                                  for j in range(i + 1)])
                naive[b, i, sl] = (torch.softmax(s_, 0)[:, None] * v[b, : i + 1, sl]).sum(0)
    torch.testing.assert_close(y, layer.out_proj(naive), rtol=0, atol=1e-12)


@pytest.mark.parametrize("order", ORDERS)
@pytest.mark.parametrize("pool", [1, 3, 5])
def test_alibi_fast_form_equals_explicit_matrix(order, pool):
    q, k, v = qkv(t=37)
    slopes = alibi_slopes(4)
    for alpha in (torch.zeros(4, dtype=F64), torch.tensor([0.0, 0.01, 0.3, 2.0], dtype=F64)):
        fast = las_attention(q, k, v, alpha, pool, order, alibi=slopes)
        dense = las_attention_dense(q, k, v, alpha, pool, order, alibi=slopes)
        torch.testing.assert_close(fast, dense, rtol=0, atol=1e-12)
        blocked = las_attention(q, k, v, alpha, pool, order, alibi=slopes, block=5)
        torch.testing.assert_close(blocked, dense, rtol=0, atol=1e-12)
    # the pooled bias: the mean of the bias over the pooled window
    bias = alibi_bias(slopes, torch.arange(9), torch.arange(9), 3, pool, pooled_scores=True)
    plain = alibi_bias(slopes, torch.arange(9), torch.arange(9), 3)
    for i, j in ((8, 0), (8, 1), (8, 5), (4, 4)):
        window = [plain[:, i, j - m] if j - m >= 0 else torch.zeros(4, dtype=F64)
                  for m in range(pool)]
        torch.testing.assert_close(bias[:, i, j], sum(window) / pool, rtol=1e-12, atol=1e-12)


def test_alpha_is_a_buffer_not_a_parameter():
    layer = LaSAttention(16)
    assert "alpha" in dict(layer.named_buffers())
    assert all("alpha" not in n for n, _ in layer.named_parameters())
    assert layer.alpha[0].item() == 0.0 and layer.alpha.shape == (8,)


def test_head_zero_is_vanilla_attention():
    """alpha_0 = 0 and no pooling: head 0 is plain causal softmax attention."""
    q, k, v = qkv()
    alpha = torch.tensor([0.0, 0.1, 0.2, 0.3], dtype=F64)
    out = las_attention(q, k, v, alpha, pool_size=1)
    ref = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    torch.testing.assert_close(out[:, 0], ref[:, 0], rtol=0, atol=1e-13)
    assert (out[:, 1:] - ref[:, 1:]).abs().max() > 1e-3


# ---------------------------------------------------------------- fast form vs explicit L x L


@pytest.mark.parametrize("order", ORDERS)
@pytest.mark.parametrize("pool", [1, 2, 3, 5])
def test_fast_form_equals_explicit_matrix(order, pool):
    q, k, v = qkv(t=45)
    alpha = torch.tensor([0.0, 0.01, 0.3, 2.0], dtype=F64)
    fast = las_attention(q, k, v, alpha, pool, order)
    dense = las_attention_dense(q, k, v, alpha, pool, order)
    torch.testing.assert_close(fast, dense, rtol=0, atol=1e-12)


@pytest.mark.parametrize("pieces", ["whole", "tiles and pieces"])
@pytest.mark.parametrize("order", ORDERS)
def test_query_blocks_equal_explicit_matrix(order, pieces, monkeypatch):
    """The dense route in blocks of queries (each with its own slice of keys and bias), and
    in causal tiles of 5 queries and pieces of one sequence."""
    if pieces != "whole":
        monkeypatch.setattr(_scored_attention, "PIECE_ENTRIES", 1)
        monkeypatch.setattr(_scored_attention, "TILE", 5)
    q, k, v = qkv(t=64)
    alpha = torch.tensor([0.0, 0.05, 0.5, 1.0], dtype=F64)
    dense = las_attention_dense(q, k, v, alpha, 3, order)
    for block in (1, 7, 63):
        fast = las_attention(q, k, v, alpha, 3, order, block=block, backend="dense")
        torch.testing.assert_close(fast, dense, rtol=0, atol=1e-12)


def _output_and_gradients(fn, q, k, v, seed=5):
    q, k, v = (t.detach().clone().requires_grad_(True) for t in (q, k, v))
    out = fn(q, k, v)
    weight = torch.randn(out.shape, generator=torch.Generator().manual_seed(seed),
                         dtype=out.dtype)
    (out * weight).sum().backward()
    return out.detach(), q.grad, k.grad, v.grad


@pytest.mark.parametrize("alibi", [False, True])
@pytest.mark.parametrize("order", ORDERS)
def test_streamed_backward_equals_autograd_of_the_explicit_matrix(order, alibi, monkeypatch):
    """Beyond one block of queries the dense route keeps no scores for the backward pass
    (flash attention's backward, tile by tile): output and gradients of q, k, v equal
    autograd through eq. 3's L x L form, in float64 to round-off, over tiles and pieces."""
    from lds_toolkit.neural.layers import _streamed_attention

    monkeypatch.setattr(_scored_attention, "TILE", 7)
    monkeypatch.setattr(_scored_attention, "PIECE_ENTRIES", 300)
    calls = []
    real_apply = _streamed_attention.StreamedAttention.apply
    monkeypatch.setattr(_scored_attention.StreamedAttention, "apply",
                        lambda *a: calls.append(1) or real_apply(*a))
    q, k, v = qkv(n=3, t=60, d=4, seed=2)
    alpha = torch.tensor([0.0, 0.05, 0.5, 2.0], dtype=F64)
    slopes = alibi_slopes(4) if alibi else None
    dense = _output_and_gradients(
        lambda q, k, v: las_attention_dense(q, k, v, alpha, 3, order, alibi=slopes), q, k, v)
    streamed = _output_and_gradients(
        lambda q, k, v: las_attention(q, k, v, alpha, 3, order, alibi=slopes, block=16,
                                      backend="dense"), q, k, v)
    assert calls, "the streamed route was not taken"
    for a, b in zip(streamed, dense):
        torch.testing.assert_close(a, b, rtol=0, atol=1e-12)


def test_streamed_backward_in_bf16_stays_within_one_percent():
    """bf16 inputs: the streamed route's scores, softmax statistics and gradients are
    float32 inside; output and gradients within 1 % (max relative) of float32's."""
    q, k, v = qkv(n=2, h=8, t=300, d=8, seed=4, dtype=torch.float32)
    alpha = las_alpha_init(8, 4.0, "exp_uniform").float()

    def run(dtype):
        return _output_and_gradients(
            lambda q, k, v: las_attention(q.to(dtype), k.to(dtype), v.to(dtype), alpha, 1,
                                          block=64, backend="dense").float(), q, k, v)

    for low, full in zip(run(torch.bfloat16), run(torch.float32)):
        assert float((low.float() - full).abs().max() / full.abs().max()) < 0.01


def _explicit_scores_refused(monkeypatch):
    """las_attention may not fall back to explicit scores (the tiled SDPA route must run)."""
    from lds_toolkit.neural.layers import _las_core

    def refuse(*args, **kwargs):
        raise AssertionError("las_attention computed explicit scores")

    monkeypatch.setattr(_las_core, "scored_attention", refuse)


def test_eld_tile_bounds_the_rescaling():
    """One tile of the whole sequence while max(alpha) * L <= 30, else the largest multiple
    of 64 that keeps it; none above 30/64 per token, for NaN or negative decays."""
    from lds_toolkit.neural.layers._decayed_sdpa import eld_tile

    f = torch.tensor
    assert eld_tile(f([0.0, 0.001]), 16384) == 16384  # 16.4 <= 30: one causal call
    assert eld_tile(f([0.0, 0.01]), 16384) == 2944    # 3000 tokens -> 2944
    assert eld_tile(f([0.0, 0.1]), 1024) == 256       # 300 tokens -> 256
    assert eld_tile(f([0.46]), 1024) == 64            # 65 tokens -> 64
    assert eld_tile(f([0.47]), 1024) == 0             # 63 tokens: below one step
    assert eld_tile(f([0.0]), 100) == 100
    assert eld_tile(f([float("nan")]), 1024) == eld_tile(f([-0.1]), 1024) == 0
    for a in (1e-3, 0.02, 0.3):
        tile = eld_tile(f([a]), 4096)
        assert a * tile <= 30 and (tile == 4096 or a * (tile + 64) > 30)


@pytest.mark.parametrize("order", ORDERS)
@pytest.mark.parametrize("rates,block", [((0.0, 0.01, 0.05, 0.1), 48),
                                         ((0.0, 0.05, 0.2, 0.4), 100)],
                         ids=["one-call", "tiles-of-64"])
def test_tiled_sdpa_route_equals_autograd_of_the_explicit_matrix(order, rates, block,
                                                                 monkeypatch):
    """On a CPU beyond one block of queries without ALiBi, LaS is fused SDPA on query tiles
    of rescaled queries and keys: output and q, k, v gradients equal autograd through eq. 3's
    L x L form in float64 to round-off, in one causal call (150 tokens at decays up to 0.1:
    factors within e^+-15) and over tiles cut to 64 queries by the decay 0.4 (30 / 0.4 =
    75), where keys 86 tokens before a tile carry factors of e^-34."""
    _explicit_scores_refused(monkeypatch)
    q, k, v = qkv(n=2, t=150, d=4, seed=6)
    alpha = torch.tensor(rates, dtype=F64)
    dense = _output_and_gradients(
        lambda q, k, v: las_attention_dense(q, k, v, alpha, 3, order), q, k, v)
    tiled = _output_and_gradients(
        lambda q, k, v: las_attention(q, k, v, alpha, 3, order, block=block), q, k, v)
    for a, b in zip(tiled, dense):
        torch.testing.assert_close(a, b, rtol=0, atol=1e-12)


def test_tiled_sdpa_route_in_float32_where_far_keys_underflow(monkeypatch):
    """float32, decay 0.4 over 3000 tokens (the default block): factors of keys more than
    ~260 tokens before a tile underflow to 0, where the true scores are below e^-87 |q.k|;
    within 2e-5 of the float64 L x L form (as the explicit float32 scores are), finite."""
    _explicit_scores_refused(monkeypatch)
    q, k, v = qkv(n=1, h=2, t=3000, d=4, seed=2)
    alpha = torch.tensor([0.0, 0.4], dtype=F64)
    dense = las_attention_dense(q, k, v, alpha, 5)
    fast32 = las_attention(q.float(), k.float(), v.float(), alpha.float(), 5)
    assert fast32.dtype == torch.float32 and torch.isfinite(fast32).all()
    torch.testing.assert_close(fast32.double(), dense, rtol=0, atol=2e-5)


def test_tiled_sdpa_route_under_bf16_autocast_stays_within_one_percent(monkeypatch):
    """bf16 autocast (the way training runs it): the rescaled operands and the kernel stay
    float32 inside; output and gradients within 1 % (max relative) of float32's."""
    _explicit_scores_refused(monkeypatch)
    q, k, v = qkv(n=2, h=4, t=300, d=8, seed=4, dtype=torch.float32)
    alpha = torch.tensor([0.0, 0.01, 0.05, 0.2])

    def run(autocast):
        with torch.autocast("cpu", torch.bfloat16, enabled=autocast):
            return _output_and_gradients(
                lambda q, k, v: las_attention(*(t.to(torch.bfloat16) if autocast else t
                                                for t in (q, k, v)),
                                              alpha, 5, block=64).float(), q, k, v)

    low, full = run(True), run(False)
    assert not torch.equal(low[0], full[0])  # bf16 did change the input
    for a, b in zip(low, full):
        assert float((a.float() - b).abs().max() / b.abs().max()) < 0.01


def test_stacked_runs_beyond_one_block_under_vmap():
    """train_group stacks runs under torch.func.vmap, where the decays are batched tensors
    that cannot be read on the host: LaS beyond one block then keeps the explicit scores,
    and the stacked outputs equal each model's own."""
    import copy

    from torch.func import functional_call, stack_module_state, vmap

    from lds_toolkit.neural._validation import input_checks

    torch.manual_seed(0)
    models = [LaSAttention(16, n_heads=2) for _ in range(2)]
    params, buffers = stack_module_state(models)
    base = copy.deepcopy(models[0])
    x = torch.randn(2, 1, 1030, 16, generator=torch.Generator().manual_seed(1))
    with input_checks(False):
        y = vmap(lambda p, b, xi: functional_call(base, (p, b), (xi,)))(params, buffers, x)
    for i, model in enumerate(models):
        torch.testing.assert_close(y[i], model(x[i]), rtol=0, atol=1e-5)


def test_dense_route_computes_each_tiles_bias_once(monkeypatch):
    """The decay and bias of a causal tile are computed once and shared by every piece of
    the batch (per piece they were recomputed once per sequence: at L = 2048 about a quarter
    of a forward+backward pass), with the same result as pieces of the whole batch."""
    from lds_toolkit.neural.layers._scored_attention import scored_attention

    monkeypatch.setattr(_scored_attention, "TILE", 8)
    g = torch.Generator().manual_seed(3)
    q, k, v = (torch.randn(6, 2, 40, 4, generator=g, dtype=F64) for _ in range(3))
    calls = []

    def factor(h, i, j):
        calls.append(tuple(i.shape))
        return torch.exp(-0.1 * (i - j).clamp(min=0).to(F64)) + 0 * h

    outs = {}
    for entries in (1, 1 << 21):  # pieces of one sequence; the whole batch in one piece
        monkeypatch.setattr(_scored_attention, "PIECE_ENTRIES", entries)
        calls.clear()
        outs[entries] = scored_attention(q, k, v, factor=factor, backend="dense", block=64)
        assert len(calls) == 40 // 8  # one per tile, whatever the number of pieces
    torch.testing.assert_close(outs[1], outs[1 << 21], rtol=0, atol=0)


@pytest.mark.parametrize("alibi", [False, True])
@pytest.mark.parametrize("order", ORDERS)
def test_flex_route_equals_explicit_matrix(order, alibi):
    """flex_attention with the decay and ALiBi as its score_mod (the route compiled on CUDA),
    run eagerly on CPU (forward only: flex_attention has no CPU backward), against eq. 3's
    L x L form: the same score functions as the dense route."""
    q, k, v = qkv(t=37)
    alpha = torch.tensor([0.0, 0.01, 0.3, 2.0], dtype=F64)
    slopes = alibi_slopes(4) if alibi else None
    dense = las_attention_dense(q, k, v, alpha, 3, order, alibi=slopes)
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "flex_attention called without torch.compile()"
        flex = las_attention(q, k, v, alpha, 3, order, alibi=slopes, backend="flex")
    torch.testing.assert_close(flex, dense, rtol=0, atol=1e-12)


def test_strong_decay_long_sequence_float32_stays_finite_and_accurate():
    """alpha (L-1)/2 = 300 overflows a single rescaling in float32: the guard must kick in."""
    q, k, v = qkv(n=1, h=2, t=601, d=4, seed=2)
    alpha = torch.tensor([0.0, 1.0], dtype=F64)
    dense = las_attention_dense(q, k, v, alpha, 5)
    fast32 = las_attention(q.float(), k.float(), v.float(), alpha.float(), 5)
    assert torch.isfinite(fast32).all()
    torch.testing.assert_close(fast32.double(), dense, rtol=0, atol=2e-5)


@pytest.mark.parametrize("dtype,tol", [(torch.float16, 2e-3), (torch.bfloat16, 1.5e-2)])
def test_half_precision_positions_beyond_2048(dtype, tol):
    """fp16 (bf16) cannot represent positions > 2048 (> 256) exactly: the decay factors must be
    formed in float32. Reference: the float64 fast form, pinned to the L x L form above."""
    q, k, v = qkv(n=1, h=2, t=2600, d=8, seed=4)
    alpha = torch.tensor([0.0, 1e-3], dtype=F64)
    ref = las_attention(q, k, v, alpha, 5)
    low = las_attention(q.to(dtype), k.to(dtype), v.to(dtype), alpha.to(dtype), 5)
    assert low.dtype == dtype
    torch.testing.assert_close(low.double(), ref, rtol=0, atol=tol)


def test_row_pooling_moves_onto_values():
    """AP over keys [j, j+P-1] of any causal matrix A: AP(A) V = A (causal moving average of V)."""
    g = torch.Generator().manual_seed(1)
    t, p = 30, 4
    a = torch.rand(3, t, t, generator=g, dtype=F64).tril()
    v = torch.randn(3, t, 5, generator=g, dtype=F64)
    pooled = F.avg_pool1d(F.pad(a, (0, p - 1)), p, stride=1)  # every row, along the keys
    assert torch.equal(pooled.triu(1), torch.zeros_like(pooled))  # no weight on future keys
    v_bar = torch.stack([v[:, max(0, i - p + 1) : i + 1].sum(1) / p for i in range(t)], dim=1)
    torch.testing.assert_close(pooled @ v, a @ v_bar, rtol=0, atol=1e-13)
    w = torch.full((1, p), 1.0 / p, dtype=F64)
    torch.testing.assert_close(causal_weighted_pool(v[:, None], w)[:, 0], v_bar)


def test_pooled_rows_keep_mass_except_first_keys():
    q, k, _ = qkv(t=20)
    alpha = las_alpha_init(4, 0.2)
    a = las_attention_matrix(q, k, alpha, 3)
    assert torch.equal(a.triu(1), torch.zeros_like(a))
    rows = a.sum(-1)
    assert bool((rows <= 1 + 1e-12).all())
    # the only lost mass is that of keys 0 and 1 (zero padding on the left of the pool)
    p = las_attention_matrix(q, k, alpha, 1)
    lost = (2 / 3) * p[..., 0] + (1 / 3) * p[..., 1]
    torch.testing.assert_close(1 - rows, lost, rtol=0, atol=1e-12)


def test_eld_multiplies_the_scores():
    """Eq. 3 literally: the ELD factor exp(-alpha (i-j)) scales the score inside the softmax."""
    q, k, _ = qkv(n=1, h=2, t=12)
    alpha = torch.tensor([0.0, 0.7], dtype=F64)
    a = las_attention_matrix(q, k, alpha, 1)[0, 1]
    s = q[0, 1] @ k[0, 1].T / math.sqrt(3)
    i, j = 9, 4
    logits = torch.tensor([math.exp(-0.7 * (i - jj)) * s[i, jj] for jj in range(i + 1)])
    torch.testing.assert_close(a[i, j], torch.softmax(logits, 0)[j].to(F64), rtol=0, atol=1e-14)


# ---------------------------------------------------------------- causality


@pytest.mark.parametrize("order", ORDERS)
def test_paper_centred_pool_leaks_the_future(order):
    q, k, v = qkv(t=30)
    alpha = las_alpha_init(4, 0.1)
    y = las_attention_dense(q, k, v, alpha, 5, order, pool_window="centred")
    k2, v2 = k.clone(), v.clone()
    k2[..., 15:, :] += 1.0
    v2[..., 15:, :] += 1.0
    y2 = las_attention_dense(q, k2, v2, alpha, 5, order, pool_window="centred")
    assert (y2[..., :15, :] - y[..., :15, :]).abs().max() > 1e-3
    c = las_attention_dense(q, k, v, alpha, 5, order)
    c2 = las_attention_dense(q, k2, v2, alpha, 5, order)
    assert (c2[..., :15, :] - c[..., :15, :]).abs().max() < 1e-12


@pytest.mark.parametrize(
    "kw",
    [
        dict(),
        dict(pool_order="before_softmax", pool_size=3),
        dict(chunk_size=16),
        dict(chunk_size=7, n_heads=4, decay_bound=0.5),
        dict(alpha_schedule="log", decay_bound=1e-2),
        dict(alpha_schedule="linear", decay_bound=0.5, chunk_size=16),
        dict(alpha=[0.0, 0.1, 1.0, 3.0, 0.0, 0.2, 0.4, 8.0], pool_order="before_softmax"),
        dict(alibi=True, pool_size=1, decay_bound=0.0, chunk_size=16),
        dict(alibi=True, pool_size=5, decay_bound=0.0, chunk_size=16),  # cT + smooth + ALiBi
        dict(alibi=True, pool_order="before_softmax", alpha_schedule="log"),
    ],
)
def test_causality(kw):
    layer = make_layer(**kw)
    x = make_input(length=53)
    y = layer(x)
    g = torch.Generator().manual_seed(5)
    for t in (1, 6, 15, 16, 17, 40, 52):
        x2 = x.clone()
        x2[:, t:] += torch.randn(x2[:, t:].shape, generator=g, dtype=F64)
        y2 = layer(x2)
        assert (y2[:, :t] - y[:, :t]).abs().max().item() <= 1e-10, f"leak before t={t}"
        assert (y2[:, t:] - y[:, t:]).abs().max().item() > 1e-6


# ---------------------------------------------------------------- whole layer


def explicit_layer(layer: LaSAttention, x: torch.Tensor) -> torch.Tensor:
    """Projections + explicit L x L eq. 3 per chunk (Python loop over chunks) + W_o."""
    bsz, length, d = x.shape
    h = layer.n_heads

    def heads(t):
        return t.reshape(bsz, -1, h, d // h).transpose(1, 2)

    q, k, v = heads(layer.q_proj(x)), heads(layer.k_proj(x)), heads(layer.v_proj(x))
    m = layer.chunk_size or length
    parts = [
        las_attention_dense(
            q[:, :, s : s + m], k[:, :, s : s + m], v[:, :, s : s + m],
            layer.alpha, layer.pool_size, layer.pool_order, alibi=layer.alibi_slopes,
        )
        for s in range(0, length, m)
    ]  # fmt: skip
    y = torch.cat(parts, dim=2).transpose(1, 2).reshape(bsz, length, d)
    return layer.out_proj(y)


@pytest.mark.parametrize(
    "kw,length",
    [
        (dict(), 70),
        (dict(decay_bound=0.3, pool_order="before_softmax"), 33),
        (dict(chunk_size=128, decay_bound=0.05), 300),  # LaS-chunk, 300 = 2*128 + 44 (padded)
        (dict(chunk_size=10, n_heads=2, pool_size=2), 45),
        (dict(chunk_size=16, alibi=True, decay_bound=0.0), 40),
        (dict(chunk_size=16, alpha_schedule="log", pool_order="before_softmax", alibi=True), 40),
    ],
)
def test_layer_equals_explicit_computation(kw, length):
    layer = make_layer(**kw)
    x = make_input(length=length)
    torch.testing.assert_close(layer(x), explicit_layer(layer, x), rtol=0, atol=1e-12)


def test_attention_matrix_reproduces_forward():
    layer = make_layer(decay_bound=0.2)
    x = make_input(length=25)
    a = layer.attention_matrix(x)
    v = layer.v_proj(x).reshape(2, 25, 8, 2).transpose(1, 2)
    y = layer.out_proj((a @ v).transpose(1, 2).reshape(2, 25, 16))
    torch.testing.assert_close(y, layer(x), rtol=0, atol=1e-12)


def test_every_parameter_gets_a_gradient():
    for kw in (dict(), dict(chunk_size=8)):
        layer = make_layer(**kw)
        (layer(make_input(length=30)) ** 2).sum().backward()
        for name, p in layer.named_parameters():
            assert p.grad is not None and torch.isfinite(p.grad).all(), name
            assert p.grad.abs().max() > 0, f"zero gradient for {name}"


@pytest.mark.parametrize(
    "kw", [dict(), dict(pool_order="before_softmax", chunk_size=4, decay_bound=0.5)]
)
def test_gradcheck(kw):
    layer = make_layer(8, n_heads=2, pool_size=3, **kw)
    x = make_input(1, 9, 8, seed=3).requires_grad_(True)
    assert torch.autograd.gradcheck(layer, (x,), eps=1e-6, atol=1e-6)
    assert_parameter_gradcheck(layer, x, atol=1e-6)


def test_follows_float32():
    torch.manual_seed(0)
    layer = LaSAttention(16, chunk_size=32)
    x = torch.randn(2, 100, 16)
    y = layer(x)
    assert y.dtype == torch.float32 and y.shape == x.shape
    torch.testing.assert_close(y.double(), layer.to(F64)(x.double()), rtol=1e-4, atol=1e-5)


def test_bad_inputs():
    layer = make_layer()
    with pytest.raises(ValueError, match="with 4 dimensions"):
        layer(torch.zeros(1, 2, 10, 16, dtype=F64))
    with pytest.raises(ValueError, match="d_model=16"):
        layer(torch.zeros(2, 10, 12, dtype=F64))
    with pytest.raises(TypeError, match="float32"):
        layer(torch.zeros(2, 10, 16, dtype=torch.float32))
    with pytest.raises(ValueError, match="divisible by n_heads"):
        LaSAttention(20)  # 8 heads by default
    with pytest.raises(ValueError, match="n_heads must be an int >= 1"):
        LaSAttention(16, n_heads=0)
    with pytest.raises(ValueError, match="chunk_size must be an int >= 1"):
        LaSAttention(16, chunk_size=0)
    with pytest.raises(TypeError, match="pool_size must be an int"):
        LaSAttention(16, pool_size=2.0)
    with pytest.raises(ValueError, match="decay_bound"):
        LaSAttention(16, decay_bound=-1e-3)
    with pytest.raises(ValueError, match="pool_order"):
        LaSAttention(16, pool_order="centred")
    with pytest.raises(ValueError, match="alpha_schedule must be one of"):
        LaSAttention(16, alpha_schedule="geometric")
    with pytest.raises(ValueError, match="one rate per head"):
        LaSAttention(16, alpha=[0.0, 0.1])
    with pytest.raises(ValueError, match="finite rates >= 0"):
        LaSAttention(16, n_heads=2, alpha=[0.0, -0.1])
    with pytest.raises(ValueError, match="finite rates >= 0"):
        LaSAttention(16, n_heads=2, alpha=[0.0, float("nan")])
    with pytest.raises(TypeError, match="sequence of 2 floats"):
        LaSAttention(16, n_heads=2, alpha=0.1)
    with pytest.raises(TypeError, match="alibi must be a bool"):
        LaSAttention(16, alibi=1)
    with pytest.raises(ValueError, match="chunk_size=None"):
        LaSAttention(16, chunk_size=8).to(F64).attention_matrix(make_input())


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
@pytest.mark.parametrize("kw", [dict(), dict(chunk_size=128), dict(pool_order="before_softmax")])
def test_runs_on_cuda(kw):
    layer = make_layer(64, **kw)
    x = make_input(2, 700, 64)
    ref = layer(x)
    gpu = layer.to("cuda")
    torch.testing.assert_close(gpu(x.cuda()).cpu(), ref, rtol=0, atol=1e-10)
    y32 = gpu.float()(x.float().cuda())
    torch.testing.assert_close(y32.double().cpu(), ref, rtol=1e-3, atol=1e-3)
    (y32**2).sum().backward()
    assert all(p.grad is not None and p.grad.abs().max() > 0 for p in gpu.parameters())
    yb = gpu.bfloat16()(x.bfloat16().cuda())  # fused flash kernel path
    assert torch.isfinite(yb).all()
    torch.testing.assert_close(yb.double().cpu(), ref, rtol=0.1, atol=0.1)


def test_docstring_examples():
    import lds_toolkit.neural.layers.las as module

    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0


@pytest.mark.parametrize("alibi", [False, True])
def test_float32_table3_rates_match_float64_dense(alibi):
    """The Table 3 setting: a 128-token chunk with log-spaced rates up to 1 in float32 (ELD
    factors down to exp(-127)), against the float64 L x L form."""
    alpha = las_alpha_init(8, 1e-3, "log")
    slopes = alibi_slopes(8) if alibi else None
    q, k, v = qkv(n=3, h=8, t=128, d=8, seed=4)
    for pool, order in ((1, "after_softmax"), (5, "after_softmax"), (5, "before_softmax")):
        dense = las_attention_dense(q, k, v, alpha, pool, order, alibi=slopes)
        fast = las_attention(q.float(), k.float(), v.float(), alpha, pool, order, alibi=slopes)
        assert fast.dtype == torch.float32
        torch.testing.assert_close(fast.double(), dense, rtol=0, atol=2e-6)


def test_float32_alibi_over_2000_tokens_unchunked():
    """ALiBi's bias over distances up to 2000 in float32 (blocks of 1024 queries): the
    rounding must stay at the float32 level of the scores."""
    q, k, v = qkv(n=1, h=8, t=2000, d=8, seed=5)
    alpha, slopes = torch.zeros(8, dtype=F64), alibi_slopes(8)
    dense = las_attention_dense(q, k, v, alpha, 1, "after_softmax", alibi=slopes)
    fast = las_attention(q.float(), k.float(), v.float(), alpha, 1, alibi=slopes)
    torch.testing.assert_close(fast.double(), dense, rtol=0, atol=1e-4)


@pytest.mark.parametrize("alibi", [False, True])
def test_gradients_through_query_blocks(alibi):
    """Gradcheck of the dense route in query blocks, recomputed in the backward pass, with and
    without ALiBi, pooled before the softmax."""
    q, k, v = (t.requires_grad_() for t in qkv(n=1, h=4, t=9, d=2, seed=6))
    alpha = torch.tensor([0.0, 0.05, 0.4, 1.5], dtype=F64)
    slopes = alibi_slopes(4) if alibi else None

    def fn(q, k, v):
        return las_attention(q, k, v, alpha, 3, "before_softmax", alibi=slopes, block=4)

    torch.testing.assert_close(fn(q, k, v), las_attention_dense(q, k, v, alpha, 3,
                                                                "before_softmax", alibi=slopes),
                               rtol=0, atol=1e-12)
    # fast mode: the full Jacobian along random directions (the full mode re-runs the three
    # recomputed blocks for every one of the 216 input entries)
    assert torch.autograd.gradcheck(fn, (q, k, v), fast_mode=True)
