"""The lessons (``docs/lessons/NN_slug.py``) → student and solution notebooks, autograder
archives, slides and the site's pages.

One source per lesson, the solution version (format: ``docs/lessons/README.md``). From it:

* **solution notebook** — the script read by jupytext (cell tags kept);
* **student notebook** and **autograder archive** — made by otter-grader's ``otter assign``
  from a master notebook that :func:`master_notebook` builds: every ``exercise`` cell
  becomes an otter question whose solution cell is the exercise and whose tests are the
  lesson's public check (visible, 0 points) and one hidden test per hidden case of the
  lesson's answer key (``docs/lessons/instructor/lds_keyNN.py``), each worth its points and
  graded by ``lds_grading.grade`` with the key's time limit per call; the key and the grader
  go into the archive only. otter replaces the solution markers with ``...``. No otter code
  runs in the student notebook (no ``grader.check`` cells, no init cell): the lesson's own
  check cells report "not yet";
* **slides** — nbconvert's reveal.js exporter, a new slide at every ``## `` heading, titled
  with the lesson's title: the instructor's from the executed solution notebook, the
  students' from :func:`public_notebook` (exercises as ``...``, no check output); they work
  offline: reveal.js, require.js and MathJax come from a ``vendor/`` folder beside them
  (``slides.py``);
* **the page** — the executed notebook as Markdown: on the public site each exercise in its
  student version only (:func:`public_notebook`); on the instructor site
  (``LDS_DOCS_INSTRUCTOR=1``) with the solution folded under it (:func:`page_notebook`).

``python docs/_site/lessons.py --out handout`` (``make lessons``) writes the **student
build** ``handout/student/`` (student notebooks, ``slides/`` with ``slides/vendor/``,
``data/course_streams.npz``: no solution anywhere) and the **instructor bundle**
``handout/instructor/`` (``solutions/``, ``autograder/``, ``slides/``, ``keys/``). A teacher
hands out ``handout/student/`` and grades the returned notebooks with ``otter run -a
handout/instructor/autograder/NN_slug-autograder.zip submission.ipynb`` (or uploads the
archive to Gradescope). The site's build (``hooks.py``) and the tests
(``tests/teaching/test_lessons.py``, ``test_no_solutions.py``, ``test_grading_rehearsal.py``)
call the functions here.
"""

from __future__ import annotations

import ast
import contextlib
import copy
import io
import os
import re
import shutil
import sys
import tempfile
import warnings
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
LESSONS = ROOT / "docs" / "lessons"
#: The answer keys and the hidden tests' grader: shipped in the autograder archives only.
INSTRUCTOR = LESSONS / "instructor"
TAGS = ("exercise", "check", "slider")
_MARKERS = re.compile(r"#\s*(BEGIN SOLUTION|END SOLUTION|SOLUTION)\b")


def lesson_scripts() -> list[Path]:
    """``docs/lessons/NN_slug.py``, in order."""
    return sorted(LESSONS.glob("[0-9][0-9]_*.py"))


def module_name(script: Path) -> str:
    """``lds_toolkit.teaching.lessonNN`` of a lesson script."""
    return f"lds_toolkit.teaching.lesson{script.name[:2]}"


def read_lesson(script: Path):
    """The solution notebook of a lesson (jupytext), its format checked."""
    import jupytext

    nb = jupytext.read(script)
    problems = format_problems(nb, script.name)
    if problems:
        raise ValueError(f"{script.name}: " + "; ".join(problems))
    nb.metadata.pop("jupytext", None)
    return nb


def _tags(cell) -> list[str]:
    return list(cell.get("metadata", {}).get("tags", []))


def defined_names(source: str) -> set[str]:
    """The names a cell defines at top level (functions, classes, assignments)."""
    out: set[str] = set()
    for node in ast.parse(source).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                out.update(n.id for n in ast.walk(t) if isinstance(n, ast.Name))
    return out


