"""One house style for result numbers (lds_toolkit.experiments.numbers): what the report,
the claims and the docs' quotes print, each pinned against Python's own formatting."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from lds_toolkit.experiments.claims import Claim, evaluate_claim, format_value
from lds_toolkit.experiments.numbers import NumberFormatError, format_number
from lds_toolkit.experiments.report.quotes import QuoteError, render

RESULTS = Path(__file__).resolve().parents[2] / "docs" / "results"


@pytest.mark.parametrize("x, fmt, python, ours", [
    (7000.0, ".3g", "7e+03", "7e3"),
    (1.29e6, ".3g", "1.29e+06", "1.29e6"),
    (1.6e-4, ".1e", "1.6e-04", "1.6e-4"),
    (-2.44e-05, ".3g", "-2.44e-05", "-2.44e-5"),
    (0.0123, ".3g", "0.0123", "0.0123"),
    (0.998, ".1%", "99.8%", "99.8 %"),
    (1.0, ".0%", "100%", "100 %"),
    (3, "d", "3", "3"),
])
def test_house_style_against_pythons_format(x, fmt, python, ours):
    """Python's format first (so the case is what we think it is), then ours."""
    assert format(x, fmt) == python
    assert format_number(x, fmt) == ours


def test_units_dates_and_what_does_not_apply():
    assert format_number(2598.0, "min:.1f") == "43.3 min"
    assert format_number(1.04, "x:.2f") == "1.04×"
    assert format_number(float("nan")) == "nan" and format_number("text") == "text"
    # the day of the timestamp in its own offset, as run.json records it
    assert format_number("2026-11-25T22:42:00+00:00", "date") == "2026-11-25"
    assert format_number("2026-11-25T23:30:00-05:00", "date") == "2026-11-25"
    for x, fmt, why in ((1.5, "date", "ISO 8601 timestamp"), ("yesterday", "date", "ISO 8601"),
                        ("a", "min:.1f", "needs a number"), (1.5, ".q", "does not apply")):
        with pytest.raises(NumberFormatError, match=why):
            format_number(x, fmt)


def test_a_claims_number_prints_in_the_house_style():
    """describe_value went through f"{x:.3g}": '7e+03' in the reproduction table."""
    claim = Claim("c", "p", "Fig. 1", "s", "ratio", ">=", 1e3)
    res = evaluate_claim(claim, {"config": {"scale": "paper"}, "ratio": 7000.0})
    assert res.describe_value() == "7e3" == format_value(7000.0)
    per_seed = Claim("c", "p", "Fig. 1", "s", "r", "<=", 1e-3, per_seed=True)
    vals = [2.5e-8, 1.1e-9, 3.0e-7, 4.2e-8]
    res = evaluate_claim(per_seed, {"config": {"scale": "paper"}, "r": vals})
    text = res.describe_value()
    assert text.startswith(f"median {format_number(float(np.median(vals)))} [")
    assert not re.search(r"e[+-]0\d", text), text
    assert format_value([1e-7, 0.5, "x"]) == '[1e-7, 0.5, "x"]'


def test_quotes_render_dates_shares_and_sums_from_the_committed_runs():
    run = json.loads((RESULTS / "medium" / "las-ablation" / "run.json").read_text())
    summary = json.loads((RESULTS / "medium" / "assoc-recall" / "summary.json").read_text())
    assert render("{{ run medium/las-ablation date date }}", RESULTS) == run["date"][:10]
    assert render("{{ run medium/las-ablation date }}", RESULTS) == run["date"]
    acc = json.loads((RESULTS / "medium" / "las-ablation" / "summary.json").read_text())[
        "accuracy"]["alibi"]
    assert render("{{ value medium/las-ablation accuracy/alibi .1% }}", RESULTS) == \
        f"{100 * acc:.1f} %"
    counts = summary["split_count"]["focus"]["1024"]
    assert render("{{ sum medium/assoc-recall split_count/focus/1024 }}", RESULTS) == \
        str(sum(sum(v) for v in counts.values()))
    assert render("{{ sum medium/assoc-recall accuracy_seeds/focus/30 .3f }}", RESULTS) == \
        f"{sum(summary['accuracy_seeds']['focus']['30']):.3f}"
    for bad, why in (("{{ run medium/las-ablation sweep_seconds date }}", "ISO 8601"),
                     ("{{ sum medium/assoc-recall status/focus/30 }}", "not only numbers")):
        with pytest.raises(QuoteError, match=why):
            render(bad, RESULTS)
