"""The experiment runner: outputs, determinism across workers/backends, resume."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from lds_toolkit.cli import main as cli_main
from lds_toolkit.experiments import (
    TaskStore,
    get_experiment,
    list_experiments,
    reproduce,
    task_rng,
)

from ._slow_experiment import SlowSquares, ran_tasks

HERE = Path(__file__).resolve().parent


def _summary(out, name="lds-impulse"):
    return json.loads((Path(out) / name / "summary.json").read_text())


def test_registry_lists_the_impulse_experiment():
    assert "lds-impulse" in list_experiments()
    with pytest.raises(ValueError, match="unknown experiment 'nope'"):
        get_experiment("nope")


def test_cli_reproduce_writes_summary_arrays_and_figures(tmp_path, capsys):
    assert cli_main(["reproduce", "lds-impulse", "--quick", "--out", str(tmp_path),
                     "--no-progress"]) == 0
    d = tmp_path / "lds-impulse"
    summary = _summary(tmp_path)
    for key in ("tail_fraction", "energy_time_99", "regions", "config"):
        assert key in summary
    arrays = np.load(d / "arrays.npz")
    T = summary["config"]["T"]
    assert arrays["impulse_response"].shape == (3, summary["config"]["seeds"], T)
    assert (d / "impulse_regions.png").stat().st_size > 10_000
    assert (d / "impulse_regions.pdf").read_bytes()[:4] == b"%PDF"
    run = json.loads((d / "run.json").read_text())
    assert run["tasks_computed"] == run["tasks"] == 3 * summary["config"]["seeds"]
    # the numbers behave as the theory says: Region A-left forgets within T^{7/8},
    # Region B does not
    tail = summary["tail_fraction"]
    assert tail["A-left"]["0.875"] < 0.05 < tail["B"]["0.875"]
    assert capsys.readouterr().out.startswith("lds-impulse: 9 task(s) computed")


def test_cli_list_and_unknown_name(capsys):
    assert cli_main(["list"]) == 0
    assert "lds-impulse" in capsys.readouterr().out
    assert cli_main(["reproduce", "no-such-experiment", "--quick"]) == 2
    assert "unknown experiment" in capsys.readouterr().err


def test_jobs_1_and_2_give_bit_identical_summaries(tmp_path):
    a = reproduce("lds-impulse", quick=True, out=tmp_path / "j1", jobs=1, progress=False)
    b = reproduce("lds-impulse", quick=True, out=tmp_path / "j2", jobs=2, progress=False)
    assert b.stats.n_computed == a.stats.n_computed > 0
    assert (tmp_path / "j1/lds-impulse/summary.json").read_bytes() == \
        (tmp_path / "j2/lds-impulse/summary.json").read_bytes()
    np.testing.assert_array_equal(a.arrays["impulse_response"], b.arrays["impulse_response"])


def test_in_process_dask_client_gives_the_same_numbers(tmp_path):
    distributed = pytest.importorskip("dask.distributed")
    local = reproduce("lds-impulse", quick=True, out=tmp_path / "local", progress=False)
    with distributed.Client(processes=False, n_workers=1, threads_per_worker=2,
                            dashboard_address=None) as client:
        remote = reproduce("lds-impulse", quick=True, out=tmp_path / "dask", client=client,
                           progress=False)
    assert remote.stats.n_computed == local.stats.n_computed
    assert (tmp_path / "local/lds-impulse/summary.json").read_bytes() == \
        (tmp_path / "dask/lds-impulse/summary.json").read_bytes()
    np.testing.assert_array_equal(local.arrays["impulse_response"],
                                  remote.arrays["impulse_response"])


def test_seed_changes_numbers_and_task_streams_follow_seedsequence_spawn(tmp_path):
    a = reproduce("lds-impulse", quick=True, seeds=1, seed=0, out=tmp_path / "a",
                  progress=False)
    b = reproduce("lds-impulse", quick=True, seeds=1, seed=1, out=tmp_path / "b",
                  progress=False)
    assert not np.array_equal(a.arrays["impulse_response"], b.arrays["impulse_response"])
    text = repr(a)  # a short summary: the summary dict and arrays are not printed
    assert text.startswith("lds-impulse at quick scale: 3 tasks (3 computed, 0 loaded)"), text
    assert "impulse_response" not in text and len(text.splitlines()) <= 4, text
    children = np.random.SeedSequence(7).spawn(3)
    for i, child in enumerate(children):
        assert task_rng(7, i).integers(2**62) == np.random.default_rng(child).integers(2**62)


def test_interrupted_sweep_resumes_computing_only_missing_tasks(tmp_path):
    log = tmp_path / "log"
    log.mkdir()
    with pytest.raises(KeyboardInterrupt):
        reproduce(SlowSquares(log, fail_on=5), out=tmp_path, progress=False)
    assert ran_tasks(log) == [0, 1, 2, 3, 4]
    assert len(TaskStore(tmp_path / "slow-squares" / ".tasks").keys()) == 5
    resumed = reproduce(SlowSquares(log), out=tmp_path, progress=False)
    assert (resumed.stats.n_cached, resumed.stats.n_computed) == (5, 7)
    assert ran_tasks(log) == list(range(12))  # each task ran exactly once overall
    fresh = reproduce(SlowSquares(tmp_path), out=tmp_path / "fresh", progress=False)
    assert resumed.summary["values"] == fresh.summary["values"]
    # changing a parameter invalidates the stored results
    again = reproduce(SlowSquares(log), seeds=6, seed=3, out=tmp_path, progress=False)
    assert again.stats.n_cached == 0


def test_killed_sweep_process_resumes_computing_only_missing_tasks(tmp_path):
    log = tmp_path / "log"
    log.mkdir()
    script = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(HERE)!r})
        from _slow_experiment import SlowSquares
        from lds_toolkit.experiments import reproduce
        reproduce(SlowSquares({str(log)!r}, delay=0.3), out={str(tmp_path)!r},
                  progress=False)
    """)
    proc = subprocess.Popen([sys.executable, "-c", script])
    store = TaskStore(tmp_path / "slow-squares" / ".tasks")
    deadline = time.monotonic() + 60
    while len(store.keys()) < 3 and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    done_before = len(store.keys())
    assert 3 <= done_before < 12, "the sweep should have been killed midway"
    resumed = reproduce(SlowSquares(log), out=tmp_path, progress=False)
    assert resumed.stats.n_cached == done_before
    assert resumed.stats.n_computed == 12 - done_before
    assert not list(store.root.glob(".*.tmp")), "no partial files left behind"


