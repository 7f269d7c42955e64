"""Layer <-> LDS bridge: to_lds / s4_recursion / from_lds of S4D, S4+ and DPLR S4 against the
numpy simulator and the systems module's discretisations; STU's impulse response and its LDS
fit. (python-control's forced_response on to_lds(): tests/interop/test_layer_exports.py.)"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch

from lds_toolkit import LDS, discretize, s4_bilinear, simulate
from lds_toolkit.neural import DPLRSSM, S4, STU, DiagonalSSM, S4Plus
from lds_toolkit.systems import S4Recursion, era, random_stable_lds

from .conftest import dense_hankel_filters, run_step_states

VARIANTS = [
    {"init": "lin"},
    {"init": "lin", "disc": "zoh"},
    {"init": "inv"},
    {"init": "inv", "disc": "zoh"},
    {"init": "legs"},
    {"init": "legs", "disc": "zoh"},
    {"init": "lin", "real_transform": "none"},
    {"mode": "dplr"},
    {"mode": "dplr", "disc": "zoh"},
]
IDS = ["lin", "lin-zoh", "inv", "inv-zoh", "legs", "legs-zoh", "free-real", "dplr", "dplr-zoh"]


def _layer(kwargs, H=3, N=8, seed=0, cls=S4):
    layer = cls(H, N, dt_min=1e-2, dt_max=0.5, seed=seed, **kwargs).double()
    g = torch.Generator().manual_seed(seed + 100)
    with torch.no_grad():  # move the SSM off its structured initialisation
        for name, p in layer.ssm.named_parameters():
            if name not in ("log_dt", "C", "D"):
                p.add_(0.2 * torch.randn(p.shape, generator=g, dtype=p.dtype))
    return layer


def _u(batch, length, H, seed=0):
    return np.random.default_rng(seed).standard_normal((batch, length, H))


def _layer_method(layer, sys_c):
    """The systems module's version of the layer's discretisation, at step 1 (samples), as the
    S4 recursion's matrices (an LDS read with output="s4")."""
    if layer.ssm.disc == "bilinear":
        return s4_bilinear(sys_c, 1.0)
    return discretize(sys_c, 1.0, method="zoh")


def _as_recursion(held):
    return S4Recursion(held.A, held.B, held.C, held.D, dt=held.dt)


@pytest.mark.parametrize("kwargs", VARIANTS, ids=IDS)
def test_simulated_lds_equals_layer_ssm_output(kwargs):
    """simulate(to_lds(), u) (standard convention) and s4_recursion().simulate(u) == the SSM
    output, multi-channel and per channel; the recursion's states are the layer's states in
    real coordinates, the standard realisation's the same states one step later."""
    layer = _layer(kwargs)
    u = _u(2, 70, 3)
    ut = torch.from_numpy(u)
    with torch.no_grad():
        ref = layer.ssm(ut).numpy()
        states = layer.states(ut).numpy()  # (B, L, H, N/2) complex
    sys = layer.to_lds()
    assert sys.is_discrete and (sys.n_inputs, sys.n_outputs, sys.n_states) == (3, 3, 24)
    rec = layer.s4_recursion()
    assert isinstance(rec, S4Recursion) and not isinstance(rec, LDS)
    res = rec.simulate(u)
    np.testing.assert_allclose(res.y, ref, rtol=0, atol=1e-10)
    real_states = np.stack([states.real, states.imag], -1).reshape(2, 70, 24)
    np.testing.assert_allclose(res.x, real_states, rtol=0, atol=1e-10)
    std = simulate(sys, u)
    np.testing.assert_allclose(std.y, ref, rtol=0, atol=1e-10)
    np.testing.assert_allclose(std.x[:, 1:], real_states[:, :-1], rtol=0, atol=1e-10)
    np.testing.assert_allclose(std.final_state, real_states[:, -1], rtol=0, atol=1e-10)
    for h in range(3):
        one = layer.to_lds(h)
        assert (one.n_inputs, one.n_outputs, one.n_states) == (1, 1, 8)
        assert one.input_labels == [f"u[{h}]"] and one.output_labels == [f"y[{h}]"]
        y = simulate(one, u[0, :, h]).y[:, 0]             # 1-D input of a SISO system
        np.testing.assert_allclose(y, ref[0, :, h], rtol=0, atol=1e-10)
        y = layer.s4_recursion(h).simulate(u[..., h : h + 1]).y[..., 0]
        np.testing.assert_allclose(y, ref[..., h], rtol=0, atol=1e-10)


