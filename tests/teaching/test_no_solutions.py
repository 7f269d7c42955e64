"""No solution ships to students: not in the installed package, not in the student build.

* The package: no ``reference_*`` is left, no function or object of
  ``lds_toolkit.teaching`` passes a lesson's check when handed to it as the answer (each is
  tried on every check whose exercise's arguments it accepts), and no line of a solution (the
  code between a lesson's solution markers) appears in the teaching kit's sources.
* The student build (``lessons.build``): no solution line, no solution marker, no answer key
  in any file of ``student/``; the keys and the archives are in ``instructor/`` only.
* The public page and the student slides are made from :func:`lessons.public_notebook`,
  which holds no solution line either.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import pkgutil
import re
import warnings
from pathlib import Path

import pytest

from . import _builder

pytest.importorskip("otter", reason="the docs extra is not installed (pip install -e .[docs])")
pytest.importorskip("jupytext", reason="the docs extra is not installed")

ROOT = Path(__file__).resolve().parents[2]



lessons = _builder.load()
_MARK = re.compile(r"#\s*(BEGIN SOLUTION|END SOLUTION)")


def _norm(text: str) -> str:
    """Without whitespace: a line found whatever its indentation and spacing."""
    return re.sub(r"\s+", "", text)


def solution_lines(min_chars: int = 24) -> dict[str, str]:
    """The substantive lines of every lesson's solutions (normalised: no whitespace) ->
    where they come from. Short lines (``return h``) are left out: they prove nothing."""
    import jupytext

    out = {}
    for script in lessons.lesson_scripts():
        for cell in jupytext.read(script).cells:
            if "exercise" not in cell.get("metadata", {}).get("tags", []):
                continue
            inside = False
            for line in cell.source.splitlines():
                if _MARK.search(line):
                    inside = "BEGIN" in line
                    continue
                if inside or line.rstrip().endswith("# SOLUTION"):
                    text = _norm(line.replace("# SOLUTION", ""))
                    if len(text) >= min_chars:
                        out[text] = f"{script.name}: {line.strip()}"
    return out


def _teaching_modules():
    import lds_toolkit.teaching as teaching

    for info in pkgutil.iter_modules(teaching.__path__):
        if info.name in ("lesson08", "lesson10") and importlib.util.find_spec("torch") is None:
            continue
        yield importlib.import_module(f"lds_toolkit.teaching.{info.name}")


def _exercise_parameters() -> dict[tuple[str, str], list[str] | None]:
    """(lesson module, answer name) -> the exercise function's parameters (None: a value)."""
    import ast

    import jupytext

    out = {}
    for script in lessons.lesson_scripts():
        module = lessons.module_name(script)
        for cell in jupytext.read(script).cells:
            if "exercise" not in cell.get("metadata", {}).get("tags", []):
                continue
            for node in ast.parse(cell.source).body:
                if isinstance(node, ast.FunctionDef):
                    out[(module, node.name)] = [a.arg for a in node.args.args]
                elif isinstance(node, ast.Assign):
                    for t in node.targets:
                        if isinstance(t, ast.Name):
                            out[(module, t.id)] = None
    return out


def _notebook_text(nb) -> str:
    """Every cell's source and every text output of a notebook, as plain text."""
    parts = []
    for cell in nb.cells:
        parts.append(cell.source)
        for out in cell.get("outputs", []):
            parts.append(str(out.get("text", "")))
            parts += [str(v) for k, v in out.get("data", {}).items() if k.startswith("text")]
    return "\n".join(parts)


def _readable(path: Path) -> str:
    """A build file's text: a notebook's sources and outputs (not its JSON escapes), an
    HTML or text file as it is, a binary file's bytes as far as they decode."""
    import json

    import nbformat

    raw = path.read_bytes().decode("utf-8", errors="ignore")
    if path.suffix == ".ipynb":
        return _notebook_text(nbformat.reads(raw, as_version=4))
    if path.suffix == ".html":  # slides embed the notebook's code HTML-escaped
        import html

        return html.unescape(re.sub(r"<[^>]+>", "", raw))
    try:
        return json.dumps(json.loads(raw))
    except ValueError:
        return raw


def test_no_reference_solutions_are_left_in_the_lesson_modules():
    for module in _teaching_modules():
        left = [n for n in vars(module) if n.startswith("reference_")]
        assert not left, f"{module.__name__}: {left}"


def test_nothing_in_the_package_passes_a_check_as_the_answer():
    params = _exercise_parameters()
    objects = []
    for module in _teaching_modules():
        for name, obj in vars(module).items():
            if not name.startswith("__"):
                objects.append((f"{module.__name__}.{name}", obj))
    tried, passed = 0, []
    for module in _teaching_modules():
        checks = getattr(module, "CHECKS", None)
        if not checks:
            continue
        for answer, check in checks.items():
            wanted = params[(module.__name__, answer)]
            for where, obj in objects:
                if wanted is None:  # a value: a string or number of the package
                    if not isinstance(obj, (str, int, float)):
                        continue
                else:
                    if not callable(obj):
                        continue
                    try:
                        inspect.signature(obj).bind(**dict.fromkeys(wanted))
                    except (TypeError, ValueError):
                        continue
                tried += 1
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    kwargs = {} if wanted is None else {"time_limit": 2.0}
                    if wanted is not None and "time_limit" not in \
                            inspect.signature(check).parameters:
                        kwargs = {}
                    res = check(obj, verbose=False, **kwargs)
                if res.passed:
                    passed.append(f"{where} passes {module.__name__}.CHECKS[{answer!r}]")
    assert tried > 50  # the test tries something: values and signature-compatible callables
    assert not passed, "\n".join(passed)


