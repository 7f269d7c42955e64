"""Issue 27's numpy-side cases: strict booleans, memory estimates before large allocations,
the simulation step bounds of simulate_etc, from_lqr's stabilisability, the regret and
stability arguments, a subnormal dt, and the filter cache's odd files. Each now raises naming
the argument, the range and what came (it was silent, unclear or a raw MemoryError)."""

from __future__ import annotations

import os
import re
import time
import warnings

import numpy as np
import pytest

import lds_toolkit as L
from lds_toolkit import _validation
from lds_toolkit.control.etc import ETCSystem, LyapunovRule, paper_system
from lds_toolkit.learning import filters as F
from lds_toolkit.learning.regret import asymmetric_regret, loglog_slope

SYS = L.LDS([[0.5]], [[1.0]], [[1.0]], dt=1.0)


@pytest.fixture
def machine_with_16_gib(monkeypatch):
    monkeypatch.setattr(_validation, "memory_bytes", lambda: 16 * 2**30)


# ------------------------------------------------------------------------- booleans

BOOL_SITES = {
    "simulate(return_states=)": lambda v: L.simulate(SYS, np.ones((4, 1)), return_states=v),
    "spectral_filters(cache=)": lambda v: L.spectral_filters(32, 4, cache=v),
    "verify(discrete=)": lambda v: L.verify(0.5 * np.eye(2), np.eye(2), np.eye(2), discrete=v),
    "random_lds(symmetric=)": lambda v: L.random_lds(3, [(0.1, 0.5)], symmetric=v, rng=0),
    "random_lds(feedthrough=)": lambda v: L.random_lds(3, [(0.1, 0.5)], feedthrough=v, rng=0),
    "random_stable_lds(continuous=)": lambda v: L.random_stable_lds(3, continuous=v, rng=0),
}


@pytest.mark.parametrize("value", ["no", "yes", "False", 0, 1, None, [True]])
@pytest.mark.parametrize("site", sorted(BOOL_SITES))
def test_truthy_values_are_not_booleans(site, value):
    name = re.search(r"\((\w+)=\)", site).group(1)
    if value is None and name == "discrete":
        return  # verify's discrete=None means "the system's timebase"
    with pytest.raises(TypeError, match=rf"^{name} must be True or False, got "):
        BOOL_SITES[site](value)


@pytest.mark.parametrize("site", sorted(BOOL_SITES))
def test_real_booleans_still_work(site):
    for value in (True, False, np.bool_(True)):
        BOOL_SITES[site](value)


def test_return_states_false_returns_no_states_and_no_is_refused():
    assert L.simulate(SYS, np.ones((4, 1)), return_states=False).x is None
    with pytest.raises(TypeError):
        L.simulate(SYS, np.ones((4, 1)), return_states="no")  # returned states before


# ------------------------------------------------------------------ memory estimates


@pytest.mark.parametrize("call, message", [
    (lambda: F.filter_matrix(10**6), r"T=1000000 is too large: the float64 entries of the dense "
                                     r"\(T, T\) matrix need 7.28 TiB, more than this machine's "
                                     r"16 GiB of memory"),
    (lambda: L.spectral_filters(2**20, 2, method="dense"),
     r"T=1048576 is too large: the float64 entries of the dense \(T, T\) matrix need 8 TiB"),
    (lambda: L.random_lds(10**12, [(0.1, 0.5)]), r"n=1000000000000 is too large: the float64 "
                                                 r"entries of the \(1000000000000, "),
    (lambda: L.random_lds(10**5, [(0.1, 0.5)]), r"n=100000 is too large: .* need 149 GiB"),
    (lambda: L.random_stable_lds(10**6), r"n=1000000 is too large"),
    (lambda: L.simulate(L.LDS(np.eye(4000) * 0.5, np.ones((4000, 1)), np.ones((1, 4000)),
                              dt=1.0), np.ones((600_000, 1))),
     r"u=array of shape \(600000, 1\) is too large: the float64 \(batch, T, n\) = \(600000, "
     r"4000\) states need 17.9 GiB"),
])
def test_large_allocations_are_refused_before_allocating(machine_with_16_gib, call, message):
    t0 = time.monotonic()
    with pytest.raises(ValueError, match=message):
        call()
    assert time.monotonic() - t0 < 30


def test_simulate_without_states_needs_only_the_outputs(machine_with_16_gib):
    """return_states=False keeps only (T, d_out): the same long input passes the check."""
    import importlib

    S = importlib.import_module("lds_toolkit.systems.simulate")
    S._check_result_fits((600_000, 1), (), 600_000, 4000, 1, False)  # no error
    with pytest.raises(ValueError, match=r"\(batch, T, n\) = \(600000, 4000\) states"):
        S._check_result_fits((600_000, 1), (), 600_000, 4000, 1, True)


# ------------------------------------------------------------------ simulate_etc steps


@pytest.mark.parametrize("kwargs, name, least", [
    ({"mode": "grid", "grid_step": 1e-9}, "grid_step", "1e-07"),
    ({"mode": "exact", "bracket_step": 1e-9, "tol": 1e-12}, "bracket_step", "1e-07"),
])
def test_simulate_etc_refuses_steps_that_would_run_for_hours(kwargs, name, least):
    t0 = time.monotonic()
    with pytest.raises(ValueError, match=rf"{name}=1e-09 is too small for horizon=10: 1e\+10 "
                                         rf".* use {name} >= {least}"):
        L.simulate_etc(paper_system(), LyapunovRule(0.5), [1.0, 1.0], horizon=10.0, **kwargs)
    assert time.monotonic() - t0 < 5, "refused up front, not after minutes"