def format_problems(nb, name: str) -> list[str]:
    """What breaks the lesson format (docs/lessons/README.md) in a solution notebook."""
    import importlib

    problems = []
    try:
        checks = importlib.import_module(module_name(Path(name))).CHECKS
    except (ImportError, AttributeError) as exc:
        return [f"its module {module_name(Path(name))} with CHECKS cannot be imported ({exc})"]
    answered: set[str] = set()
    n_slider = 0
    for i, cell in enumerate(nb.cells):
        tags = _tags(cell)
        unknown = [t for t in tags if t not in TAGS]
        if unknown:
            problems.append(f"cell {i}: unknown tag(s) {unknown}; known: {list(TAGS)}")
        if cell.cell_type != "code":
            continue
        has_markers = bool(_MARKERS.search(cell.source))
        if "exercise" in tags:
            if not has_markers:
                problems.append(f"cell {i}: an exercise cell without solution markers")
            names = defined_names(cell.source) & set(checks)
            if not names:
                problems.append(f"cell {i}: the exercise defines none of CHECKS' names "
                                f"{sorted(checks)}")
            answered |= names
        elif has_markers:
            problems.append(f"cell {i}: solution markers outside an exercise cell")
        n_slider += "slider" in tags
    missing = set(checks) - answered
    if missing:
        problems.append(f"CHECKS names no exercise defines: {sorted(missing)}")
    if len(checks) < 2:
        problems.append(f"{len(checks)} graded exercise(s); a lesson has 2-4")
    if n_slider < 1:
        problems.append("no slider cell")
    return problems


_MINUTES = re.compile(r"\(≈\s*\d+\s*min\)")


def depth_problems(nb, name: str) -> list[str]:
    """What a lesson lacks of the teaching format's depth (docs/lessons/README.md): every
    exercise's prompt (the Markdown cell before it) gives a time estimate, ``(≈ N min)``, and
    the lesson has an interpretation question — an exercise defining ``interpretation``,
    graded by ``CHECKS["interpretation"]``, with its own time estimate."""
    import importlib

    checks = importlib.import_module(module_name(Path(name))).CHECKS
    problems = []
    prompt = None
    for i, cell in enumerate(nb.cells):
        if cell.cell_type == "markdown":
            prompt = cell.source
        elif "exercise" in _tags(cell):
            if prompt is None or not _MINUTES.search(prompt):
                problems.append(f"cell {i}: the exercise's prompt gives no time estimate "
                                "'(≈ N min)'")
            prompt = None
    if "interpretation" not in checks:
        problems.append("no interpretation question (CHECKS['interpretation'])")
    return problems


# --------------------------------------------------------------------------- otter assign


def key_path(script: Path) -> Path:
    """The lesson's answer key, ``docs/lessons/instructor/lds_keyNN.py`` (instructor only)."""
    return INSTRUCTOR / f"lds_key{script.name[:2]}.py"


