"""Shared plumbing of the neural experiments (``neural_*.py``): their base class, seeds,
threads, device, spreads.

Importing this module (and a neural catalog module) does not import torch: torch and
:mod:`lds_toolkit.neural` are imported inside the functions that train and measure, so that
``lds-toolkit list``, ``report`` and the numpy experiments work without torch. A neural
experiment declares ``requires = ("torch",)``; running it without torch ends with one line
naming the ``nn`` extra (:func:`lds_toolkit.experiments.base.missing_requirements`).

Conventions of the neural experiments:

* :class:`NeuralExperiment` sets ``single_threaded = False``: torch manages its own threads;
  each task runs with at most :data:`MAX_THREADS` intra-op threads. Run them with ``--jobs 1``.
* Every task derives its torch seeds from the task's ``rng`` (so results depend on the base
  seed and the seed index only, never on worker count or order).
* The device is CUDA when available, else CPU; it is not part of the config (a CPU and a GPU
  run of the same config differ only by floating-point round-off).
* Every task trains through :func:`train_in_task` (several runs stacked in one task:
  :func:`train_group_in_task`): the config's ``"precision"`` (``fp32``,
  ``tf32``, ``bf16``; default ``fp32``: the arithmetic of training and of its held-out
  evaluations; the final test measurements run in float32, the master weights' precision)
  and ``"compile"`` entries, plus the sweep's
  checkpoint and time-budget settings (:mod:`~lds_toolkit.experiments.runner.task_runtime`: a
  checkpoint at least every minute and at the end; a task killed or stopped by
  ``--time-budget`` resumes from its last checkpoint in the next run, to the same numbers).
  Callbacks that keep numbers of their own (probes, per-step measurements) give them to
  the checkpoints with ``state_dict``/``load_state_dict``.
* Medium scale trains every model at every length from scratch until its held-out curve
  has flattened: the config's ``"plateau"`` entry (:data:`PLATEAU`, one rule for every
  experiment) becomes a :class:`~lds_toolkit.neural.training.Plateau` (:func:`plateau_rule`)
  and training stops there; each task records its steps and whether it plateaued
  (:func:`training_record`).
"""

from __future__ import annotations

import contextlib
import os
from typing import TYPE_CHECKING

import numpy as np

from ..base import Experiment
from ..runner.progress import report_progress
from ..runner.task_runtime import note_resumed, training_options
from ..scales import check_scale

if TYPE_CHECKING:  # pragma: no cover
    import torch

    from ...neural.training import Plateau, TrainResult

#: Most intra-op threads a neural task uses (the reference machine has 2 cores).
MAX_THREADS = 2
#: The config entries every neural experiment has for :func:`train_in_task`: float32
#: eager training unless ``--set precision=bf16`` / ``--set compile=true`` asks otherwise.
TRAINING_DEFAULTS = {"precision": "fp32", "compile": False}
#: Steps between two readings of the training numbers from the device
#: (``TrainConfig.log_every``) in the experiments whose callbacks only report progress
#: (las-ablation, assoc-recall): on a GPU the steps in between run without waiting for it.
#: The numbers are the same as with 1 (a divergence is found up to 9 steps later).
LOG_EVERY = 10


def task_device() -> torch.device:
    """CUDA when available, else CPU."""
    from ...neural.training import resolve_device

    return resolve_device("auto")


@contextlib.contextmanager
def task_threads(n: int = MAX_THREADS):
    """Limit torch to ``min(n, MAX_THREADS, cores)`` intra-op threads for one task, and numpy's
    BLAS (the measurements after training: eigenvalues, Lyapunov equations) to as many.

    Small models run faster on one thread: on a loaded 2-core machine OpenMP barriers of two
    threads over tiny tensors cost more than the work (measured 4x slower on L = 30 models).
    The same holds for BLAS, whose thread pool torch's setting does not reach: with two
    OpenBLAS threads per worker a 64 x 64 ``eigvalsh`` took 6.6 ms instead of 1.0 ms, and
    ``nss-s4``'s measurements of a trained S4D layer twice the CPU time.
    """
    from threadpoolctl import threadpool_limits

    from ...neural.training import torch_threads

    k = max(1, min(n, MAX_THREADS, os.cpu_count() or 1))
    with torch_threads(k), threadpool_limits(limits=k, user_api="blas"):
        yield


