"""run.json says what shaped the numbers (environment, what the code version covers, wall
times); summary.json holds results only, byte-identical across runs of the same seed."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from lds_toolkit.experiments import get_experiment, reproduce
from lds_toolkit.experiments.runner.environment import cpu_info, environment
from lds_toolkit.experiments.store.version import code_version, code_version_covers

from ._slow_experiment import TinyPlot

ROOT = Path(__file__).resolve().parents[2]


class TimedTiny(TinyPlot):
    """TinyPlot whose tasks measure their own wall time, as a training loop does."""

    name = "timed-tiny"

    def run_task(self, config, task, rng):
        t0 = time.perf_counter()
        out = super().run_task(config, task, rng)
        return {**out, "seconds": time.perf_counter() - t0}

    def timings(self, config, tasks, results):
        return {"task_seconds": [r["seconds"] for r in results]}


def test_environment_names_what_can_change_numbers_and_no_path():
    env = environment()
    assert env["libraries"]["numpy"] == np.__version__
    assert env["python"]["version"] == ".".join(map(str, sys.version_info[:3]))
    assert env["cpu"]["cores"] >= 1
    if Path("/proc/cpuinfo").is_file():
        assert env["cpu"]["model"] and env["cpu"]["flags"] == sorted(set(env["cpu"]["flags"]))
        assert cpu_info()["flags"] == env["cpu"]["flags"]
    pools = env["thread_pools"]
    assert any(p["user_api"] == "blas" for p in pools)  # numpy's BLAS is loaded
    assert all("filepath" not in p for p in pools)
    text = json.dumps(env)  # JSON-ready, and nothing of this machine's file system
    for path in {sys.prefix, str(Path.home()), str(ROOT)}:
        assert path not in text


def test_environment_imports_torch_only_when_asked(monkeypatch):
    """With torch blocked (``sys.modules["torch"] = None``: importing it raises), the
    environment of a process that has not imported it is recorded without trying."""
    monkeypatch.setitem(sys.modules, "torch", None)
    assert environment()["torch"] is None
    with pytest.raises(ImportError):
        environment(torch=True)  # asked for: it does import torch


def test_torch_settings_are_recorded_and_not_changed():
    torch = pytest.importorskip("torch")
    before = (torch.get_num_threads(), torch.are_deterministic_algorithms_enabled())
    settings = environment(torch=True)["torch"]
    assert settings["threads"] == before[0]
    assert settings["deterministic_algorithms"] == before[1]
    assert settings["version"] == torch.__version__ and settings["cpu_capability"]
    assert (torch.get_num_threads(), torch.are_deterministic_algorithms_enabled()) == before


def test_code_version_covers_lists_what_the_hash_covers():
    exp = get_experiment("lengen-region-a")
    covers = code_version_covers(exp)
    assert type(exp).__module__ in covers["modules"]
    assert "lds_toolkit.experiments.runner.sweep" in covers["modules"]
    assert "lds_toolkit.learning.learners" in covers["modules"]
    assert covers["libraries"]["numpy"] == np.__version__
    assert all(len(d) == 16 for d in covers["modules"].values())
    assert code_version(exp) == code_version(exp)  # the hash itself is unchanged by it


def test_run_json_records_environment_covers_and_timings_summary_results_only(tmp_path):
    a = reproduce(TimedTiny(), out=tmp_path / "a", progress=False)
    reproduce(TimedTiny(), out=tmp_path / "b", progress=False)
    sa = (tmp_path / "a/timed-tiny/summary.json").read_bytes()
    assert sa == (tmp_path / "b/timed-tiny/summary.json").read_bytes()
    assert b"seconds" not in sa
    run = json.loads((tmp_path / "a/timed-tiny/run.json").read_text())
    assert len(run["timings"]["task_seconds"]) == a.summary["config"]["seeds"]
    assert run["environment"]["libraries"]["numpy"] == np.__version__
    assert run["environment"]["torch"] is None or "torch" in sys.modules
    assert run["code_version_covers"] == code_version_covers(TimedTiny())


def test_neural_timings_go_to_run_json():
    """The torch experiments' training seconds (each task records them) are timings, not
    results: NeuralExperiment.timings collects them for run.json (no training needed)."""
    exp = get_experiment("las-ablation")
    tasks = [{"seed_index": 0, "model": "las"}, {"seed_index": 0, "model": "l-only"}]
    results = [{"train_seconds": 1.5}, {"train_seconds": 2.5}]
    assert exp.timings({}, tasks, results) == {"train_seconds": [
        {"seed_index": 0, "model": "las", "seconds": 1.5},
        {"seed_index": 0, "model": "l-only", "seconds": 2.5}]}
