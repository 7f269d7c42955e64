"""Run a list of tasks locally (joblib) or on a Dask cluster, storing each result as it lands.

Determinism: task ``i`` draws from ``SeedSequence(seed).spawn(n)[task["seed_index"]]``, and
results are returned in task order, so the numbers do not depend on the number of workers,
the backend or the completion order. With ``single_threaded`` each task runs with BLAS and
OpenMP pools limited to one thread, so that BLAS reductions happen in the same order
whichever process runs them.

Resume: a finished task is written to the :class:`~lds_toolkit.experiments.store.TaskStore`
as soon as it completes; a rerun loads stored tasks and computes only the missing ones. A
stored result that fails the store's checks (corrupted, altered, another task's, older code)
is reported once, in one :class:`StoreWarning` listing every rejected file, and recomputed.

Checkpoints and time budget: each task runs with a
:class:`~lds_toolkit.experiments.runner.task_runtime.TaskRuntime` naming where its training
checkpoints go (beside its record in the store) and the ``deadline``; a task that resumed
from a checkpoint is listed in :attr:`SweepStats.resumed`. With a ``deadline``, a task not
started by then is not started, and a training task that reaches it saves its checkpoint
and stops (:class:`~lds_toolkit._budget.TimeBudgetReached`, caught in the worker): both are
listed in :attr:`SweepStats.stopped` and their results are None. Running the sweep again
resumes them.

Worker pool: local runs reuse joblib's worker processes from one sweep to the next (the
thirteen quick experiments start 2 workers once, not 13 times). A loky worker measures its
memory after its first task and is replaced, with a "worker stopped" warning, when it later
grows by 300 MB: what importing torch does in a worker that first ran numpy tasks. So a sweep
whose ``requires`` names a package the pool's earlier tasks did not import starts fresh
workers (once: the pool then keeps them).

Interruption: on any exception in the driver (KeyboardInterrupt, the CLI's SIGTERM handler)
the local worker pool is shut down with its workers killed before the exception propagates;
each local worker also watches its parent and exits within :data:`WATCHDOG_PERIOD` seconds
when the driver dies without cleaning up (SIGKILL). A Dask scheduler that cannot be reached
fails after :data:`SCHEDULER_TIMEOUT` seconds with its address in the message.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from threadpoolctl import threadpool_limits

from ..._budget import TimeBudgetReached, passed
from ..._safe_files import UnsafeFileError
from ..._tqdm import tqdm
from ..._validation import check_bool, check_int
from ..store.tasks import StoredTaskRejected, TaskKey, TaskStore
from . import task_runtime
from .progress import ProgressBoard, file_reporter, reporting_to
from .task_runtime import TaskRuntime, running
from .workers import check_jobs, check_workers, local_workers

#: Seconds to wait for a Dask scheduler before giving up.
SCHEDULER_TIMEOUT = 5.0
#: Seconds between a local worker's checks that the driver process is still alive.
WATCHDOG_PERIOD = 0.5

#: Packages that the tasks of the local worker pool (joblib's reusable loky executor) have
#: imported so far: its workers' memory baselines include them (module docstring).
_POOL_IMPORTS: set[str] = set()


class StoreWarning(UserWarning):
    """Stored task results were rejected by the store's checks and recomputed, or a result
    could not be stored (an odd entry in the way)."""


@dataclass
class SweepStats:
    """What a sweep did: tasks in total, loaded from the store, computed now; wall time;
    tasks resumed from a checkpoint (digest -> ``{training run: step}``) and tasks stopped by
    the deadline (digests; those of them with checkpoints in ``partial``)."""

    n_tasks: int
    n_cached: int
    n_computed: int
    seconds: float
    computed_keys: list[str] = field(default_factory=list, repr=False)
    rejected: list[str] = field(default_factory=list, repr=False)
    resumed: dict[str, dict[str, int]] = field(default_factory=dict, repr=False)
    stopped: list[str] = field(default_factory=list, repr=False)
    partial: list[str] = field(default_factory=list, repr=False)

    @property
    def n_rejected(self) -> int:
        """Stored results that failed the store's checks (and were recomputed)."""
        return len(self.rejected)


