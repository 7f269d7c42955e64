"""``lds-toolkit`` command line: list and reproduce registered experiments."""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

from .experiments.base import SCALES


def add_run_arguments(parser: argparse.ArgumentParser) -> None:
    """The options shared by ``lds-toolkit reproduce`` and the ``simulations/`` scripts."""
    parser.add_argument("--scale", choices=SCALES, default=None,
                        help="quick (CI, a CPU minute), medium (CPU evidence, trained to a "
                             "plateau) or paper (default)")
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
    parser.add_argument("--no-progress", action="store_true", help="hide progress bars")


def run_script(names: str | Sequence[str], describe: Callable[[Any], object] | None = None,
               argv: list[str] | None = None,
               description: str | None = None) -> list:
    """Entry point of a ``simulations/`` script: parse the shared options, reproduce each
    experiment in ``names``, print its numbers (``describe(result)``, or the summary without
    its config as JSON) and wall time. Returns the :class:`RunResult` objects."""
    import json

    from .experiments import reproduce

    names = [names] if isinstance(names, str) else list(names)
    parser = argparse.ArgumentParser(description=description)
    add_run_arguments(parser)
    args = parser.parse_args(argv)
    scale, overrides = _checked_run_options(parser, args, names)
    results = []
    for name in names:
        t0 = time.perf_counter()
        res = reproduce(name, scale=scale, seeds=args.seeds, seed=args.seed,
                        overrides=overrides, out=args.out, jobs=args.jobs,
                        scheduler=args.scheduler, progress=not args.no_progress,
                        fresh=args.fresh)
        if describe is not None:
            describe(res)
        else:
            summary = {k: v for k, v in res.summary.items() if k != "config"}
            print(json.dumps(summary, indent=1))
        print(f"{name}: {time.perf_counter() - t0:.1f} s; figures: "
              f"{', '.join(str(p) for p in res.figures)}")
        results.append(res)
    return results


def _checked_run_options(parser: argparse.ArgumentParser, args, names) -> tuple[str, dict]:
    """Scale and overrides of a run, every experiment's config built once up front so that a
    bad option ends the command (exit 2, one line) before any task runs."""
    from .experiments import get_experiment
    from .experiments.overrides import parse_assignments
    from .experiments.runner import build_config, resolve_scale

    try:
        scale = resolve_scale(args.scale, args.quick)
        overrides = parse_assignments(args.overrides)
        for name in names:
            build_config(get_experiment(name), scale=scale, seeds=args.seeds, seed=args.seed,
                         overrides=overrides)
    except (ValueError, TypeError) as exc:
        parser.exit(2, f"error: {exc}\n")
    return scale, overrides


def _report(args) -> int:
    from pathlib import Path

    from .experiments.report import build_report, to_text, write_report

    out = Path(args.out)
    if not out.is_dir():
        print(f"error: --out {str(out)!r} is not a directory of results", file=sys.stderr)
        return 2
    rows = build_report(out, names=args.names or None)
    print(to_text(rows), end="")
    md, js = write_report(rows, out)
    print(f"written: {md}, {js}")
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
    rep.add_argument("names", nargs="*", metavar="NAME", help="only these experiments")
    return p


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    from .experiments import (
        get_experiment,
        list_experiments,
        reproduce,
        unavailable_experiments,
    )

    if args.command == "list":
        for name, exp in list_experiments().items():
            paper = f"  [{exp.paper}]" if exp.paper else ""
            print(f"{name:22s} {exp.description}{paper}")
        for mod, why in unavailable_experiments().items():
            print(f"{mod:22s} (unavailable: {why})")
        return 0

    if args.command == "report":
        return _report(args)

    names = list(args.names)
    if names == ["all"]:
        names = list(list_experiments())
    try:
        for name in names:
            get_experiment(name)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    try:
        scale, overrides = _checked_run_options(parser, args, names)
    except SystemExit as exc:
        return int(exc.code)
    timings = []
    for name in names:
        t0 = time.perf_counter()
        res = reproduce(name, scale=scale, seeds=args.seeds, seed=args.seed,
                        overrides=overrides, out=args.out, jobs=args.jobs,
                        scheduler=args.scheduler, progress=not args.no_progress,
                        fresh=args.fresh)
        s = res.stats
        timings.append((name, time.perf_counter() - t0))
        print(f"{name}: {s.n_computed} task(s) computed, {s.n_cached} loaded, "
              f"{timings[-1][1]:.1f} s -> {res.outdir}", flush=True)
        for line in get_experiment(name).headline(res.summary):
            print(f"  {line}", flush=True)
    if len(timings) > 1:
        print(f"total: {sum(t for _, t in timings):.1f} s for {len(timings)} experiments")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
