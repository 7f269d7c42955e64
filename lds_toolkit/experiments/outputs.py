"""The output directory of a run: checked before any task, locked while a run writes to it,
written atomically, and vouched for by ``run.json``.

* :func:`check_output_dir` makes sure ``OUT/NAME`` is (or can be created as) a writable
  directory, so a bad ``--out`` fails before the first task with a one-line message.
* :class:`RunLock` is an exclusive ``fcntl.flock`` on ``OUT/NAME/.lock`` for the whole run. A
  second run on the same output directory **refuses at once** (it does not wait: waiting
  would only recompute nothing after the first run finishes, or hang behind a stuck one),
  naming the process that holds the lock. The kernel releases the lock when its holder dies,
  even by SIGKILL, so a crashed run never leaves a stale lock. (Without ``fcntl``, on
  Windows, the lock is not enforced.)
* :func:`write_outputs` writes ``summary.json``, ``arrays.npz`` and the figures, each to a
  temporary file in the same directory and renamed into place (see :mod:`lds_toolkit._atomic`),
  then ``run.json`` **last**. The previous ``run.json`` is removed before the first write, and
  the new one lists every file it vouches for with its size and SHA-256: whenever ``run.json``
  exists, the files it names are complete (:func:`verify_outputs` checks).
"""

from __future__ import annotations

import hashlib
import io
import json
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import IO, Any

import numpy as np

from .._atomic import atomic_write_bytes, atomic_write_text, remove_temporaries

fcntl: Any
try:  # POSIX
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None

LOCK_NAME = ".lock"


class OutputLockedError(RuntimeError):
    """Another run holds the lock of this output directory."""


def check_output_dir(path: str | os.PathLike, name: str = "out") -> Path:
    """Create ``path`` (with parents) if needed and check that files can be created in it.

    Raises
    ------
    ValueError
        Naming ``name`` (the argument), the path and why: a file is in the way, permission
        denied, read-only file system, ...
    """
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise ValueError(f"{name} must be a writable directory; {str(path)!r} exists and is "
                         "not a directory")
    try:
        path.mkdir(parents=True, exist_ok=True)
        probe = path / f".write-test-{os.getpid()}"
        probe.touch()
        probe.unlink()
    except OSError as exc:
        why = exc.strerror or str(exc)
        raise ValueError(f"{name} must be a writable directory; cannot write in "
                         f"{str(path)!r}: {why}") from None
    return path


class RunLock:
    """Exclusive lock of one output directory (``with RunLock(outdir): ...``).

    Raises :class:`OutputLockedError` at once when another process holds it.
    """

    def __init__(self, directory: str | os.PathLike):
        self.path = Path(directory) / LOCK_NAME
        self._fh: IO[str] | None = None

    def __enter__(self) -> RunLock:
        fh = open(self.path, "a+")  # noqa: SIM115 - held for the lock's lifetime
        if fcntl is not None:
            try:
                fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                fh.seek(0)
                holder = fh.read().strip() or "unknown"
                fh.close()
                raise OutputLockedError(
                    f"another lds-toolkit run (pid {holder}) is writing to "
                    f"{str(self.path.parent)!r}; wait for it to finish or use another --out"
                ) from None
        fh.seek(0)
        fh.truncate()
        fh.write(str(os.getpid()))
        fh.flush()
        self._fh = fh
        return self

    def __exit__(self, *exc) -> None:
        if self._fh is not None:
            self._fh.close()  # releases the flock
            self._fh = None


def file_digest(path: Path) -> dict[str, Any]:
    """``{"bytes": size, "sha256": hex digest}`` of a file, as ``run.json`` records it."""
    data = path.read_bytes()
    return {"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}


def write_outputs(outdir: Path, summary: dict, arrays: Mapping[str, np.ndarray],
                  plot: Callable[[], list], run_info: dict) -> list[Path]:
    """Write a finished run's outputs atomically, ``run.json`` last (see module docstring).

    ``plot()`` writes the figures (with :func:`~lds_toolkit.experiments.plotting.save_figure`,
    itself atomic) and returns their paths. Returns the figure paths.
    """
    outdir = Path(outdir)
    (outdir / "run.json").unlink(missing_ok=True)
    remove_temporaries(outdir)
    atomic_write_text(outdir / "summary.json", json.dumps(summary, indent=2))
    buf = io.BytesIO()
    np.savez_compressed(buf, allow_pickle=False,
                        **{k: np.asarray(v) for k, v in arrays.items()})
    atomic_write_bytes(outdir / "arrays.npz", buf.getvalue())
    figures = [Path(p) for p in plot()]
    names = ["summary.json", "arrays.npz"] + [p.name for p in figures]
    files = {n: file_digest(outdir / n) for n in names}
    atomic_write_text(outdir / "run.json",
                      json.dumps({**run_info, "figures": [p.name for p in figures],
                                  "files": files}, indent=2))
    return figures


def verify_outputs(outdir: str | os.PathLike) -> list[str]:
    """Problems with the outputs of ``outdir`` (empty when ``run.json`` exists and every file
    it vouches for has the recorded size and SHA-256)."""
    outdir = Path(outdir)
    try:
        run = json.loads((outdir / "run.json").read_text())
        files = run["files"]
    except FileNotFoundError:
        return ["no run.json: the run did not finish writing its outputs"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        return [f"run.json unreadable or incomplete ({exc})"]
    problems = []
    for name, want in files.items():
        try:
            got = file_digest(outdir / name)
        except OSError as exc:
            problems.append(f"{name}: {exc.strerror or exc}")
            continue
        if got != want:
            problems.append(f"{name}: {got['bytes']} bytes, sha256 {got['sha256'][:12]}..., "
                            f"run.json vouches for {want.get('bytes')} bytes, sha256 "
                            f"{str(want.get('sha256'))[:12]}...")
    return problems