def torch_seed(rng: np.random.Generator) -> int:
    """A torch seed drawn from the task's stream."""
    return int(rng.integers(0, 2**31 - 1))


#: Scales whose sizes each neural experiment defines (medium: trained to a plateau on a CPU)
DEFINED_SCALES = ("quick", "paper")


def require_defined_scale(name: str, scale: str, defined=DEFINED_SCALES) -> None:
    """``ValueError`` when ``scale`` is not among ``defined``, the scales this experiment has
    sizes for."""
    check_scale(scale)
    if scale not in defined:
        raise ValueError(f"{name} has no {scale!r} scale yet; available: "
                         f"{', '.join(defined)}")


#: The plateau test of every neural experiment (config entry ``"plateau"``; see
#: :class:`~lds_toolkit.neural.training.Plateau`, its noise-aware form): the held-out loss is
#: flat when the mean of the last 5 evaluations is less than 2 % below the mean of the 5
#: before, by more than 3 standard errors of that difference, the noise of one evaluation
#: measured on the curve itself (residual scatter about a line through those 10
#: evaluations). An improvement the held-out set cannot resolve never declares a plateau:
#: the run trains on (to ``max_steps``, recorded as not plateaued). From the 8th evaluation
#: on, once the loss has fallen 10 % below its first value (associative recall can sit at
#: chance for hundreds of steps before its jump: a stall is not a plateau).
#: (Until this rule, the best of the last 5 evaluations was compared with the best before
#: them: on 100 held-out sequences, whose loss jitters by 0.05-0.1, one lucky earlier
#: evaluation stopped runs that were still improving.)
PLATEAU = {"window": 5, "min_delta": 0.02, "metric": "loss", "min_evals": 8, "min_gain": 0.1,
           "confidence": 3.0}


def plateau_rule(config) -> Plateau | None:
    """The config's ``"plateau"`` entry as a :class:`Plateau` (None when absent or null)."""
    from ...neural.training import Plateau

    spec = config.get("plateau")
    return None if spec is None else Plateau(**spec)


def plateaued(status: str) -> bool:
    """Whether a training run ended on a flat held-out curve: stopped by the plateau rule, or
    at the target accuracy (nothing left to gain)."""
    return status in ("plateaued", "target_reached")


class NeuralExperiment(Experiment):
    """Base of the neural experiments: torch manages its own threads (``single_threaded =
    False``: run with ``--jobs 1``); by default one task per seed and model of
    ``config["models"]``. They need torch (``requires``: the ``nn`` extra)."""

    single_threaded = False
    requires = ("torch",)

    def tasks(self, config):
        return [{"seed_index": s, "model": m} for s in range(config["seeds"])
                for m in config["models"]]

    def timings(self, config, tasks, results):
        """Each task's training wall time (:func:`training_record`'s ``train_seconds``), for
        ``run.json``: ``{"train_seconds": [{**task, "seconds": s}, ...]}`` in task order."""
        return {"train_seconds": [{**t, "seconds": r["train_seconds"]}
                                  for t, r in zip(tasks, results) if "train_seconds" in r]}


def by_model(config, tasks, results) -> dict[str, list]:
    """Task results grouped by ``task["model"]`` (each list in task order, i.e. by seed)."""
    return {m: [r for t, r in zip(tasks, results) if t["model"] == m]
            for m in config["models"]}


def spread(values) -> dict[str, float]:
    """Mean, standard deviation, min and max over seeds (NaNs ignored, count reported)."""
    v = np.asarray(values, dtype=float)
    ok = v[np.isfinite(v)]
    if ok.size == 0:
        return {"mean": float("nan"), "std": float("nan"), "min": float("nan"),
                "max": float("nan"), "n": 0}
    return {"mean": float(ok.mean()), "std": float(ok.std()), "min": float(ok.min()),
            "max": float(ok.max()), "n": int(ok.size)}


