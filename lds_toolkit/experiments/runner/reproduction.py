"""``reproduce``: run a registered experiment end to end and write its outputs.

Layout of ``OUT/NAME/``::

    summary.json   the numbers the figure shows, plus the full "config"
    arrays.npz     raw arrays (curves over seeds, grids, ...)
    *.png, *.pdf   the figure(s)
    run.json       how it ran (tasks computed / loaded / rejected / resumed from a
                   checkpoint, wall times, jobs, backend, code version and what it covers,
                   the environment: versions, CPU, BLAS, threads, see :mod:`.environment`)
                   and the size and SHA-256 of every file above; written last, so it only
                   ever vouches for complete files
    .tasks/        one stored result per finished task (resume after interruption), and the
                   training checkpoints of unfinished ones, see
                   :mod:`lds_toolkit.experiments.store`
    .lock          held while a run writes here: a second run on the same directory refuses

``summary.json`` holds results only (no timings, no host facts: those are in ``run.json``), so
two runs of the same seed on one machine give identical files, whatever ``jobs`` is.
See :mod:`lds_toolkit.experiments.store.outputs` for the lock and the atomic writes.

Time budget. ``reproduce(..., time_budget=SECONDS)`` stops the sweep at the budget: tasks
not started are not started, training tasks save a checkpoint and stop
(:mod:`~lds_toolkit.experiments.runner.task_runtime`), finished tasks are stored, and
:class:`~lds_toolkit._budget.TimeBudgetReached` is raised without writing any output: no
partial summary is ever presented. The same call resumes (``lds-toolkit reproduce ...
--time-budget SECONDS``: the same command, exit status 75), so a long run spans several
short slots and ends with the summary of an uninterrupted run.
"""

from __future__ import annotations

import datetime
import os
import platform
import time
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..._atomic import remove_temporaries
from ..._budget import TimeBudgetReached, check_time_budget, deadline_after
from ..._jsonable import to_jsonable
from ..._safe_files import ensure_directory
from ..._validation import check_bool
from ..base import Experiment, check_requirements, get_experiment
from ..config.build import build_config, resolve_scale
from ..report.verdicts import ReportRow, judge_run
from ..store.outputs import (
    SUMMARY_MAX_BYTES,
    OutputWarning,
    RunLock,
    check_output_dir,
    plain_name,
    read_json_file,
    write_outputs,
)
from ..store.tasks import TaskStore, task_key
from ..store.version import code_version, code_version_covers
from .display import run_html, run_png, run_text
from .environment import environment
from .sweep import SweepStats, run_sweep
from .workers import check_jobs, check_workers


@dataclass(repr=False)
class RunResult:
    """Outputs of :func:`reproduce`, which show themselves (:mod:`.display`): in a terminal
    the ``repr`` is a short summary (what ran, where, each claim's verdict, the files); in a
    notebook ``_repr_html_`` adds the figures inline, and ``_repr_png_`` is the first figure.

    Attributes
    ----------
    name, summary, arrays, outdir, figures, stats
        The experiment, its summary and arrays, where they were written, the figure files,
        and what the sweep did (:class:`~.sweep.SweepStats`).
    claims : list of :class:`~lds_toolkit.experiments.report.ReportRow`
        The experiment's claims judged on this run, as ``lds-toolkit report`` judges them.
    scale : str or None
        The scale it ran at.
    """

    name: str
    summary: dict[str, Any]
    arrays: dict[str, np.ndarray]
    outdir: Path
    figures: list[Path]
    stats: SweepStats
    claims: list[ReportRow] = field(default_factory=list)
    scale: str | None = None

    def __repr__(self) -> str:
        return run_text(self)

    def _repr_html_(self) -> str:
        return run_html(self)

    def _repr_png_(self) -> bytes | None:
        return run_png(self)


