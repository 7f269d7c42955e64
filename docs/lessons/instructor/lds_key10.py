"""Lesson 10's answer key — instructor only: never in the student build, the site or the package.

The format is lesson 1's (``lds_key01.py``): ``SOLUTIONS``, ``ALTERNATIVES`` (correct answers
written another way: each must pass), ``MISTAKES`` (at least five per exercise: each must get
"not yet" with the words given), ``HIDDEN`` (the autograder's cases with their points).
"""

from __future__ import annotations

import numpy as np
import scipy.linalg as sla

#: Seconds per call of a student's function in the hidden tests.
TIME_LIMIT = 5.0


def _floats(*arrays):
    return tuple(np.atleast_2d(np.asarray(m, dtype=float)) for m in arrays)


# ----------------------------------------------------------------- reference solutions


def lqr_gain(A, B, Q, R):
    A, B, Q, R = _floats(A, B, Q, R)
    P = sla.solve_discrete_are(A, B, Q, R)
    return np.linalg.solve(R + B.T @ P @ B, B.T @ P @ A)


def feedback_cost(A, B, K, Q, R, x0):
    A, B, K, Q, R = _floats(A, B, K, Q, R)
    x0 = np.asarray(x0, dtype=float).reshape(-1)
    X = sla.solve_discrete_lyapunov((A - B @ K).T, Q + K.T @ R @ K)
    return float(x0 @ X @ x0)


interpretation = "b"

SOLUTIONS = {"lqr_gain": lqr_gain, "feedback_cost": feedback_cost,
             "interpretation": interpretation}


# ----------------------------------------------------------------- correct, written otherwise


def _gain_by_iteration(A, B, Q, R):
    """Value iteration: the Riccati recursion from P = Q to its fixed point."""
    A, B, Q, R = _floats(A, B, Q, R)
    P = Q.copy()
    for _ in range(200_000):
        K = np.linalg.solve(R + B.T @ P @ B, B.T @ P @ A)
        P_next = Q + A.T @ P @ (A - B @ K)
        if np.max(np.abs(P_next - P)) <= 1e-14 * max(1.0, np.max(np.abs(P))):
            P = P_next
            break
        P = P_next
    return np.linalg.solve(R + B.T @ P @ B, B.T @ P @ A)


def _gain_by_dlqr(A, B, Q, R):
    import control

    return control.dlqr(A, B, Q, R)[0]


def _cost_by_sum(A, B, K, Q, R, x0):
    """The series summed along a simulation until the terms vanish."""
    A, B, K, Q, R = _floats(A, B, K, Q, R)
    x = np.asarray(x0, dtype=float).reshape(-1)
    total = 0.0
    for _ in range(10**6):
        u = -K @ x
        term = x @ Q @ x + u @ R @ u
        total += term
        if term <= 1e-13 * total:
            break
        x = A @ x + B @ u
    return total


def _cost_by_kron(A, B, K, Q, R, x0):
    """The Lyapunov equation as one linear system (vec X)."""
    A, B, K, Q, R = _floats(A, B, K, Q, R)
    Acl = A - B @ K
    n = A.shape[0]
    X = np.linalg.solve(np.eye(n * n) - np.kron(Acl.T, Acl.T),
                        (Q + K.T @ R @ K).reshape(-1)).reshape(n, n)
    x0 = np.asarray(x0, dtype=float).reshape(-1)
    return x0 @ X @ x0


ALTERNATIVES = {
    "lqr_gain": [("value iteration", _gain_by_iteration), ("python-control's dlqr",
                                                            _gain_by_dlqr)],
    "feedback_cost": [("the series summed", _cost_by_sum), ("Kronecker products",
                                                             _cost_by_kron),
                      ("a 1 x 1 array", lambda A, B, K, Q, R, x0: np.array(
                          [[feedback_cost(A, B, K, Q, R, x0)]]))],
    "interpretation": [("upper case, brackets", "(B)")],
}


# ----------------------------------------------------------------- common mistakes


def _dare(A, B, Q, R):
    A, B, Q, R = _floats(A, B, Q, R)
    return A, B, Q, R, sla.solve_discrete_are(A, B, Q, R)


def _sign(A, B, Q, R):
    return -lqr_gain(A, B, Q, R)


def _no_a(A, B, Q, R):
    A, B, Q, R, P = _dare(A, B, Q, R)
    return np.linalg.solve(R + B.T @ P @ B, B.T @ P)


def _continuous_formula(A, B, Q, R):
    A, B, Q, R, P = _dare(A, B, Q, R)
    return np.linalg.solve(R, B.T @ P @ A)


