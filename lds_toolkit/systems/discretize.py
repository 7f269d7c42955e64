r"""Discretisation of continuous-time systems: every method of python-control's
``sample_system``/``c2d``, and S4's bilinear recursion.

=====================  ===============================================================
``method=``            transform (python-control's name; who computes it)
=====================  ===============================================================
``"zoh"``              zero-order hold (ours: one matrix exponential, overflow checked)
``"foh"``              first-order hold (``scipy.signal.cont2discrete``)
``"impulse"``          impulse invariance, strictly proper systems (D = 0) only (scipy)
``"bilinear"``         Tustin; ``"tustin"`` is the same transform; ``prewarp_frequency``
                       supported (ours, singularity checked)
``"gbt"``              generalised bilinear transform with weight ``alpha`` in [0, 1]
                       (scipy); ``prewarp_frequency`` with ``alpha = 0.5``
``"euler"``            forward difference, gbt with α = 0 (scipy)
``"backward_diff"``    backward difference, gbt with α = 1 (scipy)
``"matched"``          pole-zero matching, single-input single-output systems only
                       (python-control's ``TransferFunction.sample``, realised by its
                       ``tf2ss``: the states are new coordinates)
``"s4-bilinear"``      S4's recursion (below) in a standard realisation, so that python-control
                       and ``simulate`` run it as S4 does
=====================  ===============================================================

The results equal ``control.sample_system(sys, dt, method, alpha=..., prewarp_frequency=...,
name=..., copy_names=..., inputs=..., outputs=..., states=...)`` matrix for matrix and name for
name (to round-off; ``matched`` to python-control's own ``tf2ss`` realisation; a property test
over random SISO and MIMO systems checks every method and keyword,
``tests/interop/test_discretize_parity.py``). Three deliberate differences: an explicit
``name=`` is used also with ``copy_names=False`` (python-control 0.10.2 drops it there, against
its own docstring); ``prewarp_frequency`` with a method that cannot use it is an error
(python-control warns and ignores it); ``"impulse"`` refuses any D != 0 (scipy drops a D below
1e-8 in silence). ``"matched"`` and ``"s4-bilinear"`` take a ``StateSpace``, which
``sample_system`` does not (it has ``"matched"`` for transfer functions only).

**Return types**, one rule for every function of the toolkit that returns a transformed
system (:func:`discretize`, :func:`s4_bilinear`): a ``control.StateSpace`` in gives a plain
``control.StateSpace`` out, an :class:`LDS` an :class:`LDS`. With ``copy_names=True``
(default) the input, output and state names are kept (not the state names for ``matched``)
and the system name gets python-control's ``$sampled`` suffix.

``method="impulse"`` — impulse invariance (scipy's ``cont2discrete``; D = 0)::

    A_d = e^{A dt},   B_d = e^{A dt} B dt,   C_d = C,   D_d = C B dt

    the discrete impulse response h_k = C_d A_d^{k-1} B_d (k >= 1) is dt times the
    continuous one at t = k dt, and D_d = C B dt is dt h(0).

Index conventions (they differ, and tests pin each one). All but the last are read with the
standard recursion ``x_{k+1} = A_d x_k + B_d u_k``, ``y_k = C_d x_k + D_d u_k``.

``method="zoh"`` — exact for inputs held constant on [k·dt, (k+1)·dt)::

    A_d = e^{A dt},   B_d = ∫_0^dt e^{A s} ds B,   C_d = C,   D_d = D,   x_k = x(k·dt)

``method="foh"`` — exact for inputs interpolated linearly between samples (scipy's
realisation, whose state is x(k·dt) - Γ₂ u_k)::

    A_d = Φ,   B_d = Γ₁ + (Φ - I) Γ₂,   C_d = C,   D_d = D + C Γ₂,
    Φ = e^{A dt},   Γ₁ = ∫_0^dt e^{A s} ds B,   Γ₂ = (1/dt) ∫_0^dt e^{A s} (dt - s) ds B

``method="gbt"`` with weight α, M = (I - α dt A)^{-1} (``"euler"`` α = 0, ``"bilinear"``
α = ½, ``"backward_diff"`` α = 1)::

    A_d = M (I + (1-α) dt A),   B_d = M B dt,   C_d = C M,   D_d = D + α C B_d

``method="bilinear"`` (Tustin, α = ½), identical to ``scipy.signal.cont2discrete(method=
"bilinear")`` and ``control.sample_system(method="bilinear")``, with M = (I - A dt/2)^{-1}::

    A_d = M (I + A dt/2),   B_d = M B dt,   C_d = C M,   D_d = D + C M B dt/2

    Its transfer function is H(s) evaluated at s = (2/dt)(z-1)/(z+1). The state here is a
    half-step-shifted internal variable, not x(k·dt). With ``prewarp_frequency=ω`` the
    transform uses the step ``2 tan(ω dt/2)/ω`` in place of ``dt`` (the sample time stays
    ``dt``), so that the discrete response at e^{iω dt} equals the continuous one at iω.

:func:`s4_bilinear` — the bilinear form used by S4 (S4++ paper eqs. 3–6)::

    Ā = M (I + A dt/2),   B̄ = M B dt,   C̄ = C (unchanged),   D̄ = D
    x_k = Ā x_{k-1} + B̄ u_k,   y_k = C x_k + D u_k

    u_k enters x_k in the same step. With u_k held on [k·dt, (k+1)·dt) and x_{-1} = x(0),
    x_k is the trapezoidal-rule approximation of x((k+1)·dt), with O(dt^2) global error
    (equivalently: x_k ≈ x(k·dt) when u_k is held on the interval ending at k·dt). Same
    Ā, B̄ as Tustin, but C is not transformed and the input is not delayed, so the
    input–output map differs: starting at rest, the Tustin output equals the average of two
    consecutive S4 outputs, ``y^tustin_k = (y^s4_k + y^s4_{k-1}) / 2`` (with ``D = 0``), i.e.
    H_tustin(z) = (z+1)/2 · C (zI - Ā)^{-1} B̄. :func:`s4_bilinear` returns these matrices,
    to be simulated with ``simulate(sys, u, output="s4")`` (python-control would read them
    with the standard recursion: a different system).

``method="s4-bilinear"`` — the same S4 recursion, realised for the standard recursion with the
state s_k = x_{k-1}::

    A_d = Ā,   B_d = B̄,   C_d = C Ā,   D_d = D + C B̄

    so ``control.forced_response`` and ``simulate(sys, u)`` give S4's outputs.
"""

