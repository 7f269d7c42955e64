r"""Eigenvalue regions of the length-generalization paper (Section 4.1, Figure 1).

Theorem 5 (Theorem 1 in the introduction) guarantees that Algorithm 1 with context length
T^q length-generalises when every eigenvalue of A lies in ``[0, 1 - log T / (8 T^q)]`` or in
``[1 - 1/(2 T^{5/4}), 1]``. The gap between the two is the "bad" region::

    Region B = (1 - log T / (8 T^q),  1 - 1 / (2 T^{5/4}))

and Region A hugs it on both sides::

    Region A = [0.9 (1 - log T / (8 T^q)),  1 - log T / (8 T^q)]  ∪  [1 - 1/(2 T^{5/4}),  1]

``log`` is the natural logarithm. The paper's experiments fix q = 7/8 for the regions (the
learner's context T^q then varies); ``q`` is a parameter here so that Figure 1 can show how
the regions move with it. For small q the left end ``1 - log T/(8 T^q)`` can fall below 0;
the values are returned as computed (the theory assumes eigenvalues in [0, 1]).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .._validation import check_int, check_real


@dataclass(frozen=True)
class Interval:
    """A real interval ``[low, high]`` (end points' openness only matters for the theory)."""

    low: float
    high: float

    @property
    def width(self) -> float:
        """``high - low``."""
        return self.high - self.low

    def contains(self, values) -> np.ndarray:
        """Boolean array: ``low <= v <= high`` elementwise."""
        v = np.asarray(values)
        return (v >= self.low) & (v <= self.high)

    def __iter__(self):
        yield self.low
        yield self.high


@dataclass(frozen=True)
class EigenvalueRegions:
    """Regions A and B for a horizon T and exponent q (see module docstring)."""

    T: int
    q: float
    region_b: Interval
    region_a: tuple[Interval, Interval]

    @property
    def good_threshold(self) -> float:
        """``1 - log T / (8 T^q)``: eigenvalues below it are forgotten within T^q steps."""
        return self.region_b.low

    @property
    def marginal_threshold(self) -> float:
        """``1 - 1 / (2 T^{5/4})``."""
        return self.region_b.high

    def classify(self, eigenvalues) -> np.ndarray:
        """Label each eigenvalue "A-left", "B", "A-right" or "outside".

        Accepts complex input such as :meth:`LDS.eigenvalues`: an eigenvalue with
        ``|Im λ| > 1e-10 · max(1, |λ|)`` lies in no (real) region and is "outside".
        """
        z = np.asarray(eigenvalues)
        if np.iscomplexobj(z):
            real = np.abs(z.imag) <= 1e-10 * np.maximum(1.0, np.abs(z))
            lam = np.where(real, z.real, np.nan)  # NaN compares False: "outside"
        else:
            lam = z.astype(float)
        out = np.full(lam.shape, "outside", dtype=object)
        out[self.region_a[0].contains(lam)] = "A-left"
        out[self.region_a[1].contains(lam)] = "A-right"
        inside_b = (lam > self.region_b.low) & (lam < self.region_b.high)
        out[inside_b] = "B"
        return out


#: Largest horizon whose region edges float64 can tell apart from 1: above it
#: 1 - 1/(2 T^(5/4)) rounds to 1.0 (the exact threshold is about 2^42.4).
MAX_T = 2**42


def eigenvalue_regions(T: int, q: float = 7 / 8) -> EigenvalueRegions:
    """Regions A and B of the length-generalization paper for horizon ``T`` and exponent ``q``.

    Parameters
    ----------
    T : int
        Horizon (sequence length), in [2, :data:`MAX_T` = 2**42] (above, Region B's upper
        edge is not representable in float64).
    q : float
        Context exponent in [0, 1]; the paper's Figure 1 uses q = 7/8.

    Returns
    -------
    EigenvalueRegions
        ``region_b`` and the two parts of ``region_a``.

    Raises
    ------
    ValueError
        If T < 2, q is outside [0, 1], or Region B is empty for this (T, q).

    Examples
    --------
    >>> r = eigenvalue_regions(2**14, 7/8)
    >>> round(r.region_b.low, 6), round(1 - r.region_b.high, 9)
    (0.999751, 2.697e-06)
    """
    T = check_int("T", T, 2)
    if T > MAX_T:
        raise ValueError(f"T must be an integer in [2, 2**42 = {MAX_T}] (above, Region B's "
                         f"upper edge 1 - 1/(2 T^(5/4)) rounds to 1 in float64), got {T}")
    q = check_real("q", q, low=0.0, high=1.0)
    low_b = 1.0 - math.log(T) / (8.0 * float(T) ** q)
    high_b = 1.0 - 1.0 / (2.0 * float(T) ** 1.25)
    if not low_b < high_b:
        raise ValueError(
            f"Region B is empty for T={T}, q={q:g}: 1 - log T/(8 T^q) = {low_b:.6g} is not below "
            f"1 - 1/(2 T^(5/4)) = {high_b:.6g}; use a larger T"
        )
    return EigenvalueRegions(
        T=T, q=q, region_b=Interval(float(low_b), float(high_b)),
        region_a=(Interval(float(0.9 * low_b), float(low_b)), Interval(float(high_b), 1.0)),
    )
