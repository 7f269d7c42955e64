"""The LDS type: python-control round trip, spectrum and stability queries on known systems,
impulse response."""

from __future__ import annotations

import control
import numpy as np
import pytest
import scipy.signal

from lds_toolkit.systems import LDS, random_stable_lds


def _random(seed, dt):
    rng = np.random.default_rng(seed)
    return LDS(rng.standard_normal((4, 4)), rng.standard_normal((4, 2)),
               rng.standard_normal((3, 4)), rng.standard_normal((3, 2)), dt=dt)


@pytest.mark.parametrize("dt", [None, 1.0, 0.05])
def test_statespace_round_trip(dt):
    sys = _random(0, dt)
    ss = sys.to_statespace()
    assert isinstance(ss, control.StateSpace)
    assert ss.dt == (0 if dt is None else dt)
    for name in "ABCD":
        np.testing.assert_array_equal(getattr(ss, name), getattr(sys, name))
    back = LDS.from_statespace(ss)
    assert back.equals(sys) and back.dt == (0 if dt is None else dt)
    # and from python-control's side
    ss2 = control.ss([[0.5, 1], [0, 0.3]], [[1], [0]], [[1, 1]], [[0.2]], dt if dt else 0)
    again = LDS.from_statespace(ss2).to_statespace()
    for name in "ABCD":
        np.testing.assert_array_equal(getattr(again, name), getattr(ss2, name))
    assert again.dt == ss2.dt
    # the two agree on the transfer function at a test point
    s = 0.3 + 0.7j
    np.testing.assert_allclose(ss(s), sys.C @ np.linalg.solve(s * np.eye(4) - sys.A, sys.B)
                               + sys.D, rtol=1e-12)


def test_statespace_unspecified_timebase():
    """python-control's dt=True (discrete, unspecified) stays True (one step of 1 where a
    number is needed); see test_interop.py for the other timebases."""
    ss = control.ss([[0.5]], [[1.0]], [[1.0]], [[0.0]], True)
    sys = LDS.from_statespace(ss)
    assert sys.is_discrete and sys.dt is True and sys.sample_time == 1.0
    assert LDS([[0.5]], [[1.0]], [[1.0]], dt=True).dt is True


def test_sizes_defaults_and_repr():
    sys = LDS(np.eye(3), np.ones((3, 2)), np.ones((4, 3)))
    assert (sys.n_states, sys.n_inputs, sys.n_outputs) == (3, 2, 4)
    assert sys.is_continuous and not sys.is_discrete
    np.testing.assert_array_equal(sys.D, np.zeros((4, 2)))
    assert repr(sys) == "LDS(n=3, d_in=2, d_out=4, continuous)"
    assert "discrete, dt=0.5" in repr(sys.with_matrices(dt=0.5))
    # scalars are 1x1 matrices; ints become float64
    s = LDS(2, 3, 4, 5, dt=1)
    assert s.A.shape == (1, 1) and s.A.dtype == np.float64 and s.D[0, 0] == 5.0
    # with_matrices validates like the constructor
    with pytest.raises(ValueError, match=r"B must have shape \(3, d_in\)"):
        sys.with_matrices(B=np.ones((2, 2)))


# ---------------------------------------------------------------- stability
@pytest.mark.parametrize("A,dt,stable,marginal", [
    (np.diag([0.5, -0.99]), 1.0, True, True),
    (np.diag([1.0, 0.2]), 1.0, False, True),  # eigenvalue on the unit circle
    ([[0.0, -1.0], [1.0, 0.0]], 1.0, False, True),  # rotation by 90°, |λ| = 1
    (1.01 * np.array([[np.cos(0.3), -np.sin(0.3)], [np.sin(0.3), np.cos(0.3)]]), 1.0,
     False, False),
    ([[0.5, 100.0], [0.0, 0.5]], 1.0, True, True),  # non-normal, transient growth, stable
    ([[-1.0, 2.0], [0.0, -0.1]], None, True, True),
    ([[0.0, 1.0], [-1.0, 0.0]], None, False, True),  # undamped oscillator
    ([[0.1, 0.0], [0.0, -3.0]], None, False, False),
    (np.diag([-1.0, 1.5]), 1.0, False, False),  # |λ| = 1.5 (discrete); continuous: unstable
])
def test_stability_on_known_systems(A, dt, stable, marginal):
    A = np.asarray(A, dtype=float)
    sys = LDS(A, np.ones((2, 1)), np.ones((1, 2)), dt=dt)
    assert sys.is_stable() is stable
    assert sys.is_marginally_stable() is marginal
    # python-control's poles agree with ours
    np.testing.assert_allclose(np.sort_complex(sys.eigenvalues()),
                               np.sort_complex(sys.to_statespace().poles()), atol=1e-12)


def test_stability_tolerance_and_radii():
    sys = LDS(np.diag([0.999, 0.5]), np.ones((2, 1)), np.ones((1, 2)), dt=1.0)
    assert sys.spectral_radius() == pytest.approx(0.999)
    assert sys.is_stable() and not sys.is_stable(tol=0.01)
    csys = LDS(np.diag([-0.001, -2.0]), np.ones((2, 1)), np.ones((1, 2)))
    assert csys.spectral_abscissa() == pytest.approx(-0.001)
    assert csys.is_stable() and not csys.is_stable(tol=0.01)
    assert LDS([[1.0 + 1e-13]], [[1.0]], [[1.0]], dt=1).is_marginally_stable()
    assert not LDS([[1.0 + 1e-9]], [[1.0]], [[1.0]], dt=1).is_marginally_stable()


def test_eigenvalue_ordering():
    A = np.diag([0.1, -0.9, 0.5])
    np.testing.assert_array_equal(LDS(A, np.ones((3, 1)), np.ones((1, 3)), dt=1).eigenvalues(),
                                  [-0.9, 0.5, 0.1])  # decreasing modulus
    np.testing.assert_array_equal(LDS(A, np.ones((3, 1)), np.ones((1, 3))).eigenvalues(),
                                  [0.5, 0.1, -0.9])  # decreasing real part
    sys = random_stable_lds(6, rng=0)
    lam = sys.eigenvalues()
    assert lam.dtype == complex and np.all(np.diff(np.abs(lam)) <= 1e-15)


def test_impulse_response_matches_dlsim_and_closed_form():
    sys = _random(1, 1.0)
    sys = sys.with_matrices(A=0.3 * np.array(sys.A))
    L = 12
    h = sys.impulse_response(L)
    assert h.shape == (L, 3, 2)
    for j in range(2):
        u = np.zeros((L, 2))
        u[0, j] = 1.0
        _, y, _ = scipy.signal.dlsim((sys.A, sys.B, sys.C, sys.D, 1.0), u)
        np.testing.assert_allclose(h[:, :, j], y, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(h[5], sys.C @ np.linalg.matrix_power(sys.A, 4) @ sys.B,
                               rtol=1e-12)
    np.testing.assert_array_equal(h[0], sys.D)
