"""A small, seeded training loop for the sequence tasks of :mod:`lds_toolkit.neural.tasks`.

``train(model, data, ...)`` runs AdamW with linear warm-up (then a constant or cosine learning
rate), clips the gradient norm, logs loss / accuracy / gradient norm / learning rate at every
step, evaluates on held-out data, shows a tqdm bar, writes checkpoints and resumes from them,
and stops early when training diverges.

Loss. Classification tasks (``data.n_classes`` set): mean cross-entropy of the logits
``model(inputs)[b, t]`` against ``targets[b, t]`` over the positions of ``data.mask``.
Regression tasks: mean squared error over those positions and the output channels. Accuracy
(classification) and the evaluation loss are taken over ``data.eval_mask``.

Determinism. The model is initialised by the caller (seed it); the loop draws the batch order
from ``seed`` alone: epoch e uses the permutation ``default_rng([seed, e])`` of the training
sequences, cut into consecutive batches (with ``bucket``, sorted by length inside pools of
``bucket`` batches first, see :func:`bucketed_batch_indices`). The order is a function of
(seed, step), so a resumed run sees exactly the batches of an uninterrupted one. torch's
global RNG (dropout) is seeded with ``seed`` at the start and saved in checkpoints. On CPU with
a fixed thread count the same seed gives the same loss curve bit for bit.

Plateau. With ``plateau=Plateau(...)`` training stops once the held-out curve has flattened
(:class:`Plateau` defines the test); the result's status is then ``"plateaued"``. The same
rule, applied after the fact to a stored curve, is :meth:`Plateau.first`.

Padding. Sequences of a task share one padded length. With ``crop=True`` (causal models only)
every training and evaluation batch is cut after its last scored position: the outputs that
are scored are unchanged (a causal model's output at ``t`` never depends on later inputs), and
the padding is not computed. ``bucket`` groups sequences of similar length into batches so
that cropping saves more.

Divergence. Before each optimizer update the loop checks the batch loss and the gradient norm:
a non-finite value, or a loss above ``divergence_factor`` times the first step's loss, stops
training *before* the offending update. The result then carries a :class:`DivergenceReport`
naming the step (``on_divergence="raise"`` raises :class:`TrainingDivergedError` instead).
:func:`predict` and :func:`evaluate` refuse a model whose parameters hold NaN or inf.

Checkpoints. ``checkpoint=PATH`` saves the model, optimizer, RNG states, history and the
config's fingerprint every ``checkpoint_every`` steps, on interruption and at the end, each
time atomically (temporary file, then rename). The file is a ``torch.save`` of tensors and
state dicts plus a JSON string of metadata, read back with ``torch.load(weights_only=True)``:
a crafted file cannot run code, it is refused (:class:`CheckpointError`) like a corrupted or
foreign one. A run that diverges never overwrites PATH: the last good checkpoint stays there,
resumable, and the diverged state goes to :func:`diverged_checkpoint_path` (``run.pt`` ->
``run.diverged.pt``) for inspection.

Where things live. This module holds :func:`train`, its loop and its results
(:class:`TrainResult`, :class:`DivergenceReport`, :class:`TrainingDivergedError`); it
re-exports the names of the modules it is built from, so that everything importable from it
before the split still is:

* :mod:`lds_toolkit.neural.training_config`: :class:`TrainConfig`, :class:`Plateau`,
  :func:`lr_factor` (the schedule);
* :mod:`lds_toolkit.neural.batching`: :func:`as_tensors`, :func:`batch_indices`,
  :func:`bucketed_batch_indices`, :func:`scored_lengths`;
* :mod:`lds_toolkit.neural.evaluation`: :func:`predict`, :func:`evaluate`,
  :func:`non_finite_parameter` and the loss/accuracy helpers;
* :mod:`lds_toolkit.neural.checkpoints`: :data:`CHECKPOINT_FORMAT`, :class:`CheckpointError`,
  :func:`diverged_checkpoint_path`, saving and loading;
* :mod:`lds_toolkit.neural.runtime`: :func:`resolve_device`, :func:`torch_threads`.
"""

from __future__ import annotations

