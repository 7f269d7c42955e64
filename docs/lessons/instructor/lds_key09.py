"""Lesson 9's answer key — instructor only: never in the student build, the site or the package.

The format is lesson 1's (``lds_key01.py``): ``SOLUTIONS``, ``ALTERNATIVES`` (correct answers
written another way: each must pass), ``MISTAKES`` (at least five per exercise: each must get
"not yet" with the words given), ``HIDDEN`` (the autograder's cases with their points).
"""

from __future__ import annotations

import math

import numpy as np
import scipy.linalg as sla

#: Seconds per call of a student's function in the hidden tests.
TIME_LIMIT = 5.0


# ----------------------------------------------------------------- reference solutions


def predictor_gain(A, C, Q, R):
    A, C, Q, R = (np.atleast_2d(np.asarray(m, dtype=float)) for m in (A, C, Q, R))
    P = sla.solve_discrete_are(A.T, C.T, Q, R)
    S = C @ P @ C.T + R
    return np.linalg.solve(S, C @ P @ A.T).T


def kalman_predictions(A, B, C, L, u, y):
    s = np.zeros(A.shape[0])
    out = np.empty_like(np.asarray(y, dtype=float))
    for t in range(len(u)):
        out[t] = C @ s
        s = A @ s + B @ u[t] + L @ (y[t] - out[t])
    return out


def catch_up_time(losses, best_losses, tol):
    d = np.asarray(losses, dtype=float) - np.asarray(best_losses, dtype=float)
    avg = np.cumsum(d) / np.arange(1, len(d) + 1)
    t = math.inf
    for s in range(len(d), 0, -1):
        if avg[s - 1] > tol:
            break
        t = s
    return t


interpretation = "b"

SOLUTIONS = {"predictor_gain": predictor_gain, "kalman_predictions": kalman_predictions,
             "catch_up_time": catch_up_time, "interpretation": interpretation}


# ----------------------------------------------------------------- correct, written otherwise


def _gain_by_iteration(A, C, Q, R):
    """The covariance recursion run to its fixed point."""
    A, C, Q, R = (np.atleast_2d(np.asarray(m, dtype=float)) for m in (A, C, Q, R))
    P = np.zeros_like(A)
    for _ in range(100_000):
        S = C @ P @ C.T + R
        L = A @ P @ C.T @ np.linalg.inv(S)
        P_next = A @ P @ A.T + Q - L @ S @ L.T
        P_next = (P_next + P_next.T) / 2  # an unstable A amplifies any asymmetry
        if np.max(np.abs(P_next - P)) <= 1e-15 * max(1.0, np.max(np.abs(P))):
            break
        P = P_next
    return A @ P @ C.T @ np.linalg.inv(C @ P @ C.T + R)


def _gain_by_plain_iteration(A, C, Q, R):
    """A mistake: the recursion iterated as written, P left to drift from symmetric (blows up
    on the public case with an unstable A)."""
    A, C, Q, R = (np.atleast_2d(np.asarray(m, dtype=float)) for m in (A, C, Q, R))
    P = np.zeros_like(A)
    with np.errstate(all="ignore"):
        for _ in range(5000):
            S = C @ P @ C.T + R
            L = A @ P @ C.T @ np.linalg.inv(S)
            P = A @ P @ A.T + Q - L @ S @ L.T
        return A @ P @ C.T @ np.linalg.inv(C @ P @ C.T + R)


def _gain_by_dlqe(A, C, Q, R):
    import control

    return control.dlqe(A, np.eye(np.shape(A)[0]), C, Q, R)[0]


def _predictions_in_place(A, B, C, L, u, y):
    """Correct, but writes the innovations into y (the check copies every argument)."""
    s = np.zeros(A.shape[0])
    out = np.zeros_like(y)
    for t in range(len(u)):
        out[t] = C @ s
        y[t] -= out[t]
        s = A @ s + B @ u[t] + L @ y[t]
    return out


def _predictions_closed_loop(A, B, C, L, u, y):
    """The predictor as one system: s+ = (A - L C) s + B u + L y."""
    import scipy.signal as sig

    u, y = np.atleast_2d(u), np.atleast_2d(y)
    loop = (A - L @ C, np.hstack([B, L]), C, np.zeros((C.shape[0], B.shape[1] + L.shape[1])),
            1)
    return sig.dlsim(loop, np.hstack([u, y]))[1].reshape(y.shape)


