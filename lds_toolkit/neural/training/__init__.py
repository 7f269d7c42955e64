"""The training room: the one training loop of :mod:`lds_toolkit.neural` and what belongs to it.

:func:`train` trains a model on a :class:`~lds_toolkit.neural.tasks.SequenceTask` with a
:class:`TrainConfig` (precision, ``torch.compile``, checkpoint/resume and a deadline are
options of this one loop, not copies of it); :func:`train_group` trains several runs of one
architecture stacked, through the same loop; :func:`evaluate` and :func:`predict` score a
model. What lives where:

* :mod:`~lds_toolkit.neural.training.single_run`: :func:`train` and :class:`TrainResult`
  (its docstring says how a run goes: loss, batch order, plateau, padding, divergence,
  checkpoints, time budget);
* :mod:`~lds_toolkit.neural.training.run_group`: :func:`train_group`, :class:`RunSpec`;
* :mod:`~lds_toolkit.neural.training.config`: :class:`TrainConfig`, :class:`Plateau`,
  :func:`lr_factor` (the schedule);
* :mod:`~lds_toolkit.neural.training.batching`: task to tensors, the batch order;
* :mod:`~lds_toolkit.neural.training.evaluation`: :func:`predict`, :func:`evaluate`, the
  loss the loop shares with them;
* :mod:`~lds_toolkit.neural.training.checkpoints`: the checkpoint format, save and load;
* :mod:`~lds_toolkit.neural.training.divergence`: the steps' numbers read from the device,
  the divergence rule, :class:`DivergenceReport`;
* :mod:`~lds_toolkit.neural.training.runtime`: device, thread count, precision context;
* :mod:`~lds_toolkit.neural.training.recompute`: :func:`set_recompute`, the switch of the
  layers' activation recomputation (the mechanics are in the layers' room);
* private: ``_loop`` (the loop over steps), ``_run_state`` (one run's state),
  ``_engines`` (a step's computation, plain or stacked), ``_call_checks`` (the checks at
  the entry of :func:`train` and :func:`evaluate`).

It imports the layers' room (parameter groups, recomputation) and the tasks, never the
reverse.
"""

from __future__ import annotations

from ..._budget import TimeBudgetReached
from .batching import as_tensors, batch_indices, bucketed_batch_indices, scored_lengths
from .checkpoints import (
    CHECKPOINT_FORMAT,
    CheckpointError,
    CheckpointWarning,
    diverged_checkpoint_path,
)
from .config import ON_DIVERGENCE, PLATEAU_METRICS, SCHEDULES, Plateau, TrainConfig, lr_factor
from .divergence import DivergenceReport, TrainingDivergedError
from .evaluation import evaluate, non_finite_parameter, predict
from .recompute import set_recompute
from .run_group import RunSpec, train_group
from .runtime import resolve_device, torch_threads
from .single_run import TrainResult, train

__all__ = [
    "train", "TrainResult", "train_group", "RunSpec", "set_recompute",
    "TrainConfig", "Plateau", "lr_factor", "SCHEDULES", "ON_DIVERGENCE", "PLATEAU_METRICS",
    "as_tensors", "batch_indices", "bucketed_batch_indices", "scored_lengths",
    "predict", "evaluate", "non_finite_parameter",
    "CHECKPOINT_FORMAT", "CheckpointError", "CheckpointWarning", "diverged_checkpoint_path",
    "DivergenceReport", "TrainingDivergedError",
    "resolve_device", "torch_threads", "TimeBudgetReached",
]
