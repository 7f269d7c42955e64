"""Lesson 7's checks: independent answers pass, the usual slips get their hint; the closed
forms agree with sums of the simulated coefficients; the slider's ratios are the learners'."""

from __future__ import annotations

import numpy as np
import pytest

import lds_toolkit as lt
from lds_toolkit.teaching import SliderApp, lesson07


def second_difference(A, B, C, n):  # matrix powers, term by term from the three sums
    A, B, C = (np.atleast_2d(np.asarray(M, float)) for M in (A, B, C))
    h = [C @ np.linalg.matrix_power(A, j) @ B for j in range(n)]  # h_j: u_{t-1-j} in y_t
    zero = np.zeros_like(h[0])
    return np.array([h[j] - 2 * (h[j - 1] if j >= 1 else zero) + (h[j - 2] if j >= 2 else zero)
                     for j in range(n)])


def test_independent_answers_pass():
    assert lesson07.check_second_difference(second_difference, verbose=False).passed

    def tail_by_loop(alpha, L, order):
        g = [(1 - alpha) ** order * alpha ** (j - order) for j in range(L, L + 20000)]
        return float(np.sum(np.square(g)))

    assert lesson07.check_tail_energy(tail_by_loop, verbose=False).passed
    root = lambda L: max(np.roots([L - 1, 1, -(L - 1)]).real)
    assert lesson07.check_worst_eigenvalue(root, verbose=False).passed


@pytest.mark.parametrize("alpha, L", [(0.9, 4), (0.99, 32), (0.999, 100)])
def test_closed_form_tails_equal_sums_of_the_simulated_coefficients(alpha, L):
    for order in (1, 2):
        assert lesson07.tail_energy_by_sum(alpha, L, order, terms=40_000) == pytest.approx(
            lesson07.tail_energies(alpha, L, order)[0], rel=1e-9)


def test_worst_eigenvalue_maximises_the_tail_and_lies_in_region_b():
    for L, T in ((32, 1024), (128, 2**14)):
        a = lesson07.worst_eigenvalue_by_search(L)
        tail = lambda alpha, L, order: lesson07.tail_energies(alpha, L, order)[0]
        assert tail(a, L, 1) >= max(tail(a - 1e-4, L, 1), tail(a + 1e-4 * (1 - a), L, 1))
        q = np.log(L) / np.log(T)
        assert lt.eigenvalue_regions(T, q).classify([a])[0] == "B"


def test_slips_get_their_hint():
    def first_difference(A, B, C, n):
        A, B, C = (np.atleast_2d(np.asarray(M, float)) for M in (A, B, C))
        h = [C @ np.linalg.matrix_power(A, j) @ B for j in range(n)]
        return np.array([h[0]] + [h[j] - h[j - 1] for j in range(1, n)])

    msg = lesson07.check_second_difference(first_difference, verbose=False).message
    assert "first differences" in msg
    no_square = lambda alpha, L, order: (1 - alpha) ** order * alpha ** (L - order) / (
        1 - alpha)
    assert "not squared" in lesson07.check_tail_energy(no_square, verbose=False).message
    estimate = lambda L: 1 - 1 / (2 * (L - 1))
    assert "quadratic" in lesson07.check_worst_eigenvalue(estimate, verbose=False).message


def test_slider_ratios_are_the_learners_losses():
    numbers = SliderApp("lesson07.eigenvalue").update(delta=0.01)
    u, L, runs = lesson07._slider_inputs()
    system = lt.LDS([[0.99]], [[1.0]], [[1.0]], dt=1.0)
    y = lt.simulate(system, u, output="lengen").y
    for name, cls in (("Algorithm 1", lt.SpectralFiltering),
                      ("Algorithm 2", lt.SpectralFilteringAR2)):
        lr = runs[name][None][0].lr
        means = []
        for context in (L, None):
            learner = cls(horizon=1024, k=12, context=context, radius=np.inf, lr=lr,
                          lr_schedule="constant")
            learner.fit_predict(u, y)
            means.append(learner.losses_[768:].mean())
        assert numbers[f"ratio {name}"] == pytest.approx(means[0] / means[1], rel=1e-9)
