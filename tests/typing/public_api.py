"""Type-checked use of the public API (mypy, `make test`; never imported by pytest).

Written the way a user calls the toolkit; mypy checks each call against the annotated
signatures (strictly: an unannotated function called from here is an error) and each result
against the type a user's checker should infer (``assert_type``).
"""

from __future__ import annotations

import numpy as np
from typing_extensions import assert_type

import lds_toolkit as lt
from lds_toolkit.control import ETCResult, LyapunovCheck, LyapunovRule, NSSResult
from lds_toolkit.learning import RegretCurve
from lds_toolkit.systems import EigenvalueRegions, MemoryLength, SimulationResult


def systems_and_simulation() -> None:
    regions = lt.eigenvalue_regions(T=1024, q=7 / 8)
    assert_type(regions, EigenvalueRegions)
    system = lt.random_lds(8, list(regions.region_a), rng=0)
    assert_type(system, lt.LDS)
    u = np.zeros((1024, 1))
    res = lt.simulate(system, u, output="lengen")
    assert_type(res, SimulationResult)
    assert_type(lt.memory_length(system), MemoryLength)
    one = np.ones((1, 1))  # LDS's fields are typed np.ndarray (it converts lists at run time)
    lt.simulate_continuous(lt.LDS(-one, one, one), np.linspace(0, 1, 11), np.zeros((11, 1)))


def control() -> None:
    system = lt.paper_system()
    M = np.asarray(system.M)  # ETCSystem's P and M are typed Optional (filled in at init)
    P = lt.continuous_lyapunov(system.closed_loop, M)
    assert_type(P, np.ndarray)
    assert_type(lt.verify(system.closed_loop, P, M), LyapunovCheck)
    etc = lt.simulate_etc(system, LyapunovRule(kappa=0.5), [1.0, 0.0], mode="grid")
    assert_type(etc, ETCResult)
    assert_type(lt.nss_experiment(rng=0), NSSResult)


def learning() -> None:
    sigma, phi = lt.spectral_filters(256, 8)
    assert_type(sigma, np.ndarray)
    learner = lt.SpectralFiltering(horizon=256, k=8, context=16)
    u, y = np.zeros((256, 1)), np.zeros((256, 1))
    curve = lt.asymmetric_regret(learner, u, y, n_points=4)
    assert_type(curve, RegretCurve)
    assert_type(lt.__version__, str)
