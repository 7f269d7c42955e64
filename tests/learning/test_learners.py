"""Algorithms 1 and 2 and the baselines: batch == plain numpy loop == streaming."""

import warnings

import numpy as np
import pytest

from lds_toolkit.learning import FilterPrecisionWarning, spectral_filters
from lds_toolkit.learning.learners import (
    LastValue,
    LDSOracle,
    LearnerDivergedError,
    SpectralFiltering,
    SpectralFilteringAR2,
)
from lds_toolkit.systems import LDS, random_lds, simulate

pytestmark = pytest.mark.filterwarnings("ignore::lds_toolkit.learning.FilterPrecisionWarning")


def _filters(T, k, kind):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FilterPrecisionWarning)
        return spectral_filters(T, k, kind)


def reference_ogd(u, y, *, algorithm, T, k, L, r, lr, schedule):
    """Plain per-step numpy implementation written from the paper's formulas."""
    n, d_in = u.shape
    d_out = y.shape[1]
    if algorithm == 1:
        sigma, phi = _filters(T, k, "H")
        psi = [sigma[i] ** 0.25 * phi[:, i] for i in range(k)]
    else:
        sigma, phi = _filters(T - 2, k - 2, "N")
        psi = [sigma[i] ** 0.25 * phi[:, i] for i in range(k - 2)]
    M = [np.zeros((d_out, d_in)) for _ in range(k)]
    U = lambda s: u[s] if s >= 0 else np.zeros(d_in)
    Y = lambda s: y[s] if s >= 0 else np.zeros(d_out)
    preds = np.zeros((n, d_out))
    for t in range(n):
        if algorithm == 1:
            # eq. 4: yhat_t = y_{t-1} + sum_i M_i u_{(t-1):(t-L)} sigma_i^{1/4} phi_i
            xs = [sum(psi[i][j] * U(t - 1 - j) for j in range(L)) for i in range(k)]
            base = Y(t - 1)
        else:
            # Algorithm 2: 2y_{t-1} - y_{t-2} + M_1 u_{t-1} + M_2 u_{t-2} + filters on u_{t-3..t-L}
            xs = [U(t - 1), U(t - 2)]
            xs += [sum(psi[i][j] * U(t - 3 - j) for j in range(L - 2)) for i in range(k - 2)]
            base = 2 * Y(t - 1) - Y(t - 2)
        pred = base + sum(M[i] @ xs[i] for i in range(k))
        preds[t] = pred
        eta = lr if schedule == "constant" else lr / np.sqrt(t + 1)
        if schedule == "normalized":  # / (K max_{s<t} ||u_s||^2), K = sum_i ||filter i||_1^2
            ones = [1.0, 1.0] if algorithm == 2 else []
            K = sum(v**2 for v in ones + [np.abs(p[: L - 2 * (algorithm == 2)]).sum()
                                          for p in psi])
            peak = max((u[s] @ u[s] for s in range(t)), default=0.0)
            eta = eta / (K * peak) if peak > 0 else 0.0
        for i in range(k):
            G = 2.0 * np.outer(pred - y[t], xs[i])  # gradient of ||yhat - y||^2 wrt M_i
            Mi = M[i] - eta * G
            nrm = np.linalg.norm(Mi)
            M[i] = Mi if nrm <= r else Mi * (r / nrm)
    return preds, np.stack(M)


def _data(n, d_in, d_out, seed=0, n_states=8):
    sys_ = random_lds(n_states, [(0.5, 0.99)], d_in=d_in, d_out=d_out, rng=seed)
    u = np.random.default_rng(seed + 1).standard_normal((n, d_in))
    return sys_, u, simulate(sys_, u, output="lengen").y


