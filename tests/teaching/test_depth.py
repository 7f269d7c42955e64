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


def _hint(message: str) -> str | None:
    """The part of a "not yet" line that names the slip (what follows "likely cause:", or
    the question's reason, or a line about the answer's type or form); ``None`` for the
    generic diff ("3 of 12 entries differ ...", "yours 0.5, expected 0.6 (difference ...)")
    with no cause named."""
    import re

    for mark in ("likely cause: ", "is not it: "):
        if mark in message:
            return message.split(mark, 1)[1]
    if re.search(r"entries differ|\(difference ", message):
        return None
    return message.split(" — ", 1)[-1]


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.stem)
def test_every_exercise_has_five_mistakes_with_hints_of_their_own(script):
    """Through the public check, the common mistakes of each graded answer (the answer key's
    ``MISTAKES``) get at least five *different* hints, each naming the slip: the generic
    diff (what differs and by how much, no cause) does not count."""
    import warnings

    lesson = _lesson(script)
    path = ROOT / "docs" / "lessons" / "instructor" / f"lds_key{script.name[:2]}.py"
    spec = importlib.util.spec_from_file_location(f"lds_key{script.name[:2]}", path)
    key = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(key)
    for name, check in lesson.CHECKS.items():
        hints = set()
        for _, answer, _ in key.MISTAKES.get(name, []):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                res = check(answer, verbose=False)
            assert not res.passed
            hints.add(_hint(res.message))
        hints.discard(None)
        assert len(hints) >= 5, f"{name}: {len(hints)} different hints: {sorted(hints)}"


def test_the_numbers_the_questions_quote_are_the_sliders():
    """The interpretation questions quote numbers a student reads off a slider: they are the
    slider's, to the digits quoted (a change to a lesson's data shows here)."""
    import math

    from lds_toolkit.teaching import SliderApp

    def app(name):
        return SliderApp(name)

    a2 = app("lesson02.step")  # forward Euler leaves the circle at Δ ≈ 2|Re p|/|p|² ≈ 0.044
    assert a2.update(dt=0.04)["max |z| euler"] < 1 < a2.update(dt=0.05)["max |z| euler"]
    assert all(a2.update(dt=d)[f"max |z| {m}"] < 1 for d in (0.01, 0.5, 1.0)
               for m in ("zoh", "tustin"))
    a3 = app("lesson03.gain")
    n19, n1 = a3.update(gain=1.9), a3.update(gain=1.0)
    assert round(n19["decay rate ι"], 3) == 0.037 and round(n1["decay rate ι"], 2) == 0.35
    assert round(n19["max Re λ"], 3) == -0.022 and n19["V respects the bound"]
    a4 = app("lesson04.etc")
    small, mid = a4.update(epsilon=1e-8), a4.update(epsilon=1e-5)
    assert round(small["max |x| perturbed"]) == 8 and 7e3 < mid["max |x| perturbed"] < 9e3
    assert round(small["max |x| original"]) == 1
    assert a4.update(kappa=0.1, epsilon=5e-3)["max |x| perturbed"] > 1e5  # more events
    a5 = app("lesson05.step_size")
    wide, tight = a5.update(factor=2.0, radius=1.0), a5.update(factor=2.0, radius=0.1)
    assert round(wide["regret (projected)"], 1) == 4.4
    assert round(tight["regret (projected)"]) == 656 and round(tight["regret (free)"], 1) == 4.4
    a6 = app("lesson06.filters")
    k8, k1 = a6.update(k=8, q=0.5), a6.update(k=1, q=0.5)
    assert round(k8["loss ratio"]) == 34 and round(k1["loss ratio"], 1) == 1.0
    assert round(k1["full-context loss"], 3) == 0.004
    assert round(math.log10(k8["full-context loss"])) == round(math.log10(6e-7))
    a7 = app("lesson07.eigenvalue").update(delta=1e-3)
    assert a7["region (q = 1/2)"] == "B"
    assert round(a7["ratio Algorithm 1"], 1) == 6.5 and round(a7["ratio Algorithm 2"], 1) == 1.0
