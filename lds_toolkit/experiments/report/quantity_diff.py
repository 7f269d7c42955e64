"""The quantities of a summary and how two runs' values of one differ (``report --compare``).

A **quantity** is what a summary holds at one path (``/``-joined keys and list indices, the
config left out): a number, a list (possibly nested) of numbers and None, a string, a
boolean, None, or a **record**, a flat list of such scalars that is not all numbers (a
``["constant", 0.4]`` step-size choice) of at most :data:`RECORD_MAX` entries, compared
whole. :func:`diff_quantity` gives one
quantity's largest relative difference over its entries,

    rel = |a − b| / max(|a|, |b|)      (0 when equal; inf for a finite value against a
                                        non-finite one, a changed string or another shape),

with the entries where it is largest; :func:`readable_names` names each quantity for people,
list indices as ``[i]``, and as ``[seed i]`` where the list has one entry per seed of the run.

A quantity within :data:`RTOL` relative or :data:`ATOL` absolute is **round-off**
(:attr:`QuantityDiff.roundoff`): judged per quantity, never per experiment.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

#: Round-off: a quantity whose entries all agree within RTOL relative or ATOL absolute.
#: Measured between an AMD EPYC and an Intel Xeon (same library versions): the numpy
#: experiments' quantities differ by 1e-16 to 1.1e-6 relative (the largest: the best
#: predictor in hindsight, an iterative solve), and quantities that are themselves round-off
#: (Algorithm 2's relative regret excess, ~1e-10) by up to 4e-4 relative, 1e-15 absolute.
RTOL, ATOL = 1e-5, 1e-9

#: ``QuantityDiff.kind`` values that are not two values of one quantity.
STRUCTURAL = ("shape", "only in A", "only in B")


@dataclass(frozen=True)
class QuantityDiff:
    """One summary quantity compared: ``rel`` its largest relative difference over its
    entries (0: identical; ``inf``: a finite value against a non-finite one), ``a``/``b`` the
    entries where it is largest, ``kind`` ``"numbers"``, ``"other"`` (strings, booleans,
    records: ``rel`` 0 or inf), ``"shape"`` (lists of other lengths), ``"only in A"``/``"only
    in B"``; ``where`` the index of the largest entry in a list (``(13, 2)``), ``name`` the
    readable name (:func:`readable_names`; empty: the path)."""

    path: str
    rel: float
    a: Any = None
    b: Any = None
    kind: str = "numbers"
    abs: float = 0.0
    where: tuple[int, ...] = ()
    name: str = ""

    @property
    def roundoff(self) -> bool:
        """Equal, or different within :data:`RTOL` relative or :data:`ATOL` absolute."""
        return self.kind in ("numbers", "other") and (self.rel <= RTOL or self.abs <= ATOL)


def is_number(x) -> bool:
    return isinstance(x, int | float) and not isinstance(x, bool)


def _scalar(x) -> bool:
    return x is None or isinstance(x, str | int | float)


def numeric_list(x) -> bool:
    """A list (possibly nested) of numbers and None: one quantity."""
    if not isinstance(x, list):
        return False
    return all(is_number(v) or v is None or numeric_list(v) for v in x)


#: The longest record (a longer list of strings is compared entry by entry).
RECORD_MAX = 4


def record(x) -> bool:
    """A flat list of 1 to :data:`RECORD_MAX` scalars that are not all numbers
    (``["constant", 0.4]``): one quantity, compared whole."""
    return isinstance(x, list) and 0 < len(x) <= RECORD_MAX and all(_scalar(v) for v in x) \
        and not numeric_list(x)


def quantities(node, path: str = "") -> dict[str, Any]:
    """The quantities of a summary: ``{path: value}`` for every number, numeric list, record,
    string, boolean or None reached through dicts and lists of dicts (``path`` joined by
    ``/``)."""
    out: dict[str, Any] = {}
    if isinstance(node, dict):
        for k, v in node.items():
            out.update(quantities(v, f"{path}/{k}" if path else str(k)))
    elif isinstance(node, list) and not numeric_list(node) and not record(node):
        for i, v in enumerate(node):
            out.update(quantities(v, f"{path}/{i}" if path else str(i)))
    else:
        out[path] = node
    return out


def _index(i: int, length: int, n_seeds: int | None) -> str:
    return f"[seed {i}]" if n_seeds and length == n_seeds and n_seeds > 1 else f"[{i}]"


def readable_names(node, n_seeds: int | None = None, path: str = "",
                   name: str = "") -> dict[str, str]:
    """``{path: name}`` for every quantity of :func:`quantities`: dict keys joined by ``/``,
    list indices as ``[i]`` after their list's name, ``[seed i]`` where the list has one entry
    per seed (``n_seeds`` entries): ``steps/1024[seed 10]`` rather than ``steps/1024/10``."""
    out: dict[str, str] = {}
    if isinstance(node, dict):
        for k, v in node.items():
            out.update(readable_names(v, n_seeds, f"{path}/{k}" if path else str(k),
                                      f"{name}/{k}" if name else str(k)))
    elif isinstance(node, list) and not numeric_list(node) and not record(node):
        for i, v in enumerate(node):
            out.update(readable_names(v, n_seeds, f"{path}/{i}" if path else str(i),
                                      name + _index(i, len(node), n_seeds)))
    else:
        out[path] = name
    return out


def where_text(value, where: tuple[int, ...], n_seeds: int | None = None) -> str:
    """The index ``where`` of an entry of the (nested) list ``value`` as ``[seed 13][2]``."""
    out, node = "", value
    for i in where:
        if not isinstance(node, list):
            break
        out += _index(i, len(node), n_seeds)
        node = node[i]
    return out


def _flat(x, at: tuple[int, ...] = ()) -> list[tuple[tuple[int, ...], Any]]:
    if isinstance(x, list):
        return [pair for i, item in enumerate(x) for pair in _flat(item, (*at, i))]
    return [(at, x)]


def _shape(x):
    return [_shape(v) for v in x] if isinstance(x, list) else None


def _entry_diff(a, b) -> tuple[float, float]:
    """``(relative, absolute)`` difference of two entries (numbers or None)."""
    if a is None or b is None:
        return (0.0, 0.0) if a is b else (math.inf, math.inf)
    fa, fb = float(a), float(b)
    if fa == fb or (math.isnan(fa) and math.isnan(fb)):
        return 0.0, 0.0
    if not (math.isfinite(fa) and math.isfinite(fb)):
        return math.inf, math.inf
    d = abs(fa - fb)
    return d / max(abs(fa), abs(fb)), d


def diff_quantity(path: str, a, b) -> QuantityDiff:
    """The largest relative difference between two values of one quantity."""
    numeric = (is_number(a) or numeric_list(a)) and (is_number(b) or numeric_list(b))
    if not numeric or a is None or b is None:
        same = a == b or (_same_nan(a, b))
        return QuantityDiff(path, 0.0 if same else math.inf, a, b, "other",
                            0.0 if same else math.inf)
    if _shape(a) != _shape(b):
        return QuantityDiff(path, math.inf, short(a), short(b), "shape", math.inf)
    worst = QuantityDiff(path, 0.0, short(a), short(b))
    for (at, x), (_, y) in zip(_flat(a), _flat(b)):
        rel, d = _entry_diff(x, y)
        if rel > worst.rel or (rel == worst.rel and d > worst.abs):
            worst = QuantityDiff(path, rel, x, y, "numbers", d, at)
    return worst


def _same_nan(a, b) -> bool:
    """Records holding NaN at the same places (``==`` says NaN != NaN)."""
    if not (isinstance(a, list) and isinstance(b, list) and len(a) == len(b)):
        return False
    return all(x == y or (is_number(x) and is_number(y) and math.isnan(x) and math.isnan(y))
               for x, y in zip(a, b))


def short(x):
    """A list as ``"list of N"`` (N entries in all), anything else as it is."""
    return x if not isinstance(x, list) or record(x) else f"list of {len(_flat(x))}"