@dataclass
class _Outcome:
    """What a worker sends back for one task: its result, or that the deadline stopped it,
    and the task's notes (:attr:`TaskRuntime.notes`)."""

    value: Any = None
    stopped: bool = False
    notes: dict = field(default_factory=dict)


def task_rng(seed: int, seed_index: int) -> np.random.Generator:
    """The random stream of a task: child ``seed_index`` of ``SeedSequence(seed)``.

    Identical to ``SeedSequence(seed).spawn(seed_index + 1)[seed_index]``.
    """
    seed = check_int("seed", seed, 0)
    seed_index = check_int("seed_index", seed_index, 0)
    return np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(seed_index,)))


def _execute(fn: Callable, config: dict, task: dict, single_threaded: bool,
             reporter: Callable[[int, int], None] | None = None,
             runtime: TaskRuntime | None = None) -> _Outcome:
    """``fn(config, task, rng)`` with the task's stream, its progress reports (see
    :mod:`~lds_toolkit.experiments.runner.progress`) going to ``reporter`` and ``runtime`` as the
    current :class:`TaskRuntime`; not started once the runtime's deadline has passed."""
    runtime = runtime if runtime is not None else TaskRuntime()
    if passed(runtime.deadline):
        return _Outcome(stopped=True)
    rng = task_rng(config["seed"], task["seed_index"])
    try:
        with reporting_to(reporter), running(runtime):
            if single_threaded:
                with threadpool_limits(limits=1):
                    return _Outcome(fn(config, task, rng), notes=runtime.notes)
            return _Outcome(fn(config, task, rng), notes=runtime.notes)
    except TimeBudgetReached:
        return _Outcome(stopped=True, notes=runtime.notes)


