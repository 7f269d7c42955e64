"""Claims that survive another seed: every lengen claim declared at quick scale keeps its
verdict when the whole experiment is rerun from three other base seeds.

A claim judged on one lucky draw flips when the seeds change (issue 26: ``lengen-region-b``
gave 3.5x, 10.4x and 4.86x for base seeds 1-3 against the committed 11.1x, and its ">= 5x"
failed on two of four). The lengen claims are judged on the per-seed distribution (median
and share of seeds, :mod:`lds_toolkit.experiments.claims`) over 16 seeds; this test reruns
each experiment at quick scale with base seeds 1, 2 and 3 and requires the verdict of every
claim declared at quick scale to be the one of base seed 0 (all "holds").
"""

from __future__ import annotations

import pytest

from lds_toolkit.experiments import reproduce
from lds_toolkit.experiments.claims import HOLDS, evaluate_claim

from ..claims import claims_at

FIGURES = ["lengen-region-a", "lengen-region-b", "lengen-alg2"]
OTHER_BASE_SEEDS = (1, 2, 3)


def _verdicts(name: str, summary: dict) -> dict:
    return {c.id: evaluate_claim(c, summary).verdict for c in claims_at(name, "quick")}


# slow (make test-slow): three whole reruns per experiment, ~1 min of CPU for the lengen
# figures and 3 for regret-scaling, against the default suite's 6-minute budget on 2 cores
@pytest.mark.slow
@pytest.mark.parametrize("name", FIGURES + ["regret-scaling"])
def test_quick_verdicts_survive_three_other_base_seeds(experiment_run, tmp_path, name):
    base = _verdicts(name, experiment_run(name, "quick").summary)
    assert base and set(base.values()) == {HOLDS}, base
    for seed in OTHER_BASE_SEEDS:
        res = reproduce(name, scale="quick", seed=seed, out=tmp_path / f"seed{seed}",
                        progress=False)
        assert res.summary["config"]["seed"] == seed and res.summary["seeds"] >= 16
        got = _verdicts(name, res.summary)
        assert got == base, (f"{name}, base seed {seed}: "
                             + ", ".join(f"{k}: {v}" for k, v in got.items() if v != base[k]))
