"""The values of river's streaming contract (``learn_one(x, y)`` / ``predict_one(x)``) as
arrays: one :class:`SignalCodec` per stream (the input ``x`` = u_t, the target ``y`` = y_t).

river passes a ``dict`` of named features and a ``float`` target; numpy code passes arrays.
A codec accepts a scalar, a 1-D array or a dict of numbers, fixes the form at the first value
it sees (lazy sizing: the learner needs no ``reset(d_in, d_out)``), and refuses a later value
of another form.

Dicts are read **by name**, never by the order of their keys:

* a codec with fixed ``names`` (an :class:`~lds_toolkit.learning.LDSOracle`'s, from its
  system's ``input_labels``/``output_labels``) puts each key in its named column; a key that
  is not one of the names is refused with an error naming it;
* otherwise the first dict's keys are sorted into columns (so two dicts that differ only in
  key order give the same vector, bit for bit).

river's convention for features that come and go (``river.checks``' emerging- and
disappearing-feature checks): an input feature that is missing counts as 0, and a new one
(``grow=True``, for the learners whose weights are per input column) becomes a new column
whose past values were 0, added by :meth:`SignalCodec.encode` with ``register=True``
(``learn_one``); ``predict_one`` does not register (it changes nothing; the prediction of y_t
does not read u_t). Targets keep the names of their first dict: a missing or new target name
is refused.

A prediction goes back in one form per target stream (:meth:`SignalCodec.decode`): a ``dict``
for dict targets, a ``float`` when there is one output (scalar or 1-element targets, cold or
warm), else an array of shape (d_out,).
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from numbers import Real

import numpy as np

from .._validation import as_float_array

KINDS = ("scalar", "array", "dict")
_INT_EXACT = 2**53  # ints up to this convert to float64 exactly (the fast path's range)
_FAST_TYPES = frozenset((float, int))  # bool is not int here: the general path reads it


def canonical_order(keys) -> list:
    """``keys`` sorted (by value, or by type name and ``repr`` when they do not compare), so
    that a dict's column order does not depend on its key order."""
    keys = list(keys)
    try:
        return sorted(keys)
    except TypeError:
        return sorted(keys, key=lambda k: (type(k).__qualname__, repr(k)))


