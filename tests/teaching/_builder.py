"""The lesson builder (``docs/_site/lessons.py``), loaded once as a module for the tests."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def load():
    """``docs/_site/lessons.py`` as the module ``lesson_builder`` (one copy per process)."""
    if "lesson_builder" in sys.modules:
        return sys.modules["lesson_builder"]
    spec = importlib.util.spec_from_file_location("lesson_builder",
                                                  ROOT / "docs" / "_site" / "lessons.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["lesson_builder"] = module
    spec.loader.exec_module(module)
    return module
