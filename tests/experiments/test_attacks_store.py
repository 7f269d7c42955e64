"""Attack suite for the store and the output directory (issue 27): links, FIFOs, directories,
devices and oversize files planted in ``OUT/NAME``. Every attack must leave every file
outside the run untouched, never hang (each test is bounded by an alarm), and end with the
same summary as a clean run or a one-line refusal."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import warnings
from pathlib import Path

import pytest

from lds_toolkit._safe_files import UnsafeFileError, read_regular_file
from lds_toolkit.cli import main as cli_main
from lds_toolkit.experiments import reproduce
from lds_toolkit.experiments.store import RECORD_MAX_BYTES, TaskStore, task_key
from lds_toolkit.experiments.store.outputs import verify_outputs

from ._slow_experiment import TinyPlot

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="POSIX links and FIFOs")


@contextlib.contextmanager
def bounded(seconds: float = 30.0):
    """Fail (instead of hanging the suite) when the block runs longer than ``seconds``."""
    def on_alarm(signum, frame):
        raise TimeoutError(f"still running after {seconds} s: the attack made it hang")

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _outside(tmp_path: Path) -> Path:
    """A directory outside the run holding files an attacker would like destroyed."""
    victim = tmp_path / "victim"
    victim.mkdir()
    for name in ("precious.txt", "data.json", "model.npz", ".keep.tmp", "run.json"):
        (victim / name).write_text(f"do not touch {name}\n")
    return victim


def _snapshot(directory: Path) -> dict[str, tuple[bytes, int]]:
    return {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in sorted(directory.iterdir())}


def _run(out: Path, **kwargs):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with bounded():
            res = reproduce(TinyPlot(), out=out, progress=False, **kwargs)
    return res, [str(w.message) for w in caught]


@pytest.fixture(scope="module")
def clean_summary(tmp_path_factory) -> bytes:
    out = tmp_path_factory.mktemp("clean")
    reproduce(TinyPlot(), out=out, progress=False)
    return (out / "tiny-plot" / "summary.json").read_bytes()


def _ran_once(tmp_path: Path) -> tuple[Path, Path]:
    out = tmp_path / "out"
    reproduce(TinyPlot(), out=out, progress=False)
    return out, out / "tiny-plot"


def _records(run: Path) -> list[Path]:
    return sorted((run / ".tasks").glob("*.json"))


def _check_clean(out: Path, clean_summary: bytes):
    run = out / "tiny-plot"
    assert (run / "summary.json").read_bytes() == clean_summary
    assert verify_outputs(run) == []


# ------------------------------------------------------------------- the lock file


def test_a_lock_planted_as_a_link_to_another_file_leaves_that_file_untouched(
        tmp_path, clean_summary):
    victim = _outside(tmp_path)
    before = _snapshot(victim)
    run = tmp_path / "out" / "tiny-plot"
    run.mkdir(parents=True)
    (run / ".lock").symlink_to(victim / "precious.txt")
    _, messages = _run(tmp_path / "out")
    assert _snapshot(victim) == before
    assert not (run / ".lock").is_symlink() and (run / ".lock").read_text() == str(os.getpid())
    assert any("was a symbolic link; replaced by a lock file" in m for m in messages)
    _check_clean(tmp_path / "out", clean_summary)


@pytest.mark.parametrize("planted", ["fifo", "empty-dir", "dev-null-link"])
def test_a_lock_planted_as_a_fifo_directory_or_device_link_never_blocks(
        tmp_path, clean_summary, planted):
    run = tmp_path / "out" / "tiny-plot"
    run.mkdir(parents=True)
    lock = run / ".lock"
    if planted == "fifo":
        os.mkfifo(lock)
    elif planted == "empty-dir":
        lock.mkdir()
    else:
        lock.symlink_to("/dev/null")
    _run(tmp_path / "out")
    assert lock.is_file() and not lock.is_symlink()
    _check_clean(tmp_path / "out", clean_summary)


def test_a_lock_that_is_a_full_directory_is_a_one_line_refusal(tmp_path, capsys):
    run = tmp_path / "out" / "tiny-plot"
    (run / ".lock").mkdir(parents=True)
    (run / ".lock" / "keep").write_text("x")
    with bounded(), pytest.raises(UnsafeFileError, match=r"the lock file is a directory \(not "
                                                         r"empty\); remove it"):
        reproduce(TinyPlot(), out=tmp_path / "out", progress=False)
    assert (run / ".lock" / "keep").read_text() == "x"
    assert not (run / "summary.json").exists()


# ------------------------------------------------------------------ the task directory


@pytest.mark.parametrize("fresh", [False, True])
def test_tasks_planted_as_a_link_to_another_directory_leave_it_untouched(
        tmp_path, clean_summary, fresh):
    victim = _outside(tmp_path)
    before = _snapshot(victim)
    out, run = _ran_once(tmp_path)
    for p in (run / ".tasks").iterdir():
        p.unlink()
    (run / ".tasks").rmdir()
    (run / ".tasks").symlink_to(victim, target_is_directory=True)
    _, messages = _run(out, fresh=fresh)
    assert _snapshot(victim) == before, "nothing deleted or written outside the run"
    assert (run / ".tasks").is_dir() and not (run / ".tasks").is_symlink()
    assert len(_records(run)) == 2
    assert any("was a symbolic link, not a directory; replaced" in m for m in messages)
    _check_clean(out, clean_summary)


@pytest.mark.parametrize("planted", ["file", "fifo"])
def test_tasks_planted_as_a_file_or_fifo_is_replaced(tmp_path, clean_summary, planted):
    run = tmp_path / "out" / "tiny-plot"
    run.mkdir(parents=True)
    if planted == "file":
        (run / ".tasks").write_text("not a directory")
    else:
        os.mkfifo(run / ".tasks")
    _, messages = _run(tmp_path / "out")
    assert (run / ".tasks").is_dir() and len(_records(run)) == 2
    kind = "a regular file" if planted == "file" else "a FIFO"
    assert any(f"was {kind}, not a directory; replaced" in m for m in messages)
    _check_clean(tmp_path / "out", clean_summary)


def test_the_run_directory_as_a_link_is_refused_before_anything_is_written(tmp_path, capsys):
    victim = _outside(tmp_path)
    before = _snapshot(victim)
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "tiny-plot").symlink_to(victim, target_is_directory=True)
    with pytest.raises(ValueError, match="is a symbolic link; a run writes only into a real "
                                         "directory"):
        reproduce(TinyPlot(), out=tmp_path / "out", progress=False)
    assert _snapshot(victim) == before
    (tmp_path / "out3").mkdir()  # the CLI: the same check, exit 2 with one line
    (tmp_path / "out3" / "lds-impulse").symlink_to(victim, target_is_directory=True)
    capsys.readouterr()
    code = cli_main(["reproduce", "lds-impulse", "--quick", "--no-progress", "--out",
                     str(tmp_path / "out3")])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "is a symbolic link" in err, err
    assert _snapshot(victim) == before


# ---------------------------------------------------------------------- the records


def _plant(path: Path, what: str, victim: Path):
    path.unlink()
    if what == "link-to-file":
        path.symlink_to(victim / "data.json")
    elif what == "link-to-dev-zero":
        path.symlink_to("/dev/zero")
    elif what == "fifo":
        os.mkfifo(path)
    elif what == "directory":
        path.mkdir()
        (path / "inside").write_text("x")
    elif what == "empty-directory":
        path.mkdir()
    elif what == "sparse-oversize":
        with open(path, "wb") as fh:
            fh.truncate(RECORD_MAX_BYTES + 1 if path.suffix == ".json" else 2**30)
    else:  # pragma: no cover
        raise ValueError(what)


@pytest.mark.parametrize("suffix", [".json", ".npz"])
@pytest.mark.parametrize("what", ["link-to-file", "link-to-dev-zero", "fifo", "directory",
                                  "empty-directory", "sparse-oversize"])
def test_odd_records_are_rejected_unread_and_the_summary_is_unchanged(
        tmp_path, clean_summary, what, suffix):
    victim = _outside(tmp_path)
    before = _snapshot(victim)
    out, run = _ran_once(tmp_path)
    target = _records(run)[0].with_suffix(suffix)
    _plant(target, what, victim)
    res, messages = _run(out)
    assert _snapshot(victim) == before
    assert res.stats.n_rejected == 1 and res.stats.n_computed == 1
    rejected = next(m for m in messages if "failed their checks" in m)
    expected = {"link-to-file": "symbolic link (not followed)",
                "link-to-dev-zero": "symbolic link (not followed)",
                "fifo": "is a FIFO, not a regular file",
                "directory": "is a directory, not a regular file",
                "empty-directory": "is a directory, not a regular file",
                "sparse-oversize": "allowed"}[what]
    assert expected in rejected, rejected
    if what == "directory":  # kept (its content is not the store's), the result not stored
        assert (target / "inside").read_text() == "x"
        assert any("could not be stored" in m for m in messages)
    else:  # replaced by the recomputed record: the next run loads everything
        again, _ = _run(out)
        assert (again.stats.n_cached, again.stats.n_rejected) == (2, 0)
    _check_clean(out, clean_summary)


def test_an_oversize_record_is_refused_without_reading_it(tmp_path):
    path = tmp_path / "big.json"
    with open(path, "wb") as fh:
        fh.truncate(2**40)  # 1 TiB, sparse: reading it would take the machine down
    with bounded(5), pytest.raises(UnsafeFileError, match=r"is 1 TiB, more than the 64 MiB "
                                                          r"allowed"):
        read_regular_file(path, RECORD_MAX_BYTES, what="task record")


def test_a_forged_record_with_an_absurd_array_size_is_rejected(tmp_path):
    store = TaskStore(tmp_path, code_version="v")
    key = task_key("x", {"seed": 0}, {"seed_index": 0})
    import numpy as np

    store.save(key, {"a": np.arange(3.0)})
    path = tmp_path / f"{key.digest}.json"
    record = json.loads(path.read_text())
    record["arrays"]["bytes"] = 2**62
    from lds_toolkit.experiments.store.tasks import _body_checksum

    record["sha256"] = _body_checksum(record)  # a forger recomputes the checksum
    path.write_text(json.dumps(record))
    from lds_toolkit.experiments.store import StoredTaskRejected

    with pytest.raises(StoredTaskRejected, match=r"recorded array file size 4611686018427387904 "
                                                 r"is not an integer in \[0, "):
        store.load(key)


def test_a_forger_who_recomputes_the_checksum_is_not_stopped_as_the_docs_say(tmp_path):
    """The threat model as built: the SHA-256 proves integrity, not authenticity. A record
    edited by someone with write access to OUT, checksum recomputed, is accepted (this test
    pins docs/security.md's statement; if the store ever authenticates, change both)."""
    from lds_toolkit.experiments.store.tasks import _body_checksum

    store = TaskStore(tmp_path, code_version="v")
    key = task_key("x", {"seed": 0}, {"seed_index": 0})
    store.save(key, {"value": 1.0})
    path = tmp_path / f"{key.digest}.json"
    record = json.loads(path.read_text())
    record["result"]["value"] = 666.0
    record["sha256"] = _body_checksum(record)
    path.write_text(json.dumps(record))
    assert store.load(key) == {"value": 666.0}


# ------------------------------------------------------------------ the final outputs


@pytest.mark.parametrize("name", ["run.json", "summary.json", "arrays.npz", "tiny.png"])
def test_outputs_planted_as_links_are_replaced_not_written_through(
        tmp_path, clean_summary, name):
    victim = _outside(tmp_path)
    before = _snapshot(victim)
    out, run = _ran_once(tmp_path)
    (run / name).unlink()
    (run / name).symlink_to(victim / "precious.txt")
    _run(out)
    assert _snapshot(victim) == before
    assert not (run / name).is_symlink()
    _check_clean(out, clean_summary)


def test_a_temporary_file_name_planted_as_a_link_in_the_run_directory_is_harmless(
        tmp_path, clean_summary):
    victim = _outside(tmp_path)
    before = _snapshot(victim)
    out, run = _ran_once(tmp_path)
    (run / ".summary.json.planted.tmp").symlink_to(victim / ".keep.tmp")
    (run / ".tasks" / ".x.planted.tmp").symlink_to(victim / ".keep.tmp")
    _run(out, fresh=True)
    assert _snapshot(victim) == before
    _check_clean(out, clean_summary)


def test_verify_outputs_reads_only_plain_names_of_the_directory(tmp_path):
    out, run = _ran_once(tmp_path)
    victim = _outside(tmp_path)
    record = json.loads((run / "run.json").read_text())
    record["files"]["../victim/precious.txt"] = {"bytes": 1, "sha256": "0"}
    (run / "run.json").write_text(json.dumps(record))
    (problem,) = verify_outputs(run)
    assert problem.startswith("'../victim/precious.txt': not a plain file name")
    assert (victim / "precious.txt").exists()


# ------------------------------------------------------- all at once, in a real process


@pytest.mark.slow  # three real CLI runs: about a minute on 2 loaded cores
def test_the_cli_survives_every_planted_file_at_once_in_bounded_time(tmp_path):
    """A real ``lds-toolkit reproduce`` on a directory with a FIFO record, a directory record,
    a /dev/zero link, a sparse 1 GiB array file and the lock linked to an outside file:
    exit 0 within the timeout, the clean run's summary, nothing outside touched."""
    import subprocess
    import sys

    env = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}
    cmd = [sys.executable, "-m", "lds_toolkit.cli", "reproduce", "lds-impulse", "--quick",
           "--seeds", "1", "--no-progress", "--out"]
    out = tmp_path / "out"
    subprocess.run(cmd + [str(out)], check=True, capture_output=True, env=env, timeout=300)
    run = out / "lds-impulse"
    clean = (run / "summary.json").read_bytes()
    victim = _outside(tmp_path)
    before = _snapshot(victim)
    records = _records(run)
    assert len(records) == 3
    _plant(records[0], "fifo", victim)
    _plant(records[1], "directory", victim)
    _plant(records[2].with_suffix(".npz"), "sparse-oversize", victim)
    _plant(records[2], "link-to-dev-zero", victim)
    (run / ".lock").unlink()
    (run / ".lock").symlink_to(victim / "precious.txt")
    proc = subprocess.run(cmd + [str(out)], capture_output=True, text=True, env=env,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    assert "3 stored result(s) failed their checks and were recomputed" in proc.stdout
    assert (run / "summary.json").read_bytes() == clean
    assert verify_outputs(run) == []
    assert _snapshot(victim) == before