def test_the_teaching_kit_holds_no_solution_line():
    """The teaching package (what a student imports beside the lessons) has none of the
    solutions' lines. The rest of the toolkit is the independent route the checks compare
    with: it computes the same quantities its own way, and may share a line."""
    lines = solution_lines()
    assert len(lines) > 30
    found = []
    for path in sorted((ROOT / "lds_toolkit" / "teaching").rglob("*.py")):
        text = {_norm(line) for line in path.read_text().splitlines()}
        found += [f"{path.relative_to(ROOT)} holds {where}" for norm, where in lines.items()
                  if norm in text]
    assert not found, "\n".join(found)


def test_the_student_build_holds_no_solution_and_the_instructor_bundle_does(tmp_path):
    made = lessons.build(tmp_path, execute_slides=False, only=["01", "04"])
    student, instructor = tmp_path / "student", tmp_path / "instructor"
    assert {p.name for p in student.glob("*.ipynb")} == {f"{k}.ipynb" for k in made}
    assert (student / "data" / "course_streams.npz").stat().st_size > 0
    lines = solution_lines()
    leaks = []
    for path in student.rglob("*"):
        if not path.is_file():
            continue
        assert "lds_key" not in path.name and not path.name.endswith(".zip"), path
        text = _readable(path)
        if "BEGIN SOLUTION" in text or "lds_key" in text or "lds_grading" in text:
            leaks.append(f"{path.name}: a marker or the key")
        flat = _norm(text)
        leaks += [f"{path.name}: {where}" for norm, where in lines.items() if norm in flat]
    assert not leaks, "\n".join(leaks)
    # the instructor bundle has them
    solutions = "".join(_readable(p) for p in (instructor / "solutions").glob("*.ipynb"))
    assert any(norm in _norm(solutions) for norm in lines)
    assert sorted(p.name for p in (instructor / "autograder").glob("*.zip")) == \
        [f"{k}-autograder.zip" for k in sorted(made)]
    assert (instructor / "keys" / "lds_key01.py").is_file()


def test_the_public_notebook_the_page_and_student_slides_are_made_from_holds_none():
    import nbformat

    lines = solution_lines()
    script = lessons.lesson_scripts()[0]
    nb = lessons.read_lesson(script)
    nb.cells[-1].outputs = [nbformat.v4.new_output("stream", name="stdout",
                                                   text="pass: interpretation — (b)\n")]
    public = lessons.public_notebook(nb)
    text = _norm(_notebook_text(public))
    assert not [w for n, w in lines.items() if n in text]
    assert "(b)" not in text  # a check's output would tell a choice question's answer
    assert any(n in _norm(_notebook_text(nb)) for n in lines)


def test_the_public_page_shows_no_solution_and_the_instructor_page_does():
    lines = solution_lines()
    script = lessons.lesson_scripts()[0]
    public, files = lessons.site_files(script, run=False, instructor=False)
    assert not [w for n, w in lines.items() if n in _norm(public)]
    assert "Solution" not in public and script.name not in files
    instructor, _ = lessons.site_files(script, run=False, instructor=True)
    assert '??? success "Solution"' in instructor
    assert any(n in _norm(instructor) for n in lines)


@pytest.mark.slow
def test_the_student_slides_hold_no_solution_and_the_instructors_do(tmp_path, monkeypatch):
    """The full build of lesson 1 (a kernel executes it): the student slides, made from the
    public notebook, have no solution line; the instructor's have them."""
    monkeypatch.setenv("PYTHONPATH", str(ROOT))  # the kernel imports this checkout
    lessons.build(tmp_path, only=["01"])
    lines = solution_lines()
    student = _norm(_readable(tmp_path / "student" / "slides" /
                              "01_memory_and_regions.slides.html"))
    teacher = _norm(_readable(tmp_path / "instructor" / "slides" /
                              "01_memory_and_regions.slides.html"))
    mine = {n: w for n, w in lines.items() if w.startswith("01_")}
    assert not [w for n, w in mine.items() if n in student]
    assert any(n in teacher for n in mine)
    assert (tmp_path / "student" / "slides" / "vendor").is_dir()


def test_mkdocs_excludes_sources_and_keys_and_the_instructor_site_includes_sources(monkeypatch):
    """mkdocs.yml keeps the lesson sources (the solution version) and the answer keys off the
    site; the instructor site's generated sources are marked included (mkdocs would
    otherwise exclude them again after the hooks, and the page's link would break)."""
    pytest.importorskip("mkdocs")
    monkeypatch.setenv("NO_MKDOCS_2_WARNING", "1")
    from mkdocs.config import load_config
    from mkdocs.structure.files import File, Files, InclusionLevel, get_files, set_exclusions

    config = load_config(str(ROOT / "mkdocs.yml"))
    files = {f.src_uri: f for f in get_files(config)}
    for script in lessons.lesson_scripts():
        assert files[f"lessons/{script.name}"].inclusion.is_excluded(), script.name
    for key in (ROOT / "docs" / "lessons" / "instructor").glob("*.py"):
        assert files[f"lessons/instructor/{key.name}"].inclusion.is_excluded(), key.name
    config.plugins._current_plugin = None  # File.generated outside a build
    source = File.generated(config, "lessons/01_memory_and_regions.py", content=b"",
                            inclusion=InclusionLevel.INCLUDED)
    set_exclusions(Files([source]), config)
    assert source.inclusion.is_included()
    hooks_text = (ROOT / "docs" / "_site" / "hooks.py").read_text()
    assert "inclusion=InclusionLevel.INCLUDED" in hooks_text
