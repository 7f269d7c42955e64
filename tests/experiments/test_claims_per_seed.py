"""Claims judged on the per-seed distribution: median, bootstrap interval, share of seeds."""

from __future__ import annotations

import numpy as np
import pytest

from lds_toolkit.experiments.claims import (
    FAILS,
    HOLDS,
    Claim,
    bootstrap_median_interval,
    evaluate_claim,
)


def _claim(quantity="r", op=">=", threshold=5.0, **kw):
    return Claim("c", "p", "Fig. 3", "s", quantity, op, threshold, per_seed=True, **kw)


def _summary(values, **extra):
    return {"config": {"scale": "paper"}, "r": list(values), **extra}


def test_one_lucky_seed_does_not_carry_a_per_seed_claim():
    """The issue's case: a mean of ratios passes on one huge seed, the median does not."""
    ratios = [83.0, 1.5, 2.0, 3.1, 2.2, 1.8, 4.0, 3.5]  # mean 12.6, median 2.75
    mean_claim = Claim("c", "p", "F", "s", "mean", ">=", 5.0)
    assert evaluate_claim(mean_claim, {"mean": float(np.mean(ratios))}).verdict == HOLDS
    res = evaluate_claim(_claim(), _summary(ratios))
    assert res.verdict == FAILS
    assert res.value == pytest.approx(np.median(ratios))
    assert res.share == pytest.approx(1 / 8) and res.n_seeds == 8
    assert res.spread == (1.5, 83.0)


def test_median_and_share_both_required():
    # median 6 passes, but only 5 of 8 seeds reach 5: fails a 75 % share, passes 50 %
    vals = [1.0, 2.0, 3.0, 6.0, 6.0, 7.0, 8.0, 9.0]
    assert evaluate_claim(_claim(min_share=0.75), _summary(vals)).verdict == FAILS
    res = evaluate_claim(_claim(min_share=0.5), _summary(vals))
    assert res.verdict == HOLDS and res.share == pytest.approx(5 / 8)
    assert res.describe_value().endswith("5 of 8 seeds")
    assert "median" in res.claim.describe_test() and "75" in _claim(
        min_share=0.75).describe_test()


def test_bootstrap_interval_brackets_the_median_and_is_deterministic():
    rng = np.random.default_rng(1)
    vals = rng.lognormal(1.5, 1.0, size=16)
    lo, hi = bootstrap_median_interval(vals)
    assert lo <= np.median(vals) <= hi
    assert (lo, hi) == bootstrap_median_interval(vals)  # same numbers, same interval
    # independent route: the order statistics of a binomial(16, 1/2) 95 % interval for the
    # median are the 4th and 13th; the bootstrap interval lies within the sample range and
    # close to them
    s = np.sort(vals)
    assert s[1] <= lo <= s[7] and s[8] <= hi <= s[14]
    assert bootstrap_median_interval([3.0]) == (3.0, 3.0)
    with pytest.raises(ValueError, match="seeds"):
        bootstrap_median_interval(np.zeros((2, 2, 2)))


def test_list_entries_per_seed_are_judged_elementwise():
    """Per seed a curve (ratios by q): each seed's own curve tested, the median curve too."""
    curves = [[30.0, 5.0, 1.4, 1.0], [20.0, 9.0, 1.1, 1.0], [10.0, 12.0, 1.0, 1.0]]
    claim = Claim("m", "p", "F", "s", "curves", "nonincreasing", 0.05, per_seed=True)
    res = evaluate_claim(claim, {"config": {"scale": "quick"}, "curves": curves})
    assert res.value == [20.0, 9.0, 1.1, 1.0]
    assert res.share == pytest.approx(2 / 3) and res.verdict == HOLDS
    assert len(res.interval) == 2 and len(res.interval[0]) == 4


def test_missing_or_diverged_seeds_count_as_not_holding():
    vals = [6.0, 7.0, None, float("inf"), 8.0]
    res = evaluate_claim(_claim(min_share=0.75), _summary(vals))
    assert res.value == 7.0 and res.share == pytest.approx(3 / 5) and res.verdict == FAILS
    assert evaluate_claim(_claim(), _summary([])).verdict == FAILS
    assert evaluate_claim(_claim(), {"config": {}, "r": 3.0}).verdict == FAILS


def test_per_seed_declaration_errors_and_report_fields():
    with pytest.raises(ValueError, match="min_share"):
        _claim(min_share=0.0)
    with pytest.raises(TypeError, match="per_seed"):
        Claim("c", "p", "F", "s", "x", ">=", 1, per_seed=1)
    d = evaluate_claim(_claim(), _summary([6.0, 7.0])).to_dict()
    assert d["per_seed"] is True and d["n_seeds"] == 2 and d["share"] == 1.0
    assert len(d["interval"]) == 2
