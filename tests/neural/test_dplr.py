"""S4 with HiPPO-LegS in DPLR form and S4D-LegS: the LegS matrix, its NPLR form, the kernel
against dense matrix powers of the full LegS matrix, conv == step, gradients."""

from __future__ import annotations

import contextlib
import copy

import numpy as np
import pytest
import scipy.linalg
import torch

from lds_toolkit.neural import DPLRSSM, S4, DiagonalSSM, S4Plus, S4PlusPlus
from lds_toolkit.neural.layers._hippo import legs_matrices, legs_nplr
from lds_toolkit.neural.layers._powers import krylov, linear_scan, power_kernel

from .conftest import assert_parameter_gradcheck, run_steps


@contextlib.contextmanager
def float64_default():
    """Build modules with float64 parameters, so the LegS initialisation is not rounded to
    float32 (parameters follow torch's default dtype, as nn.Linear's do)."""
    old = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        yield
    finally:
        torch.set_default_dtype(old)


def legs_by_definition(N):
    """HiPPO-LegS written entry by entry from its definition (Gu et al. 2020, eq. for LegS)."""
    A = np.zeros((N, N))
    for n in range(N):
        for k in range(N):
            if n > k:
                A[n, k] = -np.sqrt(2 * n + 1) * np.sqrt(2 * k + 1)
            elif n == k:
                A[n, k] = -(n + 1)
    return A, np.sqrt(2 * np.arange(N) + 1.0)


def dense_kernel(A, B, c, dt, disc, L):
    """K_l = c Ā^l B̄ by L matrix-vector products with the dense discretised A."""
    N = len(A)
    I = np.eye(N)
    if disc == "bilinear":
        Ab = np.linalg.solve(I - dt / 2 * A, I + dt / 2 * A)
        Bb = np.linalg.solve(I - dt / 2 * A, dt * B)
    else:
        E = scipy.linalg.expm(np.block([[dt * A, dt * B[:, None]], [np.zeros((1, N + 1))]]))
        Ab, Bb = E[:N, :N], E[:N, N]
    out, x = np.empty(L), Bb.astype(complex)
    for l in range(L):
        out[l] = (c @ x).real
        x = Ab @ x
    return out


def _randomised(ssm, seed):
    """Move every SSM parameter away from the structured initialisation."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in ssm.named_parameters():
            if name in ("log_dt", "D", "C"):
                continue
            p.add_(0.3 * torch.randn(p.shape, generator=g, dtype=p.dtype))
    return ssm


# --- LegS and its NPLR form ------------------------------------------------------------------


@pytest.mark.parametrize("N", [2, 8, 64])
def test_legs_matrix_and_nplr_reconstruction(N):
    A_ref, B_ref = legs_by_definition(N)
    A, B = legs_matrices(N)
    np.testing.assert_array_equal(A, A_ref)
    np.testing.assert_array_equal(B, B_ref)
    # its eigenvalues are -1, ..., -N (lower triangular)
    nplr = legs_nplr(N)
    np.testing.assert_allclose(nplr.Lambda.real, -0.5, rtol=0, atol=1e-12)
    assert np.all(np.diff(nplr.Lambda.imag) > 0) and nplr.Lambda.imag[0] > 0
    V = np.concatenate([nplr.V, nplr.V.conj()], axis=1)
    np.testing.assert_allclose(V.conj().T @ V, np.eye(N), rtol=0, atol=1e-12)
    lam = np.concatenate([nplr.Lambda, nplr.Lambda.conj()])
    p = np.concatenate([nplr.P, nplr.P.conj()])
    b = np.concatenate([nplr.B, nplr.B.conj()])
    rebuilt = V @ (np.diag(lam) - np.outer(p, p.conj())) @ V.conj().T
    scale = np.abs(A_ref).max()
    np.testing.assert_allclose(rebuilt, A_ref, rtol=0, atol=1e-13 * scale * N)
    np.testing.assert_allclose(V @ b, B_ref, rtol=0, atol=1e-12 * N)


# --- the DPLR kernel ---------------------------------------------------------------------------


@pytest.mark.parametrize("disc", ["bilinear", "zoh"])
@pytest.mark.parametrize("N", [8, 64])
def test_dplr_kernel_equals_dense_legs_powers(disc, N):
    """At initialisation the layer is LegS: its kernel equals c Ā^l B̄ computed from the full
    dense LegS matrix (not from the NPLR pieces) to 1e-8 in float64. C is random in the
    layer's basis; the same output map in the LegS basis is c V* (V from the NPLR form)."""
    L, H = 1024, 3
    with float64_default():
        ssm = DPLRSSM(H, N, disc=disc, dt_min=1e-3, dt_max=0.2, seed=0)
    K = ssm.kernel(L, torch.float64).detach().numpy()
    A, B = legs_by_definition(N)
    nplr = legs_nplr(N)
    V = np.concatenate([nplr.V, nplr.V.conj()], axis=1)
    dt = torch.exp(ssm.log_dt).detach().numpy()
    C = torch.view_as_complex(ssm.C.detach()).numpy()
    for h in range(H):
        c_legs = np.concatenate([C[h], C[h].conj()]) @ V.conj().T
        assert np.abs(c_legs.imag).max() < 1e-12  # a real output map
        ref = dense_kernel(A, B, c_legs, dt[h], disc, L)
        assert np.abs(ref).max() > 0.05
        np.testing.assert_allclose(K[h], ref, rtol=0, atol=1e-8)


