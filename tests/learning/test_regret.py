"""Best-in-hindsight over K_r (checked against cvxpy and lstsq) and Asymmetric-Regret."""

import numpy as np
import pytest

from lds_toolkit.learning import (
    BestInHindsight,
    LastValue,
    SpectralFiltering,
    SpectralFilteringAR2,
)
from lds_toolkit.learning._hindsight import AugmentedQR, solve_block_ball_lsq
from lds_toolkit.learning.regret import (
    asymmetric_regret,
    cumulative_loss,
    loglog_slope,
    regret_grid,
)
from lds_toolkit.systems import random_lds, simulate

pytestmark = pytest.mark.filterwarnings("ignore::lds_toolkit.learning.FilterPrecisionWarning")


def _solve(D, Z, m, d_in, r, chunks=3):
    qr = AugmentedQR(D.shape[1], Z.shape[1])
    for idx in np.array_split(np.arange(D.shape[0]), chunks):
        qr.update(D[idx], Z[idx])
    return solve_block_ball_lsq(*qr.parts(), m, d_in, r)


def _cvx(D, Z, m, d_in, r):
    cp = pytest.importorskip("cvxpy")
    W = cp.Variable((D.shape[1], Z.shape[1]))
    cons = [cp.norm(W[i * d_in:(i + 1) * d_in, :], "fro") <= r for i in range(m)]
    prob = cp.Problem(cp.Minimize(cp.sum_squares(D @ W - Z)), cons)
    prob.solve(solver="CLARABEL", tol_gap_abs=1e-10, tol_gap_rel=1e-10, tol_feas=1e-10)
    return prob.value, W.value


def _stream(T, n_states=32, interval=(0.9, 1.0), d_in=1, d_out=1, seed=1):
    sys_ = random_lds(n_states, [interval], d_in=d_in, d_out=d_out, rng=seed)
    u = np.random.default_rng(seed + 100).standard_normal((T, d_in))
    return u, simulate(sys_, u, output="lengen").y


@pytest.mark.parametrize("n, m, d_in, d_out, r", [
    (200, 5, 2, 3, 0.3), (300, 8, 1, 1, 0.5), (150, 4, 3, 2, 1.0), (120, 6, 2, 1, 2.0)])
def test_solver_matches_cvxpy_on_random_problems(n, m, d_in, d_out, r):
    rng = np.random.default_rng(n + m)
    scale = np.repeat(np.logspace(0, -3, m), d_in)  # ill-conditioned like filter features
    D = rng.standard_normal((n, m * d_in)) * scale
    Z = rng.standard_normal((n, d_out)) + 3 * D @ rng.standard_normal((m * d_in, d_out))
    sol = _solve(D, Z, m, d_in, r)
    val_cvx, W_cvx = _cvx(D, Z, m, d_in, r)
    assert sol.lam.max() > 0  # the constraint is active in these problems
    # ours is feasible, its value is certified within 1e-10 and agrees with cvxpy
    norms = np.sqrt(np.sum(sol.W.reshape(m, d_in, d_out) ** 2, axis=(1, 2)))
    assert np.all(norms <= r * (1 + 1e-12))
    assert sol.gap <= 1e-10 * sol.value
    assert sol.value == pytest.approx(np.sum((D @ sol.W - Z) ** 2), rel=1e-12)
    assert sol.value <= val_cvx * (1 + 1e-10)
    assert val_cvx <= sol.value * (1 + 1e-7)
    np.testing.assert_allclose(sol.W, W_cvx, atol=1e-4 * max(1.0, r))
    # complementary slackness: lam_i > 0 only on blocks at the boundary
    on = sol.lam > 1e-8 * sol.lam.max()
    np.testing.assert_allclose(norms[on], r, rtol=1e-6)


