"""Regression tests for the bad inputs of issue 11 that slipped through (numpy side; the torch
layers and the training loop are tested in tests/neural and tests/neural_experiments): each
now raises naming the argument, the range and what came, or behaves correctly."""

from __future__ import annotations

import os
import re
import warnings

import numpy as np
import pytest

import lds_toolkit as L
from lds_toolkit import _validation
from lds_toolkit.control.etc import LyapunovRule, paper_system
from lds_toolkit.learning import filters as F
from lds_toolkit.learning.learners import LearnerDivergedError
from lds_toolkit.learning.regret import regret_grid


def _continuous(a):
    a = np.atleast_2d(np.asarray(a, dtype=float))
    n = a.shape[0]
    return L.LDS(a, np.ones((n, 1)), np.ones((1, n)))


@pytest.mark.parametrize("a, dt", [([[1000.0]], 10.0), ([[-1.0, 0.0], [0.0, -2.0]], 1e300)])
def test_discretize_blames_dt_when_the_zero_order_hold_overflows(a, dt):
    with pytest.raises(ValueError, match=rf"dt={re.escape(f'{dt:g}')} is too large for the "
                                         r"zero-order hold of "
                                         r"this system: computing e\^\(A dt\) overflows"):
        L.discretize(_continuous(a), dt)


@pytest.mark.parametrize("fn", [lambda s, dt: L.discretize(s, dt, method="bilinear"),
                                L.s4_bilinear])
def test_bilinear_names_dt_when_i_minus_dt_half_a_is_singular(fn):
    with pytest.raises(ValueError, match=r"dt=1 makes I - dt/2 A singular .* A has an "
                                         r"eigenvalue 2\+0j at or near 2/dt = 2"):
        fn(_continuous([[2.0]]), 1.0)
    assert fn(_continuous([[2.0]]), 0.5).A.shape == (1, 1)  # any other dt is fine


@pytest.mark.parametrize("T", [2**70, 2**64, 2**63 - 1, 2**42 + 1])
def test_eigenvalue_regions_refuses_horizons_float64_cannot_resolve(T):
    with pytest.raises(ValueError, match=rf"T must be an integer in \[2, 2\*\*42 = "
                                         rf"4398046511104\] .* got {T}"):
        L.eigenvalue_regions(T)
    r = L.eigenvalue_regions(2**42)
    assert r.region_b.high < 1.0 and r.region_b.low < r.region_b.high


@pytest.fixture
def machine_with_16_gib(monkeypatch):
    monkeypatch.setattr(_validation, "memory_bytes", lambda: 16 * 2**30)


def test_spectral_filters_refuses_an_impossible_size_before_allocating(machine_with_16_gib):
    with pytest.raises(ValueError, match=r"T=1099511627776 is too large: the \(T, k=24\) "
                                         r"float64 filters alone need 192 TiB, more than this "
                                         r"machine's 16 GiB of memory"):
        L.spectral_filters(2**40, 24)


@pytest.mark.parametrize("cls", [L.SpectralFiltering, L.SpectralFilteringAR2])
def test_learner_refuses_an_impossible_horizon_before_allocating(cls, machine_with_16_gib):
    with pytest.raises(ValueError, match=r"horizon=4611686018427387904 is too large: the "
                                         r"\(horizon, k=24\) float64 spectral filters"):
        cls(horizon=2**62, k=24).fit_predict(np.ones((10, 1)), np.ones((10, 1)))


def test_simulate_etc_refuses_an_output_grid_that_cannot_fit(machine_with_16_gib):
    with pytest.raises(ValueError, match=r"horizon / output_step=4.61169e\+18 / 0.001 is too "
                                         r"large: the 4.61e\+21 points of the output grid"):
        L.simulate_etc(paper_system(), LyapunovRule(0.5), [1.0, 1.0], horizon=2.0**62,
                       output_step=1e-3)


def _open_fds() -> int:
    return len(os.listdir("/proc/self/fd")) if os.path.isdir("/proc/self/fd") else 0


