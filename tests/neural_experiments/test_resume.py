"""A neural experiment survives its process being killed and its time budget running out.

An uninterrupted run of a small las-ablation configuration is the reference. A run whose
process is killed with SIGKILL mid-training (a checkpoint at every step), then run again in
a new process, and a run stopped by ``--time-budget`` and given the same command again,
must end with the reference's summary and arrays, bit for bit (CPU, one thread per task),
and ``run.json`` must say which task resumed.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import lds_toolkit._budget as budget
from lds_toolkit.cli import EXIT_TIME_BUDGET
from lds_toolkit.cli import main as cli_main
from lds_toolkit.experiments import TaskStore, reproduce

NAME = "las-ablation"
TINY = {"models": ["l-only", "las"], "n_train": 48, "n_valid": 16, "n_test": 32,
        "min_length": 8, "max_length": 24, "d_model": 16, "n_layers": 1, "max_steps": 60,
        "batch_size": 8, "eval_every": 20, "warmup": 5}
KILL_AT = 30

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


def _without_timings(tree):
    """The summary less its wall times (they differ between any two runs)."""
    if isinstance(tree, dict):
        return {k: _without_timings(v) for k, v in tree.items() if "seconds" not in k}
    if isinstance(tree, list):
        return [_without_timings(v) for v in tree]
    return tree


def _assert_same_run(out: Path, reference):
    summary = json.loads((out / NAME / "summary.json").read_text())
    assert _without_timings(summary) == _without_timings(
        json.loads((reference.outdir / "summary.json").read_text()))
    with np.load(out / NAME / "arrays.npz") as a, \
            np.load(reference.outdir / "arrays.npz") as b:
        assert sorted(a.files) == sorted(b.files)
        for key in a.files:
            np.testing.assert_array_equal(a[key], b[key], err_msg=key)


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    return reproduce(NAME, scale="quick", overrides=TINY, out=tmp_path_factory.mktemp("ref"),
                     progress=False)


CHILD = """
import json, os, signal, sys
from lds_toolkit.experiments import reproduce
from lds_toolkit.experiments.runner import task_runtime
from lds_toolkit.experiments.catalog import _neural_common

task_runtime.CHECKPOINT_SECONDS = 0.0  # a checkpoint at every step
progress = _neural_common.StepProgress.__call__

def killed_at(self, step, record):
    if step == {kill_at}:
        os.kill(os.getpid(), signal.SIGKILL)  # no clean-up of any kind
    return progress(self, step, record)

_neural_common.StepProgress.__call__ = killed_at
reproduce("{name}", scale="quick", overrides=json.loads(sys.argv[2]), out=sys.argv[1],
          progress=False)
"""


def test_a_task_killed_mid_training_resumes_in_a_new_process_to_the_same_result(
        tmp_path, reference):
    child = subprocess.run(
        [sys.executable, "-c", CHILD.format(kill_at=KILL_AT, name=NAME), str(tmp_path),
         json.dumps(TINY)], capture_output=True, text=True, timeout=300,
        env={**os.environ, "OMP_NUM_THREADS": "1"})
    assert child.returncode == -9, child.stderr[-2000:]
    store = TaskStore(tmp_path / NAME / ".tasks")
    assert not store.keys() and len(store.partial_keys()) == 1  # killed in its first task
    assert not (tmp_path / NAME / "summary.json").exists()

    res = reproduce(NAME, scale="quick", overrides=TINY, out=tmp_path, progress=False)
    _assert_same_run(tmp_path, reference)
    assert res.stats.n_computed == 2 and not store.partial_keys()  # checkpoints removed
    run = json.loads((tmp_path / NAME / "run.json").read_text())
    (digest, runs), = run["tasks_resumed"].items()
    assert digest in store.keys()
    assert runs == {"train": KILL_AT + 1}  # saved after step 30's update, before its callback


class _Clock:
    """time.time() advancing by one second at each reading, from the real time."""

    def __init__(self, start):
        self.now = start

    def time(self):
        self.now += 1.0
        return self.now


def test_time_budget_stops_cleanly_and_the_same_command_resumes(tmp_path, reference,
                                                                monkeypatch, capsys):
    """A budget of 12 clock readings (one per training step, a fake clock) ends inside the
    first task: exit status 75, one line naming the command that resumes, no summary; the
    first task's checkpoint and nothing of the second. The same command then finishes with
    the uninterrupted run's numbers."""
    import time

    argv = ["reproduce", NAME, "--quick", "--out", str(tmp_path), "--no-progress",
            "--time-budget", "12"] + [a for k, v in TINY.items()
                                      for a in ("--set", f"{k}={json.dumps(v)}")]
    monkeypatch.setattr(budget, "time", _Clock(time.time()))
    assert cli_main(argv) == EXIT_TIME_BUDGET
    monkeypatch.undo()
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert err[0].startswith(f"stopped after the time budget of 12 s: {NAME}: the time "
                             "budget ran out with 0 of 2 tasks finished (1 more saved "
                             "mid-training); no summary was written")
    assert err[0].endswith(". Run it again with the same arguments to resume: "
                           + shlex.join(["lds-toolkit", *argv]))
    assert not (tmp_path / NAME / "summary.json").exists()
    assert not (tmp_path / NAME / "run.json").exists()
    assert len(TaskStore(tmp_path / NAME / ".tasks").partial_keys()) == 1

    assert cli_main(argv) == 0  # the same command, with time to spare
    _assert_same_run(tmp_path, reference)
    run = json.loads((tmp_path / NAME / "run.json").read_text())
    assert len(run["tasks_resumed"]) == 1
