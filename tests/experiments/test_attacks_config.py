"""Attack suite for the command line (issue 27): config entries out of range, bad output
paths, OS errors while writing, and ``report`` on unreadable files. Each ends with one line
and exit status 1 or 2, before any task where the check can be made up front."""

from __future__ import annotations

import errno
import json
import os
import pickle
import subprocess
import sys
from pathlib import Path

import pytest

from lds_toolkit.cli import main as cli_main
from lds_toolkit.experiments import list_experiments
from lds_toolkit.experiments.config import COMMON_RANGES, build_config, ranges
from lds_toolkit.experiments.config.ranges import (
    Choice,
    Fields,
    Int,
    ListOf,
    MapOf,
    Maybe,
    Real,
    Relation,
    check_config,
)

ENV = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}
RESERVED = ("seed", "scale", "overrides")


@pytest.fixture
def machine_with_16_gib(monkeypatch):
    monkeypatch.setattr(ranges, "available_memory_bytes", lambda: 16 * 2**30)


def _cli(tmp_path, capsys, *args, name="lengen-region-a"):
    code = cli_main(["reproduce", name, "--quick", "--no-progress", "--out",
                     str(tmp_path / "out"), *args])
    return code, capsys.readouterr().err


# ------------------------------------------------------------ declarations are complete


@pytest.mark.parametrize("name", sorted(list_experiments()))
def test_every_config_entry_is_declared_and_every_scale_passes_its_ranges(
        name, machine_with_16_gib):
    exp = list_experiments()[name]
    declared = {**COMMON_RANGES, **exp.ranges}
    for scale in exp.scales:  # the gpu scale too, where an experiment defines one
        try:
            config = build_config(exp, scale=scale)  # checks the ranges (raises if not)
        except ValueError as exc:
            assert "has no 'medium' scale" in str(exc) or "has no" in str(exc), exc
            continue
        undeclared = [k for k in config if k not in RESERVED and k not in declared]
        assert not undeclared, f"{name} at {scale}: declare {undeclared} in its ranges"


# ---------------------------------------------------- the cases, one line, exit 2


@pytest.mark.parametrize("setting, message", [
    ("T=1099511627776", "error: lengen-region-a (with --set T=1099511627776): the largest "
                        "array, the (T=1099511627776, k=16) spectral filters, needs 128 TiB, "
                        "more than the 16 GiB of memory available"),
    ("n=100000000000000000000000", "error: --set n: must be an integer in [1, 1048576], got "
                                   "100000000000000000000000"),
    ("region_q=NaN", "error: --set region_q: must be a real number in (0, 1], got NaN"),
    ("region_q=-Infinity", "error: --set region_q: must be a real number in (0, 1], got "
                           "-Infinity"),
    ("q_values=[]", "error: --set q_values: must be a non-empty list of real numbers in (0, 1], "
                    "without repeats, got []"),
    ("q_values=[0.5,2]", "error: --set q_values[1]: must be a real number in (0, 1], got 2.0"),
    ("k=0", "error: --set k: must be an integer in [1, 4096], got 0"),
    ("T=8", "error: --set T: must be >= k = 16, got 8"),
    ("region=C", 'error: --set region: must be one of "A", "B", got "C"'),
    ("lr_grid={}", 'error: --set lr_grid: must be a non-empty object with keys among '
                   '"constant", "inv_sqrt", whose values are each a non-empty list of real '
                   'numbers in (0, inf), without repeats, got {}'),
    ("sensitivity_lrs=[0.1,-1]", "error: --set sensitivity_lrs[1]: must be a real number in "
                                 "(0, inf), got -1.0"),
])
def test_out_of_range_settings_exit_2_with_one_line_before_any_task(
        tmp_path, capsys, machine_with_16_gib, setting, message):
    code, err = _cli(tmp_path, capsys, "--set", setting)
    assert code == 2 and err == message + "\n", err
    assert not (tmp_path / "out").exists(), "nothing ran, nothing was created"


