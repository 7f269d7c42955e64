"""Lesson 6's answer key — instructor only: never in the student build, the site or the package.

The format: ``lds_key01.py`` and ``docs/lessons/README.md`` ("Answer keys"). This key holds the
hidden cases; ``SOLUTIONS`` only where a check cannot take other cases, and ``ALTERNATIVES``
are still to be written; ``MISTAKES`` holds at least five common mistakes per graded
answer, each with the words its hint must contain.
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


# ALTERNATIVES (correct answers written another way): at the end of the file

# ----------------------------------------------------------------- common mistakes
# Each wrong answer as a student would write it; the words its hint must contain
# (tests/teaching/test_answer_keys.py runs each through the public check).

EPS = np.finfo(float).eps


def _n(T, extra=0):
    return np.add.outer(np.arange(T + extra), np.arange(T + extra)).astype(float)


def _eig(H, k):
    w, v = np.linalg.eigh(H)
    w, v = w[::-1][:k], v[:, ::-1][:, :k]
    return w, v * np.sign(v[0])


def _phi_mu(phi, alpha):
    phi = np.asarray(phi, float)
    T = phi.shape[0]
    mu = (1 - alpha) * alpha ** np.arange(T)
    return phi, mu, mu - phi @ (phi.T @ mu)


MISTAKES = {
    "hankel_matrix": [
        ("no weight (1 - a)^2", lambda T: 1 / (_n(T) + 1), "weight"),
        ("one factor (1 - a)", lambda T: 1 / ((_n(T) + 1) * (_n(T) + 2)), "only one factor"),
        ("n from 1", lambda T: 2 / ((_n(T) + 2) * (_n(T) + 3) * (_n(T) + 4)), "counted from 1"),
        ("no factor 2", lambda T: 1 / ((_n(T) + 1) * (_n(T) + 2) * (_n(T) + 3)), "factor 2"),
        ("(n+2)! for (n+3)!", lambda T: 2 / ((_n(T) + 1) * (_n(T) + 2)), "three factors"),
        ("T + 1 rows", lambda T: 2 / ((_n(T, 1) + 1) * (_n(T, 1) + 2) * (_n(T, 1) + 3)),
         "not T + 1"),
    ],
    "top_filters": [
        ("ascending order", lambda H, k: tuple(np.linalg.eigh(H)[i][..., -k:]
                                               for i in (0, 1)), "ascending order"),
        ("the k smallest", lambda H, k: (np.linalg.eigh(H)[0][:k][::-1],
                                         np.linalg.eigh(H)[1][:, :k][:, ::-1]), "smallest"),
        ("columns left ascending", lambda H, k: (_eig(H, k)[0], _eig(H, k)[1][:, ::-1]),
         "columns must be reversed"),
        ("no sign convention", lambda H, k: (np.linalg.eigh(H)[0][::-1][:k],
                                             -_eig(H, k)[1]), "sign convention"),
        ("filters as rows", lambda H, k: (_eig(H, k)[0], _eig(H, k)[1].T), "these are rows"),
        ("k - 1 values", lambda H, k: (np.linalg.eigh(H)[0][-1:-k:-1], _eig(H, k)[1]),
         "stops one short"),
    ],
    "projection_residual": [
        ("not relative", lambda phi, alpha: np.linalg.norm(_phi_mu(phi, alpha)[2]),
         "not divided"),
        ("the part inside", lambda phi, alpha: (lambda p, m, r: np.linalg.norm(p.T @ m)
                                                / np.linalg.norm(m))(*_phi_mu(phi, alpha)),
         "part inside the span"),
        ("squared norms", lambda phi, alpha: (lambda p, m, r: (r @ r) / (m @ m))(
            *_phi_mu(phi, alpha)), "squared norms"),
        ("mu reversed", lambda phi, alpha: (lambda p, m, r: np.linalg.norm(
            m[::-1] - p @ (p.T @ m[::-1])) / np.linalg.norm(m))(*_phi_mu(phi, alpha)),
         "lag 0 first"),
        ("1 - inside", lambda phi, alpha: (lambda p, m, r: 1 - np.linalg.norm(p.T @ m)
                                           / np.linalg.norm(m))(*_phi_mu(phi, alpha)),
         "Pythagoras"),
        ("divided by the inside part", lambda phi, alpha: (lambda p, m, r: np.linalg.norm(r)
                                                           / np.linalg.norm(p.T @ m))(
            *_phi_mu(phi, alpha)), "whole vector"),
    ],
    "resolvable_count": [
        ("eps itself", lambda sigma: int(np.sum(sigma / sigma[0] >= EPS)), "eps itself"),
        ("not relative", lambda sigma: int(np.sum(sigma >= 100 * EPS)), "relative"),
        ("float32 eps", lambda sigma: int(np.sum(sigma / sigma[0] >= 100 * np.finfo(
            np.float32).eps)), "float32"),
        ("sqrt(eps)", lambda sigma: int(np.sum(sigma / sigma[0] >= np.sqrt(EPS))), "sqrt(eps)"),
        ("argmax of below", lambda sigma: int(np.argmax(sigma / sigma[0] < 100 * EPS)),
         "argmax"),
        ("counts those below", lambda sigma: int(np.sum(sigma / sigma[0] < 100 * EPS)),
         "below the floor"),
    ],
    "interpretation": [
        ('a', 'a', 'look at the full-context'),
        ('c', 'c', 'k = 8 is'),
        ('d', 'd', 'the error bound of'),
        ("a number", 2, "one of the letters"),
        ("a sentence", "the certificate", "one of the letters"),
    ],
}

HIDDEN = {
    "hankel_matrix": [(0.5, {"T": 2}), (0.5, {"T": 17}), (0.5, {"T": 100})],
    "top_filters": [(1.0, {"H": _hankel(32), "k": 4}), (1.0, {"H": _hankel(100), "k": 5})],
    "projection_residual": [(0.5, {"phi": _filters(128, 6), "alpha": a})
                            for a in (0.3, 0.95, 0.999)],
    "resolvable_count": [(1.0, {"sigma": np.linalg.eigvalsh(_hankel(128))[::-1].copy()}),
                         (1.0, {"sigma": 7.0 * 0.3 ** np.arange(40)})],
    "interpretation": [(1.0, None)],
}


# ----------------------------------------------------------------- correct, written otherwise
# (tests/teaching/test_answer_keys.py: each must pass the public check)


def _hankel_by_loops(T):
    Z = np.empty((T, T))
    for i in range(T):
        for j in range(T):
            s = i + j
            Z[i, j] = 2.0 / (s**3 + 6 * s**2 + 11 * s + 6)
    return Z


def _hankel_by_integral(T):
    """int_0^1 (1-a)^2 a^(i+j) da = B(i+j+1, 3), by scipy's beta function."""
    from scipy.special import beta

    n = np.arange(T)[:, None] + np.arange(T)[None, :]
    return beta(n + 1, 3)


def _filters_by_scipy_subset(H, k):
    import scipy.linalg as sla

    T = np.asarray(H).shape[0]
    w, v = sla.eigh(H, subset_by_index=[T - k, T - 1])
    w, v = w[::-1], v[:, ::-1]
    return w, v / np.where(v[0] < 0, -1.0, 1.0)


def _residual_by_lstsq(phi, alpha):
    phi = np.asarray(phi, float)
    mu = (1 - alpha) * alpha ** np.arange(phi.shape[0])
    coef = np.linalg.lstsq(phi, mu, rcond=None)[0]
    return float(np.linalg.norm(mu - phi @ coef) / np.linalg.norm(mu))


def _count_by_loop(sigma):
    floor = 100 * np.finfo(np.float64).eps
    return sum(1 for s in sigma if s / max(sigma) >= floor)


ALTERNATIVES = {
    "hankel_matrix": [("two loops, the cubic expanded", _hankel_by_loops),
                      ("the beta function", _hankel_by_integral)],
    "top_filters": [("scipy's eigh with subset_by_index", _filters_by_scipy_subset)],
    "projection_residual": [("least squares", _residual_by_lstsq)],
    "resolvable_count": [("a loop", _count_by_loop)],
}