import math
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from .._repr import compact_repr
from .._tqdm import tqdm
from ._call_checks import check_train_call
from ._ssm_base import ssm_parameter_groups
from ._validation import input_checks
from .batching import (
    _param_dtype,
    _Tensors,
    as_tensors,
    batch_indices,
    bucketed_batch_indices,
    scored_lengths,
)
from .checkpoints import (
    CHECKPOINT_FORMAT,
    CheckpointError,
    _load_checkpoint,
    _save_checkpoint,
    check_checkpoint_path,
    diverged_checkpoint_path,
)
from .checkpoints import _as_tensors_dict as _as_tensors_dict
from .evaluation import (
    _batch_loss,
    _check_finite_data,
    _check_model_output,
    _correct,
    evaluate,
    non_finite_parameter,
    predict,
)
from .evaluation import _require_finite_parameters as _require_finite_parameters
from .runtime import resolve_device, torch_threads
from .tasks import SequenceTask
from .training_config import _OPTIONAL_FIELDS as _OPTIONAL_FIELDS
from .training_config import _RESUMABLE_FIELDS as _RESUMABLE_FIELDS
from .training_config import (
    ON_DIVERGENCE,
    PLATEAU_METRICS,
    SCHEDULES,
    Plateau,
    TrainConfig,
    lr_factor,
)

# The private helpers that moved out stay importable from here as well: those this module
# does not call are imported as ``name as name`` (an explicit re-export).
__all__ = [
    # defined here
    "train", "TrainResult", "DivergenceReport", "TrainingDivergedError",
    # re-exported from the modules listed in the module docstring
    "TrainConfig", "Plateau", "lr_factor", "SCHEDULES", "ON_DIVERGENCE", "PLATEAU_METRICS",
    "as_tensors", "batch_indices", "bucketed_batch_indices", "scored_lengths",
    "predict", "evaluate", "non_finite_parameter",
    "CHECKPOINT_FORMAT", "CheckpointError", "diverged_checkpoint_path",
    "resolve_device", "torch_threads",
]


@dataclass(frozen=True)
class DivergenceReport:
    """Where and why training stopped: ``step`` is the 0-based step whose update was refused."""

    step: int
    reason: str
    loss: float
    grad_norm: float

    def __str__(self) -> str:
        return (f"training diverged at step {self.step}: {self.reason} "
                f"(loss = {self.loss:.6g}, gradient norm = {self.grad_norm:.6g}); "
                "the update of this step was not applied")


class TrainingDivergedError(FloatingPointError):
    """Raised by :func:`train` with ``on_divergence="raise"``; ``.report`` says where."""

    def __init__(self, report: DivergenceReport):
        self.report = report
        super().__init__(str(report))


@dataclass(repr=False)
class TrainResult:
    """What :func:`train` did.

    Attributes
    ----------
    history : dict of ndarray
        Per completed step: ``"step"``, ``"loss"``, ``"accuracy"`` (batch accuracy on
        ``eval_mask``; NaN for regression), ``"grad_norm"`` (before clipping), ``"lr"``.
    evals : dict of ndarray
        Per evaluation: ``"step"`` (steps completed), ``"loss"``, ``"accuracy"``.
    status : str
        ``"completed"`` (all ``steps`` done), ``"target_reached"``, ``"plateaued"`` (the
        held-out curve flattened, see :class:`Plateau`) or ``"diverged"``.
    divergence : DivergenceReport or None
    steps_done : int
        Optimizer updates applied (including those before a resume).
    seconds : float
        Wall time of this call.
    resumed_from : int or None
        Step of the checkpoint this call resumed from.
    """

    history: dict[str, np.ndarray]
    evals: dict[str, np.ndarray]
    status: str
    divergence: DivergenceReport | None
    steps_done: int
    seconds: float
    resumed_from: int | None = None
    final_eval: dict[str, float] = field(default_factory=dict)

    @property
    def diverged(self) -> bool:
        """Training stopped on a divergence (``divergence`` says where)."""
        return self.status == "diverged"

    def __repr__(self) -> str:
        loss = self.history.get("loss")
        last = float(loss[-1]) if loss is not None and len(loss) else float("nan")
        return compact_repr(self, status=self.status, steps_done=self.steps_done,
                            last_loss=last, final_eval=self.final_eval, seconds=self.seconds)


def _param_groups(model: nn.Module, cfg: TrainConfig) -> list[dict]:
    """One group (``lr``, ``weight_decay``), or with ``ssm_lr``/``ssm_weight_decay`` set the
    groups of :func:`ssm_parameter_groups`; each records its peak lr as ``"base_lr"``."""
    if cfg.ssm_lr is None and cfg.ssm_weight_decay is None:
        groups = [{"params": list(model.parameters()), "lr": cfg.lr,
                   "weight_decay": cfg.weight_decay}]
    else:
        wd = cfg.weight_decay if cfg.ssm_weight_decay is None else cfg.ssm_weight_decay
        groups = ssm_parameter_groups(model, lr=cfg.lr, weight_decay=cfg.weight_decay,
                                      ssm_lr=cfg.ssm_lr, ssm_weight_decay=wd)
    for g in groups:
        g["base_lr"] = g["lr"]
    return groups


# ------------------------------------------------------------------------------------ train

