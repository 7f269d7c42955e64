"""Event-triggered control (ETC) of ``dx/dt = A x + B u`` with ``u(t) = K x(t_i)`` held.

This module gathers the ETC names in one place (the import path that has always held
them); the code lives in four modules, imported one way (statistics -> simulation ->
triggers -> system):

* :mod:`~lds_toolkit.control.etc_system` — :class:`ETCSystem` (plant, gain ``u = K x``,
  eq. 8 certificate ``(P, M)``, :meth:`ETCSystem.from_lqr`), the paper's example
  :func:`paper_system`, :data:`PAPER_PRINTED` and :func:`printed_matrices_check`;
* :mod:`~lds_toolkit.control.etc_triggers` — :class:`TriggerRule` and the rules
  :class:`LyapunovRule` (eq. 12), :class:`RelativeErrorRule`, :class:`PeriodicRule`,
  :class:`DynamicRule`;
* :mod:`~lds_toolkit.control.etc_simulation` — :func:`simulate_etc` (exact and
  grid-monitored sampling) and :class:`ETCResult`;
* :mod:`~lds_toolkit.control.etc_statistics` — :func:`inter_event_statistics` and
  :class:`InterEventStatistics`.
"""

from __future__ import annotations

from .etc_simulation import ETCResult, simulate_etc
from .etc_statistics import InterEventStatistics, inter_event_statistics
from .etc_system import PAPER_PRINTED, ETCSystem, paper_system, printed_matrices_check
from .etc_triggers import DynamicRule, LyapunovRule, PeriodicRule, RelativeErrorRule, TriggerRule

__all__ = [
    "DynamicRule",
    "ETCResult",
    "ETCSystem",
    "InterEventStatistics",
    "LyapunovRule",
    "PAPER_PRINTED",
    "PeriodicRule",
    "RelativeErrorRule",
    "TriggerRule",
    "inter_event_statistics",
    "paper_system",
    "printed_matrices_check",
    "simulate_etc",
]
