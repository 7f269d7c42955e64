"""How the toolkit prints a result number: one house style for the report, the claims and
the docs' quotes.

:func:`format_number` applies a Python format specification (``.3g`` unless told) and then
the house style:

* **e-notation compact**: ``1.29e6``, ``1.6e-4`` (no ``+``, no leading zeros in the
  exponent; Python writes ``1.29e+06``);
* **a share with a space before the sign**: ``.1%`` gives ``99.8 %``, as the prose of the
  docs writes it (and as SI and ISO 80000-1 write a percentage), so a rendered number reads
  like a typed one beside it;
* **units**: a format may start with a unit of :data:`UNITS` (``min:.1f``, ``ms``, ``x:.2f``);
  the number, a duration in seconds or a ratio, is converted and the unit appended
  (``43.3 min``, ``1.04×``);
* **dates**: the format ``date`` prints an ISO 8601 timestamp (``2026-11-25T22:42:00+00:00``,
  as ``run.json`` records it) as its calendar day, ``2026-11-25``, in the timestamp's own
  offset;
* NaN and infinities as Python writes them (``nan``): a quoted NaN is a visible fact, not a
  crash; a string or a boolean as itself.
"""

from __future__ import annotations

import math
import re
from datetime import datetime

#: Units a number (a duration in seconds, or a ratio) can be given in: unit ->
#: (factor from the stored number, suffix), as in ``min:.1f``.
UNITS = {"h": (1 / 3600, " h"), "min": (1 / 60, " min"), "s": (1.0, " s"),
         "ms": (1e3, " ms"), "us": (1e6, " µs"), "x": (1.0, "×")}

#: The format that prints an ISO 8601 timestamp as its date.
DATE = "date"

_E_NOTATION = re.compile(r"(-?[\d.]+)e([+-]\d+)")


class NumberFormatError(ValueError):
    """A format that does not apply to the value (``.1f`` of a string, ``date`` of a
    number, a unit of a non-number)."""


def format_number(x, fmt: str = ".3g") -> str:
    """``x`` printed with the format specification ``fmt`` in the house style (see the
    module docstring).

    Raises
    ------
    NumberFormatError
        When ``fmt`` does not apply to ``x``, naming both.
    """
    if fmt == DATE:
        return _date(x)
    unit, sep, rest = fmt.partition(":")
    if unit in UNITS:
        factor, suffix = UNITS[unit]
        if isinstance(x, bool) or not isinstance(x, int | float):
            raise NumberFormatError(f"unit {unit!r} needs a number, got {x!r}")
        return format_number(x * factor, rest if sep else ".3g") + suffix
    if isinstance(x, bool) or not isinstance(x, int | float):
        return str(x)
    if isinstance(x, float) and not math.isfinite(x):
        return str(x)
    try:
        text = format(x, fmt)
    except ValueError as exc:
        raise NumberFormatError(f"format {fmt!r} does not apply to {x!r}: {exc}") from None
    if text.endswith("%"):
        return text[:-1] + " %"
    m = _E_NOTATION.fullmatch(text)
    if m:
        text = f"{m.group(1)}e{int(m.group(2))}"
    return text


def _date(x) -> str:
    """The calendar day of an ISO 8601 timestamp, in the timestamp's own offset."""
    if not isinstance(x, str):
        raise NumberFormatError(f"format 'date' needs an ISO 8601 timestamp, got {x!r}")
    try:
        return datetime.fromisoformat(x).date().isoformat()
    except ValueError:
        raise NumberFormatError(f"format 'date' needs an ISO 8601 timestamp, got {x!r}"
                                ) from None
