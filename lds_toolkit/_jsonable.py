"""Private helper: numpy values to JSON-native types (summary.json, saved task metadata)."""

from __future__ import annotations

import math

import numpy as np


def to_jsonable(obj, _where: str = "obj"):
    """Recursively convert numpy scalars/arrays (and tuples) to JSON-native types.

    Strings, numbers, booleans and None pass as they are; dicts (keys as strings), lists,
    tuples and numpy arrays are converted entry by entry; a complex number becomes
    ``{"real": ..., "imag": ...}``. Anything else (an object, a set, a function) raises
    ``TypeError`` naming where it sits (``obj['a'][2]``), instead of failing later inside
    ``json.dumps`` without saying which entry.
    """
    if isinstance(obj, dict):
        return {str(k): to_jsonable(v, f"{_where}[{k!r}]") for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [to_jsonable(v, f"{_where}[{i}]") for i, v in enumerate(obj)]
    if isinstance(obj, np.ndarray):
        return to_jsonable(obj.tolist(), _where)
    if isinstance(obj, np.bool_):
        return bool(obj)
    if isinstance(obj, np.integer):
        return int(obj)
    if isinstance(obj, np.floating):
        return float(obj)
    if isinstance(obj, complex | np.complexfloating):
        return {"real": float(obj.real), "imag": float(obj.imag)}
    if obj is None or isinstance(obj, str | int | float):
        return obj
    raise TypeError(f"{_where} is {type(obj).__name__} {obj!r:.60}, which JSON cannot hold "
                    "(numbers, strings, booleans, None, lists, dicts and numpy arrays can)")


def finite_json(obj):
    """``obj`` (JSON-native: dicts, lists, numbers, strings, booleans, None) with every
    non-finite float as a string, ``"nan"``, ``"inf"`` or ``"-inf"``, so that
    ``json.dumps(..., allow_nan=False)`` writes valid JSON (which has no NaN or Infinity)
    and a reader still sees which value it was."""
    if isinstance(obj, float) and not math.isfinite(obj):
        return "nan" if math.isnan(obj) else ("inf" if obj > 0 else "-inf")
    if isinstance(obj, dict):
        return {k: finite_json(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [finite_json(v) for v in obj]
    return obj
