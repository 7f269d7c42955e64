"""Every declared claim judged on the numbers under an output root (``lds-toolkit report``).

For each registered experiment, :func:`build_report` reads ``OUT/NAME/summary.json`` (and
``run.json`` for how it ran), evaluates the experiment's :attr:`Experiment.claims` with
:func:`~lds_toolkit.experiments.claims.evaluate_claim` and returns one :class:`ReportRow` per
claim; :func:`judge_run` judges one run the same way (what
:func:`~lds_toolkit.experiments.reproduce` returns shows it). :mod:`.tables` prints the rows
for people and writes them as Markdown and JSON; the docs' reproduction table is the Markdown
of the committed numbers.

Two judgements sit on top of a claim's verdict
(:func:`~lds_toolkit.experiments.claims.evaluate_claim`):

* **modified config.** A run made with ``--set`` overrides (or another number of seeds than
  its scale's) is not the standard run of that scale: its claims show ``modified config``
  with the keys, values and standard values (:func:`config_changes`), unless the claim
  declares every changed key harmless
  (:attr:`~lds_toolkit.experiments.claims.Claim.override_harmless`).
* **paper error confirmed.** A claim that records an error of the paper
  (:attr:`~lds_toolkit.experiments.claims.Claim.records_paper_error`: the printed statement is
  false) shows ``paper error confirmed`` when it fails, not a failure to reproduce.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..._safe_files import entry_kind
from ..base import Experiment, list_experiments
from ..claims import FAILS, HOLDS, NOT_RUN, ClaimResult, evaluate_claim
from ..config.build import build_config
from ..store.outputs import RUN_INFO_MAX_BYTES, SUMMARY_MAX_BYTES, file_digest, read_json_file

#: Report verdicts beyond the claim's own (see the module docstring).
MODIFIED, PAPER_ERROR, PAPER_ERROR_NOT = ("modified config", "paper error confirmed",
                                          "paper error not confirmed")
#: The verdict text of a claim that holds by less than one spread over seeds (its margin,
#: :mod:`lds_toolkit.experiments.margins`).
FRAGILE = "holds, fragile"


@dataclass(frozen=True)
class ReportRow:
    """One claim of one experiment, judged.

    ``changes`` holds the run's departures from the standard config of its scale
    (:func:`config_changes`): ``{key: {"value": ..., "standard": ...}}``."""

    experiment: str
    result: ClaimResult
    run: dict[str, Any] | None
    changes: dict[str, dict[str, Any]] = field(default_factory=dict)

    @property
    def modified(self) -> bool:
        """The run changed a config entry that this claim does not declare harmless."""
        harmless = self.result.claim.override_harmless
        return "*" not in harmless and bool(set(self.changes) - set(harmless))

    @property
    def status(self) -> str:
        """The report's verdict: ``not run``, ``modified config``, ``paper error confirmed``
        / ``paper error not confirmed`` (a claim recording a paper's error), else the claim's
        ``holds``/``fails``."""
        r = self.result
        if r.verdict == NOT_RUN:
            return NOT_RUN
        if self.modified:
            return MODIFIED
        if r.claim.records_paper_error:
            return PAPER_ERROR if r.verdict == FAILS else PAPER_ERROR_NOT
        return r.verdict

    @property
    def verdict(self) -> str:
        """:attr:`status`; ``holds, fragile`` for a claim that holds with a margin below one
        spread over seeds; for holds/fails at a scale the claim is not declared for, says so
        (``fails (not expected at quick)``), and a run whose files cannot be read says why
        (``not run: unreadable (summary.json is a FIFO, not a regular file)``)."""
        r, status = self.result, self.status
        if status == NOT_RUN and r.message.startswith("unreadable"):
            return f"{NOT_RUN}: {r.message}"
        if status == HOLDS and r.fragile:
            status = FRAGILE
        if status in (HOLDS, FAILS, FRAGILE) and not r.expected:
            return f"{status} (not expected at {r.scale})"
        return status

    def to_dict(self) -> dict[str, Any]:
        d = {"experiment": self.experiment, **self.result.to_dict()}
        d["verdict_text"] = self.verdict
        d["status"] = self.status
        d["records_paper_error"] = self.result.claim.records_paper_error
        d["config_changes"] = self.changes
        if self.run:
            d["run"] = {k: self.run.get(k) for k in ("scale", "code_version", "date",
                                                     "total_seconds", "jobs")
                        if k in self.run}
        return d


def _read_json(path: Path, max_bytes: int) -> tuple[Any, str]:
    """``(value, "")``, ``(None, "")`` when absent, or ``(None, why)`` when unreadable (an odd
    file, oversize, not JSON: see :func:`~lds_toolkit.experiments.store.outputs.read_json_file`)."""
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


_ABSENT = "(absent)"


def _entry(config: Mapping[str, Any], key: str):
    """``config[key]``, or the nested entry a dotted key names (as ``--set`` reaches it)."""
    if key in config:
        return config[key]
    node: Any = config
    for part in key.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return _ABSENT
        node = node[part]
    return node


def config_changes(exp: Experiment, config: Mapping[str, Any] | None) -> dict[str, dict]:
    """How a run's ``config`` departs from the standard config of its scale.

    Every ``--set`` override the run recorded (``config["overrides"]``) whose value differs
    from the experiment's own config at that scale, and ``seeds`` when the run used another
    number of seeds (``--seeds``). Returns ``{key: {"value": run's, "standard": scale's}}``
    (``"(absent)"`` where the standard config has no such entry); empty for a standard run.
    The base ``seed`` is not a change: another draw of the same protocol.
    """
    if not config:
        return {}
    try:
        standard = build_config(exp, scale=config.get("scale", "paper"))
    except (ValueError, TypeError, KeyError):
        standard = {}
    changes = {}
    for key, value in (config.get("overrides") or {}).items():
        std = _entry(standard, key)
        if std != value:
            changes[key] = {"value": value, "standard": std}
    if standard and "seeds" not in changes and config.get("seeds") != standard.get("seeds"):
        changes["seeds"] = {"value": config.get("seeds"), "standard": standard.get("seeds")}
    return changes


def build_report(out: str | Path, names: list[str] | None = None) -> list[ReportRow]:
    """Rows for every claim of every experiment (or of ``names``) under ``out``.

    Only numbers that their run vouches for are judged: a ``summary.json`` whose size and
    SHA-256 differ from those ``run.json`` recorded (an edited, truncated or foreign file)
    gives ``not run`` with the reason. A run with overrides carries its
    :func:`config_changes` (its claims then show ``modified config``)."""
    out = Path(out)
    rows: list[ReportRow] = []
    for name, exp in list_experiments().items():
        if names is not None and name not in names:
            continue
        kind = entry_kind(out / name)
        if kind in (None, "a directory"):
            summary, unreadable = _read_json(out / name / "summary.json", SUMMARY_MAX_BYTES)
            run, run_unreadable = _read_json(out / name / "run.json", RUN_INFO_MAX_BYTES)
        else:  # a link to another run (or a file) is not this run's results: never followed
            summary, run, run_unreadable = None, None, ""
            unreadable = f"{out / name} is {kind}, not a directory of results (not followed)"
        if unreadable:
            problem = f"unreadable ({unreadable})"
        elif summary is None:
            problem = ""
        elif run_unreadable:
            problem = f"not trusted: run.json unreadable ({run_unreadable})"
        else:
            problem = _vouched(out / name, run)
            problem = f"not trusted: {problem}" if problem else ""
        if problem:
            rows.extend(ReportRow(name, ClaimResult(claim, NOT_RUN, message=problem), run)
                        for claim in exp.claims)
        else:
            rows.extend(judge_run(exp, summary, run))
    return rows


def judge_run(exp: Experiment, summary: Mapping[str, Any] | None,
              run: dict[str, Any] | None) -> list[ReportRow]:
    """The rows of ``exp``'s claims judged on one run's ``summary`` (``run``: its run.json
    record), as :func:`build_report` judges a run it has read and trusted; what
    :func:`~lds_toolkit.experiments.reproduce` returns shows them."""
    changes = {} if summary is None else _changes(exp, dict(summary))
    return [ReportRow(exp.name, _judge(claim, summary), run, changes) for claim in exp.claims]


def _changes(exp: Experiment, summary: dict) -> dict[str, dict]:
    """:func:`config_changes` of a summary's config; a config of an unexpected shape (vouched
    for by a forged ``run.json``) gives none rather than a crash (its claims say why)."""
    config = summary.get("config")
    if not isinstance(config, dict):
        return {}
    try:
        return config_changes(exp, config)
    except Exception:  # noqa: BLE001 - any shape error: the report must go on
        return {}


def _judge(claim, summary) -> ClaimResult:
    """:func:`evaluate_claim`, with a summary of an unexpected shape (vouched for by a
    forged ``run.json``) giving ``not run`` instead of a crash."""
    try:
        return evaluate_claim(claim, summary)
    except Exception as exc:  # noqa: BLE001 - any shape error: the report must go on
        return ClaimResult(claim, NOT_RUN, message=f"unreadable (summary.json has an "
                                                   f"unexpected shape: {type(exc).__name__})")
