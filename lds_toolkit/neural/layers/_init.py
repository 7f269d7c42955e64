"""Reproducible parameter initialisation for the torch layers.

Layers take ``seed: int | torch.Generator | None``. With a seed the layer's parameters are drawn
from a private generator (the global torch RNG is left untouched); with ``None`` the global torch
RNG is used, as for any ``nn.Module``.

Deterministic initial values that need their numbers (HiPPO matrices, S4D's ``A``, STU's
filters, and the checks on them) are computed on the CPU and then placed with
:func:`on_default_device`, so a layer built inside ``with torch.device("meta"):`` (or any
default device) has every parameter and buffer there, as ``nn.Linear`` does.
"""

from __future__ import annotations

import contextlib
from numbers import Integral

import torch

Seed = int | torch.Generator | None


def seed_to_int(seed: Seed, owner: str) -> int | None:
    if seed is None:
        return None
    if isinstance(seed, torch.Generator):
        return int(torch.randint(0, 2**62, (1,), generator=seed).item())
    if isinstance(seed, bool) or not isinstance(seed, Integral):
        raise TypeError(
            f"{owner}: seed must be an int, a torch.Generator or None, got {type(seed).__name__}"
        )
    return int(seed)


@contextlib.contextmanager
def seeded(seed: Seed, owner: str):
    """Run the body (module construction) with the CPU RNG seeded, restoring it afterwards."""
    s = seed_to_int(seed, owner)
    if s is None:
        yield
        return
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(s)
        yield


def on_default_device(t: torch.Tensor) -> torch.Tensor:
    """``t`` moved to torch's current default device (``torch.device(...)`` context or
    ``torch.set_default_device``): a meta tensor there keeps the shape and dtype only."""
    return t.to(torch.get_default_device())
