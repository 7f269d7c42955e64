"""On-disk store of finished task results, so an interrupted sweep resumes; nothing in it can
run code, and nothing in it is trusted without checking.

Layout. Task ``key`` is kept as ``<root>/<digest>.json`` plus, when the result holds numpy
arrays, ``<root>/<digest>.npz``:

* the ``.npz`` holds the arrays, written and read with ``allow_pickle=False``;
* the ``.json`` holds everything else (numbers, strings, nesting, see
  :mod:`lds_toolkit.experiments.store._codec` for the exact encoding), the task's full key
  (experiment, SHA-256 of the config, task dict, base seed, code version), the SHA-256 and
  size of the ``.npz`` and a SHA-256 of its own content. It is written after the ``.npz``,
  both atomically (temporary file, then rename), so it is the commit record of the task.

Partial tasks. A task that trains checkpoints its training beside its future record, in
``<root>/<digest>.<name>.ckpt`` (:meth:`TaskStore.checkpoint_prefix`; written and checked by
:mod:`lds_toolkit.neural.training.checkpoints`: ``torch.load(weights_only=True)``, a digest of the
content, a tag naming the task and the code version). A task with such a file and no record
is *partial* (:meth:`TaskStore.partial_keys`); saving its result removes its checkpoints,
and :meth:`TaskStore.clear` removes them with the records.

The file name (``digest``) hashes the experiment, the full config and the task, not the code
version: a result computed by older code sits under the same name and is found, reported as
stale and overwritten, instead of piling up.

Loading checks, in order: the JSON parses; its checksum matches its content; its key is the
task's key; its code version is the current one (:func:`~lds_toolkit.experiments.store.version.\
code_version`: package version plus a hash of the experiment's source closure); the ``.npz``
has the recorded size and checksum and holds exactly the recorded arrays. A file failing any
check raises :class:`StoredTaskRejected` with the reason; :func:`~lds_toolkit.experiments.\
sweep.run_sweep` reports every rejection once and recomputes the task. A truncated, empty,
bit-flipped, swapped or planted (e.g. pickle) file is therefore never used and never crashes
a run.

Odd files. Files are opened without following links and without blocking
(:func:`~lds_toolkit._safe_files.read_regular_file`): a symbolic link, FIFO, device, socket
or directory in place of a record, a record over :data:`RECORD_MAX_BYTES`, or an array file
whose size is not the recorded one (or over :data:`ARRAYS_MAX_BYTES`) is rejected without
being read. Saving renames a new file over the entry, so a planted link or FIFO is replaced,
never written through; a non-empty directory in the way makes :meth:`TaskStore.save` raise
:class:`~lds_toolkit._safe_files.UnsafeFileError` (the sweep reports it and goes on without
storing that task). The store never follows its own root when it is a link:
:meth:`TaskStore.save` refuses it and :meth:`TaskStore.clear` deletes nothing.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..._atomic import atomic_write_bytes, remove_temporaries
from ..._safe_files import (
    UnsafeFileError,
    ensure_directory,
    entry_kind,
    read_regular_file,
    remove_entry,
)
from ..._validation import check_int
from ._codec import decode, encode

FORMAT = "lds_toolkit-task"
FORMAT_VERSION = 1
#: Largest task record (``.json``) the store reads; a larger file is rejected unread. The
#: largest record of the catalog at paper scale is a few hundred KiB.
RECORD_MAX_BYTES = 64 * 2**20
#: Largest array file (``.npz``) the store reads (it must also have its recorded size).
ARRAYS_MAX_BYTES = 4 * 2**30


def _canonical(obj) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), default=repr)


def config_hash(config: dict) -> str:
    """SHA-256 (hex) of the canonical JSON of a config."""
    return hashlib.sha256(_canonical(config).encode()).hexdigest()


@dataclass(frozen=True)
class TaskKey:
    """Identity of one task of one run: experiment, config (by hash), task and base seed.

    ``digest`` (32 hex digits) names the task's files; :meth:`record` is what a stored file
    must carry to be accepted (with the code version added by the store).
    """

    experiment: str
    config_sha256: str
    task: dict = field(hash=False)
    seed: int

    @property
    def digest(self) -> str:
        blob = _canonical({"experiment": self.experiment, "config": self.config_sha256,
                           "task": self.task, "seed": self.seed})
        return hashlib.sha256(blob.encode()).hexdigest()[:32]

    def record(self) -> dict[str, Any]:
        return {"experiment": self.experiment, "config_sha256": self.config_sha256,
                "task": self.task, "seed": self.seed}

    def __str__(self) -> str:
        return self.digest


def task_key(experiment: str, config: dict, task: dict) -> TaskKey:
    """The :class:`TaskKey` of ``task`` in a run of ``experiment`` with ``config`` (whose
    ``"seed"`` entry, the base seed, is part of the key)."""
    if not isinstance(experiment, str) or not experiment:
        raise TypeError(f"experiment must be an experiment's name (a non-empty string), got "
                        f"{type(experiment).__name__} {experiment!r:.60}")
    for label, value in (("config", config), ("task", task)):
        if not isinstance(value, dict):
            raise TypeError(f"{label} must be a dict, got {type(value).__name__} {value!r:.60}")
    if "seed_index" not in task:
        raise ValueError(f"task must hold its 'seed_index' (which random stream it draws), got "
                         f"the keys {sorted(map(str, task))}")
    check_int("task['seed_index']", task["seed_index"], 0)
    return TaskKey(experiment, config_hash(config), json.loads(_canonical(task)),
                   int(config.get("seed", 0)))


class StoredTaskRejected(ValueError):
    """A stored task result failed a check (``reason`` says which); it must be recomputed."""

    def __init__(self, path: Path, reason: str):
        self.path = Path(path)
        self.reason = reason
        super().__init__(f"{self.path.name}: {reason}")


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _body_checksum(record: dict) -> str:
    body = {k: v for k, v in record.items() if k != "sha256"}
    return _sha256(json.dumps(body, separators=(",", ":"), ensure_ascii=True,
                              allow_nan=False).encode())


def _no_constants(name: str):
    raise ValueError(f"non-standard JSON constant {name}")


class TaskStore:
    """Directory of finished task results, keyed by :class:`TaskKey` (see module docstring).

    Parameters
    ----------
    root : path
        Directory of the ``.json``/``.npz`` files (created on the first save).
    code_version : str
        The version stored with every result and required of every loaded one.
    """

    def __init__(self, root: str | os.PathLike, code_version: str = "unversioned"):
        self.root = Path(root)
        if not isinstance(code_version, str):
            raise TypeError(f"code_version must be a string (code_version(experiment) gives "
                            f"one), got {type(code_version).__name__} {code_version!r:.60}")
        self.code_version = code_version
        kind = entry_kind(self.root)  # not followed: a link is refused as save() refuses it
        if kind not in (None, "a directory"):
            raise UnsafeFileError(self.root, f"TaskStore root is {kind}, not a directory; give "
                                             "a directory (created on the first save)")

    def _paths(self, key: TaskKey | str) -> tuple[Path, Path]:
        digest = key.digest if isinstance(key, TaskKey) else str(key)
        return self.root / f"{digest}.json", self.root / f"{digest}.npz"

    def checkpoint_prefix(self, key: TaskKey | str) -> Path:
        """Path prefix of the checkpoint files of task ``key``
        (``<prefix>.<name>.ckpt``, see the module docstring)."""
        digest = key.digest if isinstance(key, TaskKey) else str(key)
        return self.root / digest

    def checkpoints(self, key: TaskKey | str) -> list[Path]:
        """The checkpoint files of task ``key`` (links and odd entries included: they are
        never read here), sorted."""
        if entry_kind(self.root) != "a directory":
            return []
        prefix = self.checkpoint_prefix(key).name
        return sorted(self.root.glob(f"{prefix}.*.ckpt"))

    def partial_keys(self) -> list[str]:
        """Digests of the tasks with checkpoints but no record (stopped mid-training), sorted."""
        if entry_kind(self.root) != "a directory":
            return []
        stems = {p.name.split(".", 1)[0] for p in self.root.glob("*.ckpt")}
        return sorted(stems - set(self.keys()))

    def __contains__(self, key: TaskKey | str) -> bool:
        """An entry exists for ``key`` (not yet checked, links not followed: :meth:`load`
        checks)."""
        return entry_kind(self._paths(key)[0]) is not None

    def save(self, key: TaskKey, value: Any, notes: dict | None = None) -> None:
        """Store ``value`` (see :mod:`~lds_toolkit.experiments.store._codec` for what it may hold)
        under ``key``: the arrays first, then the JSON record, each atomically. ``notes``
        (JSON: how the result came about, e.g. ``{"resumed_from": {"train": 1200}}``) are
        kept in the record beside the result, not in it."""
        if not isinstance(key, TaskKey):
            raise TypeError(f"key must be a TaskKey (see task_key), got {type(key).__name__}")
        tree, arrays = encode(value)
        record: dict[str, Any] = {
            "format": FORMAT, "format_version": FORMAT_VERSION,
            "key": {**key.record(), "code_version": self.code_version},
            "result": tree, "arrays": None,
        }
        if notes:
            record["notes"] = notes
        json_path, npz_path = self._paths(key)
        ensure_directory(self.root, what="task store directory")  # never through a link
        for path in (json_path, npz_path):
            if entry_kind(path) == "a directory":
                try:
                    os.rmdir(path)  # an empty directory in the way goes; anything else stays
                except OSError:
                    raise UnsafeFileError(path, "is a directory (not empty); the task result "
                                                "cannot be stored there") from None
        if arrays:
            buf = io.BytesIO()
            np.savez(buf, allow_pickle=False, **arrays)
            data = buf.getvalue()
            record["arrays"] = {"file": npz_path.name, "bytes": len(data),
                                "sha256": _sha256(data), "names": sorted(arrays)}
            atomic_write_bytes(npz_path, data)
        else:
            remove_entry(npz_path)
        record["sha256"] = _body_checksum(record)
        text = json.dumps(record, separators=(",", ":"), ensure_ascii=True, allow_nan=False)
        atomic_write_bytes(json_path, (text + "\n").encode())
        for path in self.checkpoints(key):  # the task is complete: its checkpoints go
            if entry_kind(path) != "a directory":
                remove_entry(path)

    def load(self, key: TaskKey, *, with_notes: bool = False) -> Any:
        """The stored result of ``key``, after every check of the module docstring (with
        ``with_notes``: ``(result, notes)``, the notes given to :meth:`save` or ``{}``).

        Raises
        ------
        FileNotFoundError
            Nothing is stored for ``key``.
        StoredTaskRejected
            Something is stored but fails a check (the reason says which).
        """
        if not isinstance(key, TaskKey):
            raise TypeError(f"key must be a TaskKey (see task_key), got {type(key).__name__}")
        json_path, npz_path = self._paths(key)
        root_kind = entry_kind(self.root)
        if root_kind is None:
            raise FileNotFoundError(f"no task store at {self.root}")
        if root_kind != "a directory":
            raise StoredTaskRejected(self.root, f"the task store directory is {root_kind}, "
                                     "not a directory (not followed)")
        try:
            raw = read_regular_file(json_path, RECORD_MAX_BYTES, what="task record")
        except FileNotFoundError:
            raise
        except UnsafeFileError as exc:
            raise StoredTaskRejected(json_path, exc.reason) from None
        except OSError as exc:
            raise StoredTaskRejected(json_path, f"unreadable ({exc.strerror or exc})") from None
        try:
            record = json.loads(raw.decode("utf-8"), parse_constant=_no_constants)
        except (UnicodeDecodeError, ValueError, RecursionError):
            raise StoredTaskRejected(json_path, "not a valid JSON task record "
                                     f"({len(raw)} bytes; truncated or foreign)") from None
        if not (isinstance(record, dict) and record.get("format") == FORMAT):
            raise StoredTaskRejected(json_path, "not a task record of this toolkit")
        if record.get("format_version") != FORMAT_VERSION:
            raise StoredTaskRejected(json_path, f"record format version "
                                     f"{record.get('format_version')!r}, expected "
                                     f"{FORMAT_VERSION}")
        try:
            ok = record.get("sha256") == _body_checksum(record)
        except ValueError:
            ok = False
        if not ok:
            raise StoredTaskRejected(json_path, "checksum mismatch (the file was altered or "
                                     "corrupted)")
        stored = dict(record.get("key") or {})
        version = stored.pop("code_version", None)
        if stored != key.record():
            raise StoredTaskRejected(json_path, f"holds the result of another task "
                                     f"({_canonical(stored)[:200]})")
        if version != self.code_version:
            raise StoredTaskRejected(json_path, f"computed by code version {version}, the "
                                     f"current one is {self.code_version}")
        arrays = self._load_arrays(npz_path, record.get("arrays"))
        try:
            value = decode(record.get("result"), arrays)
        except (ValueError, TypeError, RecursionError) as exc:
            raise StoredTaskRejected(json_path, f"malformed result ({exc})") from None
        if not with_notes:
            return value
        notes = record.get("notes") or {}
        return value, (notes if isinstance(notes, dict) else {})

    def _load_arrays(self, path: Path, meta) -> dict[str, np.ndarray]:
        if meta is None:
            return {}
        want = meta.get("bytes") if isinstance(meta, dict) else None
        if isinstance(want, bool) or not isinstance(want, int) or not 0 <= want <= \
                ARRAYS_MAX_BYTES:
            raise StoredTaskRejected(path, f"recorded array file size {want!r} is not an "
                                     f"integer in [0, {ARRAYS_MAX_BYTES}]")
        try:
            data = read_regular_file(path, want, what="array file")
        except UnsafeFileError as exc:
            raise StoredTaskRejected(path, f"{exc.reason} (the record says {want} bytes)") \
                from None
        except OSError as exc:
            raise StoredTaskRejected(path, f"array file missing or unreadable "
                                     f"({exc.strerror or exc})") from None
        if len(data) != meta.get("bytes") or _sha256(data) != meta.get("sha256"):
            raise StoredTaskRejected(path, f"array file checksum mismatch ({len(data)} bytes, "
                                     f"{meta.get('bytes')} recorded): altered, truncated or "
                                     "swapped")
        try:
            with np.load(io.BytesIO(data), allow_pickle=False) as z:
                arrays = {name: z[name] for name in z.files}
        except Exception as exc:  # noqa: BLE001 - checksummed, so only a foreign file lands here
            raise StoredTaskRejected(path, f"unreadable array file ({exc})") from None
        if sorted(arrays) != meta.get("names"):
            raise StoredTaskRejected(path, "array file does not hold the recorded arrays")
        return arrays

    def keys(self) -> list[str]:
        """Digests of the stored task records, sorted (nothing when the root is not a real
        directory)."""
        if entry_kind(self.root) != "a directory":
            return []
        return sorted(p.stem for p in self.root.glob("*.json"))

    def clear(self) -> None:
        """Delete every stored task (records, arrays, checkpoints of partial tasks and leftover
        temporary files): entries of the root directory only, links removed and never
        followed, directories kept. Nothing is deleted when the root is not a real directory
        (e.g. a link)."""
        if entry_kind(self.root) != "a directory":
            return
        for pattern in ("*.json", "*.npz", "*.ckpt"):
            for p in self.root.glob(pattern):
                if entry_kind(p) != "a directory":
                    remove_entry(p)
        remove_temporaries(self.root)
