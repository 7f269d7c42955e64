"""The reproduction table of docs/index.md is what the committed numbers give.

``docs/results/<scale>/<name>/summary.json`` are copies of real runs (``make results``);
the table between the markers of docs/index.md must equal
:func:`lds_toolkit.experiments.report.reproduction_table` of them, so it can neither be
edited by hand nor go stale when a claim's declaration or a committed run changes.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
from pathlib import Path

from lds_toolkit.experiments import list_experiments
from lds_toolkit.experiments.base import SCALES

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("build_results", ROOT / "docs" / "build_results.py")
build_results = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(build_results)


def test_committed_table_equals_the_table_of_the_committed_numbers():
    committed = build_results.committed_table(build_results.INDEX.read_text())
    assert committed == build_results.table(), (
        "docs/index.md's reproduction table is stale: run `python docs/build_results.py`")


def test_committed_runs_are_registered_experiments_at_their_scale():
    runs = sorted(build_results.RESULTS.glob("*/*/summary.json"))
    assert runs, "no committed runs under docs/results/"
    for summary in runs:
        scale, name = summary.parent.parent.name, summary.parent.name
        assert scale in SCALES and name in list_experiments(), summary
        assert json.loads(summary.read_text())["config"]["scale"] == scale, summary


def test_the_table_follows_the_numbers(tmp_path):
    """A committed number that no longer meets its claim changes the table (so the first
    test would fail): copy the results, break one number, compare."""
    results = tmp_path / "results"
    shutil.copytree(build_results.RESULTS, results)
    summary_path = next(p for p in sorted(results.glob("*/*/summary.json"))
                        if list_experiments()[p.parent.name].claims)
    claims = list_experiments()[summary_path.parent.name].claims
    before = build_results.table(results)
    summary = json.loads(summary_path.read_text())
    # remove the first claim's quantity: its verdict becomes 'not run' at this scale
    path = [p for p in claims[0].quantity.split("/") if p != "*"]
    node = summary
    for part in path[:-1]:
        node = node[part] if isinstance(node, dict) else node[int(part)]
    if isinstance(node, dict):
        del node[path[-1]]
    summary_path.write_text(json.dumps(summary))
    assert build_results.table(results) != before


def test_collect_copies_a_run_under_its_own_scale(tmp_path):
    out, results = tmp_path / "out", tmp_path / "results"
    src = next(build_results.RESULTS.glob("*/*/summary.json"))
    (out / src.parent.name).mkdir(parents=True)
    shutil.copy(src, out / src.parent.name / "summary.json")
    copied = build_results.collect(out, results)
    assert copied == [f"{src.parent.name} ({src.parent.parent.name})"]
    assert (results / src.parent.parent.name / src.parent.name / "summary.json").read_bytes() \
        == src.read_bytes()
