"""What ``lds-toolkit report`` prints and writes: the judged rows as text for people, Markdown
and JSON, and the docs' reproduction table.

The rows come from :mod:`.verdicts` (:func:`~.verdicts.build_report`, one
:class:`~.verdicts.ReportRow` per declared claim). :func:`to_text` prints one block per
experiment in at most 100 columns; :func:`write_report` writes ``OUT/report.md``
(:func:`to_markdown`) and ``OUT/report.json`` (:func:`to_json`); :func:`reproduction_table`
puts several scales' reports side by side, as the docs' home page shows the committed runs.
"""

from __future__ import annotations

import json
import textwrap
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..._jsonable import finite_json
from ..claims import FAILS, HOLDS, NOT_RUN, ClaimResult, format_value
from .verdicts import (
    FRAGILE,
    MODIFIED,
    PAPER_ERROR,
    PAPER_ERROR_NOT,
    ReportRow,
    build_report,
)

#: ``--format`` choices of ``lds-toolkit report``.
FORMATS = ("text", "markdown", "json")
#: Columns of the text report.
WIDTH = 100


def _spread_text(result: ClaimResult) -> str:
    if result.spread is None:
        return ""
    lo, hi = result.spread
    return f"{format_value(lo)} – {format_value(hi)}"


def _cells(row: ReportRow) -> list[str]:
    r, c = row.result, row.result.claim
    value = "" if r.verdict == NOT_RUN else _with_margin(r)
    verdict = row.verdict
    if row.status == MODIFIED:
        verdict += f": {_changes_text(row.changes)}"
    return [row.experiment, f"{c.paper}, {c.where}", c.statement, value, _spread_text(r),
            c.describe_test(), r.scale or "", verdict]


def _with_margin(result: ClaimResult) -> str:
    """Our number and, where the claim has one, its margin (``"0.022; margin 2.1"``)."""
    margin = result.describe_margin().removeprefix("fragile: ")
    return result.describe_value() + (f"; {margin}" if margin else "")


HEADERS = ["experiment", "paper", "claim", "ours", "seeds (min – max)", "threshold", "scale",
           "verdict"]


def to_markdown(rows: list[ReportRow]) -> str:
    """The rows as a Markdown table."""
    lines = ["| " + " | ".join(HEADERS) + " |", "|" + "---|" * len(HEADERS)]
    for row in rows:
        cells = [x.replace("|", "\\|") for x in _cells(row)]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def _changes_text(changes: Mapping[str, Mapping[str, Any]]) -> str:
    return ", ".join(f"{k}={format_value(v['value'])} (standard "
                     f"{format_value(v['standard'])})" for k, v in changes.items())


def _counts(rows: list[ReportRow]) -> str:
    order = (HOLDS, FAILS, MODIFIED, PAPER_ERROR, PAPER_ERROR_NOT, NOT_RUN)
    counts = {v: sum(r.status == v for r in rows) for v in order}
    words = {HOLDS: "hold", FAILS: "fail", NOT_RUN: "not run"}
    parts = [f"{counts[v]} {words.get(v, v)}" for v in order
             if counts[v] or v in (HOLDS, FAILS, NOT_RUN)]
    fragile = sum(r.status == HOLDS and r.result.fragile for r in rows)
    if fragile:
        parts[0] += f" ({fragile} fragile: margin below one spread over seeds)"
    return f"{len(rows)} claims: " + ", ".join(parts)


#: The widest verdict column of the text report (longer verdicts overflow it).
VERDICT_COLUMN = 30


def _column(row: ReportRow) -> str:
    """The verdict in the text report's column: ``not run`` for a run whose files cannot be
    read (the reason follows in the text, once)."""
    return NOT_RUN if row.status == NOT_RUN else row.verdict


def unjudged(rows: list[ReportRow]) -> dict[str, str]:
    """``{experiment: why}`` for every experiment whose results are there but could not be
    judged: unreadable files, or numbers their ``run.json`` does not vouch for (``lds-toolkit
    report`` exits 1 when there is one)."""
    out: dict[str, str] = {}
    for row in rows:
        msg = row.result.message if row.status == NOT_RUN else ""
        if msg.startswith(("unreadable", "not trusted")):
            out.setdefault(row.experiment, msg)
    return out