@pytest.mark.parametrize("kwargs", VARIANTS, ids=IDS)
def test_continuous_lds_discretised_by_the_layer_method_equals_discrete(kwargs):
    layer = _layer(kwargs)
    for rate in (1.0, 0.5):
        sys_c = layer.to_lds(continuous=True, rate=rate)
        assert sys_c.is_continuous
        rec = layer.s4_recursion(rate=rate)
        back = _layer_method(layer, sys_c)
        for mine, theirs in zip((back.A, back.B, back.C, back.D),
                                (rec.A_bar, rec.B_bar, rec.C, rec.D)):
            np.testing.assert_allclose(mine, theirs, rtol=0, atol=1e-12)
        sys_d = layer.to_lds(rate=rate)
        std = _as_recursion(back).to_lds()
        if layer.ssm.disc == "bilinear":   # the same, through discretize's named S4 option
            assert std.equals(discretize(sys_c, 1.0, "s4-bilinear"))
        for name in "ABCD":
            np.testing.assert_allclose(getattr(std, name), getattr(sys_d, name), rtol=0,
                                       atol=1e-12, err_msg=name)


@pytest.mark.parametrize("kwargs", VARIANTS, ids=IDS)
def test_from_lds_round_trips_the_kernel(kwargs):
    layer = _layer(kwargs)
    K = layer.kernel(300, torch.float64)
    for given in (layer.to_lds(), layer.to_lds(continuous=True), layer.s4_recursion()):
        built = S4.from_lds(given, disc=layer.ssm.disc,
                            real_transform=layer.ssm.real_transform)
        assert isinstance(built.ssm, DiagonalSSM) and built.ssm.init == "from_lds"
        torch.testing.assert_close(built.kernel(300, torch.float64), K, rtol=0, atol=1e-10)
        # exact from the S4 matrices; D + C B̄ - C B̄ through the standard realisation
        exact = not isinstance(given, LDS) or given.is_continuous
        torch.testing.assert_close(built.ssm.D, layer.ssm.D, rtol=0, atol=0 if exact else 1e-14)


def test_s4plus_ssm_part_is_the_lds_after_the_smr_prefilter():
    layer = _layer({"init": "inv"}, cls=S4Plus)
    u = torch.from_numpy(_u(2, 50, 3, seed=1))
    with torch.no_grad():
        u_adj = layer.smr(u)
        ref = layer.ssm(u_adj).numpy()
    sys = layer.to_lds()
    np.testing.assert_allclose(simulate(sys, u_adj.numpy()).y, ref, atol=1e-10)
    # and the round trip keeps the SSM, with the SMR pre-filter at its initialisation
    built = S4Plus.from_lds(sys, tau=layer.smr.tau)
    torch.testing.assert_close(built.kernel(100, torch.float64),
                               layer.kernel(100, torch.float64), rtol=0, atol=1e-10)
    # and its continuous system, discretised by the layer's method, is the discrete one
    back = _as_recursion(_layer_method(layer, layer.to_lds(continuous=True))).to_lds()
    for name in "ABCD":
        np.testing.assert_allclose(getattr(back, name), getattr(sys, name), rtol=0, atol=1e-12)


def test_dplr_continuous_spectrum_is_the_legs_spectrum():
    """At initialisation the DPLR layer is LegS: its continuous A (times Δ) has eigenvalues
    -Δ, -2Δ, ..., -NΔ (the diagonal of the triangular LegS matrix)."""
    old = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        ssm = DPLRSSM(2, 8, seed=0)
    finally:
        torch.set_default_dtype(old)
    dt = torch.exp(ssm.log_dt).detach().numpy()
    for h in range(2):
        lam = np.sort(np.linalg.eigvals(ssm.to_lds(h, continuous=True).A).real)
        np.testing.assert_allclose(lam, -dt[h] * np.arange(8, 0, -1), rtol=1e-6)


def test_from_lds_of_a_given_system_reproduces_its_simulation():
    """An independent system (not made by to_lds): a stable LDS with real and complex modes,
    read with the standard recursion (an LDS) and with S4's (the same matrices as an
    S4Recursion)."""
    A = np.array([[0.9, 0.2, 0.0, 0.0], [-0.2, 0.9, 0.0, 0.0], [0.1, 0.0, 0.5, 0.0],
                  [0.0, 0.3, 0.0, -0.4]])
    sys = LDS(A, [[1.0], [0.5], [-1.0], [2.0]], [[1.0, -1.0, 0.5, 0.3]], [[0.7]], dt=1.0)
    u = _u(2, 60, 1, seed=3)
    cases = [(sys, simulate(sys, u).y), (_as_recursion(sys), simulate(sys, u, output="s4").y)]
    for (given, ref), disc in itertools.product(cases, ("bilinear", "zoh")):
        ssm = DiagonalSSM.from_lds(given, disc=disc, dt=0.3)
        assert ssm.d_state == 2 * 3  # one pair, two real modes
        with torch.no_grad():
            y = ssm(torch.from_numpy(u)).numpy()
        np.testing.assert_allclose(y, ref, rtol=0, atol=1e-10)
        torch.testing.assert_close(torch.exp(ssm.log_dt), torch.full((1,), 0.3,
                                   dtype=torch.float64), rtol=1e-15, atol=0)