def test_the_step_bound_leaves_every_sensible_grid_alone():
    r = L.simulate_etc(paper_system(), LyapunovRule(0.5), [1.0, 1.0], horizon=1.0,
                       mode="grid", grid_step=1e-5)
    assert len(r.event_times) > 1


# -------------------------------------------------------------------------- from_lqr


def test_from_lqr_names_an_unstabilisable_pair():
    A = np.diag([2.0, -1.0])
    B = np.array([[0.0], [1.0]])  # the unstable mode 2 is not reached by the input
    with pytest.raises(ValueError, match=r"^\(A, B\) not stabilisable: the eigenvalue\(s\) 2 of "
                                         r"A with Re >= 0 cannot be moved"):
        ETCSystem.from_lqr(A, B, np.eye(2), np.eye(1))
    # a stable uncontrollable mode is fine (stabilisable), and so is a reached unstable one
    ETCSystem.from_lqr(np.diag([-2.0, 1.0]), B, np.eye(2), np.eye(1))
    ETCSystem.from_lqr(np.diag([2.0, 1.0]), np.array([[1.0], [1.0]]), np.eye(2), np.eye(1))


# ------------------------------------------------------- regret, stability, dt


def _learner_and_stream():
    lr = L.SpectralFiltering(horizon=32, k=4)
    u = np.random.default_rng(0).standard_normal((32, 1))
    return lr, u, u.copy()


@pytest.mark.parametrize("kwargs, exc, message", [
    ({"losses": -np.ones(32)}, ValueError, r"losses must be non-negative .* entry 0 is -1"),
    ({"losses": np.full(32, np.nan)}, ValueError, r"losses must contain only finite values"),
    ({"tol": -1}, ValueError, r"tol must lie in \(0, 1\), got -1"),
    ({"tol": 0.0}, ValueError, r"tol must lie in \(0, 1\), got 0"),
    ({"tol": np.nan}, ValueError, r"tol must be finite, got nan"),
    ({"radius": -2.0}, ValueError, r"radius must lie in \(0, inf\), got -2"),
])
def test_asymmetric_regret_refuses_bad_losses_and_tolerances(kwargs, exc, message):
    lr, u, y = _learner_and_stream()
    with pytest.raises(exc, match=message):
        asymmetric_regret(lr, u, y, **kwargs)


@pytest.mark.parametrize("T, R, message", [
    ([1, 2, 3], [1, np.nan, 3], r"regret must contain only finite values; entry \(1,\) is nan"),
    ([1, np.inf, 3], [1, 2, 3], r"T must contain only finite values"),
    ([2, 2, 2], [1, 2, 3], r"T must hold at least two distinct horizons"),
    ([1, 2, 3], [1, 0, 3], r"regret must be positive for a log-log fit; entry 1 is 0"),
])
def test_loglog_slope_refuses_what_lapack_would_choke_on(T, R, message, capfd):
    with pytest.raises(ValueError, match=message):
        loglog_slope(T, R)
    assert "DLASCL" not in capfd.readouterr().err


@pytest.mark.parametrize("tol", [np.nan, -0.1, np.inf])
@pytest.mark.parametrize("method", ["is_stable", "is_marginally_stable"])
def test_stability_tolerances_must_be_finite_and_non_negative(tol, method):
    with pytest.raises(ValueError, match=r"^tol must "):
        getattr(SYS, method)(tol=tol)


@pytest.mark.parametrize("dt", [5e-324, 1e-310])
def test_a_subnormal_dt_is_refused_instead_of_giving_a_equal_i_b_equal_0(dt):
    cont = L.LDS(-np.eye(1), np.ones((1, 1)), np.ones((1, 1)))
    with pytest.raises(ValueError, match=r"below the smallest normal float64 .* use a larger "
                                         r"dt"):
        L.discretize(cont, dt)
    d = L.discretize(cont, 1e-300)  # tiny but normal: exact to float64
    assert d.B[0, 0] == pytest.approx(1e-300)


# ------------------------------------------------------------- the filter cache


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="POSIX FIFOs")
@pytest.mark.parametrize("planted", ["fifo", "link-to-dev-zero", "sparse-oversize"])
def test_odd_filter_cache_files_are_rejected_without_blocking(tmp_path, monkeypatch, planted):
    monkeypatch.setenv("LDS_TOOLKIT_CACHE", str(tmp_path))
    F._MEMORY.clear()
    T, k = 64, 4
    path = F._cache_path("H", T, k)
    path.parent.mkdir(parents=True, exist_ok=True)
    if planted == "fifo":
        os.mkfifo(path)
    elif planted == "link-to-dev-zero":
        path.symlink_to("/dev/zero")
    else:
        with open(path, "wb") as fh:
            fh.truncate(2**32)
    t0 = time.monotonic()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        sigma, phi = L.spectral_filters(T, k)
    assert time.monotonic() - t0 < 30
    assert any("failed its integrity check" in str(w.message) for w in caught)
    ref_sigma, ref_phi = L.spectral_filters(T, k, cache=False)
    np.testing.assert_array_equal(sigma, ref_sigma)
    np.testing.assert_array_equal(phi, ref_phi)
    assert path.is_file() and not path.is_symlink(), "replaced by a good cache file"
    F._MEMORY.clear()
