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
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
import time
import warnings
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F
from tqdm.auto import tqdm

from .._repr import compact_repr
from .._validation import check_int
from .tasks import IGNORE_INDEX, SequenceTask

SCHEDULES = ("constant", "cosine")
ON_DIVERGENCE = ("stop", "raise")
PLATEAU_METRICS = ("loss", "accuracy")
#: Fields of :class:`TrainConfig` that may change between a run and its resumption.
_RESUMABLE_FIELDS = ("steps", "progress", "checkpoint_every", "eval_every", "eval_batch_size",
                     "target_accuracy", "plateau", "threads", "device", "on_divergence")


@dataclass(frozen=True)
class Plateau:
    r"""When a held-out curve has flattened: the test every neural experiment applies.

    Let :math:`v_1, \dots, v_n` be the held-out values of ``metric`` at the evaluations so far
    and :math:`w` = ``window``. The curve has *plateaued at evaluation n* when
    :math:`n > w`, :math:`n` is at least ``min_evals``, the curve has left its start (the best
    value so far improves on :math:`v_1` by at least ``min_gain``, relative for the loss,
    absolute for the accuracy), and the best of the last :math:`w` values improves on the
    best of all the earlier ones by less than ``min_delta``:

    .. math::

        \text{loss:}\quad \min_{i > n-w} v_i > (1 - \delta) \min_{i \le n-w} v_i,
        \qquad
        \text{accuracy:}\quad \max_{i > n-w} v_i < \max_{i \le n-w} v_i + \delta,

    a *relative* tolerance for the loss and an *absolute* one for the accuracy. A curve
    still rising in steps smaller than :math:`\delta` per window counts as flat; a curve
    stuck at its start is *not* flat — a stall before a late jump (a phase transition, as
    associative recall shows) is not a plateau; such a run trains to its step budget and
    is recorded as not plateaued. The figure shows every curve.

    Parameters
    ----------
    window : int, default 5
        Evaluations without a sufficient improvement.
    min_delta : float, default 0.02
        :math:`\delta` above (relative for the loss, absolute for the accuracy).
    metric : {"loss", "accuracy"}, default "loss"
        Which held-out curve (``TrainResult.evals[metric]``).
    min_evals : int, default 0
        No plateau before this many evaluations.
    min_gain : float, default 0.0
        No plateau before the best value has improved on the first evaluation by this much
        (relative for the loss, absolute for the accuracy).

    Examples
    --------
    >>> rule = Plateau(window=2, min_delta=0.05)
    >>> rule.first([2.0, 1.0, 0.6, 0.59, 0.58, 0.58])   # index of the first flat evaluation
    4
    >>> rule.reached([2.0, 1.0, 0.6])
    False
    """

    window: int = 5
    min_delta: float = 0.02
    metric: str = "loss"
    min_evals: int = 0
    min_gain: float = 0.0

    def __post_init__(self):
        check_int("Plateau.window", self.window, 1)
        check_int("Plateau.min_evals", self.min_evals, 0)
        for name in ("min_delta", "min_gain"):
            value = getattr(self, name)
            if isinstance(value, bool) or not (isinstance(value, int | float)
                                               and 0 <= value < 1):
                raise ValueError(f"Plateau.{name} must be a number in [0, 1), got {value!r}")
        if self.metric not in PLATEAU_METRICS:
            raise ValueError(f"Plateau.metric must be one of {PLATEAU_METRICS}, "
                             f"got {self.metric!r}")

    def reached(self, values) -> bool:
        """Whether the curve ``values`` (one value per evaluation, in order) is flat at its
        last evaluation. Non-finite values never count as an improvement."""
        v = np.asarray(values, dtype=float)
        if v.size <= self.window or v.size < self.min_evals:
            return False
        if self.metric == "loss":
            v = np.where(np.isfinite(v), v, np.inf)
            if not v.min() <= (1.0 - self.min_gain) * v[0]:
                return False  # still at its start: a stall, not a plateau
            before, last = v[:-self.window].min(), v[-self.window:].min()
            return not last <= (1.0 - self.min_delta) * before
        v = np.where(np.isfinite(v), v, -np.inf)
        if not v.max() >= v[0] + self.min_gain:
            return False
        before, last = v[:-self.window].max(), v[-self.window:].max()
        return not last >= before + self.min_delta

    def first(self, values) -> int | None:
        """0-based index of the first evaluation at which the curve is flat (None: never)."""
        for n in range(self.window + 1, len(values) + 1):
            if self.reached(values[:n]):
                return n - 1
        return None