def test_filter_cache_truncated_or_altered_files_are_reported_and_recomputed(tmp_path,
                                                                          monkeypatch):
    monkeypatch.setenv("LDS_TOOLKIT_CACHE", str(tmp_path))
    sigma, phi = L.spectral_filters(700, 5, "H")
    (path,) = tmp_path.glob("*.npz")
    good = path.read_bytes()
    cases = {
        "truncated": good[: len(good) // 2],
        "empty": b"",
        "pickle": b"\x80\x04\x95" + good[3:40],
    }
    altered = phi.copy()
    altered[3, 2] += 1e-3  # wrong but finite values, with the old checksum
    with np.load(path) as z:
        stamp = z["sha256"]
    np.savez(tmp_path / "alt.npz", sigma=sigma, phi=altered, sha256=stamp)
    cases["altered"] = (tmp_path / "alt.npz").read_bytes()
    np.savez(tmp_path / "foreign.npz", sigma=sigma, phi=altered)
    cases["foreign"] = (tmp_path / "foreign.npz").read_bytes()
    reasons = {"truncated": "not a readable .npz", "empty": "not a readable .npz",
               "pickle": "not a readable .npz", "altered": "checksum mismatch",
               "foreign": "no checksum"}
    for case, data in cases.items():
        F._MEMORY.clear()
        path.write_bytes(data)
        fds = _open_fds()
        with pytest.warns(RuntimeWarning, match=rf"filter cache file .* failed its integrity "
                                                rf"check \({reasons[case]}"):
            s2, p2 = L.spectral_filters(700, 5, "H")
        assert _open_fds() == fds, f"{case}: a file handle leaked"
        np.testing.assert_array_equal(p2, phi)
        np.testing.assert_array_equal(s2, sigma)
        assert path.read_bytes() != data, f"{case}: the file was rewritten"
        F._MEMORY.clear()
        with warnings.catch_warnings():
            warnings.simplefilter("error", RuntimeWarning)
            L.spectral_filters(700, 5, "H")  # the rewritten file passes its check


def test_asymmetric_regret_needs_a_learner_object():
    with pytest.raises(TypeError, match=r"learner must be an OnlineLearner instance "
                                        r"\(SpectralFiltering, .*\), got str 'alg1'"):
        L.asymmetric_regret("alg1", np.ones((50, 1)), np.ones((50, 1)))


def test_n_points_must_be_at_least_two():
    learner = L.SpectralFiltering(horizon=64, k=4)
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="n_points must be an integer >= 2, got 0"):
        L.asymmetric_regret(learner, rng.standard_normal((64, 1)),
                            rng.standard_normal((64, 1)), n_points=0)
    with pytest.raises(ValueError, match="n_points must be an integer >= 2, got 1"):
        regret_grid(100, 1)


def test_float_t_grid_is_refused_not_truncated():
    learner = L.SpectralFiltering(horizon=64, k=4)
    rng = np.random.default_rng(0)
    u, y = rng.standard_normal((64, 1)), rng.standard_normal((64, 1))
    with pytest.raises(ValueError, match=r"t_grid must be increasing integers in \[1, 64\]; "
                                         r"entry 1 is 20.2, not an integer"):
        L.asymmetric_regret(learner, u, y, t_grid=[10.0, 20.2, 64.0])
    curve = L.asymmetric_regret(learner, u, y, t_grid=[10.0, 20.0, 64.0])
    assert curve.t.tolist() == [10, 20, 64]


@pytest.mark.parametrize("a, b, c, match", [
    (np.zeros((0, 0)), np.zeros((0, 1)), np.zeros((1, 0)),
     r"A must have at least one row and one column, got shape \(0, 0\)"),
    (np.eye(2), np.zeros((2, 0)), np.ones((1, 2)),
     r"B must have at least one row and one column, got shape \(2, 0\)"),
    (np.eye(2), np.ones((2, 1)), np.zeros((0, 2)),
     r"C must have at least one row and one column, got shape \(0, 2\)"),
])
def test_an_empty_system_is_refused(a, b, c, match):
    with pytest.raises(ValueError, match=match):
        L.LDS(a, b, c, dt=1.0)


def test_simulate_etc_says_when_the_state_overflows():
    with pytest.raises(FloatingPointError, match=r"LyapunovRule.function returned a non-finite "
                                                 r"value at t = 0 \(max \|x_j\| = 1e\+200"):
        L.simulate_etc(paper_system(), LyapunovRule(0.5), [1e200, 1e200], horizon=1.0,
                       mode="grid")


def test_streaming_learner_names_the_step_where_the_loss_became_infinite():
    rng = np.random.default_rng(0)
    u, y = rng.standard_normal((40, 1)), rng.standard_normal((40, 1))
    y[10] = 1e200  # finite, but its squared error overflows
    with pytest.raises(LearnerDivergedError) as batch:
        L.SpectralFiltering(horizon=40, k=4, lr=1.0).fit_predict(u, y)
    learner = L.SpectralFiltering(horizon=40, k=4, lr=1.0).reset(1, 1)
    with pytest.raises(LearnerDivergedError, match="non-finite at step t=10") as stream:
        for t in range(40):
            learner.predict_one(u[t])
            learner.learn_one(u[t], y[t])
    assert stream.value.step == batch.value.step == 10
