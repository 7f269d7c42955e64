"""``--set KEY=VALUE``: change any entry of an experiment's config, type-checked.

An override names an entry of the config that ``Experiment.config(scale, seeds)`` returns
(``T``, ``n``, ``k``, ``seeds``, ``lengths``, ``max_steps`` ...); a nested entry is reached
with dots (``models.s4.d_state``). The new value must have the type of the value it
replaces:

* an integer entry takes an integer (``--set T=2048``; ``2048.0`` and ``true`` are refused);
* a float entry takes any real number (``--set lr=1e-3``, ``--set lr=1``);
* a bool entry takes ``true``/``false``; a string entry takes any text;
* a list entry takes a JSON list whose items have the types of the old items
  (``--set q_values=[0.5,1]``); an entry that was ``null`` takes any JSON value.

Values are parsed as JSON, and text that is not JSON is taken as a string. The applied
overrides are recorded in the config under ``"overrides"``, so they appear in
``summary.json`` and in every task's store key.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterable, Mapping
from numbers import Integral, Real
from typing import Any

#: Config entries set by the runner itself, not by ``--set``.
RESERVED = ("seed", "scale", "overrides")


def parse_assignment(text: str) -> tuple[str, Any]:
    """``"KEY=VALUE"`` -> ``(KEY, value)``: the value parsed as JSON, else kept as text."""
    if not isinstance(text, str) or "=" not in text:
        raise ValueError(f"--set expects KEY=VALUE, got {text!r}")
    key, raw = text.split("=", 1)
    if not key.strip():
        raise ValueError(f"--set expects KEY=VALUE with a non-empty KEY, got {text!r}")
    if key != key.strip():
        # a quoted ' n=5' would otherwise set n quietly, or a key nobody meant
        raise ValueError(f"--set expects KEY=VALUE with no spaces around KEY, got the key "
                         f"{key!r} in {text!r}; write --set {key.strip()}={raw.strip()}")
    try:
        value = json.loads(raw)
    except json.JSONDecodeError:
        value = raw
    return key, value


def parse_assignments(items: Iterable[str] | None) -> dict[str, Any]:
    """Several ``KEY=VALUE`` strings -> dict (a key given twice is an error)."""
    out: dict[str, Any] = {}
    for item in items or ():
        key, value = parse_assignment(item)
        if key in out:
            raise ValueError(f"--set gives {key!r} twice")
        out[key] = value
    return out


def _leaf_keys(config: Mapping, prefix: str = "") -> list[str]:
    keys = []
    for k, v in config.items():
        if not prefix and k in RESERVED:
            continue
        path = f"{prefix}{k}"
        keys.append(path)
        if isinstance(v, Mapping):
            keys.extend(_leaf_keys(v, path + "."))
    return keys


def _type_name(value) -> str:
    if isinstance(value, bool):
        return "a boolean (true/false)"
    if isinstance(value, Integral):
        return "an integer"
    if isinstance(value, Real):
        return "a real number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a JSON list"
    if isinstance(value, Mapping):
        return "a JSON object"
    return type(value).__name__


def _coerce(key: str, old, new):
    """``new`` converted to the type of ``old``, or ``TypeError`` naming ``key``."""
    def refuse():
        return TypeError(f"--set {key}: expected {_type_name(old)} (the current value is "
                         f"{json.dumps(old)}), got {json.dumps(new)}")

    if old is None:
        return new
    if isinstance(old, bool):
        if not isinstance(new, bool):
            raise refuse()
        return new
    if isinstance(old, Integral):
        if isinstance(new, bool) or not isinstance(new, Integral):
            raise refuse()
        return int(new)
    if isinstance(old, Real):
        if isinstance(new, bool) or not isinstance(new, Real):
            raise refuse()
        return float(new)
    if isinstance(old, str):
        if not isinstance(new, str):
            # "--set name=3" gives the int 3: a string entry takes its text
            return json.dumps(new)
        return new
    if isinstance(old, list):
        if not isinstance(new, list):
            raise refuse()
        if not old:
            return new
        kinds = {_type_name(v) for v in old}
        if len(kinds) == 1:  # homogeneous list: every new item has the old items' type
            return [_coerce(f"{key}[{i}]", old[0], v) for i, v in enumerate(new)]
        return new
    if isinstance(old, Mapping):
        if not isinstance(new, Mapping):
            raise refuse()
        return dict(new)
    raise refuse()  # pragma: no cover - configs are JSON


def apply_overrides(config: dict[str, Any], overrides: Mapping[str, Any] | None,
                    *, experiment: str = "experiment") -> dict[str, Any]:
    """A copy of ``config`` with ``overrides`` applied (dotted keys reach nested entries).

    Raises
    ------
    ValueError
        An unknown key, naming the valid ones.
    TypeError
        A value whose type differs from the entry it replaces.
    """
    if overrides is not None and not isinstance(overrides, Mapping):
        hint = ""
        if isinstance(overrides, list | tuple) and all(isinstance(x, str) for x in overrides):
            hint = (f"; strings such as {overrides[0]!r} are the command line's --set form: "
                    f"parse_assignments({list(overrides)!r}) turns them into a mapping"
                    if overrides else "")
        raise TypeError(f"overrides must be a mapping of config keys to values, e.g. "
                        f"{{'T': 2048}}, got {type(overrides).__name__} {overrides!r:.100}{hint}")
    if not overrides:
        return config
    out = copy.deepcopy(config)
    applied = {}
    for key, value in overrides.items():
        parts = str(key).split(".")
        node = out
        ok = parts[0] not in RESERVED
        for part in parts[:-1]:
            if not ok or not isinstance(node, dict) or part not in node:
                ok = False
                break
            node = node[part]
        if not ok or not isinstance(node, dict) or parts[-1] not in node:
            valid = ", ".join(_leaf_keys(config))
            raise ValueError(f"unknown config key {key!r} for {experiment}; valid keys: "
                             f"{valid}")
        node[parts[-1]] = _coerce(key, node[parts[-1]], value)
        applied[key] = node[parts[-1]]
    out["overrides"] = dict(sorted(applied.items()))
    return out
