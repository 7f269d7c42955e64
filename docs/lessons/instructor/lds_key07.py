"""Lesson 7's answer key — instructor only: never in the student build, the site or the package.

The format: ``lds_key01.py`` and ``docs/lessons/README.md`` ("Answer keys"). This key holds the
hidden cases; ``SOLUTIONS`` only where a check cannot take other cases, and ``ALTERNATIVES``
and ``MISTAKES`` are still to be written (tests/teaching/test_answer_keys.py lists the lessons
whose mistakes are pending).
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


ALTERNATIVES: dict = {}
MISTAKES: dict = {}

HIDDEN = {
    "second_difference": [(1.0, _system(701, 3, 1, 1) | {"n": 10}),
                          (1.0, _system(702, 5, 2, 2) | {"n": 7})],
    "tail_energy": [(0.5, {"alpha": a, "L": L, "order": o})
                    for a, L, o in ((0.7, 6, 1), (0.95, 20, 2), (0.999, 64, 1), (0.3, 3, 2))],
    "worst_eigenvalue": [(0.5, {"L": L}) for L in (3, 16, 100, 4096)],
}
