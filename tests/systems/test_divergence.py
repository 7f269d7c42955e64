"""Divergence reporting: SimulationDivergedError.step is the first t with ||x_{t+1}||_2 above
the bound, computed independently by a numpy loop (``_ref.first_divergence_step``)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.linalg

from lds_toolkit.systems import LDS, SimulationDivergedError, simulate, simulate_continuous
from lds_toolkit.systems.simulate import DEFAULT_MAX_STATE_NORM

from ._ref import first_divergence_step


def _unstable(kind, rng, n=4):
    if kind == "symmetric":  # real orthogonal modal path
        Q, _ = np.linalg.qr(rng.standard_normal((n, n)))
        A = (Q * np.array([1.3, 0.9, -1.1, 0.2])) @ Q.T
        A = 0.5 * (A + A.T)
    elif kind == "nonsymmetric":  # complex modal path (conservative bound -> dense confirm)
        G = rng.standard_normal((n, n))
        A = G * (1.25 / np.max(np.abs(np.linalg.eigvals(G))))
    else:  # defective: dense path
        A = np.diag([1.2] * n) + np.diag(np.ones(n - 1), 1)
    return LDS(A, rng.standard_normal((n, 2)), rng.standard_normal((1, n)), dt=1.0)


def _expected_step(sys, u, x0, bound, w=None):
    step = first_divergence_step(np.array(sys.A), np.array(sys.B), u, x0, bound, w)
    assert step is not None, "test premise: the reference diverges"
    return step


@pytest.mark.parametrize("output", ["standard", "lengen", "eq1-literal", "s4"])
@pytest.mark.parametrize("method", ["auto", "dense"])
@pytest.mark.parametrize("kind", ["symmetric", "nonsymmetric", "defective"])
@pytest.mark.parametrize("bound", [1e3, 1e8, None])
def test_step_matches_numpy_loop(kind, method, output, bound):
    rng = np.random.default_rng(11)
    sys = _unstable(kind, rng)
    T = 2000
    u = 0.1 * rng.standard_normal((T, 2))
    x0 = rng.standard_normal(4)
    kw = {} if bound is None else {"max_state_norm": bound}
    expected = _expected_step(sys, u, x0, DEFAULT_MAX_STATE_NORM if bound is None else bound)
    with pytest.raises(SimulationDivergedError) as info:
        simulate(sys, u, x0, output=output, method=method, **kw)
    err = info.value
    assert err.step == expected
    assert err.batch_index == ()
    assert err.bound == (DEFAULT_MAX_STATE_NORM if bound is None else bound)
    assert f"t={expected}" in str(err)
    # the same horizon cut just before the divergent update runs through and stays finite
    res = simulate(sys, u[:expected], x0, output=output, method=method, **kw)
    assert np.isfinite(res.y).all() and np.linalg.norm(res.final_state) <= err.bound
    if method == "auto":  # premise: the auto path is modal except for the defective A
        path = simulate(sys, u[:5], x0, method=method).method
        assert path == ("dense" if kind == "defective" else "modal")


def test_batch_index_reported():
    rng = np.random.default_rng(12)
    sys = _unstable("symmetric", rng)
    u = np.zeros((2, 3, 300, 2))
    x0 = np.zeros((2, 3, 4))
    x0[1, 2] = rng.standard_normal(4)  # only this element leaves the origin
    with pytest.raises(SimulationDivergedError) as info:
        simulate(sys, u, x0, max_state_norm=1e6)
    assert info.value.batch_index == (1, 2)
    assert info.value.step == _expected_step(sys, u[1, 2], x0[1, 2], 1e6)


@pytest.mark.parametrize("kind,method", [("symmetric", "auto"), ("symmetric", "dense"),
                                         ("nonsymmetric", "auto"), ("defective", "auto")])
def test_batch_reports_earliest_step_on_every_path(kind, method):
    """Three batch elements diverge at different steps; the error names the earliest one
    (not the first in C order), identically on the modal and dense paths."""
    rng = np.random.default_rng(15)
    sys = _unstable(kind, rng)
    base = rng.standard_normal(4)
    x0 = np.stack([1e-6 * base, 1e-2 * base, base, base])  # element 2 and 3 tie, earliest
    u = np.zeros((4, 400, 2))
    steps = [_expected_step(sys, u[b], x0[b], 1e6) for b in range(4)]
    assert steps[2] == steps[3] < steps[1] < steps[0]  # premise
    with pytest.raises(SimulationDivergedError) as info:
        simulate(sys, u, x0, max_state_norm=1e6, method=method)
    assert (info.value.batch_index, info.value.step) == ((2,), steps[2])
    # with the earliest element removed, the next one is reported
    with pytest.raises(SimulationDivergedError) as info:
        simulate(sys, u[:2], x0[:2], max_state_norm=1e6, method=method)
    assert (info.value.batch_index, info.value.step) == ((1,), steps[1])


def test_with_process_noise():
    rng = np.random.default_rng(13)
    sys = _unstable("nonsymmetric", rng)
    u = rng.standard_normal((500, 2))
    w = rng.standard_normal((500, 4))
    with pytest.raises(SimulationDivergedError) as info:
        simulate(sys, u, process_noise=w, max_state_norm=1e5)
    assert info.value.step == _expected_step(sys, u, np.zeros(4), 1e5, w)


def test_bound_is_configurable_and_default_catches_long_horizons():
    sys = LDS([[2.0]], [[0.0]], [[1.0]], dt=1.0)
    u = np.zeros((400, 1))
    # ||x_{t+1}|| = 2^{t+1}: exceeds 1e3 first at t = 9 (2^10 = 1024), 1e100 at t = 332
    for bound, step in [(1e3, 9), (1e6, 19), (None, 332)]:
        kw = {} if bound is None else {"max_state_norm": bound}
        with pytest.raises(SimulationDivergedError) as info:
            simulate(sys, u, [1.0], **kw)
        assert info.value.step == step
    simulate(sys, u[:300], [1.0])  # 2^300 < 1e100: no error


@pytest.mark.parametrize("method", ["dense", "modal"])
def test_no_silent_overflow_with_huge_bound(method):
    """Regression: with a bound above ~1.3e154, ||x||^2 overflowed and inf passed the
    comparison, so states of 1e260 and then inf were returned silently."""
    sys = LDS([[1e100]], [[1.0]], [[1.0]], dt=1.0)
    with pytest.raises(SimulationDivergedError) as info:
        simulate(sys, np.zeros((4, 1)), [1e160], max_state_norm=1e200, method=method)
    assert info.value.step == 0
    # a state of 1e170 (||x||^2 overflows) is still below the bound 1e200: no error
    ok = LDS(np.eye(2), np.zeros((2, 1)), np.ones((1, 2)), dt=1.0)
    res = simulate(ok, np.zeros((3, 1)), [1e170, 1e170], max_state_norm=1e200, method=method)
    np.testing.assert_array_equal(res.x[-1], [1e170, 1e170])


def test_nonfinite_state_is_reported():
    sys = LDS([[1e300, 0.0], [0.0, 0.5]], np.zeros((2, 1)), np.ones((1, 2)), dt=1.0)
    with pytest.raises(SimulationDivergedError) as info:
        simulate(sys, np.zeros((3, 1)), [1e10, 1.0], method="dense")
    assert info.value.step == 0


def _continuous_first_step(A, B, t, u, x0, bound):
    x = np.array(x0, dtype=float)
    for k in range(len(t) - 1):
        h = t[k + 1] - t[k]
        E = scipy.linalg.expm(np.block([[A * h, B * h], [np.zeros((B.shape[1], A.shape[0])),
                                                        np.zeros((B.shape[1],) * 2)]]))
        x = E[:len(x), :len(x)] @ x + E[:len(x), len(x):] @ u[k]
        if not math.hypot(*x) <= bound:
            return k
    return None


@pytest.mark.parametrize("grid", ["uniform", "nonuniform"])
def test_continuous_batch_reports_earliest_step(grid):
    rng = np.random.default_rng(16)
    A = np.array([[0.5, 2.0, 0.0], [-2.0, 0.5, 0.0], [0.0, 1.0, -1.0]])
    sys = LDS(A, np.zeros((3, 1)), np.ones((1, 3)))
    K = 120
    t = np.linspace(0, 40, K) if grid == "uniform" else np.sort(rng.uniform(0, 40, K))
    u = np.zeros((3, K, 1))
    base = rng.standard_normal(3)
    x0 = np.stack([1e-3 * base, base, 1e-1 * base])
    steps = [_continuous_first_step(A, np.zeros((3, 1)), t, u[b], x0[b], 1e4)
             for b in range(3)]
    assert steps[1] < steps[2] < steps[0]  # premise
    with pytest.raises(SimulationDivergedError) as info:
        simulate_continuous(sys, t, u, x0, max_state_norm=1e4)
    assert (info.value.batch_index, info.value.step) == ((1,), steps[1])


@pytest.mark.parametrize("grid", ["uniform", "nonuniform"])
@pytest.mark.parametrize("symmetric", [True, False])
def test_continuous_divergence_step(grid, symmetric):
    rng = np.random.default_rng(14)
    n = 3
    if symmetric:
        A = np.diag([0.8, -1.0, 0.1])
    else:
        A = np.array([[0.5, 2.0, 0.0], [-2.0, 0.5, 0.0], [0.0, 1.0, -1.0]])
    sys = LDS(A, rng.standard_normal((n, 1)), np.ones((1, n)))
    K = 200
    t = np.linspace(0, 40, K) if grid == "uniform" else np.sort(rng.uniform(0, 40, K))
    u = rng.standard_normal((K, 1))
    x0 = rng.standard_normal(n)
    expected = _continuous_first_step(A, np.array(sys.B), t, u, x0, 1e4)
    assert expected is not None
    with pytest.raises(SimulationDivergedError) as info:
        simulate_continuous(sys, t, u, x0, max_state_norm=1e4)
    assert info.value.step == expected
