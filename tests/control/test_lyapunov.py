"""Lyapunov solvers: convention, agreement with python-control and an independent Kronecker
solve, properties (hypothesis), refusal of unstable A, certificate checks, level sets."""

from __future__ import annotations

import control
import numpy as np
import pytest
import scipy.linalg
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from lds_toolkit.control import (
    continuous_lyapunov,
    discrete_lyapunov,
    level_set,
    lyapunov_values,
    paper_system,
    verify,
)


def _stable_continuous(rng, n, margin=0.1):
    A = rng.standard_normal((n, n))
    shift = np.max(np.linalg.eigvals(A).real) + margin + rng.uniform(0, 1)
    return A - shift * np.eye(n)


def _stable_discrete(rng, n):
    A = rng.standard_normal((n, n))
    return A * rng.uniform(0.1, 0.95) / np.max(np.abs(np.linalg.eigvals(A)))


def _spd(rng, n):
    L = rng.standard_normal((n, n))
    return L @ L.T + 0.1 * np.eye(n)


def _kron_continuous(A, M):
    """Independent route: (I ⊗ Aᵀ + Aᵀ ⊗ I) vec P = -vec M (column-major vec)."""
    n = A.shape[0]
    I = np.eye(n)
    L = np.kron(I, A.T) + np.kron(A.T, I)
    return np.linalg.solve(L, -M.reshape(-1, order="F")).reshape(n, n, order="F")


def _kron_discrete(A, M):
    """(I - Aᵀ ⊗ Aᵀ) vec P = vec M."""
    n = A.shape[0]
    L = np.eye(n * n) - np.kron(A.T, A.T)
    return np.linalg.solve(L, M.reshape(-1, order="F")).reshape(n, n, order="F")


@pytest.mark.parametrize("seed", range(12))
def test_continuous_matches_python_control_and_kronecker(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 9))
    A, M = _stable_continuous(rng, n), _spd(rng, n)
    P = continuous_lyapunov(A, M)
    # python-control's lyap(A, Q) solves A X + X Aᵀ + Q = 0: ours is lyap(A.T, M)
    ref = control.lyap(A.T, M)
    scale = np.abs(ref).max()
    assert np.abs(P - ref).max() <= 1e-10 * scale
    assert np.abs(P - _kron_continuous(A, M)).max() <= 1e-9 * scale
    assert np.abs(A.T @ P + P @ A + M).max() <= 1e-10 * (np.abs(A).max() * scale + 1)


@pytest.mark.parametrize("seed", range(12))
def test_discrete_matches_python_control_and_kronecker(seed):
    rng = np.random.default_rng(100 + seed)
    n = int(rng.integers(1, 9))
    A, M = _stable_discrete(rng, n), _spd(rng, n)
    P = discrete_lyapunov(A, M)
    ref = control.dlyap(A.T, M)           # dlyap(A, Q): A X Aᵀ - X + Q = 0
    scale = np.abs(ref).max()
    assert np.abs(P - ref).max() <= 1e-10 * scale
    assert np.abs(P - _kron_discrete(A, M)).max() <= 1e-9 * scale
    assert np.abs(A.T @ P @ A - P + M).max() <= 1e-10 * scale


def test_convention_is_transpose_of_scipy_and_python_control():
    """A non-normal A distinguishes AᵀP + PA from AP + PAᵀ."""
    A = np.array([[-1.0, 5.0], [0.0, -2.0]])
    M = np.eye(2)
    P = continuous_lyapunov(A, M)
    np.testing.assert_allclose(A.T @ P + P @ A, -M, atol=1e-12)
    wrong = scipy.linalg.solve_continuous_lyapunov(A, -M)   # solves A X + X Aᵀ = -M
    assert np.abs(A.T @ wrong + wrong @ A + M).max() > 1.0
    Pd = discrete_lyapunov(A / 3, M)
    np.testing.assert_allclose((A / 3).T @ Pd @ (A / 3) - Pd, -M, atol=1e-12)
    assert np.abs(Pd - scipy.linalg.solve_discrete_lyapunov(A / 3, M)).max() > 0.1


