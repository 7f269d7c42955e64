"""The docs' numbers are what the committed runs give.

``docs/results/<scale>/<name>/summary.json`` are copies of real runs (``make results``);
the reproduction table between the markers of docs/index.md must equal
:func:`lds_toolkit.experiments.report.reproduction_table` of them, so it can neither be
edited by hand nor go stale when a claim's declaration or a committed run changes. The
numbers the pages quote are quotes (:mod:`lds_toolkit.experiments.report.quotes`) rendered from
the same runs by the site's hook; every one must render, and the quick scale's seed sweep
(``docs/results/quick/base-seeds.json``) must cover every quick claim and agree with the
committed run.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from lds_toolkit.experiments import list_experiments
from lds_toolkit.experiments.base import SCALES
from lds_toolkit.experiments.claims import bootstrap_median_interval, evaluate_claim
from lds_toolkit.experiments.report.quotes import QuoteError, Runs, quotes_in, render

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("build_results", ROOT / "docs" / "build_results.py")
build_results = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(build_results)


def test_committed_table_equals_the_table_of_the_committed_numbers():
    committed = build_results.committed_table(build_results.INDEX.read_text())
    assert committed == build_results.table(), (
        "docs/index.md's reproduction table is stale: run `python docs/build_results.py`")


def test_committed_runs_are_registered_experiments_at_their_scale():
    runs = sorted(build_results.RESULTS.glob("*/*/summary.json"))
    assert runs, "no committed runs under docs/results/"
    for summary in runs:
        scale, name = summary.parent.parent.name, summary.parent.name
        assert scale in SCALES and name in list_experiments(), summary
        assert json.loads(summary.read_text())["config"]["scale"] == scale, summary


def test_the_table_follows_the_numbers(tmp_path):
    """A committed number that no longer meets its claim changes the table (so the first
    test would fail): copy the results, break one number, compare."""
    results = tmp_path / "results"
    shutil.copytree(build_results.RESULTS, results)
    summary_path = next(p for p in sorted(results.glob("*/*/summary.json"))
                        if list_experiments()[p.parent.name].claims)
    claims = list_experiments()[summary_path.parent.name].claims
    before = build_results.table(results)
    summary = json.loads(summary_path.read_text())
    # remove the first claim's quantity: its verdict becomes 'not run' at this scale
    path = [p for p in claims[0].quantity.split("/") if p != "*"]
    node = summary
    for part in path[:-1]:
        node = node[part] if isinstance(node, dict) else node[int(part)]
    if isinstance(node, dict):
        del node[path[-1]]
    summary_path.write_text(json.dumps(summary))
    assert build_results.table(results) != before


def test_collect_copies_a_run_under_its_own_scale(tmp_path):
    out, results = tmp_path / "out", tmp_path / "results"
    src = next(build_results.RESULTS.glob("*/*/summary.json"))
    (out / src.parent.name).mkdir(parents=True)
    shutil.copy(src, out / src.parent.name / "summary.json")
    copied = build_results.collect(out, results)
    assert copied == [f"{src.parent.name} ({src.parent.parent.name})"]
    assert (results / src.parent.parent.name / src.parent.name / "summary.json").read_bytes() \
        == src.read_bytes()


# ------------------------------------------------------------------ numbers quoted in pages

DOCS = ROOT / "docs"
RESULTS = build_results.RESULTS
#: Pages rendered with the site's hook (every Markdown page but the tutorials' output).
PAGES = sorted(p for p in DOCS.rglob("*.md")
               if "tutorials" not in p.parts and "results" not in p.parts)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(DOCS)))
def test_every_quoted_number_renders_from_the_committed_runs(page):
    """What `make docs` does to each page: every quote resolves to a committed number (a
    missing run, path or claim fails the build, naming the page and line)."""
    text = page.read_text()
    rendered = render(text, RESULTS, where=str(page.relative_to(ROOT)))
    assert not quotes_in(rendered)


def test_pages_that_explain_experiments_quote_their_numbers():
    """The pages the issue found stale quote their quick numbers rather than typing them."""
    for name in ("experiments/cloze.md", "experiments/lds-streams.md",
                 "experiments/induction-heads.md", "experiments/nss-s4.md",
                 "learning/spectral_filtering.md", "index.md"):
        assert len(quotes_in((DOCS / name).read_text())) >= 5, name


def test_quotes_follow_the_numbers_and_fail_on_what_does_not_exist(tmp_path):
    results = tmp_path / "results"
    shutil.copytree(RESULTS, results)
    text = ("{{ median paper/cloze mse_seeds/s4+attention }}; {{ count paper/cloze "
            "mse_seeds/attention < 0.1 }}; {{ ratio paper/cloze mse/s4 mse/s4+attention .3g }}")
    summary_path = results / "paper" / "cloze" / "summary.json"
    summary = json.loads(summary_path.read_text())
    mse = summary["mse_seeds"]["s4+attention"]
    lo, hi = bootstrap_median_interval(mse)
    med, k = np.median(mse), sum(v < 0.1 for v in summary["mse_seeds"]["attention"])
    ratio = summary["mse"]["s4"] / summary["mse"]["s4+attention"]
    assert render(text, results) == (f"{med:.3g} &#91;{lo:.3g}, {hi:.3g}]; {k} of "
                                     f"{len(summary['mse_seeds']['attention'])}; {ratio:.3g}"
                                     ).replace("e-0", "e-")
    summary["mse_seeds"]["attention"] = [0.01] * len(summary["mse_seeds"]["attention"])
    summary_path.write_text(json.dumps(summary))
    assert render(text, Runs(results)) != render(text, RESULTS)  # a new number, a new page
    for bad, why in (("{{ value paper/cloze no/such/path }}", "no entry 'no'"),
                     ("{{ value quick/no-such-run mse }}", "no committed run"),
                     ("{{ claim paper/cloze no-such-claim }}", "declares no claim"),
                     ("{{ nonsense paper/cloze mse }}", "unknown quote function"),
                     ("{{ count paper/cloze mse_seeds/attention ~ 0.1 }}", "OP one of")):
        with pytest.raises(QuoteError, match=why):
            render(f"line 1\n{bad}", results, where="page.md")
        with pytest.raises(QuoteError, match="page.md, line 2"):
            render(f"line 1\n{bad}", results, where="page.md")


def test_units_and_benchmark_files_render_from_the_committed_numbers(tmp_path):
    """``min:.1f`` converts seconds; ``bench`` reads a committed benchmark JSON; a path
    outside the results root or a missing entry fails."""
    run = json.loads((RESULTS / "quick" / "cloze" / "run.json").read_text())
    secs = run["sweep_seconds"]
    assert render("{{ run quick/cloze sweep_seconds min:.2f }}", RESULTS) == \
        f"{secs / 60:.2f} min"
    assert render("{{ run quick/cloze sweep_seconds ms:.0f }}", RESULTS) == \
        f"{secs * 1e3:.0f} ms"
    bench = tmp_path / "cpu-evidence"
    bench.mkdir()
    (bench / "b.json").write_text(json.dumps({"results": {"las": {"16384": {"t": 25.9}}},
                                              "ratios": [1.04, 1.14], "cpu": "Xeon"}))
    assert render("{{ bench cpu-evidence/b.json results/las/16384/t s:.1f }}", tmp_path) \
        == "25.9 s"
    assert render("{{ bench cpu-evidence/b.json ratios x:.2f }}", tmp_path) == \
        "1.04×, 1.14×"
    for bad, why in (("{{ bench cpu-evidence/b.json results/sdpa }}", "no entry 'sdpa'"),
                     ("{{ bench ../b.json ratios }}", "not DIR/FILE.json"),
                     ("{{ bench cpu-evidence/none.json ratios }}", "no committed benchmark"),
                     ("{{ bench cpu-evidence/b.json cpu min }}", "needs a number")):
        with pytest.raises(QuoteError, match=why):
            render(bad, tmp_path)


def test_value_ratio_and_range_read_a_benchmark_file_in_place_of_a_run(tmp_path):
    """``DIR/FILE.json`` in place of ``SCALE/NAME``: the functions read that committed
    benchmark file (a ratio of two of its entries, a range over a wildcard)."""
    bench = tmp_path / "cpu-evidence"
    bench.mkdir()
    (bench / "b.json").write_text(json.dumps({
        "results": {"las": {"16384": {"t": 25.9}}, "sdpa": {"16384": {"t": 8.87}}},
        "rows": [{"ms": 43.4}, {"ms": 70.8}]}))
    assert render("{{ ratio cpu-evidence/b.json results/las/16384/t results/sdpa/16384/t "
                  "x:.2f }}", tmp_path) == f"{25.9 / 8.87:.2f}×"
    assert render("{{ range cpu-evidence/b.json rows/*/ms .0f }}", tmp_path) == "43–71"
    assert render("{{ value cpu-evidence/b.json results/sdpa/16384/t s:.1f }}", tmp_path) \
        == "8.9 s"
    for bad, why in (("{{ ratio cpu-evidence/b.json results/las results/sdpa }}",
                      "both must be numbers"),
                     ("{{ range ../b.json rows/*/ms }}", "not DIR/FILE.json"),
                     ("{{ value cpu-evidence/none.json rows }}", "no committed benchmark")):
        with pytest.raises(QuoteError, match=why):
            render(bad, tmp_path)


def test_total_sums_a_run_json_entry_over_runs():
    runs = ("cloze", "las-ablation")
    secs = [json.loads((RESULTS / "medium" / n / "run.json").read_text())["sweep_seconds"]
            for n in runs]
    assert render("{{ total medium/cloze,las-ablation sweep_seconds min:.2f }}", RESULTS) == \
        f"{sum(secs) / 60:.2f} min"
    for bad, why in (("{{ total medium/cloze,no-such-run sweep_seconds }}", "no committed run"),
                     ("{{ total medium/cloze,las-ablation date }}", "not a number"),
                     ("{{ total medium/cloze no_such_key }}", "not a number")):
        with pytest.raises(QuoteError, match=why):
            render(bad, RESULTS)


def test_the_held_out_seed_sweep_covers_every_quick_claim_and_its_quote():
    """docs/results/quick/base-seeds-held-out.json: the same sweep on base seeds 10-19, run
    after the quick budgets were fixed on seeds 0-9 (``build_seed_sweep.py --seeds 10-19
    --record ...``). It judges every claim declared for the quick scale on each of those
    seeds, every verdict holds, and the ``sweep`` quote counts its rows."""
    sweep = json.loads((RESULTS / "quick" / "base-seeds-held-out.json").read_text())
    assert sweep["seeds"] == list(range(10, 20))
    n = 0
    for name, exp in list_experiments().items():
        quick = [c for c in exp.claims if "quick" in c.scales]
        assert sorted(sweep["claims"].get(name, {})) == sorted(c.id for c in quick), name
        for claim in quick:
            rows = sweep["claims"][name][claim.id]
            assert [r["seed"] for r in rows] == list(range(10, 20)), (name, claim.id)
            failed = [r for r in rows if r["verdict"] != "holds"]
            assert not failed, (name, claim.id, failed)
            n += len(rows)
    n_exp = sum(1 for e in list_experiments().values()
                if any("quick" in c.scales for c in e.claims))
    assert render("{{ sweep quick/base-seeds-held-out }}", RESULTS) == (
        f"{n} of {n} verdicts hold ({n // 10} claims of {n_exp} experiments, base seeds "
        f"10-19)")


def test_the_seed_sweep_covers_every_quick_claim_and_matches_the_committed_run():
    """docs/results/quick/base-seeds.json (docs/build_seed_sweep.py) judges every claim
    declared for the quick scale on base seeds 0-9, every one holds, and its base seed 0 is
    the committed quick run (so it cannot be stale against it)."""
    sweep = json.loads((RESULTS / "quick" / "base-seeds.json").read_text())
    assert sweep["seeds"] == list(range(10))
    for name, exp in list_experiments().items():
        quick = [c for c in exp.claims if "quick" in c.scales]
        assert sorted(sweep["claims"].get(name, {})) == sorted(c.id for c in quick), name
        committed = json.loads((RESULTS / "quick" / name / "summary.json").read_text())
        for claim in quick:
            rows = sweep["claims"][name][claim.id]
            assert [r["seed"] for r in rows] == list(range(10)), (name, claim.id)
            failed = [r for r in rows if r["verdict"] != "holds"]
            assert not failed, (name, claim.id, failed)
            now = evaluate_claim(claim, committed)
            assert (rows[0]["text"], rows[0]["margin"]) == (now.describe_value(),
                                                            now.margin), (name, claim.id)
