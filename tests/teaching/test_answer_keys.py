"""The answer keys (``docs/lessons/instructor/lds_keyNN.py``, instructor only): every common
mistake gets "not yet" with its own hint, every correct answer written another way passes,
the hidden cases cover every graded answer, and the keys' format holds.

The solutions passing the hidden cases (and the student notebook scoring nothing) is
``test_lessons.py``'s job: it has the lessons' namespaces.
"""

from __future__ import annotations

import importlib
import importlib.util
import warnings
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
INSTRUCTOR = ROOT / "docs" / "lessons" / "instructor"
LESSONS = sorted(p.name[:2] for p in (ROOT / "docs" / "lessons").glob("[0-9][0-9]_*.py"))
MIN_MISTAKES = 5


def load_key(nn: str):
    spec = importlib.util.spec_from_file_location(f"lds_key{nn}", INSTRUCTOR / f"lds_key{nn}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def lesson_module(nn: str):
    if nn in ("08", "10"):  # the lessons that train a torch layer
        pytest.importorskip("torch")
    return importlib.import_module(f"lds_toolkit.teaching.lesson{nn}")


def _rows(nn: str, table: str):
    key, lesson = load_key(nn), lesson_module(nn)
    return [(name, row) for name, rows in getattr(key, table).items() for row in rows], lesson


@pytest.mark.parametrize("nn", LESSONS)
def test_every_lesson_has_a_key_whose_hidden_cases_cover_its_graded_answers(nn):
    key, lesson = load_key(nn), lesson_module(nn)
    assert set(key.HIDDEN) == set(lesson.CHECKS), "hidden cases for every graded answer"
    for name, rows in key.HIDDEN.items():
        assert rows and all(points > 0 for points, _ in rows), name
    assert 0 < key.TIME_LIMIT <= 30
    for table in ("MISTAKES", "ALTERNATIVES"):
        assert set(getattr(key, table)) <= set(lesson.CHECKS), table


@pytest.mark.parametrize("nn", LESSONS)
def test_every_common_mistake_gets_not_yet_with_its_own_hint(nn):
    rows, lesson = _rows(nn, "MISTAKES")
    wrong = []
    for name, (what, answer, hint) in rows:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # NaN mistakes warn in numpy
            res = lesson.CHECKS[name](answer, verbose=False)
        if res.passed or hint not in res.message:
            wrong.append(f"{name}: {what!r} -> {res.message!r} (hint should contain {hint!r})")
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize("nn", LESSONS)
def test_every_exercise_has_five_distinct_mistakes(nn):
    key, lesson = load_key(nn), lesson_module(nn)
    for name in lesson.CHECKS:
        hints = [hint for _, _, hint in key.MISTAKES.get(name, [])]
        assert len(hints) >= MIN_MISTAKES, f"{name}: {len(hints)} mistakes"


@pytest.mark.parametrize("nn", LESSONS)
def test_correct_answers_written_another_way_pass(nn):
    rows, lesson = _rows(nn, "ALTERNATIVES")
    failed = [f"{name}: {what!r} -> {res.message!r}" for name, (what, answer) in rows
              if not (res := lesson.CHECKS[name](answer, verbose=False)).passed]
    assert not failed, "\n".join(failed)


@pytest.mark.parametrize("nn", LESSONS)
def test_key_solutions_pass_the_public_checks(nn):
    key, lesson = load_key(nn), lesson_module(nn)
    for name, answer in getattr(key, "SOLUTIONS", {}).items():
        res = lesson.CHECKS[name](answer, verbose=False)
        assert res.passed, res.message


def test_a_mistake_that_passes_or_hints_otherwise_fails_the_harness():
    """The harness can fail: a 'mistake' that is the solution, or a hint that is not given."""
    key = load_key("01")
    lesson = lesson_module("01")
    good = key.SOLUTIONS["memory_of"]
    assert lesson.CHECKS["memory_of"](good, verbose=False).passed
    res = lesson.CHECKS["memory_of"](key.MISTAKES["memory_of"][0][1], verbose=False)
    assert "forgot the square" in res.message and "cancels" not in res.message


def test_lesson1_hidden_cases_are_not_the_public_ones():
    """The example key's hidden inputs are other inputs than the checks' public cases."""
    import numpy as np

    key, lesson = load_key("01"), lesson_module("01")
    public = {"impulse_response": lesson._impulse_cases(), "memory_of": lesson._MEMORY_CASES,
              "region_of": lesson._region_cases()}

    def same(a, b):
        return a.keys() == b.keys() and all(np.array_equal(np.asarray(a[k]), np.asarray(b[k]))
                                            for k in a)

    for name, cases in public.items():
        for _, hidden in key.HIDDEN[name]:
            assert not any(same(hidden, c) for c in cases), (name, hidden)


@pytest.mark.parametrize("nn", LESSONS)
def test_correct_answers_written_another_way_get_every_hidden_point(nn):
    """The hidden tests do not reject what the public check accepts: every alternative gets
    all the points of its exercise's hidden cases."""
    spec = importlib.util.spec_from_file_location("lds_grading", INSTRUCTOR / "lds_grading.py")
    grading = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(grading)
    key, lesson = load_key(nn), lesson_module(nn)
    short = []
    for name, rows in key.ALTERNATIVES.items():
        total = sum(points for points, _ in key.HIDDEN[name])
        for what, answer in rows:
            got = sum(points for i, (points, _) in enumerate(key.HIDDEN[name])
                      if grading.grade(lesson, key, name, i, answer).passed)
            if got != pytest.approx(total) and (nn, name, what) not in KNOWN_SHORT:
                short.append(f"{name}: {what!r} got {got} of {total}")
            elif got == pytest.approx(total) and (nn, name, what) in KNOWN_SHORT:
                short.append(f"{name}: {what!r} gets every point now: drop it from "
                             "KNOWN_SHORT")
    assert not short, "\n".join(short)


#: Alternatives the public check accepts but a hidden case does not (none: lesson 9's plain
#: Riccati iteration, which blew up on the hidden unstable A, now meets an unstable A among the
#: public cases too, with its own hint; the key's iteration keeps P symmetric).
KNOWN_SHORT: set[tuple[str, str, str]] = set()
