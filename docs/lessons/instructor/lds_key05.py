"""Lesson 5's answer key — instructor only: never in the student build, the site or the package.

The format: ``lds_key01.py`` and ``docs/lessons/README.md`` ("Answer keys"). This key holds the
hidden cases; ``SOLUTIONS`` only where a check cannot take other cases, and ``ALTERNATIVES``
are still to be written; ``MISTAKES`` holds at least five common mistakes per graded
answer, each with the words its hint must contain.
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


# ALTERNATIVES (correct answers written another way): at the end of the file

# ----------------------------------------------------------------- common mistakes
# Each wrong answer as a student would write it; the words its hint must contain
# (tests/teaching/test_answer_keys.py runs each through the public check).

def _grad(x, err):
    return 2.0 * np.asarray(err, float)[None, :, None] * np.asarray(x, float)[:, None, :]


def _ball(A, r):
    nrm = np.linalg.norm(A, axis=(1, 2))
    return A * np.minimum(1.0, r / np.maximum(nrm, 1e-300))[:, None, None]


def step_no_projection(M, x, err, eta, r):
    return np.asarray(M, float) - eta * _grad(x, err)


def step_whole_ball(M, x, err, eta, r):
    raw = np.asarray(M, float) - eta * _grad(x, err)
    return raw * min(1.0, r / np.linalg.norm(raw))


def step_no_two(M, x, err, eta, r):
    return _ball(np.asarray(M, float) - eta * _grad(x, err) / 2, r)


def step_uphill(M, x, err, eta, r):
    return _ball(np.asarray(M, float) + eta * _grad(x, err), r)


def step_projected_first(M, x, err, eta, r):
    return _ball(np.asarray(M, float), r) - eta * _grad(x, err)


def step_clipped(M, x, err, eta, r):
    return np.clip(np.asarray(M, float) - eta * _grad(x, err), -r, r)


def step_always_rescaled(M, x, err, eta, r):
    raw = np.asarray(M, float) - eta * _grad(x, err)
    return raw * (r / np.linalg.norm(raw, axis=(1, 2)))[:, None, None]


def _W(X, base, y, sign=-1.0, shift=False):
    X, base, y = (np.asarray(a, float) for a in (X, base, y))
    n, k, d_in = X.shape
    D = X.reshape(n, k * d_in)
    target = y + sign * base
    if shift:
        D, target = D[:-1], target[1:]
    return np.linalg.lstsq(D, target, rcond=None)[0], k, d_in


def best_no_base(X, base, y):
    W, k, d_in = _W(X, 0 * np.asarray(base), y)
    return W.reshape(k, d_in, -1).transpose(0, 2, 1)


def best_blocks_transposed(X, base, y):
    W, k, d_in = _W(X, base, y)
    return W.reshape(k, d_in, -1)


def best_plus_base(X, base, y):
    W, k, d_in = _W(X, base, y, sign=1.0)
    return W.reshape(k, d_in, -1).transpose(0, 2, 1)


def best_misaligned(X, base, y):
    W, k, d_in = _W(X, base, y, shift=True)
    return W.reshape(k, d_in, -1).transpose(0, 2, 1)


def best_w_itself(X, base, y):
    return _W(X, base, y)[0]


def best_ridge(X, base, y):
    X, base, y = (np.asarray(a, float) for a in (X, base, y))
    n, k, d_in = X.shape
    D = X.reshape(n, k * d_in)
    W = np.linalg.solve(D.T @ D + np.eye(k * d_in), D.T @ (y - base))
    return W.reshape(k, d_in, -1).transpose(0, 2, 1)


def _s(X):
    return np.sum(np.asarray(X, float) ** 2, axis=(1, 2))


MISTAKES = {
    "projected_step": [
        ("no projection", step_no_projection, "projection is missing"),
        ("the whole M on one ball", step_whole_ball, "each block"),
        ("the factor 2 of the gradient missing", step_no_two, "factor 2"),
        ("uphill", step_uphill, "uphill"),
        ("projected before the step", step_projected_first, "before the step"),
        ("entries clipped", step_clipped, "box"),
        ("every block rescaled to the sphere", step_always_rescaled, "only blocks outside"),
    ],
    "best_in_hindsight": [
        ("the AR part left out", best_no_base, "autoregressive part is missing"),
        ("blocks transposed", best_blocks_transposed, "transposed"),
        ("y + base", best_plus_base, "y_t + b_t"),
        ("features of round t against y_{t+1}", best_misaligned, "misaligned"),
        ("W returned as it is", best_w_itself, "W itself"),
        ("a ridge term", best_ridge, "ridge"),
    ],
    "safe_step": [
        ("the mean of s_t", lambda X: 1.0 / _s(X).mean(), "mean"),
        ("2 / max s_t", lambda X: 2.0 / _s(X).max(), "factor 2"),
        ("the step that zeroes the error", lambda X: 0.5 / _s(X).max(), "zeroes the error"),
        ("||x_t|| not squared", lambda X: 1.0 / np.sqrt(_s(X)).max(), "squared"),
        ("min s_t", lambda X: 1.0 / _s(X).min(), "largest s_t"),
        ("sum over rounds", lambda X: 1.0 / _s(X).sum(), "not the sum"),
        ("largest single entry", lambda X: 1.0 / np.max(np.asarray(X) ** 2), "single entry"),
    ],
    "interpretation": [
        ('a', 'a', 'nothing blew up: a'),
        ('b', 'b', 'the projection is deterministic:'),
        ('d', 'd', 'at r = ‖B‖‖C‖'),
        ("a number", 2, "one of the letters"),
        ("a sentence", "the certificate", "one of the letters"),
    ],
}

_D1, _D2 = _design(128, 5, 1, 1, 501), _design(96, 3, 2, 1, 502)
HIDDEN = {
    "projected_step": [(1.0, _step_case(503, 2, 1, 2, 0.2, np.inf)),
                       (1.0, _step_case(504, 5, 2, 2, 0.5, 0.8))],
    "best_in_hindsight": [(1.0, _D1), (1.0, _D2)],
    "safe_step": [(1.0, {"X": _D1["X"].copy()}), (1.0, {"X": _D2["X"].copy()})],
    "interpretation": [(1.0, None)],
}


# ----------------------------------------------------------------- correct, written otherwise
# (tests/teaching/test_answer_keys.py: each must pass the public check)


def _step_by_loops(M, x, err, eta, r):
    M, x, err = (np.asarray(a, dtype=float) for a in (M, x, err))
    out = M.copy()
    for i in range(M.shape[0]):
        block = M[i] - eta * 2.0 * np.outer(err, x[i])
        norm = np.linalg.norm(block)
        out[i] = block if norm <= r else block * (r / norm)
    return out


def _hindsight_by_normal_equations(X, base, y):
    X, base, y = (np.asarray(a, dtype=float) for a in (X, base, y))
    n, k, d_in = X.shape
    D = X.reshape(n, k * d_in)
    W = np.linalg.solve(D.T @ D, D.T @ (y - base))
    return np.stack([W[i * d_in:(i + 1) * d_in].T for i in range(k)])


def _safe_step_by_loop(X):
    return 1.0 / max(float(np.sum(np.square(x))) for x in np.asarray(X))


ALTERNATIVES = {
    "projected_step": [("a loop over the blocks", _step_by_loops)],
    "best_in_hindsight": [("the normal equations", _hindsight_by_normal_equations)],
    "safe_step": [("a loop over the rounds", _safe_step_by_loop)],
}
