"""Discretisation: zoh and bilinear against scipy.signal.cont2discrete, control.sample_system
and independent formulas; S4's bilinear form and how its input-output map differs from
Tustin's."""

from __future__ import annotations

import control
import numpy as np
import pytest
import scipy.linalg
import scipy.signal

from lds_toolkit.systems import LDS, discretize, s4_bilinear, simulate, zoh_matrices

from ._ref import assert_rel, seed_of, zoh_by_quadrature

TOL = 1e-12
CASES = [(n, d_in, d_out, dt) for n, d_in, d_out in [(1, 1, 1), (3, 2, 1), (5, 1, 3), (6, 3, 2)]
         for dt in (0.01, 0.3, 1.0)]


def _continuous(n, d_in, d_out, seed) -> LDS:
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((n, n)) - 0.5 * np.eye(n)  # generic, not necessarily stable
    return LDS(A, rng.standard_normal((n, d_in)), rng.standard_normal((d_out, n)),
               rng.standard_normal((d_out, d_in)))


def _mats(sys):
    return [np.array(m) for m in (sys.A, sys.B, sys.C, sys.D)]


def _assert_same(ours: LDS, ref_mats, what):
    for name, m, r in zip("ABCD", _mats(ours), ref_mats):
        np.testing.assert_allclose(m, r, rtol=TOL, atol=TOL * max(1.0, np.abs(r).max()),
                                   err_msg=f"{what}: {name}")


@pytest.mark.parametrize("method", ["zoh", "bilinear"])
@pytest.mark.parametrize("n,d_in,d_out,dt", CASES)
def test_matches_scipy_and_control(n, d_in, d_out, dt, method):
    sysc = _continuous(n, d_in, d_out, seed_of(n, d_in, d_out, dt))
    ours = discretize(sysc, dt, method=method)
    assert ours.dt == dt and ours.is_discrete
    Ad, Bd, Cd, Dd, dt_s = scipy.signal.cont2discrete(tuple(_mats(sysc)), dt, method=method)
    assert dt_s == dt
    _assert_same(ours, (Ad, Bd, Cd, Dd), "scipy")
    ctl = control.sample_system(sysc.to_statespace(), dt, method=method)
    assert ctl.dt == dt
    _assert_same(ours, (ctl.A, ctl.B, ctl.C, ctl.D), "control")
    assert sysc.discretize(dt, method).equals(ours)


@pytest.mark.parametrize("n,d_in,d_out,dt", CASES)
def test_zoh_against_quadrature_and_closed_form(n, d_in, d_out, dt):
    sysc = _continuous(n, d_in, d_out, seed_of("zoh", n, dt))
    A, B = np.array(sysc.A), np.array(sysc.B)
    Ad, Bd = zoh_matrices(A, B, dt)
    Ad_q, Bd_q = zoh_by_quadrature(A, B, dt)
    assert_rel(Ad, Ad_q, TOL)
    assert_rel(Bd, Bd_q, 1e-11)
    # invertible A: B_d = A^{-1} (e^{A dt} - I) B
    assert_rel(Bd, np.linalg.solve(A, (Ad_q - np.eye(n)) @ B), 1e-10)
    d = discretize(sysc, dt, "zoh")
    np.testing.assert_array_equal(d.C, sysc.C)
    np.testing.assert_array_equal(d.D, sysc.D)


@pytest.mark.parametrize("n,d_in,d_out,dt", CASES)
def test_bilinear_explicit_formula_and_frequency_warping(n, d_in, d_out, dt):
    """Tustin: M = (I - A dt/2)^{-1}, A_d = M (I + A dt/2), B_d = M B dt, C_d = C M,
    D_d = D + C M B dt/2; and H_d(e^{iω dt}) = H_c(i (2/dt) tan(ω dt/2))."""
    sysc = _continuous(n, d_in, d_out, seed_of("tustin", n, dt))
    A, B, C, D = _mats(sysc)
    M = np.linalg.inv(np.eye(n) - 0.5 * dt * A)
    ref = (M @ (np.eye(n) + 0.5 * dt * A), M @ B * dt, C @ M, D + 0.5 * dt * C @ M @ B)
    d = discretize(sysc, dt, "bilinear")
    for name, m, r in zip("ABCD", _mats(d), ref):
        np.testing.assert_allclose(m, r, rtol=1e-11, atol=1e-11 * np.abs(r).max(),
                                   err_msg=name)
    for w in (0.1, 1.0, 0.9 * np.pi / dt):
        s = 1j * (2 / dt) * np.tan(w * dt / 2)
        Hc = C @ np.linalg.solve(s * np.eye(n) - A, B) + D
        z = np.exp(1j * w * dt)
        Ad, Bd, Cd, Dd = _mats(d)
        Hd = Cd @ np.linalg.solve(z * np.eye(n) - Ad, Bd) + Dd
        assert_rel(Hd, Hc, 1e-10)


