"""Quick-mode runs of the six neural experiments, end to end through the CLI (slow).

One module-scoped run writes every experiment's outputs; the tests assert the claims declared
for the quick scale on ``summary.json``, and print each experiment's wall time (each is
meant to stay under 30 s on 2 idle cores; ``make figures`` runs them with ``--jobs 2``).
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import numpy as np
import pytest

from lds_toolkit.cli import main as cli_main

from ..claims import assert_claims

NAMES = ("nss-s4", "cloze", "induction-heads", "assoc-recall", "las-ablation", "lds-streams")

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def quick_runs(tmp_path_factory):
    out = tmp_path_factory.mktemp("neural-quick")
    times = {}
    for name in NAMES:
        t0 = time.perf_counter()
        assert cli_main(["reproduce", name, "--quick", "--out", str(out), "--no-progress"]) == 0
        times[name] = time.perf_counter() - t0
    print("\nquick neural experiments (wall seconds): "
          + ", ".join(f"{k} {v:.0f}" for k, v in times.items())
          + f"; total {sum(times.values()):.0f}")
    return out, times


def _summary(out, name):
    return json.loads((Path(out) / name / "summary.json").read_text())


@pytest.mark.parametrize("name", NAMES)
def test_outputs_exist(quick_runs, name):
    out, _ = quick_runs
    d = Path(out) / name
    assert (d / "summary.json").exists() and (d / "arrays.npz").exists()
    figs = list(d.glob("*.png"))
    assert figs and all(f.stat().st_size > 10_000 for f in figs)
    assert all(f.with_suffix(".pdf").exists() for f in figs)


def test_nss_s4_writes_the_invariant_measures_for_every_model(quick_runs):
    s = _summary(quick_runs[0], "nss-s4")
    for key in ("weighted_volume", "weighted_state_change", "state_change", "above_floor",
                "floor", "output_effect", "spectral_radius", "certified_rho"):
        assert set(s[key]) == {"s4", "s4d", "s4+", "s4d-free"}, key
        assert all(np.isfinite(v) for v in s[key].values()), key
    assert {p.name for p in (Path(quick_runs[0]) / "nss-s4").glob("*.png")} == {
        "nss_s4.png", "nss_s4_analysis.png"}


def test_induction_heads_reports_every_factor(quick_runs):
    s = _summary(quick_runs[0], "induction-heads")
    T = s["config"]["T"]
    for n, row in s["accuracy_by_factor"].items():
        assert [int(f) for f in row] == [f for f in (1, 2, 4, 8, 16) if int(n) * f <= T]


def test_assoc_recall_every_model_trained_from_scratch_at_every_length(quick_runs):
    """The quick scale's shape: the two models of the L = 30 claims (declared for medium and
    paper: 250 quick steps solve L = 30 on most seeds, not all), each trained from scratch,
    with a record of how each run ended and the split by chunk."""
    s = _summary(quick_runs[0], "assoc-recall")
    cfg = s["config"]
    assert cfg["models_at"] == {"30": ["focus", "focus-h"]}
    for n, models in cfg["models_at"].items():
        for m in models:
            assert len(s["accuracy_seeds"][m][n]) == cfg["seeds"], (m, n)
            steps, status = s["steps"][m][n], s["status"][m][n]
            assert all(0 < st <= cfg["train"][n]["max_steps"] for st in steps)
            # stopped at 100 % held-out accuracy, or else at the budget
            assert all(st == "target_reached" or (st == "completed" and k == cfg["train"][n][
                "max_steps"]) for st, k in zip(status, steps)), (m, status, steps)
            counts = s["split_count"][m][n]
            assert all(sum(c) == cfg["n_test"] for c in zip(*counts.values()))
    assert s["chunk_length"]["focus"]["30"] == 30  # one chunk: min(32, L)


def test_las_ablation_models_learn_listops(quick_runs):
    s = _summary(quick_runs[0], "las-ablation")
    assert set(s["accuracy"]) == {"vanilla", "alibi", "l-only", "s-only", "s+alibi", "las",
                                  "las-eu"}
    # every variant above the majority class: the declared claim "all-learn"
    assert s["alpha_schedule"] == "log" and s["eld_min_factor"]["log"] < 1e-10


def test_lds_streams_reports_every_model_and_length(quick_runs):
    s = _summary(quick_runs[0], "lds-streams")
    lengths = {str(e) for e in s["eval_lengths"]}
    for m in ("s4", "s4+", "stu", "focus", "las", "transformer", "alg1", "alg2"):
        assert set(s["loss"][m]) == lengths
        assert all(np.isfinite(v) for v in s["loss"][m].values()), m


@pytest.mark.parametrize("name", NAMES)
def test_declared_claims_hold(quick_runs, name):
    """Every claim an experiment declares for the quick scale holds on its quick run (the
    thresholds come from the declarations, lds_toolkit/experiments/catalog/*)."""
    assert_claims(name, _summary(quick_runs[0], name), "quick")


def test_cli_printed_each_time(quick_runs, capsys):
    _, times = quick_runs
    assert set(times) == set(NAMES)
    assert all(re.match(r"^[a-z0-9-]+$", n) for n in times)
