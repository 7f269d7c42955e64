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

Divergence. Before an optimizer update the loop checks the batch loss and the gradient norm:
a non-finite value, or a loss above ``divergence_factor`` times the first step's loss, stops
training *before* the offending update. The result then carries a :class:`DivergenceReport`
naming the step (``on_divergence="raise"`` raises :class:`TrainingDivergedError` instead).
:func:`predict` and :func:`evaluate` refuse a model whose parameters hold NaN or inf.

Host reads. A step runs without waiting for the device: its loss, gradient norm and
accuracy count stay on the device and are read, for every step since the last reading, in
one transfer every ``log_every`` steps (and at every step that evaluates, checkpoints or
stops), before that step's update. With the default ``log_every=1`` every step is read
before its update, as described above; with ``log_every > 1`` a divergence is found at the
next reading, reported with the step where it happened (:attr:`DivergenceReport.found_at`
says where it was found: the updates in between were applied). The data are checked once,
before the first step (finite values, token ids the model's ``vocab_size`` accepts), and
the layers' per-call input checks are off while training.

Precision and compilation. ``precision="bf16"`` runs the forward pass and the loss under
bfloat16 autocast with float32 master weights, ``"tf32"`` uses TF32 matrix products on CUDA
(float32 on a CPU); ``compile=True`` trains through ``torch.compile(model)`` (CUDA graphs on
CUDA; ``length_multiple`` keeps cropped shapes few). See :class:`TrainConfig`.

Checkpoints. ``checkpoint=PATH`` saves the model, optimizer, RNG states, history, the
callback's own state (a callback with ``state_dict``/``load_state_dict``) and the config's
fingerprint every ``checkpoint_every`` steps, every ``checkpoint_seconds`` of wall time, on
interruption and at the end, each time atomically (temporary file, then rename). The file is
a ``torch.save`` of tensors and state dicts plus JSON strings, with a digest of its content,
read back with ``torch.load(weights_only=True)``: a crafted file cannot run code, it is
refused (:class:`CheckpointError`) like a corrupted, foreign or stale one (or, with
``bad_checkpoint="restart"``, set aside with a :class:`CheckpointWarning`). A run that
diverges never overwrites PATH: the last good checkpoint stays there, resumable, and the
diverged state goes to :func:`diverged_checkpoint_path` (``run.pt`` -> ``run.diverged.pt``)
for inspection. A run resumed from a checkpoint of a finished run (its target accuracy or
plateau reached, all its steps done) trains no further.

Time budget. With ``deadline`` (a ``time.time()`` value) the loop saves a checkpoint and
raises :class:`~lds_toolkit._budget.TimeBudgetReached` at the first step boundary past it;
the same call then resumes.

Where things live. This module holds :func:`train`, its loop and :class:`TrainResult`; it
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
* :mod:`lds_toolkit.neural.divergence`: :class:`DivergenceReport`,
  :class:`TrainingDivergedError` and the reading of the steps' numbers;
* :mod:`lds_toolkit.neural.runtime`: :func:`resolve_device`, :func:`torch_threads`, the
  precision context.
"""

from __future__ import annotations

import contextlib
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from .._budget import TimeBudgetReached, passed
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
    CheckpointWarning,
    _load_checkpoint,
    _save_checkpoint,
    check_checkpoint_path,
    diverged_checkpoint_path,
)
from .checkpoints import _as_tensors_dict as _as_tensors_dict
from .divergence import DivergenceReport, StepReader, TrainingDivergedError
from .evaluation import (
    _batch_loss,
    _check_finite_data,
    _check_model_output,
    _check_token_range,
    evaluate,
    non_finite_parameter,
    predict,
)
from .evaluation import _require_finite_parameters as _require_finite_parameters
from .runtime import precision, resolve_device, torch_threads
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
    "CHECKPOINT_FORMAT", "CheckpointError", "CheckpointWarning", "diverged_checkpoint_path",
    "resolve_device", "torch_threads", "TimeBudgetReached",
]


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


def _optimizer(model: nn.Module, cfg: TrainConfig) -> torch.optim.Optimizer:
    return torch.optim.AdamW(_param_groups(model, cfg), lr=cfg.lr, betas=tuple(cfg.betas),
                             weight_decay=cfg.weight_decay)


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
        ``callback(step, record)`` for every applied step, with the step's record (loss,
        accuracy, grad_norm, lr), when the step is read (every step with the default
        ``log_every=1``, right after its update and any evaluation); returning True stops
        training (status ``"completed"``). An exception raised inside it (e.g.
        KeyboardInterrupt) saves a checkpoint first when one is configured, then propagates.
        A callback that keeps numbers of its own gives them to checkpoints with
        ``state_dict()`` (JSON-serialisable) and takes them back with ``load_state_dict()``.

    Returns
    -------
    TrainResult

    Raises
    ------
    TimeBudgetReached
        ``deadline`` passed (after saving a checkpoint, when one is configured).
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

    # the data are checked once here; inside the model a non-finite value is a divergence,
    # reported with its step from the loss, so the layers' per-call input checks are off
    for name, task in (("data", data), ("eval_data", eval_data)):
        if task is not None:
            _check_finite_data(task, name)
            _check_token_range(model, task, name)
    device = resolve_device(cfg.device)
    # masks, callback, schedule, batch size, model against data (_call_checks.py)
    check_train_call(model, data, cfg, callback, eval_data, device)
    if cfg.checkpoint is not None:  # a path that cannot be written fails now, not at the end
        check_checkpoint_path(cfg.checkpoint)
    started = time.perf_counter()
    with torch_threads(cfg.threads), input_checks(False):
        return _train(model, data, cfg, eval_data, callback, device, started)


def _resume(ckpt: Path, model, opt, cfg, callback):
    """``(state, refused)``: the checkpoint's state loaded into ``model``, ``opt`` and the
    callback, or None when there is none; with ``bad_checkpoint="restart"`` a checkpoint
    that cannot be used is ``refused`` (the model is as it was, the optimizer must be made
    again, and a :class:`CheckpointWarning` says why)."""
    if not (cfg.resume and ckpt.exists()):
        return None, False
    before = None
    if cfg.bad_checkpoint == "restart":
        before = {k: v.detach().clone() for k, v in model.state_dict().items()}
    try:
        state = _load_checkpoint(ckpt, model, opt, cfg)
    except CheckpointError as exc:
        if before is None:
            raise
        model.load_state_dict(before)
        warnings.warn(CheckpointWarning(str(exc)), stacklevel=4)
        return None, True
    if state["callback"] is not None and hasattr(callback, "load_state_dict"):
        callback.load_state_dict(state["callback"])
    return state, False


def _compiled(model: nn.Module, cfg: TrainConfig, device: torch.device):
    """The callable a training step runs (``torch.compile(model)`` with ``cfg.compile``) and
    whether it records CUDA graphs (then every step is marked as a new one)."""
    options = cfg.compile_options(device)
    if options is None:
        return model, False
    graphs = device.type == "cuda" and options.get("mode") in ("reduce-overhead",
                                                               "max-autotune")
    return torch.compile(model, **options), graphs


def _train(model, data, cfg, eval_data, callback, device, started):
    model.to(device)
    model.train()
    tens = as_tensors(data, dtype=_param_dtype(model),
                      device=device if device.type == "cuda" else "cpu")
    opt = _optimizer(model, cfg)
    keys = ("step", "loss", "accuracy", "grad_norm", "lr")
    history: dict[str, list] = {k: [] for k in keys}
    evals: dict[str, list] = {"step": [], "loss": [], "accuracy": []}
    start_step, first_loss, resumed_from = 0, None, None
    ckpt = Path(cfg.checkpoint) if cfg.checkpoint is not None else None
    torch.manual_seed(cfg.seed)
    state, refused = _resume(ckpt, model, opt, cfg, callback) if ckpt else (None, False)
    if refused:
        opt = _optimizer(model, cfg)  # a refused file may have been half loaded into it
        torch.manual_seed(cfg.seed)
    elif state is not None:
        start_step, first_loss, resumed_from = state["step"], state["first_loss"], state["step"]
        history = {k: list(state["history"][k]) for k in keys}
        evals = {k: list(state["evals"][k]) for k in evals}
    fwd, graphs = _compiled(model, cfg, device)

    eval_bs = cfg.eval_batch_size or 4 * cfg.batch_size
    lengths = scored_lengths(data) if (cfg.crop or cfg.bucket) else None
    is_cls = data.kind == "classification"
    status, report = "completed", None
    reader = StepReader(cfg.divergence_factor, first_loss,
                        torch.float32 if device.type == "mps" else torch.float64)
    last_save = time.monotonic()

    def run_eval(step_done):
        res = evaluate(model, eval_data, batch_size=eval_bs, device=device, crop=cfg.crop,
                       precision=cfg.precision)
        model.train()
        evals["step"].append(step_done)
        evals["loss"].append(res["loss"])
        evals["accuracy"].append(res["accuracy"])
        return res

    def stop_rule():
        """The status an evaluation just recorded asks for (None: train on)."""
        if cfg.target_accuracy is not None and evals["accuracy"][-1] >= cfg.target_accuracy:
            return "target_reached"
        if cfg.plateau is not None and cfg.plateau.reached(evals[cfg.plateau.metric]):
            return "plateaued"
        return None

    def save(path, end_status=None):
        nonlocal last_save
        cb_state = callback.state_dict() if hasattr(callback, "state_dict") else None
        _save_checkpoint(path, model, opt, step, history, evals, cfg, reader.first_loss,
                         status=end_status, callback_state=cb_state)
        last_save = time.monotonic()

    def add(records):
        for r in records:
            for k in keys:
                history[k].append(r[k])

    step = start_step
    if step and eval_data is not None and evals["step"] and evals["step"][-1] == step:
        status = stop_rule() or status  # resumed after the evaluation that ended the run
    if passed(cfg.deadline) and step < cfg.steps and status == "completed":
        raise TimeBudgetReached(f"train: the deadline had passed before step {step}")
    bar = tqdm(total=cfg.steps, initial=min(start_step, cfg.steps), disable=not cfg.progress,
               desc=f"train {data.name}", leave=False, dynamic_ncols=True)
    try:
        while step < cfg.steps and status == "completed":
            if cfg.bucket:
                idx = bucketed_batch_indices(lengths, cfg.batch_size, cfg.bucket, cfg.seed,
                                             step)
            else:
                idx = batch_indices(len(data), cfg.batch_size, cfg.seed, step)
            cut = tens.inputs.shape[1]
            if cfg.crop:
                last = max(int(lengths[idx].max()), 1)
                cut = min(-(-last // cfg.length_multiple) * cfg.length_multiple, cut)
            idx = torch.as_tensor(idx)
            x, y = tens.inputs[idx][:, :cut].to(device), tens.targets[idx][:, :cut].to(device)
            m, em = tens.mask[idx][:, :cut].to(device), tens.eval_mask[idx][:, :cut].to(device)
            factor = lr_factor(step, cfg)
            lr = cfg.lr * factor
            for group in opt.param_groups:
                # checkpoints from before parameter groups have no "base_lr": one group at lr
                group["lr"] = group.get("base_lr", cfg.lr) * factor
            if graphs:
                torch.compiler.cudagraph_mark_step_begin()
            with precision(cfg.precision, device):
                out = fwd(x)
                if step == start_step:
                    _check_model_output(out, data, _Tensors(x, y, m, em))
                loss = _batch_loss(out if is_cls else out.to(y.dtype), y, m, data.kind)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            params = [p for p in model.parameters() if p.grad is not None]
            gnorm = torch.nn.utils.clip_grad_norm_(
                params, cfg.grad_clip if cfg.grad_clip is not None else float("inf"))
            if is_cls:
                correct, count = ((out.detach().argmax(dim=-1) == y) & em).sum(), em.sum()
            else:
                correct = count = None
            reader.push(step, lr, loss, gnorm, correct, count)
            done = step + 1
            evaluating = eval_data is not None and cfg.eval_every and done % cfg.eval_every == 0
            saving = ckpt is not None and (
                (cfg.checkpoint_every and done % cfg.checkpoint_every == 0)
                or (cfg.checkpoint_seconds is not None
                    and time.monotonic() - last_save >= cfg.checkpoint_seconds))
            out_of_time = passed(cfg.deadline) and done < cfg.steps
            reading = (done % cfg.log_every == 0 or done == cfg.steps or evaluating or saving
                       or out_of_time)
            records = []
            if reading:  # the one device-to-host transfer of this step
                records, bad = reader.read(step)
                add(records)
                if bad is not None:
                    report = DivergenceReport(**bad)
                    status = "diverged"
                    break
            opt.step()
            step = done
            bar.update(1)
            if not reading:
                continue
            if cfg.progress:
                bar.set_postfix(loss=f"{records[-1]['loss']:.4g}", refresh=False)
            if evaluating:
                run_eval(step)
                rule = stop_rule()
                if rule is not None:
                    status = rule
                    break
            if saving:  # after the evaluation of this step, which a resumed run will not redo
                save(ckpt)
            if callback is not None and any([callback(r["step"], r) for r in records]):
                break
            if out_of_time:
                if ckpt is not None:
                    save(ckpt)
                    start_step = step  # nothing new for the handler below to save
                raise TimeBudgetReached(f"train: the deadline passed after step {step}"
                                        + (f"; checkpoint {ckpt} resumes" if ckpt else ""))
    except BaseException:
        if ckpt is not None and step > start_step:
            with contextlib.suppress(Exception):  # steps applied but not read yet
                add(reader.read(step, check=False, before=step)[0])
            for k in keys:  # a step read, then interrupted before its update, is not kept
                del history[k][step:]
            good = non_finite_parameter(model) is None
            save(ckpt if good else diverged_checkpoint_path(ckpt))
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
        save(ckpt if report is None else diverged_checkpoint_path(ckpt), status)
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
