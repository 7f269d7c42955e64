"""``report --compare`` as a page a user reads, its errors, and strict JSON (issue 46):

* a compare of two seeds: a summary first (experiments, cause, verdicts kept and changed),
  then per experiment its few largest differences, each labelled round-off or not, named
  readably (``[seed i]``, records whole), with ``--all`` for every one;
* a changed verdict says whether it was expected at that scale
  (:func:`verdict_expectation`);
* an unreadable or empty ``summary.json`` is listed with the reason (exit 1), a missing
  ``run.json`` is said, an empty directory or an experiment directory given as the root is
  refused (exit 2);
* ``--format json`` of ``report`` and ``report --compare`` is strict JSON when a quantity is
  NaN; ``report`` exits 1 on an unreadable run and does not squeeze its reason into a column.
"""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import pytest

from lds_toolkit.cli import main as cli_main
from lds_toolkit.experiments import get_experiment, reproduce
from lds_toolkit.experiments.claims import FAILS, HOLDS, NOT_RUN, ClaimResult
from lds_toolkit.experiments.report import ReportRow, build_report
from lds_toolkit.experiments.report.compare import compare_runs, verdict_expectation
from lds_toolkit.experiments.report.compare_text import TOP, to_text
from lds_toolkit.experiments.report.quantity_diff import (
    RTOL,
    diff_quantity,
    quantities,
    readable_names,
)
from lds_toolkit.experiments.store.outputs import file_digest

ROOT = Path(__file__).resolve().parents[2]
COMMITTED = ROOT / "docs" / "results" / "quick"
SAME = ["lengen-regions", "nss-etc"]  # copied unchanged into both roots


def _strict(text: str):
    def refuse(constant):
        raise AssertionError(f"not JSON: {constant}")
    return json.loads(text, parse_constant=refuse)


def _run(capsys, *argv) -> tuple[int, str, str]:
    code = cli_main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def two_seeds(tmp_path_factory) -> tuple[Path, Path]:
    """Roots A (the committed quick runs, seed 0) and B (lds-impulse rerun with seed 1, the
    others copied): a compare of two seeds."""
    root = tmp_path_factory.mktemp("two-seeds")
    a, b = root / "a", root / "b"
    for name in [*SAME, "lds-impulse"]:
        shutil.copytree(COMMITTED / name, a / name)
    for name in SAME:
        shutil.copytree(COMMITTED / name, b / name)
    reproduce("lds-impulse", quick=True, seed=1, out=b, progress=False)
    return a, b


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file()}


def test_a_compare_of_two_seeds_is_a_page(two_seeds, capsys):
    a, b = two_seeds
    before = {root: _tree(root) for root in (a, b)}
    code, text, err = _run(capsys, "report", "--compare", str(a), str(b))
    assert {root: _tree(root) for root in (a, b)} == before  # --compare writes nothing
    assert code == 0 and err == ""
    lines = text.splitlines()
    assert len(lines) <= 40 and all(len(line) <= 100 for line in lines), text
    # the summary first: what was compared, the cause, the verdicts
    summary = lines[:lines.index("")]
    assert summary[2] == "3 experiments compared: 1 differs, 2 identical"
    assert any(ln.startswith("verdicts: ") and " same, 0 changed" in ln for ln in summary)
    assert "lds-impulse: differs, " in text and "cause: seed 0 -> 1" in text
    [comp] = [c for c in compare_runs(a, b) if c.name == "lds-impulse"]
    differing = comp.differing
    assert len(differing) > TOP
    block = text[text.index("lds-impulse: differs"):].splitlines()
    shown = [ln for ln in block[1:] if ln.startswith("    ") and "  differs  " in ln]
    assert 0 < len(shown) <= TOP
    assert f"lds-impulse: differs, {len(differing)} of {len(comp.quantities)} quantities " \
        "differ, 0 within round-off" in text and "--all lists every one" in text
    # the largest differences, largest first, named as the table does
    assert shown[0].split()[2].startswith(differing[0].name.split("[")[0])
    code, full, _ = _run(capsys, "report", "--compare", str(a), str(b), "--all")
    labelled = [ln for ln in full.splitlines() if "  differs  " in ln or "  round-off  " in ln]
    assert code == 0 and len(labelled) == len(differing)


def test_each_quantity_is_labelled_round_off_on_its_own():
    # one experiment, one quantity at 1.6e-16 and one beyond: each gets its own label
    tiny = diff_quantity("x", 1.0, 1.0 + 2.2e-16)
    big = diff_quantity("y", 1.0, 2.0)
    assert tiny.roundoff and tiny.rel < RTOL and not big.roundoff