def train(model: nn.Module, data: SequenceTask, config: TrainConfig | None = None, *,
          eval_data: SequenceTask | None = None,
          callback: Callable[[int, dict[str, float]], bool | None] | None = None,
          **overrides: Any) -> TrainResult:
    """Train ``model`` on ``data`` (see the module docstring for loss, order and stopping).

    Parameters
    ----------
    model : nn.Module
        Maps a batch of ``data.inputs`` (tokens (B, L) or reals (B, L, d_in)) to logits
        (B, L, n_classes) or outputs (B, L, d_out). Moved to the configured device.
    data : SequenceTask
        Training sequences.
    config : TrainConfig, optional
        Hyper-parameters; keyword ``overrides`` replace its fields (``train(m, d, steps=50)``).
    eval_data : SequenceTask, optional
        Held-out sequences, evaluated every ``eval_every`` steps and at the end.
    callback : callable, optional
        ``callback(step, record)`` after every applied step, with the step's record (loss,
        accuracy, grad_norm, lr); returning True stops training (status ``"completed"``).
        An exception raised inside it (e.g. KeyboardInterrupt) saves a checkpoint first when
        one is configured, then propagates.

    Returns
    -------
    TrainResult
    """
    cfg = config if config is not None else TrainConfig()
    if not isinstance(cfg, TrainConfig):
        raise TypeError(f"config must be a TrainConfig, got {type(cfg).__name__}")
    unknown = set(overrides) - {f.name for f in fields(TrainConfig)}
    if unknown:
        raise TypeError(f"train() got unknown settings {sorted(unknown)}; "
                        f"see TrainConfig for the valid ones")
    cfg = replace(cfg, **overrides)
    if not isinstance(model, nn.Module):
        raise TypeError(f"model must be a torch.nn.Module, got {type(model).__name__}")
    if not isinstance(data, SequenceTask):
        raise TypeError(f"data must be a SequenceTask, got {type(data).__name__}")
    if eval_data is not None and not isinstance(eval_data, SequenceTask):
        raise TypeError(f"eval_data must be a SequenceTask, got {type(eval_data).__name__}")
    if eval_data is not None and eval_data.kind != data.kind:
        raise ValueError(f"eval_data is a {eval_data.kind} task but data is a {data.kind} task")

    _check_finite_data(data, "data")
    if eval_data is not None:
        _check_finite_data(eval_data, "eval_data")
    device = resolve_device(cfg.device)
    # masks, callback, schedule, batch size, model against data (_call_checks.py)
    check_train_call(model, data, cfg, callback, eval_data, device)
    if cfg.checkpoint is not None:  # a path that cannot be written fails now, not at the end
        check_checkpoint_path(cfg.checkpoint)
    started = time.perf_counter()
    # the data are checked above; inside the model a non-finite value is a divergence,
    # reported with its step from the loss, so the layers' per-call input check is off
    with torch_threads(cfg.threads), input_checks(False):
        return _train(model, data, cfg, eval_data, callback, device, started)


