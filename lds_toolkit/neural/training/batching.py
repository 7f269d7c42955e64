"""From a task to the batches the training loop and the evaluation feed a model.

:func:`as_tensors` turns the arrays of a :class:`~lds_toolkit.neural.tasks.SequenceTask` into
tensors (in the dtype of the model's parameters, :func:`_param_dtype`). The batch order is a
function of (seed, step) alone: :func:`batch_indices` cuts epoch e's permutation
``default_rng([seed, e])`` into consecutive batches; :func:`bucketed_batch_indices` first
sorts pools of batches by :func:`scored_lengths` (1 + the last scored position of each
sequence, also where cropping cuts a batch), so that a batch holds sequences of similar
length.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from ..tasks import SequenceTask


def _param_dtype(model: nn.Module) -> torch.dtype:
    for p in model.parameters():
        if p.is_floating_point():
            return p.dtype
    return torch.get_default_dtype()


@dataclass
class _Tensors:
    inputs: torch.Tensor
    targets: torch.Tensor
    mask: torch.Tensor
    eval_mask: torch.Tensor


def as_tensors(data: SequenceTask, *, dtype: torch.dtype = torch.float32,
               device: str | torch.device = "cpu") -> _Tensors:
    """The arrays of a task as tensors (tokens and labels int64, reals in ``dtype``)."""
    if not isinstance(data, SequenceTask):
        raise TypeError(f"data must be a SequenceTask, got {type(data).__name__}")
    if data.vocab_size is not None:
        inputs = torch.as_tensor(data.inputs, dtype=torch.int64)
    else:
        inputs = torch.as_tensor(data.inputs, dtype=dtype)
    if data.kind == "classification":
        targets = torch.as_tensor(data.targets, dtype=torch.int64)
    else:
        targets = torch.as_tensor(data.targets, dtype=dtype)
    return _Tensors(inputs.to(device), targets.to(device),
                    torch.as_tensor(data.mask).to(device),
                    torch.as_tensor(data.eval_mask).to(device))


def batch_indices(n: int, batch_size: int, seed: int, step: int) -> np.ndarray:
    """Indices of the batch at ``step``: batch ``step % E`` of epoch ``step // E``'s permutation
    ``default_rng([seed, epoch]).permutation(n)``, E = ceil(n / batch_size)."""
    per_epoch = -(-n // batch_size)
    epoch, j = divmod(step, per_epoch)
    perm = np.random.default_rng([seed, epoch]).permutation(n)
    return perm[j * batch_size:(j + 1) * batch_size]


def scored_lengths(data: SequenceTask) -> np.ndarray:
    """Per sequence, 1 + the last position scored by ``mask`` or ``eval_mask`` (0: none)."""
    scored = np.asarray(data.mask) | np.asarray(data.eval_mask)
    last = scored.shape[1] - np.argmax(scored[:, ::-1], axis=1)
    return np.where(scored.any(axis=1), last, 0)


def bucketed_batch_indices(lengths: np.ndarray, batch_size: int, bucket: int, seed: int,
                           step: int) -> np.ndarray:
    """Indices of the batch at ``step`` when batches are bucketed by length.

    Epoch ``e`` (E = ceil(n / batch_size) batches): the permutation
    ``default_rng([seed, e]).permutation(n)`` is cut into pools of ``bucket * batch_size``
    sequences; each pool is sorted by ``lengths`` (stable) and cut into batches; the epoch's
    batches are then put in the order ``default_rng([seed, e, 1]).permutation(E)``. Every
    sequence appears once per epoch.
    """
    n = len(lengths)
    per_epoch = -(-n // batch_size)
    epoch, j = divmod(step, per_epoch)
    perm = np.random.default_rng([seed, epoch]).permutation(n)
    pool = bucket * batch_size
    batches = []
    for start in range(0, n, pool):
        part = perm[start:start + pool]
        part = part[np.argsort(lengths[part], kind="stable")]
        batches.extend(part[i:i + batch_size] for i in range(0, len(part), batch_size))
    order = np.random.default_rng([seed, epoch, 1]).permutation(len(batches))
    return batches[order[j]]