def test_readable_names_say_seed_and_keep_records_whole():
    summary = {"steps": {"1024": [["constant", 0.4], ["inv_sqrt", 1.4], ["constant", 0.2]]},
               "regret_per_seed": [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]],
               "rows": [{"e": 1}, {"e": 2}], "seeds": 3}
    q = quantities(summary)
    assert q["steps/1024/1"] == ["inv_sqrt", 1.4]  # a record: one quantity, not /1/0, /1/1
    names = readable_names(summary, n_seeds=3)
    assert names["steps/1024/1"] == "steps/1024[seed 1]"
    assert names["rows/0/e"] == "rows[0]/e"  # two entries: not one per seed
    d = diff_quantity("regret_per_seed", summary["regret_per_seed"],
                      [[1.0, 2.0], [3.0, 4.0], [5.0, 60.0]])
    assert d.where == (2, 1) and d.rel == pytest.approx(0.9)


def test_the_text_names_seeds_and_groups_them(tmp_path, capsys):
    for side in ("a", "b"):
        shutil.copytree(COMMITTED / "lds-impulse", tmp_path / side / "lds-impulse")
    run_dir = tmp_path / "b" / "lds-impulse"
    summary = json.loads((run_dir / "summary.json").read_text())
    summary["config"]["seed"] = 7
    n = summary["config"]["seeds"]
    summary["picks"] = [["constant", 0.1 * i] for i in range(n)]
    (run_dir / "summary.json").write_text(json.dumps(summary))
    summary_a = json.loads((tmp_path / "a" / "lds-impulse" / "summary.json").read_text())
    summary_a["picks"] = [["inv_sqrt", 0.1 * i] for i in range(n)]
    (tmp_path / "a" / "lds-impulse" / "summary.json").write_text(json.dumps(summary_a))
    code, text, _ = _run(capsys, "report", "--compare", str(tmp_path / "a"),
                         str(tmp_path / "b"))
    assert code == 0
    line = next(ln for ln in text.splitlines() if "picks" in ln)
    assert "picks[seed 0]: " in line and f"(+{n - 1} seeds)" in line, text
    assert "/0/0" not in text and "picks/" not in text


def _row(scale: str, verdict: str, margin, scales=("quick",), message="") -> ReportRow:
    claim = next(c for c in get_experiment("nss-etc").claims)
    claim = type(claim)(**{**claim.__dict__, "scales": tuple(scales)})
    return ReportRow("nss-etc", ClaimResult(claim, verdict, scale=scale, margin=margin,
                                            message=message), None)


def test_a_changed_verdict_says_whether_it_was_expected():
    expected, why = verdict_expectation(_row("quick", HOLDS, 3.5), _row("quick", FAILS, -3.5))
    assert expected is False and "NOT expected" in why and "quick" in why
    expected, why = verdict_expectation(_row("quick", HOLDS, 0.4), _row("quick", FAILS, -0.2))
    assert expected is True and "one spread over seeds" in why
    expected, why = verdict_expectation(_row("quick", HOLDS, 3.0, scales=("paper",)),
                                        _row("quick", FAILS, -3.0, scales=("paper",)))
    assert expected is True and "not declared for the quick scale" in why
    expected, why = verdict_expectation(_row("quick", HOLDS, 3.0),
                                        _row(None, NOT_RUN, None, message="not trusted: x"))
    assert expected is None and "not judged in B" in why and "not trusted: x" in why


@pytest.fixture
def roots(tmp_path) -> tuple[Path, Path]:
    a, b = tmp_path / "a", tmp_path / "b"
    for name in SAME:
        shutil.copytree(COMMITTED / name, a / name)
        shutil.copytree(COMMITTED / name, b / name)
    return a, b


@pytest.mark.parametrize("content, why", [
    (b'{"x": ', "summary.json is not valid JSON"),
    (b"{}", "summary.json holds an empty object ({}), no numbers"),
    (b"[1, 2]", "summary.json holds a JSON list, not an object"),
])
def test_an_unreadable_summary_is_listed_with_its_reason(roots, capsys, content, why):
    a, b = roots
    (b / "nss-etc" / "summary.json").write_bytes(content)
    code, text, err = _run(capsys, "report", "--compare", str(a), str(b))
    assert code == 1 and "nss-etc" in err
    assert f"nss-etc: unreadable: B: {why}" in text and "only in A" not in text
    code, out, _ = _run(capsys, "report", "--compare", str(a), str(b), "--format", "json")
    entry = next(e for e in _strict(out) if e["experiment"] == "nss-etc")
    assert code == 1 and entry["label"] == "unreadable" and why in entry["problems"][0]


