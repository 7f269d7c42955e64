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
   matrix of S); the column whose removal leaves the smallest worst-filter error goes, until
   the next removal would pass the target.
4. **Check.** The pruned fit is evaluated on all T taps; when its worst error passes ``tol``
   (the rows of step 1 are an approximation) pruning is redone with a tighter target.
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


def _prune(E: np.ndarray, Y: np.ndarray, target: float) -> list[int]:
    """Greedy backward elimination of columns of E (step 3 of the module docstring)."""
    n = E.shape[1]
    R = np.linalg.qr(np.hstack([E, Y]), mode="r")
    RE, RY = R[:, :n], R[:, n:]
    floor2 = np.maximum(np.sum(Y * Y, axis=0) - np.sum(RY * RY, axis=0), 0.0)
    keep = list(range(n))
    while len(keep) > 1:
        q, Rs = np.linalg.qr(RE[:, keep])
        c = sla.solve_triangular(Rs, q.T @ RY)
        res2 = np.sum((RY - RE[:, keep] @ c) ** 2, axis=0) + floor2
        z = np.sum(sla.solve_triangular(Rs, np.eye(len(keep))) ** 2, axis=1)
        worst = np.sqrt((res2[None, :] + c * c / z[:, None]).max(axis=1))
        i = int(np.argmin(worst))
        if not worst[i] <= target:
            break
        keep.pop(i)
    return keep


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
    E = s = scale = None
    for n0 in _DICT_SIZES:
        n0 = min(n0, L)
        s = np.geomspace(_S_LOW / T, _S_HIGH, n0)
        E = _basis(rows, s, sqrt_w)
        scale = np.linalg.norm(E, axis=0)
        E /= scale
        c, *_ = np.linalg.lstsq(E, Y, rcond=1e-16)
        worst = float(np.linalg.norm(Y - E @ c, axis=0).max())
        best = min(best, (worst, n0))
        if worst <= tol * _DICT_MARGIN or n0 == L:
            break
    if best[0] > tol:
        raise FitFailed(best[0], best[1])
    for margin in _PRUNE_MARGINS:
        keep = _prune(E, Y, tol * margin)
        c, *_ = np.linalg.lstsq(E[:, keep], Y, rcond=1e-16)
        alpha = np.exp(-s[keep])
        C = c / scale[keep][:, None] * norms
        err = exact_errors(phi, alpha, C)
        if err.max() <= tol:
            return alpha, C, err
        best = min(best, (float(err.max()), len(keep)))
    raise FitFailed(*best)
