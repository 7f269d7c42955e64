r"""Checking a Lyapunov certificate, and the Lyapunov function along trajectories.

:func:`verify` checks a candidate ``(P, M)`` for a closed-loop matrix against the equation
of :mod:`~lds_toolkit.control.lyapunov` (``Aᵀ P + P A = -M``, or ``Aᵀ P A - P = -M`` in
discrete time) and reports what holds (:class:`LyapunovCheck`) rather than raising: the
S4++ paper's printed matrices are checked with it. :func:`lyapunov_values` evaluates
``V(x) = xᵀ P x`` on states and :func:`level_set` draws its level sets (2-D, for plots).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg

from .._repr import compact_repr
from .._typing import ArrayLike, SystemLike
from .._validation import (
    as_float_array,
    as_square,
    check_bool,
    check_fits_in_memory,
    check_positive_int,
    check_real,
)
from ..systems.lds import as_lds, is_system
from ._checks import (
    is_positive_definite,
    is_symmetric,
    square_like,
    state_matrix,
    symmetric_positive_definite,
)

__all__ = ["LyapunovCheck", "level_set", "lyapunov_values", "verify"]


@dataclass(frozen=True, repr=False)
class LyapunovCheck:
    """What :func:`verify` found; ``satisfied`` is the conjunction of the checks.

    Attributes
    ----------
    residual : ndarray
        ``Aᵀ P + P A + M`` (continuous) or ``Aᵀ P A - P + M`` (discrete); zero when the
        equation holds.
    residual_norm : float
        Frobenius norm of ``residual``.
    relative_residual : float
        ``residual_norm / (||Aᵀ P||_F + ||P A||_F + ||M||_F)`` (discrete: ``||AᵀPA||_F +
        ||P||_F + ||M||_F``).
    P_symmetric, P_positive_definite, M_symmetric, M_positive_definite : bool
    P_eigenvalues, M_eigenvalues : ndarray
        Eigenvalues of the symmetric parts, ascending.
    stable : bool
        Closed loop Hurwitz (continuous) or Schur (discrete).
    closed_loop_eigenvalues : ndarray (complex)
    decay_rate : float
        ``λ_min(M) / λ_max(P)``. Continuous time: when the equation holds, ``V(x(t)) <=
        V(x(0)) e^{-decay_rate t}``. Discrete time: ``V_{k+1} <= (1 - decay_rate) V_k``.
        Meaningless (and reported anyway) when the checks fail.
    satisfied : bool
        ``relative_residual <= tol`` and P ≻ 0 and M ≻ 0 and stable.
    tol : float
    discrete : bool
    """

    residual: np.ndarray
    residual_norm: float
    relative_residual: float
    P_symmetric: bool
    P_positive_definite: bool
    P_eigenvalues: np.ndarray
    M_symmetric: bool
    M_positive_definite: bool
    M_eigenvalues: np.ndarray
    stable: bool
    closed_loop_eigenvalues: np.ndarray
    decay_rate: float
    satisfied: bool
    tol: float
    discrete: bool

    def as_dict(self) -> dict:
        """JSON-friendly dict (complex eigenvalues as [re, im] pairs)."""
        return {
            "equation": "A^T P A - P = -M" if self.discrete else "A^T P + P A = -M",
            "residual": self.residual.tolist(),
            "residual_norm": self.residual_norm,
            "relative_residual": self.relative_residual,
            "P_symmetric": self.P_symmetric,
            "P_positive_definite": self.P_positive_definite,
            "P_eigenvalues": self.P_eigenvalues.tolist(),
            "M_symmetric": self.M_symmetric,
            "M_positive_definite": self.M_positive_definite,
            "M_eigenvalues": self.M_eigenvalues.tolist(),
            "closed_loop_stable": self.stable,
            "closed_loop_eigenvalues": [[float(z.real), float(z.imag)]
                                        for z in self.closed_loop_eigenvalues],
            "decay_rate": self.decay_rate,
            "satisfied": self.satisfied,
            "tol": self.tol,
        }

    def __repr__(self) -> str:
        return compact_repr(self, satisfied=self.satisfied,
                            relative_residual=self.relative_residual,
                            P_positive_definite=self.P_positive_definite,
                            M_positive_definite=self.M_positive_definite, stable=self.stable,
                            decay_rate=self.decay_rate, discrete=self.discrete)


def verify(A_closed_loop: ArrayLike | SystemLike, P: ArrayLike, M: ArrayLike, *,
           discrete: bool | None = None,
           tol: float = 1e-9) -> LyapunovCheck:
    r"""Check a Lyapunov certificate ``(P, M)`` for a closed-loop matrix (eq. 8).

    Reports rather than raises: the S4++ paper's printed matrices are checked with it.

    Parameters
    ----------
    A_closed_loop : array_like, shape (n, n), or an LDS / control.StateSpace
        ``A + B K`` (the paper's ``A + B T``); a system stands for its ``A``.
    P, M : array_like, shape (n, n)
        Candidate Lyapunov matrix and decay matrix.
    discrete : bool, optional
        Check ``AᵀPA - P = -M`` instead of ``AᵀP + PA = -M``. Default: the system's
        timebase when ``A_closed_loop`` is a system, else False (continuous).
    tol : float
        Bound on the relative residual for ``satisfied``.

    Returns
    -------
    LyapunovCheck
    """
    if discrete is not None:
        discrete = check_bool("discrete", discrete)
    if is_system(A_closed_loop):
        if discrete is None:
            discrete = as_lds(A_closed_loop, "A_closed_loop").is_discrete
        A = state_matrix("A_closed_loop", A_closed_loop, discrete=bool(discrete))
    else:
        A = as_square("A_closed_loop", A_closed_loop)
    discrete = bool(discrete)
    n = A.shape[0]
    P = square_like("P", P, n, f"A_closed_loop {A.shape}")
    M = square_like("M", M, n, f"A_closed_loop {A.shape}")
    tol = check_real("tol", tol, low=0.0)
    if discrete:
        AtPA = A.T @ P @ A
        R = AtPA - P + M
        scale = np.linalg.norm(AtPA) + np.linalg.norm(P) + np.linalg.norm(M)
    else:
        AtP = A.T @ P
        R = AtP + P @ A + M
        scale = np.linalg.norm(AtP) + np.linalg.norm(P @ A) + np.linalg.norm(M)
    rnorm = float(np.linalg.norm(R))
    rel = rnorm / scale if scale > 0 else rnorm
    lam = np.linalg.eigvals(A).astype(complex)
    stable = bool(np.all(np.abs(lam) < 1)) if discrete else bool(np.all(lam.real < 0))
    p_eig = np.linalg.eigvalsh(0.5 * (P + P.T))
    m_eig = np.linalg.eigvalsh(0.5 * (M + M.T))
    p_pd, m_pd = is_positive_definite(P), is_positive_definite(M)
    rate = float(m_eig[0] / p_eig[-1]) if p_eig[-1] != 0 else float("nan")
    return LyapunovCheck(
        residual=R, residual_norm=rnorm, relative_residual=float(rel),
        P_symmetric=is_symmetric(P), P_positive_definite=p_pd, P_eigenvalues=p_eig,
        M_symmetric=is_symmetric(M), M_positive_definite=m_pd, M_eigenvalues=m_eig,
        stable=stable, closed_loop_eigenvalues=lam, decay_rate=rate,
        satisfied=bool(rel <= tol and p_pd and m_pd and stable), tol=tol, discrete=discrete,
    )


def lyapunov_values(P, x) -> np.ndarray:
    """V(x) = xᵀ P x for states ``x`` of shape (..., n); returns shape (...)."""
    P = symmetric_positive_definite("P", P)
    x = as_float_array("x", x, min_ndim=1)
    if x.shape[-1] != P.shape[0]:
        raise ValueError(f"x must have shape (..., {P.shape[0]}) to match P, got {x.shape}")
    return np.einsum("...i,ij,...j->...", x, P, x)


def level_set(P, level: float, n_points: int = 256) -> np.ndarray:
    r"""Points of the ellipse ``{x : xᵀ P x = level}`` for a 2x2 ``P ≻ 0`` (for plots).

    Parameters
    ----------
    P : array_like, shape (2, 2)
        Symmetric positive definite.
    level : float
        ``c > 0``.
    n_points : int
        Number of points; the curve is closed (first point repeated at the end).

    Returns
    -------
    ndarray, shape (n_points, 2)
        ``x = sqrt(c) L^{-T} (cos θ, sin θ)`` with ``P = L Lᵀ`` (Cholesky), so that
        ``xᵀ P x = c`` exactly up to rounding.
    """
    P = symmetric_positive_definite("P", P)
    if P.shape != (2, 2):
        raise ValueError(f"level_set draws 2-D ellipses: P must have shape (2, 2), "
                         f"got {P.shape}")
    level = check_real("level", level, low=0.0, low_inclusive=False)
    n_points = check_positive_int("n_points", n_points, minimum=3)
    # angles, cosines and sines, the (2, n) circle and the (2, n) points: 6 floats a point
    check_fits_in_memory("n_points", n_points, 48.0 * n_points,
                         "the (n_points, 2) float64 points and the angles they are made from")
    theta = np.linspace(0.0, 2 * np.pi, n_points)
    circle = np.stack([np.cos(theta), np.sin(theta)])
    L = np.linalg.cholesky(P)
    pts = scipy.linalg.solve_triangular(L.T, circle, lower=False) * np.sqrt(level)
    return pts.T
