"""Argument validation shared by every module.

Each checker raises ``ValueError``/``TypeError`` whose message names the argument,
what was expected, and what was received, so errors surface at the API boundary
rather than deep inside a numba core.
"""

from __future__ import annotations

import os
from collections.abc import Hashable
from numbers import Integral, Real

import numpy as np


def _describe(value) -> str:
    if isinstance(value, np.ndarray):
        return f"array of shape {value.shape} and dtype {value.dtype}"
    return f"{type(value).__name__} {value!r}"


def as_float_array(name: str, value, *, ndim: int | None = None, min_ndim: int | None = None,
                   allow_complex: bool = False) -> np.ndarray:
    """Convert ``value`` to a float64 (or complex128) array and check rank and finiteness."""
    if value is None:
        raise TypeError(f"{name} must be an array, got None")
    try:
        arr = np.asarray(value)
    except Exception as exc:  # pragma: no cover - exotic inputs
        raise TypeError(f"{name} must be array-like, got {_describe(value)}") from exc
    if arr.dtype == object or not (np.issubdtype(arr.dtype, np.number)
                                   or arr.dtype == np.bool_):
        raise TypeError(f"{name} must be numeric, got {_describe(value)}")
    if np.iscomplexobj(arr) and not allow_complex:
        if np.any(arr.imag != 0):
            raise TypeError(f"{name} must be real, got complex entries")
        arr = arr.real
    arr = arr.astype(np.complex128 if np.iscomplexobj(arr) else np.float64, copy=False)
    if ndim is not None and arr.ndim != ndim:
        raise ValueError(f"{name} must be {ndim}-dimensional, got shape {arr.shape}")
    if min_ndim is not None and arr.ndim < min_ndim:
        raise ValueError(f"{name} must have at least {min_ndim} dimensions, got shape {arr.shape}")
    check_finite(name, arr)
    return arr


def check_finite(name: str, arr: np.ndarray) -> None:
    """Raise ``ValueError`` naming the first non-finite entry of ``arr``."""
    if arr.size and not np.all(np.isfinite(arr)):
        bad = np.argwhere(~np.isfinite(arr))[0]
        idx = tuple(int(i) for i in bad)
        raise ValueError(f"{name} must contain only finite values; entry {idx} is {arr[idx]}")


def as_matrix(name: str, value, *, shape: tuple[int | None, int | None] | None = None,
              allow_complex: bool = False) -> np.ndarray:
    """A finite 2-D float matrix with at least one row and column, optionally of a given shape
    (``None`` = any size)."""
    arr = as_float_array(name, value, allow_complex=allow_complex)
    if arr.ndim == 0:
        arr = arr.reshape(1, 1)
    if arr.ndim != 2:
        raise ValueError(f"{name} must be a 2-D matrix, got shape {arr.shape}")
    if 0 in arr.shape:  # e.g. an n = 0 system: accepted, it would break far from here
        raise ValueError(f"{name} must have at least one row and one column, got shape "
                         f"{arr.shape}")
    if shape is not None:
        for axis, want in enumerate(shape):
            if want is not None and arr.shape[axis] != want:
                raise ValueError(
                    f"{name} must have shape {_shape_str(shape)}, got {arr.shape}"
                )
    return arr


def as_square(name: str, value, *, allow_complex: bool = False) -> np.ndarray:
    """A finite square matrix."""
    arr = as_matrix(name, value, allow_complex=allow_complex)
    if arr.shape[0] != arr.shape[1]:
        raise ValueError(f"{name} must be square, got shape {arr.shape}")
    return arr


def _shape_str(shape) -> str:
    return "(" + ", ".join("any" if s is None else str(s) for s in shape) + ")"


def check_int(name: str, value, low: int = 1, high: int | None = None) -> int:
    """An integer in ``[low, high]`` (no upper bound when ``high`` is None); booleans are
    refused."""
    want = f">= {low}" if high is None else f"in [{low}, {high}]"
    if isinstance(value, bool) or not isinstance(value, Integral | np.integer):
        raise TypeError(f"{name} must be an integer {want}, got {_describe(value)}")
    if value < low or (high is not None and value > high):
        raise ValueError(f"{name} must be an integer {want}, got {value}")
    return int(value)