def _continuous_lqr(A, B, Q, R):
    A, B, Q, R = _floats(A, B, Q, R)
    return np.linalg.solve(R, B.T @ sla.solve_continuous_are(A, B, Q, R))


def _one_step(A, B, Q, R):
    A, B, Q, R = _floats(A, B, Q, R)
    return np.linalg.solve(R + B.T @ Q @ B, B.T @ Q @ A)


def _swapped(A, B, Q, R):
    A, B, Q, R = _floats(A, B, Q, R)
    P = sla.solve_discrete_are(A, B, R, Q)
    return np.linalg.solve(R + B.T @ P @ B, B.T @ P @ A)


def _no_input_cost(A, B, K, Q, R, x0):
    return feedback_cost(A, B, K, Q, 0 * np.asarray(R, float), x0)


def _from_one(A, B, K, Q, R, x0):
    A, B, K, Q, R = _floats(A, B, K, Q, R)
    x = np.asarray(x0, dtype=float).reshape(-1)
    return feedback_cost(A, B, K, Q, R, x) - x @ (Q + K.T @ R @ K) @ x


def _half(A, B, K, Q, R, x0):
    return 0.5 * feedback_cost(A, B, K, Q, R, x0)


def _scipy_convention(A, B, K, Q, R, x0):
    A, B, K, Q, R = _floats(A, B, K, Q, R)
    X = sla.solve_discrete_lyapunov(A - B @ K, Q + K.T @ R @ K)
    x0 = np.asarray(x0, dtype=float).reshape(-1)
    return float(x0 @ X @ x0)


def _optimal_instead(A, B, K, Q, R, x0):
    import control

    S = control.dlqr(*_floats(A, B, Q, R))[1]
    x0 = np.asarray(x0, dtype=float).reshape(-1)
    return float(x0 @ S @ x0)


MISTAKES = {
    "lqr_gain": [
        ("the sign of u = -K x", _sign, "sign is flipped"),
        ("A left out", _no_a, "A is missing"),
        ("the continuous-time formula with the DARE", _continuous_formula,
         "continuous-time form"),
        ("continuous-time LQR", _continuous_lqr, "continuous-time LQR"),
        ("one step of the recursion from P = Q", _one_step, "fixed point"),
        ("Q and R swapped", _swapped, "swapped"),
        ("Kᵀ", lambda A, B, Q, R: lqr_gain(A, B, Q, R).T, "transpose"),
    ],
    "feedback_cost": [
        ("the input's cost left out", _no_input_cost, "input's cost"),
        ("the sum from k = 1", _from_one, "starts at k = 0"),
        ("a factor 1/2", _half, "factor 1/2"),
        ("scipy's convention", _scipy_convention, "pass a = (A - B K)ᵀ"),
        ("the optimal cost of dlqr", _optimal_instead, "cost of the given K"),
        ("the cost as a matrix", lambda A, B, K, Q, R, x0: sla.solve_discrete_lyapunov(
            (np.atleast_2d(A) - np.atleast_2d(B) @ np.atleast_2d(K)).T,
            np.atleast_2d(Q)), "expected one number"),
    ],
    "interpretation": [
        ("a", "a", "cheap input"), ("c", "c", "strictly inside"), ("d", "d", "stabilisable"),
        ("a number", 0.0, "one of the letters"), ("a sentence", "none", "one of the letters"),
    ],
}


# ----------------------------------------------------------------- hidden cases


def _hidden_system(seed, n, m, rho):
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((n, n))
    A *= rho / max(abs(np.linalg.eigvals(A)))
    G = rng.standard_normal((n, n))
    return {"A": A, "B": rng.standard_normal((n, m)), "Q": G @ G.T + 0.1 * np.eye(n),
            "R": np.diag(rng.uniform(0.1, 2.0, m))}


def _hidden_cost(seed, n, m, rho):
    case = _hidden_system(seed, n, m, rho)
    K = 0.8 * lqr_gain(**case)  # a gain of one's own, near the optimum: a stable loop
    return dict(case, K=K, x0=np.random.default_rng(seed + 1).standard_normal(n))


HIDDEN = {
    "lqr_gain": [(1.0, _hidden_system(1001, 3, 1, 0.95)), (1.0, _hidden_system(1002, 4, 2, 1.3)),
                 (1.0, _hidden_system(1003, 2, 2, 0.5))],
    "feedback_cost": [(1.0, _hidden_cost(1011, 3, 1, 0.9)), (1.0, _hidden_cost(1012, 4, 2, 1.1))],
    "interpretation": [(1.0, None)],
}
