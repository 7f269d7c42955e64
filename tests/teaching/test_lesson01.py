"""Lesson 1's checks: the reference answers pass, the usual slips get their hint."""

from __future__ import annotations

import math

import numpy as np

from lds_toolkit.teaching import lesson01


def test_independent_answers_pass():
    def by_powers(A, B, C, D, length):  # matrix powers: an independent route
        A, B, C, D = (np.atleast_2d(np.asarray(M, float)) for M in (A, B, C, D))
        return np.stack([D] + [C @ np.linalg.matrix_power(A, t - 1) @ B
                               for t in range(1, length)])

    assert lesson01.check_impulse_response(by_powers, verbose=False).passed
    formula = lambda a, eps: 1 + math.ceil(math.log(eps) / (2 * math.log(abs(a))))
    assert lesson01.check_memory_formula(formula, verbose=False).passed


def test_slips_get_their_hint():
    def s4_reading(A, B, C, D, length):
        A, B, C, D = (np.atleast_2d(np.asarray(M, float)) for M in (A, B, C, D))
        return np.stack([D + C @ np.linalg.matrix_power(A, t) @ B for t in range(length)])

    res = lesson01.check_impulse_response(s4_reading, verbose=False)
    assert res.status == "wrong" and "S4's convention" in res.message
    no_square = lambda a, eps: 1 + math.ceil(math.log(eps) / math.log(abs(a)))
    assert "forgot the square" in lesson01.check_memory_formula(no_square,
                                                                verbose=False).message
    region = lambda lam, T, q: lesson01._toolkit_region({"lam": lam, "T": T, "q": q})
    closed_b = lambda lam, T, q: "B" if lam == 1 - 2.0**-21 else region(lam, T, q)
    msg = lesson01.check_region(closed_b, verbose=False).message
    assert "Region B is open" in msg
    # at an end point floats cannot represent, the label on either side passes
    open_left = lambda lam, T, q: region(lam, T, q).replace("A-left", "B") \
        if lam == 1 - math.log(T) / (8 * T**q) else region(lam, T, q)
    assert lesson01.check_region(open_left, verbose=False).passed


def test_summary_of_stubs_counts_todo(capsys):
    out = lesson01.summary(impulse_response=None, memory_of=lambda a, eps: ...)
    assert (out["todo"], out["passed"], out["total"]) == (4, 0, 4)