def reproduce(name: str | Experiment, *, scale: str | None = None, quick: bool = False,
              seeds: int | None = None, seed: int = 0,
              overrides: Mapping[str, Any] | None = None, out: str | Path = "figures",
              jobs: int = 1, scheduler: str | None = None, client: Any = None,
              progress: bool = True, fresh: bool = False,
              time_budget: float | None = None) -> RunResult:
    """Run experiment ``name`` and write summary.json, arrays.npz and figures to ``out/name``.

    Parameters
    ----------
    name : str or Experiment
        Registered name (see ``lds-toolkit list``) or an experiment instance.
    scale : {"quick", "medium", "paper"}, optional
        ``"quick"``: the pipeline and the shape of each result (each experiment within
        20 s on 2 cores, the thirteen in about 3 minutes); ``"medium"``: CPU evidence
        (the neural experiments train each model to a plateau; the whole neural set within
        an hour on 2 cores);
        ``"paper"`` (default): the papers' sizes.
    quick : bool
        Shorthand for ``scale="quick"``.
    seeds : int, optional
        Number of seeds (default: the experiment's own for the chosen scale).
    seed : int
        Base seed; every task's stream derives from it by ``SeedSequence.spawn``.
    overrides : mapping, optional
        Config entries to change, ``{"T": 2048, "k": 16}`` (``--set KEY=VALUE`` on the
        command line), type-checked against the experiment's config
        (:func:`~lds_toolkit.experiments.config.overrides.apply_overrides`); they are recorded in
        ``summary.json`` and in the store keys.
    out : path
        Output root; the experiment writes into ``out/<name>/``.
    jobs : int
        Local worker processes (``-1``: all cores). Numbers do not depend on it.
    scheduler : str, optional
        Dask scheduler address; tasks run on that cluster.
    client : dask.distributed.Client, optional
        Existing Dask client (wins over ``scheduler``).
    progress : bool
        Show a progress bar over tasks.
    fresh : bool
        Ignore and overwrite stored task results (and checkpoints of unfinished tasks).
    time_budget : float, optional
        Seconds of wall time after which the run stops (see the module docstring); call
        again with the same arguments (without ``fresh``) to resume.

    Raises
    ------
    TimeBudgetReached
        The time budget ended before every task finished; nothing was written but the
        finished tasks and the checkpoints of the interrupted ones (``finished``, ``total``
        and ``partial`` count them).
    ValueError
        A bad argument (an unknown ``name``:
        :class:`~lds_toolkit.experiments.base.UnknownExperimentError`), or ``out`` not a
        writable directory (both before any task runs).
    MissingDependencyError
        The experiment needs an optional dependency that is not installed (torch: the
        ``nn`` extra), before any task runs.
    OutputLockedError
        Another run is writing to ``out/name``.
    ConnectionError
        The Dask ``scheduler`` did not answer.
    """
    exp = name if isinstance(name, Experiment) else get_experiment(name)
    check_requirements(exp)
    # flags taken as given: bool("no") is True, and fresh="no" would throw the store away
    quick, progress, fresh = (check_bool(k, v) for k, v in (("quick", quick),
                                                            ("progress", progress),
                                                            ("fresh", fresh)))
    scale = resolve_scale(scale, quick)
    config = build_config(exp, scale=scale, seeds=seeds, seed=seed, overrides=overrides)
    tasks = [to_jsonable(t) for t in exp.tasks(config)]
    for i, t in enumerate(tasks):
        if "seed_index" not in t:
            raise ValueError(f"{exp.name}.tasks() entry {i} lacks 'seed_index': {t}")

    if client is None and scheduler is None:
        check_workers(jobs, len(tasks))
    else:
        check_jobs(jobs)
    time_budget = check_time_budget(time_budget)
    deadline = deadline_after(time_budget)
    check_output_dir(out)
    outdir = check_output_dir(Path(out) / exp.name, f"out/{exp.name}", allow_link=False)
    with RunLock(outdir):
        version = code_version(exp)
        # a link, file or FIFO planted as .tasks is replaced (the entry only), never followed
        note = ensure_directory(outdir / ".tasks", replace=True, what="task directory")
        if note:
            warnings.warn(OutputWarning(note), stacklevel=2)
        store = TaskStore(outdir / ".tasks", code_version=version)
        if fresh:
            store.clear()
        else:
            remove_temporaries(store.root)  # left by a run killed mid-write
        keys = [task_key(exp.name, config, t) for t in tasks]
        load_before = _load_average()
        started = time.perf_counter()
        results, stats = run_sweep(exp.run_task, config, tasks, keys, store=store, jobs=jobs,
                                   scheduler=scheduler, client=client,
                                   single_threaded=exp.single_threaded, progress=progress,
                                   desc=exp.name, deadline=deadline,
                                   requires=exp.requires)
        if stats.stopped:
            done = stats.n_tasks - len(stats.stopped)
            raise TimeBudgetReached(
                f"{exp.name}: the time budget ran out with {done} of {stats.n_tasks} tasks "
                f"finished ({len(stats.partial)} more saved mid-training); no summary was "
                "written. Run it again with the same arguments to resume",
                finished=done, total=stats.n_tasks, partial=len(stats.partial))
        summary, arrays = exp.summarize(config, tasks, results)
        summary = to_jsonable(dict(summary))
        summary.setdefault("config", config)
        run_info = {
            "experiment": exp.name,
            "scale": scale,
            "code_version": version,
            "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "tasks": stats.n_tasks,
            "tasks_loaded": stats.n_cached,
            "tasks_computed": stats.n_computed,
            "tasks_rejected": stats.n_rejected,
            # task digest -> {training run: step of the checkpoint it resumed from}
            "tasks_resumed": stats.resumed,
            "sweep_seconds": round(stats.seconds, 3),
            # the 1-minute load average when the sweep started and ended: timings of a shared
            # machine mean little without it
            "load_average": [load_before, _load_average()],
            "jobs": jobs,
            "backend": "dask" if (client is not None or scheduler) else
                       ("local" if jobs == 1 else "joblib"),
            "python": platform.python_version(),
            "numpy": np.__version__,
            "timings": to_jsonable(dict(exp.timings(config, tasks, results))),
            "code_version_covers": code_version_covers(exp),
            "environment": environment(torch="torch" in exp.requires or None),
        }
        figures = write_outputs(outdir, summary, arrays,
                                lambda: _plot(exp, config, summary, arrays, outdir),
                                {**run_info,
                                 "total_seconds": round(time.perf_counter() - started, 3)})
    return RunResult(exp.name, summary, arrays, outdir, figures, stats,
                     claims=judge_run(exp, summary, run_info), scale=scale)


