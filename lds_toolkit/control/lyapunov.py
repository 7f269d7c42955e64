r"""Lyapunov equations and the discrete Lyapunov certificate.

The check of a certificate (:func:`verify`, :class:`LyapunovCheck`) and the Lyapunov function
along trajectories (:func:`lyapunov_values`, :func:`level_set`) live in
:mod:`~lds_toolkit.control.lyapunov_checks`; this module re-exports them (its names are the
same as before the split) and uses :func:`verify` for the certificate's own check.

Conventions (this module's; scipy and python-control write the same equations transposed)::

    continuous:  Aᵀ P + P A = -M          (S4++ paper eq. 8 with A -> A + B T)
    discrete:    Aᵀ P A - P = -M

With these, V(x) = xᵀ P x decreases along ``dx/dt = A x`` (resp. ``x_{k+1} = A x_k``):
dV/dt = -xᵀ M x (resp. V_{k+1} - V_k = -x_kᵀ M x_k).

How the other libraries map onto ours, and the ``convention=`` argument that solves theirs
(with our stability and definiteness checks):

=====================  ==================================  ==================================
``convention=``        :func:`continuous_lyapunov` solves   :func:`discrete_lyapunov` solves
=====================  ==================================  ==================================
``"toolkit"`` (default) ``Aᵀ P + P A = -M``                ``Aᵀ P A - P = -M``
``"control"``          ``A X + X Aᵀ + Q = 0``:              ``A X Aᵀ - X + Q = 0``:
                       ``control.lyap(A, Q)``              ``control.dlyap(A, Q)``
``"scipy"``            ``A X + X Aᵀ = Q``:                  ``A X Aᵀ - X + Q = 0``:
                       ``solve_continuous_lyapunov(A, Q)``  ``solve_discrete_lyapunov(A, Q)``
=====================  ==================================  ==================================

So ours with ``convention="toolkit"`` is ``control.lyap(A.T, M)`` = ``solve_continuous_lyapunov(
A.T, -M)`` and ``control.dlyap(A.T, M)`` = ``solve_discrete_lyapunov(A.T, M)``. Only the
Lyapunov forms are covered (python-control's Sylvester and generalized ``E`` forms are not).

Neither scipy nor python-control checks stability: for an unstable ``A`` they return the
(unique, when it exists) solution, which is then indefinite. :func:`continuous_lyapunov` and
:func:`discrete_lyapunov` refuse such ``A`` instead: with ``M ≻ 0`` a solution ``P ≻ 0``
exists if and only if ``A`` is Hurwitz (resp. Schur).

``M`` need not be symmetric. For a Hurwitz (resp. Schur) ``A`` the equation has exactly one
solution for *every* ``M`` (the spectra of ``-Aᵀ`` and ``A`` are disjoint; resp. no
``λ_i λ_j = 1``), linear in ``M``; a symmetric ``M`` gives the symmetric ``P`` (symmetrised
and, for ``M ≻ 0``, checked positive definite), a non-symmetric ``M`` the non-symmetric ``P``
as solved. scipy accepts a non-symmetric right-hand side too; python-control 0.10's
``lyap``/``dlyap`` refuse it (``ControlArgument: Q must be a symmetric matrix``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg

from .._repr import compact_repr
from .._typing import ArrayLike, SystemLike
from .._validation import check_choice, check_real
from ._checks import (
    is_positive_definite,
    is_symmetric,
    min_eig_sym,
    square_like,
    state_matrix,
    symmetric_positive_definite,
)
from .lyapunov_checks import LyapunovCheck, level_set, lyapunov_values, verify

__all__ = [
    "CONVENTIONS",
    "DiscreteCertificate",
    "LyapunovCheck",
    "continuous_lyapunov",
    "discrete_certificate",
    "discrete_lyapunov",
    "level_set",
    "lyapunov_values",
    "verify",
]


#: Values of ``convention=`` of :func:`continuous_lyapunov` and :func:`discrete_lyapunov`.
CONVENTIONS = ("toolkit", "control", "scipy")

_EQUATIONS = {  # (continuous, discrete), as solved for the given (A, M)
    "toolkit": ("AᵀP + PA = -M", "AᵀPA - P = -M"),
    "control": ("AX + XAᵀ + M = 0 (control.lyap)", "AXAᵀ - X + M = 0 (control.dlyap)"),
    "scipy": ("AX + XAᵀ = M (scipy solve_continuous_lyapunov)",
              "AXAᵀ - X + M = 0 (scipy solve_discrete_lyapunov)"),
}


def _inputs(A, M, discrete, convention="toolkit"):
    """(A', M') with the equation in the toolkit's form ``A'ᵀP + PA' = -M'`` (resp.
    ``A'ᵀPA' - P = -M'``), and the equation's text for messages."""
    check_choice("convention", convention, CONVENTIONS)
    A = state_matrix("A", A, discrete=discrete)
    n = A.shape[0]
    M = square_like("M", M, n, f"A {A.shape}")
    if is_symmetric(M):
        M = 0.5 * (M + M.T)
    equation = _EQUATIONS[convention][int(discrete)]
    if convention != "toolkit":  # theirs is ours for Aᵀ; scipy's continuous q is -M
        A = A.T
        if convention == "scipy" and not discrete:
            M = -M
    return A, M, equation


def _finish(P, M, what):
    """Symmetrise ``P`` for a symmetric ``M`` and check it (finite; ``P ≻ 0`` if ``M ≻ 0``)."""
    symmetric = is_symmetric(M)
    if symmetric:
        P = 0.5 * (P + P.T)
    if not np.all(np.isfinite(P)):
        raise ValueError(f"the {what} Lyapunov solve returned non-finite entries; A is "
                         "numerically too close to the stability boundary")
    if symmetric and is_positive_definite(M) and not is_positive_definite(P):
        raise ValueError(f"the {what} Lyapunov solution is not positive definite in floating "
                         f"point (smallest eigenvalue {min_eig_sym(P):g}); A is too close to "
                         "the stability boundary for this M")
    return P


def continuous_lyapunov(A: ArrayLike | SystemLike, M: ArrayLike, *,
                        convention: str = "toolkit") -> np.ndarray:
    r"""Solve ``Aᵀ P + P A = -M`` for P (continuous time), or python-control's / scipy's form.

    Parameters
    ----------
    A : array_like, shape (n, n), or a continuous-time LDS / control.StateSpace
        Hurwitz matrix (every eigenvalue has a negative real part), e.g. the closed loop
        ``A + B K`` of eq. 7. A system stands for its ``A``.
    M : array_like, shape (n, n)
        Right-hand side (eq. 8's M). ``M ≻ 0`` gives ``P ≻ 0``; a non-symmetric ``M`` gives
        the unique non-symmetric solution (module docstring).
    convention : {"toolkit", "control", "scipy"}
        ``"toolkit"``: ``AᵀP + PA = -M``. ``"control"``: ``A X + X Aᵀ + M = 0``, the same
        as ``control.lyap(A, M)``. ``"scipy"``: ``A X + X Aᵀ = M``, the same as
        ``scipy.linalg.solve_continuous_lyapunov(A, M)`` (then ``M ≺ 0`` gives ``X ≻ 0``).

    Returns
    -------
    P : ndarray, shape (n, n)
        The unique solution (symmetric when M is); for the toolkit's convention
        ``P = ∫_0^∞ e^{Aᵀ s} M e^{A s} ds``.

    Raises
    ------
    ValueError
        If shapes disagree, A is a discrete-time system, or A is not
        Hurwitz (then no positive-definite P exists for ``M ≻ 0``, and the solution that
        scipy would return is indefinite or does not exist).

    Notes
    -----
    Calls ``scipy.linalg.solve_continuous_lyapunov(A.T, -M)`` (Bartels–Stewart) after the
    stability check; see the module docstring for the other libraries' conventions.
    """
    A, M, equation = _inputs(A, M, False, convention)
    lam = np.linalg.eigvals(A)
    k = int(np.argmax(lam.real))
    if not lam[k].real < 0:
        raise ValueError(
            f"A must be Hurwitz (all eigenvalues with negative real part) for {equation} "
            f"to have a positive-definite solution; it has the eigenvalue {lam[k]:.6g}"
        )
    P = scipy.linalg.solve_continuous_lyapunov(A.T, -np.asarray(M))
    return _finish(P, M, "continuous")


def discrete_lyapunov(A: ArrayLike | SystemLike, M: ArrayLike, *,
                      convention: str = "toolkit") -> np.ndarray:
    r"""Solve ``Aᵀ P A - P = -M`` for P (discrete time), or python-control's / scipy's form.

    Parameters
    ----------
    A : array_like, shape (n, n), or a discrete-time LDS / control.StateSpace
        Schur-stable matrix (spectral radius < 1). A system stands for its ``A``.
    M : array_like, shape (n, n)
        Right-hand side; ``M ≻ 0`` gives ``P ≻ 0``; a non-symmetric ``M`` gives the unique
        non-symmetric solution (module docstring).
    convention : {"toolkit", "control", "scipy"}
        ``"toolkit"``: ``AᵀPA - P = -M``. ``"control"`` and ``"scipy"``:
        ``A X Aᵀ - X + M = 0``, the same as ``control.dlyap(A, M)`` and
        ``scipy.linalg.solve_discrete_lyapunov(A, M)``.

    Returns
    -------
    P : ndarray, shape (n, n)
        The unique solution (symmetric when M is); for the toolkit's convention
        ``P = Σ_k (Aᵀ)^k M A^k``.

    Raises
    ------
    ValueError
        If shapes disagree, A is a continuous-time system, or ρ(A) >= 1.

    Notes
    -----
    Calls ``scipy.linalg.solve_discrete_lyapunov(A.T, M)`` after the stability check.
    """
    A, M, equation = _inputs(A, M, True, convention)
    lam = np.linalg.eigvals(A)
    k = int(np.argmax(np.abs(lam)))
    if not np.abs(lam[k]) < 1:
        raise ValueError(
            f"A must be Schur stable (spectral radius < 1) for {equation} to have a "
            f"positive-definite solution; it has the eigenvalue {lam[k]:.6g} "
            f"(|λ| = {abs(lam[k]):.6g})"
        )
    P = scipy.linalg.solve_discrete_lyapunov(A.T, M)
    return _finish(P, M, "discrete")


@dataclass(frozen=True, repr=False)
class DiscreteCertificate:
    r"""A quadratic Lyapunov certificate of ``x_{k+1} = A x_k`` and the contraction it proves.

    With ``V(x) = xᵀ P x`` and ``P ≻ 0``::

        Aᵀ P A ⪯ ρ² P   ⇔   V(x_{k+1}) <= ρ² V(x_k) for every x_k
                        ⇒   ||x_k||_2 <= sqrt(cond(P)) ρ^k ||x_0||_2

    ``rho`` is the smallest such ρ for this P, ``ρ = ||P^{1/2} A P^{-1/2}||_2 =
    sqrt(λ_max(P^{-1} AᵀPA))``. Any P gives ``ρ(A) <= rho`` (the spectral radius is a lower
    bound on every certified rate); ``rho < 1`` proves asymptotic stability.

    Attributes
    ----------
    P : ndarray, shape (n, n)
        Solution of ``(A/r)ᵀ P (A/r) - P = -M`` (``r = rate``), i.e. ``AᵀPA = r² (P - M)``.
    M : ndarray, shape (n, n)
        The positive-definite right-hand side.
    rate : float
        The target r; the certificate proves ``rho < r``
        (``rho² = r² (1 - λ_min(P^{-1/2} M P^{-1/2}))``).
    rho : float
        Certified contraction factor of ``||x||_P`` per step (``rho²`` for V).
    spectral_radius : float
        ρ(A) = max |λ_i(A)|.
    condition : float
        ``cond(P) = λ_max(P) / λ_min(P)``, the constant's square in the norm bound.
    check : LyapunovCheck
        :func:`verify` of ``(A/r, P, M)`` in discrete time (residual, definiteness).
    """

    P: np.ndarray
    M: np.ndarray
    rate: float
    rho: float
    spectral_radius: float
    condition: float
    check: LyapunovCheck

    @property
    def margin(self) -> float:
        """``1 - rho``: how far inside the unit disc the certificate puts the system
        (negative when it proves no stability)."""
        return 1.0 - self.rho

    @property
    def proves_stability(self) -> bool:
        """``rho < 1`` and the certificate's checks hold."""
        return bool(self.rho < 1.0 and self.check.satisfied)

    def norm_bound(self, k) -> np.ndarray:
        """``sqrt(cond(P)) · rho^k``: a bound on ``||x_k|| / ||x_0||`` for steps ``k``."""
        return np.sqrt(self.condition) * self.rho ** np.asarray(k, dtype=float)

    def as_dict(self) -> dict:
        """JSON-friendly dict."""
        return {"equation": "(A/r)^T P (A/r) - P = -M;  A^T P A <= rho^2 P",
                "P": self.P.tolist(), "M": self.M.tolist(), "rate": self.rate,
                "rho": self.rho, "margin": self.margin,
                "spectral_radius": self.spectral_radius, "condition": self.condition,
                "proves_stability": self.proves_stability,
                "relative_residual": self.check.relative_residual}

    def __repr__(self) -> str:
        return compact_repr(self, rho=self.rho, spectral_radius=self.spectral_radius,
                            rate=self.rate, margin=self.margin, condition=self.condition,
                            n=self.P.shape[0])


def discrete_certificate(A: ArrayLike | SystemLike, M: ArrayLike | None = None, *,
                         rate: float | None = None) -> DiscreteCertificate:
    r"""A Lyapunov certificate of ``x_{k+1} = A x_k`` with the decay rate it proves.

    Solves ``(A/r)ᵀ P (A/r) - P = -M`` (:func:`discrete_lyapunov` for ``A/r``), so that
    ``Aᵀ P A = r² (P - M) ⪯ ρ² P`` with

        ρ² = λ_max(P^{-1} Aᵀ P A) = r² (1 - λ_min(P^{-1/2} M P^{-1/2})) < r²,

    and reports ρ (see :class:`DiscreteCertificate`). With ``r = 1`` (default) this is the
    plain equation ``AᵀPA - P = -M``; a target ``r`` closer to ρ(A) gives a tighter
    certificate (ρ → ρ(A) as r → ρ(A)) with a worse-conditioned P.

    Parameters
    ----------
    A : array_like, shape (n, n), or a discrete-time LDS / control.StateSpace
        State matrix (a system stands for its ``A``).
    M : array_like, shape (n, n), optional
        Symmetric positive definite; the identity by default.
    rate : float, optional
        Target ``r > ρ(A)``; 1 by default (then A must be Schur stable). A target above 1
        certifies a growth bound of an unstable A.

    Returns
    -------
    DiscreteCertificate

    Raises
    ------
    ValueError
        If ``rate <= ρ(A)`` (no quadratic certificate proves a factor below ρ(A)), M is not
        symmetric positive definite, or shapes disagree.

    Examples
    --------
    >>> cert = discrete_certificate([[0.5, 0.0], [0.0, -0.2]])
    >>> round(cert.rho, 12), round(cert.spectral_radius, 12)
    (0.5, 0.5)
    """
    A = state_matrix("A", A, discrete=True)
    n = A.shape[0]
    M = np.eye(n) if M is None else symmetric_positive_definite("M", M, n, f"A {A.shape}")
    radius = float(np.max(np.abs(np.linalg.eigvals(A)), initial=0.0))
    r = 1.0 if rate is None else check_real("rate", rate, low=0.0, low_inclusive=False)
    if not r > radius:
        raise ValueError(f"rate must exceed the spectral radius ρ(A) = {radius:.6g} (no "
                         f"quadratic certificate proves a contraction factor below it), got "
                         f"{r:g}" + ("" if rate is not None else
                                     "; A is not Schur stable: pass rate > ρ(A) to bound "
                                     "its growth"))
    As = A / r
    P = discrete_lyapunov(As, M)
    AtPA = A.T @ P @ A
    rho2 = float(scipy.linalg.eigh(0.5 * (AtPA + AtPA.T), P, eigvals_only=True)[-1])
    p_eig = np.linalg.eigvalsh(P)
    return DiscreteCertificate(P=P, M=M, rate=r, rho=float(np.sqrt(max(rho2, 0.0))),
                               spectral_radius=radius, condition=float(p_eig[-1] / p_eig[0]),
                               check=verify(As, P, M, discrete=True))