def _catch_up_vectorised(losses, best_losses, tol):
    avg = np.cumsum(np.subtract(losses, best_losses)) / np.arange(1, len(losses) + 1)
    above = np.flatnonzero(avg > tol)
    if above.size == 0:
        return 1
    return float("inf") if above[-1] == len(avg) - 1 else int(above[-1]) + 2


ALTERNATIVES = {
    "predictor_gain": [("the recursion iterated to its fixed point", _gain_by_iteration),
                       ("python-control's dlqe", _gain_by_dlqe)],
    "kalman_predictions": [("writes into y in place", _predictions_in_place),
                           ("scipy.signal.dlsim of the closed loop", _predictions_closed_loop)],
    "catch_up_time": [("vectorised, float('inf')", _catch_up_vectorised),
                      ("numpy's inf", lambda losses, best_losses, tol:
                       np.inf if math.isinf(catch_up_time(losses, best_losses, tol))
                       else catch_up_time(losses, best_losses, tol))],
    "interpretation": [("upper case, brackets", "(B)")],
}


# ----------------------------------------------------------------- common mistakes


def _dare(A, C, Q, R):
    A, C, Q, R = (np.atleast_2d(np.asarray(m, dtype=float)) for m in (A, C, Q, R))
    return A, C, Q, R, sla.solve_discrete_are(A.T, C.T, Q, R)


def _filter_gain(A, C, Q, R):
    A, C, Q, R, P = _dare(A, C, Q, R)
    return P @ C.T @ np.linalg.inv(C @ P @ C.T + R)


def _r_for_s(A, C, Q, R):
    A, C, Q, R, P = _dare(A, C, Q, R)
    return A @ P @ C.T @ np.linalg.inv(R)


def _no_inverse(A, C, Q, R):
    A, C, Q, R, P = _dare(A, C, Q, R)
    return A @ P @ C.T


def _one_step(A, C, Q, R):
    A, C, Q, R = (np.atleast_2d(np.asarray(m, dtype=float)) for m in (A, C, Q, R))
    return A @ Q @ C.T @ np.linalg.inv(C @ Q @ C.T + R)


def _lqr_equation(A, C, Q, R):
    A, C, Q, R = (np.atleast_2d(np.asarray(m, dtype=float)) for m in (A, C, Q, R))
    P = sla.solve_discrete_are(A, C, Q, R)
    return A @ P @ C.T @ np.linalg.inv(C @ P @ C.T + R)


def _q_r_swapped(A, C, Q, R):
    A, C, Q, R = (np.atleast_2d(np.asarray(m, dtype=float)) for m in (A, C, Q, R))
    P = sla.solve_discrete_are(A.T, C.T, R, Q)
    return A @ P @ C.T @ np.linalg.inv(C @ P @ C.T + R)


def _transposed(A, C, Q, R):
    return predictor_gain(A, C, Q, R).T


def _open_loop(A, B, C, L, u, y):
    return kalman_predictions(A, B, C, 0 * np.asarray(L), u, y)


def _no_input(A, B, C, L, u, y):
    return kalman_predictions(A, 0 * np.asarray(B), C, L, u, y)


def _previous_input(A, B, C, L, u, y):
    u = np.asarray(u)
    return kalman_predictions(A, B, C, L, np.vstack([np.zeros_like(u[:1]), u[:-1]]), y)


def _corrected_first(A, B, C, L, u, y):
    s = np.zeros(A.shape[0])
    out = np.empty_like(np.asarray(y, dtype=float))
    for t in range(len(u)):
        s = A @ s + B @ u[t] + L @ (y[t] - C @ s)
        out[t] = C @ s
    return out


def _sign_flipped(A, B, C, L, u, y):
    return kalman_predictions(A, B, C, -np.asarray(L), u, y)


def _first_dip(losses, best_losses, tol):
    avg = np.cumsum(np.subtract(losses, best_losses)) / np.arange(1, len(losses) + 1)
    below = np.flatnonzero(avg <= tol)
    return int(below[0]) + 1 if below.size else math.inf


def _with(avg_of):
    def answer(losses, best_losses, tol):
        avg = avg_of(np.subtract(losses, best_losses))
        t = math.inf
        for s in range(len(avg), 0, -1):
            if avg[s - 1] > tol:
                break
            t = s
        return t
    return answer


