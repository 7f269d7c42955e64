"""Local sweeps reuse joblib's worker pool, and start fresh workers when the tasks need a
package that the pool's earlier tasks did not import (loky measures a worker's memory after
its first task and replaces it, with a "worker stopped" warning, when importing torch later
grows it by 300 MB)."""

from __future__ import annotations

import os
import sys
import time

import pytest

from lds_toolkit.experiments.runner import sweep
from lds_toolkit.experiments.runner.sweep import run_sweep
from lds_toolkit.experiments.store import task_key


def pool_task(config, task, rng):
    """Imports what the config names, then says which process ran it and what it holds."""
    for name in config["imports"]:
        __import__(name)
    time.sleep(0.05)  # both workers take tasks
    return {"pid": os.getpid(), "loaded": [n for n in ("torch",) if n in sys.modules]}


def _sweep(imports: tuple[str, ...]) -> tuple[set[int], set[int]]:
    """Runs four tasks on 2 local workers with ``requires=imports``: (the pids that ran
    them, the pool's worker pids after the sweep)."""
    from joblib.externals.loky import reusable_executor

    config = {"seed": 0, "imports": list(imports)}
    tasks = [{"seed_index": i} for i in range(4)]
    keys = [task_key("pool-toy", config, t) for t in tasks]
    results, _ = run_sweep(pool_task, config, tasks, keys, jobs=2, progress=False,
                           requires=imports)
    if "torch" in imports:
        assert all(r["loaded"] == ["torch"] for r in results)
    pool = set(reusable_executor._executor._processes)
    return {r["pid"] for r in results}, pool


def test_a_sweep_needing_torch_starts_fresh_workers_once():
    pytest.importorskip("torch")
    sweep._kill_local_workers()  # no pool left by another test of this process
    ran, pool = _sweep(())
    assert ran <= pool
    ran_again, pool_again = _sweep(())
    assert pool_again == pool and ran_again <= pool  # numpy after numpy: the same workers

    ran_torch, pool_torch = _sweep(("torch",))
    assert not pool_torch & pool  # workers that ran numpy tasks first were replaced
    assert ran_torch <= pool_torch
    _, pool_torch_again = _sweep(("torch",))
    assert pool_torch_again == pool_torch  # then kept: once per pool, not per sweep
    _, pool_numpy_after = _sweep(())
    assert pool_numpy_after == pool_torch  # a pool with torch loaded serves numpy tasks too
    sweep._kill_local_workers()