def _load_average() -> float | None:
    """The 1-minute load average (``None`` where the system has none, e.g. Windows)."""
    try:
        return round(os.getloadavg()[0], 2)
    except (AttributeError, OSError):
        return None


def _plot(exp: Experiment, config, summary, arrays, outdir) -> list:
    """``exp.plot(...)`` in the toolkit's figure style, matplotlib's parameters restored
    afterwards (:func:`~lds_toolkit.experiments.plotting.style`)."""
    from ..plotting import style

    with style():
        return exp.plot(config, summary, arrays, outdir)


def load_summary(out: str | Path, name: str) -> dict[str, Any]:
    """Read ``out/name/summary.json`` (a regular file, links not followed; ``ValueError``
    saying why when it is not a readable JSON file, ``FileNotFoundError`` saying how to make
    it when there is none)."""
    if not isinstance(name, str) or not plain_name(name):
        raise ValueError(f"name must be an experiment's name (a directory directly under out), "
                         f"got {name!r:.60}")
    path = Path(out) / name / "summary.json"
    try:
        return read_json_file(path, SUMMARY_MAX_BYTES)
    except FileNotFoundError:
        raise FileNotFoundError(
            f"no results of {name!r} under out={str(out)!r} ({path} does not exist); run "
            f"reproduce({name!r}, out={str(out)!r}) or lds-toolkit reproduce {name} --out "
            f"{out} first") from None
