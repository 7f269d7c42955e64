"""Lessons 2-4's checks recognise the usual slips (the solutions passing is
test_lessons.py's job)."""

from __future__ import annotations

import numpy as np
from scipy.linalg import solve_continuous_lyapunov

from lds_toolkit.teaching import lesson02, lesson03, lesson04


def test_lesson02_hints():
    def no_dt(A, B, dt):
        A = np.atleast_2d(A)
        left = np.eye(A.shape[0]) - dt / 2 * A
        return np.linalg.solve(left, np.eye(A.shape[0]) + dt / 2 * A), np.linalg.solve(left, B)

    assert "misses the factor Δ" in lesson02.check_s4_bilinear(no_dt, verbose=False).message

    def s4_form(A, B, C, D, dt):
        return (*lesson02._toolkit_s4_bilinear({"A": A, "B": B, "dt": dt}), C, D)

    assert "S4's form" in lesson02.check_tustin(s4_form, verbose=False).message
    late = lesson02.check_tustin_from_s4(
        lambda y_s4: np.concatenate([np.zeros((1, 1)), y_s4[:-1]]), verbose=False)
    assert "delayed by one step" in late.message


def test_lesson02_tustin_relation_is_exact_against_scipy():
    """The check of exercise 3 compares with the Tustin system's simulation; the formula the
    lesson teaches (the answer key's solution) reproduces scipy's Tustin output from the S4
    output (independent route)."""
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "docs/lessons/instructor/lds_key02.py"
    spec = importlib.util.spec_from_file_location("lds_key02", path)
    key = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(key)
    from scipy.signal import cont2discrete, dlsim

    import lds_toolkit as lt

    ex = lesson02.EXAMPLE
    u = np.random.default_rng(0).standard_normal((50, 1))
    y_s4 = lt.simulate(lt.s4_bilinear(lt.LDS(**ex), 0.2), u, output="s4").y
    Ad, Bd, Cd, Dd, _ = cont2discrete((ex["A"], ex["B"], ex["C"], ex["D"]), 0.2, "bilinear")
    _, y_scipy, _ = dlsim((Ad, Bd, Cd, Dd, 0.2), u)
    np.testing.assert_allclose(key.tustin_from_s4(y_s4), y_scipy,
                               rtol=1e-10, atol=1e-13)


def test_lesson03_hints():
    res = lesson03.check_lyapunov_kron(lambda A, M: solve_continuous_lyapunov(A, -M),
                                       verbose=False)
    assert "python-control's" in res.message
    wrong = lambda P, M: np.linalg.eigvalsh(P)[-1] / np.linalg.eigvalsh(M)[0]
    assert "upside down" in lesson03.check_decay_rate(wrong, verbose=False).message
    # the paper's P, M give the rate the control page quotes: 0.4410 / 1.25
    assert abs(lesson03._toolkit_decay_rate(
        {"P": [[1, 0.25], [0.25, 1]], "M": [[0.5, 0.25], [0.25, 1.5]]}) - 0.352786) < 1e-6


def test_lesson04_hints():
    flipped = lambda x, e, P, M, B, K, kappa: kappa * x @ M @ x + 2 * x @ P @ B @ K @ e
    assert "sign of the cross term" in lesson04.check_trigger(flipped, verbose=False).message
    late = lambda kappa, x0, h: lesson04._toolkit_first_event(
        {"kappa": kappa, "x0": x0, "h": h}) + h
    assert "one grid step late" in lesson04.check_first_event(late, verbose=False).message
    # the paper's loop (kappa 0.5, x0 = (1, 0), h = 0.01): first event at 0.24 (control page)
    assert abs(lesson04._toolkit_first_event({"kappa": 0.5, "x0": [1.0, 0.0], "h": 0.01})
               - 0.24) < 1e-12


def test_lesson02_tustin_is_checked_with_the_toolkits_exercise_1():
    """A right tustin that calls a wrong s4_discretize passes (one slip costs one point), and
    the message sends the student back to exercise 1; a wrong tustin is blamed itself."""
    ns = {"np": np}
    exec("def s4_discretize(A, B, dt):\n"
         "    n = A.shape[0]\n"
         "    left = np.eye(n) - dt / 2 * A\n"
         "    return np.linalg.solve(left, np.eye(n) + dt / 2 * A), np.linalg.solve(left, B)\n"
         "def tustin(A, B, C, D, dt):\n"
         "    Ab, Bb = s4_discretize(A, B, dt)\n"
         "    M = np.linalg.inv(np.eye(A.shape[0]) - dt / 2 * A)\n"
         "    return Ab, Bb, C @ M, D + C @ M @ B * dt / 2\n"
         "def tustin_no_d(A, B, C, D, dt):\n"
         "    Ab, Bb = s4_discretize(A, B, dt)\n"
         "    M = np.linalg.inv(np.eye(A.shape[0]) - dt / 2 * A)\n"
         "    return Ab, Bb, C @ M, D\n", ns)
    assert not lesson02.check_s4_bilinear(ns["s4_discretize"], verbose=False).passed
    res = lesson02.check_tustin(ns["tustin"], verbose=False)
    assert res.passed and "fix exercise 1 (s4_discretize) first" in res.message
    res = lesson02.check_tustin(ns["tustin_no_d"], verbose=False)
    assert not res.passed and "the slip is in this function" in res.message
    assert ns["s4_discretize"].__name__ == "s4_discretize"  # the student's, restored
