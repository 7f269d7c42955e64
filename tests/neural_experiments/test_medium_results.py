"""Medium-scale runs of assoc-recall and las-ablation (slow, and opt-in: they take about an
hour of two idle cores: assoc-recall 27 min, las-ablation 36 min; more than the rest of
``make test-slow``).

Run with ``LDS_TOOLKIT_MEDIUM_OUT=DIR pytest -m slow tests/neural_experiments/
test_medium_results.py``: the tests call ``lds-toolkit reproduce NAME --scale medium --out DIR``,
whose result store loads every task already finished there (e.g. by an earlier
``reproduce``), so only missing tasks are computed. They assert the claims declared for the
medium scale and what the runs must record.
"""

from __future__ import annotations

import os

import pytest

from ..claims import assert_claims
from .medium import run_medium, summary

pytestmark = pytest.mark.slow
NAMES = ("assoc-recall", "las-ablation")


@pytest.fixture(scope="module")
def medium_out():
    out = os.environ.get("LDS_TOOLKIT_MEDIUM_OUT")
    if not out:
        pytest.skip("opt-in: set LDS_TOOLKIT_MEDIUM_OUT=DIR to run (or reuse) the medium runs")
    return run_medium(NAMES, out)


@pytest.mark.parametrize("name", NAMES)
def test_declared_claims_hold_at_medium_scale(medium_out, name):
    checked = assert_claims(name, summary(medium_out, name), "medium")
    assert checked, f"{name} declares no claim for the medium scale"


def test_assoc_recall_medium_records_both_readings_splits_and_plateaus(medium_out):
    s = summary(medium_out, "assoc-recall")
    assert s["config"]["scale"] == "medium"
    # both readings of "C = 32" at 4K, where they differ
    assert s["chunk_length"]["focus"]["4096"] == 32 and s["chunk_length"]["focus-nc"]["4096"] == 128
    for m, per_len in s["plateaued"].items():
        for n, flags in per_len.items():
            assert len(flags) == s["config"]["seeds"] and all(isinstance(f, bool) for f in flags)
            assert set(s["split_accuracy"][m][n]) == {"same", "previous", "further"}
    # inside its chunk Focus must recall (plain attention over the chunk)
    assert s["split_accuracy"]["focus"]["1024"]["same"] >= 0.9


def test_las_ablation_medium_records_the_reading_and_plateaus(medium_out):
    s = summary(medium_out, "las-ablation")
    cfg = s["config"]
    assert (cfg["min_length"], cfg["max_length"], cfg["chunk_size"]) == (500, 2000, 128)
    assert s["alpha_schedule"] == cfg["alpha_schedule"]
    assert {"alibi", "l-only", "s-only", "s+alibi", "las"} <= set(s["accuracy"])
    for m, flags in s["plateaued"].items():
        assert len(flags) == cfg["seeds"], m