def check_positive_int(name: str, value, *, minimum: int = 1) -> int:
    """An integer ``>= minimum`` (booleans are refused)."""
    return check_int(name, value, minimum)


def check_real(name: str, value, *, low: float | None = None, high: float | None = None,
               low_inclusive: bool = True, high_inclusive: bool = True) -> float:
    """A finite real number inside an optional interval."""
    if isinstance(value, bool) or not isinstance(value, Real | np.floating | np.integer):
        raise TypeError(f"{name} must be a real number, got {_describe(value)}")
    value = float(value)
    if not np.isfinite(value):
        raise ValueError(f"{name} must be finite, got {value}")
    lo_ok = low is None or (value >= low if low_inclusive else value > low)
    hi_ok = high is None or (value <= high if high_inclusive else value < high)
    if not (lo_ok and hi_ok):
        lb = "-inf" if low is None else f"{low:g}"
        hb = "inf" if high is None else f"{high:g}"
        lbr = "[" if low_inclusive and low is not None else "("
        hbr = "]" if high_inclusive and high is not None else ")"
        raise ValueError(f"{name} must lie in {lbr}{lb}, {hb}{hbr}, got {value:g}")
    return value


def check_bool(name: str, value) -> bool:
    """``value`` if it is ``True`` or ``False`` (numpy's ``bool_`` too); a truthy string such
    as ``"no"``, a number or ``None`` is a ``TypeError`` (``bool("no")`` is True)."""
    if isinstance(value, bool | np.bool_):
        return bool(value)
    raise TypeError(f"{name} must be True or False, got {_describe(value)}")


def check_choice(name: str, value, choices) -> str:
    """One of a fixed set of strings (an array, a list or another unhashable value is refused
    by name, not by numpy's "truth value of an array is ambiguous")."""
    if not isinstance(value, Hashable) or value not in choices:
        raise ValueError(f"{name} must be one of {sorted(choices)}, got {_describe(value)}"
                         if isinstance(value, np.ndarray) else
                         f"{name} must be one of {sorted(choices)}, got {value!r}")
    return value


def memory_bytes() -> int | None:
    """Physical memory of this machine in bytes (``None`` where the OS does not say)."""
    try:
        return int(os.sysconf("SC_PHYS_PAGES")) * int(os.sysconf("SC_PAGE_SIZE"))
    except (AttributeError, ValueError, OSError):  # pragma: no cover - non-POSIX
        return None


def available_memory_bytes() -> int | None:
    """Memory available to a new allocation now: ``MemAvailable`` of ``/proc/meminfo`` on
    Linux, else the physical memory (:func:`memory_bytes`), else ``None``."""
    try:
        with open("/proc/meminfo", "rb") as fh:
            for line in fh.read(1 << 16).decode("ascii", "replace").splitlines():
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return memory_bytes()


def _human(n_bytes: float) -> str:
    for unit in ("bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"):
        if n_bytes < 1024 or unit == "EiB":
            return f"{n_bytes:.3g} {unit}"
        n_bytes /= 1024
    return ""  # pragma: no cover


def check_fits_in_memory(name: str, value, n_bytes: float, what: str) -> None:
    """Refuse, before allocating, an argument whose result cannot fit in this machine's
    memory: ``ValueError`` "``name``=``value`` is too large: ``what`` need N GiB, more than
    this machine's M GiB of memory". (Passing this check does not promise the allocation
    succeeds; numpy then raises ``MemoryError``.)"""
    total = memory_bytes()
    if total is not None and n_bytes > total:
        raise ValueError(f"{name}={value} is too large: {what} need {_human(n_bytes)}, more "
                         f"than this machine's {_human(total)} of memory")


def check_finite_result(name: str, arr, cause: str) -> np.ndarray:
    """``arr`` if it is finite; else ``ValueError`` blaming ``cause`` (the argument that made
    the computation overflow) and naming the first bad entry of the result ``name``."""
    arr = np.asarray(arr)
    if arr.size and not np.all(np.isfinite(arr)):
        idx = tuple(int(i) for i in np.argwhere(~np.isfinite(arr))[0])
        raise ValueError(f"{cause}: {name} is not finite (entry {idx} is {arr[idx]})")
    return arr
