"""Private helper: validate signal and system names before python-control sees them.

python-control takes a signal list as a list of names, one name (a prefix it numbers) or a
count, and a system name as a string. Anything else fails deep inside it ("Can't parse
signal list [1.5]", "expected string or bytes-like object") or, for a name given twice,
silently keeps one of them (``inputs=['a', 'a']`` gives ``input_labels == ['a']`` on a
two-input system, and name-based interconnections then pick the wrong signal). The checks
here name the argument, what was expected and what came.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

#: Signal names as python-control takes them: a list of names, one name, or a count.
SignalNames = list[str] | str | int | None


def check_signal_names(key: str, value, count: int, what: str) -> None:
    """``value`` names ``count`` signals (``what`` says where the count comes from, e.g.
    ``"columns of B"``): ``None`` (python-control's defaults), the count itself, one string
    (the name of a single signal) or a list of distinct, non-empty strings. ``TypeError`` /
    ``ValueError`` naming ``key`` otherwise."""
    if value is None:
        return
    if isinstance(value, int | np.integer) and not isinstance(value, bool):
        got = int(value)
    elif isinstance(value, str):
        _check_one(key, value, None)
        got = 1
    elif isinstance(value, list | tuple):
        for i, item in enumerate(value):
            _check_one(key, item, i)
        seen: dict[str, int] = {}
        for i, item in enumerate(value):
            if item in seen:
                raise ValueError(f"{key} must name each of the {len(value)} {key} once, got "
                                 f"{item!r} twice (positions {seen[item]} and {i}) in "
                                 f"{value!r}; python-control would keep one of them and "
                                 f"name-based connections would pick the wrong signal")
            seen[item] = i
        got = len(value)
    else:
        raise TypeError(f"{key} must be a list of signal names (strings), one name or a "
                        f"count, got {type(value).__name__} {value!r}")
    if got != count:
        raise ValueError(f"{key} must name the {count} {key} ({what}), got {got}: {value!r}")


def _check_one(key: str, item, position: int | None) -> None:
    where = "" if position is None else f" at position {position}"
    if not isinstance(item, str):
        raise TypeError(f"{key} must be signal names (strings), got {type(item).__name__} "
                        f"{item!r}{where}")
    if not item.strip():
        raise ValueError(f"{key} must be non-empty signal names, got {item!r}{where}")


def check_system_name(name) -> None:
    """A system name is ``None`` (python-control's ``sys[k]``) or a string."""
    if name is not None and not isinstance(name, str):
        raise TypeError(f"name must be a string (the system's name), got "
                        f"{type(name).__name__} {name!r}")


#: Keys of the ``names`` of a state-feedback loop (see ``ETCSystem``).
LOOP_NAME_KEYS = ("inputs", "states", "name")


def check_loop_names(names, n_inputs: int, n_states: int) -> dict | None:
    """The ``names`` of a state-feedback loop: ``None`` or a mapping with some of ``inputs``
    (``n_inputs`` names), ``states`` (``n_states`` names) and ``name``; a copy as a dict."""
    if names is None:
        return None
    if not isinstance(names, Mapping):
        raise TypeError(f"names must be a dict with some of the keys {list(LOOP_NAME_KEYS)} "
                        f"(e.g. {{'states': ['x1', 'x2']}}), got {type(names).__name__} "
                        f"{names!r}")
    unknown = sorted(str(k) for k in names if k not in LOOP_NAME_KEYS)
    if unknown:
        raise ValueError(f"names has unknown keys {unknown}; the keys are "
                         f"{list(LOOP_NAME_KEYS)}")
    if "inputs" in names:
        check_signal_names("names['inputs']", names["inputs"], n_inputs, "columns of B")
    if "states" in names:
        check_signal_names("names['states']", names["states"], n_states, "A's size")
    if "name" in names:
        check_system_name(names["name"])
    return dict(names)
