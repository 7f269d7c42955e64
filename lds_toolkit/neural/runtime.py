"""Where training and evaluation run: the device and torch's intra-op thread count.

:func:`resolve_device` turns a device setting (``"auto"``, ``"cpu"``, ``"cuda:1"``, ...) into
a :class:`torch.device`, refusing CUDA where there is none; :func:`torch_threads` sets the
thread count for the duration of a ``with`` block and restores it afterwards.
"""

from __future__ import annotations

import contextlib

import torch

#: Device types training and evaluation accept (when the machine has them).
DEVICE_TYPES = ("cpu", "cuda", "mps")


def _available(kind: str) -> bool:
    if kind == "cpu":
        return True
    if kind == "cuda":
        return torch.cuda.is_available()
    mps = getattr(torch.backends, "mps", None)
    return bool(mps is not None and mps.is_available())


def resolve_device(device: str | torch.device) -> torch.device:
    """``"auto"`` -> CUDA when available, else CPU; ``"cpu"``, ``"cuda"``, ``"cuda:N"``,
    ``"mps"`` (or a :class:`torch.device` of those types) as :class:`torch.device`.

    Raises
    ------
    TypeError
        ``device`` is neither a string nor a ``torch.device``.
    ValueError
        An unknown device name, a device type this machine lacks, or a CUDA index beyond
        the devices present, naming what was asked and what is available.
    """
    if not isinstance(device, str | torch.device):
        raise TypeError(f"device must be a string such as 'auto', 'cpu' or 'cuda:0', or a "
                        f"torch.device, got {type(device).__name__} {device!r}")
    if str(device) == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    here = ", ".join(repr(k) for k in ("auto", *DEVICE_TYPES) if k == "auto" or _available(k))
    try:
        dev = torch.device(device)
    except (RuntimeError, ValueError, TypeError):
        index = " (optionally with an index, 'cuda:1')" if _available("cuda") else ""
        raise ValueError(f"device must be one of {here}{index}, got {str(device)!r}") from None
    if dev.type not in DEVICE_TYPES:
        raise ValueError(f"device must be one of {here}, got {str(device)!r} (type "
                         f"{dev.type!r} is not used for training here)")
    if not _available(dev.type):
        what = "CUDA" if dev.type == "cuda" else dev.type.upper()
        raise ValueError(f"device={str(device)!r} asked for {what}, which is not available "
                         f"here; available: {here}")
    if dev.type == "cuda" and dev.index is not None and dev.index >= torch.cuda.device_count():
        raise ValueError(f"device={str(device)!r}: this machine has "
                         f"{torch.cuda.device_count()} CUDA device(s), indices from 0")
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
