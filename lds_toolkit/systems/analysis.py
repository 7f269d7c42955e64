r"""Analyses of a discrete-time LDS: where its modes lie against the eigenvalue regions, and
how long its memory is.

Both take any :class:`~lds_toolkit.systems.LDS` (or ``control.StateSpace``), e.g. a system
exported by a trained layer, and return a result object. The Lyapunov certificate and the
event-triggered statistics live in :mod:`lds_toolkit.control`
(:func:`~lds_toolkit.control.discrete_certificate`,
:func:`~lds_toolkit.control.inter_event_statistics`).

:func:`eigenvalue_map` — the modes against :func:`eigenvalue_regions` ``(T, q)``. The regions
are real intervals of the length-generalization paper (whose theory takes a symmetric A with
eigenvalues in [0, 1]); a mode is placed by its **modulus** ``|λ|``, which sets how fast it is
forgotten (``|λ^t| = |λ|^t``), whatever its phase. So a complex pair or a negative eigenvalue
is mapped to where a real mode of the same decay would be.

:func:`memory_length` — the effective length of the impulse response. With the Markov
parameters of the standard convention (``y_t = C x_t + D u_t``, ``x_{t+1} = A x_t + B u_t``)::

    h_0 = D,    h_t = C A^{t-1} B  (t >= 1),     e_t = ||h_t||_F^2,
    E = Σ_{t>=0} e_t = ||D||_F^2 + tr(Bᵀ W B),   Aᵀ W A - W = -Cᵀ C   (observability Gramian)
    tail(ℓ) = Σ_{t>=ℓ} e_t = tr(Bᵀ (Aᵀ)^{ℓ-1} W A^{ℓ-1} B)   (ℓ >= 1)
    ℓ_ε = min { ℓ >= 0 : tail(ℓ) <= ε E }

i.e. the first ℓ_ε taps ``h_0 .. h_{ℓ_ε-1}`` carry at least a fraction ``1 - ε`` of the
response's energy. For a scalar system ``(a, b, c, 0)`` with ``0 < |a| < 1``,
``tail(ℓ)/E = a^{2(ℓ-1)}`` and ``ℓ_ε = 1 + ⌈log ε / (2 log |a|)⌉``.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np
import scipy.linalg

from .. import _validation
from .._repr import compact_repr
from .._safe_files import human_bytes
from .._validation import check_real
from .lds import LDS, require_discrete
from .regions import EigenvalueRegions, eigenvalue_regions

__all__ = ["EigenvalueMap", "MemoryLength", "eigenvalue_map", "memory_length"]

_LABELS = ("A-left", "B", "A-right", "outside")


@dataclass(frozen=True, repr=False)
class EigenvalueMap:
    """The modes of a discrete-time system placed on the regions of :func:`eigenvalue_regions`.

    Attributes
    ----------
    eigenvalues : ndarray of complex, shape (n,)
        Eigenvalues of A, by decreasing modulus.
    modulus : ndarray, shape (n,)
        ``|λ_i|``, the quantity that is placed on the (real) regions.
    labels : ndarray of str, shape (n,)
        ``regions.classify(modulus)``: "A-left", "B", "A-right" or "outside" (below Region A's
        left part, or above 1).
    regions : EigenvalueRegions
        The regions for ``(T, q)``.
    spectral_radius : float
        ``ρ(A) = max |λ_i|``.
    """

    eigenvalues: np.ndarray
    modulus: np.ndarray
    labels: np.ndarray
    regions: EigenvalueRegions

    @property
    def spectral_radius(self) -> float:
        """``ρ(A) = max_i |λ_i|``."""
        return float(self.modulus.max(initial=0.0))

    @property
    def in_region_a(self) -> np.ndarray:
        """Mask of the modes whose modulus lies in Region A (either part)."""
        return (self.labels == "A-left") | (self.labels == "A-right")

    @property
    def in_region_b(self) -> np.ndarray:
        """Mask of the modes whose modulus lies in Region B."""
        return self.labels == "B"

    @property
    def real_nonnegative(self) -> np.ndarray:
        """Mask of the eigenvalues that are real and >= 0 (to 1e-10 relative), where the
        paper's theory applies literally."""
        lam = self.eigenvalues
        real = np.abs(lam.imag) <= 1e-10 * np.maximum(1.0, np.abs(lam))
        return real & (lam.real >= 0)

    @property
    def counts(self) -> dict:
        """Number of modes per label."""
        return {k: int(np.sum(self.labels == k)) for k in _LABELS}

    @property
    def theorem_condition(self) -> bool:
        """Theorem 5's condition on the moduli: every ``|λ|`` in ``[0, 1 - log T/(8T^q)]``
        or in ``[1 - 1/(2T^{5/4}), 1]``, i.e. none in Region B and none above 1."""
        r = self.regions
        m = self.modulus
        return bool(np.all((m <= r.good_threshold) | ((m >= r.marginal_threshold) & (m <= 1))))

    def as_dict(self) -> dict:
        """JSON-friendly dict (eigenvalues as [re, im] pairs)."""
        return {"T": self.regions.T, "q": self.regions.q,
                "region_b": list(self.regions.region_b),
                "region_a": [list(i) for i in self.regions.region_a],
                "spectral_radius": self.spectral_radius, "counts": self.counts,
                "theorem_condition": self.theorem_condition,
                "eigenvalues": [[float(z.real), float(z.imag)] for z in self.eigenvalues],
                "labels": [str(x) for x in self.labels]}

    def __repr__(self) -> str:
        return compact_repr(self, n=self.modulus.size, T=self.regions.T, q=self.regions.q,
                            spectral_radius=self.spectral_radius, counts=self.counts)


