"""The discrete Lyapunov certificate with its contraction factor (against the spectral-radius
bound, closed forms and an independent norm computation) and the inter-event statistics of an
event-triggered rule (against closed forms for scalar plants)."""

from __future__ import annotations

import math
import warnings

import control
import numpy as np
import pytest
import scipy.linalg

from lds_toolkit.control import (
    ETCSystem,
    LyapunovRule,
    PeriodicRule,
    RelativeErrorRule,
    TriggerRule,
    discrete_certificate,
    inter_event_statistics,
    paper_system,
    simulate_etc,
)
from lds_toolkit.systems import LDS


def _random_schur(rng, n, radius):
    A = rng.standard_normal((n, n))
    return radius * A / np.max(np.abs(np.linalg.eigvals(A)))


# ------------------------------------------------------------------ discrete certificate
@pytest.mark.parametrize("seed", range(10))
def test_certificate_bounds_and_independent_norm(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 7))
    A = _random_schur(rng, n, rng.uniform(0.3, 0.97))
    X = rng.standard_normal((n, n))
    M = X @ X.T + 0.1 * np.eye(n)
    cert = discrete_certificate(A, M)
    radius = np.max(np.abs(np.linalg.eigvals(A)))
    # the spectral radius bounds every certificate from below; rate 1 bounds it from above
    assert radius - 1e-12 <= cert.rho < 1.0
    assert cert.spectral_radius == pytest.approx(radius, rel=1e-14)
    # ρ = ||L^T A L^{-T}||_2 with P = L L^T, computed without the generalized eigenproblem
    L = np.linalg.cholesky(cert.P)
    G = L.T @ A @ np.linalg.inv(L.T)
    assert cert.rho == pytest.approx(np.linalg.norm(G, 2), rel=1e-9)
    # AᵀPA ⪯ ρ²P, and ρ is the smallest such: ρ²P - AᵀPA is singular
    gap = np.linalg.eigvalsh(cert.rho**2 * cert.P - A.T @ cert.P @ A)
    scale = np.abs(cert.P).max()
    assert gap[0] >= -1e-9 * scale and abs(gap[0]) <= 1e-9 * scale
    # closed form of ρ² from the equation: r² (1 - λ_min(P^{-1/2} M P^{-1/2}))
    lam_min = scipy.linalg.eigh(M, cert.P, eigvals_only=True)[0]
    assert cert.rho**2 == pytest.approx(1.0 - lam_min, rel=1e-9)
    assert cert.check.satisfied and cert.proves_stability


def test_certificate_closed_forms_scalar_and_normal():
    for a, m in ((0.7, 1.0), (-0.2, 3.0)):
        cert = discrete_certificate([[a]], [[m]])
        assert cert.P[0, 0] == pytest.approx(m / (1 - a * a), rel=1e-14)
        assert cert.rho == pytest.approx(abs(a), rel=1e-14)
    rng = np.random.default_rng(3)
    X = rng.standard_normal((5, 5))
    A = 0.9 * (X + X.T) / np.max(np.abs(np.linalg.eigvalsh(X + X.T)))   # symmetric
    cert = discrete_certificate(A)
    np.testing.assert_allclose(cert.P, np.linalg.inv(np.eye(5) - A @ A), rtol=1e-10)
    assert cert.rho == pytest.approx(0.9, rel=1e-12)                     # tight for normal A


def test_certificate_rate_tightens_towards_the_spectral_radius():
    A = np.array([[0.9, 5.0], [0.0, 0.5]])                              # non-normal, ρ = 0.9
    rhos = []
    for r in (1.0, 0.95, 0.92, 0.905, 0.9001):
        cert = discrete_certificate(A, rate=r)
        assert 0.9 <= cert.rho < r
        rhos.append(cert.rho)
    assert rhos == sorted(rhos, reverse=True) and rhos[0] > 0.99 and rhos[-1] < 0.9002
    # the norm bound holds along trajectories
    cert = discrete_certificate(A, rate=0.95)
    rng = np.random.default_rng(0)
    for _ in range(5):
        x0 = rng.standard_normal(2)
        x = x0.copy()
        for k in range(1, 60):
            x = A @ x
            assert np.linalg.norm(x) <= cert.norm_bound(k) * np.linalg.norm(x0) * (1 + 1e-12)


