"""Lesson 4's answer key — instructor only: never in the student build, the site or the package.

The format: ``lds_key01.py`` and ``docs/lessons/README.md`` ("Answer keys"). This key holds the
hidden cases; ``SOLUTIONS`` only where a check cannot take other cases, and ``ALTERNATIVES``
are still to be written; ``MISTAKES`` holds at least five common mistakes per graded
answer, each with the words its hint must contain.
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import expm

import lds_toolkit as lt

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


# ALTERNATIVES (correct answers written another way): at the end of the file

# ----------------------------------------------------------------- common mistakes
# Each wrong answer as a student would write it; the words its hint must contain
# (tests/teaching/test_answer_keys.py runs each through the public check).

_S = lt.paper_system()
A, B, K, P, M = (np.asarray(m, float) for m in (_S.A, _S.B, _S.K, _S.P, _S.M))


# ---- exercise 1: trigger(x, e, P, M, B, K, kappa)
def trig_no_two(x, e, P, M, B, K, kappa):
    return kappa * x @ M @ x - x @ P @ B @ K @ e


def trig_plus(x, e, P, M, B, K, kappa):
    return kappa * x @ M @ x + 2 * x @ P @ B @ K @ e


def trig_kappa_both(x, e, P, M, B, K, kappa):
    return kappa * (x @ M @ x - 2 * x @ P @ B @ K @ e)


def trig_swapped_cross(x, e, P, M, B, K, kappa):
    return kappa * x @ M @ x - 2 * e @ P @ B @ K @ x


def trig_no_m(x, e, P, M, B, K, kappa):
    return kappa * x @ x - 2 * x @ P @ B @ K @ e


def trig_p_for_m(x, e, P, M, B, K, kappa):
    return kappa * x @ P @ x - 2 * x @ P @ B @ K @ e


# ---- exercise 2: first_event(kappa, x0, h)
def _g(x, e, kappa):
    return kappa * x @ M @ x - 2 * x @ P @ B @ K @ e


def _first(kappa, x0, h, *, step=None, shift=0, e_sign=1.0, hold=True, before=False):
    x0 = np.asarray(x0, float)
    n = x0.size
    Az = np.block([[A, B @ K], [np.zeros((n, 2 * n))]])
    S = expm(Az * h) if step is None else step(Az, h)
    z = np.concatenate([x0, x0])
    for k in range(1, int(round(10.0 / h)) + 1):
        if before:
            x, e = z[:n], z[n:] - z[:n]
            if _g(x, e_sign * e, kappa) <= 0:
                return k * h
        z = S @ z
        if not hold:
            z[n:] = z[:n]
        x, e = z[:n], z[n:] - z[:n]
        if not before and _g(x, e_sign * e, kappa) <= 0:
            return (k + shift) * h
    return np.inf


def first_late(kappa, x0, h):
    return _first(kappa, x0, h, shift=1)


def first_counted_from_zero(kappa, x0, h):
    return _first(kappa, x0, h, shift=-1)


def first_continuous_feedback(kappa, x0, h):
    x0 = np.asarray(x0, float)
    n = x0.size
    Az = np.block([[A + B @ K, np.zeros((n, n))], [np.zeros((n, 2 * n))]])
    S = expm(Az * h)
    z = np.concatenate([x0, x0])
    for k in range(1, int(round(10.0 / h)) + 1):
        z = S @ z
        if _g(z[:n], z[n:] - z[:n], kappa) <= 0:
            return k * h
    return np.inf


def first_euler(kappa, x0, h):
    return _first(kappa, x0, h, step=lambda Az, h: np.eye(len(Az)) + h * Az)


def first_error_sign(kappa, x0, h):
    return _first(kappa, x0, h, e_sign=-1.0)


def first_expm_scaled_outside(kappa, x0, h):
    return _first(kappa, x0, h, step=lambda Az, h: expm(Az) * h)


def first_not_held(kappa, x0, h):
    return _first(kappa, x0, h, hold=False)


# ---- exercise 3: replay(sample_times, inputs, t_end)
def _replay(sample_times, inputs, t_end, *, late=False, last=True, with_input=True,
            outside=False, from_zero=False, x0=(1.0, 0.0)):
    times = np.asarray(sample_times, float)
    u_all = np.atleast_2d(np.asarray(inputs, float))
    if late:
        u_all = np.vstack([np.zeros((1, u_all.shape[1])), u_all[:-1]])
    n, m = A.shape[0], B.shape[1]
    big = np.block([[A, B if with_input else np.zeros_like(B)], [np.zeros((m, n + m))]])
    x = np.array(x0, float)
    ends = np.append(times[1:], t_end)
    spans = list(zip(times, ends, u_all))
    if not last:
        spans = spans[:-1]
    for start, end, u in spans:
        end = min(end, t_end)
        if end > start:
            s = end if from_zero else end - start
            E = expm(big) * s if outside else expm(big * s)
            x = (E @ np.concatenate([x, u]))[:n]
    return x


def replay_late(sample_times, inputs, t_end):
    return _replay(sample_times, inputs, t_end, late=True)


def replay_last_not_held(sample_times, inputs, t_end):
    return _replay(sample_times, inputs, t_end, last=False)


def replay_no_input(sample_times, inputs, t_end):
    return _replay(sample_times, inputs, t_end, with_input=False)


def replay_scaled_outside(sample_times, inputs, t_end):
    return _replay(sample_times, inputs, t_end, outside=True)


def replay_spans_from_zero(sample_times, inputs, t_end):
    return _replay(sample_times, inputs, t_end, from_zero=True)


def replay_from_rest(sample_times, inputs, t_end):
    return _replay(sample_times, inputs, t_end, x0=(0.0, 0.0))


MISTAKES = {
    "trigger": [
        ("the factor 2 missing", trig_no_two, "factor 2"),
        ("+ for the cross term", trig_plus, "subtracts"),
        ("κ on both terms", trig_kappa_both, "κ multiplies"),
        ("eᵀPBKx for xᵀPBKe", trig_swapped_cross, "not symmetric"),
        ("|x|² for xᵀMx", trig_no_m, "xᵀMx"),
        ("xᵀPx for xᵀMx", trig_p_for_m, "xᵀPx"),
    ],
    "first_event": [
        ("one step late", first_late, "step after it"),
        ("steps counted from 0", first_counted_from_zero, "early"),
        ("u = K x(t) flowed instead of the held K x(t_i)", first_continuous_feedback,
         "held at K x(t_i)"),
        ("forward Euler for the exact flow", first_euler, "forward Euler"),
        ("e = x - x_i", first_error_sign, "e = x(t_i) − x"),
        ("expm(A_z) h for expm(A_z h)", first_expm_scaled_outside, "inside the exponential"),
        ("x_i not held between events", first_not_held, "must stay constant"),
    ],
    "replay": [
        ("each input one interval late", replay_late, "late"),
        ("the last input not held to t_end", replay_last_not_held, "t_end"),
        ("the input left out of the flow", replay_no_input, "input"),
        ("expm(big) s for expm(big s)", replay_scaled_outside, "inside the exponential"),
        ("spans measured from 0", replay_spans_from_zero, "t_{i+1} − t_i"),
        ("x(0) = 0", replay_from_rest, "x(0) = (1, 0)"),
    ],
    "interpretation": [
        ('b', 'b', 'the replay is exact'),
        ('c', 'c', "the recorded loop's x"),
        ('d', 'd', 'move κ down to'),
        ("a number", 2, "one of the letters"),
        ("a sentence", "the certificate", "one of the letters"),
    ],
}

HIDDEN = {
    "trigger": [(0.5, _trigger_case(401, 0.3, 0.4)), (0.5, _trigger_case(402, 1.5, 0.8)),
                (0.5, _trigger_case(403, 0.05, 0.2))],
    "first_event": [(1.0, {"kappa": 0.4, "x0": np.array([0.5, 0.5]), "h": 0.01}),
                    (1.0, {"kappa": 0.7, "x0": np.array([2.0, -1.0]), "h": 0.025})],
    "replay": [(1.0, _replay_case(0.3, 3.0, 3.0, 0.0, 404)),
               (1.0, _replay_case(0.6, 5.0, 4.5, 0.01, 405))],
    "interpretation": [(1.0, None)],
}


# ----------------------------------------------------------------- correct, written otherwise
# (tests/teaching/test_answer_keys.py: each must pass the public check)


def _trigger_by_einsum(x, e, P, M, B, K, kappa):
    x, e = np.asarray(x, float), np.asarray(e, float)
    return float(kappa * np.einsum("i,ij,j", x, M, x)
                 - 2 * np.einsum("i,ij,j", x, np.asarray(P) @ np.asarray(B) @ np.asarray(K), e))


def _first_event_inline(kappa, x0, h):
    """The trigger written inline (no call of trigger), the state and the held state apart."""
    from lds_toolkit.control import paper_system

    s = paper_system()
    A, B, K, P, M = (np.asarray(m, float) for m in (s.A, s.B, s.K, s.P, s.M))
    n = A.shape[0]
    flow = expm(np.block([[A, B @ K], [np.zeros((n, 2 * n))]]) * h)
    x, held = np.asarray(x0, float), np.asarray(x0, float)
    steps = int(round(10.0 / h))
    for k in range(1, steps + 1):
        z = flow @ np.concatenate([x, held])
        x, held = z[:n], z[n:]
        e = held - x
        if kappa * x @ M @ x - 2 * x @ P @ B @ K @ e <= 0:
            return k * h
    return float("inf")


def _replay_by_variation_of_constants(sample_times, inputs, t_end):
    """x(t+s) = e^{As} x(t) + (int_0^s e^{Ar} dr) B u, the integral from one block
    exponential per interval: the same maths, organised another way."""
    from lds_toolkit.control import paper_system

    s = paper_system()
    A, B = np.asarray(s.A, float), np.asarray(s.B, float)
    n = A.shape[0]
    times = list(np.asarray(sample_times, float)) + [float(t_end)]
    inputs = np.atleast_2d(np.asarray(inputs, float))
    x = np.array([1.0, 0.0])
    for i, u in enumerate(inputs):
        span = min(times[i + 1], t_end) - times[i]
        if span <= 0:
            continue
        E = expm(np.block([[A, np.eye(n)], [np.zeros((n, 2 * n))]]) * span)
        x = E[:n, :n] @ x + E[:n, n:] @ B @ u
    return x


ALTERNATIVES = {
    "trigger": [("einsum", _trigger_by_einsum)],
    "first_event": [("the trigger written inline", _first_event_inline)],
    "replay": [("variation of constants", _replay_by_variation_of_constants)],
}