def _matrix(n):
    return arrays(np.float64, (n, n), elements=st.floats(-3, 3, allow_nan=False))


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 6).flatmap(lambda n: st.tuples(_matrix(n), _matrix(n))),
       st.floats(0.05, 2.0))
def test_property_continuous_residual_and_positive_definite(mats, margin):
    A, L = mats
    n = A.shape[0]
    A = A - (np.max(np.linalg.eigvals(A).real) + margin) * np.eye(n)
    M = L @ L.T + 0.1 * np.eye(n)
    P = continuous_lyapunov(A, M)
    np.testing.assert_array_equal(P, P.T)
    scale = np.abs(A).max() * np.abs(P).max() + np.abs(M).max()
    assert np.abs(A.T @ P + P @ A + M).max() <= 1e-9 * scale
    assert np.linalg.eigvalsh(P)[0] > 0
    # P = ∫ e^{Aᵀs} M e^{As} ds >= M / (2 ||A||): a lower bound from the integral form
    assert np.linalg.eigvalsh(P)[0] >= 0.999 * np.linalg.eigvalsh(M)[0] / (
        2 * np.linalg.norm(A, 2))


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 6).flatmap(lambda n: st.tuples(_matrix(n), _matrix(n))),
       st.floats(0.0, 0.97))
def test_property_discrete_residual_and_positive_definite(mats, rho):
    A, L = mats
    n = A.shape[0]
    r = np.max(np.abs(np.linalg.eigvals(A)))
    # rescaling a nearly nilpotent A by rho / r blows its entries up to ~1e38; such P are
    # singular in floating point, which the solver rightly reports
    assume(r > 1e-2)
    A = A * (rho / r)
    M = L @ L.T + 0.1 * np.eye(n)
    P = discrete_lyapunov(A, M)
    np.testing.assert_array_equal(P, P.T)
    assert np.abs(A.T @ P @ A - P + M).max() <= 1e-9 * np.abs(P).max()
    assert np.linalg.eigvalsh(P)[0] >= 0.999 * np.linalg.eigvalsh(M)[0]   # P = M + AᵀPA


def test_unstable_inputs_raise_where_scipy_returns_indefinite():
    A = np.array([[0.0, 1.0], [-2.0, 3.0]])          # the paper's plant: eigenvalues 1, 2
    M = np.eye(2)
    X = scipy.linalg.solve_continuous_lyapunov(A.T, -M)
    assert np.linalg.eigvalsh(0.5 * (X + X.T))[0] < 0      # silently indefinite
    with pytest.raises(ValueError, match="A must be Hurwitz.*eigenvalue 2"):
        continuous_lyapunov(A, M)
    with pytest.raises(ValueError, match="Hurwitz"):          # marginal: on the axis
        continuous_lyapunov([[0.0, 1.0], [-1.0, 0.0]], M)
    with pytest.raises(ValueError, match="Schur stable.*1.5"):
        discrete_lyapunov([[1.5, 0.0], [0.0, 0.5]], M)
    with pytest.raises(ValueError, match="Schur"):
        discrete_lyapunov([[0.0, 1.0], [-1.0, 0.0]], M)      # |λ| = 1


