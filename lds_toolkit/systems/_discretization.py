"""Discretisation arithmetic on plain matrices (no :class:`~lds_toolkit.systems.LDS` here).

The transforms and their index conventions are documented in
:mod:`lds_toolkit.systems.discretize`, the public module; this one holds the matrix
computations so that both :meth:`LDS.discretize` and :func:`~lds_toolkit.systems.discretize`
use them without importing each other.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg

from .._validation import check_choice, check_finite_result, check_real

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


def bilinear_core(A: np.ndarray, B: np.ndarray, dt: float):
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


def sample_time(dt) -> float:
    if isinstance(dt, bool | np.bool_):
        raise TypeError(f"dt must be a sample time > 0 to discretise with, got {dt!r} "
                        "(python-control's dt=True means 'unspecified step', which cannot be "
                        "used to compute A_d = e^{A dt})")
    dt = check_real("dt", dt, low=0.0, low_inclusive=False)
    if dt < np.finfo(float).tiny:  # subnormal: B_d ~ dt B keeps a few bits, or none
        raise ValueError(f"dt={dt:g} is below the smallest normal float64 "
                         f"({np.finfo(float).tiny:g}): the sampled B_d ~ dt B would underflow "
                         "(the system would read A_d = I, B_d = 0); use a larger dt")
    return dt


def discretize_matrices(A: np.ndarray, B: np.ndarray, C: np.ndarray, D: np.ndarray, dt,
                        method: str = "zoh"):
    """(A_d, B_d, C_d, D_d) of a continuous system (A, B, C, D) sampled with step ``dt``.

    ``method="zoh"``: A_d = e^{A dt}, B_d = ∫_0^dt e^{A s} ds B, C_d = C, D_d = D.
    ``method="bilinear"`` (alias ``"tustin"``), with M = (I - A dt/2)^{-1}:
    A_d = M (I + A dt/2), B_d = M B dt, C_d = C M, D_d = D + C M B dt/2.
    ``dt`` is checked (> 0, not a bool) and ``method`` named in the error when unknown.
    """
    dt = sample_time(dt)
    check_choice("method", method, METHODS)
    if method == "zoh":
        Ad, Bd = zoh_matrices(A, B, dt)
        return Ad, Bd, C, D
    lu, Ad, Bd = bilinear_core(A, B, dt)
    Cd = scipy.linalg.lu_solve(lu, C.T, trans=1).T  # C M
    Dd = D + 0.5 * (C @ scipy.linalg.lu_solve(lu, dt * B))
    return Ad, Bd, Cd, Dd