CASES = [
    # algorithm, T, k, L, d_in, d_out, r, lr, schedule
    (1, 120, 6, 120, 1, 1, np.inf, 0.05, "inv_sqrt"),
    (1, 120, 5, 17, 2, 3, 0.3, 0.05, "constant"),
    (2, 120, 6, 120, 1, 1, np.inf, 0.05, "inv_sqrt"),
    (2, 120, 7, 9, 3, 2, 0.2, 0.02, "constant"),
    (2, 100, 3, 3, 2, 2, 1.0, 0.05, "inv_sqrt"),
    (1, 120, 5, 17, 2, 3, np.inf, 0.5, "normalized"),
    (2, 100, 6, 30, 3, 1, 1.0, 0.8, "normalized"),
]


@pytest.mark.parametrize("algorithm, T, k, L, d_in, d_out, r, lr, schedule", CASES)
def test_batch_equals_plain_numpy_reference(algorithm, T, k, L, d_in, d_out, r, lr, schedule):
    _, u, y = _data(T, d_in, d_out, seed=algorithm + k)
    cls = SpectralFiltering if algorithm == 1 else SpectralFilteringAR2
    learner = cls(horizon=T, k=k, context=L, radius=r, lr=lr, lr_schedule=schedule)
    pred = learner.fit_predict(u, y)
    ref_pred, ref_M = reference_ogd(u, y, algorithm=algorithm, T=T, k=k, L=L, r=r, lr=lr,
                                    schedule=schedule)
    np.testing.assert_allclose(pred, ref_pred, rtol=0, atol=1e-10 * (1 + np.abs(y).max()))
    np.testing.assert_allclose(learner.coef_, ref_M, rtol=0, atol=1e-10)
    np.testing.assert_allclose(learner.losses_, np.sum((ref_pred - y) ** 2, axis=1), atol=1e-9)
    if np.isfinite(r):  # the projection was active and is respected
        norms = np.linalg.norm(learner.coef_, axis=(1, 2))
        assert np.all(norms <= r * (1 + 1e-12)) and norms.max() > 0.99 * r


def _stream(learner, u, y):
    """river's loop on a cold learner: predict_one(u_t), then learn_one(u_t, y_t)."""
    out = []
    for u_t, y_t in zip(u, y):
        out.append(np.broadcast_to(learner.predict_one(u_t), y_t.shape))  # cold: 0.0
        learner.learn_one(u_t, y_t)
    return np.array(out)


@pytest.mark.parametrize("make", [
    lambda: SpectralFiltering(horizon=512, k=24, context=None, radius=2.0, lr=0.05),
    lambda: SpectralFiltering(horizon=512, k=24, context=23, lr=0.1, lr_schedule="constant"),
    lambda: SpectralFilteringAR2(horizon=512, k=24, context=None, lr=0.05),
    lambda: SpectralFilteringAR2(horizon=512, k=24, context=22, radius=0.5, lr=0.05),
    lambda: LastValue(),
])
def test_streaming_equals_batch(make):
    _, u, y = _data(512, 2, 2, seed=3)
    batch = make()
    pb = batch.fit_predict(u, y)
    ps = _stream(make(), u, y)
    np.testing.assert_allclose(ps, pb, rtol=0, atol=1e-10)
    # the batch call leaves the streaming state at the end: continuing equals one long run
    first = make()
    first.fit_predict(u[:300], y[:300])
    rest = []
    for u_t, y_t in zip(u[300:], y[300:]):
        rest.append(first.predict_one(u_t))
        first.learn_one(u_t, y_t)
    np.testing.assert_allclose(np.array(rest), pb[300:], rtol=0, atol=1e-10)
    np.testing.assert_allclose(first.coef_, batch.coef_, atol=1e-10)