def over_seeds(name: str, values: dict[str, list]) -> dict:
    """Summary entries of a per-seed metric, ``values[model]`` one number per seed:
    ``name`` (mean per model), ``name_seeds`` (the values) and ``name_spread``."""
    return {name: {m: spread(v)["mean"] for m, v in values.items()},
            f"{name}_seeds": values,
            f"{name}_spread": {m: spread(v) for m, v in values.items()}}


def stack_ragged(curves) -> np.ndarray:
    """Stack 1-D curves of different lengths (runs stopped at a plateau at different steps)
    into (len(curves), longest), padded with NaN."""
    curves = [np.asarray(c, dtype=float) for c in curves]
    n = max((len(c) for c in curves), default=0)
    out = np.full((len(curves), n), np.nan)
    for i, c in enumerate(curves):
        out[i, :len(c)] = c
    return out


def divergences(by: dict[str, list]) -> dict[str, list]:
    """The divergence reports of the tasks that diverged, per model."""
    return {m: [r["divergence"] for r in rs if r["divergence"]] for m, rs in by.items()}


class StepProgress:
    """A training callback (``train(callback=...)``) that reports each step as progress of
    the task (:func:`~lds_toolkit.experiments.runner.progress.report_progress`: the sweep's bar
    shows ``steps done/total`` of the running tasks) and then calls ``inner(step, record)``
    when given, returning what it returns (True stops training). Checkpoints keep
    ``inner``'s own numbers when it has ``state_dict``/``load_state_dict``."""

    def __init__(self, total: int, inner=None):
        self.total, self.inner = int(total), inner

    def __call__(self, step, record):
        report_progress(step + 1, self.total)
        return self.inner(step, record) if self.inner is not None else False

    def state_dict(self):
        return self.inner.state_dict() if hasattr(self.inner, "state_dict") else None

    def load_state_dict(self, state) -> None:
        if state is not None and hasattr(self.inner, "load_state_dict"):
            self.inner.load_state_dict(state)


def step_progress(total: int, inner=None) -> StepProgress:
    """:class:`StepProgress` of ``total`` steps around ``inner``."""
    return StepProgress(total, inner)


def train_in_task(model, data, config, *, name: str = "train", **settings) -> TrainResult:
    """:func:`~lds_toolkit.neural.training.train` as a neural task runs it: ``settings``
    (the task's hyper-parameters) plus the config's ``precision`` and ``compile`` entries
    and the sweep's checkpoint and deadline settings for training run ``name``
    (:func:`~lds_toolkit.experiments.runner.task_runtime.training_options`); a resumption is
    reported to the sweep (``run.json`` records it)."""
    from ...neural.training import train

    res = train(model, data, precision=config.get("precision", "fp32"),
                compile=bool(config.get("compile", False)), **training_options(name),
                **settings)
    note_resumed(res.resumed_from, name)
    return res


def train_group_in_task(specs, config, names) -> list[TrainResult]:
    """:func:`~lds_toolkit.neural.training.run_group.train_group` as a neural task runs it, the
    runs stacked where they can be (:func:`train_in_task` for each run's settings: the
    config's ``precision`` and ``compile``, the sweep's checkpoint and deadline for
    training run ``names[i]``); each resumption is reported to the sweep."""
    from ...neural.training import train_group

    for spec, name in zip(specs, names):
        spec.overrides = {**training_options(name), **(spec.overrides or {})}
    results = train_group(specs, precision=config.get("precision", "fp32"),
                          compile=bool(config.get("compile", False)))
    for res, name in zip(results, names):
        note_resumed(res.resumed_from, name)
    return results


def training_record(result) -> dict:
    """The per-task numbers kept from a :class:`~lds_toolkit.neural.training.TrainResult`."""
    return {
        "loss_curve": result.history["loss"],
        "grad_norm_curve": result.history["grad_norm"],
        "status": result.status,
        "plateaued": plateaued(result.status),
        "steps_done": int(result.steps_done),
        "divergence": None if result.divergence is None else str(result.divergence),
        "train_seconds": float(result.seconds),
    }
