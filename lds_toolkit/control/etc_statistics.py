r"""Inter-event times of an event-triggered loop, pooled over runs from several initial states.

:func:`inter_event_statistics` runs :func:`~lds_toolkit.control.etc_simulation.simulate_etc`
once per initial state (given, or drawn on the unit sphere) and pools the completed gaps
``τ_i = t_{i+1} - t_i`` into an :class:`InterEventStatistics` (min, quantiles, mean, event
rate, Zeno and truncated runs).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from numbers import Integral
from typing import Any

import numpy as np

from .._random import RngLike, as_generator
from .._repr import compact_repr
from .._typing import ArrayLike, SystemLike
from .._validation import as_float_array, check_choice, check_positive_int, check_real
from ..systems.lds import is_system, require_continuous
from .etc_simulation import simulate_etc
from .etc_system import ETCSystem
from .etc_triggers import TriggerRule

__all__ = ["InterEventStatistics", "inter_event_statistics"]


def _pooled(f, times: np.ndarray) -> float:
    return float(f(times)) if times.size else math.inf


@dataclass(frozen=True, repr=False)
class InterEventStatistics:
    r"""Inter-event times of an event-triggered loop, pooled over runs from several x0.

    Each run r starts at ``x0[r]`` and :func:`simulate_etc` returns its sample instants
    ``0 = t_0 < t_1 < ... <= horizon`` with ``t_{i+1} = inf {t > t_i : g(t) <= 0}``. The
    inter-event times are the completed gaps

        τ_i = t_{i+1} - t_i,      i = 0 .. (events of the run) - 1,

    the first measured from ``t_0 = 0``; the open gap from the last event to the horizon is
    censored and not counted. Statistics are over the pooled τ_i of all runs.

    Attributes
    ----------
    times : ndarray, shape (N,)
        The pooled τ_i, run after run, in time order within a run.
    run : ndarray of int, shape (N,)
        The run each τ_i comes from.
    events : ndarray of int, shape (runs,)
        Triggered events per run (``t_0 = 0`` not counted), so ``N = events.sum()``.
    x0 : ndarray, shape (runs, n)
    horizon : float
    mode : str
        ``"exact"`` or ``"grid"`` monitoring (see :func:`simulate_etc`).
    rule : dict
        The rule's parameters.
    system : ETCSystem
        The loop (its ``K`` is the gain that was used, e.g. ``-K_lqr``).
    zeno, truncated : ndarray of bool, shape (runs,)
        Runs stopped by Zeno behaviour or by ``max_events``.
    """

    times: np.ndarray
    run: np.ndarray
    events: np.ndarray
    x0: np.ndarray
    horizon: float
    mode: str
    rule: dict
    system: ETCSystem
    zeno: np.ndarray
    truncated: np.ndarray

    @property
    def n_events(self) -> int:
        """Triggered events over all runs."""
        return int(self.events.sum())

    min = property(lambda self: _pooled(np.min, self.times),
                   doc="Shortest τ (``inf`` without events).")
    max = property(lambda self: _pooled(np.max, self.times),
                   doc="Longest completed τ (``inf`` without events).")
    mean = property(lambda self: _pooled(np.mean, self.times),
                    doc="Mean τ (``inf`` without events).")
    median = property(lambda self: _pooled(np.median, self.times),
                      doc="Median τ (``inf`` without events).")

    @property
    def std(self) -> float:
        """Standard deviation of τ (``nan`` with fewer than two)."""
        return float(np.std(self.times)) if self.times.size > 1 else math.nan

    def quantile(self, q) -> np.ndarray:
        """Quantiles of τ (``numpy.quantile``, linear interpolation)."""
        if not self.times.size:
            return np.full(np.shape(q), math.inf)
        return np.quantile(self.times, q)

    @property
    def event_rate(self) -> float:
        """Events per unit time, ``events.sum() / (runs · horizon)``."""
        return self.n_events / (self.events.size * self.horizon)

    def as_dict(self) -> dict:
        """The statistics in a JSON-friendly dict."""
        q05, q95 = (float(v) for v in self.quantile([0.05, 0.95]))
        return {"runs": int(self.events.size), "events": self.n_events,
                "events_per_run": self.events.tolist(), "event_rate": self.event_rate,
                "min": self.min, "q05": q05, "median": self.median, "mean": self.mean,
                "q95": q95, "max": self.max, "std": self.std, "horizon": self.horizon,
                "mode": self.mode, "rule": self.rule, "K": self.system.K.tolist(),
                "zeno_runs": int(self.zeno.sum()), "truncated_runs": int(self.truncated.sum())}

    def __repr__(self) -> str:
        return compact_repr(self, runs=self.events.size, events=self.n_events, min=self.min,
                            median=self.median, mean=self.mean, max=self.max,
                            rule=self.rule, mode=self.mode)


def inter_event_statistics(system: ETCSystem | SystemLike, rule: TriggerRule, x0: ArrayLike, *,
                           K: ArrayLike | None = None, rng: RngLike = None,
                           horizon: float = 10.0, mode: str = "exact",
                           **options: Any) -> InterEventStatistics:
    r"""Inter-event-time statistics of a triggering rule, over one or more initial states.

    Runs :func:`simulate_etc` once per initial state and pools the completed inter-event
    times ``τ_i = t_{i+1} - t_i`` (see :class:`InterEventStatistics`).

    Parameters
    ----------
    system : ETCSystem, or a continuous-time LDS / control.StateSpace
        The loop, or a plant ``(A, B)`` to close with ``K`` (C and D play no part: the
        feedback is on the state).
    rule : TriggerRule
        E.g. :class:`LyapunovRule` (eq. 12).
    x0 : array_like, shape (n,) or (runs, n), or int
        Initial states (nonzero), or a number of runs whose initial states are drawn
        uniformly on the unit sphere from ``rng``.
    K : array_like (m, n) or "lqr", optional
        Only with a plant, and then required: the gain of ``u = K x``, or ``"lqr"`` for
        ``ETCSystem.from_lqr(plant, I_n, I_m)`` (``K = -K_lqr`` with identity weights).
    rng : numpy Generator, int or None
        Source of the random initial states when ``x0`` is an int.
    horizon, mode : float, str
        As in :func:`simulate_etc`.
    **options
        Further :func:`simulate_etc` options (``grid_step``, ``bracket_step``, ``tol``,
        ``max_events``, ``output_step``; the output grid defaults to the two end points,
        since only the event times are used).

    Returns
    -------
    InterEventStatistics
        Zeno or truncated runs are counted there (one warning for all of them).
    """
    if isinstance(system, ETCSystem):
        if K is not None:
            raise ValueError("K must be omitted when system is an ETCSystem (it has its own "
                             "gain)")
        loop = system
    elif is_system(system):
        if K is None:
            raise TypeError("K is required when system is a plant: the gain of u = K x, or "
                            "K='lqr' for ETCSystem.from_lqr(plant, I, I)")
        plant = require_continuous(system, "system")
        if isinstance(K, str):
            check_choice("K", K, ("lqr",))
            loop = ETCSystem.from_lqr(plant, np.eye(plant.n_states),
                                      np.eye(plant.n_inputs))
        else:
            loop = ETCSystem(plant, K=K)
    else:
        raise TypeError(f"system must be an ETCSystem, an LDS, a control.StateSpace or a "
                        f"control.TransferFunction, got {type(system).__name__}")
    n = loop.n
    gen = as_generator(rng)  # checked even when x0 gives the states and nothing is drawn
    if isinstance(x0, Integral | np.integer) and not isinstance(x0, bool):
        runs = check_positive_int("x0", x0)
        z = gen.standard_normal((runs, n))
        x0s = z / np.linalg.norm(z, axis=1, keepdims=True)
    else:
        x0s = as_float_array("x0", x0)
        if x0s.ndim == 1:
            x0s = x0s[None, :]
        if x0s.ndim != 2 or x0s.shape[1] != n or x0s.shape[0] == 0:
            raise ValueError(f"x0 must have shape ({n},) or (runs, {n}), or be a number of "
                             f"runs, got shape {x0s.shape}")
    horizon = check_real("horizon", horizon, low=0.0, low_inclusive=False)
    options.setdefault("output_step", horizon)
    times, run, events, zeno, truncated = [], [], [], [], []
    for r, x in enumerate(x0s):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            res = simulate_etc(loop, rule, x, horizon=horizon, mode=mode, **options)
        for w in caught:  # Zeno/truncation are counted below; anything else passes on
            text = str(w.message)
            if not ("(Zeno behaviour)" in text or text.startswith("max_events=")):
                warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
        tau = res.inter_event_times
        times.append(tau)
        run.append(np.full(tau.size, r))
        events.append(res.n_events)
        zeno.append(res.zeno)
        truncated.append(res.truncated)
    zeno, truncated = np.array(zeno), np.array(truncated)
    if zeno.any() or truncated.any():
        warnings.warn(f"{int(zeno.sum())} run(s) stopped by Zeno behaviour and "
                      f"{int(truncated.sum())} by max_events, out of {len(x0s)}; their "
                      "inter-event times up to the stop are included", RuntimeWarning,
                      stacklevel=2)
    return InterEventStatistics(times=np.concatenate(times), run=np.concatenate(run),
                                events=np.array(events), x0=x0s, horizon=horizon, mode=mode,
                                rule=rule.params(), system=loop, zeno=zeno,
                                truncated=truncated)