def test_tap_convention_pinned_by_impulse():
    # an impulse at u_{t0} reaches feature i at time t0 + 1 + j with weight sigma_i^{1/4} phi_i[j]
    T, k, L, t0 = 64, 4, 10, 5
    u = np.zeros((T, 1))
    u[t0] = 1.0
    y = np.zeros((T, 1))
    sigma, phi = _filters(T, k, "H")
    X, base = SpectralFiltering(horizon=T, k=k, context=L).design(u, y)
    expect = np.zeros((T, k))
    expect[t0 + 1 : t0 + 1 + L] = phi[:L] * sigma**0.25
    np.testing.assert_allclose(X[:, :, 0], expect, atol=1e-14)
    # Algorithm 2: M_1 sees u_{t-1}, M_2 u_{t-2}, filters of N_{T-2} start at u_{t-3}
    s2, p2 = _filters(T - 2, k - 2, "N")
    X2, _ = SpectralFilteringAR2(horizon=T, k=k, context=L).design(u, y)
    expect2 = np.zeros((T, k))
    expect2[t0 + 1, 0] = 1.0
    expect2[t0 + 2, 1] = 1.0
    expect2[t0 + 3 : t0 + 3 + L - 2, 2:] = p2[: L - 2] * s2**0.25
    np.testing.assert_allclose(X2[:, :, 0], expect2, atol=1e-14)


def test_prediction_of_y_t_does_not_use_u_t():
    _, u, y = _data(200, 1, 1, seed=5)
    learner = SpectralFiltering(horizon=200, k=8, lr=0.05)
    p1 = learner.fit_predict(u, y)
    u2 = u.copy()
    u2[150] += 10.0
    p2 = learner.clone().fit_predict(u2, y)
    np.testing.assert_allclose(p1[:151], p2[:151], rtol=0, atol=1e-12)  # FFT round-off only
    assert np.abs(p1[151] - p2[151]).max() > 1e-3


def test_ar_parts_exact_on_polynomial_outputs():
    # with M = 0 (lr tiny, first step) Algorithm 2 extrapolates linear sequences exactly
    n = 50
    y = (3.0 + 0.5 * np.arange(n))[:, None]
    u = np.zeros((n, 1))
    p2 = SpectralFilteringAR2(horizon=n, k=3, lr=1e-3).fit_predict(u, y)
    np.testing.assert_allclose(p2[2:], y[2:], atol=1e-12)  # 2y_{t-1} - y_{t-2}
    p1 = SpectralFiltering(horizon=n, k=3, lr=1e-3).fit_predict(u, y)
    np.testing.assert_allclose(p1[1:], y[:-1], atol=1e-12)  # y_{t-1}
    np.testing.assert_allclose(LastValue().fit_predict(u, y)[1:], y[:-1])


def test_learning_reduces_loss_on_lds():
    sys_ = random_lds(16, [(0.9, 1.0)], rng=11)
    u = np.random.default_rng(12).standard_normal((4096, 1))
    y = simulate(sys_, u, output="lengen").y
    trivial = LastValue().fit_predict(u, y)
    trivial_loss = np.mean((trivial - y) ** 2)
    for cls in (SpectralFiltering, SpectralFilteringAR2):
        learner = cls(horizon=4096, k=16, lr=0.2)
        learner.fit_predict(u, y)
        first, last = learner.losses_[:256].mean(), learner.losses_[-1024:].mean()
        assert last < 0.3 * first
        assert last < 0.3 * trivial_loss


def test_oracle_matches_simulation_and_streams():
    sys_, u, y = _data(300, 2, 3, seed=7)
    x0 = np.random.default_rng(0).standard_normal(sys_.n_states)
    y0 = simulate(sys_, u, x0=x0, output="lengen").y
    oracle = LDSOracle(sys_, x0=x0)
    pb = oracle.fit_predict(u, y0)
    assert oracle.losses_.max() < 1e-20
    ps = _stream(LDSOracle(sys_, x0=x0), u, y0)
    np.testing.assert_allclose(ps, pb, atol=1e-10)
    # the paper's reading by hand: x_{t+1} = A x_t + B u_t, y_{t+1} = C x_{t+1} + D u_t
    A, B, C, D = sys_.A, sys_.B, sys_.C, sys_.D
    sys_d = LDS(A, B, C, np.ones_like(D), dt=1.0)
    x = x0.copy()
    ys = [C @ x]
    for t in range(5):
        x = A @ x + B @ u[t]
        ys.append(C @ x + sys_d.D @ u[t])
    oracle_d = LDSOracle(sys_d, x0=x0)
    np.testing.assert_allclose(oracle_d.fit_predict(u[:6], y0[:6]), ys, atol=1e-12)
    np.testing.assert_allclose(_stream(LDSOracle(sys_d, x0=x0), u[:6], y0[:6]), ys,
                               atol=1e-12)
    # continuing after fit_predict gives the next prediction of the longer stream
    np.testing.assert_allclose(oracle_d.predict_one(u[6]),
                               LDSOracle(sys_d, x0=x0).fit_predict(u[:7], y0[:7])[6],
                               atol=1e-12)