def run_sweep(fn: Callable[[dict, dict, np.random.Generator], Any], config: dict,
              tasks: Sequence[dict], keys: Sequence[TaskKey], *,
              store: TaskStore | None = None,
              jobs: int = 1, scheduler: str | None = None, client=None,
              single_threaded: bool = True, progress: bool = True,
              desc: str = "tasks",
              deadline: float | None = None,
              requires: Sequence[str] = ()) -> tuple[list[Any], SweepStats]:
    """Run ``fn(config, task, rng)`` for every task, reusing stored results.

    Parameters
    ----------
    fn : callable
        Picklable function (e.g. a bound method of a module-level object).
    config : dict
        Must hold ``"seed"`` (base seed of the sweep).
    tasks : sequence of dict
        Each holds ``"seed_index"``.
    keys : sequence of TaskKey
        Store key of each task (:func:`~lds_toolkit.experiments.store.task_key`).
    store : TaskStore, optional
        Where finished results are kept; ``None`` keeps nothing.
    jobs : int
        Local worker processes (joblib/loky); ``1`` runs in this process, ``-1`` uses all cores.
    scheduler : str, optional
        Address of a Dask distributed scheduler (``"tcp://host:8786"``); tasks then run on
        that cluster through ``dask.distributed.Client(scheduler)``. ``ConnectionError``
        naming the address when it does not answer within :data:`SCHEDULER_TIMEOUT` s.
    client : dask.distributed.Client, optional
        An existing Dask client (e.g. in-process ``Client(processes=False)``); wins over
        ``scheduler``.
    single_threaded, progress, desc
        See the module docstring; ``progress`` shows a tqdm bar on stderr, with the
        training steps of the running tasks after it (local runs; see
        :mod:`~lds_toolkit.experiments.runner.progress`).
    deadline : float, optional
        ``time.time()`` at which the sweep stops (see the module docstring): the tasks it
        stops are listed in ``stats.stopped`` and their results are None.
    requires : sequence of str
        Packages the tasks import (an experiment's ``requires``, e.g. ``("torch",)``): local
        workers that have not imported them are replaced first (module docstring).

    Returns
    -------
    results : list
        One result per task, in task order.
    stats : SweepStats
    """
    if not callable(fn):
        raise TypeError(f"fn must be a function fn(config, task, rng), got {type(fn).__name__} "
                        f"{fn!r:.60}")
    if not isinstance(config, dict) or "seed" not in config:
        raise ValueError("config must be a dict containing the base 'seed' of the sweep")
    for i, task in enumerate(tasks):
        if not isinstance(task, dict) or "seed_index" not in task:
            raise ValueError(f"tasks[{i}] must be a dict holding its 'seed_index' (which random "
                             f"stream it draws), got {task!r:.80}")
    if client is not None and not callable(getattr(client, "submit", None)):
        raise TypeError(f"client must be a dask.distributed.Client or None, got "
                        f"{type(client).__name__} {client!r:.60}; give a scheduler's address "
                        f"as scheduler=")
    if scheduler is not None and not isinstance(scheduler, str):
        raise TypeError(f"scheduler must be an address such as 'tcp://host:8786', got "
                        f"{type(scheduler).__name__} {scheduler!r:.60}")
    single_threaded = check_bool("single_threaded", single_threaded)
    progress = check_bool("progress", progress)
    if len(keys) != len(tasks):
        raise ValueError(f"keys must have one entry per task ({len(tasks)}), got {len(keys)}")
    check_jobs(jobs)
    if store is not None and not all(isinstance(k, TaskKey) for k in keys):
        raise TypeError("keys must be TaskKey objects (see task_key) when a store is given")
    start = time.perf_counter()
    results: list[Any] = [None] * len(tasks)
    todo = []
    rejected: list[str] = []
    resumed: dict[str, dict[str, int]] = {}
    for i, key in enumerate(keys):
        if store is None:
            todo.append(i)
            continue
        try:
            results[i], notes = store.load(key, with_notes=True)
            if notes.get("resumed_from"):  # resumed when a former run computed it
                resumed[str(key)] = dict(notes["resumed_from"])
        except FileNotFoundError:
            todo.append(i)
        except StoredTaskRejected as exc:
            rejected.append(str(exc))
            todo.append(i)
    if rejected:
        warnings.warn(StoreWarning(
            f"{len(rejected)} stored task result(s) in "
            f"{store.root if store is not None else '?'} failed their checks and "
            "are recomputed: " + "; ".join(rejected)), stacklevel=2)
    n_cached = len(tasks) - len(todo)
    computed: list[str] = []
    if todo and client is None and scheduler is None:
        jobs = check_workers(jobs, len(todo))  # never more workers than tasks left
    stopped: list[str] = []
    runtimes = {i: TaskRuntime(
        checkpoint_prefix=None if store is None else str(store.checkpoint_prefix(keys[i])),
        tag=None if store is None else f"{keys[i].digest}@{store.code_version}",
        deadline=deadline, checkpoint_seconds=task_runtime.CHECKPOINT_SECONDS) for i in todo}

    bar = tqdm(total=len(tasks), initial=n_cached, desc=desc, disable=not progress,
               leave=False, dynamic_ncols=True)
    board = ProgressBoard(bar) if progress and todo else None

    unstored: list[str] = []

    def finish(i, outcome: _Outcome):
        if outcome.notes.get("resumed_from"):
            resumed[str(keys[i])] = dict(outcome.notes["resumed_from"])
        if outcome.stopped:
            stopped.append(str(keys[i]))
            if board is not None:
                board.done(i)
            return
        value = results[i] = outcome.value
        if store is not None:
            try:
                store.save(keys[i], value, notes=outcome.notes or None)
            except UnsafeFileError as exc:  # e.g. a directory planted where the record goes
                unstored.append(str(exc))
        computed.append(keys[i])
        if board is not None:
            board.done(i)
        bar.update(1)

    try:
        with board if board is not None else contextlib.nullcontext():
            if not todo:
                pass
            elif client is not None or scheduler is not None:
                _run_dask(fn, config, tasks, todo, single_threaded, finish, client, scheduler,
                          runtimes)
            elif jobs == 1 or len(todo) == 1:
                for i in todo:
                    local = board.local(i) if board is not None else None
                    finish(i, _execute(fn, config, tasks[i], single_threaded, local,
                                       runtimes[i]))
            else:
                _run_joblib(fn, config, tasks, todo, single_threaded, finish, jobs,
                            board.directory if board is not None else None, runtimes,
                            requires)
    finally:
        bar.close()
        if unstored:
            warnings.warn(StoreWarning(
                f"{len(unstored)} task result(s) could not be stored (they were used, and will "
                "be recomputed by the next run): " + "; ".join(unstored)), stacklevel=2)
    partial = [d for d in stopped if store is not None and store.checkpoints(d)]
    stats = SweepStats(len(tasks), n_cached, len(computed), time.perf_counter() - start,
                       [str(k) for k in computed], rejected, resumed, stopped, partial)
    return results, stats


