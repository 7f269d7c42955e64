"""Judging runs against the claims they test: ``lds-toolkit report``, ``report --compare`` and
the numbers the docs quote.

* :mod:`.verdicts` — every declared claim
  (:class:`~lds_toolkit.experiments.claims.Claim`) judged on the numbers under an output root
  (:func:`build_report`) or on one run (:func:`judge_run`), one :class:`ReportRow` per claim,
  with the run's departures from its scale's standard config;
* :mod:`.tables` — the rows as text for people, Markdown and JSON (``OUT/report.md``,
  ``OUT/report.json``), and the docs' reproduction table;
* :mod:`.compare` — ``lds-toolkit report --compare A B``: what differs between two sets of
  runs (verdicts, numbers, configs, code versions);
* :mod:`.quotes` — the ``{{ ... }}`` quotes of the docs pages, rendered from committed runs
  under ``docs/results/``.

Claims as data (:mod:`lds_toolkit.experiments.claims`) sit below this room, beside the
:class:`~lds_toolkit.experiments.Experiment` contract that declares them; the runner, above
it, judges each run it makes with :func:`judge_run`. This ``__init__`` keeps the names of
the module that was ``lds_toolkit.experiments.report`` (now :mod:`.verdicts` and
:mod:`.tables`).
"""

from .tables import (
    FORMATS,
    HEADERS,
    WIDTH,
    reproduction_table,
    to_json,
    to_markdown,
    to_text,
    write_report,
)
from .verdicts import (
    FRAGILE,
    MODIFIED,
    PAPER_ERROR,
    PAPER_ERROR_NOT,
    ReportRow,
    build_report,
    config_changes,
    judge_run,
)

__all__ = [
    "FORMATS",
    "FRAGILE",
    "HEADERS",
    "MODIFIED",
    "PAPER_ERROR",
    "PAPER_ERROR_NOT",
    "WIDTH",
    "ReportRow",
    "build_report",
    "config_changes",
    "judge_run",
    "reproduction_table",
    "to_json",
    "to_markdown",
    "to_text",
    "write_report",
]
