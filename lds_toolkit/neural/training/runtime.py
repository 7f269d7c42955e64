"""Where and how training and evaluation run: the device, torch's intra-op thread count and
the arithmetic precision.

:func:`resolve_device` turns a device setting (``"auto"``, ``"cpu"``, ``"cuda:1"``, ...) into
a :class:`torch.device`, refusing CUDA where there is none; :func:`torch_threads` sets the
thread count for the duration of a ``with`` block and restores it afterwards;
:func:`precision` computes a block in float32, TF32 or bfloat16 (see :data:`PRECISIONS`),
again restoring every setting it changes on exit.
"""

from __future__ import annotations

import contextlib

import torch

#: Device types training and evaluation accept (when the machine has them).
DEVICE_TYPES = ("cpu", "cuda", "mps")
#: Arithmetic of training and evaluation (:func:`precision`).
PRECISIONS = ("fp32", "tf32", "bf16")


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


def check_precision(value, name: str = "precision") -> str:
    """``value`` if it is one of :data:`PRECISIONS`, else ``ValueError`` naming ``name``."""
    if value not in PRECISIONS:
        raise ValueError(f"{name} must be one of {PRECISIONS}, got {value!r}")
    return value


@contextlib.contextmanager
def precision(kind: str, device: str | torch.device):
    """Compute the block in the arithmetic ``kind`` on ``device``; parameters stay as they are.

    * ``"fp32"``: nothing changes (float32 models compute in float32).
    * ``"tf32"``: on CUDA, float32 matrix products on TF32 tensor cores
      (``torch.set_float32_matmul_precision("high")``, the previous setting restored on
      exit). Elsewhere (CPU, MPS) there are no TF32 units: the block computes in float32,
      exactly as ``"fp32"``.
    * ``"bf16"``: ``torch.autocast(device.type, dtype=torch.bfloat16)`` on the device (CPU
      or CUDA): autocast's list of operations (matrix products, linear layers) run in
      bfloat16 while the parameters, their gradients and the optimizer state stay float32
      ("master weights"); the layers keep what needs float32 (kernels, FFTs, softmax
      statistics) in float32 themselves.

    A library changes no global state: the only process-wide setting touched (TF32's
    matmul precision) is restored on exit, also after an exception.
    """
    check_precision(kind)
    dev = torch.device(device)
    if kind == "bf16":
        with torch.autocast(dev.type, dtype=torch.bfloat16):
            yield
        return
    if kind == "tf32" and dev.type == "cuda":
        old = torch.get_float32_matmul_precision()
        torch.set_float32_matmul_precision("high")
        try:
            yield
        finally:
            torch.set_float32_matmul_precision(old)
        return
    yield