# ------------------------------------------------------------------ bad input
@pytest.mark.parametrize("make, match, exc", [
    (lambda: SpectralFiltering(horizon=10, k=11), "k must be <= 10", ValueError),
    (lambda: SpectralFiltering(horizon=10, k=0), "k must be an integer >= 1", ValueError),
    (lambda: SpectralFiltering(horizon=10, k=2, context=11),
     r"context must be an integer in \[1, 10\]",
     ValueError),
    (lambda: SpectralFiltering(horizon=10, k=2, context=0),
     r"context must be an integer in \[1, 10\]",
     ValueError),
    (lambda: SpectralFilteringAR2(horizon=10, k=4, context=2),
     r"context must be an integer in \[3, 10\]",
     ValueError),
    (lambda: SpectralFilteringAR2(horizon=10, k=2), "k must be an integer >= 3", ValueError),
    (lambda: SpectralFiltering(horizon=10, k=2, radius=0.0), "radius must be > 0", ValueError),
    (lambda: SpectralFiltering(horizon=10, k=2, radius=-1), "radius must be > 0", ValueError),
    (lambda: SpectralFiltering(horizon=10, k=2, lr=0), "lr must be > 0", ValueError),
    (lambda: SpectralFiltering(horizon=10, k=2, lr_schedule="adam"), "lr_schedule", ValueError),
    (lambda: SpectralFiltering(horizon=10.0, k=2), "horizon must be an integer", TypeError),
])
def test_bad_hyper_parameters(make, match, exc):
    with pytest.raises(exc, match=match):
        make().fit_predict(np.zeros((5, 1)), np.zeros((5, 1)))


def test_bad_data():
    le = SpectralFiltering(horizon=16, k=2)
    with pytest.raises(ValueError, match="same number of time steps"):
        le.fit_predict(np.zeros((5, 1)), np.zeros((6, 1)))
    u = np.zeros((5, 1))
    u[3] = np.nan
    with pytest.raises(ValueError, match=r"u must contain only finite values; entry \(3, 0\)"):
        le.fit_predict(u, np.zeros((5, 1)))
    with pytest.raises(ValueError, match="y must contain only finite"):
        le.fit_predict(np.zeros((5, 1)), np.full((5, 1), np.inf))
    le.reset(2, 1)
    with pytest.raises(ValueError, match=r"x \(u_t\) must have shape \(2,\)"):
        le.predict_one(np.zeros(3))
    assert np.array_equal(le.predict_one(np.zeros(2)), le.predict_one(np.zeros(2)))  # pure
    with pytest.raises(ValueError, match=r"y \(y_t\) must have shape \(1,\)"):
        le.learn_one(np.zeros(2), np.zeros(2))
    with pytest.raises(TypeError, match=r"learn_one\(x, y\) takes the input u_t and the "
                                        r"target y_t .* now learn_one\(u_t, y_t\)"):
        le.learn_one(np.zeros(1))
    with pytest.raises(ValueError, match=r"x \(u_t\) must contain only finite"):
        SpectralFiltering(horizon=16, k=2).predict_one(np.array([np.nan]))
    with pytest.raises(ValueError, match=r"y \(y_t\) has the new key 'b'; the keys of the "
                                         r"first call are \['a'\]"):
        cold = SpectralFiltering(horizon=16, k=2)
        cold.learn_one({"u": 1.0}, {"a": 2.0})
        cold.learn_one({"u": 1.0}, {"a": 2.0, "b": 1.0})
    sys_, u, y = _data(20, 2, 1)
    with pytest.raises(ValueError, match="u must have 2 columns"):
        LDSOracle(sys_).fit_predict(np.zeros((20, 3)), y)
    with pytest.raises(ValueError, match="the system has d_in=2"):
        LDSOracle(sys_).reset(1, 1)


