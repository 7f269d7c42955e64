r"""The NSS ("non-stable states") perturbation experiment of the S4++ paper (Sec. 2.2, Fig. 1).

Procedure (Fig. 1, left to right):

1. run the event-triggered loop (:func:`~lds_toolkit.control.etc_simulation.simulate_etc`,
   by default grid-monitored with ``h = 0.01`` on ``[0, 10]`` as in the paper) and record
   the sampled inputs ``u_i = K x(t_i)`` and their instants ``t_i`` (``t_0 = 0``);
2. perturb the instants: ``t'_i = t_i + δ_i`` with ``δ_i ~ Uniform(-ε, ε)`` drawn from
   ``rng``, ``ε`` = ``magnitude`` (< h, "strictly constrained within the temporal grid
   width"); ``t'_0 = t_0 = 0`` because the input must be defined from the start; the values
   ``u_i`` are unchanged;
3. replay the samples open loop, ``dx/dt = A x + B u(t)`` with ``u(t) = u_i`` on
   ``[t_i, t_{i+1})``, (i) at the original instants and (ii) at the perturbed ones, from the
   same ``x(0)``, exactly (piecewise-constant input, matrix exponentials:
   :func:`lds_toolkit.systems.simulate_continuous`);
4. report ``|x(t)|`` (Euclidean norm) over ``[0, horizon]``.

Why (ii) diverges: the replay is open loop, and the plant ``A`` is unstable (eigenvalues 1
and 2 for the paper's system). Replay (i) reproduces the closed-loop trajectory only because
it feeds back exactly the inputs that cancel the unstable modes; any mismatch ``d`` at time
``s`` (here ``|d| ≈ |B (u_i - u_{i-1})| |δ_i|``) grows like ``e^{2 (t - s)}``, about ``5·10^8``
over ten seconds. The growth is proportional to ``ε``, with no threshold: it is a property of
open-loop replay of an unstable plant, not of sampling grids as such. With feedback kept (the
event-triggered loop itself monitored on a grid jittered by the same ε, :func:`jittered_grid`)
the state stays bounded. :func:`nss_sweep` measures both as curves over ``ε`` and ``κ``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._random import RngLike, as_generator
from .._repr import compact_repr
from .._threads import single_blas_thread
from .._typing import ArrayLike
from .._validation import as_float_array, as_matrix, check_positive_int, check_real
from ..systems import LDS, simulate_continuous
from .etc_simulation import ETCResult, simulate_etc
from .etc_system import ETCSystem, paper_system
from .etc_triggers import LyapunovRule, TriggerRule

__all__ = [
    "NSSResult",
    "nss_experiment",
    "nss_sweep",
    "perturb_sample_times",
    "jittered_grid",
    "replay_open_loop",
]

#: Initial state used by default (the paper does not print one).
DEFAULT_X0 = (1.0, 0.0)


def _times(name, sample_times) -> np.ndarray:
    t = as_float_array(name, sample_times, ndim=1)
    if t.size == 0:
        raise ValueError(f"{name} must contain at least t_0")
    if np.any(np.diff(t) <= 0):
        k = int(np.argmax(np.diff(t) <= 0))
        raise ValueError(f"{name} must be strictly increasing; {name}[{k + 1}]={t[k + 1]!r} "
                         f"<= {name}[{k}]={t[k]!r}")
    return t


def _check_magnitude(magnitude, grid_step: float) -> float:
    """``magnitude`` in [0, grid_step): the perturbation stays strictly within the grid."""
    magnitude = check_real("magnitude", magnitude, low=0.0)
    if not magnitude < grid_step:
        raise ValueError(f"magnitude must be smaller than the grid width grid_step="
                         f"{grid_step:g} (perturbation strictly within the grid), got "
                         f"{magnitude:g}")
    return magnitude


def perturb_sample_times(sample_times, magnitude: float, rng: RngLike = None, *,
                         grid_step: float | None = None) -> np.ndarray:
    r"""``t'_i = t_i + δ_i``, ``δ_i ~ Uniform(-magnitude, magnitude)`` for ``i >= 1``.

    Parameters
    ----------
    sample_times : array_like (S,)
        Strictly increasing; ``t_0`` is kept fixed.
    magnitude : float >= 0
        Half-width ε of the perturbation.
    rng : Generator, int or None
    grid_step : float, optional
        When given, ``magnitude`` must be strictly smaller (the paper's requirement that the
        perturbation stays within the grid width).

    Raises
    ------
    ValueError
        Magnitude negative or not below ``grid_step``; or the perturbation would reorder
        two samples (choose ``magnitude`` below half the shortest inter-event time).
    """
    t = _times("sample_times", sample_times)
    if grid_step is None:
        magnitude = check_real("magnitude", magnitude, low=0.0)
    else:
        grid_step = check_real("grid_step", grid_step, low=0.0, low_inclusive=False)
        magnitude = _check_magnitude(magnitude, grid_step)
    gen = as_generator(rng)
    delta = magnitude * gen.uniform(-1.0, 1.0, size=t.size)
    delta[0] = 0.0
    tp = t + delta
    if np.any(np.diff(tp) <= 0):
        k = int(np.argmax(np.diff(tp) <= 0))
        raise ValueError(f"magnitude={magnitude:g} reorders samples {k} and {k + 1} "
                         f"(inter-event time {t[k + 1] - t[k]:g}); use a magnitude below half "
                         "the shortest inter-event time")
    return tp


def _hold_index(sample_times, t):
    return np.clip(np.searchsorted(sample_times, t, side="right") - 1, 0, None)


@single_blas_thread
def replay_open_loop(A, B, sample_times, inputs, x0, t) -> np.ndarray:
    r"""Exact open-loop response to inputs held between sample instants.

    ``dx/dt = A x + B u(t)``, ``u(t) = inputs[i]`` on ``[sample_times[i],
    sample_times[i+1])`` (the last one held to the end), ``x(t[0]) = x0``.

    Parameters
    ----------
    A : (n, n), B : (n, m)
    sample_times : (S,) strictly increasing, ``sample_times[0] <= t[0]``
    inputs : (S, m)
    x0 : (n,)
    t : (N,) strictly increasing output times

    Returns
    -------
    ndarray (N, n)
        ``x(t_k)``; computed on the union of ``t`` and the switching instants by
        :func:`lds_toolkit.systems.simulate_continuous` (zero-order hold, no integration
        error), which raises :class:`~lds_toolkit.systems.SimulationDivergedError` with the
        step index if ``|x|`` exceeds 1e100.
    """
    A = as_matrix("A", A)
    B = as_matrix("B", B)
    plant = LDS(A, B, np.eye(A.shape[0]))
    ts = _times("sample_times", sample_times)
    u = as_matrix("inputs", inputs)
    if u.shape != (ts.size, B.shape[1]):
        raise ValueError(f"inputs must have shape ({ts.size}, {B.shape[1]}) to match "
                         f"sample_times and B, got {u.shape}")
    t = _times("t", t)
    x0 = as_float_array("x0", x0)
    if x0.shape != (A.shape[0],):
        raise ValueError(f"x0 must have shape ({A.shape[0]},), got {x0.shape}")
    if ts[0] > t[0]:
        raise ValueError(f"the first sample instant ({ts[0]:g}) must not be after t[0] "
                         f"({t[0]:g}): the input is undefined before it")
    inside = ts[(ts > t[0]) & (ts < t[-1])]
    grid = np.union1d(t, inside)
    res = simulate_continuous(plant, grid, u[_hold_index(ts, grid)], x0)
    return res.x[np.searchsorted(grid, t)]


def jittered_grid(horizon: float, grid_step: float, magnitude: float,
                  rng: RngLike = None) -> np.ndarray:
    """Monitoring instants ``k h + δ_k`` (k = 1..N, ``δ_k ~ Uniform(-ε, ε)``), sorted,
    kept inside ``(0, horizon]``: a sampling grid that does not align with the nominal one."""
    horizon = check_real("horizon", horizon, low=0.0, low_inclusive=False)
    grid_step = check_real("grid_step", grid_step, low=0.0, low_inclusive=False)
    magnitude = _check_magnitude(magnitude, grid_step)
    N = int(np.floor(horizon / grid_step * (1 + 1e-12)))
    c = np.arange(1, N + 1) * grid_step + magnitude * as_generator(rng).uniform(-1, 1, N)
    c = np.unique(c[(c > 0) & (c <= horizon)])
    return c


@dataclass(repr=False)
class NSSResult:
    """Output of :func:`nss_experiment` (the four panels of Fig. 1 and their numbers).

    Attributes
    ----------
    etc : ETCResult
        The event-triggered run (panel 1).
    t : ndarray (N,)
        Output grid of the replays.
    sample_times, perturbed_times : ndarray (S,)
    inputs : ndarray (S, m)
        The recorded samples (replayed unchanged at both sets of instants).
    u_original, u_perturbed : ndarray (N, m)
        The held inputs on ``t`` (panel 2).
    x_original, x_perturbed : ndarray (N, n)
        Open-loop replays (panels 3 and 4).
    etc_jittered : ETCResult
        Contrast (not in the paper): the same ETC loop with feedback, monitored on a grid
        jittered by the same ε (:func:`jittered_grid`); it stays stable.
    magnitude : float
    """

    etc: ETCResult
    t: np.ndarray
    sample_times: np.ndarray
    perturbed_times: np.ndarray
    inputs: np.ndarray
    u_original: np.ndarray
    u_perturbed: np.ndarray
    x_original: np.ndarray
    x_perturbed: np.ndarray
    etc_jittered: ETCResult
    magnitude: float

    @property
    def max_abs_original(self) -> float:
        """``max_t |x(t)|`` of the replay at the original instants."""
        return float(np.linalg.norm(self.x_original, axis=1).max())

    @property
    def max_abs_perturbed(self) -> float:
        """``max_t |x(t)|`` of the replay at the perturbed instants."""
        return float(np.linalg.norm(self.x_perturbed, axis=1).max())

    @property
    def final_abs_original(self) -> float:
        """``|x(horizon)|`` of the replay at the original instants."""
        return float(np.linalg.norm(self.x_original[-1]))

    @property
    def final_abs_perturbed(self) -> float:
        """``|x(horizon)|`` of the replay at the perturbed instants."""
        return float(np.linalg.norm(self.x_perturbed[-1]))

    @property
    def max_abs_jittered_etc(self) -> float:
        """``max_t |x(t)|`` of the closed loop monitored on the jittered grid."""
        return float(np.linalg.norm(self.etc_jittered.x, axis=1).max())

    @property
    def replay_error(self) -> float:
        """``max_t |x_original(t) - x_etc(t)|`` on ``t``: how exactly replay (i) reproduces
        the closed loop (only rounding, amplified by the unstable plant)."""
        x_etc = _on_grid(self.etc, self.t)
        return float(np.abs(self.x_original - x_etc).max())

    def __repr__(self) -> str:
        return compact_repr(self, magnitude=self.magnitude, samples=self.sample_times.size,
                            t=self.t, max_abs_original=self.max_abs_original,
                            max_abs_perturbed=self.max_abs_perturbed)


def _on_grid(etc: ETCResult, t):
    idx = np.searchsorted(etc.t, t)
    if not np.allclose(etc.t[np.clip(idx, 0, etc.t.size - 1)], t, rtol=0, atol=1e-9):
        raise ValueError("t is not a subset of the ETC output grid")
    return etc.x[idx]


@single_blas_thread
def nss_experiment(system: ETCSystem | None = None, rule: TriggerRule | None = None,
                   x0: ArrayLike = DEFAULT_X0, *, horizon: float = 10.0,
                   grid_step: float = 0.01,
                   magnitude: float | None = None, mode: str = "grid",
                   rng: RngLike = None, output_step: float | None = None,
                   etc: ETCResult | None = None) -> NSSResult:
    r"""Run the Fig. 1 experiment: ETC, record samples, replay at original and perturbed instants.

    Parameters
    ----------
    system : ETCSystem, optional
        Default :func:`~lds_toolkit.control.etc_system.paper_system`.
    rule : TriggerRule, optional
        Default ``LyapunovRule(kappa=0.5)`` (eq. 12).
    x0 : array_like (n,)
        Default ``(1, 0)``.
    horizon : float > 0
        The paper's window ``[0, 10]``.
    grid_step : float > 0
        The paper's grid width 0.01: monitoring step of grid mode and the bound on the
        perturbation (``magnitude < grid_step``).
    magnitude : float, optional
        Half-width ε of the timing perturbation (default ``grid_step / 2``).
    mode : {"grid", "exact"}
        Monitoring mode of the ETC run.
    rng : Generator, int or None
        Draws the perturbation.
    output_step : float, optional
        Step of the output grid (default ``grid_step / 10``).
    etc : ETCResult, optional
        Reuse a finished ETC run; ``system`` and ``rule`` default to its own and must match
        it when given.

    Returns
    -------
    NSSResult
    """
    horizon = check_real("horizon", horizon, low=0.0, low_inclusive=False)
    if etc is not None:
        if not isinstance(etc, ETCResult):
            raise TypeError(f"etc must be an ETCResult, got {type(etc).__name__}")
        system = etc.system if system is None else system
        rule = etc.trigger if rule is None else rule
        if etc.system is not system:
            raise ValueError("etc must come from the same ETCSystem instance as system")
        if rule.params() != etc.rule:
            raise ValueError(f"rule {rule.params()} differs from the rule of etc {etc.rule}")
        if abs(etc.horizon - horizon) > 1e-12 * max(1.0, horizon):
            raise ValueError(f"horizon ({horizon:g}) differs from the horizon of etc "
                             f"({etc.horizon:g})")
    system = paper_system() if system is None else system
    rule = LyapunovRule(0.5) if rule is None else rule
    grid_step = check_real("grid_step", grid_step, low=0.0, low_inclusive=False)
    if grid_step > horizon:
        raise ValueError(f"grid_step must be <= horizon ({horizon:g}), got {grid_step:g}")
    magnitude = 0.5 * grid_step if magnitude is None else magnitude
    magnitude = _check_magnitude(magnitude, grid_step)
    output_step = grid_step / 10 if output_step is None else output_step
    if etc is None:
        etc = simulate_etc(system, rule, x0, horizon=horizon, mode=mode, grid_step=grid_step,
                           output_step=output_step)
    t = etc.t
    ts = etc.sample_times
    gen = as_generator(rng)
    tp = perturb_sample_times(ts, magnitude, gen, grid_step=grid_step)
    x0 = etc.x[0]
    x_orig = replay_open_loop(system.A, system.B, ts, etc.inputs, x0, t)
    x_pert = replay_open_loop(system.A, system.B, tp, etc.inputs, x0, t)
    checks = jittered_grid(horizon, grid_step, magnitude, rng=gen)
    etc_jit = simulate_etc(system, rule, x0, horizon=horizon, mode="grid", grid_step=grid_step,
                           output_step=t[1] - t[0], check_times=checks)
    return NSSResult(etc=etc, t=t, sample_times=ts, perturbed_times=tp, inputs=etc.inputs,
                     u_original=etc.inputs[_hold_index(ts, t)],
                     u_perturbed=etc.inputs[_hold_index(tp, t)],
                     x_original=x_orig, x_perturbed=x_pert, etc_jittered=etc_jit,
                     magnitude=magnitude)


@single_blas_thread
def nss_sweep(system: ETCSystem | None = None, x0=DEFAULT_X0, *, magnitudes, kappas,
              seeds: int = 4, rng: RngLike = None, horizon: float = 10.0,
              grid_step: float = 0.01, default_kappa: float = 0.5,
              default_magnitude: float | None = None, mode: str = "grid") -> dict:
    r"""Final ``|x(horizon)|`` of the perturbed replay against ε and against κ, over seeds.

    Parameters
    ----------
    magnitudes : sequence of float in [0, grid_step)
        Perturbation half-widths ε (at ``κ = default_kappa``).
    kappas : sequence of float in (0, 1)
        Trigger parameters of eq. 12 (at ``ε = default_magnitude``, default ``grid_step/2``).
    seeds : int
        Independent perturbation draws per point; ``rng`` seeds them all.

    Returns
    -------
    dict of ndarrays
        ``magnitudes`` (E,), ``kappas`` (Q,), ``final_norm_vs_magnitude`` (seeds, E),
        ``max_norm_vs_magnitude`` (seeds, E), ``jittered_etc_final_norm_vs_magnitude``
        (seeds, E) (the closed loop on a jittered grid), ``final_norm_vs_kappa`` (seeds, Q),
        ``max_norm_vs_kappa`` (seeds, Q),
        ``events_vs_kappa`` (Q,), ``min_inter_event_vs_kappa`` (Q,),
        ``original_final_norm_vs_kappa`` (Q,) (unperturbed replay).
    """
    system = paper_system() if system is None else system
    grid_step = check_real("grid_step", grid_step, low=0.0, low_inclusive=False)
    mags = as_float_array("magnitudes", magnitudes, ndim=1)
    kap = as_float_array("kappas", kappas, ndim=1)
    for name, arr in (("magnitudes", mags), ("kappas", kap)):
        if arr.size == 0:
            raise ValueError(f"{name} must hold at least one value, got an empty sequence")
    for m in mags:
        if not 0 <= m < grid_step:
            raise ValueError(f"magnitudes must lie in [0, grid_step={grid_step:g}), got {m:g}")
    for k in kap:
        check_real("kappas entry", float(k), low=0.0, high=1.0, low_inclusive=False,
                   high_inclusive=False)
    seeds = check_positive_int("seeds", seeds)
    default_magnitude = 0.5 * grid_step if default_magnitude is None else default_magnitude
    gen = as_generator(rng)
    # one integer seed per draw: every magnitude (and every κ) of a draw reuses the same
    # uniform variates, scaled by ε (common random numbers: smooth curves over ε)
    streams = [int(v) for v in gen.integers(0, 2**63 - 1, size=int(seeds))]

    def run(kappa):
        return simulate_etc(system, LyapunovRule(kappa), x0, horizon=horizon, mode=mode,
                            grid_step=grid_step, output_step=grid_step)

    base = run(default_kappa)
    out = {k: np.empty((seeds, mags.size)) for k in
           ("final_norm_vs_magnitude", "max_norm_vs_magnitude",
            "jittered_etc_final_norm_vs_magnitude")}
    for s, g in enumerate(streams):
        for j, m in enumerate(mags):
            r = nss_experiment(system, None, x0, horizon=horizon, grid_step=grid_step,
                               magnitude=float(m), rng=g, etc=base)
            out["final_norm_vs_magnitude"][s, j] = r.final_abs_perturbed
            out["max_norm_vs_magnitude"][s, j] = r.max_abs_perturbed
            out["jittered_etc_final_norm_vs_magnitude"][s, j] = float(
                np.linalg.norm(r.etc_jittered.x[-1]))
    fk = np.empty((seeds, kap.size))
    mk = np.empty((seeds, kap.size))
    events = np.empty(kap.size, dtype=int)
    min_ie = np.empty(kap.size)
    orig = np.empty(kap.size)
    for j, k in enumerate(kap):
        etc = run(float(k))
        events[j] = etc.n_events
        min_ie[j] = etc.min_inter_event
        for s, g in enumerate(streams):
            r = nss_experiment(system, None, x0, horizon=horizon, grid_step=grid_step,
                               magnitude=default_magnitude, rng=g, etc=etc)
            fk[s, j] = r.final_abs_perturbed
            mk[s, j] = r.max_abs_perturbed
            if s == 0:
                orig[j] = r.final_abs_original
    out.update(magnitudes=mags, kappas=kap, final_norm_vs_kappa=fk, max_norm_vs_kappa=mk,
               events_vs_kappa=events, min_inter_event_vs_kappa=min_ie,
               original_final_norm_vs_kappa=orig)
    return out