@dataclass(frozen=True)
class TrainConfig:
    """Hyper-parameters of :func:`train` (every field can also be passed as a keyword).

    Attributes
    ----------
    steps : int
        Optimizer steps (one batch each).
    batch_size : int
        Sequences per batch (the last batch of an epoch may be smaller).
    lr : float
        Peak learning rate.
    weight_decay : float
        AdamW's decoupled weight decay.
    betas : (float, float)
        AdamW's β₁, β₂.
    warmup : int
        Steps of linear warm-up from lr / warmup to lr.
    schedule : {"constant", "cosine"}
        After warm-up: constant, or cosine decay to ``min_lr_ratio · lr`` at the last step.
    min_lr_ratio : float
        Floor of the cosine schedule as a fraction of lr.
    grad_clip : float or None
        Clip the global gradient norm to this value (None: no clipping).
    eval_every : int
        Evaluate on ``eval_data`` every this many steps (0: only at the end).
    eval_batch_size : int or None
        Batch size of evaluation (default: 4 × batch_size).
    target_accuracy : float or None
        Stop once the evaluation accuracy reaches it (checked at evaluations).
    plateau : Plateau or None
        Stop once the held-out curve has flattened (checked at evaluations; see
        :class:`Plateau`).
    crop : bool
        Cut every batch after its last scored position (``mask`` or ``eval_mask``). Exact for
        causal models only; then it just skips computing the padding.
    bucket : int
        0: batches are consecutive slices of each epoch's permutation. k > 0: each epoch's
        permutation is cut into pools of k batches, each pool sorted by scored length and
        cut into batches, and the epoch's batches shuffled (similar lengths per batch, for
        ``crop``).
    divergence_factor : float or None
        Stop when the batch loss exceeds this multiple of the first step's loss (None: only
        non-finite losses and gradients stop training).
    on_divergence : {"stop", "raise"}
        Return a result with a :class:`DivergenceReport`, or raise
        :class:`TrainingDivergedError`.
    seed : int
        Seeds the batch order and torch's global RNG.
    device : str
        ``"cpu"``, ``"cuda"``, ``"cuda:1"``, ... or ``"auto"`` (CUDA when available).
    threads : int or None
        torch intra-op threads during training (restored afterwards); None leaves them.
    checkpoint : str, Path or None
        File to save checkpoints to and resume from.
    checkpoint_every : int
        Save every this many steps (0: only at the end and on interruption).
    resume : bool
        Continue from ``checkpoint`` when it exists.
    progress : bool
        Show a tqdm progress bar.
    """

    steps: int = 1000
    batch_size: int = 32
    lr: float = 1e-3
    weight_decay: float = 0.0
    betas: tuple[float, float] = (0.9, 0.999)
    warmup: int = 0
    schedule: str = "constant"
    min_lr_ratio: float = 0.0
    grad_clip: float | None = 1.0
    eval_every: int = 0
    eval_batch_size: int | None = None
    target_accuracy: float | None = None
    plateau: Plateau | None = None
    crop: bool = False
    bucket: int = 0
    divergence_factor: float | None = 100.0
    on_divergence: str = "stop"
    seed: int = 0
    device: str = "cpu"
    threads: int | None = None
    checkpoint: str | Path | None = None
    checkpoint_every: int = 0
    resume: bool = True
    progress: bool = False

    def __post_init__(self):
        def need_int(name, minimum):
            check_int(f"TrainConfig.{name}", getattr(self, name), minimum)

        for name, minimum in (("steps", 1), ("batch_size", 1), ("warmup", 0), ("eval_every", 0),
                              ("checkpoint_every", 0), ("seed", 0), ("bucket", 0)):
            need_int(name, minimum)
        if self.eval_batch_size is not None:
            need_int("eval_batch_size", 1)
        if self.threads is not None:
            need_int("threads", 1)
        if not (isinstance(self.lr, int | float) and self.lr > 0 and math.isfinite(self.lr)):
            raise ValueError(f"TrainConfig.lr must be a finite number > 0, got {self.lr!r}")
        if not self.weight_decay >= 0:
            raise ValueError(f"TrainConfig.weight_decay must be >= 0, got {self.weight_decay!r}")
        if len(self.betas) != 2 or not all(0 <= b < 1 for b in self.betas):
            raise ValueError(f"TrainConfig.betas must be two numbers in [0, 1), got {self.betas!r}")
        if self.schedule not in SCHEDULES:
            raise ValueError(f"TrainConfig.schedule must be one of {SCHEDULES}, "
                             f"got {self.schedule!r}")
        if not 0 <= self.min_lr_ratio <= 1:
            raise ValueError(f"TrainConfig.min_lr_ratio must lie in [0, 1], "
                             f"got {self.min_lr_ratio!r}")
        if self.grad_clip is not None and not self.grad_clip > 0:
            raise ValueError(f"TrainConfig.grad_clip must be > 0 or None, got {self.grad_clip!r}")
        if self.divergence_factor is not None and not self.divergence_factor > 1:
            raise ValueError("TrainConfig.divergence_factor must be > 1 or None, got "
                             f"{self.divergence_factor!r}")
        if self.target_accuracy is not None and not 0 < self.target_accuracy <= 1:
            raise ValueError("TrainConfig.target_accuracy must lie in (0, 1], got "
                             f"{self.target_accuracy!r}")
        if self.plateau is not None and not isinstance(self.plateau, Plateau):
            raise TypeError(f"TrainConfig.plateau must be a Plateau or None, "
                            f"got {type(self.plateau).__name__}")
        if self.on_divergence not in ON_DIVERGENCE:
            raise ValueError(f"TrainConfig.on_divergence must be one of {ON_DIVERGENCE}, "
                             f"got {self.on_divergence!r}")

    def fingerprint(self) -> str:
        """Hash of the fields that define the training trajectory (checked on resume)."""
        d = {k: v for k, v in asdict(self).items()
             if k not in _RESUMABLE_FIELDS + ("checkpoint", "resume")}
        return hashlib.sha256(json.dumps(d, sort_keys=True, default=str).encode()).hexdigest()


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