def eigenvalue_map(system: LDS, T: int, q: float = 7 / 8) -> EigenvalueMap:
    r"""Which modes of a discrete-time system fall in Region A or B of ``eigenvalue_regions(T, q)``.

    Each eigenvalue λ of A is placed by its modulus ``|λ|`` (complex and negative modes
    included: the regions are about how fast a mode is forgotten, ``|λ^t| = |λ|^t``)::

        Region B = (1 - log T / (8 T^q),  1 - 1 / (2 T^{5/4}))
        Region A = [0.9 (1 - log T / (8 T^q)),  1 - log T / (8 T^q)]  ∪  [1 - 1/(2 T^{5/4}), 1]

    Parameters
    ----------
    system : LDS or control.StateSpace
        Discrete-time system.
    T : int
        Horizon, >= 2.
    q : float
        Context exponent in [0, 1] (the paper's regions use 7/8).

    Returns
    -------
    EigenvalueMap

    Examples
    --------
    >>> sys = LDS(np.diag([0.5, 0.9999, 1.0]), np.ones((3, 1)), np.ones((1, 3)), dt=1.0)
    >>> eigenvalue_map(sys, 2**14).labels.tolist()
    ['A-right', 'B', 'outside']
    """
    system = require_discrete(system, hint="; discretize it first (the regions are for "
                                           "discrete-time eigenvalues)")
    regions = eigenvalue_regions(T, q)
    lam = np.linalg.eigvals(system.A).astype(complex)
    order = np.argsort(-np.abs(lam), kind="stable")
    lam = lam[order]
    mod = np.abs(lam)
    return EigenvalueMap(eigenvalues=lam, modulus=mod, labels=regions.classify(mod),
                         regions=regions)


@dataclass(frozen=True, repr=False)
class MemoryLength:
    r"""Effective impulse-response length of a discrete-time system (module docstring).

    Attributes
    ----------
    length : int
        ``ℓ_ε = min {ℓ >= 0 : tail(ℓ) <= ε E}``.
    eps : float
        The tail fraction ε.
    total_energy : float
        ``E = Σ_t ||h_t||_F^2``.
    tail_fraction : float
        ``tail(ℓ_ε) / E`` (<= ε).
    spectral_radius : float
        ρ(A).
    """

    length: int
    eps: float
    total_energy: float
    tail_fraction: float
    spectral_radius: float

    @property
    def single_mode_length(self) -> float:
        """``log ε / (2 log ρ(A))``: the steps after which a single mode of modulus ρ(A) keeps
        a fraction ε of its energy (0 for ρ = 0). For a scalar system
        ``length = 1 + ceil(single_mode_length)``; in general it is the asymptotic scale."""
        if self.spectral_radius == 0.0:
            return 0.0
        return math.log(self.eps) / (2.0 * math.log(self.spectral_radius))

    def as_dict(self) -> dict:
        """JSON-friendly dict."""
        return {"definition": "min l >= 0: sum_{t>=l} ||h_t||^2 <= eps sum_t ||h_t||^2, "
                              "h_0 = D, h_t = C A^(t-1) B",
                "length": self.length, "eps": self.eps, "total_energy": self.total_energy,
                "tail_fraction": self.tail_fraction, "spectral_radius": self.spectral_radius,
                "single_mode_length": self.single_mode_length}

    def __repr__(self) -> str:
        return compact_repr(self, length=self.length, eps=self.eps,
                            total_energy=self.total_energy,
                            spectral_radius=self.spectral_radius)


#: Largest doubling exponent searched: lengths up to 2^62 steps.
_MAX_DOUBLINGS = 62


