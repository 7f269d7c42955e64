"""What a training run is asked to do: :class:`TrainConfig`, :class:`Plateau`, the schedule.

:class:`TrainConfig` holds the hyper-parameters of :func:`~lds_toolkit.neural.training.train`
and validates them; :meth:`TrainConfig.fingerprint` hashes the fields that define the
training trajectory (a checkpoint records it, and resuming checks it). :class:`Plateau` is the
test for a flattened held-out curve, used by the loop and after the fact on stored curves.
:func:`lr_factor` is the learning-rate schedule: linear warm-up, then constant or cosine.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import torch

from .._validation import check_int, check_real

SCHEDULES = ("constant", "cosine")
ON_DIVERGENCE = ("stop", "raise")
PLATEAU_METRICS = ("loss", "accuracy")
#: Fields of :class:`TrainConfig` that may change between a run and its resumption.
_RESUMABLE_FIELDS = ("steps", "progress", "checkpoint_every", "eval_every", "eval_batch_size",
                     "target_accuracy", "plateau", "threads", "device", "on_divergence")
#: Fields left out of the fingerprint while None, so checkpoints written before they existed
#: still resume.
_OPTIONAL_FIELDS = ("ssm_lr", "ssm_weight_decay")


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
    ssm_lr : float or None
        Peak learning rate of the SSM parameters (``log_dt``, ``A``, ``B``, ``P`` of every S4
        SSM in the model, :func:`~lds_toolkit.neural.ssm_parameter_groups`); None: ``lr``.
        The schedule scales it like ``lr``.
    ssm_weight_decay : float or None
        Weight decay of the SSM parameters (state-spaces/s4 uses 0); None: ``weight_decay``.
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
    ssm_lr: float | None = None
    ssm_weight_decay: float | None = None
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
        def need_real(name, optional=False, **bounds):
            value = getattr(self, name)
            if not (optional and value is None):
                check_real(f"TrainConfig.{name}", value, **bounds)

        need_real("lr", low=0.0, low_inclusive=False)
        need_real("weight_decay", low=0.0)
        need_real("ssm_lr", optional=True, low=0.0, low_inclusive=False)
        need_real("ssm_weight_decay", optional=True, low=0.0)
        need_real("min_lr_ratio", low=0.0, high=1.0)
        need_real("grad_clip", optional=True, low=0.0, low_inclusive=False)
        need_real("divergence_factor", optional=True, low=1.0, low_inclusive=False)
        need_real("target_accuracy", optional=True, low=0.0, high=1.0, low_inclusive=False)
        if not (isinstance(self.betas, tuple | list) and len(self.betas) == 2):
            raise TypeError(f"TrainConfig.betas must be two numbers in [0, 1), got "
                            f"{self.betas!r}")
        for i, b in enumerate(self.betas):
            check_real(f"TrainConfig.betas[{i}]", b, low=0.0, high=1.0, high_inclusive=False)
        for name, choices in (("schedule", SCHEDULES), ("on_divergence", ON_DIVERGENCE)):
            if getattr(self, name) not in choices:
                raise ValueError(f"TrainConfig.{name} must be one of {choices}, "
                                 f"got {getattr(self, name)!r}")
        if not isinstance(self.device, str | torch.device):
            raise TypeError(f"TrainConfig.device must be a string such as 'cpu', 'cuda' or "
                            f"'auto', got {type(self.device).__name__} {self.device!r}")
        if self.checkpoint is not None and not isinstance(self.checkpoint, str | os.PathLike):
            raise TypeError(f"TrainConfig.checkpoint must be a path or None, got "
                            f"{type(self.checkpoint).__name__} {self.checkpoint!r}")
        for name in ("resume", "progress", "crop"):
            if not isinstance(getattr(self, name), bool):
                raise TypeError(f"TrainConfig.{name} must be True or False, got "
                                f"{getattr(self, name)!r}")
        if self.plateau is not None and not isinstance(self.plateau, Plateau):
            raise TypeError(f"TrainConfig.plateau must be a Plateau or None, "
                            f"got {type(self.plateau).__name__}")

    def fingerprint(self) -> str:
        """Hash of the fields that define the training trajectory (checked on resume)."""
        d = {k: v for k, v in asdict(self).items()
             if k not in _RESUMABLE_FIELDS + ("checkpoint", "resume")
             and not (k in _OPTIONAL_FIELDS and v is None)}
        return hashlib.sha256(json.dumps(d, sort_keys=True, default=str).encode()).hexdigest()


def lr_factor(step: int, cfg: TrainConfig) -> float:
    """Multiplier of cfg.lr at 0-based ``step``: linear warm-up, then constant or cosine."""
    if cfg.warmup and step < cfg.warmup:
        return (step + 1) / cfg.warmup
    if cfg.schedule == "constant":
        return 1.0
    span = max(cfg.steps - cfg.warmup - 1, 1)
    frac = min(max(step - cfg.warmup, 0) / span, 1.0)
    return cfg.min_lr_ratio + (1 - cfg.min_lr_ratio) * 0.5 * (1 + math.cos(math.pi * frac))
