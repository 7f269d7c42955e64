"""The switch of activation recomputation: :func:`set_recompute`.

With recomputation on, the long-sequence paths of Focus, STU (exact form) and the DPLR SSM of
``S4(mode="dplr")`` / ``S4Plus(mode="dplr")`` keep only the inputs of each checkpointed piece
for the backward pass and compute the piece again there: the same numbers, less memory, one
more forward pass of each piece. How the layers do it (and why these three) is
:mod:`lds_toolkit.neural.layers._recompute`; its helpers are re-exported here, where they
were importable before the layers and the loop moved into rooms.
"""

from __future__ import annotations

from torch import nn

from ..layers._recompute import BLOCKS, active, blockwise, checkpointed, rowwise

__all__ = ["set_recompute", "active", "checkpointed", "blockwise", "rowwise", "BLOCKS"]


def set_recompute(model: nn.Module, enabled: bool = True) -> int:
    """Switch activation recomputation on (or off) in every layer of ``model`` that has it.

    Returns the number of modules switched. ``ValueError`` when ``model`` has none (naming
    the layers that do); ``TypeError`` for a non-module or a non-boolean ``enabled``.
    """
    if not isinstance(model, nn.Module):
        raise TypeError(f"set_recompute: model must be a torch.nn.Module, got "
                        f"{type(model).__name__}")
    if not isinstance(enabled, bool):
        raise TypeError(f"set_recompute: enabled must be True or False, got {enabled!r}")
    found = [m for m in model.modules() if hasattr(type(m), "recompute")]
    if not found:
        raise ValueError(f"set_recompute: {type(model).__name__} has no layer with activation "
                         "recomputation (Focus, STU, S4/S4Plus with mode='dplr')")
    for m in found:
        m.recompute = enabled
    return len(found)
