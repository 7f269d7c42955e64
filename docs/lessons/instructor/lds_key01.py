"""Lesson 1's answer key — instructor only: never in the student build, the site or the package.

What every ``lds_keyNN.py`` holds (the format: ``docs/lessons/README.md``, "Answer keys"):

* ``SOLUTIONS`` — answer name -> the reference solution (what the solution notebook does);
* ``ALTERNATIVES`` — answer name -> ``[(how it differs, answer)]``: correct answers written
  another way, each must pass the public check;
* ``MISTAKES`` — answer name -> ``[(the mistake, answer, words its hint must contain)]``:
  at least five per exercise, each must get "not yet" with its own hint;
* ``HIDDEN`` — answer name -> ``[(points, case)]``: the autograder's hidden cases (inputs other
  than the public ones), graded one by one (partial credit) with the lesson's check, each
  call limited to ``TIME_LIMIT`` seconds; a choice question has ``[(points, None)]``.

``tests/teaching/test_answer_keys.py`` runs all of it; ``docs/_site/lessons.py`` ships this
file inside the autograder archive only.
"""

from __future__ import annotations

import math

import numpy as np

#: Seconds per call of a student's function in the hidden tests.
TIME_LIMIT = 5.0


# ----------------------------------------------------------------- reference solutions


def impulse_response(A, B, C, D, length):
    A, B, C, D = (np.atleast_2d(np.asarray(M, dtype=float)) for M in (A, B, C, D))
    h = np.empty((length, C.shape[0], B.shape[1]))
    X = np.zeros((A.shape[0], B.shape[1]))  # one state column per input channel
    for t in range(length):
        U = np.eye(B.shape[1]) if t == 0 else np.zeros((B.shape[1], B.shape[1]))
        h[t] = C @ X + D @ U
        X = A @ X + B @ U
    return h


def memory_of(a, eps):
    return 1 + int(np.ceil(np.log(eps) / (2 * np.log(abs(a)))))


def region_of(lam, T, q):
    good = 1 - np.log(T) / (8 * T**q)
    marginal = 1 - 1 / (2 * T**1.25)
    if 0.9 * good <= lam <= good:
        return "A-left"
    if good < lam < marginal:
        return "B"
    if marginal <= lam <= 1:
        return "A-right"
    return "outside"


interpretation = "b"

SOLUTIONS = {"impulse_response": impulse_response, "memory_of": memory_of,
             "region_of": region_of, "interpretation": interpretation}


# ----------------------------------------------------------------- correct, written otherwise


def _by_powers(A, B, C, D, length):
    A, B, C, D = (np.atleast_2d(np.asarray(M, float)) for M in (A, B, C, D))
    return np.stack([D] + [C @ np.linalg.matrix_power(A, t - 1) @ B
                           for t in range(1, length)])


def _in_place(A, B, C, D, length):
    """Correct, but overwrites its argument ``B`` (the check copies every argument)."""
    B = np.atleast_2d(B)
    out = [np.atleast_2d(D).astype(float)]
    for _ in range(1, length):
        out.append(np.atleast_2d(C) @ B)
        B[...] = np.atleast_2d(A) @ B
    return np.array(out)


def _as_list(A, B, C, D, length):
    return impulse_response(A, B, C, D, length).tolist()


def _region_with_log_first(lam, T, q):
    # the left end computed another way (exp/log): may differ by a rounding at the end point
    good = 1 - math.exp(math.log(math.log(T)) - math.log(8) - q * math.log(T))
    marginal = 1 - 0.5 * T ** -1.25
    if lam > 1 or lam < 0.9 * good:
        return "outside"
    if lam <= good:
        return "A-left"
    return "B" if lam < marginal else "A-right"


ALTERNATIVES = {
    "impulse_response": [("matrix powers", _by_powers), ("overwrites B in place", _in_place),
                         ("a nested list", _as_list)],
    "memory_of": [("log10", lambda a, eps: 1 + math.ceil(math.log10(eps)
                                                        / (2 * math.log10(abs(a))))),
                  ("a float that is whole", lambda a, eps: float(memory_of(a, eps))),
                  ("a loop over l: the first with tail fraction |a|^(2(l-1)) <= eps",
                   lambda a, eps: next(n for n in range(1, 10**7)
                                       if abs(a) ** (2 * (n - 1)) <= eps))],
    "region_of": [("end points computed with exp/log", _region_with_log_first)],
    "interpretation": [("upper case, brackets", "(B)")],
}


# ----------------------------------------------------------------- common mistakes


def _no_d(A, B, C, D, length):
    h = impulse_response(A, B, C, D, length)
    h[0] = 0.0
    return h


def _s4_reading(A, B, C, D, length):
    A, B, C, D = (np.atleast_2d(np.asarray(M, float)) for M in (A, B, C, D))
    return np.stack([D + C @ np.linalg.matrix_power(A, t) @ B for t in range(length)])


def _a_transposed(A, B, C, D, length):
    return impulse_response(np.asarray(A).T, B, C, D, length)


def _axes_swapped(A, B, C, D, length):
    return np.swapaxes(impulse_response(A, B, C, D, length), 1, 2)


def _one_step_late(A, B, C, D, length):
    h = impulse_response(A, B, C, D, length)
    return np.concatenate([np.zeros_like(h[:1]), h[:-1]])


