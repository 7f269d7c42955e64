"""FLOP counting and device peaks shared by the benchmark scripts.

:func:`flop_counter` is torch's ``FlopCounterMode`` (matrix products, convolutions,
attention kernels, forward and backward) plus the real/complex FFTs it does not count
(``aten._fft_r2c``, ``_fft_c2r``, ``_fft_c2c``) at 2.5 N log2 N (real) and 5 N log2 N
(complex) per transform of length N. Elementwise operations are not counted: their cost is
memory traffic, not arithmetic.

:func:`bf16_gemm_peak` and :func:`copy_bandwidth` measure the two ceilings of a device in
the run that uses them: the best TFLOP/s of a bfloat16 matrix product (tensor cores on a
GPU) and the best GB/s of a tensor copy (bytes read plus written: HBM on a GPU).
:class:`OpCounter` counts the aten operations of a pass and the bytes they move.
"""

from __future__ import annotations

import math
import time

import torch
from torch.utils.flop_counter import FlopCounterMode


def _fft_count(shape, dim, n_signal: int, real: bool) -> int:
    """FLOPs of FFTs of length ``n_signal`` over ``dim`` of an array of ``shape``."""
    batch = math.prod(shape) // max(1, math.prod(shape[d] for d in dim))
    return int(batch * (2.5 if real else 5.0) * n_signal * math.log2(max(n_signal, 2)))


def _fft_mapping():
    """FlopCounterMode formulas (called with input shapes) for torch's FFT kernels."""
    aten = torch.ops.aten

    def r2c(x, dim, normalization, onesided, out_shape=None, **kw):
        return _fft_count(x, dim, math.prod(x[d] for d in dim), True)

    def c2r(x, dim, normalization, last_dim_size, out_shape=None, **kw):
        n = math.prod(x[d] for d in dim[:-1]) * last_dim_size
        return _fft_count(x, dim, n, True)

    def c2c(x, dim, normalization, forward, out_shape=None, **kw):
        return _fft_count(x, dim, math.prod(x[d] for d in dim), False)

    return {aten._fft_r2c: r2c, aten._fft_c2r: c2r, aten._fft_c2c: c2c}


def flop_counter() -> FlopCounterMode:
    """A ``FlopCounterMode`` that also counts FFTs (module docstring)."""
    return FlopCounterMode(display=False, custom_mapping=_fft_mapping())


def _tensor_bytes(t: torch.Tensor) -> int:
    """Bytes of the distinct elements of ``t`` (broadcast axes, stride 0, counted once)."""
    return math.prod(n for n, st in zip(t.shape, t.stride()) if st != 0) * t.element_size()


class OpCounter(torch.utils._python_dispatch.TorchDispatchMode):
    """Counts the aten operations a pass dispatches and the bytes they read and write: every
    operation that is not a view reads each tensor argument once and writes each result
    once (the traffic of eager execution, nothing kept in cache between operations)."""

    def __init__(self):
        super().__init__()
        self.count = 0
        self.bytes = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        self.count += 1
        if not func.is_view:
            leaves = torch.utils._pytree.tree_leaves((args, kwargs or {}, out))
            self.bytes += sum(_tensor_bytes(t) for t in leaves if isinstance(t, torch.Tensor))
        return out


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def _best_seconds(fn, device: torch.device, repeat: int) -> float:
    fn()
    _sync(device)
    best = math.inf
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        _sync(device)
        best = min(best, time.perf_counter() - t0)
    return best


def bf16_gemm_peak(device: torch.device, sizes=None, repeat: int = 10) -> float:
    """Best TFLOP/s of ``a @ b`` for square bfloat16 ``a``, ``b`` of each size (default
    4096, 8192 and 16384 on CUDA, 256 and 512 on the CPU)."""
    device = torch.device(device)
    if sizes is None:
        sizes = (4096, 8192, 16384) if device.type == "cuda" else (256, 512)
    best = 0.0
    for n in sizes:
        a = torch.randn(n, n, device=device, dtype=torch.bfloat16)
        b = torch.randn(n, n, device=device, dtype=torch.bfloat16)
        t = _best_seconds(lambda a=a, b=b: a @ b, device, repeat)
        best = max(best, 2 * n**3 / t / 1e12)
        del a, b
    return best


def copy_bandwidth(device: torch.device, numel: int | None = None, repeat: int = 10) -> float:
    """Best GB/s (bytes read + written) of ``dst.copy_(src)`` of ``numel`` float32 (default
    2^28, 1 GiB each way, on CUDA; 2^24 on the CPU)."""
    device = torch.device(device)
    if numel is None:
        numel = 2**28 if device.type == "cuda" else 2**24
    src = torch.randn(numel, device=device)
    dst = torch.empty_like(src)
    t = _best_seconds(lambda: dst.copy_(src), device, repeat)
    return 2 * 4 * numel / t / 1e9
