"""Experiments: the paper reproductions, the runner that runs them, the store that keeps their
tasks and the report that judges them.

Write an experiment by subclassing :class:`Experiment` in a module of
``lds_toolkit/experiments/catalog/`` and decorating it with :func:`register`; run it with
:func:`reproduce` or ``lds-toolkit reproduce NAME``. Where things are, from the bottom up:
each room imports only those listed before it (and the registry reads the catalog's table of
contents), as the layer table of docs/architecture.md declares and its test checks.

* ``store/`` (:mod:`.store`) — what a run keeps on disk: the task store (resume after an
  interruption), its codec, the code version that keys it, the output directory (lock,
  atomic writes, files read back only as ``run.json`` vouches for them);
* this folder's modules, the contract every room shares: :mod:`.base` (the
  :class:`Experiment` contract and the registry), :mod:`.scales` (quick, medium, paper,
  gpu), :mod:`.claims` (the paper claims an experiment declares, as data, and their
  evaluation on a summary), :mod:`.margins` (how far a verdict is from flipping),
  :mod:`.numbers` (how a result number prints: the house style of the report, the claims
  and the docs' quotes), :mod:`.plotting` (the figures' style);
* ``config/`` (:mod:`.config`) — declared ranges, ``--set`` overrides, the config of a run;
* ``report/`` (:mod:`.report`) — runs judged against their claims (``lds-toolkit
  report``), ``report --compare`` and the numbers quoted in the docs;
* ``runner/`` (:mod:`.runner`) — :func:`reproduce` end to end, the sweep (joblib locally,
  Dask on a cluster), workers, what a running task sees (checkpoints, the time budget:
  :class:`TimeBudgetReached`), progress, the environment ``run.json`` records;
* ``catalog/`` (:mod:`.catalog`) — one module per experiment, named after it, and the
  pieces several share (``_*.py``). Importing this package imports none of them.
"""

from .._budget import TimeBudgetReached
from .._jsonable import to_jsonable
from .base import (
    Experiment,
    MissingDependencyError,
    UnknownExperimentError,
    get_experiment,
    list_experiments,
    register,
    unavailable_experiments,
)
from .report.compare import compare_runs
from .runner.reproduction import RunResult, load_summary, reproduce
from .runner.sweep import StoreWarning, SweepStats, run_sweep, task_rng
from .store.outputs import OutputLockedError, verify_outputs
from .store.tasks import StoredTaskRejected, TaskKey, TaskStore, task_key
from .store.version import code_version

__all__ = [
    "Experiment",
    "MissingDependencyError",
    "OutputLockedError",
    "RunResult",
    "StoreWarning",
    "StoredTaskRejected",
    "SweepStats",
    "TaskKey",
    "TaskStore",
    "TimeBudgetReached",
    "UnknownExperimentError",
    "code_version",
    "compare_runs",
    "get_experiment",
    "list_experiments",
    "load_summary",
    "register",
    "reproduce",
    "run_sweep",
    "task_key",
    "task_rng",
    "to_jsonable",
    "unavailable_experiments",
    "verify_outputs",
]