def test_solver_on_spectral_features_matches_cvxpy():
    T = 1024
    u, y = _stream(T)
    X, base = SpectralFiltering(horizon=T, k=12).design(u, y)
    D, Z = X.reshape(T, -1), y - base
    for r in (0.05, 0.5):
        sol = _solve(D, Z, 12, 1, r)
        val_cvx, W_cvx = _cvx(D, Z, 12, 1, r)
        assert sol.value <= val_cvx * (1 + 1e-10)
        assert val_cvx <= sol.value * (1 + 1e-7)
        np.testing.assert_allclose(sol.W, W_cvx, atol=1e-4)


def test_large_radius_equals_unconstrained_lstsq():
    T = 800
    u, y = _stream(T, d_in=2, d_out=2)
    X, base = SpectralFilteringAR2(horizon=T, k=10).design(u, y)
    D, Z = X.reshape(T, -1), y - base
    W_ls = np.linalg.lstsq(D, Z, rcond=None)[0]
    for r in (1e6, np.inf):
        sol = _solve(D, Z, 10, 2, r)
        assert sol.n_iter == 0 and sol.gap == 0.0 and np.all(sol.lam == 0)
        np.testing.assert_allclose(sol.W, W_ls, rtol=1e-8, atol=1e-10)
        assert sol.value == pytest.approx(np.sum((D @ W_ls - Z) ** 2), rel=1e-9)


def test_best_in_hindsight_learner():
    T = 1024
    u, y = _stream(T)
    alg = SpectralFiltering(horizon=T, k=16, context=64, radius=0.3, lr=0.2)
    alg.fit_predict(u, y)
    best = BestInHindsight(alg)
    pred = best.fit_predict(u, y)
    assert best.losses_.sum() == pytest.approx(best.solution_.value, rel=1e-9)
    np.testing.assert_allclose(best.losses_, np.sum((pred - y) ** 2, axis=1))
    # optimal over K_r: beats the OGD iterate held fixed, and OGD's own (online) loss
    fixed = BestInHindsight(alg)
    fixed._solved = alg.coef_.copy()
    fixed_pred = super(BestInHindsight, fixed).fit_predict(u, y)
    assert best.losses_.sum() <= np.sum((fixed_pred - y) ** 2) + 1e-9
    assert best.losses_.sum() <= alg.losses_.sum()
    # streaming continuation uses the same fixed M
    first = BestInHindsight(alg)
    first.fit_predict(u, y)
    first.reset(1, 1)
    ps = np.array([(first.predict_one(a), first.learn_one(a, b))[0] for a, b in zip(u, y)])
    np.testing.assert_allclose(ps, pred[:, 0], atol=1e-10)  # one output: floats
    # context override: the full-context class is at least as good as context 64 ... on Region A
    # not guaranteed in general, but both solves are certified
    full = BestInHindsight(alg, context=T)
    full.fit_predict(u, y)
    assert full.solution_.gap <= 1e-10 * full.solution_.value


def test_regret_curve_prefixes_equal_direct_solves():
    T = 1024
    u, y = _stream(T, seed=4)
    alg = SpectralFilteringAR2(horizon=T, k=8, context=32, radius=1.0, lr=0.1)
    curve = asymmetric_regret(alg, u, y, t_grid=[100, 333, 700, 1024])
    cum = cumulative_loss(alg.losses_)
    for t, bl, ll in zip(curve.t, curve.benchmark_loss, curve.learner_loss):
        b = BestInHindsight(alg, context=T)
        b.fit_predict(u[:t], y[:t])  # the benchmark class keeps the horizon-T filters
        assert bl == pytest.approx(b.solution_.value, rel=1e-9)
        assert ll == pytest.approx(cum[t - 1])
    assert curve.learner_context == 32 and curve.benchmark_context == T
    np.testing.assert_allclose(curve.regret, curve.learner_loss - curve.benchmark_loss)


