"""The peer suite (tests/interop/peer) really runs the toolkit: with the substitution
installed, python-control's constructors give LDS objects, and a broken toolkit function
makes python-control's own tests fail."""

from __future__ import annotations

import importlib

import control
import numpy as np
import pytest

import lds_toolkit
from lds_toolkit.systems import LDS

from .peer import _substitute

pytest.importorskip("control.tests.discrete_test")
MODULES = [importlib.import_module(f"control.tests.{m}")
           for m in ("mateqn_test", "timeresp_test", "discrete_test", "statesp_test")]


@pytest.fixture
def substituted(monkeypatch):
    _substitute.install(monkeypatch, MODULES)
    _substitute.TALLY.clear()
    return monkeypatch


def test_constructors_give_toolkit_systems(substituted):
    sys = control.ss([[-1.0]], [[1.0]], [[1.0]], [[0.0]])
    assert type(sys) is LDS and isinstance(sys, control.StateSpace)
    assert type(MODULES[2].StateSpace([[0.5]], [[1.0]], [[1.0]], 0, 0.1)) is LDS
    static = control.ss([], [], [], [[1.0]])          # refused by the toolkit: stays theirs
    assert type(static) is _substitute.REAL["StateSpace"]
    assert _substitute.TALLY[("ours", "system")] == 2
    assert _substitute.TALLY[("theirs", "system")] == 1


def test_a_wrong_discretisation_fails_their_test(substituted):
    tsys = MODULES[2].TestDiscrete
    real = lds_toolkit.discretize

    def wrong(system, dt, method="zoh", **kw):
        sysd = real(system, dt, method, **kw)
        return control.StateSpace(1.001 * sysd.A, sysd.B, sysd.C, sysd.D, sysd.dt)
    substituted.setattr(lds_toolkit, "discretize", wrong)
    with pytest.raises(AssertionError):
        tsys().test_sample_ss(None)


def test_a_wrong_simulation_fails_their_test(substituted):
    real = lds_toolkit.simulate

    class Shifted:
        def __init__(self, res):
            self.y, self.x = res.y + 1e-3, res.x

    substituted.setattr(lds_toolkit, "simulate", lambda *a, **k: Shifted(real(*a, **k)))
    sys = control.ss([[0.5]], [[1.0]], [[1.0]], [[0.0]], 1.0)
    resp = control.forced_response(sys, np.arange(5.0), np.ones(5))
    np.testing.assert_allclose(resp.y[0], [1e-3, 1.001, 1.501, 1.751, 1.876])
    assert _substitute.TALLY[("ours", "forced_response")] == 1


def test_a_wrong_lyapunov_solver_fails_their_test(substituted):
    substituted.setattr(lds_toolkit, "continuous_lyapunov",
                        lambda A, Q, convention: np.zeros_like(A))
    substituted.setattr(MODULES[0], "lyap", _substitute._lyapunov("lyap"))  # sees the wrong one
    with pytest.raises(AssertionError):
        MODULES[0].TestMatrixEquations().test_lyap()
