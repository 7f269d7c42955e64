"""Release basics: licence, citation, version, type marker, changelog agree with pyproject."""

from __future__ import annotations

import sys
from importlib.metadata import version
from pathlib import Path

import pytest
import yaml

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    tomllib = pytest.importorskip("tomli")

import lds_toolkit

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def test_version_comes_from_the_package_metadata():
    assert lds_toolkit.__version__ == version("lds_toolkit") == PYPROJECT["version"]


def test_license_file_is_the_mit_text_pyproject_names():
    assert PYPROJECT["license"] == {"text": "MIT"}
    text = (ROOT / "LICENSE").read_text()
    assert text.startswith("MIT License")
    assert "Permission is hereby granted, free of charge" in text
    assert 'THE SOFTWARE IS PROVIDED "AS IS"' in text


def test_citation_cff_cites_the_toolkit_and_the_four_papers():
    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text())
    assert cff["cff-version"] == "1.2.0"
    assert cff["version"] == PYPROJECT["version"] and cff["license"] == "MIT"
    titles = [r["title"] for r in cff["references"]]
    for words in ("length generalization", "S4++", "Long Range Abilities", "Focus Your"):
        assert sum(words.lower() in t.lower() for t in titles) == 1, words
    for ref in cff["references"]:
        assert ref["authors"] and ref["year"]


def test_py_typed_ships_with_the_package():
    assert (Path(lds_toolkit.__file__).parent / "py.typed").is_file()
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "py.typed" in pyproject["tool"]["setuptools"]["package-data"]["lds_toolkit"]


def test_changelog_has_the_current_version():
    text = (ROOT / "CHANGELOG.md").read_text()
    assert f"## [{PYPROJECT['version']}]" in text and "## [Unreleased]" in text
