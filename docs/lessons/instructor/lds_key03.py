"""Lesson 3's answer key — instructor only: never in the student build, the site or the package.

The format: ``lds_key01.py`` and ``docs/lessons/README.md`` ("Answer keys"). This key holds the
hidden cases; ``SOLUTIONS`` only where a check cannot take other cases, and ``ALTERNATIVES``
and ``MISTAKES`` are still to be written (tests/teaching/test_answer_keys.py lists the lessons
whose mistakes are pending).
"""

from __future__ import annotations

import numpy as np

#: Seconds per call of a student's function in the hidden tests.
TIME_LIMIT = 5.0


def _pair(seed, n, discrete):
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((n, n))
    if discrete:
        A *= 0.8 / max(abs(np.linalg.eigvals(A)))
    else:
        A -= (max(np.linalg.eigvals(A).real) + 0.4) * np.eye(n)
    R = rng.standard_normal((n, n))
    return {"A": A, "M": R @ R.T + 0.3 * np.eye(n)}


def _pd(seed, n):
    rng = np.random.default_rng(seed)
    R, S = rng.standard_normal((2, n, n))
    return {"P": R @ R.T + np.eye(n), "M": S @ S.T + 0.2 * np.eye(n)}


ALTERNATIVES: dict = {}
MISTAKES: dict = {}

HIDDEN = {
    "lyapunov_kron": [(1.0, _pair(301, 2, False)), (1.0, _pair(302, 5, False))],
    "discrete_lyapunov_kron": [(1.0, _pair(303, 3, True)), (1.0, _pair(304, 5, True))],
    "decay_rate": [(1.0, _pd(305, 2)), (1.0, _pd(306, 4))],
}
