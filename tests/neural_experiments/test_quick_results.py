"""Quick-mode runs of the six neural experiments, end to end through the CLI (slow).

One module-scoped run writes every experiment's outputs; the tests assert the claims the
issue asks for on ``summary.json``, and print each experiment's wall time.
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


#: the experiments whose thresholds live in their claims (issue 13)
CLAIMED = ("nss-s4", "cloze", "induction-heads")


@pytest.mark.parametrize("name", CLAIMED)
def test_claims_declared_for_the_quick_scale_hold(quick_runs, name):
    assert_claims(name, _summary(quick_runs[0], name), "quick")


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


def test_assoc_recall_focus_stays_at_its_chunk_ceiling_at_1k(quick_runs):
    """What we get: Focus's chunked attention caps it near the chunk ceiling (about 0.70)."""
    s = _summary(quick_runs[0], "assoc-recall")
    acc = s["accuracy"]
    assert acc["focus"]["30"] >= 0.9
    assert acc["focus"]["1024"] <= s["chunk_ceiling"]["1024"] + 0.05
    assert set(acc) == {"focus", "focus-h", "las", "s4++", "transformer"}


@pytest.mark.xfail(strict=True, reason="Focus paper Table 1 (100% at 1K) does not reproduce: "
                   "chunked attention bounds Focus near 0.70, see docs/experiments/"
                   "assoc-recall.md")
def test_assoc_recall_focus_reaches_90_percent_at_1k(quick_runs):
    assert _summary(quick_runs[0], "assoc-recall")["accuracy"]["focus"]["1024"] >= 0.9


def test_las_ablation_models_learn_listops(quick_runs):
    s = _summary(quick_runs[0], "las-ablation")
    assert set(s["accuracy"]) == {"las", "vanilla", "l-only", "s-only", "alibi"}
    for m, a in s["accuracy"].items():
        assert a > s["majority_accuracy"] + 0.1, m


def test_lds_streams_reports_every_model_and_length(quick_runs):
    s = _summary(quick_runs[0], "lds-streams")
    lengths = {str(e) for e in s["eval_lengths"]}
    for m in ("s4", "s4+", "stu", "focus", "las", "transformer", "alg1", "alg2"):
        assert set(s["loss"][m]) == lengths
        assert all(np.isfinite(v) for v in s["loss"][m].values()), m


def test_cli_printed_each_time(quick_runs, capsys):
    _, times = quick_runs
    assert set(times) == set(NAMES)
    assert all(re.match(r"^[a-z0-9-]+$", n) for n in times)
