"""torch sequence layers: S4/S4D, S4+ (State Memory Replay), S4++, STU, Focus, LaS attention.

Only this subpackage needs torch (install the ``nn`` extra); ``import lds_toolkit`` does not
import it. Every layer maps (batch, length, d_model) -> (batch, length, d_model), is built as
``Layer(d_model)`` with its paper's defaults and is causal by default.
"""

from __future__ import annotations

try:
    import torch  # noqa: F401
except ImportError as exc:  # pragma: no cover - exercised only without torch
    raise ImportError(
        "lds_toolkit.neural needs PyTorch; install it with `pip install \"lds_toolkit[nn]\"`"
    ) from exc

from . import tasks
from .blocks import LAYER_REGISTRY, MLP, Block, SelfAttention, SequenceModel, resolve_layer
from .focus import Focus
from .las import LaSAttention
from .s4 import S4, DiagonalSSM
from .s4plus import S4Plus, S4PlusPlus, StateMemoryReplay
from .stu import STU
from .training import (
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
    "StateMemoryReplay",
    "Block",
    "MLP",
    "SelfAttention",
    "SequenceModel",
    "LAYER_REGISTRY",
    "resolve_layer",
    "tasks",
    "train",
    "Plateau",
    "TrainConfig",
    "TrainResult",
    "TrainingDivergedError",
    "evaluate",
    "predict",
]
