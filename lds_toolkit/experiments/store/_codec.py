"""Private helper: task results to JSON plus numpy arrays and back, exactly and without pickle.

:func:`encode` turns a result into a JSON-native tree and a dict of arrays (for an ``.npz``
written with ``allow_pickle=False``); :func:`decode` inverts it. The round trip is exact:

* ``None``, ``bool``, ``int`` (any size), ``str`` and finite ``float`` are JSON values (a
  float is written as its shortest repr, which reads back to the same bits);
* a non-finite ``float`` and a ``complex`` keep their IEEE bits as hexadecimal
  (``{"$": "float", "bits": "7ff8000000000000"}``), so NaN payloads and signed zeros survive;
* ``list`` is a JSON array, ``tuple`` is ``{"$": "tuple", "items": [...]}``;
* a ``dict`` whose keys are strings (none of them ``"$"``) is a JSON object in insertion
  order; any other dict is ``{"$": "dict", "items": [[key, value], ...]}``;
* a ``numpy.ndarray`` (any non-object dtype and shape) is ``{"$": "array", "ref": "a0"}`` with
  the array stored under ``a0``; a numpy scalar (``np.float32(1)``, ``np.int64(3)``,
  ``np.bool_``) is stored as a 0-d array and comes back as the same numpy scalar type. The
  same array object appearing twice is stored once and comes back as one object.

Anything else (objects, object arrays, array subclasses, named tuples) raises ``TypeError``
naming where in the result it sits: nothing is ever stored that would need code to load.
"""

from __future__ import annotations

import struct
from typing import Any

import numpy as np

TAG = "$"


def _bits(x: float) -> str:
    return struct.pack(">d", x).hex()


def _from_bits(text: str) -> float:
    if not (isinstance(text, str) and len(text) == 16):
        raise ValueError(f"float bits must be 16 hexadecimal digits, got {text!r}")
    return struct.unpack(">d", bytes.fromhex(text))[0]


def encode(value: Any) -> tuple[Any, dict[str, np.ndarray]]:
    """``(tree, arrays)``: a JSON-serialisable tree and the arrays it refers to by name."""
    arrays: dict[str, np.ndarray] = {}
    seen: dict[int, str] = {}

    def store(arr: np.ndarray, where: str) -> str:
        if arr.dtype.hasobject:
            raise TypeError(f"{where}: arrays of dtype {arr.dtype} (Python objects) cannot be "
                            "stored without pickle; convert them to numbers or strings")
        ref = seen.get(id(arr))
        if ref is None:
            ref = f"a{len(arrays)}"
            arrays[ref] = arr
            seen[id(arr)] = ref
        return ref

    def enc(obj, where: str):
        if obj is None or type(obj) in (bool, str):
            return obj
        if isinstance(obj, np.generic):  # before float: np.float64 subclasses float
            return {TAG: "scalar", "ref": store(np.asarray(obj), where)}
        if type(obj) is int:
            return obj
        if type(obj) is float:
            return obj if np.isfinite(obj) else {TAG: "float", "bits": _bits(obj)}
        if type(obj) is complex:
            return {TAG: "complex", "bits": [_bits(obj.real), _bits(obj.imag)]}
        if type(obj) is np.ndarray:
            return {TAG: "array", "ref": store(obj, where)}
        if type(obj) is list:
            return [enc(v, f"{where}[{i}]") for i, v in enumerate(obj)]
        if type(obj) is tuple:
            return {TAG: "tuple", "items": [enc(v, f"{where}[{i}]") for i, v in enumerate(obj)]}
        if type(obj) is dict:
            if all(type(k) is str for k in obj) and TAG not in obj:
                return {k: enc(v, f"{where}[{k!r}]") for k, v in obj.items()}
            return {TAG: "dict", "items": [[enc(k, f"{where} key {k!r}"),
                                            enc(v, f"{where}[{k!r}]")] for k, v in obj.items()]}
        raise TypeError(
            f"{where}: a stored task result may hold only None, bool, int, float, complex, str, "
            f"list, tuple, dict and numpy arrays or scalars; got {type(obj).__module__}."
            f"{type(obj).__qualname__}")

    return enc(value, "result"), arrays


def decode(tree: Any, arrays: dict[str, np.ndarray]) -> Any:
    """Inverse of :func:`encode`; ``ValueError`` on a malformed tree or a missing array."""

    def array(node) -> np.ndarray:
        ref = node.get("ref")
        if not isinstance(ref, str) or ref not in arrays:
            raise ValueError(f"reference to a missing array: {ref!r}")
        return arrays[ref]

    def dec(node):
        if node is None or type(node) in (bool, int, float, str):
            return node
        if type(node) is list:
            return [dec(v) for v in node]
        if type(node) is not dict:
            raise ValueError(f"unexpected node of type {type(node).__name__}")
        if TAG not in node:
            return {k: dec(v) for k, v in node.items()}
        tag = node[TAG]
        if tag == "array":
            return array(node)
        if tag == "scalar":
            arr = array(node)
            if arr.ndim != 0:
                raise ValueError(f"scalar {node['ref']!r} has shape {arr.shape}")
            return arr[()]
        if tag == "float":
            return _from_bits(node.get("bits"))
        if tag == "complex":
            bits = node.get("bits")
            if not (isinstance(bits, list) and len(bits) == 2):
                raise ValueError(f"complex needs two bit strings, got {bits!r}")
            return complex(_from_bits(bits[0]), _from_bits(bits[1]))
        if tag == "tuple":
            return tuple(dec(v) for v in _items(node))
        if tag == "dict":
            out = {}
            for pair in _items(node):
                if not (isinstance(pair, list) and len(pair) == 2):
                    raise ValueError(f"dict item must be [key, value], got {pair!r}")
                out[dec(pair[0])] = dec(pair[1])
            return out
        raise ValueError(f"unknown tag {tag!r}")

    return dec(tree)


def _items(node) -> list:
    items = node.get("items")
    if not isinstance(items, list):
        raise ValueError(f"{node[TAG]} node needs a list of items")
    return items
