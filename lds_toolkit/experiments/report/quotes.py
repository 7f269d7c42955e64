"""Numbers the docs quote from committed runs, read from the runs when the site is built.

A page that explains an experiment quotes its numbers. Typed by hand they go stale the day
the run is redone; :func:`render` replaces each *quote* in a text by the number read from the
runs under a results root (``docs/results/<scale>/<name>/summary.json`` and ``run.json``),
and raises :class:`QuoteError` naming the quote when it cannot: a missing run, path or claim
fails the docs build (``docs/_site/hooks.py`` renders every page) instead of printing a
number nobody computed.

Syntax: ``{{ FUNCTION SCALE/NAME ARGUMENT... }}`` (``{{ median quick/cloze
mse_seeds/s4+attention }}``), ``PATH`` a summary path as the claims
write it (``/``-separated, list indices as numbers,
:func:`~lds_toolkit.experiments.claims.lookup`), ``FMT`` an optional Python format
specification (default ``.3g``; ``.1f``, ``.0%``, ``,d``):

``value SCALE/NAME PATH [FMT]``
    The number at ``PATH`` of ``summary.json``; a list or dict: its entries (a dict's values),
    comma-separated, in order.
``median SCALE/NAME PATH [FMT]``
    The median of a per-seed list with its bootstrap 95 % interval: ``0.022 [0.0071, 0.038]``
    (:func:`~lds_toolkit.experiments.claims.bootstrap_median_interval`; non-finite seeds left
    out).
``range SCALE/NAME PATH [FMT]``
    ``min–max`` of the finite numbers at ``PATH`` (nested lists and dicts included); one
    number when both print the same.
``sum SCALE/NAME PATH [FMT]``
    The sum of the finite numbers at ``PATH`` (nested lists and dicts included): a count
    over seeds, ``split_count/focus/1024/previous`` -> ``457`` (integers print every digit
    unless ``FMT`` says otherwise).
``count SCALE/NAME PATH OP THRESHOLD``
    How many entries of a per-seed list satisfy ``OP THRESHOLD`` (``<``, ``<=``, ``>``,
    ``>=``): ``7 of 10``. ``count SCALE/NAME PATH`` counts the ``true`` entries of a list of
    booleans (``training/s4/plateaued``).
``ratio SCALE/NAME PATH_A PATH_B [FMT]``
    The number at ``PATH_A`` over the one at ``PATH_B`` (a factor between two quantities
    of one run).
``claim SCALE/NAME CLAIM_ID``
    The claim's number as the report gives it: ``median 26.3 [11, 83.7], 15 of 16 seeds``.
``verdict SCALE/NAME CLAIM_ID``
    Its verdict on that run (``holds``, ``fails``, ``holds, fragile``; the declared scales are
    not consulted: ``fails`` is a verdict, not an error).
``seeds SCALE/NAME CLAIM_ID``
    The claim over the base seeds of the seed sweep committed beside the runs
    (``SCALE/base-seeds.json``, written by ``docs/build_seed_sweep.py``): ``holds on 10 of
    10 base seeds (0-9); medians 9.29–47.7, shares 13–16 of 16``.
``sweep SCALE/FILE``
    A whole seed sweep (``SCALE/FILE.json``, written by ``docs/build_seed_sweep.py
    --record``): ``270 of 270 verdicts hold (27 claims of 8 experiments, base seeds
    10-19)``.
``run SCALE/NAME KEY [FMT]``
    An entry of ``run.json`` (``sweep_seconds``, ``date``, ``jobs``; a list, such as
    ``load_average`` at the start and end of the sweep, as ``a–b``). ``{{ run
    medium/cloze date date }}`` prints the day of the run, ``2026-11-25``; without the
    format, the timestamp as recorded.
``total SCALE/NAME,NAME... KEY [FMT]``
    The sum of a numeric ``run.json`` entry over several runs of one scale (``{{ total
    medium/cloze,las-ablation sweep_seconds min:.1f }}``: their sweeps together).
``bench DIR/FILE.json PATH [FMT]``
    The number at ``PATH`` of a committed benchmark run, a JSON file under the results root
    (``cpu-evidence/neural_layers_las.json``, written by a script of ``benchmarks/``); a list
    or dict as for ``value``. ``value``, ``median``, ``range``, ``count`` and ``ratio`` also
    take such a file in place of ``SCALE/NAME``: ``{{ ratio cpu-evidence/x.json
    results/las/16384/time_s results/sdpa/16384/time_s }}``.

Every number prints in the house style of :mod:`lds_toolkit.experiments.numbers`
(:func:`format_number`), the one the report and the claims print in too:

* a duration in seconds takes a unit in ``FMT``: ``min:.1f`` divides by 60 and appends
  `` min`` (``43.3 min``), likewise ``h`` (hours), ``s``, ``ms`` and ``us``
  (micro-seconds, written ``µs``); ``x:.2f`` appends ``×`` to a ratio;
* a share (``.1%``) prints with a space before the sign, ``99.8 %``, as the pages' prose
  writes it: a rendered number reads like the typed definitions beside it;
* e-notation prints compactly: ``1.29e6``, ``1.6e-4`` (``.1e`` gives the latter), never
  ``1.29e+06``;
* ``date`` prints an ISO 8601 timestamp as its day.

An opening bracket is written ``&#91;`` (Markdown would read ``[a] [b]`` as a link).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from ..claims import PathError, bootstrap_median_interval, evaluate_claim, lookup
from ..numbers import UNITS, NumberFormatError
from ..numbers import format_number as _format_number

__all__ = ["FUNCTIONS", "QuoteError", "Runs", "UNITS", "format_number", "quotes_in", "render",
           "render_quote"]
from ..store.outputs import RUN_INFO_MAX_BYTES, SUMMARY_MAX_BYTES, read_json_file

#: A quote: ``{{ function scale/name arguments }}``.
QUOTE = re.compile(r"\{\{\s*([a-z]+)\s+([^{}]*?)\s*\}\}")
_OPS: dict[str, Callable[[float, float], bool]] = {
    "<": lambda a, b: a < b, "<=": lambda a, b: a <= b,
    ">": lambda a, b: a > b, ">=": lambda a, b: a >= b}


class QuoteError(ValueError):
    """A quote that cannot be rendered (unknown function, run, path or claim; bad format)."""


class Runs:
    """The committed runs under ``root`` (``root/<scale>/<name>/``), read once each."""

    def __init__(self, root: str | Path):
        self.root = Path(root)
        self._files: dict[tuple[str, str], dict] = {}

    def read(self, run: str, file: str) -> dict:
        """``summary.json`` or ``run.json`` of ``run`` (``"quick/cloze"``)."""
        key = (run, file)
        if key not in self._files:
            if run.count("/") != 1 or ".." in run:
                raise QuoteError(f"{run!r} is not SCALE/NAME")
            limit = SUMMARY_MAX_BYTES if file == "summary.json" else RUN_INFO_MAX_BYTES
            try:
                self._files[key] = read_json_file(self.root / run / file, limit)
            except FileNotFoundError:
                raise QuoteError(f"no committed run {run!r} ({self.root / run / file} is "
                                 "missing)") from None
            except ValueError as exc:
                raise QuoteError(f"{run}/{file}: {exc}") from None
        return self._files[key]

    def summary(self, run: str) -> dict:
        """``summary.json`` of ``run``; for ``DIR/FILE.json``, that benchmark file."""
        if run.endswith(".json"):
            return self.bench(run)
        return self.read(run, "summary.json")

    def bench(self, file: str) -> dict:
        """A committed benchmark JSON under the root (``cpu-evidence/FILE.json``)."""
        if ".." in file.split("/") or not file.endswith(".json"):
            raise QuoteError(f"bench: {file!r} is not DIR/FILE.json under the results root")
        key = (file, "")
        if key not in self._files:
            try:
                self._files[key] = read_json_file(self.root / file, SUMMARY_MAX_BYTES)
            except FileNotFoundError:
                raise QuoteError(f"no committed benchmark run {self.root / file}") from None
            except ValueError as exc:
                raise QuoteError(f"{file}: {exc}") from None
        return self._files[key]

    def at(self, run: str, path: str):
        try:
            return lookup(self.summary(run), path)
        except PathError as exc:
            raise QuoteError(f"{run}: {exc.args[0]}") from None


def format_number(x, fmt: str = ".3g") -> str:
    """:func:`lds_toolkit.experiments.numbers.format_number`, failing with a
    :class:`QuoteError` (a quote whose format does not apply to its number)."""
    try:
        return _format_number(x, fmt)
    except NumberFormatError as exc:
        raise QuoteError(str(exc)) from None


def _numbers(value, what: str) -> list[float]:
    flat = list(_flatten(value))
    bad = [v for v in flat if isinstance(v, bool) or not isinstance(v, int | float)]
    if bad:
        raise QuoteError(f"{what} holds {bad[0]!r}, not only numbers")
    return [float(v) for v in flat]


def _flatten(v):
    """The leaves of nested lists and dicts (a dict's values in order)."""
    if isinstance(v, list | dict):
        for x in (v.values() if isinstance(v, dict) else v):
            yield from _flatten(x)
    else:
        yield v


def _fmt_arg(args: list[str], i: int) -> str:
    return args[i] if len(args) > i else ".3g"


def _value(runs: Runs, run: str, args: list[str]) -> str:
    value = runs.at(run, args[0])
    fmt = _fmt_arg(args, 1)
    if isinstance(value, list | dict):  # entries in order (a dict: its values)
        return ", ".join(format_number(v, fmt) for v in _flatten(value))
    return format_number(value, fmt)


def _median(runs: Runs, run: str, args: list[str]) -> str:
    vals = [v for v in _numbers(runs.at(run, args[0]), args[0]) if math.isfinite(v)]
    if not vals:
        raise QuoteError(f"{run}: {args[0]!r} has no finite value")
    fmt = _fmt_arg(args, 1)
    lo, hi = bootstrap_median_interval(np.asarray(vals))
    return (f"{format_number(float(np.median(vals)), fmt)} "
            f"[{format_number(lo, fmt)}, {format_number(hi, fmt)}]")


def _range(runs: Runs, run: str, args: list[str]) -> str:
    vals = [v for v in _numbers(runs.at(run, args[0]), args[0]) if math.isfinite(v)]
    if not vals:
        raise QuoteError(f"{run}: {args[0]!r} has no finite value")
    fmt = _fmt_arg(args, 1)
    lo, hi = format_number(min(vals), fmt), format_number(max(vals), fmt)
    return lo if lo == hi else f"{lo}–{hi}"


def _sum(runs: Runs, run: str, args: list[str]) -> str:
    flat = list(_flatten(runs.at(run, args[0])))
    vals = [v for v in _numbers(flat, args[0]) if math.isfinite(v)]
    if not vals:
        raise QuoteError(f"{run}: {args[0]!r} has no finite value")
    if all(isinstance(v, int) for v in flat):  # a count: all of its digits unless told
        return format_number(sum(flat), args[1] if len(args) > 1 else "d")
    return format_number(math.fsum(vals), _fmt_arg(args, 1))


def _count(runs: Runs, run: str, args: list[str]) -> str:
    if len(args) == 1:
        flags = list(_flatten(runs.at(run, args[0])))
        if not all(isinstance(f, bool) for f in flags):
            raise QuoteError(f"{run}: {args[0]!r} is not a list of booleans (count it with "
                             "OP THRESHOLD)")
        return f"{sum(flags)} of {len(flags)}"
    if len(args) != 3 or args[1] not in _OPS:
        raise QuoteError(f"count needs PATH OP THRESHOLD with OP one of {list(_OPS)}, "
                         f"got {args}")
    try:
        threshold = float(args[2])
    except ValueError:
        raise QuoteError(f"count: threshold {args[2]!r} is not a number") from None
    vals = _numbers(runs.at(run, args[0]), args[0])
    k = sum(math.isfinite(v) and _OPS[args[1]](v, threshold) for v in vals)
    return f"{k} of {len(vals)}"


def _ratio(runs: Runs, run: str, args: list[str]) -> str:
    if len(args) not in (2, 3):
        raise QuoteError(f"ratio needs PATH_A PATH_B [FMT], got {args}")
    a, b = (runs.at(run, p) for p in args[:2])
    if not all(isinstance(v, int | float) and not isinstance(v, bool) for v in (a, b)):
        raise QuoteError(f"{run}: ratio of {a!r} and {b!r}: both must be numbers")
    if b == 0:
        raise QuoteError(f"{run}: ratio over {args[1]!r}, which is 0")
    return format_number(a / b, _fmt_arg(args, 2))


def _claim_result(runs: Runs, run: str, args: list[str]):
    from ..base import get_experiment

    name = run.split("/", 1)[1]
    try:
        exp = get_experiment(name)
    except ValueError as exc:
        raise QuoteError(str(exc)) from None
    claims = {c.id: c for c in exp.claims}
    if not args or args[0] not in claims:
        raise QuoteError(f"{name} declares no claim {args[0] if args else ''!r} "
                         f"(it has: {', '.join(claims)})")
    result = evaluate_claim(claims[args[0]], runs.summary(run))
    if result.verdict == "not run":
        raise QuoteError(f"{run}: claim {args[0]!r} cannot be judged: {result.message}")
    return result


def _claim(runs: Runs, run: str, args: list[str]) -> str:
    return _claim_result(runs, run, args).describe_value()


def _verdict(runs: Runs, run: str, args: list[str]) -> str:
    result = _claim_result(runs, run, args)
    return "holds, fragile" if result.fragile else result.verdict


def _run_entry(runs: Runs, run: str, args: list[str]) -> str:
    info = runs.read(run, "run.json")
    if args[0] not in info:
        raise QuoteError(f"{run}/run.json has no entry {args[0]!r}")
    value: Any = info[args[0]]
    if isinstance(value, list):
        return "–".join(format_number(v, _fmt_arg(args, 1)) for v in value)
    return format_number(value, _fmt_arg(args, 1))


def _total(runs: Runs, target: str, args: list[str]) -> str:
    scale, names = target.split("/", 1)
    total = 0.0
    for name in names.split(","):
        info = runs.read(f"{scale}/{name}", "run.json")
        value = info.get(args[0])
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise QuoteError(f"{scale}/{name}/run.json: {args[0]!r} is {value!r}, not a number")
        total += value
    return format_number(total, _fmt_arg(args, 1))


def _seeds(runs: Runs, run: str, args: list[str]) -> str:
    scale, name = run.split("/", 1)
    path = runs.root / scale / SEED_SWEEP
    sweep = _read_sweep(path)
    rows = (sweep.get("claims", {}).get(name) or {}).get(args[0]) if args else None
    if not rows:
        raise QuoteError(f"{path.name} has no claim {name}/{args[0] if args else ''!r}")
    held = [r for r in rows if r["verdict"] == "holds"]
    text = (f"holds on {len(held)} of {len(rows)} base seeds "
            f"({_seed_span([r['seed'] for r in rows])})")
    medians = [r["value"] for r in rows if isinstance(r.get("value"), int | float)]
    if medians:
        label = "medians" if rows[0].get("n_seeds") else "values"
        text += f"; {label} {format_number(min(medians))}–{format_number(max(medians))}"
    shares = [round(r["share"] * r["n_seeds"]) for r in rows if r.get("n_seeds")]
    if shares:
        text += f", {min(shares)}–{max(shares)} of {rows[0]['n_seeds']} seeds each"
    return text


def _seed_span(seeds: list[int]) -> str:
    seeds = sorted(seeds)
    if seeds == list(range(seeds[0], seeds[-1] + 1)):
        return f"{seeds[0]}-{seeds[-1]}"
    return ", ".join(map(str, seeds))


def _read_sweep(path: Path) -> dict:
    try:
        return read_json_file(path, SUMMARY_MAX_BYTES)
    except FileNotFoundError:
        raise QuoteError(f"no seed sweep {path} (python docs/build_seed_sweep.py)") from None
    except ValueError as exc:
        raise QuoteError(f"{path.name}: {exc}") from None


def _sweep(runs: Runs, run: str, args: list[str]) -> str:
    scale, name = run.split("/", 1)
    sweep = _read_sweep(runs.root / scale / f"{name}.json")
    rows = [r for claims in sweep.get("claims", {}).values() for rs in claims.values()
            for r in rs]
    if not rows:
        raise QuoteError(f"{name}.json judges no claim")
    held = sum(r["verdict"] == "holds" for r in rows)
    n_claims = sum(len(c) for c in sweep["claims"].values())
    return (f"{held} of {len(rows)} verdicts hold ({n_claims} claims of "
            f"{len(sweep['claims'])} experiments, base seeds {_seed_span(sweep['seeds'])})")


def _bench(runs: Runs, file: str, args: list[str]) -> str:
    data = runs.bench(file)
    try:
        value = lookup(data, args[0])
    except PathError as exc:
        raise QuoteError(f"{file}: {exc.args[0]}") from None
    fmt = _fmt_arg(args, 1)
    if isinstance(value, list | dict):
        return ", ".join(format_number(v, fmt) for v in _flatten(value))
    return format_number(value, fmt)


#: The seed sweep of a scale, beside its runs (``docs/results/quick/base-seeds.json``).
SEED_SWEEP = "base-seeds.json"

FUNCTIONS: dict[str, Callable[[Runs, str, list[str]], str]] = {
    "value": _value, "median": _median, "range": _range, "sum": _sum, "count": _count,
    "ratio": _ratio,
    "claim": _claim, "verdict": _verdict, "seeds": _seeds, "sweep": _sweep,
    "run": _run_entry, "bench": _bench, "total": _total}


#: quote functions whose SCALE/NAME names a whole file and that take no argument
WHOLE_FILE = ("sweep",)


def render_quote(runs: Runs, function: str, arguments: str) -> str:
    """One quote's text (``function`` and the rest of the quote, split on blanks)."""
    if function not in FUNCTIONS:
        raise QuoteError(f"unknown quote function {function!r} (known: {', '.join(FUNCTIONS)})")
    parts = arguments.split()
    if len(parts) < (1 if function in WHOLE_FILE else 2):
        raise QuoteError(f"{function} needs SCALE/NAME and an argument, got {arguments!r}")
    if "/" not in parts[0]:
        raise QuoteError(f"{function}: {parts[0]!r} is not SCALE/NAME")
    return FUNCTIONS[function](runs, parts[0], parts[1:])


def render(text: str, root: str | Path | Runs, where: str = "text") -> str:
    """``text`` with every quote replaced by its number (see the module docstring).

    Raises
    ------
    QuoteError
        Naming ``where``, the line and the quote, for the first quote that cannot be
        rendered.
    """
    runs = root if isinstance(root, Runs) else Runs(root)

    def one(m: re.Match) -> str:
        try:
            # "[" as an entity: "[1, 1] [[0.99, 1], [1, 1]]" would read as Markdown links
            return render_quote(runs, m.group(1), m.group(2)).replace("[", "&#91;")
        except QuoteError as exc:
            line = text.count("\n", 0, m.start()) + 1
            raise QuoteError(f"{where}, line {line}: {m.group(0)}: {exc}") from None

    return QUOTE.sub(one, text)


def quotes_in(text: str) -> list[str]:
    """Every quote of ``text``, as written."""
    return [m.group(0) for m in QUOTE.finditer(text)]
