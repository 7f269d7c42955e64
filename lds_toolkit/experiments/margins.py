"""How far a claim's verdict is from flipping, in units of the spread over seeds.

A claim that holds by a hair on one set of seeds fails on the next: a verdict alone cannot
say which it is. :func:`per_seed_margin` and :func:`spread_margin` give the **margin** of a
claim judged by :func:`~lds_toolkit.experiments.claims.evaluate_claim`: the distance of what
the claim judges to its threshold, in units of how much that moves when the seeds are drawn
again. Positive: holds; negative: fails; below :data:`FRAGILE_BELOW` (one spread) a claim that
holds is *fragile*, and ``lds-toolkit report`` says so.

* **Per-seed claims** (median and share of seeds, :mod:`.claims`): the claim is judged again
  on :data:`RESAMPLES` bootstrap resamples of its seeds (drawn with replacement, from a fixed
  seed: the same numbers always give the same margin), median and share both, and the margin
  is the standard-normal quantile of the fraction of resamples on which it holds,
  ``z = Φ⁻¹((h + 1/2) / (R + 1))``: a margin of 1 is a claim that holds on 84 % of the
  resamples, 2 on 98 % (for a statistic that varies normally over seed draws, exactly its
  distance to the threshold over its standard deviation). For a one-sided comparison the
  margin counts seeds: the median holds when half the seeds do, the share when
  ``min_share`` of them do, and the number of holding seeds in a resample is
  Binomial(n, k/n); so the margin says how many seeds' worth the claim is from flipping,
  against the binomial spread of that count. It is invariant to monotone transforms of the
  quantity (a ratio spanning decades needs no log). The resample count caps it at
  ±:data:`MARGIN_CAP`.
* **Other claims with per-seed values** (the claim's ``spread`` path): the signed distance of
  the judged value (of its worst entry, for a list judged entry by entry) to the threshold,
  over the standard deviation of the per-seed values (capped at ±:data:`MARGIN_CAP`).
  Conservative for a mean of several seeds, whose own spread is smaller.
* **None** where nothing varies with the seeds or no distance is defined: a single draw, a
  boolean or string (``"is"``), an ordering of a non-per-seed list.
"""

from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np

#: Bootstrap resamples of a per-seed margin (and of the median's interval, same generator).
RESAMPLES = 4000
#: The seed of every bootstrap of a claim: the same numbers always give the same result.
BOOTSTRAP_SEED = 20_241_126
#: A claim that holds with a margin below this many seed spreads is marked fragile.
FRAGILE_BELOW = 1.0
#: Margins are reported within ±this (the largest a bootstrap of :data:`RESAMPLES` gives).
MARGIN_CAP = 3.5

_ONE_SIDED = (">=", ">", "<=", "<")


def resample_indices(n: int, resamples: int = RESAMPLES) -> np.ndarray:
    """``(resamples, n)`` seed indices drawn with replacement from the fixed seed."""
    rng = np.random.default_rng(BOOTSTRAP_SEED)
    return rng.integers(0, n, size=(resamples, n))


def satisfies(op: str, values: np.ndarray, threshold) -> np.ndarray | None:
    """Whether each row of ``values`` (``(R,)`` scalars or ``(R, m)`` lists, every entry of a
    row for a list) satisfies ``op threshold``, as the claims judge it; ``None`` for an op
    without a vectorised form (``"is"``). NaN never satisfies."""
    v = np.asarray(values, dtype=float)
    if op in ("nonincreasing", "nondecreasing"):
        if v.ndim != 2 or v.shape[1] < 2:
            return np.zeros(v.shape[0], dtype=bool)
        slack = float(threshold or 0.0)
        a, b = v[:, :-1], v[:, 1:]
        if op == "nonincreasing":
            ok = np.where(a >= 0, b <= a * (1 + slack), b <= a * (1 - slack))
        else:
            ok = np.where(a >= 0, b >= a * (1 - slack), b >= a * (1 + slack))
        return np.asarray(ok.all(axis=1))
    with np.errstate(invalid="ignore"):
        if op == "between":
            lo, hi = threshold
            ok = (v >= lo) & (v <= hi)
        elif op in _ONE_SIDED:
            ok = {">=": v >= threshold, ">": v > threshold, "<=": v <= threshold,
                  "<": v < threshold}[op]
        else:
            return None
    ok &= np.isfinite(v)
    return np.asarray(ok.all(axis=1) if ok.ndim == 2 else ok)


