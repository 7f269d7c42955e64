r"""Private: fit the spectral filters by sums of real exponentials (the engine of
:func:`lds_toolkit.learning.filters_lds.filters_as_lds`).

Problem. Given the filters ``phi`` (T, k), find few decays 0 < alpha_1 .. alpha_n < 1 and
coefficients c (n, k) with, for every tap t >= 1 (tap 0 is carried exactly by D),

    phi[t, l] ≈ sum_i c[i, l] alpha_i^{t-1},

to a relative L2 error per filter of at most ``tol``. Steps:

1. **Rows.** The sum over the L = T - 1 taps is replaced by a weighted sum over a few rows
   (:func:`sample_rows`): every tap j < 1024, then an integer grid whose spacing grows like
   j / 128, with trapezoid weights plus 1/2 at both ends (Euler-Maclaurin:
   sum_{j=a}^{b} g(j) = int_a^b g + (g(a) + g(b)) / 2 + O(g'(b) - g'(a)) / 12). Beyond
   j = 1024 every function in play varies on a scale of at least ~j / 40 (an exponential
   e^{-s j} still alive at j has s j < 40), so the weighted sum of squares is within ~1e-3
   of the true one for every vector of the span of the exponentials and the filters: the
   rows are a subspace embedding, which changes a least-squares residual by that factor
   only, not by an additive error. At T = 2^20 the 2^20 taps become about 1900 rows. Every
   returned fit is checked on all T taps (:func:`exact_errors`).
2. **Dictionary.** n0 log-spaced decays alpha = e^{-s}, s from 0.3 / T to 30, columns
   normalised, least squares (``lstsq``, rcond 1e-16, float64); n0 grows (64, 96, 128, ...)
   until the worst filter error is below ``tol / 10``.
3. **Greedy pruning.** With the QR factorisation [E Y] = Q [R_E R_Y] every least-squares fit on
   a subset S of the columns is an (n x |S|) problem on R_E, R_Y. Removing column i from the
   fit on S raises filter l's squared residual by c_il^2 / (G_S^{-1})_ii (G_S the Gram
   matrix of S); the column whose removal leaves the smallest worst-filter error goes, one
   after the other, recording the path of node sets, until the worst error passes
   ``tol * 1e4``.
4. **Optimised nodes.** For a node set the log-rates theta (s = e^theta) are optimised by
   variable projection: min_theta ||(I - P_E(theta)) Y||_F^2 (the coefficients eliminated by
   least squares), Levenberg-Marquardt with Kaufman's Jacobian, column i
   -(I - P)(dE_i/dtheta_i) c_i^T, so that J^T J = (C C^T) ⊙ (D~^T D~) and
   (J^T r)_i = -d~_i^T R c_i with D~ = (I - P) dE/dtheta (25 iterations at most;
   neighbouring rates kept a log-ratio 0.1 apart). The fewest nodes are found by bisection
   over the sizes of the greedy path: the largest size whose greedy fit already meets
   ``tol / 2`` is the upper end, a size passes when its optimised fit meets ``tol / 2``.
5. **Check.** The fit is evaluated on all T taps (:func:`exact_errors`); when its worst
   error passes ``tol`` (the rows of step 1 are an approximation) steps 4-5 are redone with
   the targets tol / 4, then tol / 10.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg as sla

__all__ = ["sample_rows", "fit_exponentials", "exact_errors", "FitFailed"]

_HEAD = 1024       # taps kept row by row
_PER = 128         # grid points per unit of log(j) beyond the head
_S_LOW = 0.3       # smallest decay rate s = _S_LOW / T
_S_HIGH = 30.0      # largest decay rate (alpha = e^{-30} ≈ 1e-13: the first taps)
_DICT_SIZES = (64, 96, 128, 160, 192, 256)
_DICT_MARGIN = 0.1  # the dictionary must reach tol * this before pruning
_PRUNE_MARGINS = (0.5, 0.25, 0.1)
_CHUNK = 1 << 14
_LM_ITERATIONS = 25  # Levenberg-Marquardt iterations per optimisation of the nodes
_PATH_REACH = 1e4    # the greedy path goes on to worst errors of tol * this
_MIN_GAP = 0.1       # smallest log-ratio of two decay rates kept by the optimisation


class FitFailed(Exception):
    """No fit within tol; ``best`` is the smallest worst-filter error reached."""

    def __init__(self, best: float, n_states: int):
        super().__init__(best, n_states)
        self.best, self.n_states = best, n_states


def sample_rows(L: int, head: int = _HEAD, per: int = _PER) -> tuple[np.ndarray, np.ndarray]:
    """Rows j (taps after the first) and weights w with sum_j w g(j) ≈ sum_{j<L} g(j)."""
    if L <= head + 4 * per:
        return np.arange(L), np.ones(L)
    pts = [head]
    while pts[-1] < L - 1:
        pts.append(min(L - 1, pts[-1] + max(1, pts[-1] // per)))
    grid = np.asarray(pts)
    d = np.diff(grid).astype(np.float64)
    w = np.zeros(grid.size)
    w[:-1] += d / 2.0
    w[1:] += d / 2.0
    w[0] += 0.5
    w[-1] += 0.5
    return np.r_[np.arange(head), grid], np.r_[np.ones(head), w]


def _basis(rows: np.ndarray, s: np.ndarray, sqrt_w: np.ndarray) -> np.ndarray:
    return np.exp(-np.multiply.outer(rows.astype(np.float64), s)) * sqrt_w[:, None]


def _removal_worst(RE: np.ndarray, RY: np.ndarray, floor2: np.ndarray) -> np.ndarray:
    """Worst filter error of the fit without column i, for every i: removing column i raises
    filter l's squared residual by c_il^2 / (G^{-1})_ii (G = RE^T RE)."""
    q, Rs = np.linalg.qr(RE)
    c = sla.solve_triangular(Rs, q.T @ RY)
    res2 = np.sum((RY - RE @ c) ** 2, axis=0) + floor2
    z = np.sum(sla.solve_triangular(Rs, np.eye(RE.shape[1])) ** 2, axis=1)
    return np.sqrt((res2[None, :] + c * c / z[:, None]).max(axis=1))


