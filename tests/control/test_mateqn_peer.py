"""python-control's own Lyapunov tests (``control/tests/mateqn_test.py``, shipped in the
wheel) run against our solvers.

Their ``lyap(A, Q)`` solves ``A X + X Aᵀ + Q = 0`` and ``dlyap(A, Q)`` solves
``A X Aᵀ - X + Q = 0``; ours are the transposed equations, so the adapters pass ``A.T`` — or,
with ``convention="control"``, pass ``A`` as it is (the peer suite runs both ways).
Sylvester and generalized (E) variants are not part of our API; the adapters refuse them.
Their ``test_raise`` is ported below with our exception types (ValueError for shapes;
python-control uses its own ControlDimension/ControlArgument classes) and our acceptance of a
non-symmetric Q, which python-control refuses.
"""

from __future__ import annotations

import numpy as np
import pytest

from lds_toolkit.control import continuous_lyapunov, discrete_lyapunov

mateqn_test = pytest.importorskip("control.tests.mateqn_test")


def _adapter(ours, convention):
    def solve(A, Q, C=None, E=None, method=None):
        if C is not None or E is not None:
            raise NotImplementedError("Sylvester/generalized equations are not supported")
        A = np.atleast_2d(np.asarray(A, dtype=float))
        if convention == "toolkit":
            return ours(A.T, Q)
        return ours(A, Q, convention=convention)
    return solve


@pytest.fixture(params=["toolkit", "control"])
def peer(monkeypatch, request):
    monkeypatch.setattr(mateqn_test, "lyap", _adapter(continuous_lyapunov, request.param))
    monkeypatch.setattr(mateqn_test, "dlyap", _adapter(discrete_lyapunov, request.param))
    return mateqn_test.TestMatrixEquations()


def test_python_control_test_lyap(peer):
    peer.test_lyap()


def test_python_control_test_dlyap(peer):
    peer.test_dlyap()


def test_adapter_really_calls_ours(peer, monkeypatch):
    """A broken solver must make the peer test fail (the test can fail)."""
    monkeypatch.setattr(mateqn_test, "lyap", lambda A, Q, *a, **k: continuous_lyapunov(
        np.asarray(A, dtype=float), Q))        # forgot the transpose
    with pytest.raises(AssertionError):
        peer.test_lyap()


def test_ported_raise_cases():
    # shapes and symmetry from mateqn_test.test_raise (their A there is unstable, so a
    # stable A is used here: ours also refuses unstable A, theirs does not)
    A = np.array([[-1.0, 0.0], [-1.0, -1.0]])
    Q = np.array([[2.0, 1.0], [1.0, 2.0]])
    Afq = np.array([[1.0, 0.0, 0.0], [-1.0, -1.0, 0.0]])
    Qfq = np.array([[2.0, 1.0, 0.0], [1.0, 2.0, 0.0]])
    Qfs = np.array([[2.0, 1.0], [-1.0, 2.0]])
    for solve, A_ok in ((continuous_lyapunov, A), (discrete_lyapunov, 0.5 * A)):
        with pytest.raises(ValueError, match="A must be square"):
            solve(Afq, Q)
        with pytest.raises(ValueError, match="M must be square"):
            solve(A_ok, Qfq)
        X = solve(A_ok, Qfs)            # python-control refuses a non-symmetric Q; ours
        assert not np.allclose(X, X.T)  # solves it (the solution is unique for a stable A)
        with pytest.raises(TypeError):
            solve(A_ok, Q, np.eye(2))                      # no Sylvester variant
    with pytest.raises(ValueError, match="Hurwitz"):
        continuous_lyapunov(np.array([[1.0, 0.0], [-1.0, -1.0]]), Q)
