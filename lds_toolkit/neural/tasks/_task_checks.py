"""Checks at the boundary of :class:`~lds_toolkit.neural.tasks.SequenceTask`: its fields, the
index of :meth:`~SequenceTask.subset`, and the file it is saved to or loaded from.

Files go through the safe-file helpers the result store uses
(:mod:`lds_toolkit._safe_files`): a task file is a regular file (a FIFO or device is refused,
never waited on), at most half the memory available now, a zip archive (checked on its first
bytes, so a large file of another kind is refused without being read), readable by numpy
without pickle, and holding every entry :meth:`~SequenceTask.save` writes. Each refusal names
the path and says what was found.
"""

from __future__ import annotations

import io
import json
import os
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

from ..._safe_files import UnsafeFileError, entry_kind, memory_read_cap, read_regular_file
from ..._validation import check_finite

#: Entries every task file holds (``info/...`` arrays may follow).
ARRAY_ENTRIES = ("inputs", "targets", "mask", "eval_mask")
#: Keys of the JSON ``meta`` entry.
META_KEYS = ("vocab_size", "n_classes", "name", "info")
#: First bytes of a zip archive (what ``np.savez`` writes).
_ZIP_MAGIC = b"PK\x03\x04"


def check_task_fields(task) -> None:
    """The checks of the fields that :class:`SequenceTask` adds to its shape checks: a string
    ``name``, (N, L) inputs that are token ids (integers, with ``vocab_size``), and finite
    real-valued inputs and targets (a NaN would make every loss NaN)."""
    if not isinstance(task.name, str):
        raise TypeError(f"SequenceTask.name must be a string, got {type(task.name).__name__} "
                        f"{task.name!r:.60}")
    x = task.inputs
    if x.ndim == 2 and (not np.issubdtype(x.dtype, np.integer) or task.vocab_size is None):
        raise ValueError(f"SequenceTask.inputs of shape {x.shape} (N, L) are token ids: they "
                         f"must be integers with vocab_size set, got dtype {x.dtype} and "
                         f"vocab_size={task.vocab_size}; real-valued inputs have shape "
                         f"(N, L, d_in) (inputs[..., None] for one channel)")
    for key in ("inputs", "targets"):
        arr = getattr(task, key)
        if np.issubdtype(arr.dtype, np.inexact):
            check_finite(f"SequenceTask.{key}", arr)


def check_subset_index(index, n: int):
    """``index`` of :meth:`SequenceTask.subset` for ``n`` sequences: a slice, a boolean mask
    of length ``n`` or integer indices in ``[-n, n)``; returned as given (or as an array)."""
    if isinstance(index, slice):
        return index
    arr = np.asarray(index)
    if arr.dtype == np.bool_:
        if arr.shape != (n,):
            raise ValueError(f"index as a boolean mask must have shape ({n},), one entry per "
                             f"sequence, got shape {arr.shape}")
        return arr
    if not np.issubdtype(arr.dtype, np.integer) or arr.ndim > 1:
        raise TypeError(f"index must be a slice, a boolean mask or integer sequence indices, "
                        f"got {arr.dtype} of shape {arr.shape}")
    bad = (arr < -n) | (arr >= n)
    if np.any(bad):
        raise ValueError(f"index {int(arr[bad].ravel()[0])} is out of range for the {n} "
                         f"sequences of this task (valid: -{n} to {n - 1})")
    return arr


def _path(path) -> Path:
    if not isinstance(path, str | os.PathLike) or not str(path):
        raise TypeError(f"path must be a file name (str or Path), got {type(path).__name__} "
                        f"{path!r:.60}")
    return Path(path)


def check_save_path(path) -> Path:
    """Where :meth:`SequenceTask.save` writes: exactly ``path`` (numpy would add ``.npz`` to
    a name without it), whose directory must exist (nothing is created elsewhere) and which
    must not be a directory."""
    path = _path(path)
    kind = entry_kind(path)
    if kind == "a directory":
        raise IsADirectoryError(f"path {str(path)!r} is a directory; give a file name inside "
                                f"it, e.g. {str(path / 'task.npz')!r}")
    parent = path.parent
    if entry_kind(parent) is None:
        raise FileNotFoundError(f"path {str(path)!r}: its directory {str(parent)!r} does not "
                                "exist; create it first (save writes one file, no directories)")
    if not parent.is_dir():
        raise NotADirectoryError(f"path {str(path)!r}: {str(parent)!r} is "
                                 f"{entry_kind(parent)}, not a directory")
    return path


def read_task_file(path) -> dict[str, Any]:
    """The arrays and metadata of a task file written by :meth:`SequenceTask.save`:
    ``{"arrays": {...}, "meta": {...}, "info": {...}}``, after the checks of the module
    docstring (``FileNotFoundError``/``ValueError`` naming ``path`` otherwise)."""
    path = _path(path)
    not_ours = f"path {str(path)!r} is not a task file written by SequenceTask.save"
    try:
        data = read_regular_file(path, memory_read_cap(), follow_symlinks=True,
                                 what="task file", magic=_ZIP_MAGIC)
    except FileNotFoundError:
        raise FileNotFoundError(f"path {str(path)!r}: no task file there (SequenceTask.save("
                                "path) writes one)") from None
    except UnsafeFileError as exc:
        raise ValueError(f"{not_ours}: {exc.reason}") from None
    try:
        with np.load(io.BytesIO(data), allow_pickle=False) as f:
            missing = [k for k in (*ARRAY_ENTRIES, "meta") if k not in f.files]
            if missing:
                raise ValueError(f"it lacks the entries {missing}")
            arrays = {k: f[k] for k in ARRAY_ENTRIES}
            meta = json.loads(str(f["meta"]))
            extra = {k[5:]: f[k] for k in f.files if k.startswith("info/")}
    except (ValueError, OSError, EOFError, KeyError, zipfile.BadZipFile,
            json.JSONDecodeError) as exc:
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        if "pickle" in reason:  # numpy's advice to load it unsafely is no advice here
            reason = "it holds object (pickled) arrays, which are never loaded"
        raise ValueError(f"{not_ours}: {reason}") from None
    if not isinstance(meta, dict) or any(k not in meta for k in META_KEYS) \
            or not isinstance(meta["info"], dict):
        keys = sorted(meta) if isinstance(meta, dict) else type(meta).__name__
        raise ValueError(f"{not_ours}: its meta entry must be a JSON object with the keys "
                         f"{list(META_KEYS)} ('info' an object), got {keys}")
    return {"arrays": arrays, "meta": meta, "info": {**meta["info"], **extra}}
