"""A claim's margin: how far its verdict is from flipping, in units of the seed spread
(lds_toolkit.experiments.margins), checked against closed forms."""

from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np
import pytest
from scipy import stats

from lds_toolkit.experiments.claims import FAILS, HOLDS, Claim, evaluate_claim
from lds_toolkit.experiments.margins import MARGIN_CAP, RESAMPLES, satisfies, spread_margin
from lds_toolkit.experiments.report import FRAGILE, ReportRow, to_text


def _per_seed(op=">=", threshold=1.5, min_share=0.75):
    return Claim("c", "p", "F", "s", "r", op, threshold, per_seed=True, min_share=min_share)


def _judge(claim, values):
    return evaluate_claim(claim, {"config": {"scale": "quick"}, "r": list(values)})


@pytest.mark.parametrize("k", [12, 13, 14, 15, 16])
def test_share_margin_is_the_binomial_quantile(k):
    """When only the share decides, a bootstrap resample holds k* ~ Binomial(16, k/16)
    seeds: the margin is the normal quantile of P(k* >= 12) (exact, from scipy), up to the
    Monte Carlo error of the resamples."""
    values = [2.0] * k + [1.0] * (16 - k)  # median 2 >= 1.5 in every resample with k >= 12
    res = _judge(_per_seed(), values)
    p = stats.binom.sf(11, 16, k / 16)  # P(k* >= 12)
    if p >= 1 - 1 / RESAMPLES:
        assert res.margin == pytest.approx(MARGIN_CAP, abs=0.1)
        return
    se = math.sqrt(p * (1 - p) / RESAMPLES) / NormalDist().pdf(NormalDist().inv_cdf(p))
    assert res.margin == pytest.approx(NormalDist().inv_cdf(p), abs=4 * se + 0.01)
    assert res.fragile == (res.margin < 1.0) and res.verdict == HOLDS


def test_median_margin_counts_seeds_against_the_binomial_spread():
    """With the share condition inactive, the median decides: for an odd number of seeds
    median >= t exactly when at least (n + 1) / 2 seeds are, so a resample holds when
    Binomial(n, q) >= (n + 1) / 2 (q: the share of seeds at or above t) and the margin is
    that probability's normal quantile (exact, from scipy; Monte Carlo error allowed)."""
    rng = np.random.default_rng(3)
    n = 21
    values = rng.normal(10.0, 2.0, n)
    for threshold in np.sort(values)[[3, 6, 8]]:
        res = _judge(_per_seed(threshold=threshold, min_share=0.01), values)
        q = np.mean(values >= threshold)
        p = stats.binom.sf((n + 1) // 2 - 1, n, q)
        se = math.sqrt(p * (1 - p) / RESAMPLES) / NormalDist().pdf(NormalDist().inv_cdf(p))
        assert res.margin == pytest.approx(min(NormalDist().inv_cdf(p), MARGIN_CAP),
                                           abs=4 * se + 0.02)


def test_margin_is_invariant_to_a_monotone_transform():
    """Ratios spanning decades need no log: the same claim on log values has the same
    margin (odd number of seeds: the median commutes with the transform)."""
    rng = np.random.default_rng(5)
    values = rng.lognormal(1.0, 1.5, 15)
    raw = _judge(_per_seed(threshold=1.5, min_share=0.6), values)
    logged = _judge(_per_seed(threshold=math.log(1.5), min_share=0.6), np.log(values))
    assert raw.margin == logged.margin and raw.verdict == logged.verdict


def test_a_failing_claim_has_a_negative_margin_and_margins_are_deterministic():
    res = _judge(_per_seed(), [2.0] * 8 + [1.0] * 8)
    assert res.verdict == FAILS and res.margin < 0 and not res.fragile
    assert _judge(_per_seed(), [2.0] * 8 + [1.0] * 8).margin == res.margin


def test_list_entries_and_orderings_are_resampled_too():
    curves = [[30.0, 5.0, 1.4, 1.0]] * 9 + [[10.0, 12.0, 1.0, 1.0]]
    claim = Claim("m", "p", "F", "s", "r", "nonincreasing", 0.05, per_seed=True,
                  min_share=0.5)
    res = _judge(claim, curves)
    assert res.verdict == HOLDS and res.margin > 2  # 9 of 10 seeds' curves are ordered
    ok = satisfies("nonincreasing", np.array([[3.0, 2.0, 2.05], [3.0, 2.0, 2.5]]), 0.05)
    assert ok.tolist() == [True, False]
    ok = satisfies("between", np.array([[0.96, 1.0], [0.9, 1.0]]), (0.95, 1.05))
    assert ok.tolist() == [True, False]
    assert satisfies("is", np.zeros(2), True) is None


def test_spread_margin_is_distance_over_the_standard_deviation():
    vals = [1.03, 1.06, 0.98, 1.10]
    sd = np.std(vals, ddof=1)
    assert spread_margin(">=", 0.9, vals, vals) == pytest.approx((0.98 - 0.9) / sd)
    assert spread_margin(">=", 0.5, vals, vals) == MARGIN_CAP  # 9.5 spreads: capped
    assert spread_margin("<=", 0.05, 0.02, [0.01, 0.03]) == pytest.approx(
        0.03 / np.std([0.01, 0.03], ddof=1))
    assert spread_margin("between", (0.9, 1.1), 1.08, vals) == pytest.approx(0.02 / sd)
    assert spread_margin(">=", 0.8, [1.0, float("nan")], vals) == -MARGIN_CAP
    assert spread_margin(">=", 0.8, 1.0, [1.0]) is None  # one seed: no spread
    assert spread_margin("is", True, True, vals) is None
    claim = Claim("c", "p", "F", "s", "r", ">=", 0.9, spread="r")
    res = evaluate_claim(claim, {"config": {}, "r": vals})
    assert res.margin == pytest.approx((0.98 - 0.9) / sd)


def test_report_marks_a_fragile_claim_and_counts_it():
    res = _judge(_per_seed(), [2.0] * 12 + [1.0] * 4)  # 12 of 16 against 3/4: at the edge
    assert res.verdict == HOLDS and res.fragile and res.margin < 1
    row = ReportRow("x", res, None)
    assert row.verdict == FRAGILE and row.status == HOLDS
    text = to_text([row])
    assert "holds, fragile" in text and "margin 0." in text and "(1 fragile" in text
    d = res.to_dict()
    assert d["fragile"] is True and d["margin"] == res.margin
    assert res.describe_margin().startswith("fragile: margin ")
    solid = _judge(_per_seed(), [2.0] * 16)
    assert not solid.fragile and solid.describe_margin() == f"margin ≥ {MARGIN_CAP:g}"
