"""The quick scale's claims over base seeds: run, judge, record.

A committed quick run is one base seed. Whether its claims hold *with margin* shows only
when the whole experiment is rerun from other base seeds: this script runs every experiment
that declares a claim for the quick scale at each base seed, judges each such claim, and
writes ``docs/results/quick/base-seeds.json``, which the docs quote (``{{ seeds
quick/NAME CLAIM_ID }}``, :mod:`lds_toolkit.experiments.report.quotes`) and
``tests/test_docs_results.py`` checks against the declarations and the committed run.

Usage::

    python docs/build_seed_sweep.py [--seeds 0-9] [--out figures-seeds] [--jobs 2] [NAME ...]
    python docs/build_seed_sweep.py --seeds 10-19 --out figures-seeds \
        --record docs/results/quick/base-seeds-held-out.json   # seeds not used for tuning

Each run goes to ``OUT/seed<N>/NAME`` and resumes from its stored tasks, so an interrupted
sweep continues where it stopped (``tests/experiments/test_quick_seeds.py``, the slow test
of the same sweep, reuses ``OUT`` when ``LDS_SEED_SWEEP_OUT`` names it). The record holds,
per experiment, claim and base seed: the verdict, the value (the median for a per-seed
claim), the share of seeds and their number, the margin
(:mod:`lds_toolkit.experiments.margins`); and how the sweep ran (date, CPU, library
versions, each run's wall seconds and load average).
"""

from __future__ import annotations

import argparse
import datetime
import json
import sys
import time
from pathlib import Path

from lds_toolkit.experiments import get_experiment, reproduce
from lds_toolkit.experiments.base import known_names
from lds_toolkit.experiments.claims import evaluate_claim
from lds_toolkit.experiments.report.quotes import SEED_SWEEP
from lds_toolkit.experiments.runner.environment import environment

RESULTS = Path(__file__).resolve().parent / "results" / "quick"


def claimed() -> list[str]:
    """The experiments that declare a claim for the quick scale, cheapest first."""
    return [n for n in known_names()
            if any("quick" in c.scales for c in get_experiment(n).claims)]


def judge(name: str, summary: dict) -> dict[str, dict]:
    """Every quick-declared claim of ``name`` on ``summary``, as the record keeps it."""
    out = {}
    for claim in get_experiment(name).claims:
        if "quick" not in claim.scales:
            continue
        r = evaluate_claim(claim, summary)
        out[claim.id] = {"verdict": r.verdict, "value": r.value, "share": r.share,
                         "n_seeds": r.n_seeds, "margin": r.margin,
                         "text": r.describe_value()}
    return out


def parse_seeds(text: str) -> list[int]:
    """``"0-9"`` or ``"0,2,7"`` as a list of base seeds."""
    seeds: list[int] = []
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        seeds.extend(range(int(lo), int(hi or lo) + 1))
    return seeds


def sweep(names: list[str], seeds: list[int], out: Path, jobs: int) -> dict:
    """Run and judge; the record written to ``base-seeds.json``."""
    claims: dict[str, dict[str, list]] = {}
    runs = []
    for name in names:
        for seed in seeds:
            t0 = time.perf_counter()
            res = reproduce(name, scale="quick", seed=seed, out=out / f"seed{seed}", jobs=jobs,
                            progress=False)
            seconds = time.perf_counter() - t0
            run = json.loads((res.outdir / "run.json").read_text())
            runs.append({"experiment": name, "seed": seed, "seconds": round(seconds, 1),
                         "tasks_computed": res.stats.n_computed,
                         "load_average": run.get("load_average")})
            judged = judge(name, res.summary)
            for cid, row in judged.items():
                claims.setdefault(name, {}).setdefault(cid, []).append({"seed": seed, **row})
            bad = [cid for cid, row in judged.items() if row["verdict"] != "holds"]
            print(f"{name} seed {seed}: {seconds:.1f} s, "
                  + (f"FAILS {', '.join(bad)}" if bad else "every quick claim holds"),
                  flush=True)
    env = environment()
    return {"seeds": seeds, "claims": claims,
            "how": {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(
                        timespec="seconds"),
                    "jobs": jobs, "cpu": env["cpu"]["model"], "cores": env["cpu"]["cores"],
                    "python": env["python"]["version"], "libraries": env["libraries"],
                    "runs": runs}}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("names", nargs="*", help="experiments (default: every one with a quick "
                                             "claim)")
    p.add_argument("--seeds", default="0-9", help="base seeds, e.g. 0-9 or 0,2,7")
    p.add_argument("--out", default="figures-seeds", help="output root of the runs")
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--record", default=str(RESULTS / SEED_SWEEP),
                   help="where to write the record (default: docs/results/quick/)")
    args = p.parse_args(argv)
    names = args.names or claimed()
    record = sweep(names, parse_seeds(args.seeds), Path(args.out), args.jobs)
    if args.names:  # a partial sweep updates the record's entries for those experiments
        path = Path(args.record)
        if path.is_file():
            old = json.loads(path.read_text())
            old["claims"].update(record["claims"])
            record["claims"] = old["claims"]
    Path(args.record).write_text(json.dumps(record, indent=1) + "\n")
    failed = sum(r["verdict"] != "holds" for rows in record["claims"].values()
                 for rs in rows.values() for r in rs)
    print(f"written: {args.record}; {failed} claim verdicts other than holds")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