def load_key(script: Path):
    """The lesson's answer key as a module (``None`` when the lesson has none yet)."""
    import importlib.util

    path = key_path(script)
    if not path.is_file():
        return None
    spec = importlib.util.spec_from_file_location(f"lds_key{script.name[:2]}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _test_cell(code: str, points: float, hidden: bool):
    import nbformat

    config = (f'""" # BEGIN TEST CONFIG\npoints: {points:g}\nhidden: '
              f'{"true" if hidden else "false"}\n""" # END TEST CONFIG\n')
    return nbformat.v4.new_code_cell(config + code)


def question_tests(script: Path, names: list[str]) -> list:
    """The test cells of one question: for each answer name, the public check (visible,
    0 points: the student sees it pass or not) and one hidden test per hidden case of the
    answer key, each worth its points (partial credit case by case; each call of the
    student's function time-limited by the key's ``TIME_LIMIT``). A lesson without a key
    yet: the public check, 1 point."""
    lesson = module_name(script).rpartition(".")[2]
    key = load_key(script)
    stem = f"lds_key{script.name[:2]}"
    cells = []
    import inspect

    checks = __import__(module_name(script), fromlist=["CHECKS"]).CHECKS
    for n in names:
        hidden = key.HIDDEN.get(n, []) if key is not None else []
        limited = bool(hidden) and "time_limit" in inspect.signature(checks[n]).parameters
        public = (f"from lds_toolkit.teaching import {lesson}\n"
                  + (f"import {stem}\n" if limited else "")
                  + f"result = {lesson}.CHECKS[{n!r}]({n}, verbose=False"
                  + (f", time_limit={stem}.TIME_LIMIT" if limited else "") + ")\n"
                  "assert result.passed, result.message")
        cells.append(_test_cell(public, 0 if hidden else 1, hidden=False))
        for i, (points, _) in enumerate(hidden):
            cells.append(_test_cell(
                f"import lds_grading, {stem}\n"
                f"from lds_toolkit.teaching import {lesson}\n"
                f"result = lds_grading.grade({lesson}, {stem}, {n!r}, {i}, {n})\n"
                f"assert result.passed, result.message", points, hidden=True))
    return cells


def master_notebook(script: Path, *, autograder_files: list[str] | None = None):
    """The otter-grader master notebook of a lesson: each exercise cell becomes a question
    (prompt = the Markdown cell before it, solution = the exercise, tests =
    :func:`question_tests`). ``autograder_files``: files beside the master notebook that go
    into the autograder archive only (the answer key and ``lds_grading.py``)."""
    import nbformat

    nb = read_lesson(script)
    checks = __import__(module_name(script), fromlist=["CHECKS"]).CHECKS
    raw = nbformat.v4.new_raw_cell
    config = ("# ASSIGNMENT CONFIG\n"
              "init_cell: false\ncheck_all_cell: false\nexport_cell: false\n"
              "run_tests: false\nsolutions_pdf: false\n"
              "requirements:\n  - lds_toolkit\n"
              "generate:\n  zips: false\n")
    if autograder_files:
        config += "autograder_files:\n" + "".join(f"  - {f}\n" for f in autograder_files)
    cells = [raw(config)]
    for cell in nb.cells:
        if cell.cell_type == "code" and "exercise" in _tags(cell):
            names = sorted(defined_names(cell.source) & set(checks))
            prompt = cells.pop() if cells and cells[-1].cell_type == "markdown" else None
            cells.append(raw(f"# BEGIN QUESTION\nname: {'-'.join(names)}\ncheck_cell: false"))
            if prompt is not None:
                cells.append(prompt)
            cells += [raw("# BEGIN SOLUTION"), cell, raw("# END SOLUTION"),
                      raw("# BEGIN TESTS"), *question_tests(script, names),
                      raw("# END TESTS"), raw("# END QUESTION")]
        else:
            cells.append(cell)
    nb.cells = cells
    return nb


def assign(script: Path, out: Path) -> dict[str, Path]:
    """Run ``otter assign`` on the lesson's master notebook into ``out``; returns the paths
    of the student notebook, the autograder notebook and the autograder archive (which
    alone holds the answer key and ``lds_grading.py``)."""
    import logging

    import nbformat
    from otter.assign import main as otter_assign

    out = Path(out).resolve()
    with tempfile.TemporaryDirectory() as tmp:
        extra = []
        if key_path(script).is_file():
            for src in (key_path(script), INSTRUCTOR / "lds_grading.py"):
                shutil.copyfile(src, Path(tmp) / src.name)
                extra.append(src.name)
        master = Path(tmp) / f"{script.stem}.ipynb"
        nbformat.write(master_notebook(script, autograder_files=extra), master)
        result = Path(tmp) / "dist"
        otter_log = logging.getLogger("otter")
        level = otter_log.level
        cwd = os.getcwd()
        with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            otter_log.setLevel(logging.WARNING)
            try:
                os.chdir(tmp)  # otter takes autograder_files relative to the working dir
                otter_assign(str(master), str(result), no_pdfs=True, no_run_tests=True)
            finally:
                os.chdir(cwd)
                otter_log.setLevel(level)
        paths = {"student": out / "student" / master.name,
                 "autograder_notebook": out / "autograder" / master.name,
                 "autograder": out / "autograder" / f"{script.stem}-autograder.zip"}
        for p in paths.values():
            p.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(result / "student" / master.name, paths["student"])
        shutil.copyfile(result / "autograder" / master.name, paths["autograder_notebook"])
        zips = sorted((result / "autograder").glob("*-autograder_*.zip"))
        if zips:
            shutil.copyfile(zips[-1], paths["autograder"])
        else:
            paths.pop("autograder")
    return paths


def student_notebook(script: Path):
    """The student notebook of a lesson, as ``otter assign`` makes it."""
    import nbformat

    with tempfile.TemporaryDirectory() as tmp:
        return nbformat.read(assign(script, Path(tmp))["student"], as_version=4)


# --------------------------------------------------------------------------- running


@contextlib.contextmanager
def _agg_pyplot():
    """pyplot on the Agg backend for the duration, restored after; figures closed."""
    import matplotlib.pyplot as plt

    old = plt.get_backend()
    plt.switch_backend("Agg")
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=".*non-interactive.*cannot be shown")
            warnings.filterwarnings("ignore", message=".*is non-interactive, and thus cannot")
            yield
    finally:
        plt.close("all")
        plt.switch_backend(old)


