"""Quick-scale claims that hold on any base seed, results that repeat to the byte (slow).

* Every claim declared for the quick scale holds for base seeds 0-9 (each experiment with
  such a claim rerun from scratch at each base seed). A claim judged on one lucky draw, or
  a training budget that a slower machine's seed does not finish, fails here.
* Two runs of each of the thirteen quick experiments give byte-identical ``summary.json``
  (results only: wall times and host facts are in ``run.json``), and the default seed's
  verdicts equal those of the committed quick run (``docs/results/quick``).

Whole, about 40 min of CPU on 2 cores (``make test-slow``); ``docs/build_seed_sweep.py``
makes the same runs and records them (``docs/results/quick/base-seeds.json``). The default
suite keeps the cheap parts: ``test_environment.py`` (a timed toy experiment), ``test_runner.py``
(``lds-impulse`` twice, jobs 1 and 2), ``test_results_only.py`` (three lengen runs twice) and
``test_compare.py`` (a fresh quick run of every numpy experiment against the committed one).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from lds_toolkit.experiments import get_experiment, reproduce
from lds_toolkit.experiments.base import known_names
from lds_toolkit.experiments.claims import HOLDS, evaluate_claim
from lds_toolkit.experiments.report import build_report

ROOT = Path(__file__).resolve().parents[2]
COMMITTED = ROOT / "docs" / "results" / "quick"
BASE_SEEDS = range(10)
#: The experiments that declare a claim for the quick scale.
CLAIMED = [n for n in known_names()
           if any("quick" in c.scales for c in get_experiment(n).claims)]

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory):
    """``quick_run(name, seed, copy=0)``: one quick run, cached per module, into
    ``OUT/seed<N>/NAME`` (``copy`` 1: ``OUT/seed<N>-copy1``, always from scratch). ``OUT`` is
    ``$LDS_SEED_SWEEP_OUT`` when set (the runs of ``docs/build_seed_sweep.py``: their stored
    tasks are loaded, checked and summarised again), else a temporary directory."""
    runs = {}
    shared = os.environ.get("LDS_SEED_SWEEP_OUT")
    root = Path(shared) if shared else tmp_path_factory.mktemp("seeds")

    def run(name: str, seed: int, copy: int = 0):
        if (name, seed, copy) not in runs:
            out = root / (f"seed{seed}" if not copy else f"seed{seed}-copy{copy}")
            runs[name, seed, copy] = reproduce(name, scale="quick", seed=seed, out=out,
                                               jobs=2, progress=False, fresh=bool(copy))
        return runs[name, seed, copy]

    return run


@pytest.mark.parametrize("seed", BASE_SEEDS)
@pytest.mark.parametrize("name", CLAIMED)
def test_every_quick_claim_holds_on_base_seeds_0_to_9(quick_run, name, seed):
    summary = quick_run(name, seed).summary
    assert summary["config"]["seed"] == seed
    failures = []
    for claim in get_experiment(name).claims:
        if "quick" not in claim.scales:
            continue
        res = evaluate_claim(claim, summary)
        if res.verdict != HOLDS:
            failures.append(f"{claim.id}: {res.describe_value()} against "
                            f"{claim.describe_test()} ({res.message})")
    assert not failures, f"{name}, base seed {seed}:\n" + "\n".join(failures)


@pytest.mark.parametrize("name", known_names())
def test_two_runs_give_byte_identical_summaries(quick_run, name):
    first, second = quick_run(name, 0), quick_run(name, 0, copy=1)
    assert second.stats.n_computed == second.stats.n_tasks > 0  # computed again, fresh
    assert (first.outdir / "summary.json").read_bytes() == \
        (second.outdir / "summary.json").read_bytes()


@pytest.mark.parametrize("name", known_names())
def test_the_default_seed_gives_the_committed_verdicts(quick_run, name):
    fresh = quick_run(name, 0)
    here = {r.result.claim.id: r.status for r in build_report(fresh.outdir.parent, [name])}
    committed = {r.result.claim.id: r.status for r in build_report(COMMITTED, [name])}
    assert here == committed
