"""Linear dynamical systems: the model, discretisation, eigenvalue regions, random factories,
simulation (numba cores, batched), and analyses of a system (eigenvalue map, memory)."""

from .analysis import EigenvalueMap, MemoryLength, eigenvalue_map, memory_length
from .continuous import simulate_continuous
from .discretize import discretize, s4_bilinear, zoh_matrices
from .lds import LDS, as_lds
from .random import draw_eigenvalues, random_lds, random_stable_lds
from .realization import era, hankel_matrix, impulse_fit_error
from .regions import EigenvalueRegions, Interval, eigenvalue_regions
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
