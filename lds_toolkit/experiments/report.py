"""``lds-toolkit report``: every declared claim judged on the numbers under an output root.

For each registered experiment, :func:`build_report` reads ``OUT/NAME/summary.json`` (and
``run.json`` for how it ran), evaluates the experiment's :attr:`Experiment.claims` with
:func:`~lds_toolkit.experiments.claims.evaluate_claim` and returns one row per claim. The
rows print as a text table and are written as Markdown (``OUT/report.md``) and JSON
(``OUT/report.json``); the docs' reproduction table is the Markdown of the committed
numbers.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .base import list_experiments
from .claims import FAILS, HOLDS, NOT_RUN, ClaimResult, evaluate_claim, format_value
from .outputs import RUN_INFO_MAX_BYTES, SUMMARY_MAX_BYTES, file_digest, read_json_file


@dataclass(frozen=True)
class ReportRow:
    """One claim of one experiment, judged."""

    experiment: str
    result: ClaimResult
    run: dict[str, Any] | None

    @property
    def verdict(self) -> str:
        """``holds``/``fails``/``not run``; a claim measured at a scale it is not declared
        for says so (``fails (not expected at quick)``), and a run whose files cannot be read
        says why (``not run: unreadable (summary.json is a FIFO, not a regular file)``)."""
        r = self.result
        if r.verdict == NOT_RUN and r.message.startswith("unreadable"):
            return f"{NOT_RUN}: {r.message}"
        if r.verdict == NOT_RUN or r.expected:
            return r.verdict
        return f"{r.verdict} (not expected at {r.scale})"

    def to_dict(self) -> dict[str, Any]:
        d = {"experiment": self.experiment, **self.result.to_dict()}
        d["verdict_text"] = self.verdict
        if self.run:
            d["run"] = {k: self.run.get(k) for k in ("scale", "code_version", "date",
                                                     "total_seconds", "jobs")
                        if k in self.run}
        return d


def _read_json(path: Path, max_bytes: int) -> tuple[Any, str]:
    """``(value, "")``, ``(None, "")`` when absent, or ``(None, why)`` when unreadable (an odd
    file, oversize, not JSON: see :func:`~lds_toolkit.experiments.outputs.read_json_file`)."""
    try:
        value = read_json_file(path, max_bytes)
    except FileNotFoundError:
        return None, ""
    except ValueError as exc:
        return None, str(exc)
    if not isinstance(value, dict):
        return None, f"{path.name} holds a JSON {type(value).__name__}, not an object"
    return value, ""


def _vouched(outdir: Path, run: dict | None) -> str:
    """Empty when ``run.json`` vouches for ``summary.json`` (size and SHA-256 recorded by the
    run), else why the numbers are not trusted."""
    if run is None:
        return "no run.json: the run did not finish writing its outputs"
    files = run.get("files")
    want = files.get("summary.json") if isinstance(files, dict) else None
    if want is None:
        return "run.json does not vouch for summary.json (written by an older version)"
    try:
        got = file_digest(outdir / "summary.json", SUMMARY_MAX_BYTES)
    except OSError as exc:
        return f"summary.json unreadable ({getattr(exc, 'reason', None) or exc.strerror})"
    if got != want:
        recorded = want.get("bytes") if isinstance(want, dict) else want
        return (f"summary.json ({got['bytes']} bytes) differs from what run.json vouches for "
                f"({recorded!r} bytes)")
    return ""


def build_report(out: str | Path, names: list[str] | None = None) -> list[ReportRow]:
    """Rows for every claim of every experiment (or of ``names``) under ``out``.

    Only numbers that their run vouches for are judged: a ``summary.json`` whose size and
    SHA-256 differ from those ``run.json`` recorded (an edited, truncated or foreign file)
    gives ``not run`` with the reason."""
    out = Path(out)
    rows = []
    for name, exp in list_experiments().items():
        if names is not None and name not in names:
            continue
        summary, unreadable = _read_json(out / name / "summary.json", SUMMARY_MAX_BYTES)
        run, run_unreadable = _read_json(out / name / "run.json", RUN_INFO_MAX_BYTES)
        if unreadable:
            problem = f"unreadable ({unreadable})"
        elif summary is None:
            problem = ""
        elif run_unreadable:
            problem = f"not trusted: run.json unreadable ({run_unreadable})"
        else:
            problem = _vouched(out / name, run)
            problem = f"not trusted: {problem}" if problem else ""
        for claim in exp.claims:
            if problem:
                result = ClaimResult(claim, NOT_RUN, message=problem)
            else:
                result = _judge(claim, summary)
            rows.append(ReportRow(name, result, run))
    return rows


def _judge(claim, summary) -> ClaimResult:
    """:func:`evaluate_claim`, with a summary of an unexpected shape (vouched for by a
    forged ``run.json``) giving ``not run`` instead of a crash."""
    try:
        return evaluate_claim(claim, summary)
    except Exception as exc:  # noqa: BLE001 - any shape error: the report must go on
        return ClaimResult(claim, NOT_RUN, message=f"unreadable (summary.json has an "
                                                   f"unexpected shape: {type(exc).__name__})")


def _spread_text(result: ClaimResult) -> str:
    if result.spread is None:
        return ""
    lo, hi = result.spread
    return f"{lo:.3g} – {hi:.3g}"


def _cells(row: ReportRow) -> list[str]:
    r, c = row.result, row.result.claim
    value = "" if r.verdict == NOT_RUN else format_value(r.value)
    return [row.experiment, f"{c.paper}, {c.where}", c.statement, value, _spread_text(r),
            c.describe_test(), r.scale or "", row.verdict]


HEADERS = ["experiment", "paper", "claim", "ours", "seeds (min – max)", "threshold", "scale",
           "verdict"]


def to_markdown(rows: list[ReportRow]) -> str:
    """The rows as a Markdown table."""
    lines = ["| " + " | ".join(HEADERS) + " |", "|" + "---|" * len(HEADERS)]
    for row in rows:
        cells = [x.replace("|", "\\|") for x in _cells(row)]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def to_text(rows: list[ReportRow], width: int = 60) -> str:
    """The rows as a plain-text table (the claim text cut to ``width``)."""
    table = [HEADERS] + [_cells(r) for r in rows]
    table = [[c if len(c) <= width else c[: width - 1] + "…" for c in line] for line in table]
    widths = [max(len(line[i]) for line in table) for i in range(len(HEADERS))]
    out = []
    for j, line in enumerate(table):
        out.append("  ".join(c.ljust(w) for c, w in zip(line, widths)).rstrip())
        if j == 0:
            out.append("  ".join("-" * w for w in widths))
    counts = {v: sum(r.result.verdict == v for r in rows) for v in (HOLDS, FAILS, NOT_RUN)}
    out.append(f"{len(rows)} claims: {counts[HOLDS]} hold, {counts[FAILS]} fail, "
               f"{counts[NOT_RUN]} not run")
    return "\n".join(out) + "\n"


def write_report(rows: list[ReportRow], out: str | Path) -> tuple[Path, Path]:
    """Write ``out/report.md`` and ``out/report.json``; return their paths."""
    from .._atomic import atomic_write_text

    out = Path(out)
    md, js = out / "report.md", out / "report.json"
    atomic_write_text(md, to_markdown(rows))
    atomic_write_text(js, json.dumps([r.to_dict() for r in rows], indent=1) + "\n")
    return md, js


def _scale_cell(row: ReportRow) -> str:
    r = row.result
    if r.verdict == NOT_RUN:
        return "—"
    spread = _spread_text(r)
    verdict = r.verdict if r.expected else f"{r.verdict} (not expected at this scale)"
    return f"**{verdict}**<br>{format_value(r.value)}" + (f" (seeds {spread})" if spread else "")


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
