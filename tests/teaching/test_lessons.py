"""Every lesson in docs/lessons/: its format, its solution passes all its checks, its student
notebook (made by otter assign) runs to the end with every check saying "not yet", and the
autograder tests otter exports pass on the solution and fail on the student version.

The notebooks' code runs in this process at the quick size (``LDS_LESSON_QUICK=1``): the
cheap route for the default suite. ``make docs`` executes the solution notebooks in a
kernel (nbclient) at full size, and ``test_lesson_browser.py`` (slow) drives one in
JupyterLab.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from . import _builder

pytest.importorskip("otter", reason="the docs extra is not installed (pip install -e .[docs])")
pytest.importorskip("jupytext", reason="the docs extra is not installed")

ROOT = Path(__file__).resolve().parents[2]



lessons = _builder.load()
SCRIPTS = lessons.lesson_scripts()
#: The lessons that train a torch layer (skipped without torch, not numba-free by design).
TORCH_LESSONS = ("08", "10")
IDS = [s.stem for s in SCRIPTS]


@pytest.fixture(scope="module", params=SCRIPTS, ids=IDS)
def lesson(request, tmp_path_factory):
    """The lesson's notebooks (otter assign), each run once in this process (quick size)."""
    import nbformat

    script = request.param
    if script.name[:2] in TORCH_LESSONS:
        pytest.importorskip("torch")
    paths = lessons.assign(script, tmp_path_factory.mktemp(script.stem))
    out = {"script": script, "paths": paths,
           "module": importlib.import_module(lessons.module_name(script)),
           "student": nbformat.read(paths["student"], as_version=4),
           "autograder": nbformat.read(paths["autograder_notebook"], as_version=4)}
    for version in ("solution", "student"):
        nb = lessons.read_lesson(script) if version == "solution" else out["student"]
        namespace: dict = {}
        out[f"{version}_records"] = lessons.run_in_process(nb, quick=True, namespace=namespace)
        out[f"{version}_namespace"] = namespace
    return out


def test_lessons_exist_and_follow_the_format():
    import jupytext

    assert [s.name[:2] for s in SCRIPTS] == [f"{i:02d}" for i in range(1, 11)]  # ten lessons
    for script in SCRIPTS:
        assert lessons.format_problems(jupytext.read(script), script.name) == []




@pytest.mark.parametrize("script", SCRIPTS, ids=IDS)
def test_exercises_have_time_estimates_and_an_interpretation_question(script):
    import jupytext

    if script.name[:2] in TORCH_LESSONS:
        pytest.importorskip("torch")
    problems = lessons.depth_problems(jupytext.read(script), script.name)
    assert problems == []


def test_depth_check_sees_a_missing_estimate():
    import jupytext

    nb = jupytext.read(SCRIPTS[0])
    for cell in nb.cells:
        if cell.cell_type == "markdown" and "(≈ 15 min)" in cell.source:
            cell.source = cell.source.replace("(≈ 15 min)", "")
            break
    assert any("time estimate" in p for p in lessons.depth_problems(nb, SCRIPTS[0].name))


def test_hidden_cases_give_the_solution_full_marks_and_the_student_none(lesson):
    """lds_grading.grade on every hidden case of the key: the solution notebook's answers get
    every point, the student notebook's stubs none."""
    key = lessons.load_key(lesson["script"])
    grading = _load(lessons.INSTRUCTOR / "lds_grading.py", "lds_grading")
    total = {n: sum(p for p, _ in rows) for n, rows in key.HIDDEN.items()}
    assert grading.score(lesson["module"], key, lesson["solution_namespace"]) == total
    assert grading.score(lesson["module"], key, lesson["student_namespace"]) == \
        dict.fromkeys(total, 0)


def _load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _check_lines(records):
    lines = []
    for r in records:
        if "check" in r["tags"]:
            lines += [ln for ln in r["stdout"].splitlines()
                      if ln.startswith(("pass:", "not yet:"))]
    return lines


def _no_error(records):
    errors = [r for r in records if r["error"]]
    assert not errors, f"cell {errors[0]['index']} raised {errors[0]['error']}"


