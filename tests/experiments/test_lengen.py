"""The length-generalization experiments (Figures 1-4, Theorems 5-6): outputs, protocol
invariants, and the paper's claims as the experiments declare them.

The claims (thresholds included) live in each experiment's ``claims``; ``assert_claims``
checks those declared for the scale of the run. Quick scale (T = 2^10, n = 64, k = 16,
16 seeds) runs in the default suite; paper scale (T = 2^14, n = 512, k = 24, 16 seeds) is
marked slow. ``test_quick_seeds.py`` reruns every quick claim from base seeds 0-9 (slow).
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
    assert losses.shape == (s["seeds"], 5, 2**10) and s["seeds"] >= 16
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
    assert len(sens["ratio_per_seed"]) == s["seeds"]
    for i, (lr, edge, safe) in enumerate(zip(sens["chosen_lr_per_seed"], sens["edge_per_seed"],
                                             sens["safe_lr_per_seed"])):
        # the safe step is a grid step at most 1/8 of the edge; a chosen constant step lies
        # below the edge (the edge is no better than y_{t-1} on the same validation stream)
        assert edge is not None and safe is not None, i
        assert safe <= edge * sens["safe_step_factor"] * (1 + 1e-9) and safe in sens["lrs"]
        if s["step_sizes"][i][0] == "constant":
            assert lr < edge
        # the effect at the safe step is the ratio of the grid run at that step
        j = sens["lrs"].index(safe)
        assert sens["ratio_at_safe_per_seed"][i] == sens["ratio_per_seed"][i][j]


def test_step_size_sweep_finds_the_edge_and_the_safe_step():
    """The edge is the first grid step no better than the trivial predictor on validation;
    the safe step is the grid step three octaves below it (an independent scalar LMS: the
    mean-square stability limit of OGD on x_t = phi . u is lr ~ 1 / E||x||^2)."""
    from lds_toolkit.experiments.catalog._lengen_common import final_loss, step_size_sweep
    from lds_toolkit.learning import LastValue

    rng = np.random.default_rng(0)
    sys_ = LDS([[0.9]], [[1.0]], [[1.0]], dt=1.0)
    u = rng.standard_normal((2, 1024, 1))
    y = [simulate(sys_, u_, output="lengen").y for u_ in u]

    def make(L, **kw):
        return SpectralFiltering(horizon=1024, k=8, context=L, radius=10.0, **kw)

    triv = LastValue()
    triv.fit_predict(u[0], y[0])
    sw = step_size_sweep(make, [0.0125 * 2**i for i in range(6)], 32, (u[0], y[0]),
                         (u[1], y[1]), final_loss(triv.losses_))
    edge, safe = sw["edge"], sw["safe_lr"]
    assert edge is not None and edge in sw["lrs"]
    i = sw["lrs"].index(edge)
    assert not sw["validation_full"][i] < final_loss(triv.losses_)
    assert all(v < final_loss(triv.losses_) for v in sw["validation_full"][:i])
    assert safe == edge / 8
    assert len(sw["test_short"]) == len(sw["test_full"]) == len(sw["lrs"])


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


def test_step_size_search_losses_are_those_of_fresh_fits():
    """The search builds each feature map once and refits it per step; every loss it
    records is the final loss of a learner built and fitted from scratch with that step."""
    from lds_toolkit.experiments.catalog._lengen_common import final_loss

    rng = np.random.default_rng(4)
    sys_ = LDS([[0.95]], [[1.0]], [[0.5]], dt=1.0)
    u = rng.standard_normal((256, 1))
    y = simulate(sys_, u, output="lengen").y
    cfg = {"T": 256, "k": 8, "filter_precision": "double",
           "lr_grid": {"constant": [0.05, 0.1, 0.2], "inv_sqrt": [0.5, 1.0]}}
    _, search = choose_step_size(SpectralFiltering, cfg, 10.0, u, y, context=20)
    checked = 0
    for schedule in cfg["lr_grid"]:
        for lr, loss in search[schedule]:
            fresh = SpectralFiltering(horizon=256, k=8, context=20, radius=10.0, lr=lr,
                                      lr_schedule=schedule)
            fresh.fit_predict(u, y)
            assert loss == final_loss(fresh.losses_)
            checked += 1
    assert checked >= 5


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
    arrays = quick_runs["regret-scaling"].arrays
    Ts = np.array(s["T_values"], dtype=float)
    cfg = s["config"]
    # quick: the setups and contexts the quick claims read, three horizons
    assert cfg["setups"] == ["alg1-regionA", "alg1-regionB", "alg2-regionB"]
    assert cfg["q_values"] == [0.5, 0.875, 1.0] and len(Ts) == 3
    for setup in cfg["setups"]:
        assert setup in s and set(s[setup]) == {"0.5", "0.875", "1"}
        for q in s[setup]:
            e = s[setup][q]
            assert len(e["regret_mean"]) == len(e["context_gap_mean"]) == len(s["T_values"])
            assert len(e["slope_per_seed"]) == s["seeds"]
            # per-seed slopes recomputed from the per-seed regrets
            for row, slope in zip(e["regret_per_seed"], e["slope_per_seed"]):
                if slope is not None:
                    assert slope == pytest.approx(np.polyfit(np.log(Ts), np.log(row), 1)[0])
            # a step chosen for every (T, seed) for this context
            assert set(e["steps"]) == {str(int(T)) for T in Ts}
        assert all(g == 0 for g in s[setup]["1"]["context_gap_mean"])
        # quick: the shorter contexts' gaps at the largest T only (where the claims read them)
        assert cfg["context_gap_every_T"] is False
        for q in ("0.5", "0.875"):
            gaps = s[setup][q]["context_gap_mean"]
            assert gaps[:-1] == [None] * (len(Ts) - 1) and gaps[-1] >= 0
            assert None not in s[setup][q]["context_gap_at_T_per_seed"]
            assert np.isnan(arrays[f"{setup}_context_gap"][:, :-1, :-1]).all()
        assert all(d == 0 for d in s[setup]["1"]["slope_minus_full_per_seed"]
                   if d is not None)
        # the regret curve at the largest T ends at the final regret, and its late slope
        # (t >= T/16) is the least-squares slope of its points there
        curves = arrays[f"{setup}_curves"]  # (seeds, q, points)
        t = arrays[f"{setup}_curve_t"]
        late = t >= Ts[-1] * s["curve_late_from"]
        assert late.sum() >= 4
        # quick computes the curve on its late part only (curve_from = curve_late_from)
        assert t[0] == np.ceil(Ts[-1] * cfg["curve_from"]) and late.all()
        assert t[-1] == Ts[-1] and len(t) == cfg["curve_points"]
        for i, slope in enumerate(s[setup]["0.5"]["curve_slope_late_per_seed"]):
            if slope is not None:
                assert slope == pytest.approx(
                    np.polyfit(np.log(t[late]), np.log(curves[i, 0, late]), 1)[0])
        np.testing.assert_allclose(curves[:, :, -1],
                                   arrays[f"{setup}_regret"][:, -1, :], rtol=1e-9,
                                   atol=1e-9)
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
    assert f"0 task(s) computed, {res.summary['seeds']} loaded" in out  # the stored run
    median = res.summary["per_q"]["0.5"]["final_loss_ratio_median"]
    assert f"final loss / full context, median over seeds: T^0.5: {median:.3g}," in out
    assert "Fig. 2 [short-fails]" in out and "-> holds" in out
