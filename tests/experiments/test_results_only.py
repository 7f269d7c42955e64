"""summary.json holds results only: two runs of the same seed give the same bytes (the cheap
part of the sweep in test_quick_seeds.py, which runs all thirteen quick experiments twice)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from lds_toolkit.experiments import reproduce

ROOT = Path(__file__).resolve().parents[2]
#: Cheap quick runs the suite already makes once (test_lengen.py): a second one costs ~4 s.
CHEAP = ["lengen-regions", "lengen-region-a", "lengen-region-b"]
#: Words of a key that holds a wall time or a host fact rather than a result.
NOT_A_RESULT = re.compile(r"(^|_)(seconds|wall|elapsed|date|host|hostname|cpu|threads)($|_)")


@pytest.mark.parametrize("name", CHEAP)
def test_a_second_run_gives_a_byte_identical_summary(experiment_run, tmp_path, name):
    first = experiment_run(name, "quick")
    second = reproduce(name, scale="quick", out=tmp_path, progress=False)
    assert second.stats.n_computed == second.stats.n_tasks > 0  # computed again
    assert (first.outdir / "summary.json").read_bytes() == \
        (tmp_path / name / "summary.json").read_bytes()


def _keys(node, path=""):
    if isinstance(node, dict):
        for k, v in node.items():
            yield f"{path}/{k}", str(k)
            yield from _keys(v, f"{path}/{k}")
    elif isinstance(node, list):
        for v in node:
            yield from _keys(v, path)


def test_committed_quick_summaries_hold_no_timings_or_host_facts():
    """The committed quick runs (regenerated with the timings in run.json): no key of any
    summary names a wall time or a host fact; each run.json has its environment."""
    runs = sorted((ROOT / "docs" / "results" / "quick").glob("*/summary.json"))
    assert len(runs) == 13
    for path in runs:
        summary = json.loads(path.read_text())
        bad = sorted({p for p, k in _keys(summary) if NOT_A_RESULT.search(k)})
        assert not bad, f"{path.parent.name}: {bad}"
        run = json.loads((path.parent / "run.json").read_text())
        assert run["environment"]["libraries"]["numpy"], path.parent.name
        assert run["code_version_covers"]["modules"], path.parent.name
