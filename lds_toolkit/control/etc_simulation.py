r"""The event-triggered sampler: :func:`simulate_etc` and its result :class:`ETCResult`.

Runs the loop of :mod:`~lds_toolkit.control.etc_system` (``dx/dt = A x + B K x(t_i)``)
under a rule of :mod:`~lds_toolkit.control.etc_triggers`, whose function ``g`` decides the
sampling instants ``t_{i+1} = inf { t > t_i : g(t) <= 0 }``. Two monitoring modes:

``"exact"`` (continuous monitoring)
    The flow between events is exact (matrix exponential of the loop generator, see
    :mod:`lds_toolkit.control._flow`); ``g`` is scanned on steps of ``bracket_step`` after each
    event and the first sign change is located by Brent's method to ``tol`` (1e-10 by
    default). A crossing and re-crossing of zero within one bracket step would be missed:
    keep ``bracket_step`` well below the shortest inter-event time (the result reports it).
``"grid"`` (periodic monitoring, the paper's ``h = 0.01``)
    ``g`` is checked only at ``t = k h``; an event happens at the first grid point where
    ``g <= 0`` (using ``e(t⁻)``, the error before the update). Event times are multiples of
    ``h``, and the first grid event lies within one grid step after the exact one. With
    ``check_times`` the checks happen at given instants instead (e.g. a jittered grid).

Counting convention: ``ETCResult.sample_times`` starts with ``t_0 = 0``; ``n_events`` and
``event_times`` count only the triggered updates at ``t > 0``.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field

import numpy as np

from .._repr import compact_repr
from .._threads import single_blas_thread
from .._typing import ArrayLike
from .._validation import (
    as_float_array,
    check_choice,
    check_fits_in_memory,
    check_positive_int,
    check_real,
)
from ._checks import check_instants
from ._etc_events import run_checks, run_exact, run_grid, table_steps
from ._flow import Flow, flow_on_grid, loop_generator
from .etc_system import ETCSystem
from .etc_triggers import TriggerRule

__all__ = ["ETCResult", "simulate_etc"]

# ----------------------------------------------------------------------------- result
@dataclass(repr=False)
class ETCResult:
    """Output of :func:`simulate_etc`.

    Attributes
    ----------
    sample_times : ndarray (S,)
        Instants where the input is updated; ``sample_times[0] = 0`` (the initial sample).
    sampled_states : ndarray (S, n)
        ``x(t_i)``.
    inputs : ndarray (S, m)
        ``u_i = K x(t_i)``, held on ``[t_i, t_{i+1})``.
    t : ndarray (N,)
        Output grid on ``[0, horizon]`` (uniform, ``output_step``).
    x, u : ndarray (N, n), (N, m)
        State and (right-continuous) input on ``t``.
    V : ndarray (N,)
        ``xᵀ P x`` on ``t``.
    V_bound : ndarray (N,) or None
        The rule's guaranteed bound (eq. 13 for :class:`LyapunovRule`); only guaranteed in
        exact mode.
    eta : ndarray (N,) or None
        Internal variable of a dynamic rule.
    mode, rule, horizon, step : str, dict, float, float
        ``step`` is the grid step (grid mode) or the bracket step (exact mode).
    tol : float or None
        Root-finding tolerance of exact mode.
    zeno : bool
        The rule fired again immediately after an event (g <= 0 with e = 0); the run stopped.
    truncated : bool
        ``max_events`` was reached before the horizon; the run stopped.
    system, trigger : ETCSystem, TriggerRule
        The loop and the rule object that produced the run.
    """

    sample_times: np.ndarray
    sampled_states: np.ndarray
    inputs: np.ndarray
    t: np.ndarray
    x: np.ndarray
    u: np.ndarray
    V: np.ndarray
    V_bound: np.ndarray | None
    eta: np.ndarray | None
    mode: str
    rule: dict
    horizon: float
    step: float
    tol: float | None
    zeno: bool = False
    truncated: bool = False
    system: ETCSystem | None = field(default=None, repr=False)
    trigger: TriggerRule | None = field(default=None, repr=False)

    @property
    def event_times(self) -> np.ndarray:
        """Triggered events, ``t > 0`` (``t_0 = 0`` excluded)."""
        return self.sample_times[1:]

    @property
    def n_events(self) -> int:
        """Number of triggered events in ``(0, horizon]`` (``t_0 = 0`` not counted)."""
        return int(self.sample_times.size - 1)

    @property
    def inter_event_times(self) -> np.ndarray:
        """``t_{i+1} - t_i`` for consecutive samples (the first is measured from t_0 = 0)."""
        return np.diff(self.sample_times)

    @property
    def min_inter_event(self) -> float:
        """Shortest inter-event time (``inf`` without events); tends to 0 under Zeno."""
        d = self.inter_event_times
        return float(d.min()) if d.size else math.inf

    @property
    def bound_satisfied(self) -> bool | None:
        """Whether ``V <= V_bound`` (relative slack 1e-9) on the output grid."""
        if self.V_bound is None:
            return None
        return bool(np.all(self.V <= self.V_bound * (1 + 1e-9) + 1e-300))

    def to_time_response(self):
        """The run as python-control's ``TimeResponseData`` on the output grid ``t``: the
        outputs are the states (state feedback), the inputs ``u(t) = K x(t_i)`` held between
        events; labelled with the plant's names when the loop was built from a system
        (``x[i]``, ``u[i]`` otherwise), so ``.plot()`` and ``.to_pandas()`` work."""
        import control

        names = getattr(self.system, "names", None) or {}
        n, m = self.x.shape[1], self.u.shape[1]
        states = names.get("states") or [f"x[{i}]" for i in range(n)]
        inputs = names.get("inputs") or [f"u[{i}]" for i in range(m)]
        title = f"Event-triggered loop ({self.n_events} events)"
        return control.TimeResponseData(
            self.t, self.x.T, self.x.T, self.u.T, output_labels=states, state_labels=states,
            input_labels=inputs, title=title, sysname=names.get("name"), plot_inputs=True)

    def summary(self) -> dict:
        """The run's numbers in a JSON-friendly dict (events counted as in the module
        docstring: ``t_0 = 0`` excluded)."""
        return {"mode": self.mode, "rule": self.rule, "events": self.n_events,
                "min_inter_event": self.min_inter_event,
                "mean_inter_event": float(np.mean(self.inter_event_times))
                if self.n_events else math.inf,
                "final_norm": float(np.linalg.norm(self.x[-1])),
                "bound_satisfied": self.bound_satisfied,
                "zeno": self.zeno, "truncated": self.truncated}

    def __repr__(self) -> str:
        return compact_repr(self, mode=self.mode, rule=self.rule, events=self.n_events,
                            horizon=self.horizon, t=self.t, x=self.x, zeno=self.zeno,
                            truncated=self.truncated)


# --------------------------------------------------------------------------- the sampler
@single_blas_thread
def simulate_etc(system: ETCSystem, rule: TriggerRule, x0: ArrayLike, *, horizon: float = 10.0,
                 mode: str = "exact", grid_step: float = 0.01, bracket_step: float = 1e-3,
                 tol: float = 1e-10, output_step: float | None = None,
                 max_events: int = 100_000,
                 check_times: ArrayLike | None = None) -> ETCResult:
    r"""Run the event-triggered loop on ``[0, horizon]``.

    Parameters
    ----------
    system : ETCSystem
    rule : TriggerRule
        :class:`LyapunovRule` (eq. 12), :class:`RelativeErrorRule`, :class:`PeriodicRule`,
        :class:`DynamicRule`, or your own subclass.
    x0 : array_like, shape (n,)
        Initial state, not zero (every state-dependent rule is degenerate at the origin).
    horizon : float > 0
    mode : {"exact", "grid"}
        Continuous monitoring with root finding, or checks at ``t = k grid_step`` only
        (see the module docstring).
    grid_step : float > 0
        Monitoring step of grid mode (the paper's 0.01).
    bracket_step : float > 0
        Scan step of exact mode: sign changes of g are bracketed on this step, then
        located with ``scipy.optimize.brentq``.
    tol : float > 0
        Absolute tolerance of the event times in exact mode.
    output_step : float > 0, optional
        Step of the output grid (default ``horizon / 10_000``).
    max_events : int
        Stop (``truncated=True``) after this many events.
    check_times : array_like, optional
        Grid mode only: monitor at these strictly increasing instants in ``(0, horizon]``
        instead of ``k grid_step`` (e.g. a jittered grid); ``grid_step`` is then only
        reported.

    Returns
    -------
    ETCResult
    """
    if not isinstance(system, ETCSystem):
        raise TypeError(f"system must be an ETCSystem, got {type(system).__name__}")
    if not isinstance(rule, TriggerRule):
        raise TypeError(f"rule must be a TriggerRule (e.g. LyapunovRule(kappa)), got "
                        f"{type(rule).__name__}")
    n = system.n
    x0 = as_float_array("x0", x0)
    if x0.shape != (n,):
        raise ValueError(f"x0 must have shape ({n},) to match A, got {x0.shape}")
    if not np.any(x0):
        raise ValueError("x0 must be nonzero: the origin is the equilibrium, where every "
                         "state-dependent triggering rule is degenerate")
    horizon = check_real("horizon", horizon, low=0.0, low_inclusive=False)
    check_choice("mode", mode, ("exact", "grid"))
    max_events = check_positive_int("max_events", max_events)
    if check_times is not None:
        if mode != "grid":
            raise ValueError(f"check_times needs mode='grid', got mode={mode!r}")
        check_times = as_float_array("check_times", check_times, ndim=1)
        check_instants(check_times, horizon)
    if mode == "grid":
        step = check_real("grid_step", grid_step, low=0.0, low_inclusive=False)
        if step > horizon:
            raise ValueError(f"grid_step must be <= horizon ({horizon:g}), got {step:g}")
        tol_used = None
    else:
        step = check_real("bracket_step", bracket_step, low=0.0, low_inclusive=False)
        tol_used = check_real("tol", tol, low=0.0, low_inclusive=False)
        if tol_used >= step:
            raise ValueError(f"tol must be smaller than bracket_step ({step:g}), got "
                             f"{tol_used:g}")
    if output_step is None:
        output_step = horizon / 10_000
    output_step = check_real("output_step", output_step, low=0.0, low_inclusive=False)
    if output_step > horizon:
        raise ValueError(f"output_step must be <= horizon ({horizon:g}), got {output_step:g}")
    check_fits_in_memory("horizon / output_step", f"{horizon:g} / {output_step:g}",
                         8.0 * (horizon / output_step + 1) * (2 * n + 4),
                         f"the {horizon / output_step + 1:.3g} points of the output grid")
    if mode == "exact":
        _check_step_count("bracket_step", step, horizon, "root-bracketing steps")
    elif check_times is None:
        _check_step_count("grid_step", step, horizon, "trigger checks")

    internal = rule.internal(system)
    if internal is not None:
        lam, W, eta0 = internal
        W = np.asarray(W, dtype=float)
        if W.shape != (2 * n, 2 * n):
            raise ValueError(f"{type(rule).__name__}.internal() must return W of shape "
                             f"({2 * n}, {2 * n}), got {W.shape}")
        flow = Flow(loop_generator(system.A, system.B, system.K), (float(lam), 0.5 * (W + W.T)))
        eta0 = float(eta0)
    else:
        flow = Flow(loop_generator(system.A, system.B, system.K))
        eta0 = None

    if mode == "grid" and check_times is not None:
        times, states, etas, zeno, truncated = run_checks(system, rule, flow, x0, eta0,
                                                           check_times, max_events)
    elif mode == "grid":
        times, states, etas, zeno, truncated = run_grid(system, rule, flow, x0, eta0,
                                                         horizon, step, max_events)
    else:
        times, states, etas, zeno, truncated = run_exact(system, rule, flow, x0, eta0,
                                                          horizon, step, tol_used, max_events)
    if zeno:
        warnings.warn(f"{rule!r} fired again immediately after the event at t={times[-1]:.6g} "
                      "(Zeno behaviour); the run stopped there", RuntimeWarning, stacklevel=2)
    if truncated:
        warnings.warn(f"max_events={max_events} reached at t={times[-1]:.6g} before the "
                      f"horizon {horizon:g}; the run stopped there", RuntimeWarning, stacklevel=2)

    sample_times = np.asarray(times)
    sampled = np.asarray(states)
    inputs = sampled @ system.K.T
    t, X, eta_t, idx = _trajectory(flow, sample_times, sampled, etas, horizon, output_step, n)
    U = inputs[idx]
    V = np.einsum("ki,ij,kj->k", X, system.P, X)
    bound = rule.decay_bound(system, t, float(V[0]), eta0)
    if bound is not None:
        bound = np.asarray(bound, dtype=float)
    return ETCResult(sample_times=sample_times, sampled_states=sampled, inputs=inputs, t=t,
                     x=X, u=U, V=V, V_bound=bound, eta=eta_t, mode=mode, rule=rule.params(),
                     horizon=horizon, step=step, tol=tol_used, zeno=zeno,
                     truncated=truncated, system=system, trigger=rule)


#: Most steps (grid checks, root brackets) one simulation evaluates: each costs about a
#: microsecond (measured 0.6-0.8 us per grid check), so 1e8 is a minute or two.
MAX_STEPS = 10**8


def _check_step_count(name: str, step: float, horizon: float, what: str) -> None:
    """Refuse a step so small that the simulation would run for hours (issue 27: a
    ``grid_step=1e-9`` ran for minutes on a 1e10-point grid)."""
    count = horizon / step
    if count > MAX_STEPS:
        raise ValueError(f"{name}={step:g} is too small for horizon={horizon:g}: "
                         f"{count:.3g} {what}, more than the {MAX_STEPS:.0e} one simulation "
                         f"evaluates (about a microsecond each); use {name} >= "
                         f"{horizon / MAX_STEPS:.3g} or a shorter horizon")


def _trajectory(flow: Flow, sample_times, sampled, etas, horizon, dt_out, n):
    """State (and η) on a uniform output grid, each point flowed from its interval's sample.

    The grid step is ``horizon / ceil(horizon / dt_out)`` (at most ``dt_out``). Uses the
    closed-loop flow from x(t_i) (no open-loop error growth). Points within 1e-9 output
    steps of an event are assigned to the new interval (right-continuous u).
    """
    N = max(1, int(math.ceil(horizon / dt_out * (1 - 1e-12))))
    dt_out = horizon / N                  # uniform grid ending exactly at the horizon
    t = np.arange(N + 1) * dt_out
    t[-1] = horizon
    idx = np.searchsorted(sample_times, t + 1e-9 * dt_out, side="right") - 1
    idx = np.clip(idx, 0, sample_times.size - 1)
    z_samples = np.concatenate([sampled, sampled], axis=1)
    Z, eta_t = flow_on_grid(flow, sample_times, z_samples, etas, t, idx,
                            chunk=table_steps(flow.dim, 1024))
    return t, Z[:, :n], eta_t, idx
