"""Spectral filtering and online learners for linear dynamical systems.

Paper: *Provable length generalization in sequence prediction via spectral filtering*.

* :mod:`~lds_toolkit.learning.filters` — the spectral filters of H_T and N_T (eqs. 3, 5);
* :mod:`~lds_toolkit.learning.filters_lds` — the same filters as the impulse response of a
  small diagonal LDS (:func:`filters_as_lds`);
* :mod:`~lds_toolkit.learning.learners` — Algorithms 1 and 2 and the baselines, their
  equations and time-index convention; ``_online`` holds their shared streaming and batch
  machinery, ``_signals`` the reading of river's values (dicts by name);
* :mod:`~lds_toolkit.learning.kalman` — the stationary Kalman predictor, the optimal
  predictor of a noisy LDS (the comparator of lesson 9);
* :mod:`~lds_toolkit.learning.river` — the same learners as ``river.base.Regressor``
  estimators (needs the ``river`` extra; imported only when asked for);
* :mod:`~lds_toolkit.learning.regret` — losses, regret curves, Asymmetric Regret.
"""

from .filters import (
    EXTENDED_FLOOR,
    RESOLVABLE_FLOOR,
    FilterPrecisionWarning,
    cache_dir,
    eigenvector_error_bound,
    filter_matrix,
    spectral_filters,
)
from .filters_lds import FiltersLDSReport, filters_as_lds
from .kalman import KalmanGain, KalmanPredictor, kalman_predict, stationary_kalman
from .learners import (
    BestInHindsight,
    LastValue,
    LDSOracle,
    LearnerDivergedError,
    OnlineLearner,
    SpectralFiltering,
    SpectralFilteringAR2,
)
from .regret import RegretCurve, asymmetric_regret, cumulative_loss, loglog_slope

__all__ = [
    "spectral_filters",
    "filters_as_lds",
    "FiltersLDSReport",
    "filter_matrix",
    "eigenvector_error_bound",
    "cache_dir",
    "FilterPrecisionWarning",
    "RESOLVABLE_FLOOR",
    "EXTENDED_FLOOR",
    "OnlineLearner",
    "SpectralFiltering",
    "SpectralFilteringAR2",
    "LastValue",
    "LDSOracle",
    "KalmanPredictor",
    "KalmanGain",
    "stationary_kalman",
    "kalman_predict",
    "BestInHindsight",
    "LearnerDivergedError",
    "RegretCurve",
    "asymmetric_regret",
    "cumulative_loss",
    "loglog_slope",
]