from __future__ import annotations

from .._typing import SystemLike
from ._discretization import GBT_ALPHA, METHODS, bilinear_core, sample_time, zoh_matrices
from .lds import LDS, SignalNames, like_input, require_continuous

__all__ = ["GBT_ALPHA", "METHODS", "discretize", "s4_bilinear", "zoh_matrices"]


def discretize(system: SystemLike, dt: float, method: str = "zoh", *,
               alpha: float | None = None, prewarp_frequency: float | None = None,
               name: str | None = None, copy_names: bool = True, inputs: SignalNames = None,
               outputs: SignalNames = None, states: SignalNames = None) -> SystemLike:
    """Discretise a continuous-time system with sample time ``dt`` (as
    ``control.sample_system``, keyword for keyword).

    Parameters
    ----------
    system : LDS, control.StateSpace or control.TransferFunction
        Continuous-time system (``dt = 0``); a transfer function is realised by
        ``control.ss``, its names kept.
    dt : float
        Sample time, > 0.
    method : {"zoh", "foh", "impulse", "bilinear", "tustin", "gbt", "euler", "backward_diff", \
"matched", "s4-bilinear"}
        The transform; see the module docstring for the equations, index conventions and
        which library computes each. ``"tustin"`` and ``"bilinear"`` are the same transform.
    alpha : float in [0, 1], optional
        The weight of ``method="gbt"`` (required there, refused elsewhere).
    prewarp_frequency : float, optional
        ω > 0 below the Nyquist frequency π/dt, for ``"bilinear"``/``"tustin"`` (or ``"gbt"``
        with α = ½): the discrete response at e^{iω dt} then equals the continuous one at iω.
    name : str, optional
        The sampled system's name; default: ``system``'s name with python-control's
        ``$sampled`` suffix (with ``copy_names``), else a generic ``sys[k]``. A given
        ``name`` is always the result's name, as python-control documents it and as
        ``control.sample_system`` does for a ``TransferFunction``; for a ``StateSpace`` with
        ``copy_names=False``, python-control 0.10 drops it (a generic ``sys[k]``, against its
        own documentation): there the two differ, and this function keeps the name asked for
        (tests/interop/test_discretize_parity.py checks both against python-control).
    copy_names : bool
        Keep ``system``'s input, output and state names (default, as python-control).
    inputs, outputs, states : list of str, str or int, optional
        Signal names (or counts) of the sampled system, as python-control's; they replace the
        copied ones.

    Returns
    -------
    LDS, control.StateSpace or control.TransferFunction
        The discrete system (``dt`` set), of the type that came in: a plain
        ``control.StateSpace`` when ``system`` is a ``control.StateSpace`` that is not an
        :class:`LDS`, a ``control.TransferFunction`` for one, an :class:`LDS` for an LDS.

    Raises
    ------
    ValueError
        A discrete system, ``dt <= 0``, an unknown method, an option the method does not use,
        a singular ``I - α dt A``, a matrix exponential that overflows, ``"impulse"`` with
        D != 0, ``"matched"`` on a multi-input or multi-output system or one with a pole at 0,
        or names that do not match the signals.
    TypeError
        ``dt=True`` (python-control's unspecified step), a ``copy_names`` that is not a bool,
        or a system that is not a state-space system.

    Examples
    --------
    >>> import control as ct
    >>> G = ct.ss([[-1.0]], [[1.0]], [[1.0]], [[0.0]], inputs="u", outputs="y", name="G")
    >>> Gd = discretize(G, 0.1, "foh")
    >>> type(Gd).__name__, Gd.input_labels, Gd.output_labels, Gd.name
    ('StateSpace', ['u'], ['y'], 'G$sampled')
    >>> discretize(G, 0.1, "impulse", name="Gi", outputs=["z"]).output_labels
    ['z']
    """
    sysd = require_continuous(system).discretize(
        dt, method, alpha=alpha, prewarp_frequency=prewarp_frequency, name=name,
        copy_names=copy_names, inputs=inputs, outputs=outputs, states=states)
    return like_input(system, sysd)


def s4_bilinear(system: SystemLike, dt: float) -> SystemLike:
    """S4's bilinear discretisation (S4++ paper eqs. 3–6): Ā, B̄ as Tustin, C and D unchanged.

    The returned system is meant for the recursion ``x_k = Ā x_{k-1} + B̄ u_k``,
    ``y_k = C x_k + D u_k`` (input enters the state in the same step): simulate it with
    ``simulate(sys, u, output="s4")``. Simulating it with the standard convention (or giving it
    to python-control) is a different system, see the module docstring; for a system that
    python-control runs as S4 does, use ``discretize(system, dt, "s4-bilinear")``. The signal
    and system names are kept (the name unchanged: these are S4's matrices, not a sampled
    system). Return type as :func:`discretize`: a ``control.StateSpace`` in gives a
    ``control.StateSpace`` out, an :class:`LDS` an :class:`LDS`.
    """
    lds = require_continuous(system)
    dt = sample_time(dt)
    _, Ad, Bd = bilinear_core(lds.A, lds.B, dt)
    return like_input(system, LDS(Ad, Bd, lds.C, lds.D, dt=dt, **lds.names()))
