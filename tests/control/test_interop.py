"""python-control interop of the control module: the Lyapunov conventions (and the mapping
table of docs/control.md, evaluated row by row against the libraries it names), systems
accepted by the Lyapunov functions and ETCSystem, and LQR gains for event-triggered control."""

from __future__ import annotations

from pathlib import Path

import control
import numpy as np
import pytest
import scipy.linalg
import scipy.signal

from lds_toolkit.control import (
    ETCSystem,
    LyapunovRule,
    RelativeErrorRule,
    continuous_lyapunov,
    discrete_lyapunov,
    simulate_etc,
    verify,
)
from lds_toolkit.systems import LDS, discretize, simulate, simulate_continuous

DOC = Path(__file__).resolve().parents[2] / "docs" / "control.md"
TABUADA_A = np.array([[0.0, 1.0], [-2.0, 3.0]])
TABUADA_B = np.array([[0.0], [1.0]])


def _hurwitz(rng, n):
    A = rng.standard_normal((n, n))
    return A - (np.max(np.linalg.eigvals(A).real) + 0.5) * np.eye(n)


def _schur(rng, n):
    A = rng.standard_normal((n, n))
    return 0.9 * A / np.max(np.abs(np.linalg.eigvals(A)))


def _sym(rng, n):
    X = rng.standard_normal((n, n))
    return X + X.T


# ------------------------------------------------------------- the docs' mapping table
def _table_rows():
    text = DOC.read_text()
    lines = text.split("<!-- interop-table -->")[1].strip().splitlines()
    end = next((i for i, line in enumerate(lines) if not line.startswith("|")), len(lines))
    rows = lines[2:end]                                   # after the header and the rule
    out = []
    for line in rows:
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        time, what, ours, sp, ctl = cells
        out.append(pytest.param(time, ours.strip("`"), sp.strip("`"), ctl.strip("`"),
                                id=what))
    return out


def _normalise(value):
    """Compare results of different libraries: systems as [[A, B], [C, D]], responses and
    (t, y, x) tuples by their outputs as (d_out, T)."""
    if isinstance(value, LDS | control.StateSpace):
        return np.block([[value.A, value.B], [value.C, value.D]])
    if isinstance(value, control.TimeResponseData):
        return value.y
    if isinstance(value, tuple) and len(value) == 5:          # cont2discrete
        return np.block([[value[0], value[1]], [value[2], value[3]]])
    if isinstance(value, tuple) and len(value) == 3:          # dlsim / lsim: (t, y, x)
        return np.asarray(value[1]).reshape(len(value[0]), -1).T
    return np.asarray(value)


def _namespace(time, seed=0, n=3, m=2, p=2, T=25, dt=0.1):
    rng = np.random.default_rng(seed)
    A = _hurwitz(rng, n) if time == "continuous" else _schur(rng, n)
    B, C, D = rng.standard_normal((n, m)), rng.standard_normal((p, n)), rng.standard_normal((p, m))
    sys = LDS(A, B, C, D, dt=None if time == "continuous" else dt)
    X = rng.standard_normal((n, n))
    ns = dict(np=np, A=A, B=B, C=C, D=D, M=_sym(rng, n), Q=X @ X.T + np.eye(n),
              R=np.eye(m) + 0.1 * np.ones((m, m)), dt=dt, sys=sys, ss=sys.to_statespace(),
              u=rng.standard_normal((T, m)), x0=rng.standard_normal(n), t=np.arange(T) * dt)
    ns.update(continuous_lyapunov=continuous_lyapunov, discrete_lyapunov=discrete_lyapunov,
              discretize=discretize, simulate=simulate, simulate_continuous=simulate_continuous,
              ETCSystem=ETCSystem)
    ns.update(solve_continuous_lyapunov=scipy.linalg.solve_continuous_lyapunov,
              solve_discrete_lyapunov=scipy.linalg.solve_discrete_lyapunov,
              solve_continuous_are=scipy.linalg.solve_continuous_are,
              cont2discrete=scipy.signal.cont2discrete, dlsim=scipy.signal.dlsim,
              lsim=scipy.signal.lsim)
    ns.update(lyap=control.lyap, dlyap=control.dlyap, lqr=control.lqr,
              sample_system=control.sample_system, forced_response=control.forced_response)
    return ns