def test_from_lds_of_a_list_of_channels_and_padding():
    rng = np.random.default_rng(0)
    systems = [random_stable_lds(n, rng=rng) for n in (2, 5, 3)]
    u = _u(2, 40, 3, seed=4)
    ssm = DiagonalSSM.from_lds(systems, d_state=12)
    assert ssm.d_state == 12
    with torch.no_grad():
        y = ssm(torch.from_numpy(u)).numpy()
    for h, s in enumerate(systems):
        ref = simulate(s, u[..., h : h + 1]).y[..., 0]
        np.testing.assert_allclose(y[..., h], ref, rtol=0, atol=1e-10)


def test_from_lds_refusals():
    ok = LDS([[0.5]], [[1.0]], [[1.0]], dt=1.0)
    with pytest.raises(ValueError, match="couple channels"):
        DiagonalSSM.from_lds(LDS([[0.5, 0.1], [0.0, 0.3]], np.eye(2), np.eye(2), dt=1.0))
    with pytest.raises(ValueError, match="D must be diagonal"):
        DiagonalSSM.from_lds(LDS(np.diag([0.5, 0.3]), np.eye(2), np.eye(2), [[0, 1], [0, 0]],
                                 dt=1.0))
    with pytest.raises(ValueError, match="as many inputs as outputs"):
        DiagonalSSM.from_lds(LDS([[0.5]], [[1.0, 1.0]], [[1.0]], dt=1.0))
    with pytest.raises(ValueError, match="diagonalisable"):
        DiagonalSSM.from_lds(LDS([[0.5, 1.0], [0.0, 0.5]], [[0.0], [1.0]], [[1.0, 0.0]], dt=1.0))
    with pytest.raises(ValueError, match="-1 has no continuous counterpart"):
        DiagonalSSM.from_lds(LDS([[-1.0]], [[1.0]], [[1.0]], dt=1.0))
    with pytest.raises(ValueError, match="0 has no continuous counterpart"):
        DiagonalSSM.from_lds(S4Recursion([[0.0]], [[1.0]], [[1.0]]), disc="zoh")
    with pytest.raises(ValueError, match="singular A, an eigenvalue 0"):
        DiagonalSSM.from_lds(LDS([[0.0]], [[1.0]], [[1.0]], dt=1.0), disc="zoh")
    with pytest.raises(ValueError, match="real_transform='none'"):
        DiagonalSSM.from_lds(LDS([[1.2]], [[1.0]], [[1.0]], dt=1.0))
    grown = DiagonalSSM.from_lds(LDS([[1.2]], [[1.0]], [[1.0]], dt=1.0), real_transform="none")
    assert grown.A_real.item() > 0
    with pytest.raises(ValueError, match="d_state=2 is too small"):
        DiagonalSSM.from_lds(LDS(np.diag([0.5, 0.3]), [[1.0], [1.0]], [[1.0, 1.0]], dt=1.0),
                             d_state=2)
    with pytest.raises(TypeError, match="LDS"):
        DiagonalSSM.from_lds(np.eye(2))
    with pytest.raises(ValueError, match="mode='diag'"):
        S4.from_lds(ok, mode="dplr")
    with pytest.raises(ValueError, match="dt"):
        DiagonalSSM.from_lds(ok, dt=-1.0)


def test_to_lds_argument_checks():
    layer = S4(3, 4, seed=0)
    with pytest.raises(ValueError, match="channel must be in"):
        layer.to_lds(3)
    with pytest.raises(TypeError, match="channel"):
        layer.to_lds(1.0)
    with pytest.raises(TypeError, match="continuous"):
        layer.to_lds(continuous="yes")
    with pytest.raises(ValueError, match="rate"):
        layer.to_lds(rate=-2.0)


# --- states, transposed layout --------------------------------------------------------------