def run_in_process(nb, *, quick: bool = True,
                   namespace: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """Execute a notebook's code cells in this process, in order, in a fresh namespace.

    Returns one record per code cell: ``index``, ``tags``, ``stdout``, ``error`` (the
    exception's one-line description, or None). Stops at the first error. The cheap
    alternative to a kernel (nbclient) for the test suite; ``LDS_LESSON_QUICK`` is set for
    the run when ``quick``. ``namespace`` (a dict, filled in place) receives the notebook's
    variables.
    """
    if namespace is None:
        namespace = {}
    namespace.setdefault("__name__", "__main__")
    records = []
    old_env = os.environ.get("LDS_LESSON_QUICK")
    os.environ["LDS_LESSON_QUICK"] = "1" if quick else "0"
    try:
        with _agg_pyplot():
            for i, cell in enumerate(nb.cells):
                if cell.cell_type != "code":
                    continue
                buf = io.StringIO()
                error = None
                try:
                    code = compile(cell.source, f"<cell {i}>", "exec")
                    with contextlib.redirect_stdout(buf):
                        exec(code, namespace)  # noqa: S102 - the lesson's own code
                except Exception as exc:  # noqa: BLE001 - recorded for the test to report
                    error = f"{type(exc).__name__}: {exc}"
                records.append({"index": i, "tags": _tags(cell), "stdout": buf.getvalue(),
                                "error": error})
                if error:
                    break
    finally:
        if old_env is None:
            os.environ.pop("LDS_LESSON_QUICK", None)
        else:
            os.environ["LDS_LESSON_QUICK"] = old_env
    return records


def execute(nb, *, quick: bool = False, timeout: int = 600):
    """Execute a notebook in a kernel (nbclient), figures as PNG; the executed copy."""
    from nbclient import NotebookClient

    nb = copy.deepcopy(nb)
    import nbformat

    nb.cells.insert(0, nbformat.v4.new_code_cell(
        "%config InlineBackend.figure_formats = ['png']\n"
        "%config InlineBackend.rc = {'figure.dpi': 96}"))
    env_backend = os.environ.pop("MPLBACKEND", None)
    old_quick = os.environ.get("LDS_LESSON_QUICK")
    os.environ["LDS_LESSON_QUICK"] = "1" if quick else "0"
    try:
        NotebookClient(nb, timeout=timeout, kernel_name="python3",
                       resources={"metadata": {"path": str(LESSONS)}}).execute()
    finally:
        if env_backend is not None:
            os.environ["MPLBACKEND"] = env_backend
        if old_quick is None:
            os.environ.pop("LDS_LESSON_QUICK", None)
        else:
            os.environ["LDS_LESSON_QUICK"] = old_quick
    nb.cells.pop(0)
    return nb


# --------------------------------------------------------------------------- outputs


def student_source(source: str) -> str:
    """An exercise cell's source as the student sees it (otter's marker rules)."""
    from otter.assign.solutions import replace_solutions

    return "\n".join(replace_solutions(source.split("\n"), "python"))


def page_notebook(nb):
    """The notebook the site renders: each exercise as its student version, the solution
    folded below it (a collapsed admonition), the outputs kept."""
    import nbformat

    out = copy.deepcopy(nb)
    cells = []
    for cell in out.cells:
        if cell.cell_type == "code" and "exercise" in _tags(cell):
            solution = "\n".join(line for line in cell.source.split("\n")
                                 if not _MARKERS.search(line)
                                 or not line.strip().startswith("#")).rstrip()
            solution = re.sub(r"\s*# SOLUTION\s*$", "", solution, flags=re.M)
            student = copy.deepcopy(cell)
            student.source = student_source(cell.source)
            cells.append(student)
            body = "\n".join("    " + line if line else "" for line in solution.split("\n"))
            cells.append(nbformat.v4.new_markdown_cell(
                f'??? success "Solution"\n\n    ```python\n{body}\n    ```\n'))
        else:
            cells.append(cell)
    out.cells = cells
    return out


def public_notebook(nb):
    """The executed notebook as a student may see it (the public site's page, the student
    slides): every exercise cell in its student version (otter's markers applied) and without
    outputs, every check cell without outputs (a check's line would tell the right answer of
    a choice question). No solution is left in it."""
    out = copy.deepcopy(nb)
    for cell in out.cells:
        if cell.cell_type != "code":
            continue
        tags = _tags(cell)
        if "exercise" in tags:
            cell.source = student_source(cell.source)
        if "exercise" in tags or "check" in tags:
            cell.outputs = []
            cell.execution_count = None
    return out


def _slides():
    """``docs/_site/slides.py`` (the slides and their vendored scripts), loaded once: this
    folder holds scripts, not a package."""
    import importlib.util

    name = "lds_docs_slides"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, Path(__file__).with_name("slides.py"))
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


