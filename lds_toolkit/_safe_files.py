"""Private helper: read and manage files without trusting what sits at a path.

``open(path)`` follows a symbolic link to wherever it points, blocks forever on a FIFO and
reads a device (``/dev/zero``) or a sparse file of any size whole. The functions here are
what the result store, the output directory and the caches use instead:

* :func:`read_regular_file` opens with ``O_NOFOLLOW | O_NONBLOCK`` (a link is refused, a
  FIFO opens at once instead of waiting for a writer), then checks with ``fstat`` on the open
  descriptor that it is a regular file no larger than a cap, and reads at most that cap;
* :func:`entry_kind` names what a directory entry is without following it (``lstat``);
* :func:`ensure_directory` makes sure a path is a real directory, never a link to one, and
  can replace a link, file or FIFO in its place (removing only that entry, never what a
  link points to);
* :func:`remove_entry` deletes one non-directory entry (a link is removed, not its target).

Every refusal raises :class:`UnsafeFileError`, an ``OSError`` whose message says what was
found (``a symbolic link (not followed)``, ``a FIFO``, ``4294967296 bytes, more than the
67108864 allowed``).
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat
from pathlib import Path

_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_O_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_O_BINARY = getattr(os, "O_BINARY", 0)  # Windows


class UnsafeFileError(OSError):
    """A path that is not a regular file of acceptable size (a link, FIFO, device, socket,
    directory, or a file over its size cap). ``reason`` says which; ``path`` is the path."""

    def __init__(self, path: str | os.PathLike, reason: str):
        self.path = Path(path)
        self.reason = reason
        super().__init__(f"{self.path}: {reason}")

    def __str__(self) -> str:  # OSError's own __str__ would show "None"
        return f"{self.path}: {self.reason}"


def memory_read_cap() -> int:
    """A size cap for a file that is read whole and then unpacked (a checkpoint, a dataset):
    half the memory available now (1 TiB where the OS does not say)."""
    from ._validation import available_memory_bytes

    available = available_memory_bytes()
    return 2**40 if available is None else max(available // 2, 2**20)


def kind_of_mode(mode: int) -> str:
    """``"a regular file"``, ``"a directory"``, ``"a symbolic link"``, ``"a FIFO"``, ..."""
    for test, name in ((stat.S_ISREG, "a regular file"), (stat.S_ISDIR, "a directory"),
                       (stat.S_ISLNK, "a symbolic link"), (stat.S_ISFIFO, "a FIFO"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return name
    return "a special file"  # pragma: no cover - door, whiteout, ...


def entry_kind(path: str | os.PathLike) -> str | None:
    """What the entry ``path`` is, without following a link (``None`` when absent)."""
    try:
        return kind_of_mode(os.lstat(path).st_mode)
    except FileNotFoundError:
        return None
    except NotADirectoryError:
        return None


def human_bytes(n: float) -> str:
    """``1.5 GiB``-style size."""
    for unit in ("bytes", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if n < 1024 or unit == "PiB":
            return f"{n:.3g} {unit}" if unit != "bytes" else f"{int(n)} bytes"
        n /= 1024
    return ""  # pragma: no cover


def _open_regular(path, max_bytes: int, follow_symlinks: bool, what: str) -> tuple[int, int]:
    """``(fd, size)`` of ``path`` opened read-only after the checks of
    :func:`read_regular_file`; the caller closes ``fd``."""
    flags = os.O_RDONLY | _O_NONBLOCK | _O_CLOEXEC | _O_BINARY
    if not follow_symlinks:
        flags |= _O_NOFOLLOW
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.EMLINK) and entry_kind(path) == "a symbolic link":
            raise UnsafeFileError(path, f"{what} is a symbolic link (not followed)") from None
        if exc.errno == errno.EISDIR:
            raise UnsafeFileError(path, f"{what} is a directory, not a regular file") from None
        if exc.errno == errno.ENXIO:  # e.g. a socket, or a FIFO on some systems
            raise UnsafeFileError(path, f"{what} is {entry_kind(path) or 'not a file'}, "
                                        "not a regular file") from None
        raise
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise UnsafeFileError(path, f"{what} is {kind_of_mode(st.st_mode)}, not a regular "
                                        "file")
        if st.st_size > max_bytes:
            raise UnsafeFileError(path, f"{what} is {human_bytes(st.st_size)}, more than the "
                                        f"{human_bytes(max_bytes)} allowed")
    except BaseException:
        os.close(fd)
        raise
    return fd, st.st_size


def _chunks(fd: int, path, max_bytes: int, what: str):
    total = 0
    while True:
        chunk = os.read(fd, min(1 << 24, max_bytes + 1 - total))
        if not chunk:
            return
        total += len(chunk)
        if total > max_bytes:  # grew while being read
            raise UnsafeFileError(path, f"{what} grew past the {human_bytes(max_bytes)} "
                                        "allowed while being read")
        yield chunk


def read_regular_file(path: str | os.PathLike, max_bytes: int, *,
                      follow_symlinks: bool = False, what: str = "file",
                      magic: bytes | None = None) -> bytes:
    """The bytes of ``path`` if it is a regular file of at most ``max_bytes`` bytes.

    Parameters
    ----------
    path : path
    max_bytes : int
        Size cap; a larger file is refused without being read.
    follow_symlinks : bool
        ``False`` (default): a symbolic link at ``path`` is refused (``O_NOFOLLOW``). ``True``
        for a path a user named on purpose; the target must still be a regular file.
    what : str
        What the file is, for the message (``"task record"``).
    magic : bytes, optional
        The bytes the file must start with (``b"PK\\x03\\x04"`` for a zip/npz); checked before
        the rest is read, so a file of another kind (a sparse file of zeros, text) is refused
        after reading a few bytes instead of all of it.

    Raises
    ------
    FileNotFoundError
        Nothing at ``path``.
    UnsafeFileError
        A link (when not followed), directory, FIFO, device or socket, or a file over
        ``max_bytes``. Never blocks: a FIFO is opened non-blocking and refused.
    OSError
        Any other failure to open or read (permission denied, I/O error).
    """
    fd, _ = _open_regular(path, max_bytes, follow_symlinks, what)
    try:
        if magic:
            head = os.read(fd, len(magic))
            if head != magic:
                raise UnsafeFileError(path, f"{what} does not start with {magic!r} (it starts "
                                            f"with {head!r}): not a file of that kind")
            os.lseek(fd, 0, os.SEEK_SET)
        return b"".join(_chunks(fd, path, max_bytes, what))
    finally:
        os.close(fd)


def digest_regular_file(path: str | os.PathLike, max_bytes: int, *,
                        what: str = "file") -> dict[str, int | str]:
    """``{"bytes": size, "sha256": hex digest}`` of ``path``, read in chunks with the checks
    of :func:`read_regular_file` (links not followed)."""
    fd, _ = _open_regular(path, max_bytes, False, what)
    h, n = hashlib.sha256(), 0
    try:
        for chunk in _chunks(fd, path, max_bytes, what):
            h.update(chunk)
            n += len(chunk)
    finally:
        os.close(fd)
    return {"bytes": n, "sha256": h.hexdigest()}


def ensure_directory(path: str | os.PathLike, *, replace: bool = False,
                     what: str = "directory") -> str | None:
    """Make ``path`` a real directory (created, with parents, when absent).

    A symbolic link is never followed: with ``replace=True`` a link, regular file, FIFO,
    socket or device entry at ``path`` is removed (the entry only, never what a link points
    to) and a directory created in its place, and a sentence saying what was replaced is
    returned; with ``replace=False`` it raises :class:`UnsafeFileError`. Returns ``None`` when
    nothing had to be replaced.
    """
    path = Path(path)
    kind = entry_kind(path)
    note = None
    if kind == "a directory":
        return None
    if kind is not None:
        if not replace:
            raise UnsafeFileError(path, f"{what} is {kind}, not a directory"
                                  + (" (not followed)" if kind == "a symbolic link" else ""))
        os.unlink(path)
        note = f"{path} was {kind}, not a directory; replaced by an empty directory"
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.mkdir(path)
    except FileExistsError:  # created meanwhile by someone else: check it again
        kind = entry_kind(path)
        if kind != "a directory":
            raise UnsafeFileError(path, f"{what} is {kind}, not a directory") from None
    return note


def remove_entry(path: str | os.PathLike) -> bool:
    """Delete the non-directory entry ``path`` (a link itself, never its target); ``False``
    when absent. A directory is refused with :class:`UnsafeFileError`."""
    kind = entry_kind(path)
    if kind is None:
        return False
    if kind == "a directory":
        raise UnsafeFileError(path, "is a directory; not removed")
    try:
        os.unlink(path)
    except FileNotFoundError:
        return False
    return True


def probe_writable_directory(path: str | os.PathLike) -> Path:
    """Create ``path`` (with parents) if needed and prove a file can be created in it (a
    probe file created with ``O_EXCL | O_NOFOLLOW`` and removed). Raises the ``OSError``
    that stops it (not a directory, permission denied, read-only, name too long, ...)."""
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise NotADirectoryError(errno.ENOTDIR, "Not a directory", str(path))
    path.mkdir(parents=True, exist_ok=True)
    probe = path / f".write-test-{os.getpid()}"
    fd = os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _O_NOFOLLOW | _O_CLOEXEC, 0o600)
    os.close(fd)
    os.unlink(probe)
    return path


def os_reason(exc: OSError) -> str:
    """``Permission denied (EACCES)``: the error's text and its errno name."""
    code = errno.errorcode.get(exc.errno or 0)
    why = exc.strerror or str(exc)
    return f"{why} ({code})" if code else why