def test_the_table_is_there_and_complete():
    rows = _table_rows()
    assert len(rows) >= 11
    names = " ".join(str(r.values) for r in rows)
    for fn in ("continuous_lyapunov", "discrete_lyapunov", "discretize", "simulate(",
               "simulate_continuous", "from_lqr", "lyap(", "dlyap(", "sample_system",
               "forced_response", "lqr("):
        assert fn in names


@pytest.mark.parametrize("time,ours,scipy_call,control_call", _table_rows())
@pytest.mark.parametrize("seed", [0, 1])
def test_table_row_against_scipy_and_python_control(time, ours, scipy_call, control_call, seed):
    ns = _namespace(time, seed)
    mine = _normalise(eval(ours, ns))  # noqa: S307 - expressions from our own docs
    scale = max(1.0, np.abs(mine).max())
    for other in (scipy_call, control_call):
        if other in ("", "—"):
            continue
        theirs = _normalise(eval(other, ns))  # noqa: S307
        assert theirs.shape == mine.shape, (other, theirs.shape, mine.shape)
        np.testing.assert_allclose(mine, theirs, rtol=0, atol=1e-9 * scale, err_msg=other)


# ------------------------------------------------------------------- Lyapunov details
def test_conventions_differ_on_a_non_normal_matrix():
    """The table's rows are different equations: on a non-normal A they give different P."""
    A = np.array([[-1.0, 5.0], [0.0, -2.0]])
    M = np.eye(2)
    ours = continuous_lyapunov(A, M)
    theirs = continuous_lyapunov(A, M, convention="control")
    assert np.abs(ours - theirs).max() > 0.5
    np.testing.assert_allclose(A @ theirs + theirs @ A.T + M, 0, atol=1e-12)
    sp = continuous_lyapunov(A, -M, convention="scipy")
    np.testing.assert_allclose(sp, theirs, atol=1e-12)
    with pytest.raises(ValueError, match=r"convention must be one of \['control', 'scipy', "
                                         r"'toolkit'\], got 'matlab'"):
        continuous_lyapunov(A, M, convention="matlab")
    with pytest.raises(ValueError, match=r"A must be Hurwitz .* for AX \+ XAᵀ \+ M = 0 "
                                         r"\(control.lyap\)"):
        continuous_lyapunov(-A, M, convention="control")
    with pytest.raises(ValueError, match=r"Schur stable .* for AXAᵀ - X \+ M = 0"):
        discrete_lyapunov(2 * np.eye(2), M, convention="scipy")


def test_lyapunov_functions_accept_systems():
    rng = np.random.default_rng(5)
    Ac, Ad, M = _hurwitz(rng, 3), _schur(rng, 3), _sym(rng, 3) + 10 * np.eye(3)
    B, C = rng.standard_normal((3, 1)), rng.standard_normal((1, 3))
    sysc, sysd = LDS(Ac, B, C), LDS(Ad, B, C, dt=0.5)
    for system in (sysc, sysc.to_statespace()):
        np.testing.assert_array_equal(continuous_lyapunov(system, M), continuous_lyapunov(Ac, M))
        assert not verify(system, continuous_lyapunov(Ac, M), M).discrete
        assert verify(system, continuous_lyapunov(Ac, M), M).satisfied
    for system in (sysd, sysd.to_statespace()):
        np.testing.assert_array_equal(discrete_lyapunov(system, M), discrete_lyapunov(Ad, M))
        chk = verify(system, discrete_lyapunov(Ad, M), M)
        assert chk.discrete and chk.satisfied
    with pytest.raises(ValueError, match=r"A must be a continuous-time system \(or a matrix\) "
                                         r"here, got a discrete-time LDS"):
        continuous_lyapunov(sysd, M)
    with pytest.raises(ValueError, match=r"A must be a discrete-time system .* got a "
                                         r"continuous-time StateSpace"):
        discrete_lyapunov(sysc.to_statespace(), M)
    with pytest.raises(ValueError, match=r"A_closed_loop must be a continuous-time system"):
        verify(sysd, np.eye(3), M, discrete=False)


