"""`--set KEY=VALUE` overrides, claim declarations and the claims report."""

from __future__ import annotations

import json

import pytest

from lds_toolkit.cli import main as cli_main
from lds_toolkit.experiments import get_experiment, list_experiments, reproduce
from lds_toolkit.experiments.claims import Claim, evaluate_claim, lookup
from lds_toolkit.experiments.config import build_config
from lds_toolkit.experiments.config.overrides import apply_overrides, parse_assignment
from lds_toolkit.experiments.report import build_report, to_markdown

CONFIG = {"T": 1024, "lr": 0.1, "flag": False, "name": "x", "qs": [0.5, 1.0],
          "models": {"s4": {"d_state": 64}}, "maybe": None, "seeds": 3}


@pytest.mark.parametrize("text, want", [
    ("T=2048", ("T", 2048)), ("lr=1e-3", ("lr", 1e-3)), ("flag=true", ("flag", True)),
    ("name=hello world", ("name", "hello world")), ("qs=[0.5, 0.75]", ("qs", [0.5, 0.75])),
    ("eq=a=b", ("eq", "a=b")),
])
def test_parse_assignment(text, want):
    assert parse_assignment(text) == want


@pytest.mark.parametrize("bad", ["T", "=3", "", None])
def test_parse_assignment_refuses_malformed(bad):
    with pytest.raises(ValueError, match="KEY=VALUE"):
        parse_assignment(bad)


def test_overrides_are_type_checked_and_recorded():
    out = apply_overrides(CONFIG, {"T": 2048, "lr": 1, "qs": [0.5], "models.s4.d_state": 8,
                                   "maybe": [1, 2], "name": 3})
    assert out["T"] == 2048 and isinstance(out["lr"], float) and out["lr"] == 1.0
    assert out["models"]["s4"]["d_state"] == 8 and out["name"] == "3"
    assert out["overrides"] == {"T": 2048, "lr": 1.0, "maybe": [1, 2],
                                "models.s4.d_state": 8, "name": "3", "qs": [0.5]}
    assert CONFIG["T"] == 1024 and CONFIG["models"]["s4"]["d_state"] == 64  # not mutated


@pytest.mark.parametrize("key, value, match", [
    ("T", 2.5, "expected an integer"), ("T", True, "expected an integer"),
    ("lr", "fast", "expected a real number"), ("flag", 1, "expected a boolean"),
    ("qs", 0.5, "expected a JSON list"), ("qs", [0.5, "a"], r"qs\[1\]: expected a real"),
])
def test_override_type_errors_name_the_key(key, value, match):
    with pytest.raises(TypeError, match=match):
        apply_overrides(CONFIG, {key: value})


@pytest.mark.parametrize("key", ["nope", "models.s5.d_state", "T.x", "seed", "scale"])
def test_unknown_override_lists_the_valid_keys(key):
    with pytest.raises(ValueError, match=r"unknown config key .* valid keys: T, lr, flag"):
        apply_overrides(CONFIG, {key: 1}, experiment="demo")


def test_override_of_T_moves_derived_entries():
    exp = get_experiment("lengen-region-a")
    cfg = build_config(exp, scale="quick", overrides={"T": 512})
    assert cfg["T"] == 512 and cfg["smooth"] == 512 // 64
    assert cfg["overrides"] == {"T": 512} and cfg["scale"] == "quick"


def test_overrides_reach_summary_and_store_key(tmp_path):
    a = reproduce("lds-impulse", quick=True, out=tmp_path, progress=False, seeds=1)
    b = reproduce("lds-impulse", quick=True, out=tmp_path, progress=False, seeds=1,
                  overrides={"n": 16})
    assert b.stats.n_cached == 0, "an override changes every task's key"
    assert b.summary["config"]["overrides"] == {"n": 16} and "overrides" not in a.summary["config"]
    c = reproduce("lds-impulse", quick=True, out=tmp_path, progress=False, seeds=1,
                  overrides={"n": 16})
    assert c.stats.n_computed == 0