def _train(model, data, cfg, eval_data, callback, device, started):
    model.to(device)
    model.train()
    tens = as_tensors(data, dtype=_param_dtype(model),
                      device=device if device.type == "cuda" else "cpu")
    opt = torch.optim.AdamW(_param_groups(model, cfg), lr=cfg.lr, betas=tuple(cfg.betas),
                            weight_decay=cfg.weight_decay)
    keys = ("step", "loss", "accuracy", "grad_norm", "lr")
    history: dict[str, list] = {k: [] for k in keys}
    evals: dict[str, list] = {"step": [], "loss": [], "accuracy": []}
    start_step, first_loss, resumed_from = 0, None, None
    ckpt = Path(cfg.checkpoint) if cfg.checkpoint is not None else None
    torch.manual_seed(cfg.seed)
    if ckpt is not None and cfg.resume and ckpt.exists():
        state = _load_checkpoint(ckpt, model, opt, cfg)
        start_step, first_loss, resumed_from = state["step"], state["first_loss"], state["step"]
        history = {k: list(state["history"][k]) for k in keys}
        evals = {k: list(state["evals"][k]) for k in evals}

    eval_bs = cfg.eval_batch_size or 4 * cfg.batch_size
    lengths = scored_lengths(data) if (cfg.crop or cfg.bucket) else None
    is_cls = data.kind == "classification"
    status, report = "completed", None
    checked = False

    def run_eval(step_done):
        res = evaluate(model, eval_data, batch_size=eval_bs, device=device, crop=cfg.crop)
        model.train()
        evals["step"].append(step_done)
        evals["loss"].append(res["loss"])
        evals["accuracy"].append(res["accuracy"])
        return res

    bar = tqdm(total=cfg.steps, initial=min(start_step, cfg.steps), disable=not cfg.progress,
               desc=f"train {data.name}", leave=False, dynamic_ncols=True)
    step = start_step
    try:
        while step < cfg.steps:
            if cfg.bucket:
                idx = bucketed_batch_indices(lengths, cfg.batch_size, cfg.bucket, cfg.seed,
                                             step)
            else:
                idx = batch_indices(len(data), cfg.batch_size, cfg.seed, step)
            cut = max(int(lengths[idx].max()), 1) if cfg.crop else tens.inputs.shape[1]
            idx = torch.as_tensor(idx)
            x, y = tens.inputs[idx][:, :cut].to(device), tens.targets[idx][:, :cut].to(device)
            m, em = tens.mask[idx][:, :cut].to(device), tens.eval_mask[idx][:, :cut].to(device)
            factor = lr_factor(step, cfg)
            lr = cfg.lr * factor
            for group in opt.param_groups:
                # checkpoints from before parameter groups have no "base_lr": one group at lr
                group["lr"] = group.get("base_lr", cfg.lr) * factor
            out = model(x)
            if not checked:
                _check_model_output(out, data, _Tensors(x, y, m, em))
                checked = True
            loss = _batch_loss(out if is_cls else out.to(y.dtype), y, m, data.kind)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            params = [p for p in model.parameters() if p.grad is not None]
            gnorm = float(torch.nn.utils.clip_grad_norm_(
                params, cfg.grad_clip if cfg.grad_clip is not None else float("inf")))
            loss_v = float(loss.detach())
            if first_loss is None:
                first_loss = loss_v
            reason = None
            if not math.isfinite(loss_v):
                reason = "non-finite loss"
            elif not math.isfinite(gnorm):
                reason = "non-finite gradient norm"
            elif (cfg.divergence_factor is not None and first_loss > 0
                  and loss_v > cfg.divergence_factor * first_loss):
                reason = (f"loss blew up to more than {cfg.divergence_factor:g} x the first "
                          f"step's loss {first_loss:.6g}")
            if reason is not None:
                report = DivergenceReport(step, reason, loss_v, gnorm)
                status = "diverged"
                break
            opt.step()
            acc = float("nan")
            if is_cls:
                c, k = _correct(out.detach(), y, em)
                acc = c / k if k else float("nan")
            record = {"step": step, "loss": loss_v, "accuracy": acc, "grad_norm": gnorm,
                      "lr": lr}
            for k in keys:
                history[k].append(record[k])
            step += 1
            bar.update(1)
            if cfg.progress:
                bar.set_postfix(loss=f"{loss_v:.4g}", refresh=False)
            if ckpt is not None and cfg.checkpoint_every and step % cfg.checkpoint_every == 0:
                _save_checkpoint(ckpt, model, opt, step, history, evals, cfg, first_loss)
            if eval_data is not None and cfg.eval_every and step % cfg.eval_every == 0:
                res = run_eval(step)
                if (cfg.target_accuracy is not None
                        and res["accuracy"] >= cfg.target_accuracy):
                    status = "target_reached"
                    break
                if cfg.plateau is not None and cfg.plateau.reached(evals[cfg.plateau.metric]):
                    status = "plateaued"
                    break
            if callback is not None and callback(step - 1, record):
                break
    except BaseException:
        if ckpt is not None and step > start_step:
            good = non_finite_parameter(model) is None
            _save_checkpoint(ckpt if good else diverged_checkpoint_path(ckpt), model, opt,
                             step, history, evals, cfg, first_loss)
        raise
    finally:
        bar.close()

    final_eval = {}
    if eval_data is not None:
        if evals["step"] and evals["step"][-1] == step:
            final_eval = {"loss": evals["loss"][-1], "accuracy": evals["accuracy"][-1]}
        elif status != "diverged":
            final_eval = run_eval(step)
    if ckpt is not None and step > start_step:
        # a diverged state never replaces the last good checkpoint: it goes beside it
        _save_checkpoint(ckpt if report is None else diverged_checkpoint_path(ckpt),
                         model, opt, step, history, evals, cfg, first_loss)
    if report is not None:
        if cfg.on_divergence == "raise":
            raise TrainingDivergedError(report)
        warnings.warn(str(report), RuntimeWarning, stacklevel=3)
    return TrainResult(
        history={k: np.asarray(v, dtype=np.int64 if k == "step" else np.float64)
                 for k, v in history.items()},
        evals={k: np.asarray(v, dtype=np.int64 if k == "step" else np.float64)
               for k, v in evals.items()},
        status=status, divergence=report, steps_done=step,
        seconds=time.perf_counter() - started, resumed_from=resumed_from,
        final_eval=final_eval,
    )