@pytest.mark.parametrize("disc", ["bilinear", "zoh"])
def test_dplr_kernel_equals_own_dense_powers_after_training_moves(disc):
    """Away from the LegS initialisation (random Λ, P, B) the Woodbury/Cauchy kernel still
    equals c Ā^l B̄ from the dense A = diag(Λ) - P P* (numpy, independent of torch code)."""
    L = 300
    with float64_default():
        ssm = _randomised(DPLRSSM(2, 8, disc=disc, dt_max=0.3, seed=1), 2)
    K = ssm.kernel(L, torch.float64).detach().numpy()
    dt, Lam, P, B, C = (t.detach().numpy() for t in ssm.continuous(torch.float64))
    for h in range(2):
        lam = np.concatenate([Lam[h], Lam[h].conj()])
        p = np.concatenate([P[h], P[h].conj()])
        A = np.diag(lam) - np.outer(p, p.conj())
        b = np.concatenate([B[h], B[h].conj()])
        c = np.concatenate([C[h], C[h].conj()])
        ref = dense_kernel(A, b, c, dt[h], disc, L)
        np.testing.assert_allclose(K[h], ref, rtol=0, atol=1e-10)


@pytest.mark.parametrize("L", [1, 2, 7, 64])
def test_woodbury_kernel_at_short_and_odd_lengths(L):
    """The truncated generating function (C̃ = C (I - Ā^L)) and the ω = -1 point of even L."""
    with float64_default():
        ssm = _randomised(DPLRSSM(2, 6, seed=3), 4)
    dA, dB, Cf = ssm.discrete(torch.float64)
    ref = np.stack([[(Cf[h] @ torch.linalg.matrix_power(dA[h], l) @ dB[h]).real.item()
                     for l in range(L)] for h in range(2)])
    np.testing.assert_allclose(ssm.kernel(L, torch.float64).detach().numpy(), ref, atol=1e-12)


def test_rate_scales_the_step():
    """forward(x, rate=r) is the layer with Δ -> r Δ (log_dt shifted by log r)."""
    for mode in ("diag", "dplr"):
        layer = S4(4, d_state=8, mode=mode, seed=5).double()
        shifted = copy.deepcopy(layer)
        with torch.no_grad():
            shifted.ssm.log_dt.add_(np.log(2.5))
        x = torch.randn(2, 40, 4, dtype=torch.float64)
        with torch.no_grad():
            torch.testing.assert_close(layer(x, rate=2.5), shifted(x), rtol=0, atol=1e-12)
            y_steps, _ = run_steps(lambda_step(layer, 2.5), x)
            torch.testing.assert_close(y_steps, shifted(x), rtol=0, atol=1e-12)
        with pytest.raises(ValueError, match="rate"):
            layer(x, rate=0.0)
        with pytest.raises(ValueError, match="rate"):
            layer(x, rate=float("inf"))


class lambda_step:
    """A view of a layer whose step uses a fixed rate (for run_steps)."""

    def __init__(self, layer, rate):
        self.layer, self.rate = layer, rate

    def initial_state(self, batch, dtype=None):
        return self.layer.initial_state(batch, dtype)

    def step(self, x_t, state):
        return self.layer.step(x_t, state, rate=self.rate)


# --- causality, gradients (conv == step: test_s4.py) ---------------------------------------


@pytest.mark.parametrize("kwargs", [{"mode": "dplr"}, {"init": "legs"}], ids=["dplr", "legs"])
def test_causal_at_1e10(kwargs):
    layer = S4(4, d_state=16, seed=3, **kwargs).double()
    x = torch.randn(2, 256, 4, dtype=torch.float64)
    x2 = x.clone()
    x2[:, 100:] = torch.randn(2, 156, 4, dtype=torch.float64)
    with torch.no_grad():
        y, y2 = layer(x), layer(x2)
    assert (y2[:, :100] - y[:, :100]).abs().max() <= 1e-10
    assert (y2[:, 100:] - y[:, 100:]).abs().max() > 1e-3


