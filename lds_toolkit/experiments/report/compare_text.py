"""``report --compare`` for people (:func:`to_text`) and as strict JSON (:func:`to_json`).

The text is a page: a **summary** first (how many experiments differ, by round-off only or
not; the cause common to them: config, environment, code; how many verdicts kept or changed,
and whether each change was expected at that scale), then per experiment one line with its
label and cause and its :data:`TOP` largest differences, each quantity labelled
``round-off`` or ``differs`` and named readably (``steps/1024[seed 10]``), and every changed
verdict with why it changed. ``full=True`` (``--all``) lists every differing quantity and
every environment entry. The JSON holds everything, non-finite numbers as the strings
``"nan"``, ``"inf"``, ``"-inf"`` (JSON has no NaN).
"""

from __future__ import annotations

import json
import re
import textwrap
from collections.abc import Sequence
from typing import Any

from ..._jsonable import finite_json
from ..claims import format_value
from ..numbers import format_number
from .quantity_diff import STRUCTURAL

#: Differences shown per experiment by default (``--all``: every one).
TOP = 3
#: Config entries shown with their values by default (the rest by key).
CONFIG_SHOWN = 3


def _value(x) -> str:
    return x if isinstance(x, str) else format_value(x)


def _pair(q) -> str:
    """``a -> b``, with more digits where three significant ones look the same."""
    a, b = _value(q.a), _value(q.b)
    if a == b and isinstance(q.a, float) and isinstance(q.b, float):
        a, b = f"{q.a:.10g}", f"{q.b:.10g}"
    return f"{a} -> {b}"


def _size(q) -> str:
    if q.kind in STRUCTURAL:
        return q.kind
    if q.kind == "other":
        return "changed" if q.rel else "same"
    return format_number(q.rel) if q.rel >= 0.01 else f"{q.rel:.1e}"


def _quantity_line(q) -> str:
    label = "round-off" if q.roundoff else "differs"
    where = "" if q.kind in ("only in A", "only in B") else f": {_pair(q)}"
    return f"{_size(q):>9}  {label:<9}  {q.name or q.path}{where}"


def _groups(diff) -> list[list]:
    """The differing quantities grouped by name up to the seed (``x[seed 3]`` and
    ``x[seed 7]`` together) and label, in the order of each group's largest."""
    groups: dict[tuple[str, bool], list] = {}
    for q in diff:
        key = (re.sub(r"\[seed \d+\]", "[seed *]", q.name or q.path), q.roundoff)
        groups.setdefault(key, []).append(q)
    return list(groups.values())


def _causes(c, full: bool) -> list[str]:
    """What differs around the numbers of one experiment: config, environment, code."""
    out = [f"{k.removeprefix('config/')} {_value(a)} -> {_value(b)}" for k, a, b in c.config]
    env = [(k, a, b) for k, a, b in c.environment]
    if env and env[0][0] == "environment":
        out.append(f"environment {env[0][1]} in A, {env[0][2]} in B")
    elif env and full:
        out += [f"environment {k}: {_value(a)} -> {_value(b)}" for k, a, b in env]
    elif env:
        out.append("environment (" + ", ".join(k for k, _, _ in env) + ")")
    if c.code_versions[0] != c.code_versions[1]:
        if not c.code_differs:
            what = "not recorded which part"
        elif full:
            what = "; ".join(c.code_differs)
        else:  # the names only, a few: --all gives every one with its digests
            names = [d.split(" (")[0] for d in c.code_differs]
            what = f"{len(names)} differ: " + ", ".join(names[:3]) + (
                f" and {len(names) - 3} more" if len(names) > 3 else "")
        out.append(f"code version {c.code_versions[0]} -> {c.code_versions[1]} ({what})")
    return out


def _verdict_counts(comparisons) -> str:
    same = sum(c.verdicts_same for c in comparisons)
    changed = [note for c in comparisons for claim, _, _ in c.verdicts
               for note in [c.verdict_notes.get(claim, (None, ""))]]
    text = f"verdicts: {same} same, {len(changed)} changed"
    if changed:
        expected = sum(e is True for e, _ in changed)
        unexpected = sum(e is False for e, _ in changed)
        parts = [f"{expected} expected at their scale", f"{unexpected} not expected"]
        unjudged = len(changed) - expected - unexpected
        if unjudged:
            parts.append(f"{unjudged} not judged on one side")
        text += " (" + ", ".join(parts) + ")"
    return text


