"""``lds-toolkit`` command line: list and reproduce registered experiments.

Exit status: 0 success; 1 a run that could not proceed (its output directory is locked by
another run, the Dask scheduler does not answer, a file cannot be written: disk full, name
too long, permission denied; an optional dependency such as torch is missing: one line naming
the extra that installs it); 2 a bad argument (an unknown experiment name gets a "did you
mean"), reported in one line before any task runs; 128 + N when stopped by signal N (SIGINT:
130, SIGTERM: 143), after the local worker processes were shut down; 75 (``EX_TEMPFAIL``:
try again) when ``--time-budget SECONDS`` ran out before every task finished: the running
training tasks saved a checkpoint, no partial summary was written, and one line gives the
command that resumes (the same one). ``reproduce all`` without torch runs the experiments that
need none and ends with one line naming the extra the others need (exit 1). Finished tasks
are stored in every case, so the same command resumes.

``lds-toolkit report`` exits 1 when some experiment's results are there but cannot be judged
(an unreadable file, numbers its run.json does not vouch for; the report is still written);
``report --compare`` exits 1 when a summary.json cannot be read, 2 when a root is not an
output root with results (an empty directory, the directory of one experiment's run).
"""

from __future__ import annotations

import argparse
import contextlib
import shlex
import signal
import sys
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from ._budget import TimeBudgetReached, deadline_after, remaining
from .experiments.base import SCALES

#: Exit status of a run stopped by ``--time-budget`` (sysexits' EX_TEMPFAIL: try again).
EXIT_TIME_BUDGET = 75


def add_run_arguments(parser: argparse.ArgumentParser) -> None:
    """The options shared by ``lds-toolkit reproduce`` and the ``simulations/`` scripts."""
    parser.add_argument("--scale", choices=SCALES, default=None,
                        help="quick (the pipeline: each experiment within a minute on 2 cores), "
                             "medium (CPU evidence, trained to a plateau), paper (default) "
                             "or gpu (<= 12 min of one H100, estimated; assoc-recall and "
                             "las-ablation)")
    parser.add_argument("--quick", action="store_true", help="same as --scale quick")
    parser.add_argument("--seeds", type=int, default=None, help="number of seeds")
    parser.add_argument("--set", dest="overrides", action="append", default=[],
                        metavar="KEY=VALUE",
                        help="change a config entry (repeatable), e.g. --set T=2048; "
                             "type-checked, recorded in summary.json")
    parser.add_argument("--seed", type=int, default=0, help="base seed (default 0)")
    parser.add_argument("--out", default="figures", help="output root (default: figures)")
    parser.add_argument("--jobs", type=int, default=1,
                        help="local worker processes, -1 for all cores (default 1)")
    parser.add_argument("--scheduler", default=None, metavar="ADDRESS",
                        help="Dask scheduler address, e.g. tcp://host:8786")
    parser.add_argument("--fresh", action="store_true", help="recompute stored task results")
    parser.add_argument("--time-budget", type=float, default=None, metavar="SECONDS",
                        help="stop after this much wall time: running training tasks save a "
                             "checkpoint, no partial summary is written, the same command "
                             f"resumes (exit status {EXIT_TIME_BUDGET})")
    parser.add_argument("--no-progress", action="store_true", help="hide progress bars")


def run_script(names: str | Sequence[str], describe: Callable[[Any], object] | None = None,
               argv: list[str] | None = None,
               description: str | None = None) -> list:
    """Entry point of a ``simulations/`` script: parse the shared options, reproduce each
    experiment in ``names``, print its numbers (``describe(result)``, or the summary without
    its config as JSON) and wall time. Returns the :class:`RunResult` objects."""
    import json

    names = [names] if isinstance(names, str) else list(names)
    parser = argparse.ArgumentParser(description=description)
    add_run_arguments(parser)
    args = parser.parse_args(argv)
    scale, overrides = _checked_run_options(parser, args, names)
    results = []

    def report(name, res, seconds):
        if describe is not None:
            describe(res)
        else:
            from ._jsonable import finite_json

            summary = {k: v for k, v in res.summary.items() if k != "config"}
            # strict JSON for whatever reads it (NaN as "nan"), like report's JSON
            print(json.dumps(finite_json(summary), indent=1, allow_nan=False))
        print(f"{name}: {seconds:.1f} s; figures: {', '.join(str(p) for p in res.figures)}")
        results.append(res)

    command = ["python", sys.argv[0], *(sys.argv[1:] if argv is None else argv)]
    code = _run_experiments(names, args, scale, overrides, report, command=command)
    if code:
        sys.exit(code)
    return results


