r"""The course data set: LDS streams from Regions A and B with their true matrices.

:func:`course_streams` draws, for each region (``"A"``, ``"B"`` of
:func:`lds_toolkit.eigenvalue_regions` at ``q = 7/8``) and each horizon ``T`` (1024 and 4096),
a symmetric system ``(A, B, C, 0)`` with ``n`` states (:func:`lds_toolkit.random_lds`: Region A
half from each of its two parts) and a stream of ``T`` unit Gaussian inputs, and simulates it
in the length-generalization paper's convention (``output="lengen"``):

    x_{t+1} = A x_t + B u_t,   y_t = C x_t   (x_0 = 0),   so   y_{t+1} = Σ_{ℓ≥0} C A^ℓ B u_{t-ℓ}.

Everything comes from one seed through ``numpy.random.SeedSequence(seed).spawn``: the same
seed gives the same streams on every machine up to floating-point rounding of the simulation.
:func:`save_course_streams` writes them to one ``.npz`` (read it with
``numpy.load(path, allow_pickle=False)``); the site offers that file for download.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

__all__ = ["CourseStream", "course_streams", "save_course_streams"]

#: The streams of the course: (region, T).
STREAMS = (("A", 1024), ("B", 1024), ("A", 4096), ("B", 4096))


@dataclass(frozen=True)
class CourseStream:
    """One stream and the system that made it (``y`` in the ``"lengen"`` convention)."""

    region: str
    T: int
    A: np.ndarray
    B: np.ndarray
    C: np.ndarray
    u: np.ndarray
    y: np.ndarray

    @property
    def name(self) -> str:
        return f"region{self.region}_T{self.T}"

    @property
    def eigenvalues(self) -> np.ndarray:
        """The eigenvalues of ``A`` (real: ``A`` is symmetric), ascending."""
        return np.linalg.eigvalsh(self.A)


def course_streams(seed: int = 2024, n: int = 16) -> dict[str, CourseStream]:
    """The course's four streams, keyed ``"regionA_T1024"``, ``"regionB_T1024"``,
    ``"regionA_T4096"``, ``"regionB_T4096"`` (module docstring).

    Parameters
    ----------
    seed : int
        Root of the ``SeedSequence``; each stream draws its system and its inputs from its
        own child sequence.
    n : int
        State dimension of each system.
    """
    from .._validation import check_int
    from ..systems import eigenvalue_regions, random_lds, simulate

    seed = check_int("seed", seed, 0)
    n = check_int("n", n, 1)
    out = {}
    for (region, T), child in zip(STREAMS, np.random.SeedSequence(seed).spawn(len(STREAMS))):
        rng = np.random.default_rng(child)
        regions = eigenvalue_regions(T, 7 / 8)
        intervals = list(regions.region_a) if region == "A" else [regions.region_b]
        system = random_lds(n, intervals, rng=rng)
        u = rng.standard_normal((T, 1))
        y = simulate(system, u, output="lengen").y
        stream = CourseStream(region, T, np.array(system.A), np.array(system.B),
                              np.array(system.C), u, y)
        out[stream.name] = stream
    return out


def save_course_streams(path: str | Path, seed: int = 2024, n: int = 16) -> Path:
    """Write :func:`course_streams` to ``path`` (``.npz``): for each stream ``NAME``, arrays
    ``NAME/A``, ``NAME/B``, ``NAME/C``, ``NAME/u``, ``NAME/y``, plus ``seed`` and ``n``."""
    path = Path(path)
    arrays: dict[str, np.ndarray] = {"seed": np.array(seed), "n": np.array(n)}
    for name, s in course_streams(seed, n).items():
        for key in ("A", "B", "C", "u", "y"):
            arrays[f"{name}/{key}"] = getattr(s, key)
    np.savez_compressed(path, **arrays)  # type: ignore[arg-type]
    return path
