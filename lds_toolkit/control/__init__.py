"""Control: Lyapunov analysis, event-triggered control (ETC), and the NSS perturbation
experiment of the S4++ paper (Sec. 2.2, eqs. 7–13, Fig. 1).

* :mod:`~lds_toolkit.control.lyapunov` — ``AᵀP + PA = -M`` and ``AᵀPA - P = -M`` with
  a stability check (and python-control's / scipy's forms via ``convention=``), a discrete
  certificate with its contraction factor (:func:`discrete_certificate`);
* :mod:`~lds_toolkit.control.lyapunov_checks` — certificate checks (:func:`verify`), level
  sets, V(t) (re-exported by :mod:`~lds_toolkit.control.lyapunov`);
* :mod:`~lds_toolkit.control.etc` — event-triggered control (ETC), the names of the four
  modules below in one place (this package imports them from there);
* :mod:`~lds_toolkit.control.etc_system` — the loop (:class:`ETCSystem`, also from
  python-control's LQR via :meth:`ETCSystem.from_lqr`), the paper's example system and the
  check of its printed matrices;
* :mod:`~lds_toolkit.control.etc_triggers` — the triggering rules (eq. 12, relative error,
  periodic, dynamic) and their base class;
* :mod:`~lds_toolkit.control.etc_simulation` — the event-triggered sampler, exact and
  grid-monitored (:func:`simulate_etc`, :class:`ETCResult`); where the events fall, per
  monitoring mode, is its private :mod:`~lds_toolkit.control._etc_events`;
* :mod:`~lds_toolkit.control.etc_statistics` — inter-event-time statistics over many initial
  states (imports point one way: statistics -> simulation -> triggers -> system);
* :mod:`~lds_toolkit.control.nss` — replaying recorded ETC inputs at original and perturbed
  instants (Fig. 1) and the sweep over the perturbation size and κ.
"""

from .etc import (
    PAPER_PRINTED,
    DynamicRule,
    ETCResult,
    ETCSystem,
    InterEventStatistics,
    LyapunovRule,
    PeriodicRule,
    RelativeErrorRule,
    TriggerRule,
    inter_event_statistics,
    paper_system,
    printed_matrices_check,
    simulate_etc,
)
from .lyapunov import (
    DiscreteCertificate,
    LyapunovCheck,
    continuous_lyapunov,
    discrete_certificate,
    discrete_lyapunov,
    level_set,
    lyapunov_values,
    verify,
)
from .nss import (
    NSSResult,
    jittered_grid,
    nss_experiment,
    nss_sweep,
    perturb_sample_times,
    replay_open_loop,
)

__all__ = [
    "PAPER_PRINTED",
    "DiscreteCertificate",
    "DynamicRule",
    "ETCResult",
    "ETCSystem",
    "InterEventStatistics",
    "LyapunovCheck",
    "LyapunovRule",
    "NSSResult",
    "PeriodicRule",
    "RelativeErrorRule",
    "TriggerRule",
    "continuous_lyapunov",
    "discrete_certificate",
    "discrete_lyapunov",
    "inter_event_statistics",
    "jittered_grid",
    "level_set",
    "lyapunov_values",
    "nss_experiment",
    "nss_sweep",
    "paper_system",
    "perturb_sample_times",
    "printed_matrices_check",
    "replay_open_loop",
    "simulate_etc",
    "verify",
]
