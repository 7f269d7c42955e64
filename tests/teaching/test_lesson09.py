"""Lesson 9 (Kalman beside spectral filtering): the hidden cases of its answer key grade the
solutions and not a mistake (the key's mistakes and alternatives: test_answer_keys.py), the
interpretation question's answer measured, and the slider's shortcut (Algorithm 1's
predictions are linear in y) against fresh runs."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

import lds_toolkit as lt
from lds_toolkit.teaching import SliderApp, lesson09

INSTRUCTOR = Path(__file__).resolve().parents[2] / "docs" / "lessons" / "instructor"


def _load(name):
    spec = importlib.util.spec_from_file_location(name, INSTRUCTOR / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(name, module)
    spec.loader.exec_module(module)
    return module


KEY = _load("lds_key09")


def test_hidden_cases_grade_the_solutions_and_not_a_mistake():
    grading = _load("lds_grading")
    scores = grading.score(lesson09, KEY, KEY.SOLUTIONS)
    assert scores == {n: sum(p for p, _ in cases) for n, cases in KEY.HIDDEN.items()}
    wrong = dict(KEY.SOLUTIONS, predictor_gain=KEY.MISTAKES["predictor_gain"][0][1],
                 catch_up_time=KEY.MISTAKES["catch_up_time"][0][1])
    scores = grading.score(lesson09, KEY, wrong)
    assert scores["predictor_gain"] == 0 and scores["kalman_predictions"] == 2.0


def test_a_stub_and_an_endless_answer_say_not_yet():
    assert lesson09.check_predictor_gain(lambda A, C, Q, R: None, verbose=False).status == "todo"

    def endless(losses, best_losses, tol):
        while True:
            pass

    res = lesson09.check_catch_up_time(endless, time_limit=0.2, verbose=False)
    assert res.status == "wrong" and "longer than" in res.message


def test_the_interpretation_answer_measured():
    """Measurement noise only: the Kalman predictor loses σ_v², the best predictor that starts
    from y_{t-1} (it knows the model: y_{t-1} + C (s_t - s_{t-1})) twice that."""
    sv = 0.5
    system, u, y = lesson09.noisy_stream(20_000, 0.0, sv)
    clean = lt.simulate(system, u, output="lengen", return_states=False).y
    kalman = lt.KalmanPredictor(system, 0.0, sv**2)
    kalman.fit_predict(u, y)
    best_ar = np.vstack([[[0.0]], y[:-1]]) + np.diff(clean, axis=0, prepend=0.0)
    assert kalman.losses_.mean() / sv**2 == pytest.approx(1.0, abs=0.05)
    assert np.mean((best_ar - y) ** 2) / sv**2 == pytest.approx(2.0, abs=0.1)
    assert lesson09.check_interpretation("b", verbose=False).passed


def test_slider_shortcut_equals_fresh_runs():
    """The slider combines runs on the parts of the stream; a fresh Algorithm 1 and a fresh
    Kalman predictor on the combined stream give the same regret."""
    sw, sv = 0.4, 0.2
    numbers = SliderApp("lesson09.regret").update(sigma_w=sw, sigma_v=sv, horizon=1000)
    system, u, y = lesson09.noisy_stream(lesson09.SLIDER_T, sw, sv)
    sf = np.sum((lesson09.spectral_run(u, y) - y) ** 2, axis=1)
    kalman = lt.KalmanPredictor(system, sw**2, sv**2)
    kalman.fit_predict(u, y)
    avg = lesson09.average_regret(sf, kalman.losses_)
    assert numbers["R_t/t at t (Alg. 1)"] == pytest.approx(avg[999], rel=1e-8)
    assert numbers["trace(S)"] == pytest.approx(
        lt.stationary_kalman(system, sw**2, sv**2).expected_loss)
