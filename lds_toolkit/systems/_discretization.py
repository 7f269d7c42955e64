"""Discretisation arithmetic on plain matrices (no :class:`~lds_toolkit.systems.LDS` here).

The transforms and their index conventions are documented in
:mod:`lds_toolkit.systems.discretize`, the public module; this one holds the matrix
computations so that both :meth:`LDS.discretize` and :func:`~lds_toolkit.systems.discretize`
use them without importing each other. Where scipy or python-control implement a transform
(first-order hold, the generalised bilinear family, pole-zero matching) this module checks
the arguments and calls them; zero-order hold and Tustin are computed here (the same
arithmetic as scipy's, with the overflow and singularity checks below).
"""

from __future__ import annotations

import numpy as np
import scipy.linalg
import scipy.signal

from .._validation import as_matrix, as_square, check_choice, check_finite_result, check_real

#: Every ``method=`` of :func:`~lds_toolkit.systems.discretize`: python-control's
#: (``sample_system``/``c2d``) and S4's bilinear recursion in a standard realisation.
METHODS = ("zoh", "foh", "impulse", "bilinear", "tustin", "gbt", "euler", "backward_diff",
           "matched", "s4-bilinear")
#: The weight α of the generalised bilinear transform that each named method fixes.
GBT_ALPHA = {"euler": 0.0, "bilinear": 0.5, "tustin": 0.5, "backward_diff": 1.0}


def zoh_matrices(A: np.ndarray, B: np.ndarray, dt: float) -> tuple[np.ndarray, np.ndarray]:
    """(A_d, B_d) of the zero-order hold, from one matrix exponential of [[A, B], [0, 0]]·dt.

    ``A`` (n, n) and ``B`` (n, m) finite real matrices and ``dt`` a finite step > 0, else
    ``ValueError``/``TypeError`` naming the argument; ``ValueError`` naming ``dt`` when
    e^{A dt} overflows float64."""
    A = as_square("A", A)
    B = as_matrix("B", B)
    if B.shape[0] != A.shape[0]:
        raise ValueError(f"B must have shape ({A.shape[0]}, m) to match A {A.shape}, got "
                         f"{B.shape}")
    dt = check_real("dt", dt, low=0.0, low_inclusive=False)
    return zoh_checked(A, B, dt)


def zoh_checked(A: np.ndarray, B: np.ndarray, dt: float) -> tuple[np.ndarray, np.ndarray]:
    """:func:`zoh_matrices` of arguments already checked (a system's matrices, a step > 0)."""
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


def _check_gbt_invertible(A: np.ndarray, dt: float, alpha: float) -> None:
    """``ValueError`` when ``I - α dt A`` is (numerically) singular: A has an eigenvalue at
    ``1/(α dt)``, where the generalised bilinear map is undefined."""
    if alpha == 0.0:
        return
    M_inv = np.eye(A.shape[0]) - alpha * dt * A
    with np.errstate(over="ignore", invalid="ignore"):
        cond = np.linalg.cond(M_inv) if np.all(np.isfinite(M_inv)) else np.inf
    if not cond < 1.0 / np.finfo(float).eps:
        pole = 1.0 / (alpha * dt)
        lam = np.linalg.eigvals(A)
        near = lam[np.argmin(np.abs(lam - pole))] if np.all(np.isfinite(lam)) else np.nan
        if alpha == 0.5:
            matrix, at, what = "I - dt/2 A", "2/dt", "the bilinear (Tustin) map"
        else:
            matrix, at, what = (f"I - {alpha:g} dt A", f"1/({alpha:g} dt)",
                                f"the generalised bilinear map with alpha={alpha:g}")
        raise ValueError(
            f"dt={dt:g} makes {matrix} singular (condition number {cond:.3g}): A has an "
            f"eigenvalue {complex(near):.6g} at or near {at} = {pole:.6g}, where {what} is "
            "undefined; choose another dt")


def bilinear_core(A: np.ndarray, B: np.ndarray, dt: float):
    """``(lu, A_d, B_d)`` of Tustin with M = (I - A dt/2)^{-1}: A_d = M (I + A dt/2),
    B_d = M B dt, and the LU factors of I - A dt/2 (for C M)."""
    _check_gbt_invertible(A, dt, 0.5)
    n = A.shape[0]
    I = np.eye(n)
    lu = scipy.linalg.lu_factor(I - 0.5 * dt * A)
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


def _options(method: str, dt: float, alpha, prewarp_frequency) -> tuple[float | None, float]:
    """Check ``alpha`` and ``prewarp_frequency`` against ``method``; return (α or None, the
    step the transform uses: ``dt``, or the prewarped ``2 tan(ω dt/2)/ω``)."""
    a: float | None
    if method == "gbt":
        if alpha is None:
            raise ValueError("method='gbt' needs alpha, the weight in [0, 1] of the generalised "
                             "bilinear transform (0: euler, 0.5: tustin, 1: backward_diff)")
        a = check_real("alpha", alpha, low=0.0, high=1.0)
    elif alpha is not None:
        raise ValueError(f"alpha is only used by method='gbt', got alpha={alpha!r} with "
                         f"method={method!r}")
    else:
        a = GBT_ALPHA.get(method)
    step = dt
    if prewarp_frequency is not None:
        if a != 0.5 or method == "s4-bilinear":
            raise ValueError("prewarp_frequency needs method='bilinear'/'tustin' (or 'gbt' with "
                             f"alpha=0.5), got method={method!r}"
                             + (f" with alpha={a:g}" if method == "gbt" else ""))
        w = check_real("prewarp_frequency", prewarp_frequency, low=0.0, low_inclusive=False)
        if not w * dt < np.pi:
            raise ValueError(f"prewarp_frequency must be below the Nyquist frequency pi/dt = "
                             f"{np.pi / dt:.6g} rad per time unit, got {w:g}")
        step = 2.0 * np.tan(w * dt / 2.0) / w
    return a, step


