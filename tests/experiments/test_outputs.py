"""Output directory of a run: early checks, the lock, atomic writes vouched by run.json."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from lds_toolkit.cli import main as cli_main
from lds_toolkit.experiments import reproduce
from lds_toolkit.experiments.store.outputs import (
    OutputLockedError,
    RunLock,
    check_output_dir,
    verify_outputs,
)

from ._slow_experiment import SlowSquares, TinyPlot, ran_tasks

HERE = Path(__file__).resolve().parent
ENV = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}


def test_run_json_vouches_for_every_output_file(tmp_path):
    res = reproduce("lds-impulse", quick=True, seeds=1, out=tmp_path, progress=False)
    run = json.loads((res.outdir / "run.json").read_text())
    assert set(run["files"]) == {"summary.json", "arrays.npz", "impulse_regions.png",
                                 "impulse_regions.pdf"}
    assert run["code_version"].startswith("0.") and "+src." in run["code_version"]
    assert verify_outputs(res.outdir) == []
    with open(res.outdir / "arrays.npz", "ab") as fh:
        fh.write(b"x")
    (problem,) = verify_outputs(res.outdir)
    assert problem.startswith("arrays.npz: ") and "run.json vouches for" in problem
    assert not list(res.outdir.glob(".*.tmp"))
    assert (res.outdir / "summary.json").stat().st_mode & 0o044, "readable like open() files"


def test_bad_out_fails_before_any_task(tmp_path):
    log = tmp_path / "log"
    log.mkdir()
    a_file = tmp_path / "file"
    a_file.write_text("x")
    for out, why in ((a_file, "exists and is not a directory"),
                     (a_file / "sub", "Not a directory")):
        with pytest.raises(ValueError, match=f"out must be a writable directory.*{why}"):
            reproduce(SlowSquares(log), out=out, progress=False)
    # an experiment directory that is a file
    (tmp_path / "o").mkdir()
    (tmp_path / "o" / "slow-squares").write_text("x")
    with pytest.raises(ValueError, match="slow-squares' exists and is not a directory"):
        reproduce(SlowSquares(log), out=tmp_path / "o", progress=False)
    assert ran_tasks(log) == []


@pytest.mark.skipif(os.geteuid() == 0, reason="root ignores directory permissions")
def test_read_only_out_fails_before_any_task(tmp_path):
    log = tmp_path / "log"
    log.mkdir()
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o500)
    try:
        with pytest.raises(ValueError, match="Permission denied"):
            reproduce(SlowSquares(log), out=ro, progress=False)
    finally:
        ro.chmod(0o700)
    assert ran_tasks(log) == []


def test_a_second_run_on_the_same_out_refuses(tmp_path, capsys):
    outdir = check_output_dir(tmp_path / "lds-impulse")
    with RunLock(outdir):
        with pytest.raises(OutputLockedError, match=f"pid {os.getpid()}.*is writing to"):
            reproduce("lds-impulse", quick=True, seeds=1, out=tmp_path, progress=False)
        assert cli_main(["reproduce", "lds-impulse", "--quick", "--out", str(tmp_path),
                         "--no-progress"]) == 1
        err = capsys.readouterr().err
        assert err.startswith("error: another lds-toolkit run") and err.count("\n") == 1
    assert not (outdir / "summary.json").exists()
    reproduce("lds-impulse", quick=True, seeds=1, out=tmp_path, progress=False)  # released


def test_the_lock_of_a_killed_run_is_released(tmp_path):
    script = f"""
import sys, time
from lds_toolkit.experiments.store.outputs import RunLock
with RunLock({str(tmp_path)!r}):
    print("locked", flush=True)
    time.sleep(60)
