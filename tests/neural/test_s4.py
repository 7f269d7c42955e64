"""S4 / S4D: kernel, discretisation, conv mode == step mode, initialisation, errors."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.linalg
import scipy.signal
import torch

from lds_toolkit.neural import S4, DiagonalSSM

from .conftest import run_steps


def _dense(ssm: DiagonalSSM, h: int):
    """Channel h as a dense complex system with all N modes (pairs and their conjugates)."""
    dt, A, B, C = (t.detach().numpy() for t in ssm.continuous(torch.float64))
    A_full = np.diag(np.concatenate([A[h], A[h].conj()]))
    B_full = np.concatenate([B[h], B[h].conj()])[:, None]
    C_full = np.concatenate([C[h], C[h].conj()])[None, :]
    return float(dt[h]), A_full, B_full, C_full


def _naive_discretise(dt, A, B, disc):
    I = np.eye(len(A))
    if disc == "bilinear":
        Ab = np.linalg.solve(I - dt / 2 * A, I + dt / 2 * A)
        Bb = np.linalg.solve(I - dt / 2 * A, dt * B)
    else:
        Ab = scipy.linalg.expm(dt * A)
        Bb = np.linalg.solve(A, (Ab - I) @ B)
    return Ab, Bb


def _randomised(ssm: DiagonalSSM, seed: int) -> DiagonalSSM:
    """Move the parameters away from the structured initialisation."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        ssm.log_dt.add_(0.5 * torch.randn(ssm.log_dt.shape, generator=g, dtype=ssm.log_dt.dtype))
        ssm.log_A_real.add_(torch.randn(ssm.log_A_real.shape, generator=g, dtype=torch.float64))
        ssm.A_imag.add_(torch.randn(ssm.A_imag.shape, generator=g, dtype=torch.float64))
        ssm.B.copy_(torch.randn(ssm.B.shape, generator=g, dtype=torch.float64))
    return ssm


@pytest.mark.parametrize("disc", ["bilinear", "zoh"])
@pytest.mark.parametrize("init", ["lin", "inv"])
def test_kernel_matches_naive_powers(disc, init):
    """K̄_l = C Ā^l B̄ from dense matrices and repeated multiplication (eq. 6)."""
    ssm = _randomised(DiagonalSSM(3, 8, init=init, disc=disc, dt_max=0.5, seed=0).double(), 1)
    L = 200
    K = ssm.kernel(L, torch.float64).detach().numpy()
    for h in range(3):
        dt, A, B, C = _dense(ssm, h)
        Ab, Bb = _naive_discretise(dt, A, B, disc)
        ref, x = [], Bb.copy()
        for _ in range(L):
            ref.append((C @ x).item())
            x = Ab @ x
        ref = np.array(ref)
        assert np.abs(ref.imag).max() < 1e-12  # conjugate pairs make the system real
        np.testing.assert_allclose(K[h], ref.real, rtol=0, atol=1e-10)


def test_bilinear_matches_scipy_cont2discrete():
    """Ā, B̄ are scipy's bilinear (Tustin) A_d, B_d; scipy indexes x_{k+1} = A_d x_k + B_d u_k."""
    ssm = _randomised(DiagonalSSM(2, 6, seed=3).double(), 4)
    dA, dB, _, _ = (t.detach().numpy() for t in ssm.discrete(torch.float64))
    for h in range(2):
        dt, A, B, C = _dense(ssm, h)
        Ad, Bd, *_ = scipy.signal.cont2discrete((A, B, C, np.zeros((1, 1))), dt, "bilinear")
        np.testing.assert_allclose(np.diag(Ad)[:3], dA[h], rtol=0, atol=1e-13)
        np.testing.assert_allclose(Bd[:3, 0], dB[h], rtol=0, atol=1e-13)


def test_forward_is_kernel_convolution_plus_skip():
    ssm = _randomised(DiagonalSSM(4, 8, seed=5).double(), 6)
    u = torch.randn(2, 64, 4, dtype=torch.float64)
    y = ssm(u).detach().numpy()
    K = ssm.kernel(64, torch.float64).detach().numpy()
    D = ssm.D.detach().numpy()
    un = u.numpy()
    for b in range(2):
        for h in range(4):
            ref = np.convolve(un[b, :, h], K[h])[:64] + D[h] * un[b, :, h]
            np.testing.assert_allclose(y[b, :, h], ref, rtol=0, atol=1e-12)