def test_bad_shapes_and_asymmetric_M():
    A = -np.eye(2)
    with pytest.raises(ValueError, match="A must be square"):
        continuous_lyapunov(np.ones((2, 3)), np.eye(2))
    with pytest.raises(ValueError, match=r"M must have shape \(2, 2\) to match A"):
        continuous_lyapunov(A, np.eye(3))
    # a non-symmetric M is solved, not refused (the solution is unique for a Schur A):
    # vec(AᵀPA) = (Aᵀ ⊗ Aᵀ) vec(P) column-major, solved here by the Kronecker route
    Ad, M = np.array([[0.5, 0.2], [0.0, -0.3]]), np.array([[1.0, 2.0], [0.0, 1.0]])
    P = discrete_lyapunov(Ad, M)
    K = np.kron(Ad.T, Ad.T) - np.eye(4)
    np.testing.assert_allclose(P, np.linalg.solve(K, -M.ravel(order="F")).reshape(2, 2,
                                                                                order="F"),
                               rtol=1e-12)
    assert not np.allclose(P, P.T)
    with pytest.raises(ValueError, match="finite"):
        continuous_lyapunov(A, [[np.nan, 0], [0, 1]])


def test_verify_paper_system_and_decay_rate():
    sys = paper_system()
    chk = verify(sys.closed_loop, sys.P, sys.M)
    assert chk.satisfied and chk.residual_norm == 0.0
    assert chk.P_positive_definite and chk.M_positive_definite and chk.stable
    lam_M = np.linalg.eigvalsh(sys.M)
    assert chk.decay_rate == pytest.approx(lam_M[0] / 1.25)        # λ_max(P) = 5/4
    # the rate is a real guarantee: V(x(t)) <= V(x0) e^{-rate t} along the flow
    rng = np.random.default_rng(0)
    t = np.linspace(0, 8, 161)
    E = np.stack([scipy.linalg.expm(sys.closed_loop * s) for s in t])
    for _ in range(20):
        x0 = rng.standard_normal(2)
        X = E @ x0
        V = lyapunov_values(sys.P, X)
        assert np.all(V <= V[0] * np.exp(-chk.decay_rate * t) * (1 + 1e-12))
        assert np.all(np.diff(V) < 0)


def test_verify_reports_failures_without_raising():
    sys = paper_system()
    bad = verify(sys.closed_loop, sys.P + 0.1 * np.eye(2), sys.M)
    assert not bad.satisfied and bad.relative_residual > 1e-3
    d = bad.as_dict()
    assert d["closed_loop_stable"] and not d["satisfied"]
    indefinite = verify(-np.eye(2), np.diag([1.0, -1.0]), np.eye(2))
    assert not indefinite.P_positive_definite and not indefinite.satisfied
    asym = verify(-np.eye(2), [[1.0, 0.5], [0.0, 1.0]], np.eye(2))
    assert not asym.P_symmetric and not asym.P_positive_definite
    dchk = verify(0.5 * np.eye(2), discrete_lyapunov(0.5 * np.eye(2), np.eye(2)), np.eye(2),
                  discrete=True)
    assert dchk.satisfied and dchk.decay_rate == pytest.approx(0.75)
    with pytest.raises(ValueError, match="P must have shape"):
        verify(-np.eye(2), np.eye(3), np.eye(2))


def test_level_set_and_values():
    P = np.array([[1.0, 0.25], [0.25, 1.0]])
    pts = level_set(P, 0.7, n_points=100)
    assert pts.shape == (100, 2)
    np.testing.assert_allclose(lyapunov_values(P, pts), 0.7, rtol=1e-12)
    np.testing.assert_allclose(pts[0], pts[-1], atol=1e-15)
    x = np.random.default_rng(1).standard_normal((4, 3, 2))
    np.testing.assert_allclose(lyapunov_values(P, x), np.einsum("abi,ij,abj->ab", x, P, x))
    with pytest.raises(ValueError, match="P must be symmetric positive definite; its smallest"):
        level_set([[1.0, 0.0], [0.0, -1.0]], 1.0)
    with pytest.raises(ValueError, match="not symmetric"):
        lyapunov_values([[1.0, 0.3], [0.0, 1.0]], [1.0, 0.0])
    with pytest.raises(ValueError, match="level must lie in"):
        level_set(P, -1.0)
    with pytest.raises(ValueError, match="2-D ellipses"):
        level_set(np.eye(3), 1.0)