"""
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, env=ENV)
    assert proc.stdout.readline().strip() == b"locked"
    with pytest.raises(OutputLockedError):
        RunLock(tmp_path).__enter__()
    proc.kill()
    proc.wait()
    with RunLock(tmp_path):
        pass


KILL_SCRIPT = """
import json, os, signal, sys
from pathlib import Path
import numpy as np
sys.path.insert(0, sys.argv[2])
from _slow_experiment import TinyPlot
from lds_toolkit.experiments import reproduce
from lds_toolkit.experiments.store.outputs import verify_outputs

out = Path(sys.argv[1])
outdir = out / "tiny-plot"
reproduce(TinyPlot(), out=out, progress=False)
real_replace = os.replace
report = []
for k in range(1, 6):          # the 5 final writes: summary, arrays, png, pdf, run.json
    for when in ("before", "after"):
        seed = 1  # its tasks are computed by the first child and loaded by the others
        pid = os.fork()
        if pid == 0:
            count = 0

            def replace(src, dst):
                global count
                if Path(dst).parent == outdir:
                    count += 1
                    if count == k and when == "before":
                        os.kill(os.getpid(), signal.SIGKILL)
                real_replace(src, dst)
                if Path(dst).parent == outdir and count == k and when == "after":
                    os.kill(os.getpid(), signal.SIGKILL)

            os.replace = replace
            reproduce(TinyPlot(), seed=seed, out=out, progress=False)
            os._exit(0)
        _, status = os.waitpid(pid, 0)
        row = {"k": k, "when": when, "killed": os.WIFSIGNALED(status),
               "run_json": (outdir / "run.json").exists(),
               "problems": verify_outputs(outdir)}
        row["summary_seed"] = json.loads((outdir / "summary.json").read_text())["config"]["seed"]
        with np.load(outdir / "arrays.npz", allow_pickle=False) as z:
            row["arrays"] = sorted(z.files)
        report.append(row)
print(json.dumps(report))
"""


def test_sigkill_during_the_final_writes_never_leaves_run_json_vouching_for_a_bad_file(
        tmp_path):
    """SIGKILL before and after each rename of the final writes (10 kills): whenever run.json
    exists it vouches only for complete files of the same run; summary.json and arrays.npz
    are always whole (of the old run or the new one)."""
    proc = subprocess.run([sys.executable, "-c", KILL_SCRIPT, str(tmp_path), str(HERE)],
                          env=ENV, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    assert len(report) == 10 and all(row["killed"] for row in report)
    for row in report:
        if row["run_json"]:
            assert row["problems"] == [], row
        else:
            assert row["problems"] == ["no run.json: the run did not finish writing its "
                                       "outputs"], row
        assert row["arrays"], row
    # only the kill after the last rename (run.json itself) leaves a vouched run
    assert [(r["k"], r["when"]) for r in report if r["run_json"]] == [(5, "after")]
    # a kill before the first rename leaves the previous summary, after it the new one
    first = {r["when"]: r["summary_seed"] for r in report if r["k"] == 1}
    assert first == {"before": 0, "after": 1}


def test_a_concurrent_reader_never_sees_a_partial_file(tmp_path):
    reproduce(TinyPlot(), out=tmp_path, progress=False)
    outdir = tmp_path / "tiny-plot"
    script = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(HERE)!r})
        from _slow_experiment import TinyPlot
        from lds_toolkit.experiments import reproduce
        for seed in range(8):
            reproduce(TinyPlot(), seed=seed % 2, out={str(tmp_path)!r}, progress=False)
    """)
    proc = subprocess.Popen([sys.executable, "-c", script], env=ENV)
    reads = bad = 0
    while proc.poll() is None:
        for read in (lambda: json.loads((outdir / "summary.json").read_text()),
                     lambda: np.load(outdir / "arrays.npz")["x"],
                     lambda: (outdir / "tiny.png").read_bytes()[-8:]):
            try:
                value = read()
                assert len(value) > 0
            except Exception:  # noqa: BLE001 - counting every kind of bad read
                bad += 1
            reads += 1
        time.sleep(0.005)
    assert proc.returncode == 0
    assert reads > 100 and bad == 0