def _checked_run_options(parser: argparse.ArgumentParser, args, names) -> tuple[str, dict]:
    """Scale and overrides of a run, every experiment's config built once up front so that a
    bad option ends the command (exit 2, one line) before any task runs."""
    from .experiments import get_experiment
    from .experiments.config import build_config, resolve_scale
    from .experiments.config.overrides import parse_assignments
    from .experiments.runner.workers import check_jobs, check_workers
    from .experiments.store.outputs import check_output_dir

    try:
        scale = resolve_scale(args.scale, args.quick)
        overrides = parse_assignments(args.overrides)
        check_jobs(args.jobs, "--jobs")
        n_tasks = 1
        for name in names:
            exp = get_experiment(name)
            config = build_config(exp, scale=scale, seeds=args.seeds, seed=args.seed,
                                  overrides=overrides)
            n_tasks = max(n_tasks, len(exp.tasks(config)))
        if not args.scheduler:  # local workers: never more than the tasks, and they fit
            check_workers(args.jobs, n_tasks, "--jobs")
        check_output_dir(args.out, "--out")
        if args.time_budget is not None:
            from ._budget import check_time_budget

            check_time_budget(args.time_budget)
    except (ValueError, TypeError) as exc:
        parser.exit(2, f"error: {exc}\n")
    return scale, overrides


class Terminated(KeyboardInterrupt):
    """Raised in the main thread when the process receives SIGTERM (like SIGINT's
    KeyboardInterrupt), so that ``finally`` blocks shut the worker pool down."""