def to_text(rows: list[ReportRow], width: int = WIDTH) -> str:
    """The rows for people, at most ``width`` columns: one block per experiment (how it ran,
    its config changes), then per claim a line with the verdict, where in the paper, our
    number against the test and the spread over seeds, and the claim itself, wrapped."""
    out: list[str] = []
    indent = " " * 6

    def wrap(text: str, first: str, rest: str) -> list[str]:
        return textwrap.wrap(text, width, initial_indent=first, subsequent_indent=rest,
                             break_on_hyphens=False) or [first.rstrip()]

    by_experiment: dict[str, list[ReportRow]] = {}
    for row in rows:
        by_experiment.setdefault(row.experiment, []).append(row)
    for name, group in by_experiment.items():
        scale = next((r.result.scale for r in group if r.result.scale), None)
        run = group[0].run or {}
        how = [f"{scale} scale" if scale else "no run"]
        if run.get("total_seconds") is not None:
            how.append(f"{run['total_seconds']:.0f} s")
        out.append("")
        out.extend(wrap(f"{name} ({', '.join(how)})", "", "    "))
        if group[0].changes:
            out.extend(wrap("config modified: " + _changes_text(group[0].changes) + "; its "
                            "claims are judged as 'modified config'", "  ", "    "))
        # the column holds the short verdicts; a longer one (a modified config's) is not
        # allowed to squeeze the wrapped text into a narrow column
        verdict_w = min(max(len(_column(r)) for r in group), VERDICT_COLUMN)
        for row in group:
            r, c = row.result, row.result.claim
            if r.verdict == NOT_RUN:
                detail = r.message or "not run"
            elif c.records_paper_error:
                detail = (f"ours {format_value(r.value)}, the paper's statement needs "
                          f"{c.describe_test()}")
            else:
                detail = f"{format_value(r.value)} {c.describe_test()}"
                spread = _spread_text(r)
                if spread:
                    detail += f" (seeds {spread})"
                margin = r.describe_margin().removeprefix("fragile: ")
                if margin:
                    detail += f", {margin}"
            head = f"  {_column(row):<{verdict_w}}  {c.where} [{c.id}]: {detail}"
            out.extend(wrap(head, "", " " * (verdict_w + 4)))
            out.extend(wrap(c.statement, indent, indent))
            if row.status == PAPER_ERROR:
                out.extend(wrap(f"the paper's error: {c.note}", indent, indent))
    out.append("")
    out.extend(wrap(_counts(rows), "", "    "))
    return "\n".join(out).lstrip("\n") + "\n"


def to_json(rows: list[ReportRow]) -> str:
    """The rows as strict JSON (a list of :meth:`ReportRow.to_dict`), as ``report.json``:
    NaN and infinities as the strings ``"nan"``, ``"inf"``, ``"-inf"`` (JSON has none)."""
    return json.dumps(finite_json([r.to_dict() for r in rows]), indent=1,
                      allow_nan=False) + "\n"


def write_report(rows: list[ReportRow], out: str | Path) -> tuple[Path, Path]:
    """Write ``out/report.md`` and ``out/report.json``; return their paths."""
    from ..._atomic import atomic_write_text

    out = Path(out)
    md, js = out / "report.md", out / "report.json"
    atomic_write_text(md, to_markdown(rows))
    atomic_write_text(js, to_json(rows))
    return md, js


def _scale_cell(row: ReportRow) -> str:
    r = row.result
    if r.verdict == NOT_RUN:
        return "—"
    spread = _spread_text(r)
    verdict = FRAGILE if row.status == HOLDS and r.fragile else row.status
    if verdict in (HOLDS, FAILS, FRAGILE) and not r.expected:
        verdict = f"{verdict} (not expected at this scale)"
    elif verdict == MODIFIED:
        verdict = f"{verdict} ({_changes_text(row.changes)})"
    # "[" as an entity: a bracketed list such as "[[11, 2.2], [83.7, 12]]" would otherwise read
    # as a Markdown reference link (MkDocs' autorefs reports it, strict builds fail)
    value = r.describe_value().replace("[", "&#91;")
    margin = r.describe_margin().removeprefix("fragile: ")
    return (f"**{verdict}**<br>{value}" + (f" (seeds {spread})" if spread else "")
            + (f"; {margin}" if margin else ""))


def reproduction_table(roots: Mapping[str, str | Path],
                       names: list[str] | None = None) -> str:
    """One Markdown table of every declared claim judged at several scales.

    ``roots`` maps a scale to the output root that holds its runs (``{"quick":
    "docs/results/quick", "paper": ...}``); each claim gets one column per scale that has at
    least one run, with the verdict, our number and its spread over seeds, or ``—`` where
    that scale has no run of the experiment. The docs' reproduction table is this function
    applied to the committed numbers.
    """
    reports = {s: build_report(roots[s], names) for s in roots}
    for s, rows in reports.items():
        for row in rows:
            if row.result.scale not in (None, s):
                raise ValueError(f"{roots[s]}/{row.experiment} holds a "
                                 f"{row.result.scale!r} run, not {s!r}")
    scales = [s for s, rows in reports.items() if any(r.result.verdict != NOT_RUN
                                                        for r in rows)]
    headers = ["experiment", "claim", "threshold", *scales]
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    first = next(iter(reports.values()), [])
    for i, row in enumerate(first):
        c = row.result.claim
        cells = [f"`{row.experiment}`<br>{c.paper}, {c.where}", c.statement,
                 c.describe_test()]
        cells += [_scale_cell(reports[s][i]) for s in scales]  # same registry, same order
        lines.append("| " + " | ".join(x.replace("|", "\\|") for x in cells) + " |")
    return "\n".join(lines) + "\n"