# ----------------------------------------------------------------------------------- helpers

def resolve_device(device: str | torch.device) -> torch.device:
    """``"auto"`` -> CUDA when available, else CPU; anything else as torch.device."""
    if str(device) == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    dev = torch.device(device)
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"device={str(device)!r} asked for CUDA, which is not available here")
    return dev


@contextlib.contextmanager
def torch_threads(n: int | None):
    """Temporarily set torch's intra-op thread count (no-op for None)."""
    if n is None:
        yield
        return
    old = torch.get_num_threads()
    torch.set_num_threads(int(n))
    try:
        yield
    finally:
        torch.set_num_threads(old)


def _param_dtype(model: nn.Module) -> torch.dtype:
    for p in model.parameters():
        if p.is_floating_point():
            return p.dtype
    return torch.get_default_dtype()


@dataclass
class _Tensors:
    inputs: torch.Tensor
    targets: torch.Tensor
    mask: torch.Tensor
    eval_mask: torch.Tensor


def as_tensors(data: SequenceTask, *, dtype: torch.dtype = torch.float32,
               device: str | torch.device = "cpu") -> _Tensors:
    """The arrays of a task as tensors (tokens and labels int64, reals in ``dtype``)."""
    if not isinstance(data, SequenceTask):
        raise TypeError(f"data must be a SequenceTask, got {type(data).__name__}")
    if data.vocab_size is not None:
        inputs = torch.as_tensor(data.inputs, dtype=torch.int64)
    else:
        inputs = torch.as_tensor(data.inputs, dtype=dtype)
    if data.kind == "classification":
        targets = torch.as_tensor(data.targets, dtype=torch.int64)
    else:
        targets = torch.as_tensor(data.targets, dtype=dtype)
    return _Tensors(inputs.to(device), targets.to(device),
                    torch.as_tensor(data.mask).to(device),
                    torch.as_tensor(data.eval_mask).to(device))


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


