"""Declared ranges of experiment config entries, checked before any task runs.

Each experiment declares, in one class attribute ``ranges``, what every entry of its config
may hold (:class:`Int`, :class:`Real`, :class:`Bool`, :class:`Choice`, :class:`Text`,
:class:`ListOf`, :class:`Fields`, :class:`MapOf`, :class:`Maybe`), optionally ``relations``
between entries (:class:`Relation`, e.g. ``k <= T``, or a :class:`Check` calling the
library's own validation) and a method ``largest_array(config)``
estimating the bytes of its largest array. :func:`check_config` checks a built config
against them, so ``--set T=1099511627776``, ``--set region_q=NaN`` or ``--set q_values=[]``
end the command with one line naming the entry and the allowed range (exit status 2)
before the first task, instead of failing inside it or exiting 0 with an empty result::

    --set q_values: must be a non-empty list of real numbers in (0, 1], got []

The memory check compares the estimate with the memory available now
(:func:`~lds_toolkit._validation.available_memory_bytes`): a run whose largest single array
cannot fit is refused; passing does not promise the whole run fits.
"""

from __future__ import annotations

import json
import math
import operator
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from numbers import Integral
from numbers import Real as _RealNumber
from typing import Any

from ..._validation import _human, available_memory_bytes


def _show(value) -> str:
    try:
        text = json.dumps(value, allow_nan=True)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _bound(x) -> str:
    if isinstance(x, float) and x.is_integer() and abs(x) < 1e15:
        return f"{x:g}"
    return f"{x:g}" if isinstance(x, float) else str(x)


class Spec:
    """What one config entry may hold."""

    def describe(self) -> str:  # pragma: no cover - abstract
        raise NotImplementedError

    def problem(self, value, path: str) -> tuple[str, str] | None:
        """``None`` when ``value`` is allowed, else ``(path of the bad part, sentence)``."""
        raise NotImplementedError  # pragma: no cover


def _wrong(path: str, spec: Spec, value) -> tuple[str, str]:
    return path, f"must be {spec.describe()}, got {_show(value)}"


@dataclass(frozen=True)
class Int(Spec):
    """An integer in ``[low, high]`` (``high=None``: no upper bound); booleans refused."""

    low: int = 1
    high: int | None = None

    def describe(self) -> str:
        if self.high is None:
            return f"an integer >= {self.low}"
        return f"an integer in [{self.low}, {self.high}]"

    def problem(self, value, path):
        if isinstance(value, bool) or not isinstance(value, Integral):
            return _wrong(path, self, value)
        if value < self.low or (self.high is not None and value > self.high):
            return _wrong(path, self, value)
        return None


@dataclass(frozen=True)
class Real(Spec):
    """A finite real number in an interval (``None``: unbounded on that side)."""

    low: float | None = None
    high: float | None = None
    low_open: bool = False
    high_open: bool = False

    def describe(self) -> str:
        if self.low is None and self.high is None:
            return "a finite real number"
        lo = "-inf" if self.low is None else _bound(self.low)
        hi = "inf" if self.high is None else _bound(self.high)
        left = "(" if self.low is None or self.low_open else "["
        right = ")" if self.high is None or self.high_open else "]"
        return f"a real number in {left}{lo}, {hi}{right}"

    def problem(self, value, path):
        if isinstance(value, bool) or not isinstance(value, _RealNumber):
            return _wrong(path, self, value)
        v = float(value)
        if not math.isfinite(v):
            return _wrong(path, self, value)
        if self.low is not None and (v < self.low or (self.low_open and v == self.low)):
            return _wrong(path, self, value)
        if self.high is not None and (v > self.high or (self.high_open and v == self.high)):
            return _wrong(path, self, value)
        return None


@dataclass(frozen=True)
class Bool(Spec):
    """``true`` or ``false``."""

    def describe(self) -> str:
        return "true or false"

    def problem(self, value, path):
        return None if isinstance(value, bool) else _wrong(path, self, value)


@dataclass(frozen=True)
class Choice(Spec):
    """One of a fixed set of values (strings or numbers)."""

    options: tuple

    def __init__(self, *options):
        object.__setattr__(self, "options", tuple(options))

    def describe(self) -> str:
        return "one of " + ", ".join(_show(o) for o in self.options)

    def problem(self, value, path):
        ok = any(value == o and type(value) is type(o) for o in self.options)
        return None if ok else _wrong(path, self, value)


