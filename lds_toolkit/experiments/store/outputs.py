"""The output directory of a run: checked before any task, locked while a run writes to it,
written atomically, and vouched for by ``run.json``.

* :func:`check_output_dir` makes sure ``OUT/NAME`` is (or can be created as) a writable
  directory, so a bad ``--out`` fails before the first task with a one-line message; the
  run's own directory ``OUT/NAME`` must be a real directory, not a symbolic link (the run
  deletes and replaces files in it, so it must not reach into another directory).
* :class:`RunLock` is an exclusive ``fcntl.flock`` on ``OUT/NAME/.lock`` for the whole run. A
  second run on the same output directory **refuses at once** (it does not wait: waiting
  would only recompute nothing after the first run finishes, or hang behind a stuck one),
  naming the process that holds the lock. The kernel releases the lock when its holder dies,
  even by SIGKILL, so a crashed run never leaves a stale lock. (Without ``fcntl``, on
  Windows, the lock is not enforced.) The lock file is opened with ``O_NOFOLLOW |
  O_NONBLOCK``: a link, FIFO or other odd entry planted as ``.lock`` is reported
  (:class:`OutputWarning`) and replaced, never written through or waited on.
* :func:`write_outputs` writes ``summary.json``, ``arrays.npz`` and the figures, each to a
  temporary file in the same directory and renamed into place (see :mod:`lds_toolkit._atomic`),
  then ``run.json`` **last**. The previous ``run.json`` is removed before the first write, and
  the new one lists every file it vouches for with its size and SHA-256: whenever ``run.json``
  exists, the files it names are complete (:func:`verify_outputs` checks).

Every file of the directory is read without following links, as a regular file of bounded
size (:data:`SUMMARY_MAX_BYTES`, :data:`RUN_INFO_MAX_BYTES`, :data:`OUTPUT_MAX_BYTES`).
"""

from __future__ import annotations

import errno
import io
import json
import os
import stat
import warnings
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from ..._atomic import atomic_write_bytes, atomic_write_text, remove_temporaries
from ..._safe_files import (
    UnsafeFileError,
    digest_regular_file,
    entry_kind,
    os_reason,
    probe_writable_directory,
    read_regular_file,
    remove_entry,
)

fcntl: Any
try:  # POSIX
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None

LOCK_NAME = ".lock"
#: Size caps of the files a run writes, for reading them back (larger means not ours).
SUMMARY_MAX_BYTES = 256 * 2**20
RUN_INFO_MAX_BYTES = 16 * 2**20
OUTPUT_MAX_BYTES = 8 * 2**30


class OutputLockedError(RuntimeError):
    """Another run holds the lock of this output directory."""


class OutputWarning(UserWarning):
    """An odd entry in a run's directory (a link, FIFO or file where the lock or the task
    directory belongs) was reported and replaced."""


def check_output_dir(path: str | os.PathLike, name: str = "out", *,
                     allow_link: bool = True) -> Path:
    """Create ``path`` (with parents) if needed and check that files can be created in it.

    ``allow_link=False`` refuses a ``path`` that is a symbolic link (the run's own directory
    ``OUT/NAME``, whose files a run replaces and deletes).

    Raises
    ------
    ValueError
        Naming ``name`` (the argument), the path and why: empty, a file is in the way, a
        link, permission denied, read-only file system, name too long, ...
    """
    if isinstance(path, str) and not path.strip():
        raise ValueError(f"{name} must be a directory path, got an empty string")
    path = Path(path)
    try:
        kind = entry_kind(path)
        if kind == "a symbolic link" and not allow_link:
            raise ValueError(f"{name}: {str(path)!r} is a symbolic link; a run writes only "
                             "into a real directory of its own (remove the link, or give --out "
                             "the directory the link points into)")
        if kind is not None and not path.is_dir():
            raise ValueError(f"{name} must be a writable directory; {str(path)!r} exists and "
                             f"is {'not a directory' if kind == 'a regular file' else kind}")
        probe_writable_directory(path)
    except OSError as exc:
        raise ValueError(f"{name} must be a writable directory; cannot write in "
                         f"{str(path)!r}: {os_reason(exc)}") from None
    return path


_LOCK_FLAGS = (os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0)
               | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))