def test_a_missing_run_json_is_said(roots, capsys):
    a, b = roots
    (b / "nss-etc" / "run.json").unlink()
    code, text, _ = _run(capsys, "report", "--compare", str(a), str(b))
    assert code == 0
    assert "B: no run.json (the run did not finish writing its outputs)" in text
    n = len(get_experiment("nss-etc").claims)
    assert f"{n} changed" in text and f"{n} not judged on one side" in text
    assert "not judged in B: not trusted: no run.json" in text


def test_roots_that_hold_no_results_are_refused(roots, capsys, tmp_path):
    a, _ = roots
    (tmp_path / "empty").mkdir()
    code, out, err = _run(capsys, "report", "--compare", str(a), str(tmp_path / "empty"))
    assert code == 2 and out == "" and "holds no experiment's results" in err
    code, out, err = _run(capsys, "report", "--compare", str(a), str(a / "nss-etc"))
    assert code == 2 and out == "" and "the directory of one experiment's run" in err
    assert repr(str(a)) in err  # the root to give instead
    code, _, err = _run(capsys, "report", "--compare", str(a), str(a), "cloze")
    assert code == 2 and "nothing to compare" in err


def _set_nan(run_dir: Path) -> str:
    """Set the first number of ``run_dir``'s summary to NaN, run.json vouching for it."""
    summary = json.loads((run_dir / "summary.json").read_text())
    key = next(k for k, v in summary.items() if isinstance(v, float | int)
               and not isinstance(v, bool))
    summary[key] = math.nan
    (run_dir / "summary.json").write_text(json.dumps(summary))
    run = json.loads((run_dir / "run.json").read_text())
    run["files"]["summary.json"] = file_digest(run_dir / "summary.json")
    (run_dir / "run.json").write_text(json.dumps(run))
    return key


def test_json_output_is_strict_when_a_quantity_is_nan(roots, capsys):
    a, b = roots
    key = _set_nan(b / "nss-etc")
    code, out, _ = _run(capsys, "report", "--compare", str(a), str(b), "--format", "json")
    entry = next(e for e in _strict(out) if e["experiment"] == "nss-etc")
    q = next(q for q in entry["quantities"] if q["path"] == key)
    assert code == 0 and q["b"] == "nan" and q["relative_difference"] == "inf"
    code, out, _ = _run(capsys, "report", "--out", str(b), "--format", "json", "nss-etc")
    assert code == 0 and _strict(out)
    _strict((b / "report.json").read_text())


def test_report_exits_1_on_unreadable_results_and_keeps_its_reason_readable(roots, capsys):
    _, b = roots
    (b / "nss-etc" / "summary.json").write_bytes(b'{"x": ')
    code, text, err = _run(capsys, "report", "--out", str(b))
    assert code == 1 and "nss-etc" in err and "not valid JSON" in err
    block = text[text.index("nss-etc"):].split("\n\n")[0].splitlines()
    # the reason is not wrapped into a narrow column: no continuation line starts deeper
    # than the short verdict column
    assert all(len(ln) - len(ln.lstrip()) <= 12 for ln in block), block
    joined = " ".join(" ".join(block).split())
    assert joined.count("unreadable (summary.json is not valid JSON") == len(
        get_experiment("nss-etc").claims)
    rows = [r for r in build_report(b) if r.experiment == "lengen-regions"]
    assert all(r.status != NOT_RUN for r in rows)


def test_a_long_config_difference_is_shown_by_its_keys_beyond_three():
    from lds_toolkit.experiments.report.compare import ExperimentComparison
    from lds_toolkit.experiments.report.quantity_diff import QuantityDiff

    config = [(f"config/k{i}", i, i + 1) for i in range(6)]
    a = ExperimentComparison("x", "both", config=config,
                             quantities=[QuantityDiff("q", 0.5, 1.0, 2.0, abs=1.0)])
    b = ExperimentComparison("y", "both", config=config[:1],
                             quantities=[QuantityDiff("q", 0.5, 1.0, 2.0, abs=1.0)])
    text = to_text([a, b], "A", "B")
    assert "cause in every one compared: k0 0 -> 1" in text  # common to both, said once
    assert "cause: k1 1 -> 2; k2 2 -> 3; k3 3 -> 4; and 2 more config entries (k4, k5)" \
        in " ".join(text.split())
    full = " ".join(to_text([a, b], "A", "B", full=True).split())
    assert "k4 4 -> 5; k5 5 -> 6" in full
