"""Benchmark numbers typed into the layers page are those of the committed benchmark runs.

``docs/layers/README.md``'s LaS and SDPA rows (marked †) and the paragraph under them quote
``docs/results/cpu-evidence/neural_layers_las.json`` (``benchmarks/neural_layers.py --json``);
a rerun that changes them fails here until the page follows.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EVIDENCE = ROOT / "docs" / "results" / "cpu-evidence"
PAGE = ROOT / "docs" / "layers" / "README.md"
ROWS = {"las": "LaS attention (full)†", "las-chunk": "LaS-chunk (chunk 128)†",
        "sdpa-h8": "SDPA causal attention, 8 heads†",
        "sdpa": "SDPA causal attention (baseline)†"}


def _seconds(cell: str) -> float:
    value, unit = cell.split()
    return float(value) * (1e-3 if unit == "ms" else 1.0)


def test_the_dagger_rows_are_the_committed_run():
    results = json.loads((EVIDENCE / "neural_layers_las.json").read_text())["results"]
    text = PAGE.read_text()
    sdpa_16k = results["sdpa"]["16384"]["time_s"]
    for name, label in ROWS.items():
        row = next(line for line in text.splitlines() if line.startswith(f"| {label} |"))
        cells = [c.strip() for c in row.strip("|").split("|")]
        run = results[name]
        for cell, length in zip(cells[1:4], ("1024", "4096", "16384")):
            assert abs(_seconds(cell) / run[length]["time_s"] - 1) < 0.01, (label, length)
        assert abs(float(cells[4]) / (run["16384"]["time_s"] / sdpa_16k) - 1) < 0.02, label
        assert cells[5] == f"{round(run['16384']['peak_mb'])} MB", label
        growth = re.fullmatch(r"x([\d.]+), x([\d.]+)", cells[6])
        assert growth, (label, cells[6])
        assert float(growth[1]) == round(run["16384"]["time_s"] / run["4096"]["time_s"], 1)
        assert float(growth[2]) == round(run["16384"]["peak_mb"] / run["4096"]["peak_mb"], 1)


def test_the_dagger_paragraph_is_the_committed_run():
    """The ratios the paragraph under the table quotes are those of the committed run."""
    info = json.loads((EVIDENCE / "neural_layers_las.json").read_text())
    r = info["results"]
    text = " ".join(PAGE.read_text().split())

    def t(name, length):
        return r[name][str(length)]["time_s"]

    expected = [
        f"--layers {' '.join(info['args']['layers'])}",
        f"load average {info['load_start'].split(',')[0]} at the start and "
        f"{info['load_end'].split(',')[0]} at the end, {info['date']}",
        f"({t('sdpa-h8', 16384) / t('sdpa', 16384):.2f}x at 16384)",
        f"({round(r['las']['1024']['peak_mb'])} MB at 1024, "
        f"{t('las', 1024) / t('sdpa', 1024):.1f}x the baseline in time)",
        f"full LaS takes {t('las', 16384) / t('sdpa-h8', 16384):.2f}x the time of SDPA with its "
        f"own head layout at 16384 ({t('las', 4096) / t('sdpa-h8', 4096):.2f}x at 4096) and "
        f"{r['las']['16384']['peak_mb'] / r['sdpa']['16384']['peak_mb']:.2f}x the baseline's "
        "memory",
        f"({t('las-chunk', 16384) / t('sdpa', 16384):.2f}x at 16384)",
    ]
    old = json.loads((EVIDENCE / "neural_layers_las_explicit_scores.json").read_text())
    las = old["results"]["las"]["16384"]
    expected.append(f"The explicit scores took {las['time_s']:.0f} s and "
                    f"{round(las['peak_mb'])} MB at 16384")
    for phrase in expected:
        assert phrase in text, phrase


def test_the_cuda_section_shows_the_committed_rehearsal_log():
    """docs/benchmarks.md's rehearsal on the GPU machine's stack is the committed log
    (``benchmarks/device_stack_rehearsal.sh``): its stack line, each step's exit status and
    the pytest summaries, re-rendered when the log changes."""
    log = (EVIDENCE / "device-stack-rehearsal.txt").read_text().splitlines()
    page = (ROOT / "docs" / "benchmarks.md").read_text()
    stack = next(line[len("== stack: "):] for line in log if line.startswith("== stack: "))
    assert f"`docs/results/cpu-evidence/device-stack-rehearsal.txt`): {stack}." in page
    steps = [m.groups() for line in log
             if (m := re.match(r"== ([a-z-]+): exit (\d+) after (\d+) s$", line))]
    assert [s[0] for s in steps] == ["smoke", "neural-tests", "gpu-collection"]
    for name, rc, sec in steps:
        assert f"| {name} | {rc} | {sec} |" in page
    passed = next(line.strip("= ") for line in log if re.search(r"\d+ passed", line))
    assert f"`{passed}`" in page
