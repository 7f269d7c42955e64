"""lds_toolkit: online learning meets control theory on linear dynamical systems.

The curated public API. Sub-packages: :mod:`lds_toolkit.systems` (models, discretisation,
regions, simulation), :mod:`lds_toolkit.control` (Lyapunov, event-triggered control, NSS),
:mod:`lds_toolkit.learning` (spectral filters, online learners, regret),
:mod:`lds_toolkit.neural` (torch layers; optional dependency, import it explicitly) and
:mod:`lds_toolkit.experiments` (runner; ``reproduce``, ``list_experiments`` and ``run_script`` are
loaded on first use, so that ``import lds_toolkit`` does not import the experiment machinery).
An :class:`~lds_toolkit.systems.LDS` is a ``control.StateSpace``, so ``import lds_toolkit``
imports python-control (which imports matplotlib without selecting a backend).
"""

from ._version import __version__
from .control import (
    continuous_lyapunov,
    discrete_certificate,
    discrete_lyapunov,
    inter_event_statistics,
    nss_experiment,
    paper_system,
    simulate_etc,
    verify,
)
from .learning import (
    BestInHindsight,
    KalmanPredictor,
    LastValue,
    LDSOracle,
    SpectralFiltering,
    SpectralFilteringAR2,
    asymmetric_regret,
    filters_as_lds,
    spectral_filters,
    stationary_kalman,
)
from .systems import (
    LDS,
    SimulationDivergedError,
    discretize,
    eigenvalue_map,
    eigenvalue_regions,
    memory_length,
    random_lds,
    random_stable_lds,
    s4_bilinear,
    simulate,
    simulate_continuous,
)

_LAZY = {"reproduce": "experiments", "list_experiments": "experiments", "run_script": "cli"}


def __getattr__(name):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(f"module 'lds_toolkit' has no attribute {name!r}")


__all__ = [
    "BestInHindsight",
    "LDS",
    "LDSOracle",
    "KalmanPredictor",
    "LastValue",
    "SpectralFiltering",
    "SpectralFilteringAR2",
    "asymmetric_regret",
    "SimulationDivergedError",
    "__version__",
    "continuous_lyapunov",
    "discrete_certificate",
    "discrete_lyapunov",
    "discretize",
    "eigenvalue_map",
    "eigenvalue_regions",
    "inter_event_statistics",
    "list_experiments",
    "memory_length",
    "nss_experiment",
    "paper_system",
    "random_lds",
    "random_stable_lds",
    "reproduce",
    "run_script",
    "s4_bilinear",
    "simulate",
    "simulate_continuous",
    "simulate_etc",
    "filters_as_lds",
    "spectral_filters",
    "stationary_kalman",
    "verify",
]
