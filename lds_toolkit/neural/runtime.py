"""Where training and evaluation run: the device and torch's intra-op thread count.

:func:`resolve_device` turns a device setting (``"auto"``, ``"cpu"``, ``"cuda:1"``, ...) into
a :class:`torch.device`, refusing CUDA where there is none; :func:`torch_threads` sets the
thread count for the duration of a ``with`` block and restores it afterwards.
"""

from __future__ import annotations

import contextlib

import torch


def resolve_device(device: str | torch.device) -> torch.device:
    """``"auto"`` -> CUDA when available, else CPU; anything else as torch.device."""
    if str(device) == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    dev = torch.device(device)
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"device={str(device)!r} asked for CUDA, which is not available here")
    return dev


@contextlib.contextmanager
def torch_threads(n: int | None):
    """Temporarily set torch's intra-op thread count (no-op for None)."""
    if n is None:
        yield
        return
    old = torch.get_num_threads()
    torch.set_num_threads(int(n))
    try:
        yield
    finally:
        torch.set_num_threads(old)
