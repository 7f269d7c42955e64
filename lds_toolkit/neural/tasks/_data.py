"""The container every task generator returns: numpy arrays, no torch.

A task is a set of sequences with one target per position and masks saying which positions
count. Token tasks (induction heads, associative recall, ListOps) hold integer inputs and class
labels; real-valued tasks (cloze, sine fitting, LDS streams) hold float inputs and targets.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from ..._atomic import atomic_write
from ..._jsonable import to_jsonable
from ..._repr import compact_repr
from ._task_checks import check_save_path, check_subset_index, check_task_fields, read_task_file

#: Label written where a token task has no target (ignored by the loss, as torch's default).
IGNORE_INDEX = -100


@dataclass(frozen=True, eq=False, repr=False)
class SequenceTask:
    """Sequences, per-position targets and the masks of the positions that count.

    Attributes
    ----------
    inputs : ndarray
        ``(N, L)`` int64 token ids in ``[0, vocab_size)``, or ``(N, L, d_in)`` float64.
    targets : ndarray
        ``(N, L)`` int64 class labels in ``[0, n_classes)`` (``IGNORE_INDEX`` where unmasked),
        or ``(N, L, d_out)`` float64. The target at position t is what the model's output at
        position t must predict; whether it may use inputs after t is the task's business
        (causal tasks never need them).
    mask : ndarray of bool, shape (N, L)
        Positions that enter the training loss.
    eval_mask : ndarray of bool, shape (N, L)
        Positions scored by the evaluation metrics (accuracy, loss); often a subset of ``mask``
        (e.g. associative recall trains on every value but is scored on the query only).
    vocab_size : int or None
        Number of input token ids (token tasks), else None.
    n_classes : int or None
        Number of target classes (classification), None for regression.
    name : str
        Task name.
    info : dict
        Task-specific arrays and parameters (answers, positions, raw streams, ...).
    """

    inputs: np.ndarray
    targets: np.ndarray
    mask: np.ndarray
    eval_mask: np.ndarray
    vocab_size: int | None = None
    n_classes: int | None = None
    name: str = ""
    info: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self):
        for key in ("inputs", "targets", "mask", "eval_mask"):
            value = getattr(self, key)
            if not isinstance(value, np.ndarray):
                try:
                    value = np.asarray(value)
                except (ValueError, TypeError) as exc:
                    raise TypeError(f"SequenceTask.{key} must be an array, got "
                                    f"{type(getattr(self, key)).__name__} ({exc})") from None
                object.__setattr__(self, key, value)
            if value.dtype == object or not (np.issubdtype(value.dtype, np.number)
                                             or value.dtype == np.bool_):
                raise TypeError(f"SequenceTask.{key} must be a numeric array, got dtype "
                                f"{value.dtype}")
        if self.inputs.ndim < 2:
            raise ValueError(f"SequenceTask.inputs must have shape (N, L) of tokens or (N, L, "
                             f"d_in), got shape {self.inputs.shape}")
        for key in ("vocab_size", "n_classes"):
            v = getattr(self, key)
            if v is not None and (isinstance(v, bool) or not isinstance(v, int | np.integer)
                                  or v < 1):
                raise ValueError(f"SequenceTask.{key} must be None or an integer >= 1, got "
                                 f"{v!r}")
        n, length = self.inputs.shape[:2]
        for key in ("targets", "mask", "eval_mask"):
            arr = getattr(self, key)
            if arr.shape[:2] != (n, length):
                raise ValueError(f"SequenceTask.{key} must start with shape {(n, length)} "
                                 f"like inputs, got {arr.shape}")
        if self.mask.dtype != np.bool_ or self.eval_mask.dtype != np.bool_:
            raise TypeError("SequenceTask.mask and eval_mask must be boolean arrays")
        if self.vocab_size is not None and np.issubdtype(self.inputs.dtype, np.integer) \
                and self.inputs.size:
            lo, hi = int(self.inputs.min()), int(self.inputs.max())
            if lo < 0 or hi >= self.vocab_size:
                raise ValueError(f"SequenceTask.inputs must hold token ids in [0, vocab_size = "
                                 f"{self.vocab_size}), got ids from {lo} to {hi}")
        if self.n_classes is not None:
            self._check_class_targets()
        check_task_fields(self)  # name, token ids, finite values (_task_checks.py)

    def _check_class_targets(self) -> None:
        """Classification targets: integers in ``[0, n_classes)`` wherever a mask scores them
        (a label >= n_classes would fail deep inside the loss)."""
        t = self.targets
        if t.ndim != 2 or not np.issubdtype(t.dtype, np.integer):
            raise ValueError(f"SequenceTask.targets of a classification task (n_classes="
                             f"{self.n_classes}) must be (N, L) integer labels, got shape "
                             f"{t.shape} and dtype {t.dtype}")
        scored = self.mask | self.eval_mask
        bad = scored & ((t < 0) | (t >= self.n_classes))
        if bad.any():
            i, j = (int(x) for x in np.argwhere(bad)[0])
            raise ValueError(f"SequenceTask.targets must be class labels in [0, n_classes = "
                             f"{self.n_classes}) where mask or eval_mask is set; sequence {i}, "
                             f"position {j} holds {int(t[i, j])}")

    @property
    def kind(self) -> str:
        """``"classification"`` or ``"regression"``."""
        return "classification" if self.n_classes is not None else "regression"

    @property
    def length(self) -> int:
        """Sequence length L."""
        return int(self.inputs.shape[1])

    def __len__(self) -> int:
        return int(self.inputs.shape[0])

    def __repr__(self) -> str:
        return compact_repr(self, name=self.name, inputs=self.inputs, targets=self.targets,
                            kind=self.kind, vocab_size=self.vocab_size,
                            n_classes=self.n_classes, info=sorted(self.info))

    def subset(self, index) -> SequenceTask:
        """The sequences selected by ``index`` (a slice, an index array or a boolean mask).

        Per-sequence entries of ``info`` (arrays whose first axis has length N) are selected
        too; everything else is kept as is.
        """
        n = len(self)
        index = check_subset_index(index, n)
        info = {k: (v[index] if isinstance(v, np.ndarray) and v.ndim >= 1 and v.shape[0] == n
                    else v) for k, v in self.info.items()}
        return replace(self, inputs=self.inputs[index], targets=self.targets[index],
                       mask=self.mask[index], eval_mask=self.eval_mask[index], info=info)

    def split(self, train_fraction: float) -> tuple[SequenceTask, SequenceTask]:
        """First ``round(train_fraction * N)`` sequences and the rest (generators already
        draw i.i.d. sequences, so no shuffling is needed)."""
        if not 0.0 < train_fraction < 1.0:
            raise ValueError(f"train_fraction must lie in (0, 1), got {train_fraction!r}")
        cut = int(round(train_fraction * len(self)))
        if cut == 0 or cut == len(self):
            raise ValueError(f"train_fraction={train_fraction} leaves an empty split of "
                             f"{len(self)} sequences")
        return self.subset(slice(0, cut)), self.subset(slice(cut, None))

    def save(self, path: str | Path) -> Path:
        """Write the task to ``path`` (an ``.npz`` archive, written atomically to exactly that
        name): the arrays, the array entries of ``info`` and its JSON-serialisable scalars.
        Generators never write; this is the "when asked". The directory of ``path`` must
        exist (``FileNotFoundError`` otherwise: nothing is created elsewhere), and ``path``
        must not be a directory (``IsADirectoryError``).
        """
        path = check_save_path(path)
        arrays = {"inputs": self.inputs, "targets": self.targets, "mask": self.mask,
                  "eval_mask": self.eval_mask}
        meta = {"vocab_size": self.vocab_size, "n_classes": self.n_classes, "name": self.name,
                "info": {}}
        for k, v in self.info.items():
            if isinstance(v, np.ndarray):
                arrays[f"info/{k}"] = v
            else:
                meta["info"][k] = to_jsonable(v)
        arrays["meta"] = np.array(json.dumps(meta))
        atomic_write(path, lambda fh: np.savez_compressed(fh, allow_pickle=False, **arrays))
        return path

    @classmethod
    def load(cls, path: str | Path) -> SequenceTask:
        """Read a task written by :meth:`save`. ``FileNotFoundError`` when nothing is at
        ``path``; ``ValueError`` naming ``path`` for anything that is not such a file (a FIFO
        or device, never waited on; a directory; a file over half the memory available; a
        truncated or foreign archive; object arrays, never unpickled; missing entries). See
        :mod:`~lds_toolkit.neural.tasks._task_checks`."""
        read = read_task_file(path)
        meta, a = read["meta"], read["arrays"]
        return cls(a["inputs"], a["targets"], a["mask"], a["eval_mask"],
                   vocab_size=meta["vocab_size"], n_classes=meta["n_classes"],
                   name=meta["name"], info=read["info"])
