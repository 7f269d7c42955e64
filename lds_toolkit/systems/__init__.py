"""Linear dynamical systems: the model (an :class:`LDS` is a ``control.StateSpace``),
discretisation, S4's recursion as its own type, eigenvalue regions, random factories,
simulation (numba cores, batched; conversions to python-control and pandas in ``_interop``),
and analyses of a system (eigenvalue map, memory)."""

from .analysis import EigenvalueMap, MemoryLength, eigenvalue_map, memory_length
from .continuous import simulate_continuous
from .discretize import discretize, s4_bilinear, zoh_matrices
from .lds import LDS, as_lds
from .random import draw_eigenvalues, random_lds, random_stable_lds
from .realization import era, hankel_matrix, impulse_fit_error
from .regions import EigenvalueRegions, Interval, eigenvalue_regions
from .s4_recursion import S4Recursion
from .simulate import (
    OUTPUT_CONVENTIONS,
    ModalCertificate,
    SimulationDivergedError,
    SimulationResult,
    modal_form,
    simulate,
)

__all__ = [
    "LDS",
    "EigenvalueMap",
    "EigenvalueRegions",
    "Interval",
    "MemoryLength",
    "ModalCertificate",
    "OUTPUT_CONVENTIONS",
    "S4Recursion",
    "SimulationDivergedError",
    "SimulationResult",
    "as_lds",
    "discretize",
    "draw_eigenvalues",
    "eigenvalue_map",
    "eigenvalue_regions",
    "era",
    "hankel_matrix",
    "impulse_fit_error",
    "memory_length",
    "modal_form",
    "random_lds",
    "random_stable_lds",
    "s4_bilinear",
    "simulate",
    "simulate_continuous",
    "zoh_matrices",
]