def test_bad_runner_arguments(tmp_path):
    with pytest.raises(ValueError, match="seeds must be an integer >= 1, got 0"):
        reproduce("lds-impulse", quick=True, seeds=0, out=tmp_path)
    with pytest.raises(ValueError, match="jobs must be a positive integer or -1"):
        reproduce("lds-impulse", quick=True, jobs=0, out=tmp_path, progress=False)
    with pytest.raises(ValueError, match="seed must be an integer >= 0, got -1"):
        reproduce("lds-impulse", quick=True, seed=-1, out=tmp_path)


@pytest.mark.slow
def test_a_real_dask_cluster_through_its_address_gives_the_same_bytes(tmp_path):
    """The --scheduler path (Client(address, timeout)) with worker processes (45 s: each
    worker process imports and compiles the toolkit)."""
    distributed = pytest.importorskip("dask.distributed")
    local = reproduce("lds-impulse", quick=True, seeds=2, out=tmp_path / "local",
                      progress=False)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None, host="127.0.0.1") as cluster:
        remote = reproduce("lds-impulse", quick=True, seeds=2, out=tmp_path / "dask",
                           scheduler=cluster.scheduler_address, progress=False)
    assert remote.stats.n_computed == local.stats.n_computed == 6
    assert (tmp_path / "local/lds-impulse/summary.json").read_bytes() == \
        (tmp_path / "dask/lds-impulse/summary.json").read_bytes()
    run = json.loads((tmp_path / "dask/lds-impulse/run.json").read_text())
    assert run["backend"] == "dask"