# ------------------------------------------------------------------------ ETC and LQR
def test_etc_system_takes_a_plant():
    K = [[1.0, -4.0]]
    ref = ETCSystem(TABUADA_A, TABUADA_B, K)
    plant = LDS(TABUADA_A, TABUADA_B, np.eye(2))
    for p in (plant, plant.to_statespace(), control.ss(TABUADA_A, TABUADA_B, [[1.0, 0.0]], 0)):
        loop = ETCSystem(p, K=K)
        for name in "ABKPM":
            np.testing.assert_array_equal(getattr(loop, name), getattr(ref, name))
    with pytest.raises(ValueError, match=r"plant must be continuous-time .* got dt=0.1"):
        ETCSystem(LDS(TABUADA_A, TABUADA_B, np.eye(2), dt=0.1), K=K)
    with pytest.raises(TypeError, match="B must be omitted when A is a system"):
        ETCSystem(plant, TABUADA_B, K)
    with pytest.raises(TypeError, match="B is required when A is a matrix"):
        ETCSystem(TABUADA_A, K=K)
    with pytest.raises(TypeError, match=r"K, the gain of u = K x, is required.*from_lqr"):
        ETCSystem(plant)


@pytest.mark.parametrize("mode", ["exact", "grid"])
def test_from_lqr_equals_the_manual_sign_flip(mode):
    Q, R = np.diag([1.0, 2.0]), np.array([[0.5]])
    K_lqr, S, E = control.lqr(TABUADA_A, TABUADA_B, Q, R)
    loop = ETCSystem.from_lqr(TABUADA_A, TABUADA_B, Q, R)
    manual = ETCSystem(TABUADA_A, TABUADA_B, -K_lqr)
    np.testing.assert_array_equal(loop.K, -K_lqr)
    lam = np.linalg.eigvals(loop.closed_loop)
    assert np.all(lam.real < 0)                                  # a stable closed loop
    np.testing.assert_allclose(np.sort_complex(lam), np.sort_complex(E), atol=1e-10)
    for name in "PM":
        np.testing.assert_array_equal(getattr(loop, name), getattr(manual, name))
    rule = LyapunovRule(0.5)
    a = simulate_etc(loop, rule, [1.0, 0.0], horizon=8.0, mode=mode)
    b = simulate_etc(manual, rule, [1.0, 0.0], horizon=8.0, mode=mode)
    assert a.n_events > 5
    np.testing.assert_array_equal(a.sample_times, b.sample_times)
    assert a.x[-1] @ a.x[-1] < 1e-4                              # and it does stabilise


