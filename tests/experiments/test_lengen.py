"""The length-generalization experiments (Figures 1-4, Theorems 5-6): outputs, protocol
invariants, and the paper's claims as the experiments declare them.

The claims (thresholds included) live in each experiment's ``claims``; ``assert_claims``
checks those declared for the scale of the run. Quick scale (T = 2^10, n = 64, k = 16,
3 seeds) runs in the default suite; paper scale (T = 2^14, n = 512, k = 24, 8 seeds) is
marked slow.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from lds_toolkit.experiments import list_experiments
from lds_toolkit.experiments.catalog._lengen_common import choose_step_size
from lds_toolkit.learning import SpectralFiltering
from lds_toolkit.systems import LDS, simulate

from ..claims import assert_claims

NAMES = ["lengen-regions", "lengen-region-a", "lengen-region-b", "lengen-alg2",
         "regret-scaling"]
FIGURES = ["lengen-region-a", "lengen-region-b", "lengen-alg2"]


@pytest.fixture(scope="module")
def quick_runs(experiment_run):
    return {n: experiment_run(n, "quick") for n in NAMES}


def test_registered():
    assert set(NAMES) <= set(list_experiments())


def test_quick_outputs_written(quick_runs):
    for res in quick_runs.values():
        summary = json.loads((res.outdir / "summary.json").read_text())
        assert summary["config"]["scale"] == "quick"
        assert (res.outdir / "arrays.npz").exists()
        assert res.figures and all(p.exists() for p in res.figures)
        assert {p.suffix for p in res.figures} == {".png", ".pdf"}
    s = quick_runs["lengen-region-a"].summary
    assert set(s["per_q"]) == {"0.5", "0.625", "0.75", "0.875", "1"}
    for entry in s["per_q"].values():
        assert {"final_loss", "asymmetric_regret", "hindsight_final_loss"} <= set(entry)
        assert len(entry["final_loss_per_seed"]) == s["seeds"]
        assert entry["final_loss"] == pytest.approx(np.mean(entry["final_loss_per_seed"]))
    losses = quick_runs["lengen-region-a"].arrays["losses"]
    assert losses.shape == (3, 5, 2**10)
    # final_loss is the mean over the last quarter, recomputed from the raw curves
    np.testing.assert_allclose(losses[:, 0, 768:].mean(axis=1),
                               s["per_q"]["0.5"]["final_loss_per_seed"])
    ratios = np.array(s["per_q"]["0.5"]["final_loss_ratio_per_seed"])
    np.testing.assert_allclose(ratios, losses[:, 0, 768:].mean(1) / losses[:, -1, 768:].mean(1))


@pytest.mark.parametrize("name", FIGURES + ["regret-scaling"])
def test_quick_claims(quick_runs, name):
    assert assert_claims(name, quick_runs[name].summary, "quick") >= 1


@pytest.mark.parametrize("name", FIGURES)
def test_step_sizes_are_interior_and_recorded(quick_runs, name):
    s = quick_runs[name].summary
    assert s["step_sizes_interior"] is True
    assert len(s["step_sizes"]) == len(s["step_size_search"]) == s["seeds"]
    for (schedule, lr), search in zip(s["step_sizes"], s["step_size_search"]):
        assert search["chosen"] == [schedule, lr]
        tried = search[schedule]
        lrs = [row[0] for row in tried]
        i = lrs.index(lr)
        assert 0 < i < len(lrs) - 1, "the chosen step has neighbours on both sides"
        best = tried[i][1]
        for _lr, loss in tried:
            assert loss is None or loss >= best  # None: diverged
    sens = s["step_size_sensitivity"]
    assert len(sens["ratio_median"]) == len(sens["lrs"])


def test_step_size_search_widens_an_edge_until_interior():
    """A grid whose best value sits at its top edge is widened until it is interior."""
    rng = np.random.default_rng(3)
    sys_ = LDS([[0.9]], [[1.0]], [[1.0]], dt=1.0)
    u = rng.standard_normal((512, 1))
    y = simulate(sys_, u, output="lengen").y
    cfg = {"T": 512, "k": 8, "filter_precision": "double",
           "lr_grid": {"constant": [0.001, 0.002]}}
    (schedule, lr), search = choose_step_size(SpectralFiltering, cfg, 10.0, u, y)
    assert schedule == "constant" and lr > 0.002 and search["interior"]
    lrs = [row[0] for row in search["constant"]]
    assert lrs[0] < lr < lrs[-1]


def test_figure_3_and_4_share_systems(quick_runs):
    eb = quick_runs["lengen-region-b"].arrays["eigenvalues"]
    e2 = quick_runs["lengen-alg2"].arrays["eigenvalues"]
    np.testing.assert_array_equal(eb, e2)
    s = quick_runs["lengen-regions"].summary
    lo, hi = s["region_b"]
    assert np.all((eb > lo) & (eb < hi))


def test_regions_summary(quick_runs):
    s = quick_runs["lengen-regions"].summary
    T = s["T"]
    for q, e in s["per_q"].items():
        q = float(q)
        assert e["region_b"][0] == pytest.approx(1 - np.log(T) / (8 * T**q))
        assert e["region_b"][1] == pytest.approx(1 - 1 / (2 * T**1.25))
        # Region A is bad only for q < 7/8, and more so as q decreases
        assert (e["region_a_left_bad_share"] > 0) == (q < 7 / 8)
    shares = [s["per_q"][k]["region_a_left_bad_share"] for k in ("0.5", "0.625", "0.75")]
    assert shares[0] > shares[1] > shares[2] > 0


def test_regret_scaling_summary(quick_runs):
    s = quick_runs["regret-scaling"].summary
    for setup in ("alg1-regionA", "alg1-regionB", "alg2-regionA", "alg2-regionB"):
        for q in ("0.5", "0.75", "0.875", "1"):
            e = s[setup][q]
            assert len(e["regret_mean"]) == len(e["context_gap_mean"]) == len(s["T_values"])
            assert "slope" in e
        assert all(g == 0 for g in s[setup]["1"]["context_gap_mean"])
    # the bound's slope: sqrt(T) log T over the horizons of the run
    Ts = np.array(s["T_values"], dtype=float)
    assert s["bound_slope"] == pytest.approx(
        np.polyfit(np.log(Ts), np.log(np.sqrt(Ts) * np.log(Ts)), 1)[0])


@pytest.mark.slow
@pytest.mark.parametrize("name", FIGURES + ["regret-scaling"])
def test_paper_scale_claims(experiment_run, name):
    res = experiment_run(name, "paper", jobs=2)
    assert assert_claims(name, res.summary, "paper") >= 1


def test_cli_prints_the_ratios_per_q(quick_runs, capsys):
    from lds_toolkit.cli import main as cli_main

    res = quick_runs["lengen-region-a"]
    assert cli_main(["reproduce", "lengen-region-a", "--quick", "--out",
                     str(res.outdir.parent), "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "0 task(s) computed, 3 loaded" in out  # the stored run, not a new one
    ratios = res.summary["ratio_to_full_by_q"]
    assert f"final loss / full context: T^0.5: {ratios[0]:.3g}," in out
    assert "Fig. 2 [short-fails]" in out and "-> holds" in out
