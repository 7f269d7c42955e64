"""Bad inputs raise ValueError/TypeError whose message names the argument and what was
expected and received."""

from __future__ import annotations

import numpy as np
import pytest

from lds_toolkit.systems import (
    LDS,
    draw_eigenvalues,
    eigenvalue_regions,
    random_lds,
    random_stable_lds,
    simulate,
    simulate_continuous,
)

A2 = np.array([[0.5, 0.1], [0.0, 0.3]])
B2 = np.ones((2, 1))
C2 = np.ones((3, 2))


@pytest.fixture
def dsys():
    return LDS(A2, B2, C2, dt=1.0)


# ---------------------------------------------------------------- LDS construction
@pytest.mark.parametrize("kwargs,exc,match", [
    (dict(A=np.ones((2, 3)), B=B2, C=C2), ValueError, r"A must be square, got shape \(2, 3\)"),
    (dict(A=np.ones(2), B=B2, C=C2), ValueError, r"A must be a 2-D matrix, got shape \(2,\)"),
    (dict(A=A2, B=np.ones((3, 1)), C=C2), ValueError,
     r"B must have shape \(2, d_in\).*got \(3, 1\)"),
    (dict(A=A2, B=B2, C=np.ones((3, 4))), ValueError,
     r"C must have shape \(d_out, 2\).*got \(3, 4\)"),
    (dict(A=A2, B=B2, C=C2, D=np.ones((3, 2))), ValueError,
     r"D must have shape \(3, 1\), got \(3, 2\)"),
    (dict(A=A2, B=B2, C=C2, D=np.ones((2, 1))), ValueError,
     r"D must have shape \(3, 1\), got \(2, 1\)"),
    (dict(A=[[np.nan, 0], [0, 1]], B=B2, C=C2), ValueError,
     r"A must contain only finite values; entry \(0, 0\) is nan"),
    (dict(A=A2, B=[[1.0], [np.inf]], C=C2), ValueError,
     r"B must contain only finite values; entry \(1, 0\) is inf"),
    (dict(A=A2, B=B2, C=np.full((3, 2), -np.inf)), ValueError,
     r"C must contain only finite values"),
    (dict(A=A2, B=B2, C=C2, D=[[0.0], [np.nan], [0.0]]), ValueError,
     r"D must contain only finite values; entry \(1, 0\)"),
    (dict(A=A2 + 1j, B=B2, C=C2), TypeError, r"A must be real"),
    (dict(A=[["a", "b"], ["c", "d"]], B=B2, C=C2), TypeError, r"A must be numeric"),
    (dict(A=None, B=B2, C=C2), TypeError, r"A must be an array, got None"),
    (dict(A=A2, B=B2, C=C2, dt=-1.0), ValueError,
     r"dt must be None or 0 \(continuous time\), True \(discrete, unspecified step\) or a "
     r"finite sample time > 0, got -1"),
    (dict(A=A2, B=B2, C=C2, dt=np.nan), ValueError, r"dt must be None or 0 .* got nan"),
    (dict(A=A2, B=B2, C=C2, dt=np.inf), ValueError, r"dt must be None or 0 .* got inf"),
    (dict(A=A2, B=B2, C=C2, dt="1"), TypeError, r"dt must be None or 0 .* got str '1'"),
])
def test_lds_construction_errors(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        LDS(**kwargs)


def test_lds_is_immutable():
    sys = LDS(A2, B2, C2, dt=1.0)
    with pytest.raises(ValueError, match="read-only"):
        sys.A[0, 0] = 1.0
    A = A2.copy()
    sys = LDS(A, B2, C2, dt=1.0)
    assert A.flags.writeable  # the caller's array is not frozen
    with pytest.raises(AttributeError):
        sys.dt = 2.0


def test_from_statespace_type_error():
    with pytest.raises(TypeError, match=r"sys must be a control.StateSpace, got list"):
        LDS.from_statespace([1, 2])


def test_impulse_response_errors(dsys):
    with pytest.raises(ValueError, match=r"impulse_response needs a discrete system"):
        LDS(A2, B2, C2).impulse_response(3)
    with pytest.raises(ValueError, match=r"length must be an integer >= 1, got 0"):
        dsys.impulse_response(0)
    with pytest.raises(TypeError, match=r"length must be an integer"):
        dsys.impulse_response(2.5)


# ---------------------------------------------------------------- simulate
@pytest.mark.parametrize("u,match", [
    (np.ones((5, 2)), r"u must have last axis of size d_in=1, got shape \(5, 2\)"),
    (np.float64(1.0), r"u must have shape \(\.\.\., T, 1\), got \(\)"),
    (np.ones((0, 1)), r"u must contain at least one time step"),
    (np.array([[1.0], [np.nan]]), r"u must contain only finite values; entry \(1, 0\)"),
    (np.array([[1.0], [np.inf]]), r"u must contain only finite values"),
])
def test_simulate_bad_u(dsys, u, match):
    with pytest.raises(ValueError, match=match):
        simulate(dsys, u)


@pytest.mark.parametrize("x0,match", [
    (np.ones(3), r"x0 must have shape \(\.\.\., 2\), got \(3,\)"),
    (np.ones((4, 3)), r"x0 must have shape \(\.\.\., 2\)"),
    (1.0, r"x0 must have shape \(\.\.\., 2\).*got \(\)"),
    (np.ones((4, 2)), r"batch \(leading\) axes do not broadcast: u \(3,\), x0 \(4,\)"),
    (np.array([np.nan, 0.0]), r"x0 must contain only finite values"),
])
def test_simulate_bad_x0(dsys, x0, match):
    with pytest.raises(ValueError, match=match):
        simulate(dsys, np.ones((3, 5, 1)), x0)


def test_simulate_rejects_continuous_system_and_non_lds():
    with pytest.raises(ValueError, match=r"system must be discrete-time"):
        simulate(LDS(A2, B2, C2), np.ones((5, 1)))
    with pytest.raises(TypeError, match=r"system must be an LDS, a control.StateSpace or a "
                                        r"control.TransferFunction, got "
                                        r"tuple"):
        simulate((A2, B2, C2, np.zeros((3, 1)), 1.0), np.ones((5, 1)))


@pytest.mark.parametrize("kwargs,exc,match", [
    (dict(output="lagged"), ValueError,
     r"output must be one of \['eq1-literal', 'lengen', 's4', 'standard'\]"),
    (dict(method="fft"), ValueError, r"method must be one of"),
    (dict(max_state_norm=0.0), ValueError, r"max_state_norm must lie in \(0, inf\)"),
    (dict(max_state_norm=-1.0), ValueError, r"max_state_norm must lie in \(0, inf\)"),
    (dict(max_state_norm=np.inf), ValueError, r"max_state_norm must be finite"),
    (dict(process_noise=np.ones((5, 3))), ValueError,
     r"process_noise must have shape \(\.\.\., 5, 2\).*got shape \(5, 3\)"),
    (dict(process_noise=np.ones((4, 2))), ValueError, r"process_noise must have shape"),
    (dict(obs_noise=np.ones((5, 1))), ValueError,
     r"obs_noise must have shape \(\.\.\., 5, 3\)"),
    (dict(obs_noise=np.ones((2, 5, 3))), ValueError,
     r"do not broadcast: u \(3,\), obs_noise \(2,\)"),
    (dict(process_noise=-0.1), ValueError, r"process_noise must lie in \[0, inf\)"),
    (dict(obs_noise=np.nan), ValueError, r"obs_noise must be finite"),
    (dict(process_noise=np.full((5, 2), np.nan)), ValueError,
     r"process_noise must contain only finite values"),
    (dict(process_noise=0.1, rng="seed"), TypeError, r"rng must be a numpy Generator"),
    (dict(obs_noise=0.1, rng=1.5), TypeError, r"rng must be a numpy Generator"),
])
def test_simulate_bad_options(dsys, kwargs, exc, match):
    with pytest.raises(exc, match=match):
        simulate(dsys, np.ones((3, 5, 1)), **kwargs)


# ---------------------------------------------------------------- simulate_continuous
def test_simulate_continuous_errors(dsys):
    csys = LDS(A2, B2, C2)
    u = np.ones((4, 1))
    with pytest.raises(ValueError, match=r"must be continuous-time \(dt None or 0\), got "
                                         r"dt=1.0"):
        simulate_continuous(dsys, np.arange(4.0), u)
    with pytest.raises(TypeError, match=r"system must be an LDS, a control.StateSpace or a "
                                        r"control.TransferFunction, got "
                                        r"list"):
        simulate_continuous([A2, B2, C2], np.arange(4.0), u)
    for t in ([0.0, 1.0, 1.0, 2.0], [0.0, 2.0, 1.0, 3.0]):
        with pytest.raises(ValueError, match=r"t must be strictly increasing; t\[2\]=1"):
            simulate_continuous(csys, t, u)
    with pytest.raises(ValueError, match=r"t must be 1-dimensional"):
        simulate_continuous(csys, np.ones((4, 1)), u)
    with pytest.raises(ValueError, match=r"t must contain at least one time point"):
        simulate_continuous(csys, [], np.ones((0, 1)))
    with pytest.raises(ValueError, match=r"t must contain only finite values"):
        simulate_continuous(csys, [0.0, 1.0, np.nan, 3.0], u)
    with pytest.raises(ValueError, match=r"u must have shape \(\.\.\., 4, 1\).*got \(5, 1\)"):
        simulate_continuous(csys, np.arange(4.0), np.ones((5, 1)))
    with pytest.raises(ValueError, match=r"u must have shape \(\.\.\., 4, 1\).*got \(4, 2\)"):
        simulate_continuous(csys, np.arange(4.0), np.ones((4, 2)))
    with pytest.raises(ValueError, match=r"x0 must have shape \(\.\.\., 2\), got \(3,\)"):
        simulate_continuous(csys, np.arange(4.0), u, np.ones(3))
    with pytest.raises(ValueError, match=r"max_state_norm must lie in \(0, inf\)"):
        simulate_continuous(csys, np.arange(4.0), u, max_state_norm=0.0)
    for t in (np.arange(4.0), [0.0, 0.5, 2.0, 3.0]):  # both grid paths
        with pytest.raises(ValueError, match=r"batch \(leading\) axes do not broadcast"):
            simulate_continuous(csys, t, np.ones((3, 4, 1)), np.ones((2, 2)))


# ---------------------------------------------------------------- regions, random
@pytest.mark.parametrize("T,exc,match", [
    (0, ValueError, r"T must be an integer >= 2, got 0"),
    (-5, ValueError, r"T must be an integer >= 2, got -5"),
    (1, ValueError, r"T must be an integer >= 2, got 1"),
    (100.0, TypeError, r"T must be an integer >= 2, got float"),
    (True, TypeError, r"T must be an integer"),
])
def test_regions_bad_T(T, exc, match):
    with pytest.raises(exc, match=match):
        eigenvalue_regions(T, 0.5)


@pytest.mark.parametrize("q,exc,match", [
    (-0.01, ValueError, r"q must lie in \[0, 1\], got -0.01"),
    (1.5, ValueError, r"q must lie in \[0, 1\], got 1.5"),
    (np.nan, ValueError, r"q must be finite"),
    ("7/8", TypeError, r"q must be a real number"),
])
def test_regions_bad_q(q, exc, match):
    with pytest.raises(exc, match=match):
        eigenvalue_regions(2**10, q)


def test_regions_empty_region_b():
    # T = 2, q = 0: 1 - log(2)/8 = 0.913 > 1 - 1/(2·2^{5/4}) = 0.790 -> empty
    with pytest.raises(ValueError, match=r"Region B is empty for T=2, q=0"):
        eigenvalue_regions(2, 0.0)


@pytest.mark.parametrize("call,exc,match", [
    (lambda: random_lds(0, [(0, 1)]), ValueError, r"n must be an integer >= 1, got 0"),
    (lambda: random_lds(2.0, [(0, 1)]), TypeError, r"n must be an integer"),
    (lambda: random_lds(3, [(0, 1)], d_in=0), ValueError, r"d_in must be an integer >= 1"),
    (lambda: random_lds(3, [(0, 1)], d_out=-1), ValueError, r"d_out must be an integer >= 1"),
    (lambda: random_lds(3, []), ValueError, r"eigenvalue_intervals must contain at least one"),
    (lambda: random_lds(3, [(0.5, 0.1)]), ValueError,
     r"eigenvalue_intervals\[0\] must be a finite \(low, high\) pair with low <= high"),
    (lambda: random_lds(3, [(0, 1), (0.2, np.inf)]), ValueError, r"eigenvalue_intervals\[1\]"),
    (lambda: random_lds(3, [(0, 1, 2)]), ValueError, r"eigenvalue_intervals\[0\]"),
    (lambda: random_lds(3, 0.5), TypeError, r"eigenvalue_intervals must be a sequence"),
    (lambda: random_lds(3, [(0, 1)], rng="x"), TypeError, r"rng must be"),
    (lambda: draw_eigenvalues(4, [(0, 1), (1, 2)], weights=[1.0]), ValueError,
     r"weights must be 2 non-negative numbers"),
    (lambda: draw_eigenvalues(4, [(0, 1), (1, 2)], weights=[1.0, -1.0]), ValueError,
     r"weights must be 2 non-negative numbers"),
    (lambda: random_stable_lds(3, radius=1.0), ValueError, r"radius must lie in \[0, 1\)"),
])
def test_random_factory_errors(call, exc, match):
    with pytest.raises(exc, match=match):
        call()
