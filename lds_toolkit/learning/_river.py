"""The values of river's streaming contract (``learn_one(x, y)`` / ``predict_one(x)``) as
arrays: one :class:`SignalCodec` per stream (the input ``x`` = u_t, the target ``y`` = y_t).

river passes a ``dict`` of named features and a ``float`` target; numpy code passes arrays.
A codec accepts a scalar, a 1-D array or a dict of scalars, fixes the form and the dimension
at the first value it sees (lazy sizing: the learner needs no ``reset(d_in, d_out)``), and
refuses a later value of another form or size. A prediction goes back in the form the
targets came in: a ``float`` for scalar targets, a ``dict`` for dict targets, an array
otherwise.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from .._validation import as_float_array

KINDS = ("scalar", "array", "dict")


class SignalCodec:
    """Converts one stream's values to float64 vectors and predictions back.

    Parameters
    ----------
    name : str
        The argument name used in messages (``"x"`` or ``"y"``).
    what : str
        What the stream is, for messages (``"u_t"``, ``"y_t"``).
    """

    def __init__(self, name: str, what: str):
        self.name, self.what = name, what
        self.clear()

    def clear(self, dim: int | None = None) -> None:
        """Forget the form; with ``dim`` the size is fixed (``reset(d_in, d_out)``)."""
        self.kind: str | None = None
        self.keys: tuple = ()  # the dict keys, in the first call's order (kind "dict")
        self.dim = dim

    @property
    def started(self) -> bool:
        return self.dim is not None

    def encode(self, value) -> np.ndarray:
        """``value`` as a float64 vector of the stream's dimension (fixed at the first call)."""
        label = f"{self.name} ({self.what})"
        if isinstance(value, Mapping):
            keys = tuple(value)
            if self.kind == "dict" and set(keys) != set(self.keys):
                raise ValueError(f"{label} must have the keys {list(self.keys)} of the first "
                                 f"call, got {list(keys)}")
            order = self.keys if self.kind == "dict" else keys
            vec = as_float_array(label, [value[k] for k in order])
            if vec.ndim != 1:
                raise ValueError(f"{label} must map names to numbers, got values of shape "
                                 f"{vec.shape[1:]}")
            kind = "dict"
        else:
            vec = as_float_array(label, value)
            kind = "scalar" if vec.ndim == 0 else "array"
            vec = vec.reshape(1) if vec.ndim == 0 else vec
            if vec.ndim != 1:
                raise ValueError(f"{label} must be a number, a 1-D array or a dict of numbers, "
                                 f"got shape {vec.shape}")
            keys = ()
        if self.dim is not None and vec.shape != (self.dim,):
            raise ValueError(f"{label} must have shape ({self.dim},), got {vec.shape}")
        if self.kind is None:
            self.kind, self.keys, self.dim = kind, keys, vec.shape[0]
        elif kind != self.kind and not {kind, self.kind} <= {"scalar", "array"}:
            raise ValueError(f"{label} must be a {self.kind} as in the first call, got a {kind}")
        return vec

    def decode(self, vec: np.ndarray):
        """A prediction in the form the values came in."""
        if self.kind == "scalar":
            return float(vec[0])
        if self.kind == "dict":
            return {k: float(v) for k, v in zip(self.keys, vec)}
        return np.array(vec, dtype=np.float64)
