"""Shared by the medium-scale tests: run (or reuse) medium runs and read their summaries."""

from __future__ import annotations

import json
from pathlib import Path

from lds_toolkit.cli import main as cli_main


def run_medium(names, out) -> Path:
    """``lds-toolkit reproduce NAME --scale medium --out OUT --jobs 2`` for each name.

    The result store under ``out`` loads every task already finished there, so pointing
    ``out`` at an earlier medium run (``LDS_TOOLKIT_MEDIUM_OUT``) computes only what is missing.
    """
    for name in names:
        assert cli_main(["reproduce", name, "--scale", "medium", "--out", str(out), "--jobs",
                         "2", "--no-progress"]) == 0
    return Path(out)


def summary(out, name) -> dict:
    """The ``summary.json`` of experiment ``name`` under output root ``out``."""
    return json.loads((Path(out) / name / "summary.json").read_text())
