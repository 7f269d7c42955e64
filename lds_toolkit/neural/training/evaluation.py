"""Scoring a model on a task: :func:`predict`, :func:`evaluate` and the loss they share with
the training loop.

Loss. Classification tasks (``data.n_classes`` set): mean cross-entropy of the logits
``model(inputs)[b, t]`` against ``targets[b, t]`` over the masked positions
(:func:`_batch_loss`). Regression tasks: mean squared error over those positions and the
output channels. Accuracy (classification) and the evaluation loss are taken over
``data.eval_mask``.

Checks. :func:`predict` and :func:`evaluate` refuse a model whose parameters hold NaN or inf
(:func:`non_finite_parameter` names the first); :func:`_check_finite_data` refuses NaN/inf
inputs or targets and :func:`_check_token_range` token ids the model cannot embed, once per
call, on the host; :func:`_check_model_output` refuses an output of the wrong shape.

Precision. Both compute under :func:`~lds_toolkit.neural.training.runtime.precision` (``"fp32"``,
``"tf32"`` or ``"bf16"``; float32 by default); the loss and the outputs returned are float32
or wider.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from ..._validation import check_finite, check_int
from .._validation import input_checks
from ..tasks import IGNORE_INDEX, SequenceTask
from ._call_checks import check_materialised, check_model_takes, check_positions
from .batching import _param_dtype, _Tensors, as_tensors, scored_lengths
from .runtime import check_precision, resolve_device
from .runtime import precision as compute_in


def _batch_loss(out: torch.Tensor, targets: torch.Tensor, mask: torch.Tensor, kind: str):
    """Mean loss over the masked positions (classification: cross-entropy; regression: MSE)."""
    if kind == "classification":
        labels = torch.where(mask, targets, torch.full_like(targets, IGNORE_INDEX))
        return F.cross_entropy(out.reshape(-1, out.shape[-1]).float(), labels.reshape(-1),
                               ignore_index=IGNORE_INDEX)
    err = (out - targets) ** 2
    m = mask.unsqueeze(-1).to(err.dtype)
    return (err * m).sum() / (m.sum() * err.shape[-1]).clamp_min(1)


def _correct(out: torch.Tensor, targets: torch.Tensor, mask: torch.Tensor) -> tuple[int, int]:
    pred = out.argmax(dim=-1)
    return int(((pred == targets) & mask).sum()), int(mask.sum())


def _check_model_output(out: torch.Tensor, data: SequenceTask, tens: _Tensors):
    b, length = tens.inputs.shape[:2]
    if data.kind == "classification":
        want = f"(batch={b}, length={length}, n_classes>={data.n_classes})"
        ok = out.ndim == 3 and out.shape[:2] == (b, length) and out.shape[-1] >= data.n_classes
    else:
        d = data.targets.shape[-1]
        want = f"(batch={b}, length={length}, {d})"
        ok = out.ndim == 3 and tuple(out.shape) == (b, length, d)
    if not ok:
        raise ValueError(f"model output must have shape {want} for task {data.name!r}, "
                         f"got {tuple(out.shape)}")


def non_finite_parameter(model: nn.Module) -> str | None:
    """Name of the first parameter or floating buffer of ``model`` holding NaN or inf
    (``None`` when all are finite)."""
    for name, t in (*model.named_parameters(), *model.named_buffers()):
        if t.is_floating_point() or t.is_complex():
            if not bool(torch.isfinite(t).all()):
                return name
    return None


def _require_finite_parameters(model: nn.Module, what: str) -> None:
    check_materialised(model, what)  # meta tensors have no values to test
    name = non_finite_parameter(model)
    if name is not None:
        raise ValueError(f"{what}: the model's parameter {name!r} holds NaN or inf values (a "
                         "diverged training run?); its outputs would be meaningless. Reload "
                         "the last good checkpoint or train again with a lower lr")


@torch.no_grad()
def predict(model: nn.Module, data: SequenceTask, *, batch_size: int = 64,
            device: str | torch.device | None = None, precision: str = "fp32") -> np.ndarray:
    """Model outputs for every sequence of ``data`` as a numpy array (eval mode, no grad), in
    float32 (computed in ``precision``, see the module docstring).

    Raises ``ValueError`` naming the parameter when the model holds NaN or inf parameters
    or naming the first NaN/inf entry of the data, ``FloatingPointError`` naming the first
    position when an output is not finite, and ``TypeError``/``ValueError`` for a model that is
    not a module, data that are not a :class:`SequenceTask` or a ``batch_size`` below 1.
    """
    batch_size = _check_call(model, data, batch_size, "predict")
    check_precision(precision, "predict: precision")
    _require_finite_parameters(model, "predict")
    _check_finite_data(data, "data")
    check_model_takes(model, data, "predict")
    _check_token_range(model, data, "data")
    dev = resolve_device(device) if device is not None else _model_device(model)
    tens = as_tensors(data, dtype=_param_dtype(model))
    was_training = model.training
    model.eval()
    try:
        outs = []
        # the data are checked above, the outputs below
        with input_checks(False), compute_in(precision, dev):
            for i in range(0, len(data), batch_size):
                outs.append(model(tens.inputs[i:i + batch_size].to(dev)).float().cpu())
    finally:
        model.train(was_training)
    out = torch.cat(outs).numpy()
    if not np.all(np.isfinite(out)):
        idx = tuple(int(i) for i in np.argwhere(~np.isfinite(out))[0])
        raise FloatingPointError(
            f"predict: the model's output is not finite at sequence {idx[0]}, position "
            f"{idx[1] if len(idx) > 1 else 0} (value {out[idx]}) although its parameters and "
            "inputs are finite; typically its parameters grew too large in a diverged run")
    return out


@torch.no_grad()
def evaluate(model: nn.Module, data: SequenceTask, *, batch_size: int = 64,
             device: str | torch.device | None = None, crop: bool = False,
             precision: str = "fp32") -> dict[str, float]:
    """Loss and accuracy over ``data.eval_mask`` (accuracy NaN for regression), the model
    computed in ``precision`` (see the module docstring).

    The loss is the mean over all scored positions of the whole set (not a mean of batch
    means). ``crop`` (causal models only): batches of sequences sorted by scored length, each
    cut after its last scored position; the same numbers up to round-off, less padding.
    Raises ``ValueError`` naming the parameter when the model holds NaN or inf parameters,
    or naming the first NaN/inf entry of the inputs or targets (whose loss would be NaN), and
    ``TypeError``/``ValueError`` for the arguments' types and a ``batch_size`` below 1.
    """
    batch_size = _check_call(model, data, batch_size, "evaluate")
    if not isinstance(crop, bool):
        raise TypeError(f"evaluate: crop must be True or False, got {crop!r}")
    check_precision(precision, "evaluate: precision")
    _require_finite_parameters(model, "evaluate")
    _check_finite_data(data, "data")  # a NaN target would make the loss NaN, silently
    check_positions(data, "eval_mask", "evaluate")  # none scored: a NaN loss, silently
    check_model_takes(model, data, "evaluate")
    _check_token_range(model, data, "data")
    dev = resolve_device(device) if device is not None else _model_device(model)
    tens = as_tensors(data, dtype=_param_dtype(model))
    was_training = model.training
    model.eval()
    total = count = correct = 0.0
    if crop:
        lengths = scored_lengths(data)
        order = np.argsort(lengths, kind="stable")
    try:
        for i in range(0, len(data), batch_size):
            if crop:
                sl = torch.as_tensor(order[i:i + batch_size])
                cut = max(int(lengths[order[i:i + batch_size]].max()), 1)
            else:
                sl, cut = slice(i, i + batch_size), tens.inputs.shape[1]
            x, y, m = (tens.inputs[sl][:, :cut].to(dev), tens.targets[sl][:, :cut].to(dev),
                       tens.eval_mask[sl][:, :cut].to(dev))
            with compute_in(precision, dev):
                out = model(x)
            if i == 0:
                _check_model_output(out, data, _Tensors(x, y, m, m))
            n_pos = int(m.sum())
            if n_pos == 0:
                continue
            if data.kind == "classification":
                c, _ = _correct(out, y, m)
                correct += c
                total += float(_batch_loss(out, y, m, data.kind)) * n_pos
                count += n_pos
            else:
                d = y.shape[-1]
                total += float(_batch_loss(out.to(y.dtype), y, m, data.kind)) * n_pos * d
                count += n_pos * d
    finally:
        model.train(was_training)
    loss = total / count if count else float("nan")
    acc = correct / count if (count and data.kind == "classification") else float("nan")
    return {"loss": float(loss), "accuracy": float(acc)}


def _model_device(model: nn.Module) -> torch.device:
    """The device of the model's first parameter (CPU for a model without parameters)."""
    first = next(model.parameters(), None)
    return first.device if first is not None else torch.device("cpu")


