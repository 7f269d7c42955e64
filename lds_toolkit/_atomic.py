"""Private helper: write a file atomically (temporary file in the same directory, then
``os.replace``), so that a reader or a crash never sees a half-written file."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import IO

# the process umask, read once (os.umask can only be read by setting it)
_UMASK = os.umask(0o022)
os.umask(_UMASK)


def atomic_write(path: str | os.PathLike, write: Callable[[IO[bytes]], None]) -> Path:
    """Call ``write(fh)`` on a temporary binary file beside ``path``, flush it to disk and
    rename it to ``path``. On any error the temporary file is removed and ``path`` is left
    as it was. The file gets the permissions a plain ``open(path, "w")`` would give it."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.chmod(tmp, 0o666 & ~_UMASK)  # mkstemp creates 0600
        with os.fdopen(fd, "wb") as fh:
            write(fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return path


def atomic_write_bytes(path: str | os.PathLike, data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically."""
    return atomic_write(path, lambda fh: fh.write(data))


def atomic_write_text(path: str | os.PathLike, text: str) -> Path:
    """Write ``text`` (UTF-8) to ``path`` atomically."""
    return atomic_write_bytes(path, text.encode("utf-8"))


def remove_temporaries(directory: str | os.PathLike) -> list[Path]:
    """Delete the temporary files that :func:`atomic_write` leaves behind when its process is
    killed mid-write (``.NAME.XXXXXXXX.tmp``) in ``directory``; return their paths. Call it
    only while no other process writes there (e.g. under the run lock)."""
    removed = []
    for p in Path(directory).glob(".*.tmp"):
        if p.is_file():
            p.unlink(missing_ok=True)
            removed.append(p)
    return removed
