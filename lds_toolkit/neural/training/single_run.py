"""One training run, :func:`train`: a small, seeded loop for the sequence tasks of
:mod:`lds_toolkit.neural.tasks`, and its result :class:`TrainResult`.

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

Several runs at once. :func:`~lds_toolkit.neural.training.run_group.train_group` trains runs of one
architecture together (stacked under ``torch.func.vmap``), each with the numbers it has here
alone; it runs the same loop.

Where things live. This module holds :func:`train` and :class:`TrainResult`; the loop is
:mod:`~lds_toolkit.neural.training._loop` (a run's state
:mod:`~lds_toolkit.neural.training._run_state`, the step's computation
:mod:`~lds_toolkit.neural.training._engines`); the other modules of
:mod:`lds_toolkit.neural.training` hold the config, batching, evaluation, checkpoints,
divergence and runtime (the package docstring lists them), and the package exports their
public names.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field, fields, replace
from typing import Any

import numpy as np
from torch import nn

from ..._repr import compact_repr
from .._validation import input_checks
from ..tasks import SequenceTask
from ._call_checks import check_train_call, setting_notes
from ._loop import check_deadline, run_loop
from ._run_state import TrainRun
from .checkpoints import check_checkpoint_path
from .config import TrainConfig
from .divergence import DivergenceReport, TrainingDivergedError
from .evaluation import _check_finite_data, _check_token_range
from .runtime import resolve_device, torch_threads

__all__ = ["train", "TrainResult"]


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
    notes : list of str
        What the settings made the run do other than their values suggest (a ``warmup``
        longer than ``steps``: the learning rate never reached ``lr``); empty for most runs.
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
    #: What the run's settings made it do other than their values suggest (a warm-up
    #: longer than the run: the fraction of lr it reached), as warned at its start; set by
    #: :func:`train` (not a constructor argument).
    notes: list[str] = field(default_factory=list, init=False)

    @property
    def diverged(self) -> bool:
        """Training stopped on a divergence (``divergence`` says where)."""
        return self.status == "diverged"

    def __repr__(self) -> str:
        loss = self.history.get("loss")
        last = float(loss[-1]) if loss is not None and len(loss) else float("nan")
        extra = {"notes": self.notes} if self.notes else {}
        return compact_repr(self, status=self.status, steps_done=self.steps_done,
                            last_loss=last, final_eval=self.final_eval, seconds=self.seconds,
                            **extra)


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
    cfg, device = _checked_call(model, data, config, eval_data, callback, overrides)
    started = time.perf_counter()
    with torch_threads(cfg.threads), input_checks(False):
        run = TrainRun(model, data, cfg, eval_data, callback, device)
        run.prepare()
        check_deadline([run])
        if run.trains:
            run_loop([run], device, started, f"train {data.name}")
        else:  # resumed from the checkpoint of a finished run
            run.finish(run.start_step, started)
    return _result(run)


def _checked_call(model, data, config, eval_data, callback, overrides, what: str = "train"):
    """``(cfg, device)`` of a call ``train(model, data, config, ...)`` once its arguments
    are checked: ``config`` with the keyword ``overrides``, the data checked once (finite
    values, token ids the model accepts), the call's arguments against each other
    (:func:`~lds_toolkit.neural.training._call_checks.check_train_call`) and the checkpoint path."""
    cfg = config if config is not None else TrainConfig()
    if not isinstance(cfg, TrainConfig):
        raise TypeError(f"{what}: config must be a TrainConfig, got {type(cfg).__name__}")
    unknown = set(overrides) - {f.name for f in fields(TrainConfig)}
    if unknown:
        raise TypeError(f"{what}() got unknown settings {sorted(unknown)}; "
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
    return cfg, device


def _result(run: TrainRun, stacklevel: int = 3) -> TrainResult:
    """The run's :class:`TrainResult`; a divergence is raised (``on_divergence="raise"``)
    or warned about."""
    if run.report is not None:
        if run.cfg.on_divergence == "raise":
            raise TrainingDivergedError(run.report)
        warnings.warn(str(run.report), RuntimeWarning, stacklevel=stacklevel)
    result = TrainResult(**run.result_fields())
    result.notes = setting_notes(run.cfg)
    return result
