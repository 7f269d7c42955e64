"""``benchmarks/gpu_check.sh --cpu-smoke``: the prepared GPU run, every part at tiny sizes on
the CPU (slow: about a minute), so that the one GPU slot it is meant for does not find a
broken script.

Checked: every part ends within its box, the results directory holds each part's output and
the summary, whose sections carry measured numbers (the layer table's Focus and SDPA rows,
the training table's stacked row with a per-run time, the bf16 comparison's verdict and the
slice's run line).

And its failure paths (fast): every one exits non-zero with one line naming what failed: a
missing Python, one without torch, a bad ``BOX_*`` value, ``--out`` without a value or
empty, an ``--out`` that cannot be created, a ``--bundle`` that cannot be written, a failing
``--fetch-wheels``; and (slow) a run whose every part fails exits 1 naming them."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = ROOT / "benchmarks" / "gpu_check.sh"


@pytest.mark.slow
def test_gpu_check_cpu_smoke(tmp_path):
    out = tmp_path / "check"
    env = dict(os.environ, PYTHON=sys.executable)
    proc = subprocess.run(["bash", str(ROOT / "benchmarks" / "gpu_check.sh"), "--cpu-smoke",
                           "--out", str(out)], capture_output=True, text=True, env=env,
                          timeout=600, check=False)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    parts = [ln.split("\t") for ln in (out / "parts.tsv").read_text().splitlines()[1:]]
    assert [p[0] for p in parts] == ["gpu-tests", "layers", "training", "bf16-loss",
                                     "gpu-scale-slice"]
    assert all(p[1].startswith("ok") for p in parts), parts
    for name in ("environment.json", "log.txt", "layers.json", "training.json", "bf16.json",
                 "summary.md"):
        assert (out / name).is_file(), name
    summary = (out / "summary.md").read_text()
    assert re.search(r"\| Focus \| 128 \| [0-9.]+ \|", summary)
    assert re.search(r"\| SDPA causal attention \(baseline\) \| 128 \| [0-9.]+ \|", summary)
    assert re.search(r"\| Focus \+ recomputation \| 128 \| [0-9.]+ \|", summary)
    stacked = re.search(r"\| focus-1k-x2 \| fp32 \| no \| ([0-9.]+) \| ([0-9.]+) \|", summary)
    assert stacked and float(stacked.group(2)) == pytest.approx(float(stacked.group(1)) / 2,
                                                                rel=0.01)
    assert "within 2 %" in summary
    assert "assoc-recall: 1 task(s) computed" in summary


def _check(tmp_path, *args, env=None, timeout=60):
    full = {**os.environ, "PYTHON": sys.executable, **(env or {})}
    return subprocess.run(["bash", str(SCRIPT), *args], capture_output=True, text=True,
                          env=full, timeout=timeout, check=False, cwd=tmp_path)


@pytest.mark.parametrize("args, env, code, says", [
    (["--cpu-smoke", "--out"], {}, 2, "--out needs a value"),
    (["--cpu-smoke", "--out", ""], {}, 2, "--out needs a non-empty value, got ''"),
    (["--cpu-smoke", "--out", "--bundle", "x.tgz"], {}, 2,
     "--out needs a value, got the option --bundle"),
    (["--cpu-smoke", "--bundle"], {}, 2, "--bundle needs a value"),
    (["--cpu-smoke"], {"BOX_TESTS": "abc"}, 2,
     "BOX_TESTS must be a whole number of seconds > 0, got 'abc'"),
    (["--cpu-smoke"], {"BOX_SLICE": "0"}, 2, "BOX_SLICE must be a whole number"),
    (["--cpu-smoke"], {"BOX_LAYERS": "-5"}, 2, "BOX_LAYERS must be a whole number"),
    (["--cpu-smoke"], {"PYTHON": "/nonexistent/python"}, 1,
     "PYTHON=/nonexistent/python: no such command"),
    (["--cpu-smoke"], {"PYTHON": "false"}, 1, "PYTHON=false does not run as a Python"),
    (["--fetch-wheels"], {"PYTHON": "false"}, 1, "PYTHON=false does not run as a Python"),
    (["--cpu-smoke", "--bundle", "/nonexistent/dir/b.tgz"], {}, 1,
     "--bundle /nonexistent/dir/b.tgz: cannot write in '/nonexistent/dir'"),
    (["--frobnicate"], {}, 2, "unknown argument --frobnicate"),
])
def test_gpu_check_refuses_what_it_cannot_run(tmp_path, args, env, code, says):
    proc = _check(tmp_path, *args, env=env)
    assert proc.returncode == code, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert says in proc.stderr and proc.stderr.startswith("gpu_check.sh: "), proc.stderr
    assert "unbound variable" not in proc.stderr
    assert not list(tmp_path.iterdir())  # nothing written where it was called from


def _fake_python(tmp_path, body: str) -> str:
    """A PYTHON that runs ``python -c`` but does ``body`` for ``python -m ...``."""
    path = tmp_path / "fakepython"
    path.write_text(f'#!/bin/bash\nif [ "$1" = -m ]; then {body}; fi\n'
                    f'exec {sys.executable} "$@"\n')
    path.chmod(0o755)
    return str(path)


def test_gpu_check_names_a_python_without_torch_and_a_failing_pip(tmp_path):
    no_torch = tmp_path / "no-torch"
    no_torch.mkdir()
    (no_torch / "torch.py").write_text("raise ImportError('no torch here')\n")
    proc = _check(tmp_path, "--cpu-smoke", env={"PYTHONPATH": str(no_torch)})
    assert proc.returncode == 1 and "cannot import torch" in proc.stderr, proc.stderr
    fake = _fake_python(tmp_path, 'echo "No module named pip" >&2; exit 3')
    proc = _check(tmp_path, "--fetch-wheels", env={"PYTHON": fake})
    assert proc.returncode == 1, proc.stderr
    assert "--fetch-wheels" in proc.stderr and "pip download' failed (exit 3)" in proc.stderr


def test_gpu_check_refuses_an_out_it_cannot_create(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    proc = _check(tmp_path, "--cpu-smoke", "--out", str(blocker / "sub"))
    assert proc.returncode == 1 and f"--out {blocker / 'sub'}: cannot create" in proc.stderr


@pytest.mark.slow
def test_gpu_check_exits_1_naming_every_part_that_failed(tmp_path):
    """Every part cut by a 1-second box, and a bundle path that is a directory: the run still
    writes its summary, and exits 1 with one line naming the five parts and the bundle."""
    boxes = {f"BOX_{p}": "1" for p in ("TESTS", "LAYERS", "TRAINING", "BF16", "SLICE")}
    bundle = tmp_path / "bundle-is-a-directory"
    bundle.mkdir()
    proc = _check(tmp_path, "--cpu-smoke", "--out", str(tmp_path / "out"), "--bundle",
                  str(bundle), env=boxes, timeout=300)
    assert proc.returncode == 1, proc.stdout[-3000:]
    last = [ln for ln in proc.stdout.splitlines() if ln.startswith("gpu_check.sh: ")][-1]
    for part in ("gpu-tests", "layers", "training", "bf16-loss", "gpu-scale-slice", "bundle"):
        assert part in last, last
    assert "6 failed" in last and (tmp_path / "out" / "summary.md").is_file()
