"""Lesson 8's answer key — instructor only: never in the student build, the site or the package.

The format: ``lds_key01.py`` and ``docs/lessons/README.md`` ("Answer keys"). This key holds the
hidden cases; ``SOLUTIONS`` only where a check cannot take other cases, and ``ALTERNATIVES``
and ``MISTAKES`` are still to be written (tests/teaching/test_answer_keys.py lists the lessons
whose mistakes are pending).
"""

from __future__ import annotations

import numpy as np

#: Seconds per call of a student's function in the hidden tests.
TIME_LIMIT = 5.0


def _certificate_case(seed, n, radius):
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((n, n)) + 3 * np.triu(rng.standard_normal((n, n)), 1)
    return {"A": A * radius / max(abs(np.linalg.eigvals(A)))}


def _modes(T, q, seed):
    from lds_toolkit.systems import eigenvalue_regions

    r = eigenvalue_regions(T, q)
    rng = np.random.default_rng(seed)
    mods = [0.3, 0.5 * (r.region_a[0].low + r.good_threshold),
            0.5 * (r.good_threshold + r.marginal_threshold), 1.0, 1.2]
    lam = np.array([m * np.exp(1j * rng.uniform(0, np.pi)) for m in mods])
    return {"eigenvalues": np.r_[lam, np.conj(lam[:2])], "T": T, "q": q}


ALTERNATIVES: dict = {}
MISTAKES: dict = {}

HIDDEN = {
    "bilinear_modes": [(1.0, {"z": 0.05 * (-0.5 + 1j * np.pi * np.arange(3))}),
                       (1.0, {"z": np.array([-0.5 + 0j, -2.0 + 1.0j, -1e-3 + 0.5j])})],
    "certificate_rate": [(1.0, _certificate_case(801, 3, 0.95)),
                         (1.0, _certificate_case(802, 5, 0.7))],
    "region_counts": [(1.0, _modes(512, 7 / 8, 803)), (1.0, _modes(2**12, 1 / 2, 804))],
}