def test_certificate_of_an_unstable_matrix_and_errors():
    A = np.diag([1.5, 0.2])
    cert = discrete_certificate(A, rate=2.0)                  # a growth bound, no stability
    assert 1.5 <= cert.rho < 2.0 and not cert.proves_stability and cert.margin < 0
    with pytest.raises(ValueError, match=r"rate must exceed the spectral radius ρ\(A\) = 1.5 "
                                         r".* got 1; A is not Schur stable"):
        discrete_certificate(A)
    with pytest.raises(ValueError, match=r"rate must exceed .* got 1.2$"):
        discrete_certificate(A, rate=1.2)
    with pytest.raises(ValueError, match="M must be symmetric positive definite"):
        discrete_certificate(np.diag([0.5, 0.2]), -np.eye(2))
    with pytest.raises(ValueError, match=r"A must be a discrete-time system"):
        discrete_certificate(LDS([[-1.0]], [[1.0]], [[1.0]]))
    sys = LDS([[0.5, 0.3], [0.0, -0.4]], np.ones((2, 1)), np.ones((1, 2)), dt=0.1)
    a, b = discrete_certificate(sys), discrete_certificate(sys.to_statespace())
    np.testing.assert_array_equal(a.P, b.P)
    assert a.as_dict()["rho"] == a.rho


# ---------------------------------------------------------------- inter-event statistics
def _scalar_gap(a, b, k, phi_star):
    """x(t_i + s) = x_i φ(s), φ(s) = e^{as}(1 + bk/a) - bk/a; the event is at φ = φ*."""
    c = b * k / a
    return math.log((phi_star + c) / (1 + c)) / a


@pytest.mark.parametrize("a,b,k", [(-3.0, 1.0, 1.0), (1.0, 1.0, -3.0), (-0.5, 2.0, -1.0)])
def test_scalar_plant_relative_rule_closed_form(a, b, k):
    """|e| = σ|x| with e = x_i(1 - φ): every gap ends at φ = 1/(1+σ), independent of x_i."""
    sigma = 0.2
    tau = _scalar_gap(a, b, k, 1 / (1 + sigma))
    horizon = 12 * tau + 0.5 * tau
    stats = inter_event_statistics(LDS([[a]], [[b]], [[1.0]]), RelativeErrorRule(sigma),
                                   [[1.0], [-3.0], [0.01]], K=[[k]], horizon=horizon)
    assert stats.events.tolist() == [12, 12, 12]
    np.testing.assert_allclose(stats.times, tau, rtol=0, atol=1e-9)
    assert stats.min == pytest.approx(tau, abs=1e-9) and stats.std < 1e-9
    assert stats.event_rate == pytest.approx(12 / horizon, rel=1e-12)


def test_scalar_plant_lyapunov_rule_closed_form():
    """With M = 1: p = -1/(2(a+bk)); g = κ x² - 2pbk x e vanishes at φ* = 2pbk/(κ + 2pbk)."""
    a, b, k, kappa = -3.0, 1.0, 1.0, 0.5
    p = -1.0 / (2 * (a + b * k))
    phi_star = 2 * p * b * k / (kappa + 2 * p * b * k)
    tau = _scalar_gap(a, b, k, phi_star)
    assert tau == pytest.approx(math.log(4) / 3, rel=1e-14)   # the numbers worked by hand
    plant = control.ss([[a]], [[b]], [[1.0]], [[0.0]])
    for mode, atol in (("exact", 1e-9), ("grid", 1e-3)):
        stats = inter_event_statistics(plant, LyapunovRule(kappa), 3, K=[[k]], rng=1,
                                       horizon=10.0, mode=mode, grid_step=1e-3)
        assert stats.n_events == 3 * int(10.0 / tau)
        np.testing.assert_allclose(stats.times, tau, rtol=0, atol=atol)