SSM_VARIANTS = {  # every SSM of S4 (S4D-Lin/LegS, the DPLR HiPPO-LegS S4), both discretisations
    "s4d-lin": {},
    "s4d-lin-zoh": {"disc": "zoh"},
    "s4d-legs": {"init": "legs"},
    "s4d-legs-zoh": {"init": "legs", "disc": "zoh"},
    "dplr": {"mode": "dplr"},
    "dplr-zoh": {"mode": "dplr", "disc": "zoh"},
}


@pytest.mark.parametrize("kwargs", SSM_VARIANTS.values(), ids=SSM_VARIANTS.keys())
@pytest.mark.parametrize("dtype, tol", [(torch.float64, 1e-10), (torch.float32, 1e-4)])
def test_conv_mode_equals_step_mode(kwargs, dtype, tol):
    """At L = 1024 with N = 64 (S4D-LegS has Im A up to ~1300: float32 phases matter)."""
    layer = S4(8, seed=7, **kwargs).to(dtype)
    x = torch.randn(2, 1024, 8, generator=torch.Generator().manual_seed(0)).to(dtype)
    with torch.no_grad():
        y_conv = layer(x)
        y_step, _ = run_steps(layer, x)
    assert y_conv.abs().max() > 0.1
    np.testing.assert_allclose(y_step.numpy(), y_conv.numpy(), rtol=0, atol=tol)


@pytest.mark.parametrize("mode", ["diag", "dplr"])
def test_chunked_forward_with_state_equals_full_forward(mode):
    layer = S4(6, d_state=16, mode=mode, seed=8).double()
    x = torch.randn(3, 300, 6, dtype=torch.float64)
    with torch.no_grad():
        y_full = layer(x)
        y1, s1 = layer(x[:, :123], return_state=True)
        y2, s2 = layer(x[:, 123:250], s1, return_state=True)
        y3 = layer(x[:, 250:], s2)
        _, s_step = run_steps(layer, x[:, :250])
    torch.testing.assert_close(torch.cat([y1, y2, y3], 1), y_full, rtol=0, atol=1e-10)
    torch.testing.assert_close(s2, s_step, rtol=0, atol=1e-10)