def test_from_lqr_call_forms_and_riccati_certificate():
    rng = np.random.default_rng(7)
    n, m = 4, 2
    A, B = rng.standard_normal((n, n)), rng.standard_normal((n, m))
    X = rng.standard_normal((n, n))
    Q, R, N = X @ X.T + np.eye(n), np.diag([1.0, 3.0]), 0.1 * rng.standard_normal((n, m))
    plant = LDS(A, B, np.eye(n))
    forms = [(A, B, Q, R), (plant, Q, R), (plant.to_statespace(), Q, R)]
    for args in forms:
        np.testing.assert_allclose(ETCSystem.from_lqr(*args).K, -control.lqr(A, B, Q, R)[0],
                                   atol=1e-12)
    K_lqr, S, _ = control.lqr(A, B, Q, R, N)
    for args in [(A, B, Q, R, N), (plant, Q, R, N)]:
        loop = ETCSystem.from_lqr(*args, certificate="riccati")
        np.testing.assert_allclose(loop.K, -K_lqr, atol=1e-12)
        np.testing.assert_allclose(loop.P, S, rtol=1e-12)
        # closed form of M = -((A+BK)ᵀS + S(A+BK)) from the Riccati equation
        M_ref = Q - N @ K_lqr - K_lqr.T @ N.T + K_lqr.T @ R @ K_lqr
        np.testing.assert_allclose(loop.M, M_ref, rtol=1e-8, atol=1e-8 * np.abs(M_ref).max())
        assert verify(loop.closed_loop, loop.P, loop.M).satisfied


def test_from_lqr_bad_arguments():
    A, B, Q, R = TABUADA_A, TABUADA_B, np.eye(2), np.eye(1)
    with pytest.raises(TypeError, match=r"from_lqr takes \(A, B, Q, R\[, N\]\) or \(sys, Q, "
                                        r"R\[, N\]\) like control.lqr, got 3"):
        ETCSystem.from_lqr(A, B, Q)
    with pytest.raises(TypeError, match="got 1 positional"):
        ETCSystem.from_lqr(A)
    with pytest.raises(ValueError, match=r"Q must have shape \(2, 2\) to match A"):
        ETCSystem.from_lqr(A, B, np.eye(3), R)
    with pytest.raises(ValueError, match="Q must be symmetric positive semidefinite; its "
                                         "smallest eigenvalue is -1"):
        ETCSystem.from_lqr(A, B, -np.eye(2), R)
    with pytest.raises(ValueError, match="R must be symmetric positive definite"):
        ETCSystem.from_lqr(A, B, Q, -R)
    with pytest.raises(ValueError, match=r"N must have shape \(2, 1\)"):
        ETCSystem.from_lqr(A, B, Q, R, np.ones((1, 2)))
    with pytest.raises(ValueError, match=r"\[\[Q, N\], \[N\^T, R\]\] must be symmetric "
                                         r"positive semidefinite"):
        ETCSystem.from_lqr(A, B, Q, R, 5 * np.ones((2, 1)))
    with pytest.raises(ValueError, match="certificate must be one of"):
        ETCSystem.from_lqr(A, B, Q, R, certificate="lqr")
    with pytest.raises(ValueError, match="M must be omitted with certificate='riccati'"):
        ETCSystem.from_lqr(A, B, Q, R, certificate="riccati", M=np.eye(2))
    with pytest.raises(ValueError, match=r"plant must be continuous|sys must be continuous"):
        ETCSystem.from_lqr(LDS(A, B, np.eye(2), dt=0.1), Q, R)


def test_hurwitz_error_names_the_sign_convention():
    K_lqr = control.lqr(TABUADA_A, TABUADA_B, np.eye(2), np.eye(1))[0]
    with pytest.raises(ValueError, match=r"must be Hurwitz.*A - B K is Hurwitz, so K looks like "
                                         r"a gain for u = -K x.*pass K = -K_lqr.*from_lqr"):
        ETCSystem(TABUADA_A, TABUADA_B, K_lqr)
    # a gain that is wrong with either sign gets the convention reminder but no guess
    with pytest.raises(ValueError, match=r"must be Hurwitz") as info:
        ETCSystem(TABUADA_A, TABUADA_B, np.zeros((1, 2)))
    assert "u = -K x" in str(info.value) and "looks like" not in str(info.value)
    # the relative-error rule runs on the LQR loop (sanity of the converted gain)
    loop = ETCSystem.from_lqr(TABUADA_A, TABUADA_B, np.eye(2), np.eye(1))
    assert simulate_etc(loop, RelativeErrorRule(0.1), [1.0, 0.0], horizon=2.0).n_events > 0