def test_solution_passes_every_check(lesson):
    records = lesson["solution_records"]
    _no_error(records)
    lines = _check_lines(records)
    assert lines and all(ln.startswith("pass:") for ln in lines), "\n".join(lines)
    n = len(lesson["module"].CHECKS)
    assert records[-1]["stdout"].strip().splitlines()[-1] == f"{n} of {n} checks pass"


def test_student_notebook_runs_to_the_end_saying_not_yet(lesson):
    nb, records = lesson["student"], lesson["student_records"]
    code = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
    assert "BEGIN SOLUTION" not in code and "# SOLUTION" not in code
    assert "otter" not in code and "grader" not in code  # no otter needed to run it
    _no_error(records)
    assert len(records) == sum(c.cell_type == "code" for c in nb.cells)
    lines = _check_lines(records)
    assert lines and all(ln.startswith("not yet:") for ln in lines), "\n".join(lines)
    n = len(lesson["module"].CHECKS)
    assert records[-1]["stdout"].strip().splitlines()[-1].startswith(f"0 of {n} checks pass")


def _case_code(case) -> str:
    return "\n".join(line[4:] for line in case["code"].splitlines()
                     if line.startswith((">>> ", "... ")))


def test_exported_autograder_tests_pass_on_the_solution_only(lesson, monkeypatch):
    """The tests otter put in the autograder (the notebook's metadata; the archive's tests/):
    per exercise, the public check (visible, 0 points when hidden cases exist) and one hidden
    test per hidden case of the answer key, each worth its points, graded by
    ``lds_grading.grade`` (shipped in the archive with the key). They pass on the solution's
    variables and fail, with the check's hint, on the student's."""
    import zipfile

    key = lessons.load_key(lesson["script"])
    tests = lesson["autograder"].metadata["otter"]["tests"]
    cases = [c for t in tests.values() for c in t["suites"][0]["cases"]]
    hidden = [c for c in cases if c["hidden"]]
    if key is None:
        assert sum(c["points"] for c in cases) == len(lesson["module"].CHECKS)
    else:
        assert sum(c["points"] for c in cases) == pytest.approx(
            sum(p for rows in key.HIDDEN.values() for p, _ in rows))
        assert sum(c["points"] for c in cases if not c["hidden"]) == 0
        assert len(hidden) == sum(len(rows) for rows in key.HIDDEN.values())
        names = set(zipfile.ZipFile(lesson["paths"]["autograder"]).namelist())
        assert {f"files/{lessons.key_path(lesson['script']).name}",
                "files/lds_grading.py"} <= names
    monkeypatch.syspath_prepend(str(lessons.INSTRUCTOR))  # where the archive puts its files
    for case in cases:
        code = _case_code(case)
        exec(code, dict(lesson["solution_namespace"]))
        with pytest.raises(AssertionError, match="not yet"):
            exec(code, dict(lesson["student_namespace"]))
    assert lesson["paths"]["autograder"].stat().st_size > 0


NO_NUMBA_DRIVER = """
    import importlib.util, json, sys
    spec = importlib.util.spec_from_file_location("lesson_builder", sys.argv[1])
    lessons = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(lessons)
    out = {}
    for script in lessons.lesson_scripts():
        if script.name[:2] not in ("08", "10"):  # TORCH_LESSONS
            out[script.stem] = lessons.run_in_process(lessons.read_lesson(script), quick=True)
    print(json.dumps({"lessons": out, "numba": "numba" in sys.modules}))
"""


@pytest.fixture(scope="module")
def without_numba():
    """The solutions of the lessons without torch run once in an interpreter that cannot
    import numba."""
    import json

    from tests._no_numba import run_blocked

    done = run_blocked(NO_NUMBA_DRIVER, str(ROOT / "docs" / "_site" / "lessons.py"))
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_numpy_lessons_print_the_same_without_numba(lesson, without_numba):
    """Every cell of the solution of each lesson without torch (1-7, 9) prints the same text
    with numba blocked (the compiled cores fall back to plain Python): the same numbers, the
    same check lines."""
    if lesson["script"].name[:2] in TORCH_LESSONS:
        pytest.skip("lessons 8 and 10 need torch, not numba-free by design")
    assert without_numba["numba"] is False
    plain = without_numba["lessons"][lesson["script"].stem]
    assert [r["error"] for r in plain] == [None] * len(plain)
    assert [r["stdout"] for r in plain] == [r["stdout"] for r in lesson["solution_records"]]