def memory_length(system: LDS, eps: float = 1e-3) -> MemoryLength:
    r"""Effective impulse-response length ``ℓ_ε`` of a Schur-stable discrete-time system.

    ``ℓ_ε = min {ℓ >= 0 : Σ_{t>=ℓ} ||h_t||_F^2 <= ε Σ_{t>=0} ||h_t||_F^2}`` with
    ``h_0 = D``, ``h_t = C A^{t-1} B`` (module docstring). The total energy comes from the
    observability Gramian (Bartels–Stewart), each tail from ``tr(Xᵀ W X)`` with
    ``X = A^{ℓ-1} B``; ℓ is found by doubling and bisection on the powers ``A^{2^k}``, so the
    cost is O(n^3 log ℓ_ε) however long the memory.

    In the S4 convention (``y_k = C x_k + D u_k`` after ``x_k = A x_{k-1} + B u_k``) the
    response is ``D + CB, CAB, CA^2B, ...``: pass ``LDS(A, B, C @ A, D + C @ B, dt=...)``.

    Parameters
    ----------
    system : LDS or control.StateSpace
        Discrete-time, ρ(A) < 1.
    eps : float
        Tail fraction in (0, 1). Values below about 1e-13 reach round-off in the tails.

    Returns
    -------
    MemoryLength
        ``length = 0`` for a system whose response is identically zero.

    Raises
    ------
    ValueError
        If the system is continuous-time or not Schur stable (the energy is then infinite or
        not defined by the Gramian), or eps is outside (0, 1).

    Examples
    --------
    >>> sys = LDS([[0.5]], [[1.0]], [[1.0]], dt=1.0)   # tail(ℓ)/E = 0.25^(ℓ-1)
    >>> memory_length(sys, eps=0.01).length
    5
    """
    system = require_discrete(system, hint="; discretize it first")
    eps = check_real("eps", eps, low=0.0, high=1.0, low_inclusive=False, high_inclusive=False)
    A, B, C, D = system.A, system.B, system.C, system.D
    radius = float(np.max(np.abs(np.linalg.eigvals(A)), initial=0.0))
    if not radius < 1.0:
        raise ValueError(f"memory_length needs a Schur-stable system (spectral radius < 1) for "
                         f"a finite impulse-response energy; ρ(A) = {radius:.6g}")
    W = scipy.linalg.solve_discrete_lyapunov(A.T, C.T @ C)
    W = 0.5 * (W + W.T)

    def tail(X):  # Σ_{t>=ℓ} e_t for X = A^{ℓ-1} B
        return max(float(np.einsum("ij,ik,kj->", X, W, X)), 0.0)

    d_energy = float(np.sum(D * D))
    tail1 = tail(B)
    total = d_energy + tail1
    threshold = eps * total
    if total == 0.0:
        return MemoryLength(0, eps, 0.0, 0.0, radius)
    if tail1 <= threshold:  # tail(0) = E > threshold, tail(1) small enough
        return MemoryLength(1, eps, total, tail1 / total, radius)
    # doubling: powers[k] = A^(2^k) until tail(1 + 2^K) <= threshold
    powers = [A]
    while tail(powers[-1] @ B) > threshold:
        if len(powers) > _MAX_DOUBLINGS:
            raise ValueError(f"memory_length: the tail is still above eps after 2^"
                             f"{_MAX_DOUBLINGS} steps (ρ(A) = {radius!r} is too close to 1)")
        powers.append(powers[-1] @ powers[-1])
    # bisection: ell is the largest length with tail(ell) > threshold, X = A^(ell-1) B;
    # before step k, tail(ell + 2^(k+1)) <= threshold
    ell, X = 1, B
    for k in range(len(powers) - 2, -1, -1):
        Y = powers[k] @ X
        if tail(Y) > threshold:
            ell, X = ell + 2**k, Y
    last = tail(A @ X)  # tail(ell + 1) <= threshold
    _warn_if_unresolved(radius, eps, ell + 1, A.shape[0])
    return MemoryLength(ell + 1, eps, total, last / total, radius)


def _warn_if_unresolved(radius: float, eps: float, length: int, n: int) -> None:
    """Warn when the memory is beyond every horizon this machine can represent: ``ℓ_ε`` steps
    of even one float64 channel would not fit in its memory, or ρ(A) is so close to 1 that the
    Gramian's energies (relative error about ``n ε_mach / (1 - ρ²)``) cannot resolve the tail
    fraction ``eps`` (ℓ_ε is then uncertain too)."""
    error = n * np.finfo(float).eps / (1.0 - radius * radius)
    total = _validation.memory_bytes()
    too_long = total is not None and 8.0 * length > total
    if not (too_long or error > eps):
        return
    why = []
    if too_long:
        why.append(f"a stream that long needs {human_bytes(8.0 * length)} for one float64 "
                   f"channel, more than this machine's {human_bytes(total)} of memory")
    if error > eps:
        why.append(f"the impulse-response energies carry a relative error of about "
                   f"{error:.2g} (n eps / (1 - ρ²)), above the tail fraction eps = {eps:g}, "
                   "so the length itself is uncertain")
    warnings.warn(f"memory_length: ρ(A) = {radius!r} is {1.0 - radius:.3g} from 1 and the "
                  f"memory ℓ_ε = {length:.4g} steps is beyond any horizon that can be "
                  f"represented here: {'; '.join(why)}. Read it as 'longer than any stream of "
                  "interest'", RuntimeWarning, stacklevel=3)