def _run_joblib(fn, config, tasks, todo, single_threaded, finish, jobs, progress_dir=None,
                runtimes=None, requires=()):
    from joblib import Parallel, delayed

    if not set(requires) <= _POOL_IMPORTS:
        _kill_local_workers()  # the next workers set their memory baseline with these loaded
    driver = os.getpid()
    runtimes = runtimes or {}

    def indexed(i):
        watch_parent(driver)
        reporter = None if progress_dir is None else file_reporter(progress_dir, str(i))
        return i, _execute(fn, config, tasks[i], single_threaded, reporter, runtimes.get(i))

    outputs = Parallel(n_jobs=local_workers(jobs, len(todo)), return_as="generator_unordered")(
        delayed(indexed)(i) for i in todo)
    try:
        for i, value in outputs:
            finish(i, value)
    except BaseException:
        outputs.close()  # joblib aborts the batch ...
        _kill_local_workers()  # ... and this also ends the idle pool it keeps for reuse
        raise
    _POOL_IMPORTS.update(requires)


def _kill_local_workers() -> None:
    """Shut down joblib's reusable loky executor, killing its worker processes."""
    from joblib.externals.loky import reusable_executor

    executor = getattr(reusable_executor, "_executor", None)
    if executor is not None:
        executor.shutdown(wait=False, kill_workers=True)
    _POOL_IMPORTS.clear()


_WATCHED: set[int] = set()


def watch_parent(driver: int) -> None:
    """In a local worker process: start (once) a daemon thread that ends the process within
    :data:`WATCHDOG_PERIOD` s once ``driver`` (the process that ran the sweep) is gone.

    joblib's workers outlive a driver killed with SIGKILL (they wait for work for minutes);
    a worker is the driver's child, so the driver's death shows as a change of parent.
    """
    if driver == os.getpid() or driver in _WATCHED:
        return
    _WATCHED.add(driver)
    direct = os.getppid() == driver

    def alive() -> bool:
        if direct:
            return os.getppid() == driver
        try:
            os.kill(driver, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True

    def watch():
        while alive():
            time.sleep(WATCHDOG_PERIOD)
        os._exit(1)

    threading.Thread(target=watch, name="lds-toolkit-parent-watchdog", daemon=True).start()


def _run_dask(fn, config, tasks, todo, single_threaded, finish, client, scheduler,
              runtimes=None):
    try:
        from dask.distributed import Client, as_completed
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError("running on a Dask cluster needs dask[distributed]: "
                          "pip install 'lds_toolkit[dist]'") from exc
    own = client is None
    if own:
        try:
            client = Client(scheduler, timeout=SCHEDULER_TIMEOUT)
        except (OSError, TimeoutError, ValueError) as exc:
            raise ConnectionError(f"could not reach the Dask scheduler at {scheduler!r} within "
                                  f"{SCHEDULER_TIMEOUT:g} s: {exc}") from None
    try:
        futures = {
            client.submit(_execute, fn, config, tasks[i], single_threaded, None,
                          (runtimes or {}).get(i), pure=False): i
            for i in todo
        }
        for fut in as_completed(futures):
            finish(futures[fut], fut.result())
    finally:
        if own:
            client.close()
