"""Lesson 2's answer key — instructor only: never in the student build, the site or the package.

The format: ``lds_key01.py`` and ``docs/lessons/README.md`` ("Answer keys"). This key holds the
hidden cases; ``SOLUTIONS`` only where a check cannot take other cases, and ``ALTERNATIVES``
are still to be written; ``MISTAKES`` holds at least five common mistakes per graded
answer, each with the words its hint must contain.
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import expm

#: Seconds per call of a student's function in the hidden tests.
TIME_LIMIT = 5.0


def _stable(seed, n, m, p=1):
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((n, n))
    A -= (max(np.linalg.eigvals(A).real) + 0.3) * np.eye(n)
    return {"A": A, "B": rng.standard_normal((n, m)), "C": rng.standard_normal((p, n)),
            "D": rng.standard_normal((p, m))}


def _ab(seed, n, m):
    return {k: v for k, v in _stable(seed, n, m).items() if k in ("A", "B")}


def tustin_from_s4(y_s4):
    y = np.asarray(y_s4, dtype=float)
    return 0.5 * (y + np.concatenate([np.zeros_like(y[:1]), y[:-1]]))


SOLUTIONS = {"tustin_from_s4": tustin_from_s4}
#: How the grader compares where the check takes no cases (lds_grading.grade).
COMPARE = {"tustin_from_s4": ("array", {"rtol": 1e-9, "atol": 1e-12})}
# ALTERNATIVES (correct answers written another way): at the end of the file

# ----------------------------------------------------------------- common mistakes
# Each wrong answer as a student would write it; the words its hint must contain
# (tests/teaching/test_answer_keys.py runs each through the public check).

def _I(A):
    return np.eye(np.atleast_2d(A).shape[0])


# ---- exercise 1: s4_discretize(A, B, dt) -> (A_bar, B_bar)
def s4_no_dt(A, B, dt):
    I = _I(A)
    left = I - dt / 2 * A
    return np.linalg.solve(left, I + dt / 2 * A), np.linalg.solve(left, B)


def s4_zoh(A, B, dt):
    n, m = B.shape
    big = expm(np.block([[A, B], [np.zeros((m, n + m))]]) * dt)
    return big[:n, :n], big[:n, n:]


def s4_euler(A, B, dt):
    return _I(A) + dt * A, dt * B


def s4_b_without_inverse(A, B, dt):
    I = _I(A)
    return np.linalg.solve(I - dt / 2 * A, I + dt / 2 * A), dt * B


def s4_signs_swapped(A, B, dt):
    I = _I(A)
    left = I + dt / 2 * A
    return np.linalg.solve(left, I - dt / 2 * A), np.linalg.solve(left, B * dt)


def s4_no_halves(A, B, dt):
    I = _I(A)
    left = I - dt * A
    return np.linalg.solve(left, I + dt * A), np.linalg.solve(left, B * dt)


def s4_backward_euler(A, B, dt):
    I = _I(A)
    left = I - dt * A
    return np.linalg.solve(left, I), np.linalg.solve(left, B * dt)


# ---- exercise 2: tustin(A, B, C, D, dt) -> (Ad, Bd, Cd, Dd)
def _s4(A, B, dt):
    I = _I(A)
    left = I - dt / 2 * A
    return np.linalg.solve(left, I + dt / 2 * A), np.linalg.solve(left, B * dt)


def _cm(A, C, dt):
    return C @ np.linalg.inv(_I(A) - dt / 2 * A)


def tustin_s4_form(A, B, C, D, dt):
    Ad, Bd = _s4(A, B, dt)
    return Ad, Bd, C, D


def tustin_no_dd_term(A, B, C, D, dt):
    Ad, Bd = _s4(A, B, dt)
    return Ad, Bd, _cm(A, C, dt), D


def tustin_dd_full_dt(A, B, C, D, dt):
    Ad, Bd = _s4(A, B, dt)
    CM = _cm(A, C, dt)
    return Ad, Bd, CM, D + CM @ B * dt


def tustin_cd_c_abar(A, B, C, D, dt):
    Ad, Bd = _s4(A, B, dt)
    CM = _cm(A, C, dt)
    return Ad, Bd, C @ Ad, D + CM @ B * dt / 2


def tustin_dd_without_m(A, B, C, D, dt):
    Ad, Bd = _s4(A, B, dt)
    return Ad, Bd, _cm(A, C, dt), D + C @ B * dt / 2


def tustin_cd_unchanged(A, B, C, D, dt):
    Ad, Bd = _s4(A, B, dt)
    CM = _cm(A, C, dt)
    return Ad, Bd, C, D + CM @ B * dt / 2


# ---- exercise 3: tustin_from_s4(y_s4)
def from_s4_next(y_s4):
    y = np.asarray(y_s4, float)
    return 0.5 * (y + np.concatenate([y[1:], np.zeros_like(y[:1])]))


def from_s4_lag_only(y_s4):
    y = np.asarray(y_s4, float)
    return np.concatenate([np.zeros_like(y[:1]), y[:-1]])


def from_s4_first_repeated(y_s4):
    y = np.asarray(y_s4, float)
    return 0.5 * (y + np.concatenate([y[:1], y[:-1]]))


def from_s4_roll(y_s4):
    y = np.asarray(y_s4, float)
    return 0.5 * (y + np.roll(y, 1, axis=0))


def from_s4_no_half(y_s4):
    y = np.asarray(y_s4, float)
    return y + np.concatenate([np.zeros_like(y[:1]), y[:-1]])


def from_s4_difference(y_s4):
    y = np.asarray(y_s4, float)
    return 0.5 * (y - np.concatenate([np.zeros_like(y[:1]), y[:-1]]))


def from_s4_flat(y_s4):
    y = np.asarray(y_s4, float)[:, 0]
    return 0.5 * (y + np.concatenate([[0.0], y[:-1]]))


MISTAKES = {
    "s4_discretize": [
        ("B̄ without the factor Δ", s4_no_dt, "factor Δ"),
        ("zero-order hold instead of the bilinear form", s4_zoh, "zero-order hold"),
        ("forward Euler", s4_euler, "forward Euler"),
        ("B̄ = Δ B, the inverse applied to Ā only", s4_b_without_inverse, "B̄ = M B Δ"),
        ("the signs of the halves swapped", s4_signs_swapped, "signs"),
        ("Δ instead of Δ/2 in both factors", s4_no_halves, "Δ/2"),
        ("backward Euler", s4_backward_euler, "backward Euler"),
    ],
    "tustin": [
        ("S4's form: C and D unchanged", tustin_s4_form, "S4's form"),
        ("D_d = D", tustin_no_dd_term, "misses the term"),
        ("D_d with Δ instead of Δ/2", tustin_dd_full_dt, "factor is Δ/2"),
        ("C_d = C Ā", tustin_cd_c_abar, "C Ā"),
        ("D_d = D + C B Δ/2 (M forgotten)", tustin_dd_without_m, "M is in D_d"),
        ("C_d = C unchanged, D_d right", tustin_cd_unchanged, "C_d = C M"),
    ],
    "tustin_from_s4": [
        ("averaged with the next output", from_s4_next, "next output"),
        ("the delayed S4 output alone", from_s4_lag_only, "without the average"),
        ("y_{-1} = y_0", from_s4_first_repeated, "y_{-1} must be 0"),
        ("np.roll wraps the last output round to the front", from_s4_roll, "np.roll"),
        ("the sum without the factor 1/2", from_s4_no_half, "1/2"),
        ("a difference instead of the average", from_s4_difference, "difference"),
        ("a 1-D array for a (T, 1) output", from_s4_flat, "reshape"),
    ],
    "interpretation": [
        ('a', 'a', '|e^{pΔ}| = e^{Re p'),
        ('b', 'b', 'Tustin maps the whole'),
        ('d', 'd', '2/|p| is the limit'),
        ("a number", 2, "one of the letters"),
        ("a sentence", "the certificate", "one of the letters"),
    ],
}

HIDDEN = {
    "s4_discretize": [(1.0, _ab(201, 3, 1) | {"dt": 0.05}), (1.0, _ab(202, 5, 3) | {"dt": 1.0})],
    "tustin": [(1.0, _stable(203, 3, 1, 2) | {"dt": 0.2}),
               (1.0, _stable(204, 4, 2, 1) | {"dt": 0.8})],
    "tustin_from_s4": [(1.0, {"y_s4": np.random.default_rng(205).standard_normal((40, 1))}),
                       (1.0, {"y_s4": np.random.default_rng(206).standard_normal((17, 2))})],
    "interpretation": [(1.0, None)],
}


# ----------------------------------------------------------------- correct, written otherwise
# (tests/teaching/test_answer_keys.py: each must pass the public check)


def _s4_by_inverse(A, B, dt):
    A, B = np.atleast_2d(A), np.atleast_2d(B)
    inv = np.linalg.inv(np.eye(A.shape[0]) - dt / 2 * A)
    return (inv @ (np.eye(A.shape[0]) + dt / 2 * A)).tolist(), (dt * inv @ B).tolist()


def _tustin_by_scipy(A, B, C, D, dt):
    from scipy.signal import cont2discrete

    Ad, Bd, Cd, Dd, _ = cont2discrete((A, B, C, D), dt, method="bilinear")
    return Ad, Bd, Cd, Dd


def _tustin_own_s4(A, B, C, D, dt):
    """Does not call s4_discretize: the bilinear form written out once more."""
    A, B, C, D = (np.atleast_2d(np.asarray(m, float)) for m in (A, B, C, D))
    Minv = np.linalg.inv(np.eye(A.shape[0]) - dt / 2 * A)
    return (Minv @ (np.eye(A.shape[0]) + dt / 2 * A), Minv @ B * dt, C @ Minv,
            D + C @ Minv @ B * (dt / 2))


def _average_by_loop(y_s4):
    y = np.asarray(y_s4, dtype=float)
    out = np.empty_like(y)
    previous = np.zeros_like(y[0])
    for k in range(len(y)):
        out[k] = (y[k] + previous) / 2
        previous = y[k]
    return out


def _average_by_convolution(y_s4):
    from scipy.signal import lfilter

    return lfilter([0.5, 0.5], [1.0], np.asarray(y_s4, dtype=float), axis=0)


ALTERNATIVES = {
    "s4_discretize": [("an explicit inverse, lists returned", _s4_by_inverse)],
    "tustin": [("scipy's cont2discrete(method='bilinear')", _tustin_by_scipy),
               ("the bilinear form written out, no call of s4_discretize", _tustin_own_s4)],
    "tustin_from_s4": [("a loop over k", _average_by_loop),
                       ("a two-tap FIR filter (scipy.signal.lfilter)", _average_by_convolution)],
}
