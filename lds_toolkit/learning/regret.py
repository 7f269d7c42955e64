r"""Cumulative losses and the Asymmetric-Regret of Definition 3.

For an online algorithm A(L') (a learner with context L') and a reference class Pi_L
(spectral-filtering predictors of the same form with context L over K_r), Definition 3 is::

    Regret_Asymmetric,T(A(L'), Pi_L) = sum_{t=1}^T l_t(y_t, yhat_t^{A(L')})
                                       - min_{pi in Pi_L} sum_{t=1}^T l_t(y_t, yhat_t^pi)

with the squared loss l_t = ||y_t - yhat_t||^2.  :func:`asymmetric_regret` evaluates it as a
curve over the horizon: at each t of a grid, the learner's cumulative loss over steps 1..t
minus the best-in-hindsight loss of Pi_L over the same steps (the minimiser is recomputed for
every t, from a running QR factor of the features, and solved exactly with a certified
duality gap).  The paper's Theorems 5 and 6 bound it by O~(sqrt(T)); :func:`loglog_slope`
fits the exponent.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._repr import compact_repr
from .._typing import ArrayLike
from .._validation import as_float_array, check_int, check_real
from ._hindsight import AugmentedQR, solve_block_ball_lsq
from ._online import OnlineLearner, as_streams
from .learners import BestInHindsight, _SpectralBase

__all__ = ["cumulative_loss", "RegretCurve", "asymmetric_regret", "LogLogFit", "loglog_slope",
           "regret_grid"]


def cumulative_loss(losses) -> np.ndarray:
    """Running sum  L_t = sum_{s <= t} l_s  of per-step losses (shape preserved).

    ``losses`` must be a non-empty 1-D array of finite numbers (``ValueError``/``TypeError``
    naming it otherwise: an empty stream has no cumulative loss to report)."""
    arr = as_float_array("losses", losses, ndim=1)
    if arr.size == 0:
        raise ValueError("losses must hold at least one per-step loss, got an empty array "
                         "(a stream of length 0 has no cumulative loss)")
    return np.cumsum(arr)


def regret_grid(n: int, n_points: int = 32, start: int = 1) -> np.ndarray:
    """Geometric grid of horizons in [start, n] (integers, unique, always containing n)."""
    n = check_int("n", n, 1)
    n_points = check_int("n_points", n_points, 2)
    start = check_int("start", start, 1, n)
    g = np.unique(np.round(np.geomspace(start, n, n_points)).astype(int))
    return g if g[-1] == n else np.r_[g, n]


def _integer_grid(t_grid, n: int) -> np.ndarray:
    """``t_grid`` as int64 if it holds strictly increasing integers in [1, n] (integral floats
    such as 10.0 accepted), else ``ValueError``; never truncates 10.7 to 10."""
    raw = np.asarray(t_grid)
    want = f"t_grid must be increasing integers in [1, {n}]"
    if raw.ndim != 1 or raw.size == 0 or not (np.issubdtype(raw.dtype, np.integer)
                                               or np.issubdtype(raw.dtype, np.floating)):
        raise ValueError(f"{want}, got {raw.dtype} array of shape {raw.shape}")
    if np.issubdtype(raw.dtype, np.floating):
        frac = ~np.isfinite(raw) | (raw != np.round(raw))
        if np.any(frac):
            i = int(np.flatnonzero(frac)[0])
            raise ValueError(f"{want}; entry {i} is {float(raw[i])!r}, not an integer")
    grid = raw.astype(np.int64)
    if np.any(np.diff(grid) <= 0) or grid[0] < 1 or grid[-1] > n:
        raise ValueError(f"{want}, got {grid}")
    return grid


@dataclass(frozen=True, repr=False)
class RegretCurve:
    """Asymmetric-Regret as a function of the horizon t (see module docstring).

    Attributes
    ----------
    t : ndarray of int
        Horizons (number of steps, 1-based: t = n is the whole stream).
    learner_loss : ndarray
        sum_{s<=t} l_s of the online learner.
    benchmark_loss : ndarray
        min over Pi_L of the cumulative loss over the first t steps.
    regret : ndarray
        learner_loss - benchmark_loss.
    max_gap : float
        Largest certified optimality gap of the benchmark solves (an upper bound on how much
        ``benchmark_loss`` may exceed the true minimum).
    learner_context, benchmark_context : int
        L' and L.
    """

    t: np.ndarray
    learner_loss: np.ndarray
    benchmark_loss: np.ndarray
    regret: np.ndarray
    max_gap: float
    learner_context: int
    benchmark_context: int

    @property
    def final(self) -> float:
        """Regret over the whole stream."""
        return float(self.regret[-1])

    def __repr__(self) -> str:
        return compact_repr(self, t=self.t, final=self.final, max_gap=self.max_gap,
                            learner_context=self.learner_context,
                            benchmark_context=self.benchmark_context)


def asymmetric_regret(learner: OnlineLearner, u: ArrayLike, y: ArrayLike, *,
                      benchmark_context: int | None = None, radius: float | None = None,
                      t_grid: ArrayLike | None = None, n_points: int = 32,
                      losses: ArrayLike | None = None, tol: float = 1e-10) -> RegretCurve:
    """Regret_Asymmetric,t(A(L'), Pi_L) on a grid of horizons t.

    Parameters
    ----------
    learner : SpectralFiltering or SpectralFilteringAR2
        The algorithm A(L'); its context is L'.  Run with ``fit_predict`` on (u, y) unless
        ``losses`` are given.
    u, y : array_like, shape (n, d_in), (n, d_out)
        The stream.
    benchmark_context : int or None
        L of the reference class Pi_L: the learner's predictor family with context L
        (default: the learner's horizon T, i.e. full context).
    radius : float or None
        r of K_r for the reference class (default: the learner's radius).
    t_grid : array_like of int, optional
        Horizons at which to evaluate; default :func:`regret_grid` from the smallest t at
        which the features can determine a predictor (t >= number of parameters).
    losses : array_like, shape (n,), optional
        The learner's per-step losses, if already computed.
    tol : float
        Certified relative gap required of every benchmark solve.
    """
    if not isinstance(learner, OnlineLearner):
        raise TypeError(f"learner must be an OnlineLearner instance (SpectralFiltering, "
                        f"SpectralFilteringAR2, LastValue, ...), got {type(learner).__name__} "
                        f"{learner!r}")
    if not isinstance(learner, _SpectralBase):
        raise TypeError(f"learner must be SpectralFiltering or SpectralFilteringAR2, whose "
                        f"predictor class Pi_L (spectral features with context L) is the "
                        f"comparator of the asymmetric regret; {type(learner).__name__} has no "
                        f"such class (nothing to regret against). Compare its losses with "
                        f"cumulative_loss(learner.losses_) after learner.fit_predict(u, y)")
    n_points = check_int("n_points", n_points, 2)
    tol = check_real("tol", tol, low=0.0, high=1.0, low_inclusive=False, high_inclusive=False)
    if radius is not None:
        radius = check_real("radius", radius, low=0.0, low_inclusive=False)
    u, y = as_streams(u, y)
    if losses is None:
        learner.fit_predict(u, y)
        losses = learner.losses_
    else:
        losses = as_float_array("losses", losses)
        if np.any(losses < 0):
            i = int(np.flatnonzero(losses.ravel() < 0)[0])
            raise ValueError(f"losses must be non-negative (per-step squared errors); entry "
                             f"{i} is {losses.ravel()[i]:g}")
    cum = cumulative_loss(losses)
    n = u.shape[0]
    if cum.shape != (n,):
        raise ValueError(f"losses must have shape ({n},), got {cum.shape}")
    if benchmark_context is None:
        benchmark_context = getattr(learner, "horizon", None)
    bench = BestInHindsight(learner, context=benchmark_context, radius=radius, tol=tol)
    X, base = bench.design(u, y)
    r = bench._radius()
    _, m, d_in = X.shape
    d_out = y.shape[1]
    p = m * d_in
    if t_grid is None:
        t_grid = regret_grid(n, n_points, start=min(max(2 * p, 8), n))
    t_grid = _integer_grid(t_grid, n)
    D = X.reshape(n, p)
    Z = y - base
    qr = AugmentedQR(p, d_out)
    prev = 0
    best = np.empty(t_grid.size)
    gap = 0.0
    for j, t in enumerate(t_grid):
        qr.update(D[prev:t], Z[prev:t])
        prev = t
        sol = solve_block_ball_lsq(*qr.parts(), m, d_in, r, tol=tol)
        best[j] = sol.value
        gap = max(gap, sol.gap)
    lc = cum[t_grid - 1]
    ctx = getattr(learner, "context_length", 1)
    bctx = getattr(bench._class(), "context_length", 1)
    return RegretCurve(t_grid, lc, best, lc - best, gap, ctx, bctx)


@dataclass(frozen=True)
class LogLogFit:
    """Least-squares line log(regret) = slope * log(T) + intercept."""

    slope: float
    intercept: float
    slope_stderr: float


def loglog_slope(T, regret) -> LogLogFit:
    """Fit the exponent of regret ~ T^slope on a log-log scale (T and regret finite and > 0,
    at least two distinct T)."""
    T = as_float_array("T", T)
    R = as_float_array("regret", regret)
    if T.shape != R.shape or T.ndim != 1 or T.size < 2:
        raise ValueError(f"T and regret must be 1-D of equal length >= 2, got {T.shape}, "
                         f"{R.shape}")
    for name, arr in (("T", T), ("regret", R)):
        if np.any(arr <= 0):
            i = int(np.flatnonzero(arr <= 0)[0])
            raise ValueError(f"{name} must be positive for a log-log fit; entry {i} is "
                             f"{arr[i]:g}")
    if np.unique(T).size < 2:
        raise ValueError(f"T must hold at least two distinct horizons for a slope, got "
                         f"{T.tolist()}")
    x, z = np.log(T), np.log(R)
    A = np.vstack([x, np.ones_like(x)]).T
    coef, res, *_ = np.linalg.lstsq(A, z, rcond=None)
    dof = max(x.size - 2, 1)
    resid = z - A @ coef
    s2 = float(resid @ resid) / dof
    se = float(np.sqrt(s2 / np.sum((x - x.mean()) ** 2)))
    return LogLogFit(float(coef[0]), float(coef[1]), se)
