"""Event-triggered sampler: the paper's example, exact vs grid monitoring, independent
computations (an ODE solver with event location, a brute-force fine-grid loop), rules,
guarantees, and bad inputs."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.integrate
import scipy.linalg

from lds_toolkit.control import (
    PAPER_PRINTED,
    DynamicRule,
    ETCSystem,
    LyapunovRule,
    PeriodicRule,
    RelativeErrorRule,
    TriggerRule,
    paper_system,
    printed_matrices_check,
    simulate_etc,
)
from lds_toolkit.control._flow import Flow, loop_generator
from lds_toolkit.systems import LDS, simulate_continuous

X0 = np.array([1.0, 0.0])


@pytest.fixture(scope="module")
def sys():
    return paper_system()


# --------------------------------------------------------------------- the paper's matrices
def test_printed_matrices_fail_eq8_and_tabuada_system_satisfies_it():
    chk = printed_matrices_check()
    # as printed, T is 2x1 and B T (B is 2x1) is undefined
    assert np.shape(PAPER_PRINTED["T"]) == (2, 1) and not chk["printed_BT_defined"]
    # read as the row [1, -4]: A + B T = [[0, 1], [3, -7]], unstable, residual far from 0
    assert chk["printed_closed_loop"] == [[0.0, 1.0], [3.0, -7.0]]
    pc = chk["printed_check"]
    np.testing.assert_array_equal(pc["residual"], [[2.0, 2.5], [2.5, -12.0]])
    assert pc["residual_norm"] == pytest.approx(np.sqrt(4 + 2 * 6.25 + 144))
    assert not pc["closed_loop_stable"] and not chk["printed_satisfies_eq8"]
    lam = max(z[0] for z in pc["closed_loop_eigenvalues"])
    assert lam == pytest.approx((-7 + np.sqrt(61)) / 2)                # ≈ 0.405 > 0
    assert pc["P_positive_definite"] and pc["M_positive_definite"]     # P, M themselves fine
    # the consistent system (Tabuada 2007): A's second row is [-2, 3]; eq. 8 holds exactly
    uc = chk["used_check"]
    assert chk["used_satisfies_eq8"] and uc["residual_norm"] == 0.0
    assert chk["used"]["A"] == [[0.0, 1.0], [-2.0, 3.0]] and chk["used"]["K"] == [[1.0, -4.0]]
    np.testing.assert_array_equal(chk["used"]["P"], PAPER_PRINTED["P"])
    np.testing.assert_array_equal(chk["used"]["M"], PAPER_PRINTED["M"])
    # and the toolkit refuses to build an ETC loop from the printed matrices
    with pytest.raises(ValueError, match="column vector"):
        ETCSystem(PAPER_PRINTED["A"], PAPER_PRINTED["B"], PAPER_PRINTED["T"])
    with pytest.raises(ValueError, match="Hurwitz"):
        ETCSystem(PAPER_PRINTED["A"], PAPER_PRINTED["B"], np.transpose(PAPER_PRINTED["T"]))


def test_etc_system_derives_missing_certificate(sys):
    only_p = ETCSystem(sys.A, sys.B, sys.K, P=sys.P)
    np.testing.assert_allclose(only_p.M, sys.M, atol=1e-15)
    only_m = ETCSystem(sys.A, sys.B, sys.K, M=sys.M)
    np.testing.assert_allclose(only_m.P, sys.P, atol=1e-12)
    neither = ETCSystem(sys.A, sys.B, sys.K)
    np.testing.assert_allclose(neither.M, np.eye(2))
    assert sys.decay_rate == pytest.approx(np.linalg.eigvalsh(sys.M)[0] / 1.25)


# -------------------------------------------------------- independent reference computations
def _ivp_etc(sys, g, x0, horizon, internal=None, eta0=0.0):
    """Event times by DOP853 with event location (no matrix exponentials).

    ``g(x, e, eta)`` is the rule's function; ``internal = (lam, S)`` adds dη/dt = -lam η +
    S(x, e) as an extra ODE state."""
    n = sys.n
    A, BK = sys.A, sys.B @ sys.K
    t, y = 0.0, np.r_[x0, eta0]
    xi = x0.copy()
    events = []
    while True:
        def rhs(_, y, xi=xi):
            x = y[:n]
            deta = 0.0 if internal is None else -internal[0] * y[n] + internal[1](x, xi - x)
            return np.r_[A @ x + BK @ xi, deta]

        def ev(_, y, xi=xi):
            return g(y[:n], xi - y[:n], y[n])
        ev.terminal, ev.direction = True, -1
        sol = scipy.integrate.solve_ivp(rhs, (t, horizon), y, method="DOP853", rtol=1e-12,
                                        atol=1e-14, events=ev)
        if not sol.t_events[0].size:
            return np.array(events)
        t, y = sol.t_events[0][0], sol.y_events[0][0]
        events.append(t)
        xi = y[:n].copy()


def _brute_force(sys, g, x0, horizon, h):
    """Fine-grid loop: exact ZOH steps of size h, condition checked at every step."""
    n = sys.n
    E = scipy.linalg.expm(np.block([[sys.A, sys.B @ sys.K], [np.zeros((n, 2 * n))]]) * h)
    z = np.r_[x0, x0]
    events = []
    last = 0
    for k in range(1, int(round(horizon / h)) + 1):
        z = E @ z
        x, xi = z[:n], z[n:]
        if g(x, xi - x, (k - last) * h) <= 0:
            events.append(k * h)
            last = k
            z = np.r_[x, x]
    return np.array(events)


def _lyap_g(sys, kappa):
    PBK = sys.P @ sys.B @ sys.K
    return lambda x, e, *_: kappa * x @ sys.M @ x - 2 * x @ PBK @ e


@pytest.mark.parametrize("kappa", [0.3, 0.5, 0.8])
def test_exact_mode_matches_ode_solver_event_location(sys, kappa):
    res = simulate_etc(sys, LyapunovRule(kappa), X0, horizon=10.0, mode="exact")
    ref = _ivp_etc(sys, _lyap_g(sys, kappa), X0, 10.0)
    assert res.n_events == ref.size > 10
    np.testing.assert_allclose(res.event_times, ref, atol=1e-7)
    assert res.min_inter_event == pytest.approx(np.diff(np.r_[0.0, ref]).min(), abs=1e-7)


def test_dynamic_rule_matches_ode_solver_with_eta_as_state(sys):
    rule = DynamicRule(kappa=0.5, theta=2.0, lam=0.8, eta0=0.3)
    PBK = sys.P @ sys.B @ sys.K

    def S(x, e):
        return 0.5 * x @ sys.M @ x - 2 * x @ PBK @ e

    ref = _ivp_etc(sys, lambda x, e, eta: eta + 2.0 * S(x, e), X0, 10.0, internal=(0.8, S),
                   eta0=0.3)
    res = simulate_etc(sys, rule, X0, horizon=10.0, mode="exact")
    assert res.n_events == ref.size > 5
    np.testing.assert_allclose(res.event_times, ref, atol=1e-7)


def test_van_loan_integral_matches_quadrature(sys):
    rng = np.random.default_rng(0)
    W = rng.standard_normal((4, 4))
    W = W + W.T
    Az = loop_generator(sys.A, sys.B, sys.K)
    flow = Flow(Az, (0.7, W))
    for s in (0.003, 0.4, 2.5):
        E, G = flow.propagator(s)
        quad, _ = scipy.integrate.quad_vec(
            lambda r, s=s: np.exp(-0.7 * (s - r)) * scipy.linalg.expm(Az.T * r) @ W
            @ scipy.linalg.expm(Az * r), 0.0, s, epsabs=1e-13, epsrel=1e-12)
        np.testing.assert_allclose(E, scipy.linalg.expm(Az * s), rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(G, quad, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("rule,g", [
    (LyapunovRule(0.5), None),
    (RelativeErrorRule(0.2), lambda x, e, tau: 0.04 * x @ x - e @ e),
])
def test_event_count_and_min_inter_event_against_brute_force(sys, rule, g):
    g = _lyap_g(sys, 0.5) if g is None else g
    h_bf = 2e-4
    bf = _brute_force(sys, g, X0, 6.0, h_bf)
    res = simulate_etc(sys, rule, X0, horizon=6.0, mode="exact")
    assert res.n_events == bf.size > 5
    assert res.min_inter_event == pytest.approx(np.diff(np.r_[0.0, bf]).min(), abs=2 * h_bf)
    # the brute force sees the first crossing at the first grid point after it; later its
    # trajectory differs by its sampling delays, so events drift apart slowly but stay
    # matched one to one
    lag = bf - res.event_times
    assert 0 <= lag[0] < h_bf + 1e-12
    assert np.all(np.abs(lag) < 0.02)


def test_grid_events_lie_within_one_step_after_the_exact_ones(sys):
    rule = LyapunovRule(0.5)
    h = 0.01
    grid = simulate_etc(sys, rule, X0, horizon=10.0, mode="grid", grid_step=h)
    exact = simulate_etc(sys, rule, X0, horizon=10.0, mode="exact")
    # first event: same initial state, so the grid event is the first grid point after it
    assert 0 <= grid.event_times[0] - exact.event_times[0] < h
    # every later event: restart the exact sampler from the grid's state at its previous
    # event; the grid event must again lie within one step after the exact crossing
    for i in range(1, grid.sample_times.size):
        t_prev, x_prev = grid.sample_times[i - 1], grid.sampled_states[i - 1]
        nxt = simulate_etc(sys, rule, x_prev, horizon=grid.sample_times[i] - t_prev + h,
                           mode="exact", output_step=h)
        tau_exact = nxt.event_times[0]
        assert 0 <= (grid.sample_times[i] - t_prev) - tau_exact < h + 1e-12
    assert grid.n_events == exact.n_events == 21
    np.testing.assert_allclose(grid.sample_times / h, np.round(grid.sample_times / h),
                               atol=1e-9)
    assert grid.min_inter_event >= h - 1e-12


def test_exact_events_are_roots_and_the_condition_holds_between_events(sys):
    kappa = 0.5
    res = simulate_etc(sys, LyapunovRule(kappa), X0, horizon=10.0, mode="exact",
                       output_step=1e-3)
    g = _lyap_g(sys, kappa)
    xs = res.sampled_states
    for i in range(1, xs.shape[0]):
        scale = kappa * xs[i] @ sys.M @ xs[i]
        assert abs(g(xs[i], xs[i - 1] - xs[i])) <= 1e-8 * scale      # e(t⁻) before update
    held = res.sampled_states[np.searchsorted(res.sample_times, res.t, side="right") - 1]
    vals = np.array([g(x, xi - x) for x, xi in zip(res.x, held)])
    near = np.min(np.abs(res.t[:, None] - res.sample_times[None, 1:]), axis=1) < 1e-6
    assert np.all(vals[~near] > 0)


@pytest.mark.parametrize("kappa", [0.2, 0.5, 0.9])
def test_lyapunov_rule_guarantees_decrease_and_eq13_bound(sys, kappa):
    res = simulate_etc(sys, LyapunovRule(kappa), X0, horizon=10.0, mode="exact")
    assert np.all(np.diff(res.V) < 0)
    assert res.bound_satisfied
    np.testing.assert_allclose(res.V_bound, res.V[0] * np.exp(-(1 - kappa) * sys.decay_rate
                                                              * res.t))
    assert res.summary()["events"] == res.n_events


def test_trajectory_is_consistent_with_samples_and_an_open_loop_replay(sys):
    res = simulate_etc(sys, LyapunovRule(0.5), X0, horizon=5.0, mode="grid",
                       output_step=0.001)
    on_grid = np.searchsorted(res.t, res.sample_times - 1e-12)
    np.testing.assert_allclose(res.x[on_grid], res.sampled_states, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(res.u[on_grid], res.inputs)           # right-continuous
    np.testing.assert_allclose(res.inputs, res.sampled_states @ sys.K.T)
    # the foundation's exact piecewise-constant simulator, driven by the held inputs
    ref = simulate_continuous(LDS(sys.A, sys.B, np.eye(2)), res.t, res.u, X0).x
    np.testing.assert_allclose(res.x, ref, rtol=0, atol=1e-9)
    np.testing.assert_allclose(res.V, np.einsum("ki,ij,kj->k", res.x, sys.P, res.x))


def test_relative_error_rule_fires_at_sigma(sys):
    sigma = 0.15
    res = simulate_etc(sys, RelativeErrorRule(sigma), X0, horizon=5.0, mode="exact")
    xs = res.sampled_states
    e = np.linalg.norm(xs[:-1] - xs[1:], axis=1)
    np.testing.assert_allclose(e, sigma * np.linalg.norm(xs[1:], axis=1), rtol=1e-8)
    s_star = RelativeErrorRule.sigma_star(sys)
    small = simulate_etc(sys, RelativeErrorRule(0.9 * s_star), X0, horizon=5.0)
    assert small.bound_satisfied
    assert RelativeErrorRule(min(0.99, 3 * s_star)).decay_bound(sys, [0.0], 1.0, None) is None


@pytest.mark.parametrize("mode", ["exact", "grid"])
def test_periodic_rule(sys, mode):
    res = simulate_etc(sys, PeriodicRule(0.1), X0, horizon=10.0, mode=mode)
    assert res.n_events == 100
    np.testing.assert_allclose(res.event_times, 0.1 * np.arange(1, 101), atol=1e-9)
    odd = simulate_etc(sys, PeriodicRule(0.105), X0, horizon=1.0, mode=mode)
    step = 0.11 if mode == "grid" else 0.105          # the grid rounds the period up
    np.testing.assert_allclose(np.diff(odd.sample_times), step, atol=1e-9)


def test_dynamic_rule_properties(sys):
    static = simulate_etc(sys, LyapunovRule(0.5), X0, horizon=10.0)
    dyn = simulate_etc(sys, DynamicRule(0.5, theta=1.0, lam=1.0, eta0=0.0), X0, horizon=10.0)
    assert np.all(dyn.eta >= -1e-12)
    assert dyn.bound_satisfied
    assert dyn.n_events <= static.n_events          # Girard: fewer events than static
    assert dyn.min_inter_event >= static.min_inter_event - 1e-9
    # V + η decreases along the flow (dW/dt = -(1-κ)xᵀMx - λη)
    assert np.all(np.diff(dyn.V + dyn.eta) < 0)
    # θ -> ∞ recovers the static rule
    big = simulate_etc(sys, DynamicRule(0.5, theta=1e9, lam=1.0), X0, horizon=10.0)
    np.testing.assert_allclose(big.event_times, static.event_times, atol=1e-6)


class AbsoluteThreshold(TriggerRule):
    """A user-defined rule: update when |e| >= c (not scale invariant)."""

    name = "absolute"

    def __init__(self, c):
        self.c = c

    def function(self, system, tau, x, e, eta):
        return self.c**2 - np.einsum("ki,ki->k", e, e)


@pytest.mark.parametrize("mode", ["exact", "grid"])
def test_user_defined_rule(sys, mode):
    res = simulate_etc(sys, AbsoluteThreshold(0.05), X0, horizon=6.0, mode=mode)
    bf = _brute_force(sys, lambda x, e, tau: 0.0025 - e @ e, X0, 6.0,
                      2e-4 if mode == "exact" else 0.01)
    assert res.n_events == bf.size > 3
    assert res.rule == {"rule": "absolute"}
    assert repr(AbsoluteThreshold(0.1)) == "AbsoluteThreshold()"


class AlwaysFire(TriggerRule):
    def function(self, system, tau, x, e, eta):
        return np.full(x.shape[0], -1.0)


def test_zeno_and_truncation_are_reported(sys):
    with pytest.warns(RuntimeWarning, match="Zeno"):
        res = simulate_etc(sys, AlwaysFire(), X0, horizon=1.0)
    assert res.zeno and res.n_events == 0 and res.min_inter_event == np.inf
    with pytest.warns(RuntimeWarning, match="max_events=5 reached"):
        res = simulate_etc(sys, RelativeErrorRule(0.01), X0, horizon=10.0, max_events=5)
    assert res.truncated and res.n_events == 5
    assert res.t[-1] == 10.0          # the trajectory continues with the last held input


def test_bad_inputs(sys):
    A, B, K = sys.A, sys.B, sys.K
    with pytest.raises(ValueError, match="A must be square"):
        ETCSystem(np.ones((2, 3)), B, K)
    with pytest.raises(ValueError, match=r"B must have shape \(2, m\)"):
        ETCSystem(A, np.ones((3, 1)), K)
    with pytest.raises(ValueError, match=r"K must have shape \(1, 2\)"):
        ETCSystem(A, B, np.ones((1, 3)))
    with pytest.raises(ValueError, match="P must be symmetric positive definite; it is not "
                                         "symmetric"):
        ETCSystem(A, B, K, P=[[1.0, 0.3], [0.0, 1.0]])
    with pytest.raises(ValueError, match="P must be symmetric positive definite; its smallest"):
        ETCSystem(A, B, K, P=[[1.0, 0.0], [0.0, -1.0]])
    with pytest.raises(ValueError, match=r"P must have shape \(2, 2\)"):
        ETCSystem(A, B, K, P=np.eye(3))
    with pytest.raises(ValueError, match="not a Lyapunov matrix"):
        ETCSystem(A, B, K, P=np.diag([1.0, 100.0]))
    with pytest.raises(ValueError, match="do not satisfy"):
        ETCSystem(A, B, K, P=sys.P, M=np.eye(2))
    with pytest.raises(ValueError, match="M must be symmetric positive definite"):
        ETCSystem(A, B, K, M=-np.eye(2))
    with pytest.raises(ValueError, match="Hurwitz"):
        ETCSystem(A, B, np.zeros((1, 2)))
    for bad in (0.0, 1.0, -0.2, 1.5):
        with pytest.raises(ValueError, match=r"kappa must lie in \(0, 1\)"):
            LyapunovRule(bad)
        with pytest.raises(ValueError, match=r"kappa must lie in \(0, 1\)"):
            DynamicRule(kappa=bad)
        with pytest.raises(ValueError, match=r"sigma must lie in \(0, 1\)"):
            RelativeErrorRule(bad)
    with pytest.raises(TypeError, match="kappa must be a real number"):
        LyapunovRule("0.5")
    with pytest.raises(ValueError, match="period must lie in"):
        PeriodicRule(0.0)
    with pytest.raises(ValueError, match="theta must lie in"):
        DynamicRule(theta=0.0)
    with pytest.raises(ValueError, match="eta0 must lie in"):
        DynamicRule(eta0=-1.0)
    rule = LyapunovRule(0.5)
    with pytest.raises(ValueError, match=r"horizon must lie in \(0, inf\), got -1"):
        simulate_etc(sys, rule, X0, horizon=-1.0)
    with pytest.raises(ValueError, match=r"grid_step must lie in \(0, inf\), got -0.01"):
        simulate_etc(sys, rule, X0, mode="grid", grid_step=-0.01)
    with pytest.raises(ValueError, match="grid_step must be <= horizon"):
        simulate_etc(sys, rule, X0, horizon=1.0, mode="grid", grid_step=2.0)
    with pytest.raises(ValueError, match="bracket_step must lie in"):
        simulate_etc(sys, rule, X0, bracket_step=0.0)
    with pytest.raises(ValueError, match="tol must be smaller than bracket_step"):
        simulate_etc(sys, rule, X0, bracket_step=1e-3, tol=1e-2)
    with pytest.raises(ValueError, match="output_step must lie in"):
        simulate_etc(sys, rule, X0, output_step=-1.0)
    with pytest.raises(ValueError, match=r"x0 must have shape \(2,\)"):
        simulate_etc(sys, rule, [1.0, 0.0, 0.0])
    with pytest.raises(ValueError, match="x0 must be nonzero"):
        simulate_etc(sys, rule, [0.0, 0.0])
    with pytest.raises(ValueError, match="mode must be one of"):
        simulate_etc(sys, rule, X0, mode="adaptive")
    with pytest.raises(TypeError, match="rule must be a TriggerRule"):
        simulate_etc(sys, lambda *a: 0, X0)
    with pytest.raises(TypeError, match="system must be an ETCSystem"):
        simulate_etc((A, B, K), rule, X0)
    with pytest.raises(ValueError, match="check_times must be strictly increasing"):
        simulate_etc(sys, rule, X0, mode="grid", check_times=[0.2, 0.1])
    with pytest.raises(ValueError, match="check_times needs mode='grid'"):
        simulate_etc(sys, rule, X0, mode="exact", check_times=[0.1, 0.2])


@pytest.mark.parametrize("rule", [LyapunovRule(0.5), DynamicRule(0.5, 2.0, 0.8, 0.3)])
def test_check_times_on_the_uniform_grid_reproduce_grid_mode(sys, rule):
    """The arbitrary-instant path (used for jittered grids) against the tabulated one."""
    h = 0.01
    grid = simulate_etc(sys, rule, X0, horizon=10.0, mode="grid", grid_step=h)
    checks = simulate_etc(sys, rule, X0, horizon=10.0, mode="grid", grid_step=h,
                          check_times=np.arange(1, 1001) * h)
    np.testing.assert_allclose(checks.sample_times, grid.sample_times, atol=1e-12)
    np.testing.assert_allclose(checks.x, grid.x, rtol=0, atol=1e-9)   # |x0| = 1


def test_etc_modules_import_one_way_and_etc_reexports_them():
    """The ETC code lives in four modules with imports pointing one way (statistics ->
    simulation -> triggers -> system, function-level imports included); ``control.etc`` and
    ``control`` hand out the very objects defined there."""
    import ast
    import importlib
    from pathlib import Path

    import lds_toolkit.control as control
    from lds_toolkit.control import etc

    order = ["etc_system", "etc_triggers", "etc_simulation", "etc_statistics"]
    root = Path(control.__file__).parent
    for rank, name in enumerate(order):
        tree = ast.parse((root / f"{name}.py").read_text(encoding="utf-8"))
        imported = {node.module for node in ast.walk(tree)
                    if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module}
        imported |= {alias.name.split(".")[-1] for node in ast.walk(tree)
                     if isinstance(node, ast.Import) for alias in node.names
                     if alias.name.startswith("lds_toolkit.control.")}
        upward = imported & {"etc", *order[rank:]}
        assert not upward, f"{name} imports {sorted(upward)}: imports must point down"
    homes = {}
    for name in order:
        module = importlib.import_module(f"lds_toolkit.control.{name}")
        homes.update({k: getattr(module, k) for k in module.__all__})
    assert sorted(homes) == sorted(etc.__all__)
    for k, obj in homes.items():
        assert getattr(etc, k) is obj and getattr(control, k) is obj, k