@dataclass(frozen=True)
class Text(Spec):
    """A non-empty string."""

    def describe(self) -> str:
        return "a non-empty string"

    def problem(self, value, path):
        return None if isinstance(value, str) and value else _wrong(path, self, value)


@dataclass(frozen=True)
class Maybe(Spec):
    """``null`` or ``spec``."""

    spec: Spec

    def describe(self) -> str:
        return f"null or {self.spec.describe()}"

    def problem(self, value, path):
        return None if value is None else self.spec.problem(value, path)


def _plural(text: str) -> str:
    """'an integer >= 1' -> 'integers >= 1' (for list descriptions)."""
    for one, many in (("an integer", "integers"), ("a real number", "real numbers"),
                      ("a finite real number", "finite real numbers"),
                      ("a non-empty string", "non-empty strings"), ("one of", "values among"),
                      ("a non-empty list", "non-empty lists"), ("a list", "lists")):
        if text.startswith(one):
            return many + text[len(one):]
    return f"entries each {text}"


@dataclass(frozen=True)
class ListOf(Spec):
    """A list of ``min_len`` to ``max_len`` items each allowed by ``item``; optionally
    without repeats (``unique``) and in increasing order (``increasing``)."""

    item: Spec
    min_len: int = 1
    max_len: int | None = None
    unique: bool = False
    increasing: bool = False

    def describe(self) -> str:
        size = "a non-empty list" if self.min_len == 1 else (
            "a list" if self.min_len == 0 else f"a list of at least {self.min_len} entries")
        if self.max_len is not None:
            size += f" of at most {self.max_len} entries"
        extra = "".join([", without repeats" if self.unique else "",
                         ", increasing" if self.increasing else ""])
        return f"{size} of {_plural(self.item.describe())}{extra}"

    def problem(self, value, path):
        if not isinstance(value, list) or len(value) < self.min_len or (
                self.max_len is not None and len(value) > self.max_len):
            return _wrong(path, self, value)
        for i, v in enumerate(value):
            bad = self.item.problem(v, f"{path}[{i}]")
            if bad:
                return bad
        if self.unique and len({_show(v) for v in value}) != len(value):
            return _wrong(path, self, value)
        if self.increasing and any(not a < b for a, b in zip(value[:-1], value[1:])):
            return _wrong(path, self, value)
        return None


@dataclass(frozen=True)
class Fields(Spec):
    """A JSON object with known entries: each present entry is checked by its spec, an
    unknown entry is refused, and the entries of ``required`` must be present."""

    specs: Mapping[str, Spec]
    required: tuple[str, ...] = ()

    def describe(self) -> str:
        return "an object with entries " + ", ".join(self.specs)

    def problem(self, value, path):
        if not isinstance(value, Mapping):
            return _wrong(path, self, value)
        for key in value:
            if key not in self.specs:
                return (f"{path}.{key}", f"is not an entry of {path} (allowed: "
                        f"{', '.join(self.specs)})")
        for key in self.required:
            if key not in value:
                return f"{path}.{key}", f"is required in {path}"
        for key, spec in self.specs.items():
            if key in value:
                bad = spec.problem(value[key], f"{path}.{key}")
                if bad:
                    return bad
        return None


@dataclass(frozen=True)
class MapOf(Spec):
    """A non-empty JSON object whose keys satisfy ``key`` (checked on the key parsed as JSON,
    so ``"30"`` is the integer 30) and whose values satisfy ``value``."""

    value: Spec
    key: Spec | None = None

    def describe(self) -> str:
        keys = "" if self.key is None else (
            f" with keys among {', '.join(_show(o) for o in self.key.options)},"
            if isinstance(self.key, Choice) else f" with keys {_plural(self.key.describe())},")
        return f"a non-empty object{keys} whose values are each {self.value.describe()}"

    def problem(self, value, path):
        if not isinstance(value, Mapping) or not value:
            return _wrong(path, self, value)
        for k, v in value.items():
            if self.key is not None:
                try:
                    parsed = json.loads(k)
                except (TypeError, ValueError):
                    parsed = k
                if self.key.problem(parsed, path):
                    return f"{path}.{k}", f"is not a valid key of {path}: keys must be " \
                                          f"{_plural(self.key.describe())}"
            bad = self.value.problem(v, f"{path}.{k}")
            if bad:
                return bad
        return None


_OPS: dict[str, Callable[[Any, Any], bool]] = {
    "<=": operator.le, "<": operator.lt, ">=": operator.ge, ">": operator.gt}


