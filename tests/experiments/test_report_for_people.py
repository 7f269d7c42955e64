"""``lds-toolkit report`` for people: runs with overrides are judged "modified config", a
claim recording a paper's error shows "paper error confirmed", the text fits 100 columns,
``--format markdown|json`` for machines, and a misspelled name gets a "did you mean"."""

from __future__ import annotations

import json

import numpy as np
import pytest

from lds_toolkit.cli import main as cli_main
from lds_toolkit.experiments import (
    Experiment,
    UnknownExperimentError,
    get_experiment,
    register,
    reproduce,
)
from lds_toolkit.experiments import base as experiments_base
from lds_toolkit.experiments.claims import Claim
from lds_toolkit.experiments.report import (
    MODIFIED,
    PAPER_ERROR,
    build_report,
    config_changes,
    to_json,
    to_text,
)

NAME = "report-toy"


class ReportToy(Experiment):
    """Two seeds of ``n`` draws; ``mean_n`` is ``n``, ``printed_ok`` a check that fails."""

    name = NAME
    description = "test fixture of the report"
    claims = (
        Claim("n-large", "toy paper", "Fig. 1",
              "the sample is large enough for the claim to mean something, which is a long "
              "statement on purpose so that the text report has to wrap it onto more lines",
              "mean_n", ">=", 4),
        Claim("noise-harmless", "toy paper", "Fig. 2", "n is at least 4 whatever the noise",
              "mean_n", ">=", 4, override_harmless=("noise",)),
        Claim("printed", "toy paper", "eq. 8", "the printed example satisfies eq. 8",
              "printed_ok", "is", True, scales=(), records_paper_error=True,
              override_harmless=("*",),
              note="it does not: the printed matrix is singular"),
    )

    def config(self, scale, seeds):
        return {"seeds": seeds or 2, "n": 4, "noise": 0.0}

    def run_task(self, config, task, rng):
        return {"n": float(config["n"]) + config["noise"] * float(rng.standard_normal())}

    def summarize(self, config, tasks, results):
        return {"mean_n": float(np.mean([r["n"] for r in results])),
                "printed_ok": False}, {}


@pytest.fixture(autouse=True, scope="module")
def _registered():
    """The toy is registered for this module's tests only: left in the registry it would
    enter every later listing (the docs' reproduction table, the one-script-per-experiment
    check)."""
    register(ReportToy)
    yield
    experiments_base._REGISTRY.pop(NAME, None)


def _rows(out, **kwargs):
    reproduce(NAME, quick=True, out=out, progress=False, **kwargs)
    return {r.result.claim.id: r for r in build_report(out, names=[NAME])}


def test_a_standard_run_is_judged_and_a_paper_error_is_confirmed(tmp_path):
    rows = _rows(tmp_path)
    assert rows["n-large"].status == "holds" and rows["n-large"].changes == {}
    assert rows["printed"].status == PAPER_ERROR
    text = to_text(list(rows.values()))
    assert "paper error confirmed" in text and "the paper's error: it does not" in text
    assert "fails" not in text
    assert text.splitlines()[-1] == "3 claims: 2 hold, 0 fail, 1 paper error confirmed, 0 not run"


def test_overrides_make_a_modified_config_unless_declared_harmless(tmp_path):
    rows = _rows(tmp_path / "n", overrides={"n": 8})
    assert rows["n-large"].changes == {"n": {"value": 8, "standard": 4}}
    assert rows["n-large"].status == MODIFIED  # 8 >= 4 holds, but not at the standard scale
    assert rows["noise-harmless"].status == MODIFIED  # n is not declared harmless
    assert rows["printed"].status == PAPER_ERROR  # depends on no config entry ("*")
    text = to_text(list(rows.values()))
    assert "config modified: n=8 (standard 4)" in text
    assert "2 modified config" in text.splitlines()[-1]

    rows = _rows(tmp_path / "noise", overrides={"noise": 0.5})
    assert rows["n-large"].status == MODIFIED
    assert rows["noise-harmless"].status in ("holds", "fails")  # judged: noise is harmless

    rows = _rows(tmp_path / "seeds", seeds=1)  # another number of seeds is a change too
    assert rows["n-large"].changes == {"seeds": {"value": 1, "standard": 2}}
    assert rows["n-large"].status == MODIFIED

    rows = _rows(tmp_path / "same", overrides={"n": 4}, seed=3)  # same value, another draw
    assert all(r.changes == {} for r in rows.values())
    assert rows["n-large"].status == "holds"


