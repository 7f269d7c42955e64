"""Running a reproduction: ``reproduce`` end to end, the sweep of its tasks and what they see.

* :mod:`.reproduction` — :func:`reproduce` (``lds-toolkit reproduce``): the config, the
  output directory, the sweep, the summary, the figures and ``run.json``, in that order;
  :class:`RunResult` (what it returns) and :func:`load_summary`;
* :mod:`.sweep` — the tasks run locally (joblib) or on a Dask cluster, each with its own
  random stream (:func:`~.sweep.task_rng`), stored and resumed through
  :mod:`lds_toolkit.experiments.store`;
* :mod:`.workers` — how many worker processes fit the machine (``--jobs``, ``--workers``);
* :mod:`.task_runtime` — what a running task sees: its checkpoints, the time budget, whether
  it resumed (the neural experiments' training reads it);
* :mod:`.progress` — progress reported by the tasks while the sweep runs;
* :mod:`.environment` — what ``run.json`` records of the machine and the libraries;
* :mod:`.display` — a :class:`RunResult` shown as text, HTML (notebooks) or PNG.

The config of a run is built by :mod:`lds_toolkit.experiments.config`; the run's claims are
judged by :mod:`lds_toolkit.experiments.report`, both below this room. This ``__init__``
keeps the names of the module that was ``lds_toolkit.experiments.runner`` (now
:mod:`.reproduction`).
"""

from ..config.build import COMMON_RANGES, build_config, resolve_scale
from .reproduction import RunResult, load_summary, reproduce

__all__ = ["COMMON_RANGES", "RunResult", "build_config", "load_summary", "reproduce",
           "resolve_scale"]