class SignalCodec:
    """Converts one stream's values to float64 vectors and predictions back.

    Parameters
    ----------
    name : str
        The argument name used in messages (``"x"`` or ``"y"``).
    what : str
        What the stream is, for messages (``"u_t"``, ``"y_t"``).
    names : sequence of hashable, optional
        Fixed column names for dict values (a system's signal labels); ``None``: the first
        dict's keys, sorted.
    missing : {"zero", "refuse"}
        A name absent from a dict counts as 0 (river's convention for features) or is refused
        (targets).
    grow : bool
        Whether a dict key never seen before becomes a new column (``encode(register=True)``).
    """

    def __init__(self, name: str, what: str, *, names: Sequence[Hashable] | None = None,
                 missing: str = "zero", grow: bool = False):
        self.name, self.what = name, what
        self.fixed_names = None if names is None else list(names)
        self.missing, self.grow = missing, grow
        self.clear()

    def clear(self, dim: int | None = None) -> None:
        """Forget the form; with ``dim`` the size is fixed (``reset(d_in, d_out)``)."""
        self.kind: str | None = None
        self.keys: list = []  # the dict keys, one per column (kind "dict")
        self.dim = dim

    @property
    def label(self) -> str:
        return f"{self.name} ({self.what})"

    # -------------------------------------------------------------------- encode
    def encode(self, value, *, register: bool = True) -> np.ndarray:
        """``value`` as a float64 vector of the stream's dimension.

        The first call fixes the form (and the dimension, unless ``reset`` fixed it); with
        ``register=True`` a dict's new keys become columns (``grow``). The returned vector has
        the dimension after any growth; the caller compares :attr:`dim` before and after.
        """
        if isinstance(value, Mapping):
            return self._encode_dict(value, register)
        if self.kind == "dict":
            raise ValueError(f"{self.label} must be a dict as in the first call, got "
                             f"{type(value).__name__}")
        vec = as_float_array(self.label, value)
        kind = "scalar" if vec.ndim == 0 else "array"
        vec = vec.reshape(1) if vec.ndim == 0 else vec
        if vec.ndim != 1 or vec.size == 0:
            raise ValueError(f"{self.label} must be a number, a non-empty 1-D array or a dict of "
                             f"numbers, got shape {vec.shape}")
        if self.fixed_names is not None and vec.shape != (len(self.fixed_names),):
            raise ValueError(f"{self.label} must have shape ({len(self.fixed_names)},), one "
                             f"entry per name {self.fixed_names}, got {vec.shape}")
        if self.dim is not None and vec.shape != (self.dim,):
            raise ValueError(f"{self.label} must have shape ({self.dim},), got {vec.shape}")
        if self.kind is None and register:
            self.kind, self.dim = kind, vec.shape[0]
        return vec

    def fast_encode(self, value) -> np.ndarray | None:
        """The vector of ``value`` when it has the settled form in its commonest shape (a dict
        of exactly the known keys, or a number, with finite float or int values), read
        without the general checks; None for anything else, which :meth:`encode` then reads
        (or refuses) with the same numbers. Registers nothing."""
        kind = self.kind
        if kind == "dict":
            keys = self.keys
            if type(value) is not dict or len(value) != len(keys):
                return None
            try:
                vals = [value[k] for k in keys]
            except KeyError:  # another key in place of a known one
                return None
            if not _FAST_TYPES.issuperset(map(type, vals)):
                return None
            total = sum(vals)
            if total - total != 0:  # a NaN or an infinity (or an overflowing sum)
                return None
            try:
                return np.array(vals, dtype=np.float64)
            except OverflowError:  # an int beyond float64
                return None
        if kind == "array":
            if (type(value) is np.ndarray and value.dtype == np.float64
                    and value.shape == (self.dim,) and np.isfinite(value).all()):
                return value
            return None
        if kind == "scalar":
            tv = type(value)
            if (tv is float and math.isfinite(value)) or (
                    tv is int and -_INT_EXACT <= value <= _INT_EXACT):
                return np.array([value], dtype=np.float64)
        return None

    def _values(self, value: Mapping) -> dict:
        """The dict's values as floats, refusing what is not a finite real number."""
        out = {}
        for key, v in value.items():
            if not isinstance(key, Hashable):  # pragma: no cover - a Mapping's keys hash
                raise TypeError(f"{self.label} must have hashable keys, got {key!r}")
            if isinstance(v, Real | np.bool_) and not isinstance(v, np.timedelta64):
                f = float(v)  # bool is a number to river (one-hot features)
            elif isinstance(v, np.ndarray) and v.ndim == 0 and (
                    np.issubdtype(v.dtype, np.number) or v.dtype == np.bool_):
                if np.iscomplexobj(v):
                    raise TypeError(f"{self.label}[{key!r}] must be a real number, got "
                                    f"complex {v!r}")
                f = float(v)
            else:
                raise TypeError(f"{self.label}[{key!r}] must be a real number, got "
                                f"{type(v).__name__} {v!r}")
            if not np.isfinite(f):
                raise ValueError(f"{self.label}[{key!r}] must be finite, got {f}")
            out[key] = f
        return out

    def _encode_dict(self, value: Mapping, register: bool) -> np.ndarray:
        if self.kind not in (None, "dict"):
            raise ValueError(f"{self.label} must be a {self.kind} as in the first call, got a "
                             "dict")
        values = self._values(value)
        if self.kind is None:
            columns = (self.fixed_names if self.fixed_names is not None
                       else canonical_order(values))
            if self.fixed_names is None and not columns:
                raise ValueError(f"{self.label} must have at least one key, got an empty dict")
            if self.dim is not None and len(columns) != self.dim:
                raise ValueError(f"{self.label} must have shape ({self.dim},): {self.dim} keys, "
                                 f"got {len(columns)}: {list(values)}")
        else:
            columns = self.keys
        known = set(columns)
        new = [k for k in values if k not in known]
        if new and self.fixed_names is not None:
            raise ValueError(f"{self.label} has the key {new[0]!r}, which is not one of the "
                             f"names {self.fixed_names} (matched by name)")
        if new and self.kind == "dict" and not self.grow:
            raise ValueError(f"{self.label} has the new key {new[0]!r}; the keys of the first "
                             f"call are {self.keys}")
        if self.missing == "refuse":
            absent = [k for k in columns if k not in values]
            if absent:
                raise ValueError(f"{self.label} lacks the key {absent[0]!r}; every call needs "
                                 f"the keys {list(columns)}")
        if self.kind == "dict" and new and register:
            columns = self.keys + canonical_order(new)
        vec = np.array([values.get(k, 0.0) for k in columns], dtype=np.float64)
        if register:
            self.kind, self.keys, self.dim = "dict", list(columns), len(columns)
        return vec

    # -------------------------------------------------------------------- decode
    def decode(self, vec: np.ndarray):
        """A prediction in the form of the stream: a dict for dict values, a float when there is
        one output, else an array of shape (d_out,)."""
        if self.kind == "dict":
            return {k: float(v) for k, v in zip(self.keys, vec)}
        if vec.shape == (1,):
            return float(vec[0])
        return np.array(vec, dtype=np.float64)