def test_regret_is_sublinear_on_an_lds():
    T = 4096
    u, y = _stream(T, n_states=32, seed=9)
    alg = SpectralFiltering(horizon=T, k=16, radius=2.0, lr=0.2)
    curve = asymmetric_regret(alg, u, y, n_points=12)
    per_step = curve.regret / curve.t
    assert per_step[-1] < 0.3 * per_step[len(per_step) // 3]
    # the trivial predictor's "regret" against the spectral class grows linearly
    trivial = LastValue()
    trivial.fit_predict(u, y)
    triv = asymmetric_regret(alg, u, y, losses=trivial.losses_, t_grid=curve.t)
    np.testing.assert_allclose(triv.benchmark_loss, curve.benchmark_loss)
    assert triv.regret[-1] / T > 3 * curve.regret[-1] / T


def test_loglog_slope_recovers_power_law():
    T = np.array([2**8, 2**10, 2**12, 2**14])
    fit = loglog_slope(T, 3.0 * T**0.5)
    assert fit.slope == pytest.approx(0.5, abs=1e-12)
    assert fit.intercept == pytest.approx(np.log(3.0))
    with pytest.raises(ValueError, match="positive"):
        loglog_slope(T, -T)


def test_grid_and_validation():
    g = regret_grid(1000, 10, start=20)
    assert g[0] == 20 and g[-1] == 1000 and np.all(np.diff(g) > 0)
    with pytest.raises(ValueError, match="t_grid must be increasing"):
        asymmetric_regret(SpectralFiltering(horizon=10, k=2), np.zeros((10, 1)),
                          np.zeros((10, 1)), t_grid=[5, 3])
    with pytest.raises(ValueError, match="losses must be 1-dimensional"):
        cumulative_loss(np.zeros((2, 2)))
    with pytest.raises(TypeError, match="template must be"):
        BestInHindsight(template=3).fit_predict(np.zeros((5, 1)), np.zeros((5, 1)))


def test_regret_curve_prints_in_one_short_line():
    u, y = _stream(300)
    curve = asymmetric_regret(SpectralFiltering(horizon=300, k=4, radius=1.0), u, y)
    text = repr(curve)
    assert text.startswith("RegretCurve(") and "\n" not in text and len(text) < 200, text
    assert f"t: {curve.t.shape}" in text and f"final={curve.final:.6g}" in text


def _ill_conditioned_exact_fit(m, d_in, d_out, seed):
    """A problem whose unconstrained fit is exact but far outside the balls, the case where
    the dual method's scaled-back primal point is poor: R11 with singular values 1 .. 1e-12
    and targets reachable by a feasible W plus small components along the 8 weakest
    directions (the dual method alone fails on both parametrisations below)."""
    rng = np.random.default_rng(seed)
    p = m * d_in
    U, _ = np.linalg.qr(rng.standard_normal((2 * p, p)))
    V, _ = np.linalg.qr(rng.standard_normal((p, p)))
    D = U @ np.diag(np.logspace(0, -12, p)) @ V.T
    W_true = rng.standard_normal((p, d_out))
    W_true *= 0.5 / np.sqrt(np.max(np.sum(W_true.reshape(m, d_in, d_out) ** 2, axis=(1, 2))))
    Z = D @ W_true + 1e-8 * U[:, -8:] @ rng.standard_normal((8, d_out))
    return D, Z, W_true


@pytest.mark.parametrize("m, d_in, d_out", [(24, 1, 1), (6, 2, 3)])
def test_solver_certifies_ill_conditioned_exact_fits(m, d_in, d_out):
    D, Z, W_true = _ill_conditioned_exact_fit(m, d_in, d_out, seed=3)
    r = 1.0
    sol = _solve(D, Z, m, d_in, r, chunks=1)
    norms = np.sqrt(np.sum(sol.W.reshape(m, d_in, d_out) ** 2, axis=(1, 2)))
    assert np.all(norms <= r * (1 + 1e-12))
    f0 = float(np.sum(Z**2))
    assert sol.gap <= 1e-10 * (sol.value + 1e-3 * f0)
    # W_true is feasible, so the optimum is at most its loss
    assert sol.value <= np.sum((D @ W_true - Z) ** 2) + sol.gap
    if d_in == d_out == 1:  # box constraints: scipy's bounded-variable least squares is exact
        from scipy.optimize import lsq_linear

        ref = lsq_linear(D, Z[:, 0], bounds=(-r, r), method="bvls", tol=1e-15)
        assert sol.value <= 2 * ref.cost + 1e-13 * f0


def test_regret_scaling_case_that_broke_the_dual_solver():
    """Regression: regret-scaling at paper scale, seed 8, T = 8192, first benchmark solve
    (t = 48 rows, 24 filters, cond(R11) = 1.6e12, unconstrained fit exact): the dual method
    alone ended with certified gap 6.47 against an optimum of ~1e-15."""
    from scipy.optimize import lsq_linear

    from lds_toolkit.experiments import get_experiment
    from lds_toolkit.experiments.catalog import _lengen_common as lc
    from lds_toolkit.experiments.config import build_config
    from lds_toolkit.experiments.runner.sweep import task_rng

    cfg = dict(build_config(get_experiment("regret-scaling"), scale="paper"), T=8192)
    rng = task_rng(0, 8)
    system = lc.draw_system(cfg, "A", rng)
    _, (u, y) = lc.streams(system, 8192, rng)
    radius = float(np.linalg.norm(system.B, 2) * np.linalg.norm(system.C, 2))
    bench = BestInHindsight(SpectralFiltering(horizon=8192, k=24, radius=radius))
    X, base = bench.design(u[:48], y[:48])
    D, Z = X.reshape(48, 24), y[:48] - base
    qr = AugmentedQR(24, 1).update(D, Z)
    R11, R12, c0 = qr.parts()
    assert np.linalg.cond(R11) > 1e11
    sol = solve_block_ball_lsq(R11, R12, c0, 24, 1, radius)
    ref = lsq_linear(D, Z[:, 0], bounds=(-radius, radius), method="bvls", tol=1e-15)
    assert sol.gap <= 1e-10 * (sol.value + 1e-3 * float(np.sum(Z**2)))
    assert sol.value <= 2 * ref.cost + 1e-12


def test_barrier_multipliers_are_polished_until_the_gap_is_certified():
    """Regression: a best-in-hindsight solve from a regret run on a GPU machine's NumPy
    (16 filters, one input and output, cond(R11) = 1.1e11, optimum 3.1e-11 against f(0) = 82;
    stored here as one of the perturbed copies that fail the same way on this machine). The
    dual ascent stalled, and the barrier's central-path multipliers certified only a gap of
    2.3e-11 against the floor 1e-10 * 1e-3 f(0) = 8.2e-12: the solver raised. Polishing those
    multipliers by the dual ascent certifies the gap; the value equals scipy's bounded
    least squares (the balls are boxes for one input and output)."""
    from pathlib import Path

    from scipy.optimize import lsq_linear

    case = np.load(Path(__file__).parent / "data" / "hindsight_cond1e11.npz")
    R11, R12, c0, radius = case["R11"], case["R12"], float(case["c0"]), float(case["radius"])
    assert np.linalg.cond(R11) > 1e11
    sol = solve_block_ball_lsq(R11, R12, c0, 16, 1, radius)
    f0 = float(np.sum(R12**2)) + c0
    assert sol.gap <= 1e-10 * (sol.value + 1e-3 * f0)
    assert np.all(np.abs(sol.W) <= radius * (1 + 1e-12))
    assert sol.value == pytest.approx(float(np.sum((R11 @ sol.W - R12) ** 2)) + c0, rel=1e-9)
    ref = lsq_linear(R11, R12[:, 0], bounds=(-radius, radius), method="bvls", tol=1e-15)
    assert abs(sol.value - (2 * ref.cost + c0)) <= sol.gap + 1e-12 * f0