def to_text(comparisons: Sequence[Any], dir_a: str, dir_b: str, width: int = 100, *,
            full: bool = False, top: int = TOP) -> str:
    """The comparisons for people, at most ``width`` columns (module docstring): a summary,
    then per experiment its label, cause and ``top`` largest differences (every one with
    ``full``), and every verdict that changed, with whether that was expected."""
    def wrap(text: str, first: str = "  ", rest: str = "      ") -> list[str]:
        return textwrap.wrap(text, width, initial_indent=first, subsequent_indent=rest,
                             break_on_hyphens=False, break_long_words=True) or [first]

    out = wrap(f"A: {dir_a}", "", "   ") + wrap(f"B: {dir_b}", "", "   ")
    labels = [c.label for c in comparisons]
    counts = {lab: labels.count(lab) for lab in dict.fromkeys(labels)}
    plural = {"differs": "differ"}
    out += wrap(f"{len(comparisons)} experiments compared: " + ", ".join(
        f"{n} {plural.get(lab, lab) if n > 1 else lab}" for lab, n in counts.items()), "", "    ")
    compared = [c for c in comparisons if c.present == "both" and not c.problems]
    causes = {c.name: _causes(c, full) for c in compared}
    common = [x for x in causes[compared[0].name] if all(x in causes[c.name] for c in compared)
              ] if compared else []
    if common:
        out += wrap("cause in every one compared: " + "; ".join(common), "", "    ")
    elif compared and not any(causes.values()):
        out += wrap("no config, environment or code difference recorded", "", "    ")
    out += wrap(_verdict_counts(comparisons), "", "    ")
    if not full:
        out += wrap(f"per experiment its {top} largest differences beyond round-off (a "
                    "quantity of every seed counted once); --all lists every one", "", "    ")
    for c in comparisons:
        out.append("")
        if c.problems or c.present != "both":
            why = f": {'; '.join(c.problems)}" if c.problems else ""
            out += wrap(f"{c.name}: {c.label}{why}", "", "    ")
            continue
        diff = c.differing
        n_round = sum(q.roundoff for q in diff)
        own = [x for x in causes[c.name] if x not in common]
        keys = {f"{k.removeprefix('config/')} {_value(a)} -> {_value(b)}":
                k.removeprefix("config/") for k, a, b in c.config}
        own_config = [x for x in own if x in keys]
        if len(own_config) > CONFIG_SHOWN and not full:  # the keys of the rest only
            rest = own_config[CONFIG_SHOWN:]
            own = [x for x in own if x not in rest]
            own.insert(CONFIG_SHOWN, f"and {len(rest)} more config entries ("
                       + ", ".join(keys[x] for x in rest) + ")")
        cause = f"; cause: {'; '.join(own)}" if own else ""
        if not diff:
            head = f"{c.name}: identical ({len(c.quantities)} quantities){cause}"
        else:
            head = (f"{c.name}: {c.label}, {len(diff)} of {len(c.quantities)} quantities "
                    f"differ, {n_round} within round-off{cause}")
        out += wrap(head, "", "    ")
        out += [line for note in c.notes for line in wrap(note)]
        if full:
            out += [line for q in diff for line in wrap(_quantity_line(q), "  ", " " * 24)]
        else:
            groups = [g for g in _groups(diff) if not g[0].roundoff][:top]
            for g in groups:
                more = "" if len(g) == 1 else (
                    f" (+{len(g) - 1} seed{'s' if len(g) > 2 else ''})")
                out += wrap(_quantity_line(g[0]) + more, "  ", " " * 24)
        unjudged: dict[str, list[str]] = {}  # one line per reason a claim was not judged
        for claim, a, b in c.verdicts:
            expected, why = c.verdict_notes.get(claim, (None, ""))
            if expected is None and why and not full:
                unjudged.setdefault(why, []).append(f"[{claim}] {a} -> {b}")
                continue
            out += wrap(f"verdict [{claim}]: {a} -> {b}" + (f"; {why}" if why else ""))
        for why, claims in unjudged.items():
            out += wrap(f"{len(claims)} verdict{'s' if len(claims) > 1 else ''} "
                        f"{'; '.join(claims)}: {why}")
    return "\n".join(out) + "\n"


def to_json(comparisons: Sequence[Any]) -> str:
    """The comparisons as strict JSON (a list of ``ExperimentComparison.to_dict()``; NaN and
    infinities as strings, :func:`~lds_toolkit._jsonable.finite_json`)."""
    return json.dumps(finite_json([c.to_dict() for c in comparisons]), indent=1,
                      allow_nan=False, default=str) + "\n"
