"""What a run keeps on disk, and how it is trusted again: the task store and the output directory.

* :mod:`.tasks` — the task store (``OUT/NAME/.tasks/``): one stored result per finished
  task, keyed by experiment, config, task and code version (:class:`TaskStore`,
  :func:`task_key`), checked on every load (:class:`StoredTaskRejected`);
* :mod:`._codec` — a task's result as JSON plus numpy arrays and back, exactly and without
  pickle;
* :mod:`.version` — the code version of an experiment (a hash of the sources it imports and
  of the numerical libraries' versions), which keys the store;
* :mod:`.outputs` — the output directory ``OUT/NAME/``: checked before a run, locked while it
  writes (:class:`~.outputs.OutputLockedError`), files written atomically, and read back
  only as ``run.json`` vouches for them (:func:`~.outputs.verify_outputs`).

The lowest room of :mod:`lds_toolkit.experiments`: it imports nothing of the rest of it.
This ``__init__`` keeps the names of the module that was ``lds_toolkit.experiments.store``
(now :mod:`.tasks`).
"""

from .tasks import (
    ARRAYS_MAX_BYTES,
    FORMAT,
    FORMAT_VERSION,
    RECORD_MAX_BYTES,
    StoredTaskRejected,
    TaskKey,
    TaskStore,
    config_hash,
    task_key,
)

__all__ = [
    "ARRAYS_MAX_BYTES",
    "FORMAT",
    "FORMAT_VERSION",
    "RECORD_MAX_BYTES",
    "StoredTaskRejected",
    "TaskKey",
    "TaskStore",
    "config_hash",
    "task_key",
]
