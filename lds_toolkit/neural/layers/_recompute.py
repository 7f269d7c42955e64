"""Activation recomputation for the long-sequence paths (S4-DPLR's kernel, STU's exact form
and Focus): the mechanics the layers call. The user's switch, :func:`set_recompute`, is in
:mod:`lds_toolkit.neural.training.recompute`.

Training keeps, for the backward pass, what each operation of the forward pass needs. On long
sequences three paths keep far more than attention does: the DPLR kernel's Cauchy sums (an
(H, L/2, N) complex tensor per intermediate), the exact STU's per-frequency transfer
matrices (an (L, d, d) tensor each) and Focus's filtered sequence, chunked attention and
gates (a dozen (B, L, d) tensors). With recomputation on
(:func:`~lds_toolkit.neural.training.recompute.set_recompute`) they run
under ``torch.utils.checkpoint`` (non-reentrant): the forward pass keeps only the inputs of
each checkpointed piece, and the backward pass computes the piece again before
differentiating it. The spectral pieces (DPLR, exact STU) are split into blocks of
frequencies, each checkpointed alone, so that the backward pass holds one block's
intermediates at a time (:func:`blockwise`); Focus treats the rows of a batch independently,
so it runs on blocks of rows, each checkpointed (:func:`rowwise`).

The numbers are those of the plain forward pass: the same operations run again on the same
inputs (dropout inside a piece draws the same mask: checkpoint restores the RNG state), and
outputs and gradients equal those without recomputation to round-off
(``tests/neural/test_recompute.py``); the price is one more forward pass of each piece.
Without gradients (evaluation, ``torch.no_grad``) nothing is checkpointed.

Which layers: every module with a ``recompute`` attribute (:class:`~lds_toolkit.neural.Focus`,
:class:`~lds_toolkit.neural.STU` in its exact form, the DPLR SSM of
``S4(mode="dplr")`` / ``S4Plus(mode="dplr")`` with the bilinear discretisation).
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import nn
from torch.utils.checkpoint import checkpoint

#: Blocks a checkpointed dimension is cut into (frequencies of the spectral paths, rows of
#: Focus's batch): the backward pass holds one block's intermediates at a time.
BLOCKS = 16


def active(module: nn.Module) -> bool:
    """Whether ``module`` recomputes now: switched on, and gradients are being recorded."""
    return bool(getattr(module, "recompute", False)) and torch.is_grad_enabled()


def checkpointed(fn: Callable, *args):
    """``fn(*args)``, its intermediates recomputed in the backward pass (non-reentrant)."""
    return checkpoint(fn, *args, use_reentrant=False)


def blockwise(fn: Callable, n: int, dim: int, *args, blocks: int = BLOCKS) -> torch.Tensor:
    """``fn(start, stop, *args)`` over ``blocks`` blocks ``[start, stop)`` of ``range(n)``
    (fewer when ``n`` is smaller), concatenated along ``dim``, each block checkpointed."""
    size = -(-n // max(1, min(blocks, n)))
    parts = [checkpointed(fn, start, min(start + size, n), *args)
             for start in range(0, n, size)]
    return parts[0] if len(parts) == 1 else torch.cat(parts, dim=dim)


def rowwise(fn: Callable, x: torch.Tensor, blocks: int = BLOCKS // 2) -> torch.Tensor:
    """``fn(x)`` for a ``fn`` that treats the rows of ``x`` (its first axis) independently,
    computed on ``blocks`` blocks of rows, each checkpointed."""
    return blockwise(lambda start, stop, t: fn(t[start:stop]), x.shape[0], 0, x,
                     blocks=blocks)
