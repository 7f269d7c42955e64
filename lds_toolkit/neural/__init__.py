"""torch sequence layers: S4/S4D, S4+ (State Memory Replay), S4++, STU, Focus, LaS attention.

Only this subpackage needs torch (install the ``nn`` extra); ``import lds_toolkit`` does not
import it. Every layer maps (batch, length, d_model) -> (batch, length, d_model), is built as
``Layer(d_model)`` with its paper's defaults and is causal by default.

Every layer refuses NaN/inf inputs, naming the first bad position (switch the check off with
``input_checks(False)``, see :mod:`lds_toolkit.neural._validation`), and maps a batch of size 0
to an empty output.

Training: :func:`train` with a :class:`TrainConfig`, then :func:`evaluate` / :func:`predict`;
several runs at once (stacked, to fill a GPU): :func:`train_group` with :class:`RunSpec`
(:mod:`~lds_toolkit.neural.run_group`). Long sequences: :func:`set_recompute` switches on
activation recomputation in Focus, STU (exact) and the S4 SSMs
(:mod:`~lds_toolkit.neural.recompute`).
The loop is :mod:`lds_toolkit.neural.training`; its parts live beside it in
:mod:`~lds_toolkit.neural.training_config` (config, plateau rule, schedule),
:mod:`~lds_toolkit.neural.batching` (tensors and batch order),
:mod:`~lds_toolkit.neural.evaluation` (loss, predict, evaluate),
:mod:`~lds_toolkit.neural.checkpoints` (format, save, load),
:mod:`~lds_toolkit.neural.divergence` (the steps' numbers read from the device, the
divergence rule) and :mod:`~lds_toolkit.neural.runtime` (device, threads, precision).
"""

from __future__ import annotations

try:
    import torch  # noqa: F401
except ImportError as exc:  # pragma: no cover - exercised only without torch
    raise ImportError(
        "lds_toolkit.neural needs PyTorch; install it with `pip install \"lds_toolkit[nn]\"`"
    ) from exc

from . import tasks
from ._ssm_base import ssm_parameter_groups
from ._validation import input_checks, input_checks_enabled, set_input_checks
from .blocks import LAYER_REGISTRY, MLP, Block, SelfAttention, SequenceModel, resolve_layer
from .dplr import DPLRSSM
from .focus import Focus
from .las import LaSAttention
from .recompute import set_recompute
from .run_group import RunSpec, train_group
from .s4 import S4, DiagonalSSM
from .s4plus import S4Plus, S4PlusPlus, StateMemoryReplay
from .stu import STU, LDSFit
from .training import (
    CheckpointError,
    CheckpointWarning,
    Plateau,
    TrainConfig,
    TrainingDivergedError,
    TrainResult,
    evaluate,
    predict,
    train,
)

__all__ = [
    "S4",
    "S4Plus",
    "S4PlusPlus",
    "STU",
    "Focus",
    "LaSAttention",
    "DiagonalSSM",
    "DPLRSSM",
    "LDSFit",
    "ssm_parameter_groups",
    "StateMemoryReplay",
    "Block",
    "MLP",
    "SelfAttention",
    "SequenceModel",
    "LAYER_REGISTRY",
    "resolve_layer",
    "tasks",
    "train",
    "train_group",
    "RunSpec",
    "set_recompute",
    "input_checks",
    "input_checks_enabled",
    "set_input_checks",
    "CheckpointError",
    "CheckpointWarning",
    "Plateau",
    "TrainConfig",
    "TrainResult",
    "TrainingDivergedError",
    "evaluate",
    "predict",
]
