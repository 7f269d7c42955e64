"""What :func:`~lds_toolkit.experiments.reproduce` returns shows itself: a short text in a
terminal (:func:`run_text`, the ``repr``), its figures, claim verdicts and files in a
notebook (:func:`run_html`, ``_repr_html_``; :func:`run_png`, ``_repr_png_``).

The verdicts are the rows ``lds-toolkit report`` gives for the run
(:func:`~lds_toolkit.experiments.report.judge_run`). Figures are read back from the files the
run wrote, without following links or blocking (``_safe_files``); a file that is gone or is
not a regular file is named with the reason instead of shown. Nothing here touches
matplotlib: the PNG bytes are the run's own files.
"""

from __future__ import annotations

import base64
import html
import textwrap
from pathlib import Path

from ..._safe_files import UnsafeFileError, os_reason, read_regular_file
from ..claims import FAILS, HOLDS, NOT_RUN

#: Largest figure file shown inline (bytes).
FIGURE_MAX_BYTES = 32 * 2**20
#: Columns of the text summary.
WIDTH = 100
_COLOURS = {HOLDS: "#1a7f37", FAILS: "#cf222e"}


def _how(res) -> str:
    s = res.stats
    parts = [f"{s.n_tasks} tasks ({s.n_computed} computed, {s.n_cached} loaded"
             + (f", {s.n_rejected} rejected" if s.n_rejected else "") + ")",
             f"{s.seconds:.1f} s"]
    return ", ".join(parts)


def _counts(rows) -> str:
    if not rows:
        return "no claims declared"
    counts: dict[str, int] = {}
    for row in rows:
        counts[row.status] = counts.get(row.status, 0) + 1
    words = {HOLDS: "hold", FAILS: "fail", NOT_RUN: "not run"}
    return ", ".join(f"{n} {words.get(v, v)}" for v, n in counts.items())


def _files(res) -> list[str]:
    return ["summary.json", "arrays.npz", *[p.name for p in res.figures], "run.json"]


def _details(row) -> list[str]:
    """What to say of a claim, longest first: the value and the test, or the value alone."""
    r, c = row.result, row.result.claim
    if r.verdict == NOT_RUN:
        return [r.message or "not run"]
    return [f"{r.describe_value()} ({c.describe_test()})", r.describe_value()]


def run_text(res) -> str:
    """The terminal summary: what ran and where, one line per claim, the files."""
    scale = f" at {res.scale} scale" if res.scale else ""
    lines = [f"{res.name}{scale}: {_how(res)}", f"  written to {res.outdir}"]
    if res.claims:
        lines.append(f"  claims: {_counts(res.claims)}")
        width = max(len(row.verdict) for row in res.claims)
        for row in res.claims:
            head = f"    {row.verdict:<{width}}  {row.result.claim.id}: "
            line = next((head + d for d in _details(row) if len(head + d) <= WIDTH),
                        (head + _details(row)[-1])[: WIDTH - 3] + "...")
            lines.append(line)
    lines.extend(textwrap.wrap(", ".join(_files(res)), WIDTH, initial_indent="  files: ",
                               subsequent_indent=" " * 9, break_on_hyphens=False))
    return "\n".join(lines)


def _png_files(res) -> list[Path]:
    return [p for p in res.figures if p.suffix.lower() == ".png"]


def _read_png(path: Path) -> tuple[bytes | None, str]:
    """The bytes of a PNG the run wrote, or ``(None, why not)``."""
    try:
        data = read_regular_file(path, FIGURE_MAX_BYTES, what="figure")
    except UnsafeFileError as exc:
        return None, f"{path.name}: not shown ({exc.reason})"
    except OSError as exc:
        return None, f"{path.name}: not shown ({os_reason(exc)})"
    if not data.startswith(b"\x89PNG\r\n\x1a\n"):
        return None, f"{path.name}: not shown (not a PNG file)"
    return data, ""


def run_png(res) -> bytes | None:
    """The first figure's PNG bytes (``None`` when the run has none or it is unreadable)."""
    for path in _png_files(res):
        data, _ = _read_png(path)
        if data is not None:
            return data
    return None


def run_html(res) -> str:
    """A notebook's view: the verdicts as a table, every figure inline, where the files are."""
    e = html.escape
    scale = f" — {e(res.scale)} scale" if res.scale else ""
    out = [f'<div class="lds-toolkit-run"><h4 style="margin:0.3em 0">{e(res.name)}{scale}</h4>',
           f"<p>{e(_how(res))}; written to <code>{e(str(res.outdir))}</code></p>"]
    if res.claims:
        out.append(f"<p><b>Claims</b>: {e(_counts(res.claims))}</p>")
        out.append('<table><thead><tr><th>verdict</th><th>claim</th><th>where</th>'
                   "<th>ours</th><th>test</th></tr></thead><tbody>")
        for row in res.claims:
            r, c = row.result, row.result.claim
            colour = _COLOURS.get(row.status, "#57606a")
            ours = r.message if r.verdict == NOT_RUN else r.describe_value()
            out.append(f'<tr><td style="color:{colour};font-weight:bold">{e(row.verdict)}</td>'
                       f'<td title="{e(c.statement)}">{e(c.id)}</td>'
                       f"<td>{e(f'{c.paper}, {c.where}')}</td><td>{e(ours)}</td>"
                       f"<td>{e(c.describe_test())}</td></tr>")
        out.append("</tbody></table>")
    else:
        out.append("<p>No claims declared for this experiment.</p>")
    for path in _png_files(res):
        data, why = _read_png(path)
        if data is None:
            out.append(f"<p><i>{e(why)}</i></p>")
            continue
        encoded = base64.b64encode(data).decode("ascii")
        out.append(f'<img src="data:image/png;base64,{encoded}" alt="{e(path.name)}" '
                   'style="max-width:100%">')
    out.append("<p>Files: " + ", ".join(f"<code>{e(name)}</code>" for name in _files(res))
               + "</p></div>")
    return "\n".join(out)
