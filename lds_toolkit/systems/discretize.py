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

from ._discretization import METHODS, bilinear_core, sample_time, zoh_matrices
from .lds import LDS, require_continuous

__all__ = ["METHODS", "discretize", "s4_bilinear", "zoh_matrices"]


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
    return require_continuous(system).discretize(dt, method=method)


def s4_bilinear(system: LDS, dt: float) -> LDS:
    """S4's bilinear discretisation (S4++ paper eqs. 3–6): Ā, B̄ as Tustin, C and D unchanged.

    The returned :class:`LDS` is meant for the recursion ``x_k = Ā x_{k-1} + B̄ u_k``,
    ``y_k = C x_k + D u_k`` (input enters the state in the same step): simulate it with
    ``simulate(sys, u, output="s4")``. Simulating it with the standard convention is a
    different system, see the module docstring. ``system`` may be a continuous-time
    ``control.StateSpace``.
    """
    system = require_continuous(system)
    dt = sample_time(dt)
    _, Ad, Bd = bilinear_core(system.A, system.B, dt)
    return LDS(Ad, Bd, system.C, system.D, dt=dt)
