"""Lesson 4's answer key — instructor only: never in the student build, the site or the package.

The format: ``lds_key01.py`` and ``docs/lessons/README.md`` ("Answer keys"). This key holds the
hidden cases; ``SOLUTIONS`` only where a check cannot take other cases, and ``ALTERNATIVES``
and ``MISTAKES`` are still to be written (tests/teaching/test_answer_keys.py lists the lessons
whose mistakes are pending).
"""

from __future__ import annotations

import numpy as np

#: Seconds per call of a student's function in the hidden tests.
TIME_LIMIT = 5.0


def _paper():
    from lds_toolkit.control import paper_system

    s = paper_system()
    return {k: np.asarray(getattr(s, k), dtype=float) for k in ("P", "M", "B", "K")}


def _trigger_case(seed, scale, kappa):
    rng = np.random.default_rng(seed)
    return dict(_paper(), x=rng.standard_normal(2), e=scale * rng.standard_normal(2),
                kappa=kappa)


def _replay_case(kappa, horizon, t_end, jitter, seed):
    from lds_toolkit.control import LyapunovRule, paper_system, simulate_etc

    res = simulate_etc(paper_system(), LyapunovRule(kappa), [1.0, 0.0], horizon=horizon,
                       mode="grid")
    times = np.array(res.sample_times, dtype=float)
    times[1:] += np.random.default_rng(seed).uniform(-jitter, jitter, times.size - 1)
    return {"sample_times": times, "inputs": np.array(res.inputs, dtype=float),
            "t_end": t_end}


ALTERNATIVES: dict = {}
MISTAKES: dict = {}

HIDDEN = {
    "trigger": [(0.5, _trigger_case(401, 0.3, 0.4)), (0.5, _trigger_case(402, 1.5, 0.8)),
                (0.5, _trigger_case(403, 0.05, 0.2))],
    "first_event": [(1.0, {"kappa": 0.4, "x0": np.array([0.5, 0.5]), "h": 0.01}),
                    (1.0, {"kappa": 0.7, "x0": np.array([2.0, -1.0]), "h": 0.025})],
    "replay": [(1.0, _replay_case(0.3, 3.0, 3.0, 0.0, 404)),
               (1.0, _replay_case(0.6, 5.0, 4.5, 0.01, 405))],
}
