"""``regret-scaling`` can fail: its context claims catch a learner that ignores its context.

A regret check that passes whatever the context does not test Theorem 5 (issue 26: with
lr = 1/max||x||^2 and a 1/sqrt(t) schedule every context gave the same slope, and Algorithm 1
on Region B passed the O~(sqrt T) check too). Here the experiment is rerun, on the same
seeds, systems and streams, with Algorithm 1 replaced by a learner that takes a context
argument and ignores it (it always uses the full history): the claims that say what the
short context costs outside Theorem 5's cover must then fail, while they hold for the real
learner.
"""

from __future__ import annotations

import numpy as np

from lds_toolkit.experiments import get_experiment, reproduce
from lds_toolkit.experiments.catalog.regret_scaling import RegretScaling
from lds_toolkit.experiments.claims import FAILS, HOLDS, evaluate_claim
from lds_toolkit.learning import SpectralFiltering, SpectralFilteringAR2

CONTEXT_CLAIMS = ("regionA-short-adds", "regionB-short-adds",
                  "regionA-short-slope-above-full")


class ContextBlindSF(SpectralFiltering):
    """Algorithm 1 that accepts ``context`` and ignores it: every tap of the filters."""

    @property
    def context_length(self) -> int:
        return self.horizon


class ContextBlindAR2(SpectralFilteringAR2):
    @property
    def context_length(self) -> int:
        return self.horizon


class ContextBlindRegret(RegretScaling):
    learners = {1: ContextBlindSF, 2: ContextBlindAR2}


def test_context_blind_learner_ignores_its_context():
    rng = np.random.default_rng(0)
    u, y = rng.standard_normal((256, 1)), rng.standard_normal((256, 1))
    short = ContextBlindSF(horizon=256, k=8, context=16, lr=0.1, lr_schedule="constant")
    full = SpectralFiltering(horizon=256, k=8, context=None, lr=0.1, lr_schedule="constant")
    np.testing.assert_array_equal(short.fit_predict(u, y), full.fit_predict(u, y))
    real = SpectralFiltering(horizon=256, k=8, context=16, lr=0.1, lr_schedule="constant")
    assert not np.array_equal(real.fit_predict(u, y), full.fit_predict(u, y))


def test_context_claims_fail_for_a_context_blind_learner(experiment_run, tmp_path):
    claims = {c.id: c for c in get_experiment("regret-scaling").claims}
    real = experiment_run("regret-scaling", "quick").summary
    blind = reproduce(ContextBlindRegret(), scale="quick", out=tmp_path, progress=False,
                      overrides={"setups": ["alg1-regionA", "alg1-regionB"]}).summary
    for cid in CONTEXT_CLAIMS:
        assert evaluate_claim(claims[cid], real).verdict == HOLDS, cid
        res = evaluate_claim(claims[cid], blind)
        assert res.verdict == FAILS and res.share == 0.0, (cid, res.value)
    # the blind learner's regret is the full-context learner's at every T, seed and context
    for setup in ("alg1-regionA", "alg1-regionB"):
        full = blind[setup]["1"]["regret_per_seed"]
        shorter = [q for q in blind[setup] if q != "1"]
        assert shorter
        for q in shorter:
            np.testing.assert_array_equal(blind[setup][q]["regret_per_seed"], full)