def _reduced(E: np.ndarray, Y: np.ndarray):
    """(R_E, R_Y, floor^2) of the QR factorisation [E Y] = Q [R_E R_Y] (+ orthogonal rest)."""
    n = E.shape[1]
    R = np.asarray(np.linalg.qr(np.hstack([E, Y]), mode="r"))  # mode "r": R alone
    RE, RY = R[:, :n], R[:, n:]
    return RE, RY, np.maximum(np.sum(Y * Y, axis=0) - np.sum(RY * RY, axis=0), 0.0)


def _prune_path(E: np.ndarray, Y: np.ndarray, stop: float) -> list[tuple[list[int], float]]:
    """Greedy backward elimination of columns of E (step 3 of the module docstring): the
    kept columns and the worst filter error after each removal, until it passes ``stop``."""
    RE, RY, floor2 = _reduced(E, Y)
    keep = list(range(E.shape[1]))
    path = []
    while len(keep) > 1:
        worst = _removal_worst(RE[:, keep], RY, floor2)
        i = int(np.argmin(worst))
        if not worst[i] <= stop:
            break
        keep.pop(i)
        path.append((list(keep), float(worst[i])))
    return path


def _evaluate(theta: np.ndarray, rows: np.ndarray, sqrt_w: np.ndarray, Y: np.ndarray):
    """Basis E (decays s = e^theta), orthonormal Q of its span, residuals, coefficients."""
    E = _basis(rows, np.exp(theta), sqrt_w)
    scale = np.linalg.norm(E, axis=0)
    Q, R = np.linalg.qr(E / scale)
    QtY = Q.T @ Y
    res = Y - Q @ QtY
    c = sla.solve_triangular(R, QtY) / scale[:, None]
    return E, Q, res, c


def _separated(theta: np.ndarray) -> np.ndarray:
    """Sorted, with neighbours at least _MIN_GAP apart: two rates merging into one would
    realise t alpha^t by a difference of huge coefficients (a confluent pair)."""
    theta = np.sort(theta)
    for i in range(1, theta.size):
        theta[i] = max(theta[i], theta[i - 1] + _MIN_GAP)
    return theta


def _optimise(theta, rows, sqrt_w, Y):
    """Levenberg-Marquardt on the log-rates theta of the variable-projection problem
    min_theta ||(I - P_E(theta)) Y||_F^2 (step 4 of the module docstring), Kaufman's Jacobian:
    column i is -(I - P) (dE_i / dtheta_i) c_i^T, so J^T J = (C C^T) ⊙ (D~^T D~) and
    (J^T r)_i = -d~_i^T R c_i with D~ = (I - P) dE/dtheta. Returns (theta, residuals)."""
    E, Q, res, c = _evaluate(theta, rows, sqrt_w, Y)
    f, mu = float(np.sum(res * res)), 1e-3
    j = rows.astype(np.float64)
    for _ in range(_LM_ITERATIONS):
        Dt = -(j[:, None] * np.exp(theta)) * E
        Dt -= Q @ (Q.T @ Dt)
        JtJ = (c @ c.T) * (Dt.T @ Dt)
        Jtr = -np.sum((Dt.T @ res) * c, axis=1)
        for _ in range(8):
            try:
                step = np.linalg.solve(JtJ + mu * np.diag(np.diag(JtJ)), -Jtr)
            except np.linalg.LinAlgError:
                mu *= 10.0
                continue
            trial = _separated(theta + np.clip(step, -0.5, 0.5))
            E2, Q2, res2, c2 = _evaluate(trial, rows, sqrt_w, Y)
            f2 = float(np.sum(res2 * res2))
            if f2 < f:
                theta, E, Q, res, c, f = trial, E2, Q2, res2, c2, f2
                mu = max(mu / 3.0, 1e-9)
                break
            mu *= 10.0
        else:
            break  # no step lowers the residual: a (local) minimum
    return theta, res


