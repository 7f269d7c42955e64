"""Lesson 2's answer key — instructor only: never in the student build, the site or the package.

The format: ``lds_key01.py`` and ``docs/lessons/README.md`` ("Answer keys"). This key holds the
hidden cases; ``SOLUTIONS`` only where a check cannot take other cases, and ``ALTERNATIVES``
and ``MISTAKES`` are still to be written (tests/teaching/test_answer_keys.py lists the lessons
whose mistakes are pending).
"""

from __future__ import annotations

import numpy as np

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
ALTERNATIVES: dict = {}
MISTAKES: dict = {}

HIDDEN = {
    "s4_discretize": [(1.0, _ab(201, 3, 1) | {"dt": 0.05}), (1.0, _ab(202, 5, 3) | {"dt": 1.0})],
    "tustin": [(1.0, _stable(203, 3, 1, 2) | {"dt": 0.2}),
               (1.0, _stable(204, 4, 2, 1) | {"dt": 0.8})],
    "tustin_from_s4": [(1.0, {"y_s4": np.random.default_rng(205).standard_normal((40, 1))}),
                       (1.0, {"y_s4": np.random.default_rng(206).standard_normal((17, 2))})],
}
