"""The command line without torch: only ``lds_toolkit.neural`` needs it.

Each test runs the CLI in a fresh interpreter whose import system refuses ``torch`` (a meta
path finder that raises ``ModuleNotFoundError`` for ``torch`` and ``torch.*``, as when torch
is not installed), and checks that ``--help``, ``list``, ``report`` and the numpy experiments
work and never import torch, and that a neural experiment ends with one line naming the
``nn`` extra.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

DRIVER = textwrap.dedent("""
    import contextlib, io, json, sys

    class NoTorch:
        def find_spec(self, name, path=None, target=None):
            if name == "torch" or name.startswith("torch."):
                raise ModuleNotFoundError(f"No module named {name!r}", name=name)
            return None

    sys.meta_path.insert(0, NoTorch())
    from lds_toolkit.cli import main

    results = []
    for argv in json.loads(sys.argv[1]):
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main(argv)
            except SystemExit as exc:
                code = exc.code
        results.append({"argv": argv, "code": code, "out": out.getvalue(),
                        "err": err.getvalue()})
    results.append(sorted(m for m in sys.modules if m.split(".")[0] == "torch"
                          or m.startswith("lds_toolkit.neural")))
    print(json.dumps(results))
""")


def run_without_torch(*argvs: list[str]) -> tuple[list[dict], list[str]]:
    """Run ``lds_toolkit.cli.main(argv)`` for each argv in one torch-less interpreter;
    the results (exit code, stdout, stderr) and the torch/neural modules it imported."""
    done = subprocess.run([sys.executable, "-c", DRIVER, json.dumps(list(argvs))],
                          capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-3000:]
    *results, imported = json.loads(done.stdout.strip().splitlines()[-1])
    return results, imported


def test_the_blocker_really_blocks_torch():
    done = subprocess.run([sys.executable, "-c", DRIVER.replace(
        "from lds_toolkit.cli import main", "import torch"), "[]"],
        capture_output=True, text=True, timeout=120)
    assert done.returncode != 0 and "No module named 'torch'" in done.stderr


def test_help_list_report_and_the_numpy_experiments_run_without_torch(tmp_path):
    out = str(tmp_path / "out")
    results, imported = run_without_torch(
        ["--help"], ["list"],
        ["reproduce", "lds-impulse", "--quick", "--out", out, "--no-progress"],
        ["reproduce", "nss-etc", "--quick", "--out", out, "--no-progress"],
        ["report", "--out", out])
    assert imported == []  # neither torch nor lds_toolkit.neural was imported
    helped, listed, impulse, etc, report = results
    assert helped["code"] == 0 and "reproduce" in helped["out"]
    assert listed["code"] == 0
    for name in ("lds-impulse", "nss-etc", "cloze", "assoc-recall"):  # neural ones listed too
        assert any(line.startswith(name) for line in listed["out"].splitlines()), name
    assert "not runnable here: assoc-recall, cloze" in listed["out"]
    assert "lds_toolkit[nn]" in listed["out"]
    for run in (impulse, etc):
        assert run["code"] == 0, run["err"]
    assert "nss-etc: 16 task(s) computed" in etc["out"]  # 16 perturbation draws
    assert (tmp_path / "out" / "nss-etc" / "run.json").is_file()
    assert report["code"] == 0, report["err"]
    assert "paper error confirmed" in report["out"]  # nss-etc's printed example, eq. 8
    assert "not run" in report["out"]  # the neural experiments


def test_a_neural_experiment_ends_with_one_line_naming_the_extra(tmp_path):
    results, imported = run_without_torch(
        ["reproduce", "cloze", "--quick", "--out", str(tmp_path)],
        ["reproduce", "lds-impulse", "cloze", "--quick", "--out", str(tmp_path)])
    assert imported == []
    for res in results:
        assert res["code"] == 1 and res["out"] == ""
        lines = res["err"].strip().splitlines()
        assert len(lines) == 1, res["err"]
        assert "cloze needs torch" in lines[0] and "'nn' extra" in lines[0]
        assert "pip install 'lds_toolkit[nn]'" in lines[0]
    assert not (tmp_path / "lds-impulse").exists()  # nothing ran before the refusal


@pytest.mark.slow
def test_reproduce_all_runs_what_needs_no_torch_and_names_the_extra_last(tmp_path):
    (res,), imported = run_without_torch(
        ["reproduce", "all", "--quick", "--out", str(tmp_path), "--no-progress"])
    assert imported == [] and res["code"] == 1
    last = res["err"].strip().splitlines()[-1]
    assert last.startswith("skipped ") and "lds_toolkit[nn]" in last
    for name in ("assoc-recall", "cloze", "induction-heads", "las-ablation", "lds-streams",
                 "nss-s4"):
        assert name in last
    assert "1/7 lengen-regions" in res["out"] and "7/7 " in res["out"]