def _zero_based(losses, best_losses, tol):
    t = catch_up_time(losses, best_losses, tol)
    return t - 1


def _none_for_never(losses, best_losses, tol):
    t = catch_up_time(losses, best_losses, tol)
    return len(losses) if math.isinf(t) else t


MISTAKES = {
    "predictor_gain": [
        ("the filter gain P Cᵀ S⁻¹", _filter_gain, "filter gain"),
        ("R⁻¹ for S⁻¹", _r_for_s, "invert S"),
        ("no inverse", _no_inverse, "S⁻¹ is missing"),
        ("one step of the recursion from P = Q", _one_step, "fixed point"),
        ("solve_discrete_are(A, C, Q, R)", _lqr_equation, "pass a = Aᵀ"),
        ("Q and R swapped", _q_r_swapped, "swapped"),
        ("Lᵀ", _transposed, "transpose"),
        ("the recursion iterated without keeping P symmetric", _gain_by_plain_iteration,
         "keep P symmetric"),
    ],
    "kalman_predictions": [
        ("no correction: the model open loop", _open_loop, "correction L (y_t − ŷ_t) is "
                                                           "missing"),
        ("B u_t left out", _no_input, "input term B u_t"),
        ("u_{t-1} in the update", _previous_input, "not u_{t-1}"),
        ("corrected before predicting", _corrected_first, "before y_t is seen"),
        ("the correction's sign flipped", _sign_flipped, "sign is flipped"),
    ],
    "catch_up_time": [
        ("the first dip below tol", _first_dip, "stay below"),
        ("cumulative regret", _with(np.cumsum), "not the cumulative"),
        ("single steps", _with(lambda d: d), "single steps"),
        ("the sign of the regret", _with(lambda d: -np.cumsum(d) / np.arange(1, len(d) + 1)),
         "sign is flipped"),
        ("0-based", _zero_based, "count from 1"),
        ("T for never", _none_for_never, "return math.inf"),
    ],
    "interpretation": [
        ("a", "a", "can cancel v_{t-1}"), ("c", "c", "standard deviation"), ("d", "d", "fresh"),
        ("a number", 2, "one of the letters"), ("a sentence", "twice", "one of the letters"),
    ],
}


# ----------------------------------------------------------------- hidden cases


def _hidden_gain(seed, n, d_out, rho):
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((n, n))
    A *= rho / max(abs(np.linalg.eigvals(A)))
    G = rng.standard_normal((n, n))
    H = rng.standard_normal((d_out, d_out))
    return {"A": A, "C": rng.standard_normal((d_out, n)), "Q": 0.1 * G @ G.T,
            "R": 0.2 * H @ H.T + 0.1 * np.eye(d_out)}


def _hidden_predictions(seed, n, d_in, d_out, T):
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((n, n))
    A *= 0.95 / max(abs(np.linalg.eigvals(A)))
    return {"A": A, "B": rng.standard_normal((n, d_in)), "C": rng.standard_normal((d_out, n)),
            "L": 0.3 * rng.standard_normal((n, d_out)), "u": rng.standard_normal((T, d_in)),
            "y": rng.standard_normal((T, d_out))}


def _hidden_catch_up(seed, T, level, tol):
    rng = np.random.default_rng(seed)
    best = rng.uniform(0.5, 1.0, T)
    return {"losses": best + level / np.sqrt(np.arange(1, T + 1)) + 0.1 * rng.standard_normal(T),
            "best_losses": best, "tol": tol}


HIDDEN = {
    "predictor_gain": [(1.0, _hidden_gain(901, 3, 1, 0.9)), (1.0, _hidden_gain(902, 2, 2, 0.99)),
                       (1.0, _hidden_gain(903, 4, 2, 1.2))],
    "kalman_predictions": [(1.0, _hidden_predictions(911, 3, 1, 1, 80)),
                           (1.0, _hidden_predictions(912, 2, 2, 3, 50))],
    "catch_up_time": [(0.5, _hidden_catch_up(921, 500, 2.0, 0.1)),
                      (0.5, _hidden_catch_up(922, 300, 5.0, 0.01)),
                      (0.5, _hidden_catch_up(923, 200, 0.0, 0.5))],
    "interpretation": [(1.0, None)],
}
