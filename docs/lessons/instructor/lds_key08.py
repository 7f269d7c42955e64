"""Lesson 8's answer key — instructor only: never in the student build, the site or the package.

The format: ``lds_key01.py`` and ``docs/lessons/README.md`` ("Answer keys"). This key holds the
hidden cases; ``SOLUTIONS`` only where a check cannot take other cases, and ``ALTERNATIVES``
are still to be written; ``MISTAKES`` holds at least five common mistakes per graded
answer, each with the words its hint must contain.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg as sla

import lds_toolkit as lt

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


# ALTERNATIVES (correct answers written another way): at the end of the file

# ----------------------------------------------------------------- common mistakes
# Each wrong answer as a student would write it; the words its hint must contain
# (tests/teaching/test_answer_keys.py runs each through the public check).

LABELS = ("A-left", "B", "A-right", "outside")


def _c(z):
    return np.asarray(z, dtype=complex)


def _P(A):
    A = np.asarray(A, float)
    return A, sla.solve_discrete_lyapunov(A.T, np.eye(A.shape[0]))


def _counts(values, T, q):
    labels = lt.eigenvalue_regions(T, q).classify(np.asarray(values))
    return {k: int(np.sum(labels == k)) for k in LABELS}


MISTAKES = {
    "bilinear_modes": [
        ("zero-order hold exp(z)", lambda z: np.exp(_c(z)), "zero-order hold"),
        ("forward Euler 1 + z", lambda z: 1 + _c(z), "forward Euler"),
        ("no halves", lambda z: (1 + _c(z)) / (1 - _c(z)), "halves are missing"),
        ("backward Euler", lambda z: 1 / (1 - _c(z)), "backward Euler"),
        ("swapped", lambda z: (1 - _c(z) / 2) / (1 + _c(z) / 2), "swapped"),
        ("the conjugate", lambda z: np.conj((1 + _c(z) / 2) / (1 - _c(z) / 2)), "conjugate"),
    ],
    "certificate_rate": [
        ("spectral radius", lambda A: float(max(abs(np.linalg.eigvals(A)))), "spectral radius"),
        ("scipy's convention with A", lambda A: float(np.sqrt(sla.eigh(
            (lambda P: np.asarray(A).T @ P @ np.asarray(A))(sla.solve_discrete_lyapunov(
                np.asarray(A, float), np.eye(len(A)))),
            sla.solve_discrete_lyapunov(np.asarray(A, float), np.eye(len(A))),
            eigvals_only=True)[-1])), "a = A.T"),
        ("ρ²", lambda A: (lambda A, P: float(sla.eigh(A.T @ P @ A, P, eigvals_only=True)[-1]))(
            *_P(A)), "that is ρ²"),
        ("eigh(P, AᵀPA), the pencil swapped", lambda A: (lambda A, P: float(np.sqrt(sla.eigh(
            P, A.T @ P @ A, eigvals_only=True)[-1])))(*_P(A)), "not eigh(P, Aᵀ P A)"),
        ("λ_max(AᵀPA)", lambda A: (lambda A, P: float(np.sqrt(np.linalg.eigvalsh(
            A.T @ P @ A)[-1])))(*_P(A)), "divide by P"),
        ("‖A‖₂", lambda A: float(np.linalg.norm(np.asarray(A, float), 2)), "Euclidean norm"),
    ],
    "region_counts": [
        ("Re λ", lambda eigenvalues, T, q: _counts(np.real(eigenvalues), T, q), "not Re λ"),
        ("empty regions left out", lambda eigenvalues, T, q: {
            k: v for k, v in _counts(np.abs(eigenvalues), T, q).items() if v}, "0 for an empty"),
        ("a pair counted once", lambda eigenvalues, T, q: _counts(
            np.abs(np.asarray(eigenvalues)[np.imag(eigenvalues) >= 0]), T, q), "two modes"),
        ("|λ|²", lambda eigenvalues, T, q: _counts(np.abs(eigenvalues) ** 2, T, q), "|λ|²"),
        ("|Re λ|", lambda eigenvalues, T, q: _counts(np.abs(np.real(eigenvalues)), T, q),
         "|Re λ|"),
        ("a list", lambda eigenvalues, T, q: list(_counts(np.abs(eigenvalues), T, q).values()),
         "not a list"),
    ],
    "interpretation": [
        ('a', 'a', 'ρ comes from a'),
        ('b', 'b', 'the impulse error grows'),
        ('d', 'd', 'the bilinear map sends'),
        ("a number", 2, "one of the letters"),
        ("a sentence", "the certificate", "one of the letters"),
    ],
}

HIDDEN = {
    "bilinear_modes": [(1.0, {"z": 0.05 * (-0.5 + 1j * np.pi * np.arange(3))}),
                       (1.0, {"z": np.array([-0.5 + 0j, -2.0 + 1.0j, -1e-3 + 0.5j])})],
    "certificate_rate": [(1.0, _certificate_case(801, 3, 0.95)),
                         (1.0, _certificate_case(802, 5, 0.7))],
    "region_counts": [(1.0, _modes(512, 7 / 8, 803)), (1.0, _modes(2**12, 1 / 2, 804))],
    "interpretation": [(1.0, None)],
}


# ----------------------------------------------------------------- correct, written otherwise
# (tests/teaching/test_answer_keys.py: each must pass the public check)


def _modes_doubled(z):
    z = np.asarray(z, dtype=complex)
    return (2 + z) / (2 - z)


def _rate_by_python_control(A):
    """python-control's dlyap(A, Q) solves A X Aᵀ - X + Q = 0: with Aᵀ it is ours."""
    import control as ct

    A = np.asarray(A, dtype=float)
    P = ct.dlyap(A.T, np.eye(A.shape[0]))
    L = np.linalg.cholesky(P)
    Li = np.linalg.inv(L)
    return float(np.sqrt(np.linalg.eigvalsh(Li @ A.T @ P @ A @ Li.T)[-1]))


def _counts_by_thresholds(eigenvalues, T, q):
    good = 1 - np.log(T) / (8 * T**q)
    marginal = 1 - 1 / (2 * T**1.25)
    out = {"A-left": 0, "B": 0, "A-right": 0, "outside": 0}
    for m in np.abs(np.asarray(eigenvalues)):
        if 0.9 * good <= m <= good:
            out["A-left"] += 1
        elif good < m < marginal:
            out["B"] += 1
        elif marginal <= m <= 1:
            out["A-right"] += 1
        else:
            out["outside"] += 1
    return out


ALTERNATIVES = {
    "bilinear_modes": [("(2 + z) / (2 - z)", _modes_doubled)],
    "certificate_rate": [("python-control's dlyap and a Cholesky factor",
                          _rate_by_python_control)],
    "region_counts": [("the thresholds written out", _counts_by_thresholds)],
}