@pytest.mark.parametrize("name, setting, message", [
    ("lengen-regions", "T=3", "error: --set T: Region B is empty for T=3, q=0.875"),
    ("lds-streams", "eval_factors=[]", "error: --set eval_factors: must be a non-empty list"),
    ("lds-streams", "train_length=100000000", "error: lds-streams (with --set "
                                              "train_length=100000000): the largest array"),
    ("nss-etc", "grid_step=0", "error: --set grid_step: must be a real number in (0, inf)"),
    ("nss-etc", "horizon=1e300", "error: --set horizon: must be a real number in (0, 1e+09]"),
    ("nss-etc", "x0=[1]", "error: --set x0: must be a list of at least 2 entries"),
    ("regret-scaling", "T_values=[1024]", "error: --set T_values: must be a list of at least "
                                          "2 entries"),
    ("cloze", "length=50", "error: --set length: must be an integer in [95, 10000000]"),
    ("las-ablation", "min_length=100", "error: --set min_length: must be <= max_length = 64"),
    ("las-ablation", "n_heads=7", "error: config entry d_model (derived with --set n_heads=7):"
                                  " must be a multiple of n_heads = 7, got 64"),
    ("assoc-recall", 'train={"64":{"max_steps":5,"batch_size":2,"eval_every":1}}',
     "error: --set train: has no entry for length 30"),
    ("assoc-recall", 'plateau={"window":-1}', "error: --set plateau.window: must be an integer "
                                              "in [1, 1000000], got -1"),
    ("assoc-recall", 'plateau={"windo":5}', "error: --set plateau.windo: is not an entry of "
                                            "plateau"),
    ("induction-heads", "lr=NaN", "error: --set lr: must be a real number in (0, 10], got NaN"),
    ("nss-s4", "models=[]", "error: --set models: must be a non-empty list of values among"),
])
def test_every_experiment_refuses_out_of_range_settings_up_front(
        tmp_path, capsys, machine_with_16_gib, name, setting, message):
    code, err = _cli(tmp_path, capsys, "--set", setting, name=name)
    assert code == 2 and err.startswith(message) and err.count("\n") == 1, err
    assert not (tmp_path / "out").exists()


def test_a_setting_in_range_still_runs(tmp_path, capsys):
    code, _ = _cli(tmp_path, capsys, "--seeds", "1", "--set", "T=64", "--set",
                   "q_values=[0.5,1.0]", "--set", "sensitivity_lrs=[0.1]", "--set", "k=4")
    assert code == 0
    summary = json.loads((tmp_path / "out" / "lengen-region-a" / "summary.json").read_text())
    assert summary["config"]["overrides"]["T"] == 64


# --------------------------------------------------------------------------- --out


@pytest.mark.parametrize("out, message", [
    ("", "error: --out must be a directory path, got an empty string"),
    ("  ", "error: --out must be a directory path, got an empty string"),
    ("x" * 300, "File name too long (ENAMETOOLONG)"),
])
def test_bad_out_paths_exit_2_with_one_line(tmp_path, capsys, monkeypatch, out, message):
    monkeypatch.chdir(tmp_path)
    code = cli_main(["reproduce", "lds-impulse", "--quick", "--no-progress", "--out", out])
    err = capsys.readouterr().err
    assert code == 2 and message in err and err.count("\n") == 1, err
    assert list(tmp_path.iterdir()) == [], "nothing written into the current directory"


def test_out_errors_print_no_traceback_in_a_real_process(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "lds_toolkit.cli", "reproduce", "lds-impulse",
                           "--quick", "--out", "x" * 300, "--set", "T=0"],
                          capture_output=True, text=True, env=ENV, timeout=120, cwd=tmp_path)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr


# ------------------------------------------------------- OS errors while writing: exit 1


@pytest.mark.parametrize("code_, name", [(errno.ENOSPC, "ENOSPC"), (errno.EACCES, "EACCES"),
                                         (errno.EDQUOT, "EDQUOT")])
def test_os_errors_while_writing_end_with_one_line_and_nothing_vouched_for(
        tmp_path, capsys, monkeypatch, code_, name):
    from lds_toolkit import _atomic

    real = _atomic.os.fsync

    def failing_fsync(fd):
        if os.fstat(fd).st_size > 20_000:  # the arrays and figures, not the small records
            raise OSError(code_, os.strerror(code_))
        return real(fd)

    monkeypatch.setattr(_atomic.os, "fsync", failing_fsync)
    code = cli_main(["reproduce", "lds-impulse", "--quick", "--seeds", "1", "--no-progress",
                     "--out", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 1 and err.count("\n") == 1, err
    assert f"({name}); no run.json was written, so nothing of this run is vouched for" in err
    assert str(tmp_path / "lds-impulse") in err, "the file is named"
    run = tmp_path / "lds-impulse"
    assert not (run / "run.json").exists()
    assert not list(run.glob(".*.tmp")), "no temporary file left behind"


def test_a_real_full_disk_ends_with_one_line(tmp_path):
    """On a 64 KiB tmpfs when this process may mount one (root on Linux); skipped elsewhere."""
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mnt)],
                             capture_output=True)
    if mounted.returncode != 0:
        pytest.skip("cannot mount a small tmpfs here")
    try:
        proc = subprocess.run([sys.executable, "-m", "lds_toolkit.cli", "reproduce",
                               "lds-impulse", "--quick", "--seeds", "1", "--no-progress",
                               "--out", str(mnt)], capture_output=True, text=True, env=ENV,
                              timeout=300)
        assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
        (line,) = proc.stderr.strip().splitlines()
        assert "No space left on device (ENOSPC)" in line
        assert not (mnt / "lds-impulse" / "run.json").exists()
    finally:
        subprocess.run(["umount", str(mnt)], capture_output=True)