# ------------------------------------------------------------------------ S4 form
@pytest.mark.parametrize("n,d_in,d_out,dt", CASES)
def test_s4_bilinear_matrices(n, d_in, d_out, dt):
    """Same Ā, B̄ as scipy's bilinear; C and D untouched (scipy transforms both)."""
    sysc = _continuous(n, d_in, d_out, seed_of("s4", n, dt))
    s4 = s4_bilinear(sysc, dt)
    Ad, Bd, Cd, Dd, _ = scipy.signal.cont2discrete(tuple(_mats(sysc)), dt, method="bilinear")
    np.testing.assert_allclose(s4.A, Ad, rtol=TOL, atol=TOL * np.abs(Ad).max())
    np.testing.assert_allclose(s4.B, Bd, rtol=TOL, atol=TOL * np.abs(Bd).max())
    np.testing.assert_array_equal(s4.C, sysc.C)
    np.testing.assert_array_equal(s4.D, sysc.D)
    assert s4.dt == dt
    # and scipy's C, D really are different, so the test above distinguishes the two forms
    assert not np.allclose(Cd, sysc.C) and not np.allclose(Dd, sysc.D)


def _tustin_and_s4_at_rest(seed, n=4, d_in=2, d_out=3, dt=0.2, T=60):
    rng = np.random.default_rng(seed)
    sysc = _continuous(n, d_in, d_out, seed).with_matrices(D=np.zeros((d_out, d_in)))
    u = rng.standard_normal((T, d_in))
    A, B, C, D = _mats(sysc)
    tustin = scipy.signal.cont2discrete((A, B, C, D), dt, method="bilinear")
    _, y_tustin, _ = scipy.signal.dlsim(tustin, u)
    y_s4 = simulate(s4_bilinear(sysc, dt), u, output="s4").y
    return y_tustin, y_s4


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_tustin_output_is_average_of_consecutive_s4_outputs(seed):
    """Starting at rest with D = 0: y^tustin_k = (y^s4_k + y^s4_{k-1}) / 2, y^s4_{-1} = 0."""
    y_tustin, y_s4 = _tustin_and_s4_at_rest(seed)
    y_s4_prev = np.vstack([np.zeros((1, y_s4.shape[1])), y_s4[:-1]])
    assert_rel(y_tustin, 0.5 * (y_s4 + y_s4_prev), 1e-10)
    # the two maps really differ (the identity is not trivially satisfied)
    assert np.abs(y_tustin - y_s4).max() > 1e-3 * np.abs(y_s4).max()


@pytest.mark.parametrize("seed", [0, 1])
def test_transfer_function_identity(seed):
    """H_tustin(z) = (z + 1)/2 · C (zI - Ā)^{-1} B̄ = H_c((2/dt)(z-1)/(z+1)) (D = 0)."""
    dt, n = 0.3, 4
    sysc = _continuous(n, 2, 3, seed_of("tf", seed)).with_matrices(D=np.zeros((3, 2)))
    A, B, C, D = _mats(sysc)
    Ad, Bd, Cd, Dd, _ = scipy.signal.cont2discrete((A, B, C, D), dt, method="bilinear")
    s4 = s4_bilinear(sysc, dt)
    I = np.eye(n)
    for z in (1.7, -0.4 + 0.9j, np.exp(0.3j), 2.5 - 1j, 0.2j):
        H_tustin = Cd @ np.linalg.solve(z * I - Ad, Bd) + Dd
        H_s4 = (z + 1) / 2 * (C @ np.linalg.solve(z * I - s4.A, s4.B))
        H_c = C @ np.linalg.solve((2 / dt) * (z - 1) / (z + 1) * I - A, B)
        assert_rel(H_s4, H_tustin, 1e-10, f"z={z}")
        assert_rel(H_c, H_tustin, 1e-10, f"z={z}")


