"""What a sweep tells a running task: where its training checkpoints go, how often to save
them and when the run's time budget ends; and what the task tells back (that it resumed).

:func:`~lds_toolkit.experiments.runner.sweep.run_sweep` runs every task inside :func:`running`
with a :class:`TaskRuntime`: the task's checkpoint files live in the task store beside its future
result (``<store>/<digest>.<name>.ckpt``, see
:meth:`~lds_toolkit.experiments.store.TaskStore.checkpoint_prefix`), tagged with the task and
the code version, so that a checkpoint of another task or of older code is refused as stale
(and the task restarts, with a warning) instead of being mixed in. A task that trains asks
:func:`training_options` for the settings of
:func:`~lds_toolkit.neural.training.train` that make it resumable: a checkpoint every
:data:`CHECKPOINT_SECONDS` of wall time and at the end, and the deadline, at which ``train``
saves and raises :class:`~lds_toolkit._budget.TimeBudgetReached`. It reports a resumption
with :func:`note_resumed`; the sweep records it in ``run.json``.

Outside a sweep (a task called directly) there is no runtime: :func:`training_options` is
empty and nothing is checkpointed. Torch-free: the neural experiments import it before they
import torch.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

#: Seconds of wall time between two checkpoints of a training task: a task killed (or a GPU
#: slot that ends) loses at most this much work.
CHECKPOINT_SECONDS = 60.0


@dataclass
class TaskRuntime:
    """The sweep's instructions to one task (picklable: built by the driver, used in the
    worker that runs the task).

    Attributes
    ----------
    checkpoint_prefix : str or None
        Path prefix of the task's checkpoint files (None: no checkpoints).
    tag : str or None
        Recorded in each checkpoint and required of it on resume (task digest and code
        version).
    deadline : float or None
        ``time.time()`` at which the run's time budget ends.
    checkpoint_seconds : float
        Wall time between checkpoints.
    notes : dict
        What the task reports back (``"resumed_from"``: ``{name: step}``).
    """

    checkpoint_prefix: str | None = None
    tag: str | None = None
    deadline: float | None = None
    checkpoint_seconds: float = CHECKPOINT_SECONDS
    notes: dict[str, Any] = field(default_factory=dict)

    def checkpoint(self, name: str) -> str | None:
        """The checkpoint file of the task's training run ``name``."""
        if self.checkpoint_prefix is None:
            return None
        return f"{self.checkpoint_prefix}.{name}.ckpt"


# per thread and context: an in-process Dask client runs several tasks at once in threads
_CURRENT: contextvars.ContextVar[TaskRuntime | None] = contextvars.ContextVar(
    "lds_toolkit_task_runtime", default=None)


def current() -> TaskRuntime | None:
    """The runtime of the task running in this thread (None outside a sweep)."""
    return _CURRENT.get()


@contextlib.contextmanager
def running(runtime: TaskRuntime | None) -> Iterator[TaskRuntime | None]:
    """Within the block, :func:`current` is ``runtime`` (the previous one restored on exit)."""
    token = _CURRENT.set(runtime)
    try:
        yield runtime
    finally:
        _CURRENT.reset(token)


def training_options(name: str = "train") -> dict[str, Any]:
    """Keyword arguments of :func:`~lds_toolkit.neural.training.train` that make the current
    task's training run ``name`` resumable and bound by the run's deadline: ``checkpoint``,
    ``checkpoint_seconds``, ``checkpoint_tag``, ``bad_checkpoint="restart"`` and
    ``deadline``. Empty outside a sweep."""
    rt = _CURRENT.get()
    if rt is None:
        return {}
    options: dict[str, Any] = {"deadline": rt.deadline}
    path = rt.checkpoint(name)
    if path is not None:
        options.update(checkpoint=path, checkpoint_seconds=rt.checkpoint_seconds,
                       checkpoint_tag=rt.tag, bad_checkpoint="restart")
    return options


def note_resumed(step: int | None, name: str = "train") -> None:
    """Tell the sweep that the current task's training run ``name`` resumed from a
    checkpoint at ``step`` (nothing for None, or outside a sweep)."""
    rt = _CURRENT.get()
    if rt is not None and step is not None:
        rt.notes.setdefault("resumed_from", {})[name] = int(step)
