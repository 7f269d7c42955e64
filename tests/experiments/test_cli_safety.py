"""The command line under bad arguments, an unreachable scheduler and signals."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from lds_toolkit.cli import main as cli_main

HERE = Path(__file__).resolve().parent
ENV = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}


@pytest.mark.parametrize("extra, message", [
    (["--seeds", "0"], "error: seeds must be an integer >= 1, got 0"),
    (["--jobs", "0"], "error: --jobs must be a positive integer or -1 (all cores), got 0"),
    (["--jobs", "-2"], "error: --jobs must be a positive integer or -1 (all cores), got -2"),
    (["--seed", "-1"], "error: seed must be an integer >= 0, got -1"),
    (["--set", "T=abc"], "error: "),
])
def test_argument_errors_exit_2_with_one_line(extra, message, tmp_path, capsys):
    code = cli_main(["reproduce", "lds-impulse", "--quick", "--out", str(tmp_path),
                     "--no-progress", *extra])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith(message) and err.count("\n") == 1, err
    assert not (tmp_path / "lds-impulse").exists(), "nothing ran"


def test_out_that_is_a_file_exits_2_before_any_task(tmp_path, capsys):
    path = tmp_path / "f"
    path.write_text("")
    assert cli_main(["reproduce", "lds-impulse", "--quick", "--out", str(path)]) == 2
    err = capsys.readouterr().err
    assert err == f"error: --out must be a writable directory; {str(path)!r} exists and is " \
                  "not a directory\n"


def test_cli_errors_print_no_traceback_in_a_real_process(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "lds_toolkit.cli", "reproduce", "lds-impulse",
                           "--quick", "--jobs", "0", "--out", str(tmp_path)],
                          capture_output=True, text=True, env=ENV, timeout=120)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.strip().splitlines() == [
        "error: --jobs must be a positive integer or -1 (all cores), got 0"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_unreachable_scheduler_fails_within_seconds_naming_it(tmp_path, capsys):
    pytest.importorskip("dask.distributed")
    address = f"tcp://127.0.0.1:{_free_port()}"
    t0 = time.monotonic()
    code = cli_main(["reproduce", "lds-impulse", "--quick", "--seeds", "1", "--out",
                     str(tmp_path), "--no-progress", "--scheduler", address])
    elapsed = time.monotonic() - t0
    err = capsys.readouterr().err
    assert code == 1 and elapsed < 15, elapsed
    assert err.startswith(f"error: could not reach the Dask scheduler at {address!r} within 5 s")
    assert err.count("\n") == 1


SLOW_CLI = f"""
import sys
sys.path.insert(0, {str(HERE)!r})
from _slow_experiment import SlowSquares
from lds_toolkit.cli import main
from lds_toolkit.experiments import register

@register
class SlowCli(SlowSquares):
    name = "slow-cli"

    def __init__(self):
        super().__init__(sys.argv[1], delay=1.0)

    def config(self, scale, seeds):
        return {{"seeds": 20, "params": [1, 2]}}

sys.exit(main(["reproduce", "slow-cli", "--out", sys.argv[2], "--jobs", "2",
               "--no-progress"]))
"""


def _workers_after(sig, tmp_path) -> tuple[int, list[int], float]:
    """Start the CLI with 2 workers, send ``sig`` once both run tasks; return the exit code,
    the worker processes still alive 3 s later and how long the CLI took to exit."""
    psutil = pytest.importorskip("psutil")
    log = tmp_path / "log"
    log.mkdir()
    proc = subprocess.Popen([sys.executable, "-c", SLOW_CLI, str(log), str(tmp_path / "out")],
                            env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            # a background shell (nohup, `&`) starts pytest with SIGINT
                            # ignored, and a child inherits that: give it the default
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 90
    workers: set[int] = set()
    while time.monotonic() < deadline and proc.poll() is None:
        for child in psutil.Process(proc.pid).children(recursive=True):
            workers.add(child.pid)
        started = {int(p.name.split("-")[2]) for p in log.glob("ran-*")}
        if len(started & workers) >= 2:
            break
        time.sleep(0.1)
    assert proc.poll() is None and len(workers) >= 2, "the workers did not start"
    t0 = time.monotonic()
    proc.send_signal(sig)
    code = proc.wait(timeout=60)
    exited = time.monotonic() - t0
    time.sleep(3)
    alive = []
    for pid in workers:
        try:
            if psutil.Process(pid).status() != psutil.STATUS_ZOMBIE:
                alive.append(pid)
        except psutil.NoSuchProcess:
            pass
    for pid in alive:  # clean up after a failure
        os.kill(pid, signal.SIGKILL)
    return code, alive, exited


@pytest.mark.parametrize("sig, code", [
    (signal.SIGTERM, 143), pytest.param(signal.SIGINT, 130, marks=pytest.mark.slow)])
def test_no_worker_survives_sigterm_or_sigint_of_the_cli(sig, code, tmp_path):
    got, alive, exited = _workers_after(sig, tmp_path)
    assert got == code and alive == [] and exited < 10, (got, alive, exited)


@pytest.mark.slow
def test_no_worker_survives_sigkill_of_the_cli_for_long(tmp_path):
    """SIGKILL cannot be handled: the workers' watchdog notices the parent is gone."""
    got, alive, _ = _workers_after(signal.SIGKILL, tmp_path)
    assert got == -signal.SIGKILL and alive == []