def _cap(z: float) -> float:
    return float(min(MARGIN_CAP, max(-MARGIN_CAP, z)))


def per_seed_margin(op: str, threshold, min_share: float, entries: list,
                    holds: list[bool]) -> float | None:
    """Margin of a per-seed claim (see the module docstring): ``entries`` one per seed (a
    number or a list; non-finite or missing ones are left out of the median and count as not
    holding), ``holds[i]`` whether seed ``i``'s own entry satisfies the comparison. ``None``
    when the entries have no common numeric shape or the op has no vectorised form."""
    n = len(entries)
    if n == 0:
        return None
    try:
        rows = [np.asarray(e, dtype=float) if e is not None else None for e in entries]
    except (TypeError, ValueError):
        return None
    shapes = {r.shape for r in rows if r is not None}
    if len(shapes) != 1:
        return None
    shape = shapes.pop()
    if len(shape) > 1:
        return None
    arr = np.stack([r if r is not None else np.full(shape, np.nan) for r in rows])
    arr[~np.isfinite(arr).all(axis=tuple(range(1, arr.ndim)))] = np.nan  # a bad seed: out
    idx = resample_indices(n)
    share = np.asarray(holds, dtype=float)[idx].mean(axis=1)
    resampled = arr[idx]  # (R, n) or (R, n, m); a bad seed is a row of NaN
    # the median of each resample over its finite seeds; a resample without any: NaN (fails)
    some = np.isfinite(resampled).reshape(idx.shape[0], -1).any(axis=1)
    medians = np.full((idx.shape[0],) + shape, np.nan)
    if some.any():
        medians[some] = np.nanmedian(resampled[some], axis=1)
    ok = satisfies(op, medians, threshold)
    if ok is None:
        return None
    held = int(np.count_nonzero(ok & (share >= min_share)))
    p = (held + 0.5) / (idx.shape[0] + 1)
    return _cap(NormalDist().inv_cdf(p))


def distance(op: str, value: float, threshold) -> float | None:
    """Signed distance of ``value`` to ``threshold`` under ``op``: positive when satisfied
    (for ``between``, to the nearer bound); ``None`` for an op without a distance."""
    if op in (">=", ">"):
        return value - threshold
    if op in ("<=", "<"):
        return threshold - value
    if op == "between":
        lo, hi = threshold
        return min(value - lo, hi - value)
    return None


def spread_margin(op: str, threshold, value, per_seed_values: list[float]) -> float | None:
    """Margin of a claim that is not judged per seed but has per-seed values (its ``spread``
    path): the signed distance of ``value`` (of its worst entry, for a list) to the threshold
    over the standard deviation of ``per_seed_values`` (see the module docstring); ``None``
    when fewer than two finite per-seed values exist or ``op`` has no distance."""
    vals = np.asarray([v for v in per_seed_values if math.isfinite(v)], dtype=float)
    if vals.size < 2 or op not in (*_ONE_SIDED, "between"):
        return None
    entries = value if isinstance(value, list) else [value]
    dists = []
    for v in entries:
        if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v):
            return -MARGIN_CAP  # a missing or non-finite entry fails the claim outright
        d = distance(op, float(v), threshold)
        if d is None:
            return None
        dists.append(d)
    if not dists:
        return None
    worst = min(dists)
    sd = float(np.std(vals, ddof=1))
    if sd == 0.0:
        return MARGIN_CAP if worst > 0 else (-MARGIN_CAP if worst < 0 else 0.0)
    return _cap(worst / sd)