def test_initialisation():
    H, N = 5, 16
    for init in ("lin", "inv"):
        ssm = DiagonalSSM(H, N, init=init, dt_min=1e-3, dt_max=1e-1, seed=0)
        dt, A, _, _ = ssm.continuous(torch.float64)
        n = np.arange(N // 2)
        imag = math.pi * n if init == "lin" else N / math.pi * (N / (2 * n + 1) - 1)
        np.testing.assert_allclose(A.imag.detach().numpy(), np.tile(imag, (H, 1)), rtol=1e-6)
        np.testing.assert_allclose(A.real.detach().numpy(), -0.5, rtol=1e-6)
        assert ((dt >= 1e-3 * (1 - 1e-6)) & (dt <= 1e-1 * (1 + 1e-6))).all()
    # log-uniform: log dt spread over [log 1e-3, log 1e-1]
    log_dt = DiagonalSSM(4000, 2, seed=1).log_dt.detach().numpy()
    assert abs(log_dt.mean() - (math.log(1e-3) + math.log(1e-1)) / 2) < 0.1


@pytest.mark.parametrize("disc", ["bilinear", "zoh"])
def test_discrete_state_matrix_is_stable_for_any_parameters(disc):
    """Re A = -exp(.) < 0 and dt = exp(.) > 0 give |Ā| < 1 whatever the parameter values."""
    ssm = DiagonalSSM(64, 32, disc=disc, seed=0).double()
    g = torch.Generator().manual_seed(0)
    with torch.no_grad():
        ssm.log_dt.copy_(4 * torch.randn(64, generator=g, dtype=torch.float64))
        ssm.log_A_real.copy_(3 * torch.randn(64, 16, generator=g, dtype=torch.float64))
        ssm.A_imag.copy_(100 * torch.randn(64, 16, generator=g, dtype=torch.float64))
    dA = ssm.discrete(torch.float64)[0]
    assert (dA.abs() < 1).all()


def test_seed_reproducible_and_global_rng_untouched():
    torch.manual_seed(123)
    before = torch.rand(3)
    torch.manual_seed(123)
    a, b, c = S4(4, seed=11), S4(4, seed=11), S4(4, seed=12)
    after = torch.rand(3)
    assert torch.equal(before, after)
    for (n, pa), (_, pb) in zip(a.named_parameters(), b.named_parameters()):
        assert torch.equal(pa, pb), n
    assert not all(torch.equal(pa, pc) for pa, pc in zip(a.parameters(), c.parameters()))
    g1, g2 = torch.Generator().manual_seed(4), torch.Generator().manual_seed(4)
    assert torch.equal(S4(4, seed=g1).ssm.C, S4(4, seed=g2).ssm.C)


def test_layer_options():
    x = torch.randn(2, 20, 4, dtype=torch.float64)
    plain = S4(4, activation="identity", output_linear=False, seed=0).double()
    with torch.no_grad():
        y = plain(x)
        ref = plain.ssm(x)
    torch.testing.assert_close(y, ref)
    k = plain.kernel(20, torch.float64)
    assert k.shape == (4, 20)


@pytest.mark.parametrize(
    "kwargs, err, match",
    [
        ({"d_state": 7}, ValueError, "even"),
        ({"d_state": 0}, ValueError, "d_state"),
        ({"dt_min": 0.2, "dt_max": 0.1}, ValueError, "dt_min"),
        ({"dt_min": -1.0}, ValueError, "dt_min"),
        ({"init": "fourier"}, ValueError, "init"),
        ({"mode": "dplr", "init": "lin"}, ValueError, "init"),
        ({"mode": "nplr"}, ValueError, "mode"),
        ({"real_transform": "softplus"}, ValueError, "real_transform"),
        ({"transposed": 1}, TypeError, "transposed"),
        ({"disc": "euler"}, ValueError, "disc"),
        ({"activation": "swish"}, ValueError, "activation"),
        ({"seed": 1.5}, TypeError, "seed"),
    ],
)
def test_bad_constructor_arguments(kwargs, err, match):
    with pytest.raises(err, match=match):
        S4(4, **kwargs)
    with pytest.raises(TypeError, match="d_model"):
        S4(4.0)


def test_bad_step_arguments():
    layer = S4(4, d_state=8, seed=0)
    state = layer.initial_state(2)
    assert state.shape == (2, 4, 4) and state.is_complex()
    with pytest.raises(ValueError, match=r"\(batch, d_model=4\)"):
        layer.step(torch.randn(2, 5), state)
    with pytest.raises(ValueError, match="state must have shape"):
        layer.step(torch.randn(3, 4), state)
    with pytest.raises(TypeError, match="complex"):
        layer.step(torch.randn(2, 4), torch.zeros(2, 4, 4))


@pytest.mark.parametrize("h", [0, 2])
def test_ssm_channel_equals_systems_simulator(h):
    """One channel, written as a real 2x2-block LDS, discretised by lds_toolkit.systems'
    ``s4_bilinear`` and run by ``simulate(output="s4")``, gives the layer's SSM output: the
    torch layer and the numpy simulator share the S4 index convention."""
    systems = pytest.importorskip("lds_toolkit.systems")
    ssm = _randomised(DiagonalSSM(3, 6, seed=9).double(), 10)
    dt, A, B, C = (t.detach().numpy()[h] for t in ssm.continuous(torch.float64))
    n2 = len(A)
    Ar, Br, Cr = np.zeros((2 * n2, 2 * n2)), np.zeros((2 * n2, 1)), np.zeros((1, 2 * n2))
    for i, (a, b, c) in enumerate(zip(A, B, C)):
        sl = slice(2 * i, 2 * i + 2)  # state [Re x_i, Im x_i]
        Ar[sl, sl] = [[a.real, -a.imag], [a.imag, a.real]]
        Br[sl, 0] = [b.real, b.imag]
        Cr[0, sl] = [2 * c.real, -2 * c.imag]  # y = 2 Re(c x)
    D = ssm.D.detach().numpy()[h]
    sys_c = systems.LDS(Ar, Br, Cr, [[D]])
    u = np.random.default_rng(h).standard_normal((2, 80, 1))
    ref = systems.simulate(systems.s4_bilinear(sys_c, float(dt)), u, output="s4").y[..., 0]
    uu = torch.zeros(2, 80, 3, dtype=torch.float64)
    uu[:, :, h] = torch.from_numpy(u[..., 0])
    with torch.no_grad():
        got = ssm(uu)[:, :, h].numpy()
    np.testing.assert_allclose(got, ref, rtol=0, atol=1e-10)


def test_numpy_scalars_are_accepted_like_python_ones():
    """Sizes, rates and seeds from numpy (e.g. a loop over np.arange) work as ints/floats do."""
    a = S4(np.int64(4), np.int64(8), dt_max=np.float32(0.125), seed=np.int64(3))
    b = S4(4, 8, dt_max=0.125, seed=3)
    assert a.d_model == 4 and type(a.d_model) is int
    for (name, p), q in zip(a.state_dict().items(), b.state_dict().values()):
        torch.testing.assert_close(p, q, rtol=0, atol=0, msg=name)
    with pytest.raises(TypeError, match="d_model must be an int"):
        S4(np.float64(4.0))
    with pytest.raises(TypeError, match="d_model must be an int"):
        S4(np.bool_(True))