# -------------------------------------------------------------------------- report


def _report(capsys, out, *names):
    code = cli_main(["report", "--out", str(out), *names])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture(scope="module")
def etc_run(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("report")
    assert cli_main(["reproduce", "nss-etc", "--quick", "--seeds", "1", "--no-progress",
                     "--out", str(out)]) == 0
    return out


@pytest.mark.parametrize("file, planted, why", [
    ("summary.json", b"not json at all", "summary.json is not valid JSON"),
    ("summary.json", pickle.dumps({"a": 1}), "summary.json is not valid JSON"),
    ("summary.json", b"[1, 2, 3]", "summary.json holds a JSON list, not an object"),
    ("summary.json", "directory", "summary.json is a directory, not a regular file"),
    ("summary.json", "fifo", "summary.json is a FIFO, not a regular file"),
    ("summary.json", "dev-zero", "summary.json is a symbolic link (not followed)"),
    ("run.json", b"\x00\xff garbage", "run.json unreadable (run.json is not valid JSON"),
    ("run.json", b'{"files": []}', "run.json does not vouch for summary.json"),
    ("run.json", b'{"files": {"summary.json": 3}}', "summary.json"),
])
def test_report_never_crashes_on_unreadable_files(tmp_path, capsys, etc_run, file,
                                                  planted, why):
    import shutil

    out = tmp_path / "out"
    shutil.copytree(etc_run, out)
    target = out / "nss-etc" / file
    target.unlink()
    if planted == "directory":
        target.mkdir()
    elif planted == "fifo":
        os.mkfifo(target)
    elif planted == "dev-zero":
        target.symlink_to("/dev/zero")
    else:
        target.write_bytes(planted)
    code, stdout, err = _report(capsys, out, "nss-etc")
    # the report is written, and the exit status says that a run could not be judged
    assert code == 1 and err.startswith("error: results that could not be judged: nss-etc: ")
    assert why in err and err.count("\n") == 1
    rows = json.loads((out / "report.json").read_text())
    assert rows and all(r["verdict"] == "not run" for r in rows)
    assert all(why in r["message"] for r in rows), rows[0]["message"]
    if file == "summary.json":
        assert all(r["verdict_text"].startswith("not run: unreadable (") for r in rows)
        assert "  not run  " in stdout and f": unreadable ({why}" in " ".join(stdout.split())


def test_report_judges_a_clean_run_and_refuses_unknown_names(tmp_path, capsys, etc_run):
    code, stdout, _ = _report(capsys, etc_run, "nss-etc")
    rows = json.loads((etc_run / "report.json").read_text())
    assert code == 0 and rows and all(r["verdict"] != "not run" for r in rows), stdout
    code, _, err = _report(capsys, etc_run, "nope")
    assert code == 2 and err.startswith("error: unknown experiment 'nope'")
    assert err.count("\n") == 1
    code, _, err = _report(capsys, tmp_path / "missing")
    assert code == 2 and "is not a directory of results" in err


# ------------------------------------------------------------------- the specs


def test_specs_accept_their_range_and_name_the_bad_part():
    spec = Fields({"a": Int(1, 3), "b": Maybe(ListOf(Real(0.0, 1.0, low_open=True))),
                   "c": MapOf(Choice("x", "y"), key=Int(1))}, required=("a",))
    assert spec.problem({"a": 2, "b": None, "c": {"4": "x"}}, "e") is None
    assert spec.problem({"a": True}, "e") == ("e.a", "must be an integer in [1, 3], got true")
    assert spec.problem({"a": 1, "b": [0.5, 0.0]}, "e") == (
        "e.b[1]", "must be a real number in (0, 1], got 0.0")
    assert spec.problem({"a": 1, "c": {"0": "x"}}, "e")[0] == "e.c.0"
    assert spec.problem({"b": None}, "e") == ("e.a", "is required in e")
    assert ListOf(Int(), increasing=True).problem([1, 1], "v") is not None
    assert Real().problem(float("inf"), "v") is not None
    assert Choice(1, 2).problem(True, "v") is not None, "True is not the choice 1"


def test_relations_blame_the_entry_the_user_set():
    config = {"k": 16, "T": 8}
    rel = (Relation("k", "<=", "T"),)
    with pytest.raises(ValueError, match=r"^--set T: must be >= k = 16, got 8$"):
        check_config("x", config, {}, relations=rel, overrides={"T": 8})
    with pytest.raises(ValueError, match=r"^--set k: must be <= T = 8, got 16$"):
        check_config("x", config, {}, relations=rel, overrides={"k": 16})
