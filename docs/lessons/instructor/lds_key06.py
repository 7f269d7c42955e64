"""Lesson 6's answer key — instructor only: never in the student build, the site or the package.

The format: ``lds_key01.py`` and ``docs/lessons/README.md`` ("Answer keys"). This key holds the
hidden cases; ``SOLUTIONS`` only where a check cannot take other cases, and ``ALTERNATIVES``
and ``MISTAKES`` are still to be written (tests/teaching/test_answer_keys.py lists the lessons
whose mistakes are pending).
"""

from __future__ import annotations

import numpy as np

#: Seconds per call of a student's function in the hidden tests.
TIME_LIMIT = 5.0


def _hankel(T):
    from lds_toolkit.learning.filters import filter_matrix

    return filter_matrix(T, "H")


def _filters(T, k):
    from lds_toolkit.learning import spectral_filters

    return spectral_filters(T, k, "H", method="dense", cache=False)[1]


ALTERNATIVES: dict = {}
MISTAKES: dict = {}

HIDDEN = {
    "hankel_matrix": [(0.5, {"T": 2}), (0.5, {"T": 17}), (0.5, {"T": 100})],
    "top_filters": [(1.0, {"H": _hankel(32), "k": 4}), (1.0, {"H": _hankel(100), "k": 5})],
    "projection_residual": [(0.5, {"phi": _filters(128, 6), "alpha": a})
                            for a in (0.3, 0.95, 0.999)],
    "resolvable_count": [(1.0, {"sigma": np.linalg.eigvalsh(_hankel(128))[::-1].copy()}),
                         (1.0, {"sigma": 7.0 * 0.3 ** np.arange(40)})],
}
