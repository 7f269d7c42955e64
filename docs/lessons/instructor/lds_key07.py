"""Lesson 7's answer key — instructor only: never in the student build, the site or the package.

The format: ``lds_key01.py`` and ``docs/lessons/README.md`` ("Answer keys"). This key holds the
hidden cases; ``SOLUTIONS`` only where a check cannot take other cases, and ``ALTERNATIVES``
are still to be written; ``MISTAKES`` holds at least five common mistakes per graded
answer, each with the words its hint must contain.
"""

from __future__ import annotations

import numpy as np

#: Seconds per call of a student's function in the hidden tests.
TIME_LIMIT = 5.0


def _system(seed, n, d_in, d_out):
    rng = np.random.default_rng(seed)
    Q = np.linalg.qr(rng.standard_normal((n, n)))[0]
    A = Q @ np.diag(np.linspace(0.5, 0.995, n)) @ Q.T
    return {"A": A, "B": rng.standard_normal((n, d_in)), "C": rng.standard_normal((d_out, n))}


# ALTERNATIVES (correct answers written another way): at the end of the file

# ----------------------------------------------------------------- common mistakes
# Each wrong answer as a student would write it; the words its hint must contain
# (tests/teaching/test_answer_keys.py runs each through the public check).

def _g(A, B, C, n, *, g1=None, power_shift=0, elementwise=False, all_squared=False,
       first=False):
    A, B, C = (np.atleast_2d(np.asarray(M, float)) for M in (A, B, C))
    eye = np.eye(A.shape[0])
    sq = (A - eye) ** 2 if elementwise else (A - eye) @ (A - eye)
    out = []
    for j in range(n):
        if first:
            out.append(C @ B if j == 0 else C @ np.linalg.matrix_power(A, j - 1) @ (A - eye) @ B)
        elif all_squared:
            out.append(C @ np.linalg.matrix_power(A, j) @ sq @ B)
        elif j == 0:
            out.append(C @ B)
        elif j == 1:
            out.append(C @ (g1 if g1 is not None else A - 2 * eye) @ B)
        else:
            out.append(C @ np.linalg.matrix_power(A, j - 2 + power_shift) @ sq @ B)
    return np.array(out)


def _eye(A):
    return np.eye(np.atleast_2d(A).shape[0])


def _tail(a, L, o, *, start=0, coef_pow=None, ratio2=True, whole=False, head=False):
    p = 2 * o if coef_pow is None else coef_pow
    if whole:
        return (1 - a) ** p / (1 - a * a)
    if head:
        return (1 - a) ** p * (1 - a ** (2 * (L - o))) / (1 - a * a)
    return (1 - a) ** p * a ** (2 * (L - o + start)) / ((1 - a * a) if ratio2 else (1 - a))


def _unsquared(alpha, L, order):
    a = alpha
    return (1 - a) ** order * a ** (L - order) / (1 - a)