@pytest.mark.parametrize(
    "kwargs", [{"mode": "dplr"}, {"mode": "dplr", "disc": "zoh"}, {"init": "legs"}],
    ids=["dplr", "dplr-zoh", "legs"],
)
def test_gradcheck_dplr_and_legs(kwargs):
    layer = S4(3, d_state=6, seed=4, **kwargs).double()
    _randomised(layer.ssm, 9)
    x = torch.randn(2, 12, 3, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(layer, (x,), eps=1e-6, atol=1e-6, rtol=1e-5)
    assert_parameter_gradcheck(layer, x, atol=1e-6, rtol=1e-5)


def test_dplr_real_part_is_negative_definite_so_stable():
    """With real_transform="exp", A = Λ - P P* has Re x*Ax < 0, so |eig Ā| < 1 for any P."""
    with float64_default():
        ssm = DPLRSSM(8, 8, seed=0)
    g = torch.Generator().manual_seed(1)
    with torch.no_grad():
        ssm.P.copy_(3 * torch.randn(ssm.P.shape, generator=g))
        ssm.log_A_real.copy_(2 * torch.randn(ssm.log_A_real.shape, generator=g))
        ssm.log_dt.copy_(2 * torch.randn(ssm.log_dt.shape, generator=g))
    for disc in ("bilinear", "zoh"):
        ssm.disc = disc
        dA = ssm.discrete(torch.float64)[0]
        assert torch.linalg.eigvals(dA).abs().max() < 1


def test_unconstrained_real_part_allows_growing_modes():
    ssm = DiagonalSSM(2, 4, real_transform="none", seed=0).double()
    assert not hasattr(ssm, "log_A_real")
    with torch.no_grad():
        ssm.A_real.fill_(0.3)
    dA = ssm.discrete(torch.float64)[0]
    assert (dA.abs() > 1).all()
    # the kernel still equals the naive powers
    K = ssm.kernel(50, torch.float64)
    dA, dB, C, _ = ssm.discrete(torch.float64)
    ref = torch.stack([2 * (C * dA**l * dB).sum(-1).real for l in range(50)], -1)
    torch.testing.assert_close(K, ref, rtol=1e-12, atol=1e-12)


def test_s4d_legs_initialisation():
    """S4D-LegS: A = Λ of the NPLR form, B = B̃/2 (the S4D paper's diagonal approximation)."""
    nplr = legs_nplr(16)
    with float64_default():
        ssm = DiagonalSSM(3, 16, init="legs", seed=0)
    _, A, B, _ = ssm.continuous(torch.float64)
    np.testing.assert_allclose(A.detach().numpy(), np.tile(nplr.Lambda, (3, 1)), atol=1e-14)
    np.testing.assert_allclose(B.detach().numpy(), np.tile(nplr.B / 2, (3, 1)), atol=1e-14)


def test_every_variant_in_s4plus_and_s4plusplus():
    """S4+ and S4++ accept every SSM variant and use it (conv == step)."""
    for kwargs in ({"mode": "dplr"}, {"init": "legs"}, {"real_transform": "none"}):
        for cls in (S4Plus, S4PlusPlus):
            extra = {"tau": 3} if cls is S4Plus else {"tau": 3, "d_qk": 4, "d_v": 4}
            layer = cls(4, d_state=6, seed=0, **kwargs, **extra).double()
            assert isinstance(layer.ssm, DPLRSSM if "mode" in kwargs else DiagonalSSM)
            x = torch.randn(2, 20, 4, dtype=torch.float64)
            with torch.no_grad():
                y_step, _ = run_steps(layer, x)
                torch.testing.assert_close(y_step, layer(x), rtol=0, atol=1e-10)


# --- the doubling helpers ---------------------------------------------------------------------


def test_powers_helpers_against_loops():
    g = torch.Generator().manual_seed(0)
    A = torch.randn(2, 5, 5, dtype=torch.complex128, generator=g) / 3
    b = torch.randn(2, 5, dtype=torch.complex128, generator=g)
    c = torch.randn(2, 5, dtype=torch.complex128, generator=g)
    for L in (1, 2, 5, 17, 64):
        cols = [b]
        for _ in range(L - 1):
            cols.append((A @ cols[-1].unsqueeze(-1)).squeeze(-1))
        X = torch.stack(cols, -1)
        torch.testing.assert_close(krylov(A, b, L), X, rtol=0, atol=1e-12)
        torch.testing.assert_close(power_kernel(A, b, c, L), (c.unsqueeze(-2) @ X)[:, 0],
                                   rtol=0, atol=1e-12)
    v = torch.randn(3, 2, 33, 5, dtype=torch.complex128, generator=g)
    x0 = torch.randn(3, 2, 5, dtype=torch.complex128, generator=g)
    a = torch.randn(2, 5, dtype=torch.complex128, generator=g) / 2
    for dense, M in ((True, A), (False, a)):
        x, ref = x0, []
        for t in range(33):
            x = ((M @ x.unsqueeze(-1)).squeeze(-1) if dense else M * x) + v[:, :, t]
            ref.append(x)
        torch.testing.assert_close(linear_scan(M, v, x0, dense=dense), torch.stack(ref, 2),
                                   rtol=0, atol=1e-12)