def _check_strictly_proper(D: np.ndarray) -> None:
    """``method="impulse"`` (impulse invariance) is defined for D = 0 only: scipy drops a D
    whose entries are below 1e-8 in silence; here any nonzero entry is refused."""
    if np.any(D != 0):
        i, j = np.unravel_index(int(np.argmax(np.abs(D))), D.shape)
        raise ValueError("method='impulse' (impulse invariance) needs a strictly proper system, "
                         f"D = 0; got D[{i}, {j}] = {D[i, j]:g}: use another method, or set D "
                         "to 0 if it is round-off")


def _matched(A, B, C, D, dt):
    """Pole-zero matching (python-control's ``TransferFunction.sample(method="matched")``) of a
    single-input single-output system, realised by python-control's ``tf2ss``."""
    import control

    if B.shape[1] != 1 or C.shape[0] != 1:
        raise ValueError("method='matched' (pole-zero matching) is defined for single-input "
                         f"single-output systems (as in python-control), got {B.shape[1]} "
                         f"inputs and {C.shape[0]} outputs")
    # the transfer function from the system's poles, zeros and DC gain (ss2tf's polynomials
    # carry round-off in the leading coefficients that scipy then warns about)
    ss = control.StateSpace(A, B, C, D, 0)
    poles, zeros = np.linalg.eigvals(A), control.zeros(ss)
    with np.errstate(divide="ignore", invalid="ignore"):
        gain = complex(np.squeeze(ss.dcgain()))
        unit = complex(np.prod(-zeros) / np.prod(-poles))  # DC gain of the monic zpk form
    if not (np.isfinite(gain) and np.isfinite(unit) and unit != 0):
        raise ValueError("method='matched' fixes the gain by the DC gain, which is infinite or "
                         "zero for this system (a pole or a zero at s = 0); use another method")
    # zpk's polynomials from the roots: conjugate pairs give real coefficients, up to imaginary
    # round-off (~1e-16) that python-control's tf refuses, so the real parts are taken
    num = np.real(np.poly(zeros)) if zeros.size else np.ones(1)
    tf = control.tf((gain / unit).real * num, np.real(np.poly(poles)))
    ssd = control.tf2ss(tf.sample(dt, method="matched"))
    return (np.asarray(ssd.A, float), np.asarray(ssd.B, float), np.asarray(ssd.C, float),
            np.asarray(ssd.D, float))


def discretize_matrices(A: np.ndarray, B: np.ndarray, C: np.ndarray, D: np.ndarray, dt,
                        method: str = "zoh", *, alpha: float | None = None,
                        prewarp_frequency: float | None = None):
    """(A_d, B_d, C_d, D_d) of a continuous system (A, B, C, D) sampled with step ``dt``.

    The equations are in :mod:`lds_toolkit.systems.discretize`. ``dt`` is checked (> 0, not a
    bool), ``method`` named in the error when unknown, ``alpha`` and ``prewarp_frequency``
    refused where the method does not use them.
    """
    dt = sample_time(dt)
    check_choice("method", method, METHODS)
    a, step = _options(method, dt, alpha, prewarp_frequency)
    if method == "zoh":
        Ad, Bd = zoh_checked(A, B, dt)
        return Ad, Bd, C, D
    if method == "matched":
        return _matched(A, B, C, D, dt)
    if method == "impulse":
        _check_strictly_proper(D)
    if method in ("bilinear", "tustin", "s4-bilinear"):
        lu, Ad, Bd = bilinear_core(A, B, step)
        if method == "s4-bilinear":  # x_k = Ā x_{k-1} + B̄ u_k, y_k = C x_k + D u_k, realised
            return Ad, Bd, C @ Ad, D + C @ Bd  # with s_k = x_{k-1}
        Cd = scipy.linalg.lu_solve(lu, C.T, trans=1).T  # C M
        Dd = D + 0.5 * (C @ scipy.linalg.lu_solve(lu, step * B))
        return Ad, Bd, Cd, Dd
    if method in ("foh", "impulse"):
        with np.errstate(over="ignore", invalid="ignore"):
            Ad, Bd, Cd, Dd, _ = scipy.signal.cont2discrete((A, B, C, D), dt, method=method)
    else:  # gbt, euler, backward_diff
        assert a is not None  # GBT_ALPHA names these methods' weight
        _check_gbt_invertible(A, step, a)
        Ad, Bd, Cd, Dd, _ = scipy.signal.cont2discrete((A, B, C, D), step, method="gbt",
                                                       alpha=a)
    cause = f"dt={dt:g} makes the {method} discretisation overflow float64; use a smaller dt"
    return tuple(check_finite_result(name, np.asarray(m, dtype=float), cause)
                 for name, m in zip(("A_d", "B_d", "C_d", "D_d"), (Ad, Bd, Cd, Dd)))