def test_divergence_reported_with_step():
    _, u, y = _data(400, 1, 1)
    with pytest.raises(LearnerDivergedError, match="step t=") as info:
        SpectralFiltering(horizon=400, k=8, lr=1e3, lr_schedule="constant").fit_predict(
            10 * u, y)
    assert 0 < info.value.step < 400


def test_clone_and_params():
    le = SpectralFilteringAR2(horizon=64, k=5, context=9, radius=3.0, lr=0.1)
    c = le.clone(context=None)
    assert c.get_params() == {**le.get_params(), "context": None}
    assert c.context_length == 64
    with pytest.raises(ValueError, match="unknown parameter"):
        le.set_params(alpha=1)


@pytest.mark.parametrize("make", [
    lambda: SpectralFiltering(horizon=64, k=6, context=9, radius=2.0, lr=0.05,
                              lr_schedule="constant"),
    lambda: SpectralFilteringAR2(horizon=64, k=6, context=None, radius=2.0, lr=0.5),
    lambda: LastValue(),
])
def test_fit_predict_on_a_given_design_is_the_plain_fit(make):
    """design= (features built once for a step-size search) gives the numbers, losses and
    streaming state of a plain fit_predict, bit for bit, whatever the step."""
    rng = np.random.default_rng(7)
    u, y = rng.standard_normal((64, 2)), rng.standard_normal((64, 1))
    design = make().design(u, y)
    for lr in (0.01, 0.2):
        params = {"lr": lr} if "lr" in make().get_params() else {}
        plain, reused = make().set_params(**params), make().set_params(**params)
        np.testing.assert_array_equal(plain.fit_predict(u, y),
                                      reused.fit_predict(u, y, design=design))
        np.testing.assert_array_equal(plain.losses_, reused.losses_)
        np.testing.assert_array_equal(plain.coef_, reused.coef_)
        assert plain.predict_one(u[0]) == reused.predict_one(u[0])


def test_best_in_hindsight_on_a_given_design_is_the_plain_solve():
    from lds_toolkit.learning.learners import BestInHindsight

    rng = np.random.default_rng(8)
    u, y = rng.standard_normal((96, 1)), rng.standard_normal((96, 1))
    template = SpectralFiltering(horizon=96, k=5, context=12, radius=0.5)
    plain, reused = BestInHindsight(template), BestInHindsight(template)
    np.testing.assert_array_equal(plain.fit_predict(u, y),
                                  reused.fit_predict(u, y, design=template.design(u, y)))
    assert plain.solution_.value == reused.solution_.value


def test_a_design_of_another_shape_is_refused():
    rng = np.random.default_rng(9)
    u, y = rng.standard_normal((32, 1)), rng.standard_normal((32, 1))
    other = SpectralFiltering(horizon=32, k=4).design(u, y)  # 4 filters, not 5
    with pytest.raises(ValueError, match=r"design's X must be a float64 array of shape "
                                         r"\(32, 5, 1\)"):
        SpectralFiltering(horizon=32, k=5).fit_predict(u, y, design=other)
    with pytest.raises(ValueError, match=r"design's base must be .* shape \(32, 1\)"):
        SpectralFiltering(horizon=32, k=4).fit_predict(u, y, design=(other[0], other[1][:5]))
    with pytest.raises(TypeError, match="the pair"):
        SpectralFiltering(horizon=32, k=4).fit_predict(u, y, design=[other[0]])
    oracle = LDSOracle(LDS([[0.5]], [[1.0]], [[1.0]], dt=1.0))
    with pytest.raises(ValueError, match="LDSOracle has no features"):
        oracle.fit_predict(u, y, design=other)
