"""One training run inside the loop of :mod:`lds_toolkit.neural.training._loop`: its model,
data, settings, optimizer, history, evaluations, checkpoints and how it ended.

:func:`~lds_toolkit.neural.training.train` trains one :class:`TrainRun`;
:func:`~lds_toolkit.neural.training.run_group.train_group` several at once. Everything a run owns
(seed and batch order, optimizer state, the reading of its numbers and the divergence rule,
evaluations and the stop rules, checkpoints, callback) lives here, so that a run trained in a
group keeps the numbers it has alone. :meth:`TrainRun.prepare` builds the optimizer and
resumes from a checkpoint; :meth:`TrainRun.finish` does what follows the last step (the final
evaluation, the last checkpoint) and :meth:`TrainRun.result_fields` gives the fields of its
:class:`~lds_toolkit.neural.training.TrainResult`.
"""

from __future__ import annotations

import time
import warnings
from pathlib import Path

import numpy as np
import torch
from torch import nn

from ..layers._ssm_base import ssm_parameter_groups
from ..tasks import SequenceTask
from .batching import (
    _param_dtype,
    as_tensors,
    batch_indices,
    bucketed_batch_indices,
    scored_lengths,
)
from .checkpoints import (
    CheckpointError,
    CheckpointWarning,
    _load_checkpoint,
    _save_checkpoint,
    diverged_checkpoint_path,
)
from .config import TrainConfig
from .divergence import StepReader
from .evaluation import evaluate

#: The per-step columns of a run's history.
HISTORY_KEYS = ("step", "loss", "accuracy", "grad_norm", "lr")


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


def adamw(groups: list[dict], cfg: TrainConfig) -> torch.optim.Optimizer:
    """AdamW over parameter ``groups`` with the betas and weight decay of ``cfg``."""
    return torch.optim.AdamW(groups, lr=cfg.lr, betas=tuple(cfg.betas),
                             weight_decay=cfg.weight_decay)


def _optimizer(model: nn.Module, cfg: TrainConfig) -> torch.optim.Optimizer:
    return adamw(_param_groups(model, cfg), cfg)


