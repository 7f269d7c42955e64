"""Private helper: run small dense linear algebra with one thread per native pool.

The control code multiplies and exponentiates tiny matrices (2n x 2n), and the learning code's
filter fast path and hindsight solver work on tall-skinny or tiny matrices: a second BLAS
thread gains nothing there and only adds synchronisation. On a loaded 2-core machine the
default pools made the NSS sweep 5x slower and the filter fast path 30x slower (8 s instead
of 0.25 s at T = 2^14, OpenBLAS's spinning threads).

One ``ThreadpoolController`` is created on first use and reused: ``controller.limit`` costs
about 10 us, against about 2 ms for a fresh ``threadpool_limits``. It sees the native
libraries loaded when it was created (numpy/scipy's BLAS, which every caller has loaded).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import ParamSpec, TypeVar

_P = ParamSpec("_P")
_R = TypeVar("_R")

_CONTROLLER = None


def one_thread(user_api: str | None = None):
    """Context manager limiting the native thread pools to one thread.

    ``user_api=None`` limits every pool (BLAS and OpenMP); ``"blas"`` only the BLAS pools.
    """
    global _CONTROLLER
    if _CONTROLLER is None:
        from threadpoolctl import ThreadpoolController

        _CONTROLLER = ThreadpoolController()
    return _CONTROLLER.limit(limits=1, user_api=user_api)


def single_blas_thread(fn: Callable[_P, _R]) -> Callable[_P, _R]:
    """Decorator: run ``fn`` with the BLAS pools limited to one thread (signature kept)."""

    @functools.wraps(fn)
    def wrapper(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        with one_thread("blas"):
            return fn(*args, **kwargs)

    return wrapper
