"""Lesson 1 in a real JupyterLab in headless Chromium: it runs, its slider moves, its figure
changes (``docs/_site/lab_slider_check.py``; also part of ``make docs-check``). Slow: it
starts a Jupyter server, a kernel and a browser (about a minute)."""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.slow


def test_slider_moves_and_the_figure_changes_in_jupyterlab(tmp_path):
    pytest.importorskip("playwright", reason="the browser extra is not installed")
    pytest.importorskip("jupyterlab", reason="the browser extra is not installed")
    pytest.importorskip("ipywidgets", reason="the teach extra is not installed")
    if not (shutil.which("chromium") or shutil.which("chromium-browser")):
        pytest.skip("Debian's chromium is not installed")
    spec = importlib.util.spec_from_file_location("lab_slider_check",
                                                  ROOT / "docs" / "_site" / "lab_slider_check.py")
    lab = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(lab)
    seen = lab.check("01_memory_and_regions", tmp_path)
    assert seen["changed"] and seen["pixels_changed"]
    assert "region: A-left" in seen["before"] and "region: A-right" in seen["after"]
    assert not seen["cell_errors"]
    assert all(Path(p).stat().st_size > 0 for p in seen["screenshots"])