def slides_html(nb, script: Path) -> str:
    """reveal.js slides of the executed notebook of lesson ``script``, titled with the
    lesson's title; they load their scripts from a ``vendor/`` folder beside them
    (:func:`slide_assets`), so they work offline (``docs/_site/slides.py``)."""
    return _slides().slides_html(nb, title=lesson_title(script))


def slide_assets() -> dict[str, bytes]:
    """The files the slides need beside them: ``{"vendor/<path>": bytes}`` (reveal.js,
    require.js, MathJax; ``docs/_site/slides_vendor/``)."""
    return _slides().vendor_files()


def lesson_title(script: Path) -> str:
    """The lesson's title: its first Markdown heading, without "Lesson N —"."""
    for line in script.read_text().splitlines():
        if line.startswith("# # "):
            return re.sub(r"^Lesson \d+\s*[—-]\s*", "", line[4:].strip())
    raise ValueError(f"{script.name}: no '# # Title' line")


def _cache_key(script: Path) -> str:
    import hashlib

    h = hashlib.sha256(script.read_bytes())
    for f in sorted((ROOT / "lds_toolkit").rglob("*.py")) + sorted(INSTRUCTOR.glob("*.py")) + [
            Path(__file__), _slides().__file__]:
        h.update(Path(f).as_posix().encode())
        h.update(Path(f).read_bytes())
    h.update(_slides().vendor_digest().encode())  # the slides' scripts and their paths
    return h.hexdigest()[:20]


def _executed_cache(script: Path) -> Path:
    """The lesson run once in a kernel at full size, with everything made from it (cached in
    ``.cache/docs-lessons/`` under a hash of the script, the package, the answer keys and
    this file): ``executed.ipynb``; the student notebook and the autograder archive (otter
    assign); the solution notebook; the instructor's slides (``NN.slides.html``, from the
    executed solution) and the students' (``NN.student.slides.html``, from
    :func:`public_notebook`)."""
    import nbformat

    stem = script.stem
    cache = ROOT / ".cache" / "docs-lessons" / f"{stem}-{_cache_key(script)}"
    if not (cache / "done").is_file():
        cache.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f"{stem}-tmp-", dir=cache.parent))
        executed = execute(read_lesson(script))
        nbformat.write(executed, tmp / "executed.ipynb")
        paths = assign(script, tmp)
        shutil.copyfile(paths["student"], tmp / f"{stem}.ipynb")
        if "autograder" in paths:
            shutil.copyfile(paths["autograder"], tmp / f"{stem}-autograder.zip")
        nbformat.write(read_lesson(script), tmp / f"{stem}.solution.ipynb")
        (tmp / f"{stem}.slides.html").write_text(slides_html(executed, script))
        (tmp / f"{stem}.student.slides.html").write_text(
            slides_html(public_notebook(executed), script))
        (tmp / "done").write_text("")
        for old in cache.parent.glob(f"{stem}-*"):
            if old != tmp:
                shutil.rmtree(old)
        tmp.rename(cache)
    return cache


_YES, _NO = ("1", "true", "yes"), ("", "0", "false", "no")


def instructor_site() -> bool:
    """``LDS_DOCS_INSTRUCTOR=1``: the site for instructors (solutions folded under the
    exercises, solution notebooks, autograder archives, sources); otherwise the public site,
    which holds no solution. Another value is refused: a typo must not pick a site."""
    value = os.environ.get("LDS_DOCS_INSTRUCTOR", "0")
    if value.strip().lower() not in _YES + _NO:
        raise ValueError(f"LDS_DOCS_INSTRUCTOR must be one of {', '.join(_YES + _NO[1:])} (or "
                         f"empty), got {value!r:.60}")
    return value.strip().lower() in _YES