def test_config_changes_reads_the_recorded_overrides():
    exp = get_experiment(NAME)
    standard = {"seeds": 2, "n": 4, "noise": 0.0, "seed": 0, "scale": "quick"}
    assert config_changes(exp, standard) == {}
    assert config_changes(exp, {**standard, "n": 32, "seeds": 3,
                                "overrides": {"n": 32, "seeds": 3}}) == {
        "n": {"value": 32, "standard": 4}, "seeds": {"value": 3, "standard": 2}}
    assert config_changes(exp, None) == {}


def test_the_text_fits_100_columns_and_machine_formats(tmp_path, capsys):
    reproduce(NAME, quick=True, out=tmp_path, progress=False, overrides={"n": 8})
    reproduce("lds-impulse", quick=True, out=tmp_path, progress=False)
    assert cli_main(["report", "--out", str(tmp_path)]) == 0
    text = capsys.readouterr().out
    table = [line for line in text.splitlines() if not line.startswith("written: ")]
    assert max(len(line) for line in table) <= 100
    assert "config modified: n=8 (standard 4)" in text

    assert cli_main(["report", "--out", str(tmp_path), "--format", "json", NAME]) == 0
    captured = capsys.readouterr()
    rows = json.loads(captured.out)  # stdout is the document alone
    assert "written:" in captured.err
    by_id = {r["id"]: r for r in rows}
    assert set(by_id) == {"n-large", "noise-harmless", "printed"}
    assert by_id["n-large"]["status"] == MODIFIED
    assert by_id["n-large"]["config_changes"] == {"n": {"value": 8, "standard": 4}}
    assert by_id["printed"]["status"] == PAPER_ERROR and by_id["printed"]["records_paper_error"]
    assert rows == json.loads(to_json(build_report(tmp_path, names=[NAME])))

    assert cli_main(["report", "--out", str(tmp_path), "--format", "markdown", NAME]) == 0
    md = capsys.readouterr().out.splitlines()
    assert md[0].startswith("| experiment |") and len(md) == 2 + 3
    assert "modified config: n=8 (standard 4)" in md[2]


def test_a_claim_recording_a_paper_error_is_expected_nowhere():
    with pytest.raises(ValueError, match="expected at no scale"):
        Claim("c", "p", "F", "s", "x", "is", True, records_paper_error=True, note="why")
    with pytest.raises(ValueError, match="expected at no scale"):
        Claim("c", "p", "F", "s", "x", "is", True, scales=(), records_paper_error=True)
    with pytest.raises(ValueError, match="override_harmless"):
        Claim("c", "p", "F", "s", "x", ">=", 1, override_harmless="noise")
    etc = get_experiment("nss-etc")
    assert [c.id for c in etc.claims if c.records_paper_error] == ["printed-example-eq8"]


def test_unknown_names_get_a_did_you_mean_and_exit_2(tmp_path, capsys):
    with pytest.raises(UnknownExperimentError, match="did you mean 'lds-impulse'") as info:
        get_experiment("lds-impuls")
    assert info.value.suggestions[0] == "lds-impulse"
    assert isinstance(info.value, ValueError)
    for argv in (["reproduce", "lengen-regoin-a", "--quick", "--out", str(tmp_path)],
                 ["report", "--out", str(tmp_path), "lengen-regoin-a"]):
        assert cli_main(argv) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "did you mean 'lengen-region-a'" in err[0], err
    assert not (tmp_path / "lengen-region-a").exists()
    assert cli_main(["report", "--out", str(tmp_path), "zzzz"]) == 2
    assert "known: " in capsys.readouterr().err  # nothing close: the names are listed
