"""Lesson 5's answer key — instructor only: never in the student build, the site or the package.

The format: ``lds_key01.py`` and ``docs/lessons/README.md`` ("Answer keys"). This key holds the
hidden cases; ``SOLUTIONS`` only where a check cannot take other cases, and ``ALTERNATIVES``
and ``MISTAKES`` are still to be written (tests/teaching/test_answer_keys.py lists the lessons
whose mistakes are pending).
"""

from __future__ import annotations

import numpy as np

#: Seconds per call of a student's function in the hidden tests.
TIME_LIMIT = 5.0


def _step_case(seed, m, d_out, d_in, eta, radius):
    rng = np.random.default_rng(seed)
    M = rng.standard_normal((m, d_out, d_in))
    return {"M": M, "x": rng.standard_normal((m, d_in)), "err": rng.standard_normal(d_out),
            "eta": eta, "r": radius}


def _design(T, k, d_in, d_out, seed):
    from lds_toolkit.learning import SpectralFiltering
    from lds_toolkit.teaching.lesson05 import lesson_stream

    _, u, y, _ = lesson_stream(T, n=6, seed=seed, d_in=d_in, d_out=d_out)
    X, base = SpectralFiltering(horizon=T, k=k).design(u, y)
    return {"X": X, "base": base, "y": y}


ALTERNATIVES: dict = {}
MISTAKES: dict = {}

_D1, _D2 = _design(128, 5, 1, 1, 501), _design(96, 3, 2, 1, 502)
HIDDEN = {
    "projected_step": [(1.0, _step_case(503, 2, 1, 2, 0.2, np.inf)),
                       (1.0, _step_case(504, 5, 2, 2, 0.5, 0.8))],
    "best_in_hindsight": [(1.0, _D1), (1.0, _D2)],
    "safe_step": [(1.0, {"X": _D1["X"].copy()}), (1.0, {"X": _D2["X"].copy()})],
}
