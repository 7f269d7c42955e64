"""``lds-toolkit report --compare DIR_A DIR_B``: environment, code, per-quantity and verdict
differences between two sets of runs; a fresh quick run of every numpy experiment agrees with
the committed one to round-off, with the same verdicts."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import pytest

from lds_toolkit.cli import main as cli_main
from lds_toolkit.experiments import get_experiment
from lds_toolkit.experiments.report import build_report
from lds_toolkit.experiments.report.compare import (
    ATOL,
    RTOL,
    compare_experiment,
    compare_runs,
    diff_quantity,
    quantities,
    to_text,
)
from lds_toolkit.experiments.store.outputs import file_digest

ROOT = Path(__file__).resolve().parents[2]
COMMITTED = ROOT / "docs" / "results" / "quick"
#: The numpy experiments (their numbers differ between machines by round-off only).
NUMPY = ["lengen-regions", "lengen-region-a", "lengen-region-b", "lengen-alg2",
         "regret-scaling", "nss-etc", "lds-impulse"]


def _copy(name: str, dest: Path) -> Path:
    shutil.copytree(COMMITTED / name, dest / name)
    return dest / name


def _rewrite(run_dir: Path, edit_summary=None, edit_run=None) -> None:
    """Edit a run's summary.json and/or run.json, keeping run.json's vouching in step."""
    summary = json.loads((run_dir / "summary.json").read_text())
    if edit_summary:
        edit_summary(summary)
        (run_dir / "summary.json").write_text(json.dumps(summary, indent=2))
    run = json.loads((run_dir / "run.json").read_text())
    run["files"]["summary.json"] = file_digest(run_dir / "summary.json")
    if edit_run:
        edit_run(run)
    (run_dir / "run.json").write_text(json.dumps(run, indent=2))


def test_quantities_and_their_relative_differences():
    s = {"a": 1.0, "b": {"c": [1.0, 2.0, None], "d": "x"}, "rows": [{"e": 3}, {"e": 4}]}
    assert quantities(s) == {"a": 1.0, "b/c": [1.0, 2.0, None], "b/d": "x", "rows/0/e": 3,
                             "rows/1/e": 4}
    q = diff_quantity("b/c", [1.0, 2.0, None], [1.0, 2.002, None])
    assert q.rel == pytest.approx(0.002 / 2.002) and (q.a, q.b) == (2.0, 2.002)
    assert not q.roundoff
    assert diff_quantity("x", 1e-12, 1.0001e-12).roundoff  # below ATOL
    assert diff_quantity("x", 1.0, 1.0 + 5e-6).roundoff and RTOL >= 5e-6 and ATOL > 0
    assert diff_quantity("x", [1.0, 2.0], [1.0]).kind == "shape"
    assert diff_quantity("x", float("nan"), float("nan")).rel == 0
    assert math.isinf(diff_quantity("x", 1.0, float("nan")).rel)
    assert diff_quantity("x", "holds", "fails").kind == "other"


def test_compare_names_environment_code_quantity_and_verdict_differences(tmp_path):
    name = "cloze"
    a, b = _copy(name, tmp_path / "a"), _copy(name, tmp_path / "b")
    claim = next(c for c in get_experiment(name).claims if "quick" in c.scales)
    before = {r.result.claim.id: r.status for r in build_report(tmp_path / "a", [name])}
    assert before[claim.id] == "holds"

    factor = 0.01 if claim.op.startswith(">") else 100.0

    def worsen(summary):  # every seed of the claim's quantity 100x worse
        path = claim.quantity.split("/")
        node = summary
        for part in path[:-1]:
            node = node[part]
        node[path[-1]] = [v * factor for v in node[path[-1]]]

    def env(run):
        run["environment"] = {"cpu": {"model": "A", "flags": ["avx2", "sse4_2"]},
                              "libraries": {"torch": "2.12.0"}}
        run["code_version_covers"] = {"modules": {"m": "1"}, "libraries": {"torch": "2.12.0"}}

    def env_b(run):
        env(run)
        run["environment"]["cpu"] = {"model": "B", "flags": ["avx2", "avx512f"]}
        run["code_version"] = "other"
        run["code_version_covers"]["modules"]["m"] = "2"

    _rewrite(a, edit_run=env)
    _rewrite(b, edit_summary=worsen, edit_run=env_b)
    [comp] = compare_runs(tmp_path / "a", tmp_path / "b")
    assert comp.name == name and comp.label == "differs"
    env_diff = {k: (x, y) for k, x, y in comp.environment}
    assert env_diff["cpu.model"] == ("A", "B")
    assert "avx512f" in env_diff["cpu.flags"][1] and "sse4_2" in env_diff["cpu.flags"][0]
    assert comp.code_differs == ["m (1 -> 2)"]
    worst = comp.differing[0]
    assert worst.path == claim.quantity and worst.rel == pytest.approx(0.99)
    assert (claim.id, "holds", "fails") in comp.verdicts
    text = to_text([comp], "A", "B")
    assert all(len(line) <= 100 for line in text.splitlines())
    for piece in ("environment (cpu.flags, cpu.model)", "(1 differ: m)", claim.quantity,
                  f"verdict [{claim.id}]: holds -> fails", "0.99  differs"):
        assert piece in text, piece
    # worsened 100x on every seed: a claim declared for quick, clear of its threshold
    assert f"verdict [{claim.id}]: holds -> fails; NOT expected" in text
    full = to_text([comp], "A", "B", full=True)
    assert "environment cpu.model: A -> B" in full and "avx512f" in full
    assert "m (1 -> 2)" in full


def test_cli_compare_prints_text_and_json_and_refuses_bad_directories(tmp_path, capsys):
    _copy("nss-etc", tmp_path / "a")
    _copy("nss-etc", tmp_path / "b")
    assert cli_main(["report", "--compare", str(tmp_path / "a"), str(tmp_path / "b")]) == 0
    out = capsys.readouterr().out
    assert "nss-etc: identical" in out and "0 changed" in out
    assert cli_main(["report", "--compare", str(tmp_path / "a"), str(tmp_path / "b"),
                     "--format", "json"]) == 0
    [entry] = json.loads(capsys.readouterr().out)
    assert entry["experiment"] == "nss-etc" and entry["label"] == "identical"
    assert cli_main(["report", "--compare", str(tmp_path / "a"), str(tmp_path / "none")]) == 2
    assert "not a directory" in capsys.readouterr().err
    assert not (tmp_path / "a" / "report.md").exists()  # --compare writes nothing


@pytest.fixture(scope="module")
def fresh_numpy_runs(experiment_run):
    """The suite's own quick runs of the numpy experiments (shared with test_lengen.py and
    test_nss_etc.py; lds-impulse is the one computed for this module)."""
    return {n: experiment_run(n, "quick") for n in NUMPY}


@pytest.mark.parametrize("name", NUMPY)
def test_a_fresh_quick_run_agrees_with_the_committed_one(fresh_numpy_runs, name):
    """Another machine (or this one) rounds differently, nothing more: every summary
    quantity of a fresh quick run agrees with docs/results/quick to RTOL relative or ATOL
    absolute (measured between an AMD and an Intel machine: up to 1.1e-6 relative), the
    config is the same, and every claim's verdict agrees."""
    res = fresh_numpy_runs[name]
    comp = compare_experiment(name, COMMITTED.parent / "quick", res.outdir.parent,
                              *[{r.result.claim.id: r.status for r in build_report(root, [name])}
                                for root in (COMMITTED, res.outdir.parent)])
    assert comp.present == "both" and not comp.config, comp.config
    beyond = [q for q in comp.differing if not q.roundoff]
    assert not beyond, [(q.path, q.rel, q.a, q.b) for q in beyond]
    assert not comp.verdicts, comp.verdicts