def site_files(script: Path, run: bool, published=None,
               instructor: bool | None = None) -> tuple[str, dict[str, bytes]]:
    """The page of one lesson (Markdown) and the files beside it (relative name -> bytes).

    ``run``: the solution notebook run in a kernel at full size (:func:`_executed_cache`),
    its outputs on the page. Otherwise the page shows the cells without outputs (the test
    suite's fast build). ``published(nb, name)`` filters the executed outputs
    (hooks.published_outputs).

    The **public** site (default) shows each exercise in its student version only, without
    the outputs of exercise and check cells (:func:`public_notebook`), and offers the
    student notebook and the student slides. The **instructor** site (``instructor``, or
    :func:`instructor_site`) shows each solution folded under its exercise and also offers
    the solution notebook, the instructor's slides, the autograder archive and the source.
    """
    import nbformat
    from nbconvert import MarkdownExporter

    if instructor is None:
        instructor = instructor_site()
    elif not isinstance(instructor, bool):
        raise TypeError(f"instructor must be True, False or None (LDS_DOCS_INSTRUCTOR), got "
                        f"{type(instructor).__name__} {instructor!r:.60}")
    stem = script.stem
    files: dict[str, bytes] = {}
    if run:
        cache = _executed_cache(script)
        nb = nbformat.read(cache / "executed.ipynb", as_version=4)
        if published is not None:
            nb = published(nb, script.name)
        wanted = {f"{stem}.ipynb": f"{stem}.ipynb"}
        if instructor:
            wanted.update({f"{stem}.solution.ipynb": f"{stem}.solution.ipynb",
                           f"{stem}.slides.html": f"{stem}.slides.html",
                           f"{stem}-autograder.zip": f"{stem}-autograder.zip"})
        else:
            wanted[f"{stem}.slides.html"] = f"{stem}.student.slides.html"
        for name, cached in wanted.items():
            if (cache / cached).is_file():
                files[name] = (cache / cached).read_bytes()
        if instructor:
            files[script.name] = script.read_bytes()
    else:
        nb = read_lesson(script)
    shown = page_notebook(nb) if instructor else public_notebook(nb)
    body, resources = MarkdownExporter().from_notebook_node(
        shown, resources={"output_files_dir": f"{stem}_files"})
    files.update(resources.get("outputs", {}))
    if run and instructor:
        head = ("*Instructor build. Downloads: "
                f"[student notebook]({stem}.ipynb) · [solution notebook]({stem}.solution.ipynb)"
                f" · [slides]({stem}.slides.html) · [autograder (otter)]({stem}-autograder.zip)"
                f" · source [`{script.name}`]({script.name}). Each exercise below shows the "
                "student version; its solution is folded under it.*\n\n")
    elif run:
        head = (f"*Downloads: [student notebook]({stem}.ipynb) · [slides]({stem}.slides.html)."
                " The solutions, the solution notebooks and the autograder are in the "
                "instructor bundle (`python docs/_site/lessons.py --out handout`: "
                "`handout/instructor/`).*\n\n")
    else:
        head = ("!!! note \"Not executed\"\n    This build rendered the lesson without running"
                " it (`LDS_DOCS_EXECUTE=0`); `make docs` shows its output and figures and "
                "builds the student notebook and the slides.\n\n")
    lines = body.lstrip().split("\n", 1)
    if lines[0].startswith("# "):
        body = lines[0] + "\n\n" + head + (lines[1] if len(lines) > 1 else "")
    else:
        body = head + body
    return body, files


def checked_out(out) -> Path:
    """The build's root ``out`` resolved, refused (naming ``--out``) before anything is made
    when it is empty (the build would land in the current directory), an existing file, or
    under a file."""
    if not isinstance(out, (str, os.PathLike)) or not str(out).strip():
        raise ValueError(f"--out must name a directory for the build (student/ and "
                         f"instructor/ go under it), got {out!r:.60}")
    path = Path(out).expanduser().resolve()
    for p in (path, *path.parents):
        if p.exists() and not p.is_dir():
            raise ValueError(f"--out {str(out)!r:.80}: {str(p)!r:.80} is a file, not a "
                             "directory")
    return path