@contextlib.contextmanager
def _signals_interrupt():
    """While active, SIGTERM raises :class:`Terminated` in the main thread; a second SIGTERM
    during the clean-up ends the process at once (the workers' watchdogs then end them)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def on_term(signum, frame):
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        raise Terminated(f"signal {signum}")

    previous = signal.signal(signal.SIGTERM, on_term)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _run_experiments(names, args, scale, overrides, report, starting=None,
                     command: Sequence[str] = ("lds-toolkit",)) -> int:
    """Reproduce each of ``names``, calling ``starting(name)`` before and
    ``report(name, result, seconds)`` after each; the exit status (see the module
    docstring). ``command``: the command line, quoted in the line that says how to resume
    after ``--time-budget``."""
    from .experiments import MissingDependencyError, reproduce
    from .experiments.store.outputs import OutputLockedError

    budget = getattr(args, "time_budget", None)
    deadline = deadline_after(budget)
    try:
        with _signals_interrupt():
            for name in names:
                left = remaining(deadline)
                if left is not None and left <= 0:
                    raise TimeBudgetReached(
                        f"{name}: the time budget ran out before it started; no summary was "
                        "written. Run it again with the same arguments to resume")
                if starting is not None:
                    starting(name)
                t0 = time.perf_counter()
                res = reproduce(name, scale=scale, seeds=args.seeds, seed=args.seed,
                                overrides=overrides, out=args.out, jobs=args.jobs,
                                scheduler=args.scheduler, progress=not args.no_progress,
                                fresh=args.fresh, time_budget=left)
                report(name, res, time.perf_counter() - t0)
    except TimeBudgetReached as exc:
        print(f"stopped after the time budget of {budget:g} s: {exc}: "
              f"{_resume_command(command)}", file=sys.stderr, flush=True)
        return EXIT_TIME_BUDGET
    except KeyboardInterrupt as exc:
        signum = signal.SIGTERM if isinstance(exc, Terminated) else signal.SIGINT
        print(f"interrupted by {signal.Signals(signum).name}; finished tasks are stored, the "
              "same command resumes", file=sys.stderr, flush=True)
        return 128 + int(signum)
    except (OutputLockedError, ConnectionError, MissingDependencyError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except OSError as exc:  # disk full, name too long, permission denied, an odd file
        print(f"error: {_os_error_line(exc)}; no run.json was written, so nothing of this run "
              "is vouched for (finished tasks are stored)", file=sys.stderr)
        return 1
    except ValueError as exc:  # a bad --out found while running (e.g. a file named NAME)
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


def _resume_command(command: Sequence[str]) -> str:
    """The command line that resumes a run stopped by its time budget: the same one, less
    ``--fresh`` (which would throw away what the stopped run saved)."""
    return shlex.join([a for a in command if a != "--fresh"])


def _unknown_names(names: Sequence[str]) -> str:
    """Empty when every name is an experiment, else the error line (with "did you mean")."""
    from .experiments.base import EXPERIMENT_MODULES, UnknownExperimentError, get_experiment

    for name in names:
        if name in EXPERIMENT_MODULES:
            continue
        try:
            get_experiment(name)
        except UnknownExperimentError as exc:
            return f"error: {exc}"
    return ""


def _os_error_line(exc: OSError) -> str:
    """``/path: No space left on device (ENOSPC)`` for an ``OSError``, on one line."""
    from ._safe_files import os_reason

    if exc.strerror is None:
        return str(exc).replace("\n", " ")
    return f"{exc.filename}: {os_reason(exc)}" if exc.filename else os_reason(exc)


def _report(args) -> int:
    from pathlib import Path

    from .experiments.report import build_report, to_json, to_markdown, to_text, write_report
    from .experiments.report.tables import unjudged

    bad = _unknown_names(args.names)
    if bad:
        print(bad, file=sys.stderr)
        return 2
    if args.compare:
        return _compare(args)
    if args.all:
        print("error: --all lists every difference of --compare DIR_A DIR_B; the report "
              "always lists every claim", file=sys.stderr)
        return 2
    out = Path(args.out)
    if not args.out or not out.is_dir():
        print(f"error: --out {str(args.out)!r} is not a directory of results", file=sys.stderr)
        return 2
    rows = build_report(out, names=args.names or None)
    render = {"text": to_text, "markdown": to_markdown, "json": to_json}[args.format]
    print(render(rows), end="")
    try:
        md, js = write_report(rows, out)
    except OSError as exc:
        print(f"error: report not written: {_os_error_line(exc)}", file=sys.stderr)
        return 1
    # machine formats keep stdout to the document itself
    print(f"written: {md}, {js}", file=sys.stdout if args.format == "text" else sys.stderr)
    bad = unjudged(rows)
    if bad:
        print("error: results that could not be judged: "
              + "; ".join(f"{name}: {why}" for name, why in bad.items()), file=sys.stderr)
        return 1
    return 0


def _compare(args) -> int:
    """``report --compare DIR_A DIR_B``: what differs between two output roots (nothing is
    written). Exit 2 when either is not an output root with results (not a directory, the
    directory of one experiment's run, no experiment's results) or nothing is left to
    compare; 1 when some experiment's summary.json cannot be read (listed with the reason);
    else 0."""
    from .experiments.report.compare import check_compare_root, compare_runs
    from .experiments.report.compare_text import to_json, to_text

    try:
        for d in args.compare:
            check_compare_root(d, "--compare")
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.format == "markdown":
        print("error: --compare prints text or json, not markdown", file=sys.stderr)
        return 2
    comparisons = compare_runs(*args.compare, names=args.names or None)
    if not comparisons:
        which = f" of {', '.join(args.names)}" if args.names else ""
        print(f"error: no experiment{which} has a summary.json under either root: nothing "
              "to compare", file=sys.stderr)
        return 2
    if args.format == "json":
        print(to_json(comparisons), end="")
    else:
        print(to_text(comparisons, *args.compare, full=args.all), end="")
    unreadable = [c.name for c in comparisons if c.problems]
    if unreadable:
        print(f"error: unreadable results of {', '.join(unreadable)} (reasons above)",
              file=sys.stderr)
        return 1
    return 0


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="lds-toolkit",
        description="Reproduce the figures and tables of the papers behind lds_toolkit.",
    )
    sub = p.add_subparsers(dest="command", required=True)
    sub.add_parser("list", help="list registered experiments")
    r = sub.add_parser("reproduce", help="run an experiment (or 'all') and write its outputs")
    r.add_argument("names", nargs="+", metavar="NAME",
                   help="experiment name(s) from `lds-toolkit list`, or 'all'")
    add_run_arguments(r)
    rep = sub.add_parser("report", help="judge every declared paper claim on the numbers "
                                        "under --out; print a table, write report.md/.json")
    rep.add_argument("--out", default="figures", help="output root (default: figures)")
    rep.add_argument("--format", choices=("text", "markdown", "json"), default="text",
                     help="text (for people, 100 columns; default), markdown or json")
    rep.add_argument("--compare", nargs=2, metavar=("DIR_A", "DIR_B"), default=None,
                     help="instead: what differs between the runs under two output roots "
                          "(environment, code, config, every summary quantity's largest "
                          "relative difference, changed verdicts): a summary and the "
                          "largest differences")
    rep.add_argument("--all", action="store_true",
                     help="with --compare: every differing quantity and environment entry")
    rep.add_argument("names", nargs="*", metavar="NAME", help="only these experiments")
    return p


def _list() -> int:
    from .experiments import list_experiments, unavailable_experiments

    missing = unavailable_experiments()
    for name, exp in list_experiments().items():
        paper = f"  [{exp.paper}]" if exp.paper else ""
        print(f"{name:22s} {exp.description}{paper}")
    for why in dict.fromkeys(missing.values()):  # one line per missing dependency
        names = [n for n, w in missing.items() if w == why]
        print(f"not runnable here: {', '.join(names)} ({why})")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if args.command == "list":
        return _list()
    if args.command == "report":
        return _report(args)

    from .experiments.base import (
        MissingDependencyError,
        check_requirements,
        get_experiment,
        known_names,
    )

    names = list(args.names)
    run_all = names == ["all"]
    if run_all:
        names = known_names()  # cheapest quick run first
    bad = _unknown_names(names)
    if bad:
        print(bad, file=sys.stderr)
        return 2
    blocked: dict[str, str] = {}  # name -> why it cannot run here (a missing extra)
    for name in names:
        try:
            check_requirements(get_experiment(name))
        except MissingDependencyError as exc:
            blocked[name] = str(exc)
    if blocked and not run_all:
        print(f"error: {next(iter(blocked.values()))}", file=sys.stderr)
        return 1
    names = [n for n in names if n not in blocked]
    try:
        scale, overrides = _checked_run_options(parser, args, names)
    except SystemExit as exc:
        return int(exc.code)
    timings = []
    position = {n: i for i, n in enumerate(names, 1)}

    def report(name, res, seconds):
        s = res.stats
        timings.append(seconds)
        rejected = (f", {s.n_rejected} stored result(s) failed their checks and were "
                    "recomputed" if s.n_rejected else "")
        n_resumed = sum(k in s.resumed for k in s.computed_keys)
        resumed = f" ({n_resumed} resumed from a checkpoint)" if n_resumed else ""
        print(f"{name}: {s.n_computed} task(s) computed{resumed}, {s.n_cached} loaded{rejected}, "
              f"{seconds:.1f} s -> {res.outdir}", flush=True)
        for line in get_experiment(name).headline(res.summary):
            print(f"  {line}", flush=True)

    def starting(name):
        if len(names) > 1:
            print(f"{position[name]}/{len(names)} {name}", flush=True)

    command = ["lds-toolkit", *(sys.argv[1:] if argv is None else argv)]
    code = _run_experiments(names, args, scale, overrides, report, starting, command)
    if not code and len(timings) > 1:
        print(f"total: {sum(timings):.1f} s for {len(timings)} experiments")
    if blocked:
        first, why = next(iter(blocked.items()))
        print(f"skipped {', '.join(blocked)}: {why.removeprefix(first + ' ')}",
              file=sys.stderr)
        return code or 1
    return code


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