def _check_call(model, data, batch_size, what: str) -> int:
    """The arguments ``predict``/``evaluate`` share, checked; returns ``batch_size``."""
    if not isinstance(model, nn.Module):
        raise TypeError(f"{what}: model must be a torch.nn.Module, got {type(model).__name__}")
    if not isinstance(data, SequenceTask):
        raise TypeError(f"{what}: data must be a SequenceTask, got {type(data).__name__}")
    if len(data) == 0:
        raise ValueError(f"{what}: data holds no sequences")
    return check_int(f"{what}: batch_size", batch_size, 1)


def _check_finite_data(data: SequenceTask, name: str) -> None:
    """``ValueError`` naming the first NaN/inf entry of real-valued inputs or targets."""
    for field_name in ("inputs", "targets"):
        arr = getattr(data, field_name)
        if np.issubdtype(arr.dtype, np.floating):
            check_finite(f"{name}.{field_name}", arr)


def _check_token_range(model: nn.Module, data: SequenceTask, name: str) -> None:
    """``ValueError`` when ``data`` holds token ids outside ``[0, model.vocab_size)`` (for a
    model with an integer ``vocab_size``, such as :class:`~lds_toolkit.neural.SequenceModel`
    built for tokens): checked once on the host, so that no forward pass needs to."""
    vocab = getattr(model, "vocab_size", None)
    if (data.vocab_size is None or isinstance(vocab, bool) or not isinstance(vocab, int)
            or not data.inputs.size or not np.issubdtype(data.inputs.dtype, np.integer)):
        return
    lo, hi = int(data.inputs.min()), int(data.inputs.max())
    if lo < 0 or hi >= vocab:
        raise ValueError(f"{name}.inputs holds token ids from {lo} to {hi}, but the model "
                         f"embeds ids in [0, {vocab}) (its vocab_size is {vocab})")