def selected_lessons(only=None) -> list[Path]:
    """The lesson scripts whose file name starts with one of ``only`` (all when None); an
    entry that matches no lesson, an empty one or a bare string is refused, naming it."""
    scripts = lesson_scripts()
    if only is None:
        return scripts
    if isinstance(only, (str, bytes)) or not all(isinstance(o, str) for o in only):
        raise TypeError(f"only (--only) must be a list of lesson name prefixes such as "
                        f"['01', '04'], got {only!r:.60}")
    names = [s.name for s in scripts]
    for prefix in only:
        if not prefix or not any(n.startswith(prefix) for n in names):
            raise ValueError(f"only (--only) {prefix!r:.40} matches no lesson; the lessons "
                             f"are {', '.join(s.stem for s in scripts)}")
    return [s for s in scripts if s.name.startswith(tuple(only))]


def build(out: Path, *, execute_slides: bool = True,
          only: list[str] | None = None) -> dict[str, dict[str, Path]]:
    """The student build and the instructor bundle of every lesson under ``out``.

    * ``out/student/`` — what students get, **no solution anywhere**: the student notebooks
      (otter assign), ``slides/`` (from :func:`public_notebook`: exercises as ``...``, no
      check output) with ``slides/vendor/``, and ``data/course_streams.npz``;
    * ``out/instructor/`` — the solution notebooks (``solutions/``), the otter autograder
      archives (``autograder/``: hidden tests weighted per case, each call time-limited; the
      answer key and ``lds_grading.py`` inside), the instructor's slides (``slides/``) and
      the answer keys (``keys/``).

    ``execute_slides=False`` skips the slides (they execute each lesson in a kernel);
    ``only`` limits the build to the lessons whose file name starts with one of its strings.
    """
    import nbformat

    from lds_toolkit.teaching.datasets import save_course_streams

    out = checked_out(out)  # before any lesson is assigned: nothing is made for a bad one
    if not isinstance(execute_slides, bool):
        raise TypeError(f"execute_slides must be True or False, got "
                        f"{type(execute_slides).__name__} {execute_slides!r:.60}")
    scripts = selected_lessons(only)
    student, instructor = out / "student", out / "instructor"
    made = {}
    with tempfile.TemporaryDirectory() as tmp:
        for script in scripts:
            done = assign(script, Path(tmp) / script.stem)
            paths = {"student": student / f"{script.stem}.ipynb",
                     "solution": instructor / "solutions" / f"{script.stem}.ipynb"}
            for p in paths.values():
                p.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(done["student"], paths["student"])
            if "autograder" in done:
                paths["autograder"] = instructor / "autograder" / done["autograder"].name
                paths["autograder"].parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(done["autograder"], paths["autograder"])
            solution = read_lesson(script)
            nbformat.write(solution, paths["solution"])
            if execute_slides:
                executed = execute(solution)
                for who, nb in ((student, public_notebook(executed)), (instructor, executed)):
                    path = who / "slides" / f"{script.stem}.slides.html"
                    path.parent.mkdir(parents=True, exist_ok=True)
                    path.write_text(slides_html(nb, script))
                    paths[f"{who.name}_slides"] = path
            made[script.stem] = paths
            print(f"{script.stem}: " + ", ".join(str(p.relative_to(out))
                                                 for p in paths.values()))
    keys = instructor / "keys"
    keys.mkdir(parents=True, exist_ok=True)
    for src in sorted(INSTRUCTOR.glob("*.py")):
        shutil.copyfile(src, keys / src.name)
    (student / "data").mkdir(parents=True, exist_ok=True)
    save_course_streams(student / "data" / "course_streams.npz")
    if execute_slides:  # once, beside each build's slides
        for who in (student, instructor):
            vendor = _slides().publish_vendor(who / "slides")
            print(f"slides' scripts: {vendor.relative_to(out)}/")
    return made


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default="handout",
                        help="directory of the build: OUT/student and OUT/instructor")
    parser.add_argument("--no-slides", action="store_true",
                        help="skip the slides (they execute each lesson in a kernel)")
    parser.add_argument("--only", nargs="+", metavar="NN",
                        help="only the lessons whose file name starts with these (01 04)")
    args = parser.parse_args(argv)
    try:  # the arguments are checked before any lesson is assigned
        checked_out(args.out)
        selected_lessons(args.only)
    except (TypeError, ValueError) as exc:
        parser.error(str(exc))
    build(Path(args.out), execute_slides=not args.no_slides, only=args.only)
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    sys.exit(main())
