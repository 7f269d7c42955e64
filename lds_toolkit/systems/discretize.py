r"""Discretisation of continuous-time systems: zero-order hold and bilinear (Tustin).

``method="tustin"`` is an alias of ``"bilinear"`` (python-control's ``sample_system`` and
scipy's ``cont2discrete`` accept both names for the same transform).

Index conventions (they differ, and tests pin each one):

``method="zoh"`` — exact for inputs held constant on [k·dt, (k+1)·dt)::

    A_d = e^{A dt},   B_d = ∫_0^dt e^{A s} ds B,   C_d = C,   D_d = D
    x_{k+1} = A_d x_k + B_d u_k,   y_k = C_d x_k + D_d u_k,   x_k = x(k·dt)

``method="bilinear"`` — Tustin, identical to ``scipy.signal.cont2discrete(method="bilinear")``
and ``control.sample_system(method="bilinear")``, with M = (I - A dt/2)^{-1}::

    A_d = M (I + A dt/2),   B_d = M B dt,   C_d = C M,   D_d = D + C M B dt/2
    x_{k+1} = A_d x_k + B_d u_k,   y_k = C_d x_k + D_d u_k

    Its transfer function is H(s) evaluated at s = (2/dt)(z-1)/(z+1). The state here is a
    half-step-shifted internal variable, not x(k·dt).

:func:`s4_bilinear` — the bilinear form used by S4 (S4++ paper eqs. 3–6)::

    Ā = M (I + A dt/2),   B̄ = M B dt,   C̄ = C (unchanged),   D̄ = D
    x_k = Ā x_{k-1} + B̄ u_k,   y_k = C x_k + D u_k

    u_k enters x_k in the same step. With u_k held on [k·dt, (k+1)·dt) and x_{-1} = x(0),
    x_k is the trapezoidal-rule approximation of x((k+1)·dt), with O(dt^2) global error
    (equivalently: x_k ≈ x(k·dt) when u_k is held on the interval ending at k·dt). Same
    Ā, B̄ as Tustin, but C is not transformed and the input is not delayed, so the
    input–output map differs: starting at rest, the Tustin output equals the average of two
    consecutive S4 outputs, ``y^tustin_k = (y^s4_k + y^s4_{k-1}) / 2`` (with ``D = 0``), i.e.
    H_tustin(z) = (z+1)/2 · C (zI - Ā)^{-1} B̄. Get the matrices with :func:`s4_bilinear`
    and simulate them with ``simulate(sys, u, output="s4")``.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg

from .._validation import check_choice, check_finite_result, check_real
from .lds import LDS, require_continuous

METHODS = ("zoh", "bilinear", "tustin")


def zoh_matrices(A: np.ndarray, B: np.ndarray, dt: float) -> tuple[np.ndarray, np.ndarray]:
    """(A_d, B_d) of the zero-order hold, from one matrix exponential of [[A, B], [0, 0]]·dt.

    ``ValueError`` naming ``dt`` when e^{A dt} overflows float64."""
    n, m = B.shape
    block = np.zeros((n + m, n + m))
    with np.errstate(over="ignore", invalid="ignore"):
        block[:n, :n] = A * dt
        block[:n, n:] = B * dt
        E = scipy.linalg.expm(block) if np.all(np.isfinite(block)) else block * np.nan
    with np.errstate(over="ignore"):
        scale = float(np.linalg.norm(A, 1)) * dt
    cause = (f"dt={dt:g} is too large for the zero-order hold of this system: computing "
             f"e^(A dt) overflows float64 (norm(A) * dt = {scale:.4g}); use a smaller dt")
    return (check_finite_result("A_d", E[:n, :n], cause),
            check_finite_result("B_d", E[:n, n:], cause))


def _bilinear_core(A: np.ndarray, B: np.ndarray, dt: float):
    n = A.shape[0]
    I = np.eye(n)
    M_inv = I - 0.5 * dt * A
    with np.errstate(over="ignore", invalid="ignore"):
        cond = np.linalg.cond(M_inv) if np.all(np.isfinite(M_inv)) else np.inf
    if not cond < 1.0 / np.finfo(float).eps:
        lam = np.linalg.eigvals(A)
        near = lam[np.argmin(np.abs(lam - 2.0 / dt))] if np.all(np.isfinite(lam)) else np.nan
        raise ValueError(
            f"dt={dt:g} makes I - dt/2 A singular (condition number {cond:.3g}): A has an "
            f"eigenvalue {complex(near):.6g} at or near 2/dt = {2.0 / dt:.6g}, where the "
            "bilinear (Tustin) map is undefined; choose another dt")
    lu = scipy.linalg.lu_factor(M_inv)
    Ad = scipy.linalg.lu_solve(lu, I + 0.5 * dt * A)
    Bd = scipy.linalg.lu_solve(lu, dt * B)
    cause = f"dt={dt:g} makes the bilinear discretisation overflow float64; use a smaller dt"
    return lu, check_finite_result("A_d", Ad, cause), check_finite_result("B_d", Bd, cause)


def _sample_time(dt) -> float:
    if isinstance(dt, bool | np.bool_):
        raise TypeError(f"dt must be a sample time > 0 to discretise with, got {dt!r} "
                        "(python-control's dt=True means 'unspecified step', which cannot be "
                        "used to compute A_d = e^{A dt})")
    return check_real("dt", dt, low=0.0, low_inclusive=False)


def discretize(system: LDS, dt: float, method: str = "zoh") -> LDS:
    """Discretise a continuous-time :class:`LDS` with sample time ``dt``.

    Parameters
    ----------
    system : LDS or control.StateSpace
        Continuous-time system (a ``StateSpace`` with ``dt = 0`` is converted by
        :meth:`LDS.from_statespace`).
    dt : float
        Sample time, > 0.
    method : {"zoh", "bilinear", "tustin"}
        Zero-order hold or Tustin (``"tustin"`` and ``"bilinear"`` are the same transform, as
        in ``control.sample_system``); see the module docstring for the equations and index
        conventions. For S4's variant use :func:`s4_bilinear`.

    Returns
    -------
    LDS
        Discrete system with ``dt`` set (``.to_statespace()`` gives python-control's object).
    """
    system = require_continuous(system)
    dt = _sample_time(dt)
    check_choice("method", method, METHODS)
    A, B, C, D = system.A, system.B, system.C, system.D
    if method == "zoh":
        Ad, Bd = zoh_matrices(A, B, dt)
        return LDS(Ad, Bd, C, D, dt=dt)
    lu, Ad, Bd = _bilinear_core(A, B, dt)
    Cd = scipy.linalg.lu_solve(lu, C.T, trans=1).T  # C M
    Dd = D + 0.5 * (C @ scipy.linalg.lu_solve(lu, dt * B))
    return LDS(Ad, Bd, Cd, Dd, dt=dt)


def s4_bilinear(system: LDS, dt: float) -> LDS:
    """S4's bilinear discretisation (S4++ paper eqs. 3–6): Ā, B̄ as Tustin, C and D unchanged.

    The returned :class:`LDS` is meant for the recursion ``x_k = Ā x_{k-1} + B̄ u_k``,
    ``y_k = C x_k + D u_k`` (input enters the state in the same step): simulate it with
    ``simulate(sys, u, output="s4")``. Simulating it with the standard convention is a
    different system, see the module docstring. ``system`` may be a continuous-time
    ``control.StateSpace``.
    """
    system = require_continuous(system)
    dt = _sample_time(dt)
    _, Ad, Bd = _bilinear_core(system.A, system.B, dt)
    return LDS(Ad, Bd, system.C, system.D, dt=dt)
