"""The simulations/ scripts: one per registered experiment, public API only, and they run."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

from lds_toolkit.experiments import list_experiments

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = sorted((ROOT / "simulations").glob("*.py"))


def _experiments_named(script: Path) -> set[str]:
    names = {e for e in list_experiments()}
    text = script.read_text()
    return {n for n in names if f'"{n}"' in text}


def test_every_registered_experiment_has_a_script():
    covered = set().union(*(_experiments_named(s) for s in SCRIPTS))
    assert covered == set(list_experiments())


@pytest.mark.parametrize("script", SCRIPTS, ids=[s.stem for s in SCRIPTS])
def test_scripts_use_only_the_public_api(script):
    tree = ast.parse(script.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("lds"):
            parts = node.module.split(".")
            assert not any(p.startswith("_") for p in parts), f"private import {node.module}"
            assert all(not a.name.startswith("_") for a in node.names)


def test_a_script_runs_end_to_end(tmp_path):
    out = subprocess.run(
        [sys.executable, str(ROOT / "simulations" / "lds_impulse.py"), "--quick", "--out",
         str(tmp_path), "--no-progress"],
        capture_output=True, text=True, check=True, timeout=300,
    ).stdout
    assert "energy beyond T^q, Region A-left" in out
    summary = json.loads((tmp_path / "lds-impulse" / "summary.json").read_text())
    assert summary["config"]["scale"] == "quick"
    assert (tmp_path / "lds-impulse" / "impulse_regions.png").exists()
