"""Seeded random linear dynamical systems with prescribed spectra."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import scipy.stats

from .._random import RngLike, as_generator
from .._typing import ArrayLike
from .._validation import check_bool, check_fits_in_memory, check_positive_int, check_real
from .lds import LDS
from .regions import Interval


def _intervals(eigenvalue_intervals) -> list[tuple[float, float]]:
    try:
        items = [tuple(float(v) for v in iv) for iv in eigenvalue_intervals]
    except (TypeError, ValueError):
        raise TypeError("eigenvalue_intervals must be a sequence of (low, high) pairs, got "
                        f"{eigenvalue_intervals!r}") from None
    if not items:
        raise ValueError("eigenvalue_intervals must contain at least one (low, high) pair")
    for i, iv in enumerate(items):
        if len(iv) != 2 or not np.all(np.isfinite(iv)) or iv[0] > iv[1]:
            raise ValueError(f"eigenvalue_intervals[{i}] must be a finite (low, high) pair with "
                             f"low <= high, got {iv}")
    return items


def draw_eigenvalues(n: int, eigenvalue_intervals, *, weights=None,
                     rng: RngLike = None) -> np.ndarray:
    """Draw ``n`` eigenvalues uniformly from a union of intervals.

    Interval ``i`` receives ``round(n * w_i)`` of them (weights equal by default, so "half from
    each part" for two intervals); the remainder goes to the first intervals. Returned sorted
    ascending.
    """
    n = check_positive_int("n", n)
    check_fits_in_memory("n", n, 8.0 * n, f"the {n} float64 eigenvalues")
    items = _intervals(eigenvalue_intervals)
    if weights is None:
        w = np.full(len(items), 1.0 / len(items))
    else:
        w = np.asarray(weights, dtype=float)
        if w.shape != (len(items),) or np.any(w < 0) or not np.isfinite(w).all() or w.sum() <= 0:
            raise ValueError(f"weights must be {len(items)} non-negative numbers, got {weights!r}")
        w = w / w.sum()
    counts = np.floor(n * w).astype(int)
    for i in np.argsort(-(n * w - counts), kind="stable")[: n - counts.sum()]:
        counts[i] += 1
    gen = as_generator(rng)
    lam = np.concatenate([gen.uniform(lo, hi, size=c) for (lo, hi), c in zip(items, counts)])
    return np.sort(lam)


def _check_system_fits(name: str, value, n: int, d_in: int, d_out: int) -> None:
    """Refuse, before drawing, a system whose matrices cannot fit in memory: the n x n state
    matrix and the n x n orthogonal or eigenvector matrix drawn with it (float64 each)."""
    check_fits_in_memory(name, value, 8.0 * (2 * n * n + n * (d_in + d_out)),
                         f"the float64 entries of the ({n}, {n}) state matrix and of its "
                         "eigenvector matrix")


def random_lds(n: int, eigenvalue_intervals: Sequence[Interval | tuple[float, float]], *,
               d_in: int = 1, d_out: int = 1,
               symmetric: bool = True, weights: ArrayLike | None = None, feedthrough: bool = False,
               dt: float = 1.0, rng: RngLike = None) -> LDS:
    """A random discrete LDS of hidden dimension ``n`` with eigenvalues drawn from intervals.

    ``A = Q diag(λ) Q^T`` with Q Haar-distributed orthogonal (``symmetric=True``), or
    ``A = V diag(λ) V^{-1}`` with V a Gaussian matrix with unit-norm columns (``symmetric=False``:
    non-normal, same real spectrum). The eigenvalues are drawn by :func:`draw_eigenvalues`.
    ``B`` has i.i.d. N(0, 1) entries and ``C`` i.i.d. N(0, 1/n) entries, so that y has O(1)
    scale when the modes do; ``D`` is zero unless ``feedthrough`` (then N(0, 1)).

    Parameters
    ----------
    n : int
        Hidden dimension.
    eigenvalue_intervals : sequence of (low, high)
        E.g. ``eigenvalue_regions(T, q).region_a`` for "half from each part of Region A".
    d_in, d_out : int
        Input and output dimensions.
    symmetric : bool
        Symmetric A (the paper's setting) or a non-normal A with the same eigenvalues.
    weights : sequence of float, optional
        Share of eigenvalues per interval (equal by default).
    feedthrough : bool
        Draw a non-zero D.
    dt : float
        Sample time stored on the system.
    rng : Generator, int or None
        Seed or generator; the same seed gives the same system.
    """
    n = check_positive_int("n", n)
    d_in = check_positive_int("d_in", d_in)
    d_out = check_positive_int("d_out", d_out)
    symmetric = check_bool("symmetric", symmetric)
    feedthrough = check_bool("feedthrough", feedthrough)
    if dt is not True:  # a discrete system: a sample time > 0 (0 and None mean continuous)
        if isinstance(dt, bool) or dt is None:
            raise TypeError(f"dt must be a sample time > 0 or True, got {dt!r}")
        dt = check_real("dt", dt, low=0.0, low_inclusive=False)
    _check_system_fits("n", n, n, d_in, d_out)
    gen = as_generator(rng)
    lam = draw_eigenvalues(n, eigenvalue_intervals, weights=weights, rng=gen)
    if symmetric:
        Q = scipy.stats.ortho_group.rvs(n, random_state=gen) if n > 1 else np.ones((1, 1))
        A = (Q * lam) @ Q.T
        A = 0.5 * (A + A.T)  # exactly symmetric, so the simulator takes the orthogonal path
    else:
        V = gen.standard_normal((n, n))
        V /= np.linalg.norm(V, axis=0)
        A = np.linalg.solve(V.T, (V * lam).T).T  # V diag(λ) V^{-1}
    B = gen.standard_normal((n, d_in))
    C = gen.standard_normal((d_out, n)) / np.sqrt(n)
    D = gen.standard_normal((d_out, d_in)) if feedthrough else np.zeros((d_out, d_in))
    return LDS(A, B, C, D, dt=dt)


def random_stable_lds(n: int, *, d_in: int = 1, d_out: int = 1, radius: float = 0.95,
                      continuous: bool = False, rng: RngLike = None) -> LDS:
    """A generic random stable LDS with complex-conjugate eigenvalue pairs (for tests, demos).

    Discrete (``dt = 1``): eigenvalues uniform in the disc of the given ``radius`` (< 1).
    Continuous: eigenvalues with real parts uniform in [-2, -0.1] and imaginary parts in
    [-3, 3]. A is ``V Λ V^{-1}`` made real by using 2×2 rotation blocks, with a random
    well-conditioned V. B, C, D are standard normal.
    """
    n = check_positive_int("n", n)
    d_in = check_positive_int("d_in", d_in)
    d_out = check_positive_int("d_out", d_out)
    radius = check_real("radius", radius, low=0.0, high=1.0, high_inclusive=False)
    continuous = check_bool("continuous", continuous)
    _check_system_fits("n", n, n, d_in, d_out)
    gen = as_generator(rng)
    blocks = np.zeros((n, n))
    i = 0
    while i < n:
        if continuous:
            re, im = gen.uniform(-2.0, -0.1), gen.uniform(-3.0, 3.0)
        else:
            r, th = radius * np.sqrt(gen.uniform()), gen.uniform(0, np.pi)
            re, im = r * np.cos(th), r * np.sin(th)
        if i + 1 < n:
            blocks[i:i + 2, i:i + 2] = [[re, -im], [im, re]]
            i += 2
        else:
            blocks[i, i] = re
            i += 1
    V = np.eye(n) + 0.3 * gen.standard_normal((n, n)) / np.sqrt(n)
    A = V @ blocks @ np.linalg.inv(V)
    B = gen.standard_normal((n, d_in))
    C = gen.standard_normal((d_out, n))
    D = gen.standard_normal((d_out, d_in))
    return LDS(A, B, C, D, dt=None if continuous else 1.0)
