"""Several training runs in one process, stacked so that small models fill a GPU.

A small model (Focus at 1K: 228 K parameters) leaves a GPU idle between its kernel
launches: one run is bound by launches, not by arithmetic. :func:`train_group` trains N runs
of one architecture (seeds x models of a task grid) at once: their parameters are stacked
and every operation of the N forward and backward passes is one batched launch
(``torch.func.vmap`` over ``functional_call``, see
:mod:`lds_toolkit.neural.training._engines`). It runs the loop of
:func:`~lds_toolkit.neural.training.train` (:mod:`lds_toolkit.neural.training._loop`), so that
each run keeps what it has alone: its seed and batch order, its data, its optimizer state,
its evaluations and stop rules (target accuracy, plateau, divergence, callback), its
checkpoint (written in ``train``'s format: a run of a group resumes alone, and the
reverse). Its numbers equal those of the same run trained alone up to the round-off of
batched kernels (measured on CPU: see ``tests/neural/test_run_group.py``).

Which runs are stacked. Runs whose models have the same class and the same parameter and
buffer names, shapes and dtypes, whose data have the same shapes, whose settings agree on
everything that shapes a step (all :class:`~lds_toolkit.neural.training.TrainConfig`
fields except :data:`PER_RUN_FIELDS`) and that stand at the same step (after resuming)
form one stack; different stacks train one after another (``max_stack`` caps a stack's
size). A stack of one trains exactly as :func:`~lds_toolkit.neural.training.train` does.

Limits. Random operations in the forward pass (dropout with p > 0) are refused: under vmap
they could not draw the numbers the run draws alone. A run whose model recomputes
activations (:func:`~lds_toolkit.neural.training.recompute.set_recompute`) is not stacked
(``torch.utils.checkpoint`` does not run under vmap): it trains alone, with the same
numbers. A callback sees its run's model with the parameters, buffers and gradients of the
step it is called at (they are written back from the stack before it is called).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from torch import nn

from .._validation import input_checks
from ..tasks import SequenceTask
from ._engines import architecture
from ._loop import check_deadline, run_loop
from ._run_state import TrainRun
from .config import TrainConfig
from .runtime import torch_threads
from .single_run import TrainResult, _checked_call, _result

#: TrainConfig fields that may differ between runs trained together: they do not change
#: the computation of a step, only a run's own batch order, checkpoint and stop rules.
PER_RUN_FIELDS = ("seed", "checkpoint", "checkpoint_tag", "bad_checkpoint", "resume",
                  "target_accuracy", "plateau", "divergence_factor", "on_divergence")


@dataclass
class RunSpec:
    """One run of :func:`train_group`: the arguments of
    :func:`~lds_toolkit.neural.training.train` (``overrides`` are its keyword settings)."""

    model: nn.Module
    data: SequenceTask
    config: TrainConfig | None = None
    eval_data: SequenceTask | None = None
    callback: Callable[[int, dict[str, float]], bool | None] | None = None
    overrides: dict[str, Any] | None = None


def _shared(cfg: TrainConfig) -> dict:
    return {k: v for k, v in asdict(cfg).items() if k not in PER_RUN_FIELDS}


def _stack_key(run: TrainRun) -> tuple:
    """What runs must share to be stacked (module docstring); a run with activation
    recomputation on gets a key of its own (it trains alone)."""
    ev = run.eval_data
    if any(getattr(m, "recompute", False) for m in run.model.modules()):
        return ("alone", id(run))
    return (architecture(run.model), repr(sorted(_shared(run.cfg).items())),
            run.data.inputs.shape, run.data.targets.shape, run.data.kind,
            None if ev is None else (ev.inputs.shape, ev.targets.shape), run.start_step)


def train_group(runs: Sequence[RunSpec], *, max_stack: int | None = None,
                **overrides: Any) -> list[TrainResult]:
    """Train ``runs`` together, stacking those that can be (module docstring).

    Parameters
    ----------
    runs : sequence of RunSpec
        The runs; each is checked as :func:`~lds_toolkit.neural.training.train` checks its
        arguments.
    max_stack : int, optional
        Most runs in one stack (default: all that can be stacked; on a GPU, as many as its
        memory holds).
    **overrides
        Settings applied to every run's config (before its own ``overrides``).

    Returns
    -------
    list of TrainResult
        In the order of ``runs``; ``seconds`` is the wall time from the call's start to the
        run's end.

    Raises
    ------
    TrainingDivergedError
        A run with ``on_divergence="raise"`` diverged (raised after every run has ended).
    TimeBudgetReached
        The deadline passed (every running run saved first, when checkpoints are set).
    ValueError, TypeError
        A bad run (as ``train`` says), or a model that cannot run under ``vmap``.
    """
    if isinstance(runs, RunSpec) or not isinstance(runs, Sequence) or not runs:
        raise TypeError(f"train_group: runs must be a non-empty sequence of RunSpec, got "
                        f"{type(runs).__name__}")
    for i, spec in enumerate(runs):
        if not isinstance(spec, RunSpec):
            raise TypeError(f"train_group: runs[{i}] must be a RunSpec, got "
                            f"{type(spec).__name__}")
    if max_stack is not None and (isinstance(max_stack, bool) or not isinstance(max_stack, int)
                                  or max_stack < 1):
        raise ValueError(f"train_group: max_stack must be a positive integer or None, got "
                         f"{max_stack!r}")
    if len({id(s.model) for s in runs}) < len(runs):
        raise ValueError("train_group: two runs share one model object; give each run its "
                         "own model")
    checked = [_checked_call(s.model, s.data, s.config, s.eval_data, s.callback,
                             {**overrides, **(s.overrides or {})}, "train_group")
               for s in runs]
    devices = {str(d) for _, d in checked}
    threads = {c.threads for c, _ in checked}
    if len(devices) > 1 or len(threads) > 1:
        raise ValueError(f"train_group: the runs must share one device and thread count, got "
                         f"devices {sorted(devices)} and threads {sorted(threads, key=str)}")
    device = checked[0][1]
    started = time.perf_counter()
    with torch_threads(checked[0][0].threads), input_checks(False):
        states = [TrainRun(s.model, s.data, cfg, s.eval_data, s.callback, device)
                  for s, (cfg, _) in zip(runs, checked)]
        for run in states:
            run.prepare()
        check_deadline(states)
        stacks: dict[tuple, list[TrainRun]] = {}
        for run in states:
            if run.trains:
                stacks.setdefault(_stack_key(run), []).append(run)
            else:  # resumed from the checkpoint of a finished run
                run.finish(run.start_step, started)
        cap = max_stack or len(states)
        for members in stacks.values():
            for k in range(0, len(members), cap):
                part = members[k:k + cap]
                run_loop(part, device, started,
                         f"train {len(part)} x {part[0].data.name}")
    results = []
    for run in states:  # (a loop, not a comprehension: warnings name the caller's line)
        results.append(_result(run))
    return results