class TrainRun:
    """The state of one run (see the module docstring).

    Parameters
    ----------
    model, data, cfg, eval_data, callback
        As :func:`~lds_toolkit.neural.training.train` takes them (checked there).
    device : torch.device
    """

    def __init__(self, model: nn.Module, data: SequenceTask, cfg: TrainConfig,
                 eval_data: SequenceTask | None, callback, device: torch.device):
        self.model, self.data, self.cfg = model, data, cfg
        self.eval_data, self.callback, self.device = eval_data, callback, device
        self.is_cls = data.kind == "classification"
        self.ckpt = Path(cfg.checkpoint) if cfg.checkpoint is not None else None
        self.eval_bs = cfg.eval_batch_size or 4 * cfg.batch_size
        self.lengths = scored_lengths(data) if (cfg.crop or cfg.bucket) else None
        self.history: dict[str, list] = {k: [] for k in HISTORY_KEYS}
        self.evals: dict[str, list] = {"step": [], "loss": [], "accuracy": []}
        self.start_step, self.resumed_from = 0, None
        self.status, self.report = "completed", None
        self.final_eval: dict[str, float] = {}
        self.records: list[dict] = []  # those of the last reading
        self.steps_done = 0
        self.seconds = 0.0
        #: torch's RNG state a checkpoint records for this run (None: the global state at
        #: the time of saving, as a run trained alone has it)
        self.rng_state: torch.Tensor | None = None

    # ------------------------------------------------------------------------ setting up

    def prepare(self) -> None:
        """Move the model to the device, build the optimizer and resume from the checkpoint
        (``TrainConfig.resume``); seeds torch's global RNG with ``cfg.seed`` first."""
        cfg, model = self.cfg, self.model
        model.to(self.device)
        model.train()
        self.tens = as_tensors(self.data, dtype=_param_dtype(model),
                               device=self.device if self.device.type == "cuda" else "cpu")
        self.opt = _optimizer(model, cfg)
        first_loss = None
        torch.manual_seed(cfg.seed)
        state, refused = self._resume() if self.ckpt else (None, False)
        if refused:
            self.opt = _optimizer(model, cfg)  # a refused file may have been half loaded
            torch.manual_seed(cfg.seed)
        elif state is not None:
            self.start_step, first_loss = state["step"], state["first_loss"]
            self.resumed_from = state["step"]
            self.history = {k: list(state["history"][k]) for k in HISTORY_KEYS}
            self.evals = {k: list(state["evals"][k]) for k in self.evals}
        self.steps_done = self.start_step
        self.reader = StepReader(cfg.divergence_factor, first_loss,
                                 torch.float32 if self.device.type == "mps" else torch.float64)
        if self.start_step and self.eval_data is not None and self.evals["step"] \
                and self.evals["step"][-1] == self.start_step:
            self.status = self.stop_rule() or self.status  # resumed after the final evaluation

    def _resume(self):
        """``(state, refused)``: the checkpoint's state loaded into the model, optimizer and
        callback, or None when there is none; with ``bad_checkpoint="restart"`` a checkpoint
        that cannot be used is ``refused`` (the model is as it was, the optimizer must be made
        again, and a :class:`CheckpointWarning` says why)."""
        cfg, model = self.cfg, self.model
        if not (cfg.resume and self.ckpt.exists()):
            return None, False
        before = None
        if cfg.bad_checkpoint == "restart":
            before = {k: v.detach().clone() for k, v in model.state_dict().items()}
        try:
            state = _load_checkpoint(self.ckpt, model, self.opt, cfg)
        except CheckpointError as exc:
            if before is None:
                raise
            model.load_state_dict(before)
            warnings.warn(CheckpointWarning(str(exc)), stacklevel=5)
            return None, True
        if state["callback"] is not None and hasattr(self.callback, "load_state_dict"):
            self.callback.load_state_dict(state["callback"])
        return state, False

    @property
    def trains(self) -> bool:
        """Whether the run has steps left (not finished, not at ``steps``)."""
        return self.status == "completed" and self.start_step < self.cfg.steps

    # ------------------------------------------------------------------------- each step

    def batch(self, step: int) -> tuple[torch.Tensor, int]:
        """The indices of the run's batch at ``step`` and where cropping cuts it (the padded
        length without ``crop``)."""
        cfg = self.cfg
        if cfg.bucket:
            idx = bucketed_batch_indices(self.lengths, cfg.batch_size, cfg.bucket, cfg.seed,
                                         step)
        else:
            idx = batch_indices(len(self.data), cfg.batch_size, cfg.seed, step)
        cut = self.tens.inputs.shape[1]
        if cfg.crop:
            last = max(int(self.lengths[idx].max()), 1)
            cut = min(-(-last // cfg.length_multiple) * cfg.length_multiple, cut)
        return torch.as_tensor(idx), cut

    def tensors(self, idx: torch.Tensor, cut: int):
        """Inputs, targets, mask and evaluation mask of the batch ``idx`` up to ``cut``, on
        the device."""
        t, dev = self.tens, self.device
        return (t.inputs[idx][:, :cut].to(dev), t.targets[idx][:, :cut].to(dev),
                t.mask[idx][:, :cut].to(dev), t.eval_mask[idx][:, :cut].to(dev))

    def add(self, records: list[dict]) -> None:
        for r in records:
            for k in HISTORY_KEYS:
                self.history[k].append(r[k])

    def run_eval(self, step_done: int) -> dict:
        res = evaluate(self.model, self.eval_data, batch_size=self.eval_bs, device=self.device,
                       crop=self.cfg.crop, precision=self.cfg.precision)
        self.model.train()
        self.evals["step"].append(step_done)
        self.evals["loss"].append(res["loss"])
        self.evals["accuracy"].append(res["accuracy"])
        return res

    def stop_rule(self) -> str | None:
        """The status an evaluation just recorded asks for (None: train on)."""
        cfg, evals = self.cfg, self.evals
        if cfg.target_accuracy is not None and evals["accuracy"][-1] >= cfg.target_accuracy:
            return "target_reached"
        if cfg.plateau is not None and cfg.plateau.reached(evals[cfg.plateau.metric]):
            return "plateaued"
        return None

    def save(self, path: Path, step: int, end_status: str | None = None) -> None:
        cb = self.callback
        cb_state = cb.state_dict() if hasattr(cb, "state_dict") else None
        _save_checkpoint(path, self.model, self.opt, step, self.history, self.evals, self.cfg,
                         self.reader.first_loss, status=end_status, callback_state=cb_state,
                         rng_state=self.rng_state)

    def save_interrupted(self, step: int) -> None:
        """After an exception at ``step``: keep the steps applied but not read yet, drop a
        step read but not applied, and save (a diverged state beside the checkpoint)."""
        from contextlib import suppress

        from .evaluation import non_finite_parameter

        if self.ckpt is None or step <= self.start_step:
            return
        with suppress(Exception):  # steps applied but not read yet
            self.add(self.reader.read(step, check=False, before=step)[0])
        for k in HISTORY_KEYS:  # a step read, then interrupted before its update, is not kept
            del self.history[k][step:]
        good = non_finite_parameter(self.model) is None
        self.save(self.ckpt if good else diverged_checkpoint_path(self.ckpt), step)

    # ---------------------------------------------------------------------- ending

    def finish(self, step: int, started: float) -> None:
        """What follows a run's last step ``step`` (steps applied): the final evaluation
        (unless the last step had one, or the run diverged) and the last checkpoint (a
        diverged state beside the last good one)."""
        self.steps_done = step
        if self.eval_data is not None:
            ev = self.evals
            if ev["step"] and ev["step"][-1] == step:
                self.final_eval = {"loss": ev["loss"][-1], "accuracy": ev["accuracy"][-1]}
            elif self.status != "diverged":
                self.final_eval = self.run_eval(step)
        if self.ckpt is not None and step > self.start_step:
            self.save(self.ckpt if self.report is None else diverged_checkpoint_path(self.ckpt),
                      step, self.status)
        self.seconds = time.perf_counter() - started

    def result_fields(self) -> dict:
        """The fields of the run's :class:`~lds_toolkit.neural.training.TrainResult`."""
        def arrays(cols):
            return {k: np.asarray(v, dtype=np.int64 if k == "step" else np.float64)
                    for k, v in cols.items()}

        return {"history": arrays(self.history), "evals": arrays(self.evals),
                "status": self.status, "divergence": self.report,
                "steps_done": self.steps_done, "seconds": self.seconds,
                "resumed_from": self.resumed_from, "final_eval": self.final_eval}