def batch_indices(n: int, batch_size: int, seed: int, step: int) -> np.ndarray:
    """Indices of the batch at ``step``: batch ``step % E`` of epoch ``step // E``'s permutation
    ``default_rng([seed, epoch]).permutation(n)``, E = ceil(n / batch_size)."""
    per_epoch = -(-n // batch_size)
    epoch, j = divmod(step, per_epoch)
    perm = np.random.default_rng([seed, epoch]).permutation(n)
    return perm[j * batch_size:(j + 1) * batch_size]


def scored_lengths(data: SequenceTask) -> np.ndarray:
    """Per sequence, 1 + the last position scored by ``mask`` or ``eval_mask`` (0: none)."""
    scored = np.asarray(data.mask) | np.asarray(data.eval_mask)
    last = scored.shape[1] - np.argmax(scored[:, ::-1], axis=1)
    return np.where(scored.any(axis=1), last, 0)


def bucketed_batch_indices(lengths: np.ndarray, batch_size: int, bucket: int, seed: int,
                           step: int) -> np.ndarray:
    """Indices of the batch at ``step`` when batches are bucketed by length.

    Epoch ``e`` (E = ceil(n / batch_size) batches): the permutation
    ``default_rng([seed, e]).permutation(n)`` is cut into pools of ``bucket * batch_size``
    sequences; each pool is sorted by ``lengths`` (stable) and cut into batches; the epoch's
    batches are then put in the order ``default_rng([seed, e, 1]).permutation(E)``. Every
    sequence appears once per epoch.
    """
    n = len(lengths)
    per_epoch = -(-n // batch_size)
    epoch, j = divmod(step, per_epoch)
    perm = np.random.default_rng([seed, epoch]).permutation(n)
    pool = bucket * batch_size
    batches = []
    for start in range(0, n, pool):
        part = perm[start:start + pool]
        part = part[np.argsort(lengths[part], kind="stable")]
        batches.extend(part[i:i + batch_size] for i in range(0, len(part), batch_size))
    order = np.random.default_rng([seed, epoch, 1]).permutation(len(batches))
    return batches[order[j]]


def lr_factor(step: int, cfg: TrainConfig) -> float:
    """Multiplier of cfg.lr at 0-based ``step``: linear warm-up, then constant or cosine."""
    if cfg.warmup and step < cfg.warmup:
        return (step + 1) / cfg.warmup
    if cfg.schedule == "constant":
        return 1.0
    span = max(cfg.steps - cfg.warmup - 1, 1)
    frac = min(max(step - cfg.warmup, 0) / span, 1.0)
    return cfg.min_lr_ratio + (1 - cfg.min_lr_ratio) * 0.5 * (1 + math.cos(math.pi * frac))


# -------------------------------------------------------------------------------- evaluation

@torch.no_grad()
def predict(model: nn.Module, data: SequenceTask, *, batch_size: int = 64,
            device: str | torch.device | None = None) -> np.ndarray:
    """Model outputs for every sequence of ``data`` as a numpy array (eval mode, no grad)."""
    dev = resolve_device(device) if device is not None else next(model.parameters()).device
    tens = as_tensors(data, dtype=_param_dtype(model))
    was_training = model.training
    model.eval()
    try:
        outs = []
        for i in range(0, len(data), batch_size):
            outs.append(model(tens.inputs[i:i + batch_size].to(dev)).float().cpu())
    finally:
        model.train(was_training)
    return torch.cat(outs).numpy()


@torch.no_grad()
def evaluate(model: nn.Module, data: SequenceTask, *, batch_size: int = 64,
             device: str | torch.device | None = None, crop: bool = False) -> dict[str, float]:
    """Loss and accuracy over ``data.eval_mask`` (accuracy NaN for regression).

    The loss is the mean over all scored positions of the whole set (not a mean of batch
    means). ``crop`` (causal models only): batches of sequences sorted by scored length, each
    cut after its last scored position; the same numbers up to round-off, less padding.
    """
    dev = resolve_device(device) if device is not None else next(model.parameters()).device
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


# ----------------------------------------------------------------------------- checkpoints

def _save_checkpoint(path: Path, model, opt, step, history, evals, cfg, first_loss):
    state = {
        "step": step,
        "model": model.state_dict(),
        "optimizer": opt.state_dict(),
        "history": {k: list(v) for k, v in history.items()},
        "evals": {k: list(v) for k, v in evals.items()},
        "fingerprint": cfg.fingerprint(),
        "first_loss": first_loss,
        "torch_rng": torch.get_rng_state(),
        "cuda_rng": torch.cuda.get_rng_state_all() if torch.cuda.is_available() else None,
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    torch.save(state, tmp)
    os.replace(tmp, path)  # atomic: a crash leaves the previous checkpoint intact


def _load_checkpoint(path: Path, model, opt, cfg):
    state = torch.load(path, map_location="cpu", weights_only=False)
    if state["fingerprint"] != cfg.fingerprint():
        raise ValueError(f"checkpoint {path} was written with different training settings "
                         "(only steps, eval/checkpoint frequency, threads, device and progress "
                         "may change on resume); delete it or pass resume=False")
    model.load_state_dict(state["model"])
    opt.load_state_dict(state["optimizer"])
    torch.set_rng_state(state["torch_rng"])
    if state.get("cuda_rng") is not None and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda_rng"])
    return state


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

    device = resolve_device(cfg.device)
    started = time.perf_counter()
    with torch_threads(cfg.threads):
        return _train(model, data, cfg, eval_data, callback, device, started)


def _train(model, data, cfg, eval_data, callback, device, started):
    model.to(device)
    model.train()
    tens = as_tensors(data, dtype=_param_dtype(model),
                      device=device if device.type == "cuda" else "cpu")
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr, betas=tuple(cfg.betas),
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
            lr = cfg.lr * lr_factor(step, cfg)
            for group in opt.param_groups:
                group["lr"] = lr
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
            _save_checkpoint(ckpt, model, opt, step, history, evals, cfg, first_loss)
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
        _save_checkpoint(ckpt, model, opt, step, history, evals, cfg, first_loss)
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
