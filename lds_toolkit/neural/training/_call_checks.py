"""Checks at the entry of :func:`~lds_toolkit.neural.train` and
:func:`~lds_toolkit.neural.evaluate`, before any step runs: what the arguments say together
that no single one says alone.

* the data hold sequences and their mask marks positions (an all-False training mask would
  train on nothing and report a loss of 0, an all-False evaluation mask a NaN loss);
* ``callback`` is callable;
* the model has values: a parameter or buffer on the meta device is refused
  (:func:`check_materialised`, also by ``evaluate`` and ``predict``);
* settings that train, but not as their value suggests, are said with a
  :class:`TrainSettingWarning` and kept in the result's ``notes`` (:func:`setting_notes`),
  so that the result does not read as a plain "completed": a ``warmup`` longer than
  ``steps`` (the learning rate never reaches ``lr``; a warning rather than an error, so that
  a short smoke run of an experiment whose config has a long warm-up still runs), a
  ``batch_size`` asked for above the number of sequences (every step uses them all; the
  batch never holds more than the data, so no memory beyond the data's own is at stake);
* the model can take the data: token data (``vocab_size``) need a model with an embedding,
  real-valued data a model without one (checked for models that say which they are, such as
  :class:`~lds_toolkit.neural.SequenceModel`); float16 parameters are refused on the CPU,
  where training in float16 has no loss scaling and overflows or underflows; real inputs and
  targets must fit in the range of the model's float dtype (1e300 is finite in float64 and
  infinite in float32).
"""

from __future__ import annotations

import warnings
from dataclasses import fields

import numpy as np
import torch
from torch import nn

from ..tasks import SequenceTask
from .batching import _param_dtype
from .config import TrainConfig

#: TrainConfig's own batch size: a task smaller than it is not worth a warning.
_DEFAULT_BATCH = next(f.default for f in fields(TrainConfig) if f.name == "batch_size")


class TrainSettingWarning(UserWarning):
    """A training setting that does not do what its value suggests (``warmup`` longer than
    the run, ``batch_size`` larger than the data)."""


def check_positions(data: SequenceTask, mask: str, what: str, name: str = "data") -> None:
    """``data`` holds at least one sequence and ``data.<mask>`` marks at least one position
    (``ValueError`` naming both otherwise)."""
    if len(data) == 0:
        raise ValueError(f"{what}: {name} holds no sequences (N = 0): nothing to "
                         f"{'train on' if what == 'train' else 'score'}")
    if not np.any(getattr(data, mask)):
        result = ("the loss would be 0 and look like a perfect fit" if mask == "mask"
                  else "the loss and accuracy would be NaN")
        raise ValueError(f"{what}: {name}.{mask} marks no position (all {getattr(data, mask).size}"
                         f" entries False): {result}; set {mask}[i, t] = True where the target "
                         f"at position t of sequence i counts")


def check_materialised(model: nn.Module, what: str) -> None:
    """``ValueError`` when a parameter or buffer of ``model`` is on the meta device (shapes
    without values: what ``torch.device("meta")`` builds), which nothing can train or score:
    torch would fail inside the first step, or a forward pass would give values-less
    outputs."""
    for kind, items in (("parameter", model.named_parameters()),
                        ("buffer", model.named_buffers())):
        for name, tensor in items:
            if tensor.is_meta:
                raise ValueError(
                    f"{what}: the model's {kind} {name!r} is on the meta device (a shape "
                    "without values); materialise the model first, e.g. "
                    "model.to_empty(device='cpu') and then load a state dict or "
                    "re-initialise it, or build it outside torch.device('meta')")


def setting_notes(cfg) -> list[str]:
    """What a run's settings make it do other than their values suggest (module docstring):
    said as a :class:`TrainSettingWarning` at the start and kept in the result's ``notes``."""
    notes = []
    if cfg.warmup > cfg.steps:
        notes.append(f"warmup={cfg.warmup} is longer than the run (steps={cfg.steps}): the "
                     f"learning rate never reaches lr={cfg.lr:g} (it ends at "
                     f"{cfg.steps / cfg.warmup:.3g} of it); give warmup <= steps")
    return notes


def check_train_call(model: nn.Module, data: SequenceTask, cfg, callback,
                     eval_data: SequenceTask | None, device: torch.device) -> None:
    """The checks of the module docstring for ``train(model, data, cfg, ...)``."""
    check_materialised(model, "train")
    check_positions(data, "mask", "train")
    if eval_data is not None:
        check_positions(eval_data, "eval_mask", "train", "eval_data")
    if callback is not None and not callable(callback):
        raise TypeError(f"train: callback must be a function callback(step, record) or None, "
                        f"got {type(callback).__name__} {callback!r:.60}")
    for note in setting_notes(cfg):
        warnings.warn(TrainSettingWarning(f"train: {note}"), stacklevel=3)
    if cfg.batch_size > len(data) and cfg.batch_size != _DEFAULT_BATCH:  # asked for
        warnings.warn(TrainSettingWarning(
            f"train: batch_size={cfg.batch_size} is larger than the {len(data)} training "
            f"sequences: every step uses all of them (a batch of {len(data)})"), stacklevel=3)
    check_model_takes(model, data, "train")
    if eval_data is not None:
        check_model_takes(model, eval_data, "train", "eval_data")
    dtype = _param_dtype(model)
    if dtype == torch.float16 and device.type == "cpu":
        raise TypeError("train: the model's parameters are float16 on the CPU, where training "
                        "has no loss scaling and float16 (largest value 65504, 11-bit "
                        "mantissa) overflows or underflows within a few steps; train in "
                        "float32 (model.float()) and convert afterwards if needed")


def check_model_takes(model: nn.Module, data: SequenceTask, what: str,
                      name: str = "data") -> None:
    """``model`` can read ``data``: token ids need an embedding (``model.vocab_size``), real
    values need none; and real values fit the model's float dtype."""
    vocab = getattr(model, "vocab_size", "unknown")
    tokens = data.inputs.ndim == 2
    if tokens and vocab is None:
        raise ValueError(f"{what}: {name} is a token task (inputs (N, L) of token ids, "
                         f"vocab_size={data.vocab_size}) but the model takes real-valued "
                         f"inputs (it has no vocab_size); build it with vocab_size="
                         f"{data.vocab_size}, e.g. SequenceModel(d_model, n_layers, vocab_size="
                         f"{data.vocab_size}, d_output=...)")
    if not tokens and isinstance(vocab, int):
        raise ValueError(f"{what}: {name} holds real-valued inputs (N, L, d_in) = "
                         f"{data.inputs.shape} but the model embeds token ids (vocab_size="
                         f"{vocab}); build it with d_input={data.inputs.shape[-1]} instead")
    dtype = _param_dtype(model)
    top = float(torch.finfo(dtype).max)
    for field in ("inputs", "targets"):
        arr = getattr(data, field)
        if np.issubdtype(arr.dtype, np.floating) and arr.size:
            big = np.abs(arr) > top
            if big.any():
                idx = tuple(int(i) for i in np.argwhere(big)[0])
                raise ValueError(f"{what}: {name}.{field} entry {idx} is {arr[idx]:g}, beyond "
                                 f"the largest {dtype} ({top:.3g}) of the model's parameters: "
                                 f"it would become inf; scale the data (e.g. divide by its "
                                 f"standard deviation)")

