"""Depth of the lessons (issue 45): every lesson states its time, per exercise and in total,
ends its exercises with an interpretation question that its module checks, and the
syllabus's lessons table lists the times."""

from __future__ import annotations

import importlib
import importlib.util
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = sorted((ROOT / "docs" / "lessons").glob("[0-9][0-9]_*.py"))


def _hooks():
    spec = importlib.util.spec_from_file_location("hooks", ROOT / "docs" / "_site" / "hooks.py")
    hooks = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hooks)
    return hooks


def _lesson(script: Path):
    if script.name[:2] in ("08", "10"):  # the lessons that train a torch layer
        pytest.importorskip("torch")
    return importlib.import_module(f"lds_toolkit.teaching.lesson{script.name[:2]}")


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.stem)
def test_every_lesson_states_its_time_per_exercise_and_in_total(script):
    text = script.read_text()
    times = _hooks().lesson_times(text)
    headings = re.findall(r"^# ## Exercise \d+\b.*$", text, re.M)
    assert times["total"] is not None, "the header's '*Time: about N min ...*' line"
    assert len(times["exercises"]) == len(headings) >= 2, \
        f"every exercise heading ends in '(≈ N min)': {headings}"
    assert times["question"] is not None, "'## Interpretation question (≈ N min)'"
    assert sum(times["exercises"]) + times["question"] < times["total"], \
        "the total also holds the reading and the worked example"


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.stem)
def test_every_lesson_has_a_checked_interpretation_question(script):
    """The module's question is graded (``CHECKS["interpretation"]``), its estimate is the
    notebook's, exactly one letter passes and every other letter gets its own hint; the
    notebook asks it with the module's letters and grades it in its summary."""
    lesson, text = _lesson(script), script.read_text()
    q = lesson.INTERPRETATION
    assert lesson.CHECKS["interpretation"] is lesson.check_interpretation
    assert q.minutes == _hooks().lesson_times(text)["question"]
    results = {c: lesson.check_interpretation(c, verbose=False) for c in q.choices}
    right = [c for c, r in results.items() if r.passed]
    assert len(right) == 1
    hints = [r.message for c, r in results.items() if c != right[0]]
    assert len(set(hints)) == len(hints) == len(q.choices) - 1
    assert all("is not it:" in h for h in hints)
    section = text[text.index("## Interpretation question"):]
    for letter in q.choices:
        assert f"# * **{letter}** — " in section, f"choice {letter} in the notebook"
    assert "interpretation=interpretation" in text.split("## What to take away")[-1]
    # the question is not given away by a stub: a stub is "not yet", never a pass
    assert lesson.check_interpretation(None, verbose=False).status == "todo"
    assert not lesson.check_interpretation("z", verbose=False).passed


def test_the_lessons_table_lists_the_times():
    table = _hooks().lessons_table()
    assert "| lesson | title | time |" in table
    for script in SCRIPTS:
        times = _hooks().lesson_times(script.read_text())
        cell = (f"{times['total']} min (exercises "
                f"{', '.join(map(str, times['exercises']))}; question {times['question']})")
        assert cell in table, cell