def exact_errors(phi: np.ndarray, alpha: np.ndarray, C: np.ndarray) -> np.ndarray:
    """Relative L2 error per filter of phi[t] ≈ sum_i C[i] alpha_i^{t-1} (t >= 1; tap 0 exact),
    on all taps, chunk by chunk (alpha^{j0 + d} = alpha^d alpha^{j0}: products, no T x n
    array)."""
    L = phi.shape[0] - 1
    if L == 0:
        return np.zeros(phi.shape[1])
    logs = np.log(alpha)
    E0 = np.exp(np.multiply.outer(np.arange(min(L, _CHUNK), dtype=np.float64), logs))
    acc = np.zeros(phi.shape[1])
    for j0 in range(0, L, _CHUNK):
        j1 = min(L, j0 + _CHUNK)
        z = logs * j0
        scale = np.where(z > -700.0, np.exp(z), 0.0)
        r = phi[1 + j0 : 1 + j1] - E0[: j1 - j0] @ (scale[:, None] * C)
        acc += np.einsum("ij,ij->j", r, r)
    return np.sqrt(acc) / np.linalg.norm(phi, axis=0)


def fit_exponentials(phi: np.ndarray, tol: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Decays alpha (n,), descending, coefficients C (n, k) and the exact per-filter errors (k,)
    of the fit of the module docstring; raises :class:`FitFailed` when tol is not reached."""
    T, k = phi.shape
    L = T - 1
    if L == 0:  # one tap, carried by D: one idle state (an LDS has at least one)
        return np.array([0.5]), np.zeros((1, k)), np.zeros(k)
    rows, w = sample_rows(L)
    sqrt_w = np.sqrt(w)
    norms = np.linalg.norm(phi, axis=0)
    Y = phi[1:][rows] * sqrt_w[:, None] / norms
    best = (np.inf, 0)
    for n0 in _DICT_SIZES:
        n0 = min(n0, L)
        s = np.geomspace(_S_LOW / T, _S_HIGH, n0)
        E = _basis(rows, s, sqrt_w)
        E /= np.linalg.norm(E, axis=0)
        c, *_ = np.linalg.lstsq(E, Y, rcond=1e-16)
        worst = float(np.linalg.norm(Y - E @ c, axis=0).max())
        best = min(best, (worst, n0))
        if worst <= tol * _DICT_MARGIN or n0 == L:
            break
    if best[0] > tol:
        raise FitFailed(best[0], best[1])
    path = _prune_path(E, Y, tol * _PATH_REACH)
    for margin in _PRUNE_MARGINS:
        theta = _smallest(path, s, rows, sqrt_w, Y, tol * margin)
        if theta is None:  # the dictionary itself is the fit
            theta = np.log(s)
        _, _, _, c = _evaluate(theta, rows, sqrt_w, Y)
        alpha, C = np.exp(-np.exp(theta)), c * norms
        err = exact_errors(phi, alpha, C)
        if err.max() <= tol:
            return alpha, C, err
        best = min(best, (float(err.max()), theta.size))
    raise FitFailed(*best)


def _smallest(path, s, rows, sqrt_w, Y, target):
    """Log-rates of the fewest nodes that reach ``target``: bisection over the sizes of the
    greedy path, each size's nodes optimised by :func:`_optimise` (step 4 of the module
    docstring). The largest size whose greedy fit already reaches the target is the upper
    end (None when no removal does)."""
    ok = [m for m, (_, worst) in enumerate(path) if worst <= target]
    if not ok:
        return None
    hi = ok[-1]  # path index: larger index, fewer nodes
    found = _optimise(np.log(s[path[hi][0]]), rows, sqrt_w, Y)[0]
    lo_bad, hi_ok = len(path), hi  # indices: hi_ok reaches the target, lo_bad (not yet) not
    while lo_bad - hi_ok > 1:
        mid = (hi_ok + lo_bad) // 2
        theta, res = _optimise(np.log(s[path[mid][0]]), rows, sqrt_w, Y)
        if np.linalg.norm(res, axis=0).max() <= target:
            hi_ok, found = mid, theta
        else:
            lo_bad = mid
    return found
