"""Private helper: the read-only matrices of an :class:`~lds_toolkit.systems.LDS`.

A system's ``A, B, C, D`` are read-only float64 arrays (the numba cores read them directly,
and a system that could change under a cached result would be a silent bug). numpy's own
refusal, "assignment destination is read-only", does not say why or what to do instead, so
the arrays are views of class :class:`FrozenMatrix`, which refuses an in-place change
(``sys.A[0, 0] = 1``, ``sys.A += 1``, ``np.add(..., out=sys.A)``) with a message naming the
matrix and :meth:`~lds_toolkit.systems.LDS.with_matrices`.

Everything else behaves as a plain ndarray and gives plain ndarrays back: arithmetic, numpy
functions, ``copy()`` (a writable ndarray) and numba (which reads the buffer).
"""

from __future__ import annotations

import numpy as np


def _immutable(name: str | None) -> ValueError:
    label = name or "this matrix"
    new = f"new_{name}" if name else "..."
    key = name or "A"
    return ValueError(f"an LDS is immutable: {label} cannot be changed in place (its arrays "
                      f"are read-only, so that results computed from the system stay valid); "
                      f"build the changed system with sys.with_matrices({key}={new}), where "
                      f"{new} = sys.{key}.copy() is a writable copy to edit")


class FrozenMatrix(np.ndarray):
    """A read-only ndarray view whose in-place changes raise the error of the module
    docstring; ``matrix_name`` (``"A"``, ...) is the name the message uses."""

    matrix_name: str | None = None

    def __array_finalize__(self, obj):
        self.matrix_name = getattr(obj, "matrix_name", None)

    def __setitem__(self, key, value):
        if not self.flags.writeable:
            raise _immutable(self.matrix_name)
        super().__setitem__(key, value)

    def __array_ufunc__(self, ufunc, method, *inputs, out=None, **kwargs):
        if out is not None:
            for o in out:
                if isinstance(o, FrozenMatrix) and not o.flags.writeable:
                    raise _immutable(o.matrix_name)
            kwargs["out"] = tuple(np.asarray(o) if isinstance(o, FrozenMatrix) else o
                                  for o in out)
        inputs = tuple(np.asarray(x) if isinstance(x, FrozenMatrix) else x for x in inputs)
        return getattr(ufunc, method)(*inputs, **kwargs)

    def __array_wrap__(self, obj, context=None, return_scalar=False):
        result = np.asarray(obj)
        return result[()] if return_scalar else result

    def __repr__(self) -> str:  # shown as the plain array it is (python-control's repr too)
        return repr(np.asarray(self))

    def copy(self, order="C"):  # type: ignore[override]
        """A writable plain ndarray copy."""
        return np.array(self, order=order, subok=False)

    def __reduce__(self):  # pickles as the plain array it holds
        return np.asarray(self).copy().__reduce__()


def frozen(name: str, arr: np.ndarray) -> FrozenMatrix:
    """A read-only :class:`FrozenMatrix` copy of ``arr`` (float64) named ``name``."""
    out = np.array(arr, dtype=np.float64, copy=True).view(FrozenMatrix)
    out.matrix_name = name
    out.setflags(write=False)
    return out
