"""Integrity-checked ``.npz`` cache files, shared by the spectral filters and their LDS.

A cache file holds plain arrays and the SHA-256 its writer computed over them; reading it
runs no code (``allow_pickle=False``), follows no link, never blocks on a FIFO and reads at
most ``cap`` bytes. A file that fails any of that is *rejected* with a reason: the caller
warns, recomputes and rewrites it. Writes are atomic (temporary file, then rename).
"""

from __future__ import annotations

import io
import warnings
from pathlib import Path

import numpy as np

from .._atomic import atomic_write_bytes
from .._safe_files import UnsafeFileError, read_regular_file

#: Returned by :func:`read_arrays` for a readable file written without a checksum.
NO_CHECKSUM = "no checksum"


class Rejected(str):
    """Why a cache file was refused (a ``str``; the caller words its warning)."""


def read_arrays(path: Path, names: tuple[str, ...], cap: int, what: str
                ) -> tuple[tuple[np.ndarray, ...], str | None] | Rejected | None:
    """``(arrays, stored checksum or None)`` of ``names`` in the file; ``None`` when it does
    not exist; a :class:`Rejected` reason when it cannot be read safely."""
    try:
        data = read_regular_file(path, cap, what=what)
    except FileNotFoundError:
        return None
    except UnsafeFileError as exc:
        return Rejected(exc.reason)
    except OSError as exc:
        return Rejected(f"unreadable: {exc.strerror or exc}")
    try:
        with np.load(io.BytesIO(data), allow_pickle=False) as z:
            arrays = tuple(np.array(z[name]) for name in names)
            stored = str(z["sha256"]) if "sha256" in z.files else None
    except Exception as exc:  # noqa: BLE001 - zip, npy and pickle refusals come in many types
        return Rejected(f"not a readable .npz ({type(exc).__name__}, {len(data)} bytes)")
    return arrays, stored


def write_arrays(path: Path, arrays: dict[str, np.ndarray], checksum: str, what: str) -> None:
    """Write ``arrays`` and their ``checksum`` atomically; a failure warns, naming ``what``."""
    buf = io.BytesIO()
    np.savez(buf, allow_pickle=False, sha256=np.array(checksum), **arrays)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_bytes(path, buf.getvalue())
    except OSError as exc:
        warnings.warn(f"could not write {what} {path}: {exc}", RuntimeWarning, stacklevel=4)
