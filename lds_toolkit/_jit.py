"""numba, imported lazily and optional: ``njit`` for the toolkit's compiled cores.

``@njit(cache=True, ...)`` marks a core as numba's ``njit`` would, but nothing is imported or
compiled until the core is first called (``import lds_toolkit`` does not import numba). On
that first call numba compiles it; when numba cannot be imported (a locked-down lab machine,
Pyodide) the core runs as the plain Python function it is written as — the same arithmetic,
so the same numbers (tested with numba blocked, ``tests/test_without_numba.py``), only slower
— and one :class:`NumbaMissingWarning` says so.

A core may name a faster plain-Python twin, ``@njit(cache=True, plain=twin)``: the same
arithmetic in the same order (so the same numbers, bit for bit) written for the interpreter
(Python floats in lists instead of numpy scalars, ~10x faster there); it runs instead of the
core whenever numba does not compile: numba missing, or ``NUMBA_DISABLE_JIT=1``.

Cores that call other cores (``norm_exceeds`` inside ``dense_core``) need those callees as
numba dispatchers in their module's namespace when numba compiles them: the first call swaps
each lazy core the caller names (its code's global names) for its compiled (or plain)
function in the caller's module.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

__all__ = ["NumbaMissingWarning", "numba_available", "njit"]


class NumbaMissingWarning(UserWarning):
    """numba is not importable: the compiled cores run as plain Python (slower)."""


_NUMBA: Any = None  # the numba module once imported; False when it cannot be
_WARNED = False


def _numba() -> Any:
    global _NUMBA, _WARNED
    if _NUMBA is None:
        try:
            import numba
        except ImportError:
            _NUMBA = False
        else:
            _NUMBA = numba
    if _NUMBA is False and not _WARNED:
        _WARNED = True
        warnings.warn("numba is not installed: lds_toolkit runs its compiled cores as plain "
                      "Python (the same numbers, slower)", NumbaMissingWarning, stacklevel=4)
    return _NUMBA


def numba_available() -> bool:
    """Whether numba can be imported (imports it)."""
    return bool(_numba())


class LazyCore:
    """A core compiled by numba on first call, or its plain Python function without numba."""

    def __init__(self, func: Callable[..., Any], options: dict[str, Any]):
        self.py_func = func
        self.plain: Callable[..., Any] = options.pop("plain", None) or func
        self.options = options
        self._impl: Callable[..., Any] | None = None
        self.__name__ = func.__name__
        self.__qualname__ = func.__qualname__
        self.__doc__ = func.__doc__
        self.__module__ = func.__module__
        self.__wrapped__ = func

    def compiled(self) -> Callable[..., Any]:
        """numba's dispatcher for the core, or the plain function without numba."""
        if self._impl is None:
            numba = _numba()
            namespace = self.py_func.__globals__
            for name in self.py_func.__code__.co_names:  # the globals the core reads
                obj = namespace.get(name)
                if isinstance(obj, LazyCore) and obj is not self:
                    namespace[name] = obj.compiled()
            if numba and not numba.config.DISABLE_JIT:
                self._impl = numba.njit(**self.options)(self.py_func)
            else:  # numba's own DISABLE_JIT wrapper would run py_func: run the faster twin
                self._impl = self.plain
        return self._impl

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.compiled()(*args, **kwargs)

    def __repr__(self) -> str:
        state = "not compiled yet" if self._impl is None else (
            "plain Python" if self._impl in (self.py_func, self.plain) else "compiled")
        return f"<lds_toolkit core {self.__qualname__} ({state})>"


def njit(*args: Any, **options: Any) -> Any:
    """``numba.njit`` made lazy and optional: ``@njit`` or ``@njit(cache=True, ...)``;
    ``plain=`` names the core's plain-Python twin (see the module docstring)."""
    if args and callable(args[0]) and not options:
        return LazyCore(args[0], {})
    if args:
        raise TypeError("njit takes the function or keyword options only")
    return lambda func: LazyCore(func, options)
