"""Lesson 10 (LQR on a trained layer, torch): the hidden cases of its answer key grade the
solutions and not a mistake (the key's mistakes and alternatives: test_answer_keys.py), the
interpretation question's answer measured on a trained layer, the regulator run on the true
system against a simulation, and the slider's numbers against python-control."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch")

import control  # noqa: E402

import lds_toolkit as lt  # noqa: E402
from lds_toolkit.teaching import SliderApp, lesson10  # noqa: E402

INSTRUCTOR = Path(__file__).resolve().parents[2] / "docs" / "lessons" / "instructor"


def _load(name):
    spec = importlib.util.spec_from_file_location(name, INSTRUCTOR / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(name, module)
    spec.loader.exec_module(module)
    return module


KEY = _load("lds_key10")


def test_hidden_cases_grade_the_solutions_and_not_a_mistake():
    grading = _load("lds_grading")
    scores = grading.score(lesson10, KEY, KEY.SOLUTIONS)
    assert scores == {n: sum(p for p, _ in cases) for n, cases in KEY.HIDDEN.items()}
    wrong = dict(KEY.SOLUTIONS, lqr_gain=KEY.MISTAKES["lqr_gain"][1][1])
    assert grading.score(lesson10, KEY, wrong)["lqr_gain"] == 0


def test_free_response_is_the_recursion():
    rng = np.random.default_rng(3)
    A = 0.3 * rng.standard_normal((3, 3))
    x0 = rng.standard_normal(3)
    want = [x0]
    for _ in range(199):
        want.append(A @ want[-1])
    np.testing.assert_allclose(lesson10.free_response(A, x0, steps=200, block=16),
                               np.array(want), rtol=1e-12, atol=1e-300)


def test_interpretation_and_slider_on_a_trained_layer():
    """On a trained layer: as r grows the loop's poles tend to the layer's (choice b), the
    cost to the output energy B' W B; the slider's numbers are python-control's."""
    layer, _, _ = lesson08_small()
    system = layer.to_lds()
    A, B, C = system.A, system.B, system.C
    open_poles = np.sort_complex(np.linalg.eigvals(A))
    far = [np.max(np.abs(np.sort_complex(control.dlqr(A, B, C.T @ C, [[r]])[2]) - open_poles))
           for r in (1.0, 1e3, 1e6)]
    assert far[0] > far[1] > far[2] and far[2] < 1e-3
    W = lt.discrete_lyapunov(A, C.T @ C)
    S = control.dlqr(A, B, C.T @ C, [[1e8]])[1]
    x0 = B[:, 0]
    assert x0 @ S @ x0 == pytest.approx(x0 @ W @ x0, rel=1e-3)
    assert lesson10.check_interpretation("b", verbose=False).passed
    lesson10.use_layer(system)
    try:
        numbers = SliderApp("lesson10.weight").update(r=0.5)
    finally:
        lesson10._HANDED_OVER.clear()
    K, S, E = control.dlqr(A, B, C.T @ C, [[0.5]])
    assert numbers["spectral radius"] == pytest.approx(max(abs(E)))
    assert numbers["cost x0ᵀ S x0"] == pytest.approx(x0 @ S @ x0)
    # the slider's sums over 4096 steps reach the Riccati cost (the loop forgets by then)
    assert numbers["Σ y²"] + numbers["r Σ u²"] == pytest.approx(x0 @ S @ x0, rel=1e-3)


def lesson08_small():
    from lds_toolkit.teaching import lesson08

    return lesson08.train_capstone(T=256, steps=200, d_state=4)


def test_internal_model_costs_against_a_simulation():
    """The closed forms (Lyapunov equations of the joint loop) against the loop run step by
    step: a layer-like model beside a different true system, and the model beside itself."""
    rng = np.random.default_rng(12)
    true = lt.LDS([[0.8, 0.1], [0.0, 0.6]], [[1.0], [0.5]], [[1.0, -1.0]], dt=1)
    Ah = np.array([[0.75, 0.2], [-0.2, 0.75]])
    learned = lt.LDS(Ah, rng.standard_normal((2, 1)), rng.standard_normal((1, 2)), [[0.3]],
                     dt=1)
    for r in (0.01, 1.0, 100.0):
        costs = lesson10.internal_model_costs(learned, true, r)
        K = costs["K"]
        xh, x = learned.B[:, 0].copy(), true.B[:, 0].copy()
        predicted = achieved = 0.0
        for _ in range(2000):
            u = -K @ xh
            yh = learned.C @ xh + learned.D @ u
            predicted += float(yh @ yh + r * u @ u)
            x = true.A @ x + true.B @ u
            achieved += float((true.C @ x) @ (true.C @ x) + r * u @ u)
            xh = learned.A @ xh + learned.B @ u
        assert costs["predicted"] == pytest.approx(predicted, rel=1e-10)
        assert costs["achieved"] == pytest.approx(achieved, rel=1e-10)
        np.testing.assert_allclose(K, control.dlqr(learned.A, learned.B, learned.C.T @ learned.C,
                                                   learned.D.T @ learned.D + r,
                                                   learned.C.T @ learned.D)[0])
