"""``benchmarks/gpu_check.sh --cpu-smoke``: the prepared GPU run, every part at tiny sizes on
the CPU (slow: about a minute), so that the one GPU slot it is meant for does not find a
broken script.

Checked: every part ends within its box, the results directory holds each part's output and
the summary, whose sections carry measured numbers (the layer table's Focus and SDPA rows,
the training table's stacked row with a per-run time, the bf16 comparison's verdict and the
slice's run line)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.slow


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