def test_cli_set_errors_exit_2_with_one_line(tmp_path, capsys):
    rc = cli_main(["reproduce", "lds-impulse", "--quick", "--set", "bogus=1", "--out",
                   str(tmp_path)])
    err = capsys.readouterr().err.strip()
    assert rc == 2 and "\n" not in err
    assert err.startswith("error: unknown config key 'bogus' for lds-impulse; valid keys: T, n")
    assert not (tmp_path / "lds-impulse").exists(), "nothing ran"
    assert cli_main(["reproduce", "lds-impulse", "--scale", "paper", "--quick"]) == 2
    assert "contradicts" in capsys.readouterr().err


def test_every_declared_claim_is_well_formed():
    for name, exp in list_experiments().items():
        ids = [c.id for c in exp.claims]
        assert len(ids) == len(set(ids)), f"{name}: duplicate claim ids"
        for c in exp.claims:
            assert isinstance(c, Claim) and c.statement and c.paper and c.where, (name, c.id)


SUMMARY = {"config": {"scale": "quick"},
           "per_q": {"0.5": {"r": 150.0, "seeds": [100.0, 200.0]}, "1": {"r": 1.0}},
           "curve": [3.0, 2.0, 2.0, 1.0]}


def test_lookup_paths():
    assert lookup(SUMMARY, "per_q/0.5/r") == 150.0
    assert lookup(SUMMARY, "per_q/*/r") == [150.0, 1.0]
    assert lookup(SUMMARY, "curve/1") == 2.0


@pytest.mark.parametrize("op, threshold, quantity, verdict", [
    (">=", 20, "per_q/0.5/r", "holds"), (">=", 200, "per_q/0.5/r", "fails"),
    ("<=", 1.05, "per_q/1/r", "holds"), ("between", (0.95, 1.05), "per_q/*/r", "fails"),
    ("nonincreasing", 0, "curve", "holds"), ("nondecreasing", 0, "curve", "fails"),
    ("nonincreasing", 0, "per_q/*/r", "holds"), (">=", 1, "per_q/0.7/r", "not run"),
])
def test_evaluate_claim(op, threshold, quantity, verdict):
    claim = Claim("c", "p", "Fig. 1", "s", quantity, op, threshold, spread="per_q/0.5/seeds")
    res = evaluate_claim(claim, SUMMARY)
    assert res.verdict == verdict
    if verdict != "not run":
        assert res.spread == (100.0, 200.0) and res.scale == "quick"


def test_nan_never_satisfies_a_claim():
    claim = Claim("c", "p", "Fig. 1", "s", "x", "<=", 1.0)
    assert evaluate_claim(claim, {"x": float("nan")}).verdict == "fails"
    assert evaluate_claim(Claim("c", "p", "F", "s", "x", "nonincreasing", 0),
                          {"x": [2.0, float("nan")]}).verdict == "fails"


def test_claim_declaration_errors():
    with pytest.raises(ValueError, match="op must be one of"):
        Claim("c", "p", "F", "s", "x", "~", 1)
    with pytest.raises(ValueError, match="scales must be among"):
        Claim("c", "p", "F", "s", "x", ">=", 1, scales=("fast",))
    with pytest.raises(ValueError, match="between"):
        Claim("c", "p", "F", "s", "x", "between", 1)


def test_report_rows_markdown_and_cli(tmp_path, capsys):
    rows = build_report(tmp_path)
    assert len(rows) == sum(len(e.claims) for e in list_experiments().values())
    assert all(r.result.verdict == "not run" for r in rows)
    md = to_markdown(rows)
    assert md.count("\n") == len(rows) + 2
    assert cli_main(["report", "--out", str(tmp_path)]) == 0
    printed = capsys.readouterr().out
    assert f"{len(rows)} claims:" in printed
    assert json.loads((tmp_path / "report.json").read_text()) == [r.to_dict() for r in rows]
    assert cli_main(["report", "--out", str(tmp_path / "missing")]) == 2
