"""Spectral filtering and online learners for linear dynamical systems.

Paper: *Provable length generalization in sequence prediction via spectral filtering*.
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
    "BestInHindsight",
    "LearnerDivergedError",
    "RegretCurve",
    "asymmetric_regret",
    "cumulative_loss",
    "loglog_slope",
]