def test_s4_state_is_trapezoidal_approximation_at_end_of_hold_interval():
    """With u_k held on [k dt, (k+1) dt) and x_{-1} = x(0), the S4 state x_k (simulate's
    states[k] with output="s4") approximates x((k+1) dt) with O(dt^2) global error."""
    rng = np.random.default_rng(3)
    n = 3
    A = rng.standard_normal((n, n)) - 2.0 * np.eye(n)
    sysc = LDS(A, rng.standard_normal((n, 1)), np.eye(n))
    x0 = rng.standard_normal(n)
    t_end = 2.0
    errors = []
    for K in (50, 100, 200):
        dt = t_end / K
        u = np.ones((K, 1))
        x_s4 = simulate(s4_bilinear(sysc, dt), u, x0, output="s4").x
        x_exact = simulate(discretize(sysc, dt, "zoh"), u, x0).final_state  # x(t_end), exact
        errors.append(np.abs(x_s4[-1] - x_exact).max())
    ratios = np.array(errors[:-1]) / np.array(errors[1:])
    np.testing.assert_allclose(ratios, 4.0, rtol=0.05)


def test_tustin_output_approximates_half_step_later():
    """For a step input held from t = 0, Tustin's y_k approximates y((k + 1/2) dt) with
    O(dt^2) error, while compared at k dt it is off by O(dt) (docs/systems.md figure)."""
    sysc = LDS([[0.0, 1.0], [-4.0, -0.4]], [[0.0], [1.0]], [[1.0, 0.0]])
    err_half, err_k = [], []
    for K in (40, 80, 160):
        dt = 4.0 / K
        y = simulate(discretize(sysc, dt, "bilinear"), np.ones((K, 1))).y[:, 0]
        for err, shift in ((err_half, 0.5), (err_k, 0.0)):
            times = (np.arange(K) + shift) * dt
            exact = [(np.array(sysc.C) @ np.linalg.solve(
                sysc.A, (scipy.linalg.expm(sysc.A * tk) - np.eye(2)) @ sysc.B))[0, 0]
                for tk in times]  # step response C A^{-1} (e^{At} - I) B
            err.append(np.abs(y - exact).max())
    np.testing.assert_allclose(np.array(err_half[:-1]) / err_half[1:], 4.0, rtol=0.1)
    np.testing.assert_allclose(np.array(err_k[:-1]) / err_k[1:], 2.0, rtol=0.1)


# ------------------------------------------------------------------------ errors
def test_discretize_rejects_bad_arguments():
    sysc = _continuous(2, 1, 1, 0)
    with pytest.raises(ValueError, match=r"system must be continuous"):
        discretize(sysc.discretize(0.1), 0.1)
    with pytest.raises(ValueError, match=r"system must be continuous"):
        s4_bilinear(sysc.discretize(0.1), 0.1)
    with pytest.raises(TypeError, match=r"system must be an LDS, a control.StateSpace or a "
                                        r"control.TransferFunction"):
        discretize((sysc.A, sysc.B, sysc.C), 0.1)
    with pytest.raises(TypeError, match=r"dt must be a sample time > 0 .* got True"):
        discretize(sysc, True)
    for bad in (0.0, -0.1):
        with pytest.raises(ValueError, match=r"dt must lie in \(0"):
            discretize(sysc, bad)
        with pytest.raises(ValueError, match=r"dt must lie in \(0"):
            s4_bilinear(sysc, bad)
    with pytest.raises(ValueError, match=r"dt must be finite"):
        discretize(sysc, np.inf)
    with pytest.raises(ValueError, match=r"method must be one of"):
        discretize(sysc, 0.1, method="tustin2")


def test_zoh_matrices_block_exponential_identity():
    """[[A_d, B_d], [0, I]] = expm([[A, B], [0, 0]] dt) — checked through the semigroup
    property: two half steps equal one full step."""
    rng = np.random.default_rng(9)
    A, B = rng.standard_normal((4, 4)), rng.standard_normal((4, 2))
    Ad, Bd = zoh_matrices(A, B, 0.4)
    Ah, Bh = zoh_matrices(A, B, 0.2)
    assert_rel(Ah @ Ah, Ad, 1e-12)
    assert_rel(Ah @ Bh + Bh, Bd, 1e-12)
    assert_rel(Ad, scipy.linalg.expm(0.4 * A), 1e-12)