@pytest.mark.parametrize("kwargs", VARIANTS, ids=IDS)
def test_states_equal_step_mode_states(kwargs):
    layer = _layer(kwargs)
    x = torch.from_numpy(_u(2, 45, 3, seed=5))
    x0 = torch.randn(2, 3, 4, dtype=torch.complex128, generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        for state, rate in ((None, 1.0), (x0, 1.7)):
            got = layer.states(x, state, rate=rate)
            ref = run_step_states(layer.ssm, x, state, rate=rate)
            assert got.shape == (2, 45, 3, 4)
            torch.testing.assert_close(got, ref, rtol=0, atol=1e-10)


def test_transposed_layout():
    for cls in (S4, S4Plus):
        for mode in ("diag", "dplr"):
            a = cls(4, 6, mode=mode, seed=1).double()
            b = cls(4, 6, mode=mode, transposed=True, seed=1).double()
            x = torch.randn(2, 30, 4, dtype=torch.float64)
            with torch.no_grad():
                torch.testing.assert_close(b(x.transpose(1, 2)), a(x).transpose(1, 2))
                torch.testing.assert_close(b.states(x.transpose(1, 2)), a.states(x))
                yb, sb = b(x.transpose(1, 2), return_state=True)
                ya, sa = a(x, return_state=True)
            torch.testing.assert_close(yb, ya.transpose(1, 2))
            with pytest.raises(ValueError, match=r"\(batch, d_model=4, length\)"):
                b(x)


# --- STU ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("kwargs", [{"form": "exact"}, {}, {"k_u": 2, "k_y": 2, "lag": 1}],
                         ids=["exact", "tensordot", "ar-lag"])
def test_stu_impulse_response_is_exact(kwargs):
    """y_t = sum_j h[j] u_{t-j} for random inputs (superposition, naive double loop)."""
    layer = STU(3, 32, 4, filters=dense_hankel_filters(32, 4), seed=0, **kwargs).double()
    if "k_y" in kwargs:
        with torch.no_grad():
            layer.a_y.copy_(torch.tensor([[0.5, 0.2, -0.3], [0.1, 0.0, 0.2]]))
            layer.M_u.copy_(0.3 * torch.randn(layer.M_u.shape))
    h = layer.impulse_response()
    assert h.shape == (32, 3, 3)
    u = _u(2, 32, 3, seed=6)
    with torch.no_grad():
        y = layer(torch.from_numpy(u)).numpy()
    ref = np.zeros_like(y)
    for t in range(32):
        for j in range(t + 1):
            ref[:, t] += u[:, t - j] @ h[j].T
    np.testing.assert_allclose(y, ref, rtol=0, atol=1e-12)


def test_stu_fit_lds_reports_its_error():
    layer = STU(2, 64, 4, filters=dense_hankel_filters(64, 4), seed=1).double()
    errs = []
    for order in (2, 8, 16):
        fit = layer.fit_lds(order, length=64)
        assert fit.system.n_states == order and fit.system.is_discrete
        recomputed = np.linalg.norm(fit.system.impulse_response(64) - fit.impulse)
        assert fit.rel_error == pytest.approx(recomputed / np.linalg.norm(fit.impulse))
        errs.append(fit.rel_error)
    assert errs[-1] < 0.05 < errs[0]  # a fit: better with more states, never claimed exact
    one = layer.fit_lds(4, length=64, pair=(1, 0))
    assert (one.system.n_inputs, one.system.n_outputs) == (1, 1)
    np.testing.assert_array_equal(one.impulse[:, 0, 0], layer.impulse_response()[:, 1, 0])
    with pytest.raises(ValueError, match="pair"):
        layer.fit_lds(4, pair=(2, 0))
    with pytest.raises(ValueError, match="length"):
        layer.impulse_response(65)


def test_era_recovers_an_lds_exactly():
    rng = np.random.default_rng(2)
    sys = random_stable_lds(4, d_in=3, d_out=2, rng=rng)
    h = sys.impulse_response(40)
    fit, sv = era(h, 4)
    assert sv[4] < 1e-12 * sv[0]  # rank 4: the order is recovered, not fitted
    np.testing.assert_allclose(fit.impulse_response(80), sys.impulse_response(80), atol=1e-10)
    np.testing.assert_allclose(np.sort_complex(fit.eigenvalues()),
                               np.sort_complex(sys.eigenvalues()), atol=1e-10)
    with pytest.raises(ValueError, match="numerical rank"):
        era(h, 6)


def test_from_lds_takes_a_control_statespace():
    control = pytest.importorskip("control")
    sys = random_stable_lds(3, rng=np.random.default_rng(5))
    ss = control.ss(sys.A, sys.B, sys.C, sys.D, 1.0)
    a, b = DiagonalSSM.from_lds(sys), DiagonalSSM.from_lds(ss)
    torch.testing.assert_close(a.kernel(50, torch.float64), b.kernel(50, torch.float64),
                               rtol=0, atol=0)
    c = DiagonalSSM.from_lds([ss, sys])
    assert c.d_model == 2