@dataclass(frozen=True)
class Relation:
    """``left op right`` between two top-level entries (``Relation("k", "<=", "T")``); an
    entry that is a list is compared through its largest (``<``, ``<=``) or smallest value."""

    left: str
    op: str
    right: str

    def problem(self, config: Mapping, overrides: Mapping = {}) -> tuple[str, str] | None:
        if self.left not in config or self.right not in config:
            return None
        a, b = config[self.left], config[self.right]
        lo = self.op in ("<", "<=")
        a_ = (max(a) if lo else min(a)) if isinstance(a, list) and a else a
        b_ = (min(b) if lo else max(b)) if isinstance(b, list) and b else b
        try:
            ok = _OPS[self.op](a_, b_)
        except TypeError:
            return None  # the entries' own specs report the type
        if ok:
            return None
        if _overridden(self.left, overrides) is None and \
                _overridden(self.right, overrides) is not None:  # blame what the user set
            flip = {"<=": ">=", "<": ">", ">=": "<=", ">": "<"}[self.op]
            return self.right, f"must be {flip} {self.left} = {_show(a)}, got {_show(b)}"
        return self.left, f"must be {self.op} {self.right} = {_show(b)}, got {_show(a)}"


def _overridden(path: str, overrides: Mapping[str, Any]) -> str | None:
    """The override key that set ``path`` (itself, or an enclosing entry), if any."""
    base = path.split("[")[0]
    for key in overrides:
        if base == key or base.startswith(key + "."):
            return key
    return None


def _where(path: str, overrides: Mapping[str, Any]) -> str:
    if _overridden(path, overrides) is not None:
        return f"--set {path}"
    if overrides:
        sets = ", ".join(f"{k}={_show(v)}" for k, v in overrides.items())
        return f"config entry {path} (derived with --set {sets})"
    return f"config entry {path}"


def check_config(name: str, config: Mapping[str, Any], ranges: Mapping[str, Spec], *,
                 relations: Sequence[Relation | Check] = (),
                 largest_array: Callable[[Mapping], tuple[float, str] | None] | None = None,
                 overrides: Mapping[str, Any] | None = None,
                 skip: Sequence[str] = ("seed", "scale", "overrides")) -> None:
    """Check ``config`` of experiment ``name`` against its declared ranges.

    Entries without a declaration are not checked here (the tests require every entry of
    every catalog experiment to be declared). Raises ``ValueError`` with one line naming the
    entry (``--set KEY`` when the user set it) and the allowed range, or saying that the
    largest array cannot fit in the memory available.
    """
    overrides = dict(overrides or {})
    for key, value in config.items():
        if key in skip or key not in ranges:
            continue
        bad = ranges[key].problem(value, key)
        if bad:
            path, sentence = bad
            raise ValueError(f"{_where(path, overrides)}: {sentence}")
    for rel in relations:
        bad = rel.problem(config, overrides)
        if bad:
            path, sentence = bad
            raise ValueError(f"{_where(path, overrides)}: {sentence}")
    if largest_array is None:
        return
    estimate = largest_array(config)
    if estimate is None:
        return
    n_bytes, what = estimate
    available = available_memory_bytes()
    if available is not None and n_bytes > available:
        sets = (" (with --set " + ", ".join(f"{k}={_show(v)}" for k, v in overrides.items())
                + ")") if overrides else ""
        raise ValueError(f"{name}{sets}: the largest array, {what}, needs {_human(n_bytes)}, "
                         f"more than the {_human(available)} of memory available")


@dataclass(frozen=True)
class Check:
    """A check that needs several entries: ``fn(config)`` returns ``None`` when the config is
    fine, else a sentence (``"Region B is empty for T=8, q=0.875 ..."``); an exception raised
    by ``fn`` is reported the same way. The message names the first of ``entry`` (one name
    or a tuple) that the user set, else the first."""

    entry: str | tuple[str, ...]
    fn: Callable[[Mapping], str | None]

    def problem(self, config: Mapping, overrides: Mapping = {}) -> tuple[str, str] | None:
        try:
            sentence = self.fn(config)
        except (ValueError, TypeError, KeyError, OverflowError) as exc:
            sentence = str(exc)
        if sentence is None:
            return None
        entries = (self.entry,) if isinstance(self.entry, str) else self.entry
        named = next((e for e in entries if _overridden(e, overrides) is not None), entries[0])
        return named, sentence
