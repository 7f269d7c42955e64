"""Experiment runner: registry, sweeps (joblib locally, Dask on a cluster), result store, plots.

Write an experiment by subclassing :class:`Experiment` in a module of
``lds_toolkit/experiments/catalog/`` and decorating it with :func:`register`; run it with
:func:`reproduce` or ``lds-toolkit reproduce NAME``. See :mod:`lds_toolkit.experiments.base`
for the contract, :mod:`~lds_toolkit.experiments.task_runtime` for the checkpoints and time
budget of running tasks (:class:`TimeBudgetReached`).
"""

from .._budget import TimeBudgetReached
from .base import (
    Experiment,
    MissingDependencyError,
    UnknownExperimentError,
    get_experiment,
    list_experiments,
    register,
    unavailable_experiments,
)
from .outputs import OutputLockedError, verify_outputs
from .runner import RunResult, load_summary, reproduce, to_jsonable
from .store import StoredTaskRejected, TaskKey, TaskStore, task_key
from .sweep import StoreWarning, SweepStats, run_sweep, task_rng
from .version import code_version

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