def test_statistics_pool_the_sampler_runs():
    loop = paper_system()
    x0s = np.array([[1.0, 0.0], [0.0, 1.0], [0.3, -0.7]])
    stats = inter_event_statistics(loop, LyapunovRule(0.5), x0s, horizon=6.0)
    runs = [simulate_etc(loop, LyapunovRule(0.5), x, horizon=6.0) for x in x0s]
    np.testing.assert_array_equal(stats.events, [r.n_events for r in runs])
    np.testing.assert_allclose(stats.times, np.concatenate([r.inter_event_times for r in runs]),
                               rtol=0, atol=1e-12)
    np.testing.assert_array_equal(stats.run, np.repeat([0, 1, 2], stats.events))
    pooled = np.concatenate([r.inter_event_times for r in runs])
    assert stats.median == pytest.approx(np.median(pooled), abs=1e-12)
    np.testing.assert_allclose(stats.quantile([0.1, 0.9]), np.quantile(pooled, [0.1, 0.9]),
                               atol=1e-12)
    d = stats.as_dict()
    assert d["events"] == stats.n_events and d["runs"] == 3
    # periodic sampling: every gap is the period
    per = inter_event_statistics(loop, PeriodicRule(0.25), [1.0, 0.0], horizon=2.0)
    np.testing.assert_allclose(per.times, 0.25, atol=1e-9)
    assert per.n_events == 8


def test_random_initial_states_and_lqr_gain():
    rng = np.random.default_rng(2)
    A = rng.standard_normal((4, 4)) - 2 * np.eye(4)
    plant = LDS(A, rng.standard_normal((4, 2)), np.eye(4))
    a = inter_event_statistics(plant, LyapunovRule(0.5), 3, K="lqr", rng=5, horizon=3.0)
    b = inter_event_statistics(plant, LyapunovRule(0.5), 3, K="lqr", rng=5, horizon=3.0)
    np.testing.assert_array_equal(a.x0, b.x0)
    np.testing.assert_allclose(np.linalg.norm(a.x0, axis=1), 1.0, rtol=1e-14)
    manual = ETCSystem.from_lqr(plant, np.eye(4), np.eye(2))
    np.testing.assert_array_equal(a.system.K, manual.K)
    c = inter_event_statistics(manual, LyapunovRule(0.5), a.x0, horizon=3.0)
    np.testing.assert_array_equal(a.times, c.times)


class _AlwaysFire(TriggerRule):
    def function(self, system, tau, x, e, eta):
        return -np.ones(len(tau))


def test_zeno_runs_are_counted_with_one_warning_and_bad_arguments():
    loop = paper_system()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        stats = inter_event_statistics(loop, _AlwaysFire(), [[1.0, 0.0], [0.0, 1.0]])
    assert [str(w.message) for w in caught if "Zeno" in str(w.message)] == [
        "2 run(s) stopped by Zeno behaviour and 0 by max_events, out of 2; their inter-event "
        "times up to the stop are included"]
    assert stats.zeno.tolist() == [True, True] and stats.n_events == 0
    assert stats.min == math.inf and math.isnan(stats.std)
    plant = LDS(loop.A, loop.B, np.eye(2))
    with pytest.raises(TypeError, match=r"K is required when system is a plant.*K='lqr'"):
        inter_event_statistics(plant, LyapunovRule(0.5), [1.0, 0.0])
    with pytest.raises(ValueError, match="K must be omitted when system is an ETCSystem"):
        inter_event_statistics(loop, LyapunovRule(0.5), [1.0, 0.0], K=loop.K)
    with pytest.raises(ValueError, match=r"K must be one of \['lqr'\], got 'LQR'"):
        inter_event_statistics(plant, LyapunovRule(0.5), [1.0, 0.0], K="LQR")
    with pytest.raises(ValueError, match=r"x0 must have shape \(2,\) or \(runs, 2\)"):
        inter_event_statistics(loop, LyapunovRule(0.5), np.ones((2, 3)))
    with pytest.raises(ValueError, match=r"x0 must be an integer >= 1"):
        inter_event_statistics(loop, LyapunovRule(0.5), 0)
    with pytest.raises(ValueError, match=r"system must be continuous-time"):
        inter_event_statistics(LDS(loop.A, loop.B, np.eye(2), dt=0.1), LyapunovRule(0.5),
                               [1.0, 0.0], K=loop.K)
    with pytest.raises(TypeError, match=r"system must be an ETCSystem, an LDS, a "
                                        r"control.StateSpace or a control.TransferFunction, "
                                        r"got tuple"):
        inter_event_statistics((loop.A, loop.B), LyapunovRule(0.5), [1.0, 0.0])


def test_lyapunov_docstring_examples():
    import doctest

    import lds_toolkit.control.lyapunov as module

    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted >= 2 and result.failed == 0
