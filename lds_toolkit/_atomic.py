"""Private helper: write a file atomically (temporary file in the same directory, then
``os.replace``), so that a reader or a crash never sees a half-written file.

The rename replaces the directory *entry* at the destination: a symbolic link, FIFO or file
planted there is replaced, never written through (what a link points to is left untouched);
a directory in the way is refused with :class:`~lds_toolkit._safe_files.UnsafeFileError`."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import IO

from ._safe_files import UnsafeFileError, entry_kind

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
        try:
            os.replace(tmp, path)
        except IsADirectoryError:
            raise UnsafeFileError(path, "is a directory; a file cannot replace it") from None
    except BaseException as exc:
        if os.path.exists(tmp):
            os.unlink(tmp)
        if isinstance(exc, OSError) and exc.filename is None and exc.errno is not None:
            # a failed write/fsync (disk full, quota) names no file: name the destination
            raise OSError(exc.errno, exc.strerror, str(path)) from None
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
    only while no other process writes there (e.g. under the run lock).

    Only regular files are removed (checked without following links), and nothing at all
    when ``directory`` is itself a symbolic link: this never deletes outside ``directory``."""
    directory = Path(directory)
    if entry_kind(directory) != "a directory":
        return []
    removed = []
    for p in directory.glob(".*.tmp"):
        if entry_kind(p) == "a regular file":
            p.unlink(missing_ok=True)
            removed.append(p)
    return removed
