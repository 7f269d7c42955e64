"""``lds-toolkit reproduce nss-etc --quick``: outputs, the paper's claim, and the sweep."""

from __future__ import annotations

import json

import numpy as np
import pytest

from lds_toolkit.experiments import list_experiments

from ..claims import assert_claims


@pytest.fixture(scope="module")
def run(experiment_run):
    """The session's quick run (shared with test_compare.py, which compares it with the
    committed one)."""
    d = experiment_run("nss-etc", "quick").outdir
    return d, json.loads((d / "summary.json").read_text())


def test_registered():
    assert "nss-etc" in list_experiments()


def test_outputs_and_required_keys(run):
    d, s = run
    for key in ("system", "printed_matrices_check", "events", "min_inter_event",
                "max_abs_state", "sweep", "config"):
        assert key in s
    assert set(s["max_abs_state"]) >= {"original", "perturbed"}
    for name in ("nss_etc_fig1", "nss_etc_sweep", "nss_etc_lyapunov"):
        assert (d / f"{name}.png").stat().st_size > 20_000
        assert (d / f"{name}.pdf").read_bytes()[:4] == b"%PDF"
    arrays = np.load(d / "arrays.npz")
    for key in ("t", "x_etc", "x_original", "x_perturbed", "sample_times",
                "perturbed_times", "inputs", "final_norm_vs_magnitude"):
        assert key in arrays
    assert arrays["final_norm_vs_magnitude"].shape == (
        s["config"]["seeds"], len(s["config"]["magnitude_fractions"]))


def test_summary_numbers(run):
    _, s = run
    assert s["system"]["A"] == [[0.0, 1.0], [-2.0, 3.0]]
    assert s["printed_matrices_check"]["printed_satisfies_eq8"] is False
    assert s["printed_matrices_check"]["used_satisfies_eq8"] is True
    assert s["events"] == 21 and s["min_inter_event"] == pytest.approx(0.2)
    assert s["monitoring"]["exact"]["events"] == 21
    assert s["monitoring"]["exact"]["bound_satisfied"] is True
    m = s["max_abs_state"]
    assert m["ratio_over_seeds"]["min"] <= m["ratio"] <= m["ratio_over_seeds"]["max"]
    ratios = m["ratio_per_seed"]  # one perturbation draw per seed, the first is the figure's
    assert len(ratios) == s["config"]["seeds"] == 16 and ratios[0] == m["ratio"]
    assert m["ratio_over_seeds"]["median"] == pytest.approx(np.median(ratios))
    assert m["jittered_grid_etc"] < 1.1                      # feedback keeps it stable
    sw = s["sweep"]
    med = np.array(sw["final_norm_vs_magnitude"]["median"])
    assert np.all(np.diff(med) > 0)                          # grows with the perturbation
    assert sw["loglog_slope_vs_magnitude"] == pytest.approx(1.0, abs=0.05)
    assert np.max(sw["jittered_etc_final_norm_vs_magnitude"]["max"]) < 1e-2
    assert len(sw["final_norm_vs_kappa"]["median"]) == len(s["config"]["kappas"])


def test_paper_claims(run):
    """S4++ Fig. 1 as the experiment declares it (thresholds in its ``claims``)."""
    _, s = run
    assert assert_claims("nss-etc", s, "quick") >= 3