class RunLock:
    """Exclusive lock of one output directory (``with RunLock(outdir): ...``).

    Raises :class:`OutputLockedError` at once when another process holds it. A link, FIFO,
    device or socket planted as the lock file is reported (:class:`OutputWarning`) and
    replaced by a regular file; an empty directory there is removed; anything else in the
    way raises :class:`~lds_toolkit._safe_files.UnsafeFileError`.
    """

    def __init__(self, directory: str | os.PathLike):
        self.path = Path(directory) / LOCK_NAME
        self._fd: int | None = None

    def _open(self) -> int:
        for _ in range(3):
            kind = entry_kind(self.path)
            if kind == "a directory":
                try:
                    os.rmdir(self.path)
                except OSError:
                    raise UnsafeFileError(self.path, "the lock file is a directory (not empty); "
                                                     "remove it") from None
                continue
            if kind not in (None, "a regular file"):
                remove_entry(self.path)  # the entry only: a link's target is not touched
                warnings.warn(OutputWarning(f"{self.path} was {kind}; replaced by a lock file"),
                              stacklevel=3)
                continue
            try:
                fd = os.open(self.path, _LOCK_FLAGS, 0o644)
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.EISDIR, errno.ENXIO, errno.EMLINK):
                    continue  # replaced between lstat and open: look again
                raise
            if stat.S_ISREG(os.fstat(fd).st_mode):
                return fd
            os.close(fd)
        raise UnsafeFileError(self.path, "the lock file keeps being replaced by something that "
                                         "is not a regular file")

    def __enter__(self) -> RunLock:
        fd = self._open()
        if fcntl is not None:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = os.pread(fd, 64, 0).decode("ascii", "replace").strip() or "unknown"
                os.close(fd)
                raise OutputLockedError(
                    f"another lds-toolkit run (pid {holder}) is writing to "
                    f"{str(self.path.parent)!r}; wait for it to finish or use another --out"
                ) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, str(os.getpid()).encode(), 0)
        self._fd = fd
        return self

    def __exit__(self, *exc) -> None:
        if self._fd is not None:
            os.close(self._fd)  # releases the flock
            self._fd = None


def file_digest(path: Path, max_bytes: int = OUTPUT_MAX_BYTES) -> dict[str, Any]:
    """``{"bytes": size, "sha256": hex digest}`` of a file, as ``run.json`` records it (a
    regular file, links not followed: see :func:`~lds_toolkit._safe_files.\
digest_regular_file`)."""
    return digest_regular_file(path, max_bytes, what=Path(path).name)


def read_json_file(path: str | os.PathLike, max_bytes: int) -> Any:
    """The JSON value in ``path``, read as a regular file of at most ``max_bytes`` (links not
    followed). ``FileNotFoundError`` when absent; ``ValueError`` saying why when it is not a
    readable JSON file (odd file, oversize, unreadable, not UTF-8, not JSON)."""
    path = Path(path)
    try:
        raw = read_regular_file(path, max_bytes, what=path.name)
    except FileNotFoundError:
        raise
    except UnsafeFileError as exc:
        raise ValueError(exc.reason) from None
    except OSError as exc:
        raise ValueError(f"{path.name} unreadable: {os_reason(exc)}") from None
    try:
        return json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise ValueError(f"{path.name} is not valid JSON ({len(raw)} bytes: "
                         f"{type(exc).__name__})") from None


def write_outputs(outdir: Path, summary: dict, arrays: Mapping[str, np.ndarray],
                  plot: Callable[[], list], run_info: dict) -> list[Path]:
    """Write a finished run's outputs atomically, ``run.json`` last (see module docstring).

    ``plot()`` writes the figures (with :func:`~lds_toolkit.experiments.plotting.save_figure`,
    itself atomic) and returns their paths. Returns the figure paths.
    """
    outdir = Path(outdir)
    remove_entry(outdir / "run.json")  # a link is removed, never followed
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
    it vouches for has the recorded size and SHA-256).

    ``outdir`` is the directory of one run (``OUT/NAME``); ``FileNotFoundError`` when nothing
    is there and ``NotADirectoryError`` when it is not a directory, so that a mistyped path is
    not reported as an unfinished run."""
    given = os.fspath(outdir)  # named as the caller wrote it (Path drops a trailing slash)
    outdir = Path(outdir)
    if not outdir.is_dir():
        kind = entry_kind(outdir)
        where = f"the directory of one run (OUT/NAME, holding run.json), got {given!r}"
        if kind is None:
            raise FileNotFoundError(f"outdir must be {where}, which does not exist")
        raise NotADirectoryError(f"outdir must be {where}, which is {kind}, not a directory")
    try:
        run = read_json_file(outdir / "run.json", RUN_INFO_MAX_BYTES)
        files = run["files"]
        if not isinstance(files, dict):
            raise TypeError("'files' is not a mapping")
    except FileNotFoundError:
        return ["no run.json: the run did not finish writing its outputs"]
    except (ValueError, KeyError, TypeError) as exc:
        return [f"run.json unreadable or incomplete ({exc})"]
    problems = []
    for name, want in files.items():
        if not plain_name(name):
            problems.append(f"{name!r}: not a plain file name of this directory (not read)")
            continue
        try:
            got = file_digest(outdir / name)
        except UnsafeFileError as exc:
            problems.append(f"{name}: {exc.reason}")
            continue
        except OSError as exc:
            problems.append(f"{name}: {exc.strerror or exc}")
            continue
        if not isinstance(want, dict):
            problems.append(f"{name}: run.json's entry is not a size and checksum")
            continue
        if got != want:
            problems.append(f"{name}: {got['bytes']} bytes, sha256 {got['sha256'][:12]}..., "
                            f"run.json vouches for {want.get('bytes')} bytes, sha256 "
                            f"{str(want.get('sha256'))[:12]}...")
    return problems


def plain_name(name) -> bool:
    """A file name directly inside the output directory (no separator, not . or ..)."""
    return (isinstance(name, str) and name not in ("", ".", "..") and "/" not in name
            and os.sep not in name and "\0" not in name)
