"""torch sequence layers: S4/S4D, S4+ (State Memory Replay), S4++, STU, Focus, LaS attention,
and the one loop that trains them.

Only this subpackage needs torch (install the ``nn`` extra); ``import lds_toolkit`` does not
import it. Every layer maps (batch, length, d_model) -> (batch, length, d_model), is built as
``Layer(d_model)`` with its paper's defaults and is causal by default.

Every layer refuses NaN/inf inputs, naming the first bad position (switch the check off with
``input_checks(False)``, see :mod:`lds_toolkit.neural._validation`), and maps a batch of size 0
to an empty output.

Three rooms, and two helpers they share (imports point down this list):

* :mod:`lds_toolkit.neural.training`: the one training loop, :func:`train` with a
  :class:`TrainConfig`, then :func:`evaluate` / :func:`predict`; several runs at once
  (stacked, to fill a GPU): :func:`train_group` with :class:`RunSpec`; its config,
  checkpoints, divergence rule, batching, runtime (device, threads, precision) and
  :func:`set_recompute` (activation recomputation in Focus, STU (exact) and the S4 SSMs, for
  long sequences);
* :mod:`lds_toolkit.neural.layers`: every layer (S4, S4+, S4++, STU, Focus, LaS, the
  attention baseline), its private cores, and the blocks and models that stack layers
  (:class:`SequenceModel`); each SSM layer exports itself as an LDS (``to_lds()``);
* :mod:`lds_toolkit.neural.tasks`: the task generators (numpy in, numpy out);
* ``_validation`` (input and output checks, :func:`input_checks`) and ``_cast`` (dtype
  helpers), shared by the layers and the loop.

The module paths of before the rooms (``lds_toolkit.neural.s4``, ``.stu``, ``.training_config``,
``.run_group``, ...) still import: they are the modules of the rooms under their old names.
"""

from __future__ import annotations

try:
    import torch  # noqa: F401
except ImportError as exc:  # pragma: no cover - exercised only without torch
    raise ImportError(
        "lds_toolkit.neural needs PyTorch; install it with `pip install \"lds_toolkit[nn]\"`"
    ) from exc

import importlib as _importlib
import sys as _sys

from . import tasks
from ._validation import input_checks, input_checks_enabled, set_input_checks
from .layers import (
    DPLRSSM,
    LAYER_REGISTRY,
    MLP,
    S4,
    STU,
    Block,
    DiagonalSSM,
    Focus,
    LaSAttention,
    LDSFit,
    S4Plus,
    S4PlusPlus,
    SelfAttention,
    SequenceModel,
    StateMemoryReplay,
    resolve_layer,
    ssm_parameter_groups,
)
from .training import (
    CheckpointError,
    CheckpointWarning,
    Plateau,
    RunSpec,
    TrainConfig,
    TrainingDivergedError,
    TrainResult,
    evaluate,
    predict,
    set_recompute,
    train,
    train_group,
)

# The pre-0.2 import paths, kept for users and pickles: before the rooms these modules lived
# directly in lds_toolkit.neural. Each old name is the moved module itself (not a copy), in
# sys.modules and as an attribute of this package, so that `import lds_toolkit.neural.s4`,
# `from lds_toolkit.neural.stu import STU` and a pickle naming
# `lds_toolkit.neural.training_config.TrainConfig` give the objects of the rooms.
# `_focus_hyper` is private, but its modules sit inside every Focus, so whole-model pickles
# name it. lds_toolkit.neural.training kept its name: it is the training room's package.
_OLD_PATHS = {
    "s4": "layers.s4", "dplr": "layers.dplr", "s4plus": "layers.s4plus", "stu": "layers.stu",
    "focus": "layers.focus", "las": "layers.las", "blocks": "layers.blocks",
    "_focus_hyper": "layers._focus_hyper",
    "run_group": "training.run_group", "recompute": "training.recompute",
    "training_config": "training.config", "checkpoints": "training.checkpoints",
    "divergence": "training.divergence", "evaluation": "training.evaluation",
    "runtime": "training.runtime", "batching": "training.batching",
}
for _old, _new in _OLD_PATHS.items():
    _module = _importlib.import_module(f"{__name__}.{_new}")
    _sys.modules.setdefault(f"{__name__}.{_old}", _module)
    globals()[_old] = _module
del _old, _new, _module

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