MISTAKES = {
    "second_difference": [
        ("first differences", lambda A, B, C, n: _g(A, B, C, n, first=True), "first differences"),
        ("pattern from j = 0", lambda A, B, C, n: _g(A, B, C, n, all_squared=True),
         "g_0 and g_1 are special"),
        ("A + 2I in g_1", lambda A, B, C, n: _g(A, B, C, n, g1=np.atleast_2d(A) + 2 * _eye(A)),
         "contributes -2 C B"),
        ("power j - 1", lambda A, B, C, n: _g(A, B, C, n, power_shift=1), "power is j - 2"),
        ("elementwise square", lambda A, B, C, n: _g(A, B, C, n, elementwise=True),
         "matrix product"),
        ("g_1 = C(A - I)B", lambda A, B, C, n: _g(A, B, C, n, g1=np.atleast_2d(A) - _eye(A)),
         "not y_{t-2}"),
    ],
    "tail_energy": [
        ("starts a lag late", lambda alpha, L, order: _tail(alpha, L, order, start=1),
         "one lag late"),
        ("starts a lag early", lambda alpha, L, order: _tail(alpha, L, order, start=-1),
         "one lag early"),
        ("coefficients not squared", _unsquared, "not squared"),
        ("ratio a for a^2", lambda alpha, L, order: _tail(alpha, L, order, ratio2=False),
         "ratio a^2"),
        ("(1 - a)^order", lambda alpha, L, order: _tail(alpha, L, order, coef_pow=order),
         "squared too"),
        ("the whole energy", lambda alpha, L, order: _tail(alpha, L, order, whole=True),
         "whole energy"),
        ("the energy inside the context", lambda alpha, L, order: _tail(alpha, L, order,
                                                                         head=True),
         "inside the context"),
    ],
    "worst_eigenvalue": [
        ("first-order estimate", lambda L: 1 - 1 / (2 * (L - 1)), "first-order"),
        ("the other root", lambda L: (-1 - np.sqrt(1 + 4 * (L - 1) ** 2)) / (2 * (L - 1)),
         "other root"),
        ("L for L - 1", lambda L: (-1 + np.sqrt(1 + 4 * L ** 2)) / (2 * L), "2L - 2"),
        ("1/(1 + a) dropped", lambda L: (2 * L - 2) / (2 * L - 1), "1/(1 + alpha)"),
        ("one coefficient maximised", lambda L: (L - 1) / L, "one coefficient"),
        ("sign of the alpha term", lambda L: (1 + np.sqrt(1 + 4 * (L - 1) ** 2)) / (2 * (L - 1)),
         "sign of the alpha term"),
    ],
    "interpretation": [
        ('a', 'a', 'both algorithms run with'),
        ('b', 'b', 'Region B is where'),
        ('c', 'c', 'both run at twice'),
        ("a number", 2, "one of the letters"),
        ("a sentence", "the certificate", "one of the letters"),
    ],
}

HIDDEN = {
    "second_difference": [(1.0, _system(701, 3, 1, 1) | {"n": 10}),
                          (1.0, _system(702, 5, 2, 2) | {"n": 7})],
    "tail_energy": [(0.5, {"alpha": a, "L": L, "order": o})
                    for a, L, o in ((0.7, 6, 1), (0.95, 20, 2), (0.999, 64, 1), (0.3, 3, 2))],
    "worst_eigenvalue": [(0.5, {"L": L}) for L in (3, 16, 100, 4096)],
    "interpretation": [(1.0, None)],
}


# ----------------------------------------------------------------- correct, written otherwise
# (tests/teaching/test_answer_keys.py: each must pass the public check)


def _difference_by_markov(A, B, C, n):
    """From the Markov parameters h_j = C A^(j-1) B (j >= 1, h_0 = 0 here): g_j = h_(j+1) -
    2 h_j + h_(j-1)."""
    A, B, C = (np.atleast_2d(np.asarray(m, float)) for m in (A, B, C))
    h = [np.zeros((C.shape[0], B.shape[1]))]
    power = np.eye(A.shape[0])
    for _ in range(n + 1):
        h.append(C @ power @ B)
        power = A @ power
    h = np.array(h)  # h_0 .. h_(n+1)
    padded = np.concatenate([np.zeros_like(h[:1]), h])  # h_(-1) = 0
    return padded[2:n + 2] - 2 * padded[1:n + 1] + padded[:n]


def _tail_by_sum(alpha, L, order):
    j = np.arange(L, L + 200_000, dtype=float)
    g = (1 - alpha) ** order * alpha ** (j - order)
    return float(np.sum(g * g))


def _worst_by_roots(L):
    roots = np.roots([L - 1, 1, -(L - 1)])
    return float(max(r.real for r in roots if 0 < r.real < 1))


ALTERNATIVES = {
    "second_difference": [("from the Markov parameters", _difference_by_markov)],
    "tail_energy": [("a sum of 200000 terms", _tail_by_sum)],
    "worst_eigenvalue": [("numpy's roots", _worst_by_roots)],
}