def _ones_input(A, B, C, D, length):
    """u_0 = a vector of ones: the inputs' responses summed, one column."""
    return impulse_response(A, B, C, D, length).sum(axis=2)


def _region_closed_b(lam, T, q):
    good = 1 - np.log(T) / (8 * T**q)
    marginal = 1 - 1 / (2 * T**1.25)
    if 0.9 * good <= lam < good:
        return "A-left"
    if good <= lam <= marginal:
        return "B"
    if marginal < lam <= 1:
        return "A-right"
    return "outside"


def _region_log10(lam, T, q):
    return _region_with(lam, 1 - np.log10(T) / (8 * T**q), 1 - 1 / (2 * T**1.25))


def _region_no_q(lam, T, q):
    return _region_with(lam, 1 - np.log(T) / (8 * T), 1 - 1 / (2 * T**1.25))


def _region_with(lam, good, marginal):
    if 0.9 * good <= lam <= good:
        return "A-left"
    if good < lam < marginal:
        return "B"
    if marginal <= lam <= 1:
        return "A-right"
    return "outside"


def _region_no_bounds(lam, T, q):
    good = 1 - np.log(T) / (8 * T**q)
    marginal = 1 - 1 / (2 * T**1.25)
    if lam <= good:
        return "A-left"
    return "B" if lam < marginal else "A-right"


MISTAKES = {
    "impulse_response": [
        ("D left out of h_0", _no_d, "D is missing"),
        ("h_t = C A^t B (S4's reading)", _s4_reading, "S4's convention"),
        ("A transposed", _a_transposed, "A is used transposed"),
        ("axes (length, d_in, d_out)", _axes_swapped, "the axes are"),
        ("h shifted one step late", _one_step_late, "one step late"),
        ("a vector of ones as u_0", _ones_input, "one column per input"),
        ("a stray print and no return", lambda A, B, C, D, length: print(A), "returned None"),
    ],
    "memory_of": [
        ("no square on the energies",
         lambda a, eps: 1 + math.ceil(math.log(eps) / math.log(abs(a))), "forgot the square"),
        ("counted from 0", lambda a, eps: math.ceil(math.log(eps) / (2 * math.log(abs(a)))),
         "add 1"),
        ("rounded down (the same number as counting from 0)",
         lambda a, eps: 1 + math.floor(math.log(eps) / (2 * math.log(abs(a)))), "add 1"),
        ("(1 - a^2) kept", lambda a, eps: 1 + math.ceil(
            math.log(eps * (1 - a * a)) / (2 * math.log(abs(a)))), "cancels"),
        ("not rounded", lambda a, eps: 1 + math.log(eps) / (2 * math.log(abs(a))),
         "whole number"),
        ("log of a (negative a)", lambda a, eps: 1 + math.ceil(
            math.log(eps) / (2 * math.log(a))), "math domain error"),
        ("log of a with numpy (negative a)", lambda a, eps: 1 + np.ceil(
            np.log(eps) / (2 * np.log(a))), "NaN"),
    ],
    "region_of": [
        ("Region B closed", _region_closed_b, "Region B is open"),
        ("log10 for log", _region_log10, "natural log"),
        ("T for T^q", _region_no_q, "depends on q"),
        ("no outer bounds (0.9 x, 1)", _region_no_bounds, "start at 0.9"),
        ("'A' for 'A-left'", lambda lam, T, q: region_of(lam, T, q).replace("A-left", "A"),
         "one of the labels"),
        ("a list of labels", lambda lam, T, q: [region_of(lam, T, q)], "yours ["),
    ],
    "interpretation": [
        ("a", "a", "345 lags"), ("c", "c", "Region A (right)"), ("d", "d", "linearity"),
        ("a number", 2, "one of the letters"), ("a sentence", "Region B", "one of the letters"),
    ],
}


# ----------------------------------------------------------------- hidden cases


def _random_system(seed, n, d_in, d_out, rho):
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((n, n))
    A *= rho / max(abs(np.linalg.eigvals(A)))
    return {"A": A, "B": rng.standard_normal((n, d_in)), "C": rng.standard_normal((d_out, n)),
            "D": rng.standard_normal((d_out, d_in))}


HIDDEN = {
    "impulse_response": [
        (1.0, dict(_random_system(101, 4, 1, 1, 0.95), length=20)),
        (1.0, dict(_random_system(102, 3, 2, 3, 0.7), length=9)),
        (1.0, dict(_random_system(103, 5, 3, 2, 0.99), length=15)),
    ],
    "memory_of": [(0.5, {"a": 0.95, "eps": 1e-4}), (0.5, {"a": -0.8, "eps": 1e-3}),
                  (0.5, {"a": 0.9999, "eps": 1e-3}), (0.5, {"a": 0.3, "eps": 1e-5})],
    "region_of": [(0.5, {"lam": lam, "T": T, "q": q}) for lam, T, q in (
        (0.9, 4096, 7 / 8), (0.9995, 4096, 7 / 8), (0.99999, 4096, 7 / 8), (1.0, 4096, 7 / 8),
        (1 - 2.0**-41, 2**32, 7 / 8), (0.2, 2**10, 1 / 2))],
    "interpretation": [(1.0, None)],
}
