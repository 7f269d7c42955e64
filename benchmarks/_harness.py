"""Timing and peak-memory measurement shared by the benchmark scripts.

``measure(fn)`` reports

* ``seconds``: the best wall time over ``repeat`` calls, after ``warmup`` calls;
* ``peak_mb``: the peak *extra* resident memory of one call: the kernel's RSS high-water mark
  (reset through ``/proc/self/clear_refs`` just before the call) minus the RSS at that moment;
  where that is unavailable, RSS sampled every 0.5 ms by a background thread.

RSS sees every allocation (numpy, numba's runtime, torch's CPU allocator), unlike
tracemalloc, which misses numba and torch. Two glibc settings are switched at run time with
``mallopt`` because each pass needs the opposite one:

* memory pass: allocations >= 64 KiB go straight to ``mmap`` and back to the OS when freed,
  and freed heap is trimmed before the call, so arrays reused from an earlier call still
  show up in RSS;
* timing pass: the mmap threshold at its 32 MiB maximum and no trimming, so repeated
  calls are not dominated by page faults on freshly mapped memory (on this VM a fresh
  33 MB tensor costs ~8x the arithmetic on it).

The code under test and its baseline are measured the same way in the same process.
"""

from __future__ import annotations

import ctypes
import gc
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3
try:
    _LIBC = ctypes.CDLL("libc.so.6")
except OSError:  # not glibc: measurements still work, just without the allocator settings
    _LIBC = None


def _malloc_mode(memory_pass: bool) -> None:
    if _LIBC is None:
        return
    if memory_pass:
        _LIBC.mallopt(_M_MMAP_THRESHOLD, 64 * 1024)
        _LIBC.mallopt(_M_TRIM_THRESHOLD, 128 * 1024)
        gc.collect()
        _LIBC.malloc_trim(0)
    else:
        _LIBC.mallopt(_M_MMAP_THRESHOLD, 32 * 1024 * 1024)
        _LIBC.mallopt(_M_TRIM_THRESHOLD, 2**30)


@dataclass
class Measurement:
    seconds: float
    peak_mb: float


def status_mb(field: str) -> float:
    """``VmRSS`` / ``VmHWM`` of this process in MiB, from /proc/self/status (Linux)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    raise RuntimeError(f"{field} not in /proc/self/status")


def reset_peak_rss() -> bool:
    """Reset the kernel's RSS high-water mark ``VmHWM`` to the current RSS (Linux >= 4.0)."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def peak_extra_rss_mb(fn: Callable[[], object]) -> float:
    """Peak RSS above the pre-call level during one call of ``fn``, in MiB.

    Exact on Linux (high-water mark ``VmHWM`` reset through ``/proc/self/clear_refs``);
    elsewhere RSS is sampled every 0.5 ms by a background thread.
    """
    _malloc_mode(memory_pass=True)
    try:
        if reset_peak_rss():
            base = status_mb("VmRSS")
            fn()
            return status_mb("VmHWM") - base
        return _sampled_peak_mb(fn)
    finally:
        _malloc_mode(memory_pass=False)


def _sampled_peak_mb(fn: Callable[[], object]) -> float:
    import psutil  # only here: the GPU machines may lack it, and need only the kernel's peak

    proc = psutil.Process(os.getpid())
    base = proc.memory_info().rss
    peak = base
    done = threading.Event()

    def sample():
        nonlocal peak
        while not done.is_set():
            peak = max(peak, proc.memory_info().rss)
            time.sleep(0.0005)

    th = threading.Thread(target=sample, daemon=True)
    th.start()
    try:
        fn()
    finally:
        done.set()
        th.join()
    peak = max(peak, proc.memory_info().rss)
    return (peak - base) / 2**20


def measure(fn: Callable[[], object], *, repeat: int = 3, warmup: int = 1,
            memory: bool = True) -> Measurement:
    """Best-of-``repeat`` wall time and (optionally) the peak extra RSS of one call."""
    _malloc_mode(memory_pass=False)
    for _ in range(warmup):
        fn()
    best = float("inf")
    for _ in range(repeat):
        gc.collect()
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    peak = peak_extra_rss_mb(fn) if memory else float("nan")
    return Measurement(best, peak)


def table(rows: list[tuple], headers: tuple[str, ...]) -> str:
    """A plain-text table (right-aligned numbers)."""
    cells = [[str(h) for h in headers]] + [[_fmt(c) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    lines = ["  ".join(c.rjust(w) for c, w in zip(r, widths)) for r in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def _fmt(c) -> str:
    if isinstance(c, float):
        return f"{c:.4g}"
    return str(c)
