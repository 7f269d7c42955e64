"""Lesson 5's checks: independent answers pass, the usual slips get their hint; the slider's
numbers follow the toolkit's learners."""

from __future__ import annotations

import numpy as np
import pytest

import lds_toolkit as lt
from lds_toolkit.teaching import SliderApp, lesson05


def projected_step(M, x, err, eta, r):  # a plain loop over the blocks: an independent route
    out = np.array(M, dtype=float)
    for i in range(out.shape[0]):
        out[i] -= eta * 2.0 * np.outer(err, x[i])
        norm = np.sqrt(np.sum(out[i] ** 2))
        if norm > r:
            out[i] *= r / norm
    return out


def best_in_hindsight(X, base, y):  # normal equations instead of lstsq
    n, k, d_in = X.shape
    D = X.reshape(n, k * d_in)
    W = np.linalg.solve(D.T @ D, D.T @ (y - base))
    return W.reshape(k, d_in, -1).transpose(0, 2, 1)


def test_independent_answers_pass():
    assert lesson05.check_projected_step(projected_step, verbose=False).passed
    assert lesson05.check_best_in_hindsight(best_in_hindsight, verbose=False).passed
    safe = lambda X: 1.0 / max(float(np.sum(x**2)) for x in X)
    assert lesson05.check_safe_step(safe, verbose=False).passed


def test_the_checks_step_is_the_learners_step():
    """Streaming the check's expected step over Algorithm 1's features reproduces fit_predict."""
    _, u, y, r = lesson05.lesson_stream(128, n=6, seed=3)
    learner = lt.SpectralFiltering(horizon=128, k=5, radius=0.5 * r, lr=0.05,
                                   lr_schedule="constant")
    X, base = learner.design(u, y)
    learner.fit_predict(u, y, design=(X, base))
    M = np.zeros((5, 1, 1))
    losses = []
    for t in range(128):
        err = base[t] + np.einsum("ioa,ia->o", M, X[t]) - y[t]
        losses.append(float(err @ err))
        M = lesson05._toolkit_projected_step({"M": M, "x": X[t], "err": err, "eta": 0.05,
                                              "r": 0.5 * r})
    np.testing.assert_allclose(losses, learner.losses_, rtol=1e-9, atol=1e-14)
    np.testing.assert_allclose(M, learner.coef_, rtol=1e-9, atol=1e-14)


def test_slips_get_their_hint():
    no_projection = lambda M, x, err, eta, r: projected_step(M, x, err, eta, np.inf)

    def one_ball(M, x, err, eta, r):
        out = np.asarray(M) - eta * 2.0 * np.asarray(err)[None, :, None] * x[:, None, :]
        return out * min(1.0, r / np.linalg.norm(out))

    assert "projection is missing" in lesson05.check_projected_step(no_projection,
                                                                    verbose=False).message
    assert "each block" in lesson05.check_projected_step(one_ball, verbose=False).message
    no_base = lambda X, base, y: best_in_hindsight(X, 0 * base, y)
    assert "autoregressive part is missing" in lesson05.check_best_in_hindsight(
        no_base, verbose=False).message
    mean = lambda X: 1.0 / np.mean(np.sum(X**2, axis=(1, 2)))
    assert "take the max" in lesson05.check_safe_step(mean, verbose=False).message


def test_safe_step_never_increases_the_error_on_its_sample():
    _, u, y, _ = lesson05.lesson_stream(256, n=6, seed=4)
    X, _ = lt.SpectralFiltering(horizon=256, k=6).design(u, y)
    eta = lesson05.eta_safe(X)
    s = np.sum(X**2, axis=(1, 2))
    factor = np.abs(1 - 2 * eta * s)  # e' = (1 - 2 eta s_t) e on the sample stepped on
    assert factor.max() <= 1 + 1e-12 and np.isclose(factor.max(), 1.0)


@pytest.mark.parametrize("factor", [1.0, 2.0])
def test_slider_regret_is_the_learner_against_the_hindsight_solution(factor):
    app = SliderApp("lesson05.step_size")
    numbers = app.update(factor=factor, radius=1.0)
    _, u, y, r = lesson05.lesson_stream(lesson05.SLIDER_T)
    learner = lt.SpectralFiltering(horizon=lesson05.SLIDER_T, k=lesson05.SLIDER_K, radius=r,
                                   lr_schedule="constant")
    X, base = learner.design(u, y)
    learner.set_params(lr=factor * lesson05.eta_safe(X)).fit_predict(u, y)
    best = lt.BestInHindsight(learner, radius=np.inf)
    best.fit_predict(u, y)
    expected = learner.losses_.sum() - best.losses_.sum()
    assert numbers["regret (projected)"] == pytest.approx(expected, rel=1e-9)


def test_slider_marks_blow_up_where_the_streaming_learner_does():
    """The slider's "blew up at t=" is the first step at which the streaming learner's loss
    exceeds BLOWUP * mean(y^2) (or overflows), found here step by step."""
    factor = 20.0
    numbers = SliderApp("lesson05.step_size").update(factor=factor, radius=1.0)
    _, u, y, r = lesson05.lesson_stream(lesson05.SLIDER_T)
    learner = lt.SpectralFiltering(horizon=lesson05.SLIDER_T, k=lesson05.SLIDER_K,
                                   lr_schedule="constant")
    eta = factor * lesson05.eta_safe(learner.design(u, y)[0])
    learner.set_params(lr=eta, radius=np.inf)
    limit = lesson05.BLOWUP * float(np.mean(y**2))
    first = None
    with np.errstate(over="ignore", invalid="ignore"):
        for t in range(lesson05.SLIDER_T):
            err = np.asarray(learner.predict_one(u[t])) - y[t]
            if not float(err @ err) <= limit:
                first = t
                break
            learner.learn_one(u[t], y[t])
    expected = "no blow-up" if first is None else f"at t={first}"
    got = numbers["regret (free)"]
    assert (expected in got) if first is not None else isinstance(got, float)
