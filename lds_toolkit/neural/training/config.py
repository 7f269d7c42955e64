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

from ..._validation import check_int, check_real
from .runtime import check_precision

SCHEDULES = ("constant", "cosine")
ON_DIVERGENCE = ("stop", "raise")
PLATEAU_METRICS = ("loss", "accuracy")
#: What :func:`~lds_toolkit.neural.training.train` does with a checkpoint it cannot use.
BAD_CHECKPOINT = ("raise", "restart")
#: Keyword arguments of ``torch.compile`` that ``TrainConfig.compile`` may set.
COMPILE_OPTIONS = ("backend", "mode", "dynamic", "fullgraph", "options")
#: Fields of :class:`TrainConfig` that may change between a run and its resumption (they
#: change how the run is executed or stopped, not its trajectory; ``compile`` and ``device``
#: change only the round-off).
_RESUMABLE_FIELDS = ("steps", "progress", "checkpoint_every", "eval_every", "eval_batch_size",
                     "target_accuracy", "plateau", "threads", "device", "on_divergence",
                     "log_every", "checkpoint_seconds", "checkpoint_tag", "bad_checkpoint",
                     "deadline", "compile")
#: Fields left out of the fingerprint while None, so checkpoints written before they existed
#: still resume.
_OPTIONAL_FIELDS = ("ssm_lr", "ssm_weight_decay")
#: Fields left out of the fingerprint while at these values (the behaviour before they
#: existed), for the same reason.
_DEFAULT_OMITTED = {"precision": "fp32", "length_multiple": 1}


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

    **Noise-aware test** (``confidence`` :math:`z > 0`). The best-of-window comparison
    above can fire on a curve that is still improving when the evaluation is noisy: one
    lucky low evaluation before the window is enough. With :math:`z > 0` the test compares
    window *means* and asks for the improvement to be small beyond the evaluation's own
    measured noise. With :math:`a` the mean of the :math:`w` values before the last
    :math:`w` and :math:`b` the mean of the last :math:`w`, the improvement is
    :math:`d = a - b` (loss; :math:`b - a` for the accuracy). The noise
    :math:`\hat\sigma` of one evaluation is measured on the curve itself: the standard
    deviation of the residuals of a least-squares line through those :math:`2w` values
    (:math:`2w - 2` degrees of freedom), so :math:`d` has standard error
    :math:`s = \hat\sigma \sqrt{2 / w}`. The curve has plateaued when

    .. math::

        d + z\, s < \delta\, |a| \;\text{(loss)}, \qquad d + z\, s < \delta
        \;\text{(accuracy)},

    i.e. the improvement is below the tolerance even at the upper end of its noise band.
    An improvement the evaluation cannot resolve never declares a plateau: a noisy run that
    is still improving trains on (to its budget if the noise never shrinks), and
    :meth:`noise` reports :math:`\hat\sigma` so that a page can state it.

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
    confidence : float, default 0.0
        :math:`z` of the noise-aware test (0: the best-of-window test). 2 asks the
        improvement to be below the tolerance at about 97.7 % one-sided confidence under
        Gaussian evaluation noise.

    Examples
    --------
    >>> rule = Plateau(window=2, min_delta=0.05)
    >>> rule.first([2.0, 1.0, 0.6, 0.59, 0.58, 0.58])   # index of the first flat evaluation
    4
    >>> rule.reached([2.0, 1.0, 0.6])
    False
    >>> flat = Plateau(window=3, min_delta=0.02, confidence=2.0)
    >>> flat.reached([2.0, 1.0, 0.600, 0.598, 0.601, 0.599, 0.600, 0.600])
    True
    >>> flat.reached([2.0, 1.0, 0.60, 0.58, 0.61, 0.59, 0.60, 0.60])  # noise 0.011: unresolved
    False
    """

    window: int = 5
    min_delta: float = 0.02
    metric: str = "loss"
    min_evals: int = 0
    min_gain: float = 0.0
    confidence: float = 0.0

    def __post_init__(self):
        check_int("Plateau.window", self.window, 1)
        check_real("Plateau.confidence", self.confidence, low=0.0, high=10.0)
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
            if self.confidence > 0:
                return self._flat_beyond_noise(v)
            before, last = v[:-self.window].min(), v[-self.window:].min()
            return not last <= (1.0 - self.min_delta) * before
        v = np.where(np.isfinite(v), v, -np.inf)
        if not v.max() >= v[0] + self.min_gain:
            return False
        if self.confidence > 0:
            return self._flat_beyond_noise(v)
        before, last = v[:-self.window].max(), v[-self.window:].max()
        return not last >= before + self.min_delta

    def noise(self, values) -> float | None:
        r"""The measured noise :math:`\hat\sigma` of one evaluation: the residual standard
        deviation of a least-squares line through the last ``2 * window`` values (None when
        there are fewer, or a value is not finite)."""
        w2 = 2 * self.window
        v = np.asarray(values, dtype=float)[-w2:]
        if v.size < w2 or w2 < 3 or not np.all(np.isfinite(v)):
            return None
        x = np.arange(w2, dtype=float)
        resid = v - np.polyval(np.polyfit(x, v, 1), x)
        return float(np.sqrt(resid @ resid / (w2 - 2)))

    def _flat_beyond_noise(self, v) -> bool:
        """The noise-aware test (class docstring): improvement + z s below the tolerance."""
        w = self.window
        sigma = self.noise(v)
        if sigma is None:
            return False
        a, b = v[-2 * w:-w].mean(), v[-w:].mean()
        d = (a - b) if self.metric == "loss" else (b - a)
        tol = self.min_delta * abs(a) if self.metric == "loss" else self.min_delta
        return bool(d + self.confidence * sigma * np.sqrt(2.0 / w) < tol)

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
    checkpoint_seconds : float or None
        Also save once this many seconds of wall time have passed since the last save (or
        the start): the bound on the work a killed process loses. None: no time-based saves.
    checkpoint_tag : str or None
        Recorded in every checkpoint; a checkpoint carrying another tag is refused as stale
        (the experiment runner tags a task's checkpoints with the task and the code version).
    bad_checkpoint : {"raise", "restart"}
        A checkpoint that cannot be used (corrupted, foreign, stale, of other settings):
        raise :class:`~lds_toolkit.neural.training.checkpoints.CheckpointError`, or warn
        (:class:`~lds_toolkit.neural.training.checkpoints.CheckpointWarning`) and train from step 0
        (the file is overwritten by the next save).
    resume : bool
        Continue from ``checkpoint`` when it exists.
    deadline : float or None
        Wall-clock time (``time.time()``) at which training saves a checkpoint (when one is
        configured) and raises :class:`~lds_toolkit._budget.TimeBudgetReached`; checked
        between steps. The same call resumes.
    precision : {"fp32", "tf32", "bf16"}
        Arithmetic of the forward pass and the loss (:func:`~lds_toolkit.neural.training.runtime.\
precision`): float32; TF32 matrix products on CUDA (float32 elsewhere: there is no TF32 on a
        CPU); or bfloat16 autocast on the model's device with float32 master weights.
    compile : bool or dict
        Train through ``torch.compile(model)`` (the parameters are shared; evaluation runs
        the model as it is). True: ``mode="reduce-overhead"`` (CUDA graphs) on CUDA, the default
        mode elsewhere; a dict: the keyword arguments of ``torch.compile`` (``backend``,
        ``mode``, ``dynamic``, ``fullgraph``, ``options``). Static shapes keep compiled
        graphs and CUDA graphs reusable: see ``length_multiple``.
    length_multiple : int
        With ``crop``, round each batch's cut up to a multiple of this (1: cut right after
        the last scored position), so that the batches take a few distinct lengths; exact
        for causal models (the scored outputs never see the extra padding), except that
        batch statistics (``norm="batch"``) then include it.
    log_every : int
        Read the step's numbers (loss, gradient norm, accuracy) from the device every this
        many steps, in one transfer: the steps in between run without waiting for the device.
        The history still has every step, the callback is called for each step at the
        reading (in order), and a divergence is reported with the step where it happened;
        with ``log_every > 1`` it is found at the next reading, and the updates of the steps
        in between were applied (1: every step is read before its update, which a bad step
        never gets). Steps that evaluate, checkpoint or stop are always read.
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
    checkpoint_seconds: float | None = None
    checkpoint_tag: str | None = None
    bad_checkpoint: str = "raise"
    resume: bool = True
    deadline: float | None = None
    precision: str = "fp32"
    compile: bool | dict = False
    length_multiple: int = 1
    log_every: int = 1
    progress: bool = False

    def __post_init__(self):
        def need_int(name, minimum):
            check_int(f"TrainConfig.{name}", getattr(self, name), minimum)

        for name, minimum in (("steps", 1), ("batch_size", 1), ("warmup", 0), ("eval_every", 0),
                              ("checkpoint_every", 0), ("seed", 0), ("bucket", 0),
                              ("length_multiple", 1), ("log_every", 1)):
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
        need_real("checkpoint_seconds", optional=True, low=0.0)
        need_real("deadline", optional=True)
        check_precision(self.precision, "TrainConfig.precision")
        self._check_compile()
        if self.checkpoint_tag is not None and not isinstance(self.checkpoint_tag, str):
            raise TypeError(f"TrainConfig.checkpoint_tag must be a string or None, got "
                            f"{type(self.checkpoint_tag).__name__} {self.checkpoint_tag!r}")
        if not (isinstance(self.betas, tuple | list) and len(self.betas) == 2):
            raise TypeError(f"TrainConfig.betas must be two numbers in [0, 1), got "
                            f"{self.betas!r}")
        for i, b in enumerate(self.betas):
            check_real(f"TrainConfig.betas[{i}]", b, low=0.0, high=1.0, high_inclusive=False)
        for name, choices in (("schedule", SCHEDULES), ("on_divergence", ON_DIVERGENCE),
                              ("bad_checkpoint", BAD_CHECKPOINT)):
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

    def _check_compile(self) -> None:
        value = self.compile
        if isinstance(value, bool):
            return
        if not isinstance(value, dict):
            raise TypeError(f"TrainConfig.compile must be True, False or a dict of "
                            f"torch.compile arguments, got {type(value).__name__} {value!r}")
        unknown = sorted(set(value) - set(COMPILE_OPTIONS))
        if unknown:
            raise ValueError(f"TrainConfig.compile: unknown torch.compile arguments {unknown}; "
                             f"allowed: {COMPILE_OPTIONS}")
        backend = value.get("backend")
        if isinstance(backend, str):  # a callable backend is torch.compile's to judge
            check_compile_backend(backend)

    def compile_options(self, device: torch.device) -> dict | None:
        """The keyword arguments ``train`` passes to ``torch.compile`` on ``device`` (None:
        no compilation)."""
        if self.compile is False:
            return None
        if self.compile is True:
            return {"mode": "reduce-overhead"} if device.type == "cuda" else {}
        return dict(self.compile)

    def fingerprint(self) -> str:
        """Hash of the fields that define the training trajectory (checked on resume)."""
        d = {k: v for k, v in asdict(self).items()
             if k not in _RESUMABLE_FIELDS + ("checkpoint", "resume")
             and not (k in _OPTIONAL_FIELDS and v is None)
             and not (k in _DEFAULT_OMITTED and v == _DEFAULT_OMITTED[k])}
        return hashlib.sha256(json.dumps(d, sort_keys=True, default=str).encode()).hexdigest()


def check_compile_backend(backend: str) -> None:
    """``ValueError`` naming ``TrainConfig.compile['backend']`` and the backends torch knows
    (``torch._dynamo.list_backends``) when ``backend`` is not one of them, when the config
    is made rather than at the first step."""
    from torch._dynamo import list_backends
    from torch._dynamo.backends.registry import lookup_backend
    from torch._dynamo.exc import InvalidBackend

    try:
        lookup_backend(backend)
    except InvalidBackend:
        debug = [b for b in ("eager", "aot_eager") if b in list_backends(exclude_tags=())]
        raise ValueError(f"TrainConfig.compile['backend'] must be a torch.compile backend, "
                         f"got {backend!r}; available here: {', '.join(list_backends())}"
                         + (f" (and torch's debug backends, e.g. {', '.join(debug)})"
                            if debug else "")) from None


def lr_factor(step: int, cfg: TrainConfig) -> float:
    """Multiplier of cfg.lr at 0-based ``step``: linear warm-up, then constant or cosine."""
    if cfg.warmup and step < cfg.warmup:
        return (step + 1) / cfg.warmup
    if cfg.schedule == "constant":
        return 1.0
    span = max(cfg.steps - cfg.warmup - 1, 1)
    frac = min(max(step - cfg.warmup, 0) / span, 1.0)
    return cfg.min_lr_ratio + (1 - cfg.min_lr_ratio) * 0.5 * (1 + math.cos(math.pi * frac))
