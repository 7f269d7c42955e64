"""Lesson 3's answer key — instructor only: never in the student build, the site or the package.

The format: ``lds_key01.py`` and ``docs/lessons/README.md`` ("Answer keys"). This key holds the
hidden cases; ``SOLUTIONS`` only where a check cannot take other cases, and ``ALTERNATIVES``
are still to be written; ``MISTAKES`` holds at least five common mistakes per graded
answer, each with the words its hint must contain.
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


# ALTERNATIVES (correct answers written another way): at the end of the file

# ----------------------------------------------------------------- common mistakes
# Each wrong answer as a student would write it; the words its hint must contain
# (tests/teaching/test_answer_keys.py runs each through the public check).

def _solve(L, M, sign=-1.0):
    n = M.shape[0]
    return np.linalg.solve(L, sign * M.reshape(-1, order="F")).reshape(n, n, order="F")


def _am(A, M):
    return np.asarray(A, float), np.asarray(M, float)


# ---- exercise 1: lyapunov_kron(A, M)
def lyap_control_convention(A, M):
    A, M = _am(A, M)
    I = np.eye(A.shape[0])
    return _solve(np.kron(I, A) + np.kron(A, I), M)


def lyap_plus_m(A, M):
    A, M = _am(A, M)
    I = np.eye(A.shape[0])
    return _solve(np.kron(I, A.T) + np.kron(A.T, I), M, +1.0)


def lyap_one_term(A, M):
    A, M = _am(A, M)
    I = np.eye(A.shape[0])
    return _solve(np.kron(I, A.T), M)


def lyap_first_term_a(A, M):          # vec(A P + P A)
    A, M = _am(A, M)
    I = np.eye(A.shape[0])
    return _solve(np.kron(I, A) + np.kron(A.T, I), M)


def lyap_second_term_at(A, M):        # vec(Aᵀ P + P Aᵀ)
    A, M = _am(A, M)
    I = np.eye(A.shape[0])
    return _solve(np.kron(I, A.T) + np.kron(A, I), M)


def lyap_discrete_operator(A, M):
    A, M = _am(A, M)
    return _solve(np.kron(A.T, A.T), M)


# ---- exercise 2: decay_rate(P, M)
def rate_upside_down(P, M):
    return np.linalg.eigvalsh(P)[-1] / np.linalg.eigvalsh(M)[0]


def rate_min_p(P, M):
    return np.linalg.eigvalsh(M)[0] / np.linalg.eigvalsh(P)[0]


def rate_max_m(P, M):
    return np.linalg.eigvalsh(M)[-1] / np.linalg.eigvalsh(P)[-1]


def rate_of_the_norm(P, M):
    return np.linalg.eigvalsh(M)[0] / (2 * np.linalg.eigvalsh(P)[-1])


def rate_diagonals(P, M):
    return np.min(np.diag(M)) / np.max(np.diag(P))


def rate_last_first(P, M):            # eigvalsh ascending read as descending
    return np.linalg.eigvalsh(M)[-1] / np.linalg.eigvalsh(P)[0]


# ---- exercise 3: discrete_lyapunov_kron(A, M)
def dlyap_control_convention(A, M):
    A, M = _am(A, M)
    return _solve(np.kron(A, A) - np.eye(A.shape[0] ** 2), M)


def dlyap_plus_m(A, M):
    A, M = _am(A, M)
    return _solve(np.kron(A.T, A.T) - np.eye(A.shape[0] ** 2), M, +1.0)


def dlyap_continuous_operator(A, M):
    A, M = _am(A, M)
    I = np.eye(A.shape[0])
    return _solve(np.kron(I, A.T) + np.kron(A.T, I), M)


def dlyap_plus_p(A, M):
    A, M = _am(A, M)
    return _solve(np.kron(A.T, A.T) + np.eye(A.shape[0] ** 2), M)


def dlyap_no_identity(A, M):
    A, M = _am(A, M)
    return _solve(np.kron(A.T, A.T), M)


def dlyap_kron_order(A, M):           # (A ⊗ Aᵀ) vec P = vec(Aᵀ P Aᵀ)
    A, M = _am(A, M)
    return _solve(np.kron(A, A.T) - np.eye(A.shape[0] ** 2), M)


MISTAKES = {
    "lyapunov_kron": [
        ("python-control's convention A P + P Aᵀ", lyap_control_convention, "python-control"),
        ("+M on the right-hand side", lyap_plus_m, "sign"),
        ("one of the two terms", lyap_one_term, "two terms"),
        ("A instead of Aᵀ in the first term", lyap_first_term_a, "vec(AᵀP)"),
        ("Aᵀ instead of A in the second term", lyap_second_term_at, "vec(PA)"),
        ("the discrete equation's operator", lyap_discrete_operator, "discrete"),
    ],
    "decay_rate": [
        ("upside down", rate_upside_down, "upside down"),
        ("λ_min(P) in the denominator", rate_min_p, "λ_min(P)"),
        ("λ_max(M) in the numerator", rate_max_m, "λ_max(M)"),
        ("the rate of ‖x‖ instead of V", rate_of_the_norm, "‖x‖"),
        ("diagonal entries for eigenvalues", rate_diagonals, "diagonal"),
        ("eigvalsh read as descending", rate_last_first, "ascending"),
    ],
    "discrete_lyapunov_kron": [
        ("python-control's dlyap convention", dlyap_control_convention, "dlyap"),
        ("+M on the right-hand side", dlyap_plus_m, "sign of M"),
        ("the continuous equation's operator", dlyap_continuous_operator, "continuous"),
        ("+P instead of -P", dlyap_plus_p, "−P"),
        ("the -P term missing", dlyap_no_identity, "missing"),
        ("kron(A, Aᵀ)", dlyap_kron_order, "Zᵀ ⊗ X"),
    ],
    "interpretation": [
        ('a', 'a', "the slider says 'V"),
        ('c', 'c', 'ι is a guaranteed'),
        ('d', 'd', 'above g = 2'),
        ("a number", 2, "one of the letters"),
        ("a sentence", "the certificate", "one of the letters"),
    ],
}

HIDDEN = {
    "lyapunov_kron": [(1.0, _pair(301, 2, False)), (1.0, _pair(302, 5, False))],
    "discrete_lyapunov_kron": [(1.0, _pair(303, 3, True)), (1.0, _pair(304, 5, True))],
    "decay_rate": [(1.0, _pd(305, 2)), (1.0, _pd(306, 4))],
    "interpretation": [(1.0, None)],
}


# ----------------------------------------------------------------- correct, written otherwise
# (tests/teaching/test_answer_keys.py: each must pass the public check)


def _lyapunov_by_scipy(A, M):
    from scipy.linalg import solve_continuous_lyapunov

    return solve_continuous_lyapunov(np.asarray(A).T, -np.asarray(M))


def _lyapunov_row_vec(A, M):
    """The row-stacked vec: vec_r(A^T P + P A) = (A^T ⊗ I + I ⊗ A^T) vec_r(P)."""
    A, M = np.asarray(A, float), np.asarray(M, float)
    n = A.shape[0]
    L = np.kron(A.T, np.eye(n)) + np.kron(np.eye(n), A.T)
    return np.linalg.solve(L, -M.reshape(-1)).reshape(n, n)


def _discrete_by_scipy(A, M):
    from scipy.linalg import solve_discrete_lyapunov

    return solve_discrete_lyapunov(np.asarray(A).T, np.asarray(M))


def _discrete_by_series(A, M):
    """P = sum_k (A^T)^k M A^k, summed until the terms vanish (A is stable)."""
    A, M = np.asarray(A, float), np.asarray(M, float)
    P, term = np.zeros_like(M), M.copy()
    for _ in range(20000):
        P += term
        term = A.T @ term @ A
        if np.abs(term).max() < 1e-18 * np.abs(P).max():
            break
    return P


def _rate_by_eigvals(P, M):
    return float(min(np.linalg.eigvals(M).real) / max(np.linalg.eigvals(P).real))


ALTERNATIVES = {
    "lyapunov_kron": [("scipy's solve_continuous_lyapunov(A.T, -M)", _lyapunov_by_scipy),
                      ("the row-stacked vec", _lyapunov_row_vec)],
    "discrete_lyapunov_kron": [("scipy's solve_discrete_lyapunov(A.T, M)", _discrete_by_scipy),
                               ("the series sum_k (A^T)^k M A^k", _discrete_by_series)],
    "decay_rate": [("np.linalg.eigvals, real parts", _rate_by_eigvals)],
}
