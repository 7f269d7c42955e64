"""MkDocs hooks of the lds_toolkit site (``hooks:`` in mkdocs.yml).

* **Tutorials.** Every ``docs/tutorials/NN_name.py`` (a jupytext percent script) becomes the
  page ``tutorials/NN_name.md``: jupytext reads it as a notebook, nbclient executes it in a
  kernel of the running Python, nbconvert's Markdown exporter writes the cells, their printed
  output and the figures (PNG files beside the page). Executed notebooks are cached in
  ``.cache/docs-tutorials/`` under a hash of the script, the package's sources and the mode.
  ``LDS_DOCS_EXECUTE=0`` renders the scripts without running them (the fast build of the
  test suite, which executes the tutorials separately); ``LDS_TUTORIAL_QUICK=1`` is passed to
  the kernel as it is. The published page shows what a reader of the tutorial sees, nothing
  of the building machine: stderr output (warnings, progress bars) is left out, and an output
  naming a path of the build (the repository, the Python installation, the home directory)
  fails the build (:func:`published_outputs`).
* **Lessons.** Every ``docs/lessons/NN_slug.py`` becomes the page ``lessons/NN_slug.md`` and
  its downloads, built by ``docs/_site/lessons.py`` (executed lessons cached in
  ``.cache/docs-lessons/``): on the public site the student notebook and slides only, no
  solution anywhere (the lesson sources and the answer keys are excluded in mkdocs.yml);
  with ``LDS_DOCS_INSTRUCTOR=1`` the instructor site (solutions folded under the exercises,
  solution notebooks, instructor slides, otter autograder archives, sources), and
  ``lessons/vendor/`` holds the scripts the slides load (reveal.js, require.js, MathJax:
  ``docs/_site/slides_vendor/``), so that they work offline; the
  "Teaching" section of the navigation lists them in order after the syllabus
  (``lessons/index.md``, whose lesson table is generated), and
  ``lessons/course_streams.npz`` is the course data set
  (:func:`lds_toolkit.teaching.datasets.save_course_streams`).
* **Experiment pages.** Every registered experiment gets a page: the hand-written ones under
  ``docs/experiments/`` are kept, the others are generated; every experiment page ends with a
  generated section listing the experiment's declared claims and their verdicts on the
  committed numbers (``docs/results/``), from the same declarations as the tests and
  ``lds-toolkit report``.
* **Numbers from the runs.** Every page's quotes, ``{{ median quick/cloze
  mse_seeds/s4+attention }}`` (:mod:`lds_toolkit.experiments.report.quotes`), are replaced by the
  numbers of the committed runs in ``docs/results/``; a quote that names a missing run, path
  or claim fails the build, naming the page, the line and the quote.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from mkdocs.structure.files import File, Files

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
CACHE = ROOT / ".cache" / "docs-tutorials"

#: Teaching page of the experiments without a page of their own under docs/experiments/.
TEACHING = {
    "lds-impulse": ("learning/spectral_filtering.md", "spectral filtering"),
    "lengen-regions": ("learning/spectral_filtering.md", "spectral filtering"),
    "lengen-region-a": ("learning/spectral_filtering.md", "spectral filtering"),
    "lengen-region-b": ("learning/spectral_filtering.md", "spectral filtering"),
    "lengen-alg2": ("learning/spectral_filtering.md", "spectral filtering"),
    "regret-scaling": ("learning/spectral_filtering.md", "spectral filtering"),
    "nss-etc": ("control.md", "control"),
}


def _execute() -> bool:
    return os.environ.get("LDS_DOCS_EXECUTE", "1") not in ("0", "false", "no")


# --------------------------------------------------------------------------- tutorials


def _source_hash(script: Path, execute: bool) -> str:
    h = hashlib.sha256(script.read_bytes())
    h.update(f"execute={execute} quick={os.environ.get('LDS_TUTORIAL_QUICK', '')}".encode())
    if execute:  # an executed page depends on the package's code too
        for f in sorted((ROOT / "lds_toolkit").rglob("*.py")):
            h.update(f.relative_to(ROOT).as_posix().encode())
            h.update(f.read_bytes())
    return h.hexdigest()[:20]


def _executed_notebook(script: Path):
    import jupytext
    import nbformat
    from nbclient import NotebookClient

    key = _source_hash(script, execute=True)
    cached = CACHE / f"{script.stem}-{key}.ipynb"
    if cached.is_file():
        return nbformat.read(cached, as_version=4)
    nb = jupytext.read(script)
    # figures as PNG at a readable size; the first cell is removed again after execution
    setup = nbformat.v4.new_code_cell(
        "%config InlineBackend.figure_formats = ['png']\n"
        "%config InlineBackend.rc = {'figure.dpi': 96}")
    nb.cells.insert(0, setup)
    env_backend = os.environ.pop("MPLBACKEND", None)  # the kernel must use the inline backend
    try:
        NotebookClient(nb, timeout=900, kernel_name="python3",
                       resources={"metadata": {"path": str(script.parent)}}).execute()
    finally:
        if env_backend is not None:
            os.environ["MPLBACKEND"] = env_backend
    nb.cells.pop(0)
    CACHE.mkdir(parents=True, exist_ok=True)
    for old in CACHE.glob(f"{script.stem}-*.ipynb"):
        old.unlink()
    nbformat.write(nb, cached)
    return nb


def _machine_paths() -> list[str]:
    """Paths of the building machine that must not appear in a published page."""
    import sys

    paths = {str(ROOT), str(Path(sys.prefix)), str(Path(sys.base_prefix)), str(Path.home())}
    return sorted((p for p in paths if len(p) > 1), key=len, reverse=True)


def published_outputs(nb, name: str):
    """``nb`` with every stderr stream output removed; ``ValueError`` naming the cell when a
    remaining output (text, HTML, error) contains a path of the building machine."""
    paths = _machine_paths()
    for i, cell in enumerate(nb.cells):
        if "outputs" not in cell:
            continue
        cell["outputs"] = [o for o in cell["outputs"] if not (
            o.get("output_type") == "stream" and o.get("name") == "stderr")]
        for o in cell["outputs"]:
            text = json.dumps({k: v for k, v in o.items() if k != "data"})
            text += json.dumps({k: v for k, v in o.get("data", {}).items()
                                if k.startswith("text/")})
            for p in paths:
                if p in text or json.dumps(p)[1:-1] in text:
                    raise ValueError(f"tutorial {name}, cell {i}: its output shows the "
                                     f"building machine's path {p!r}; print something "
                                     "readers can reproduce instead")
    return nb


def tutorial_markdown(script: Path, execute: bool) -> tuple[str, dict[str, bytes]]:
    """The page of one tutorial script and its figures (``{relative path: PNG bytes}``)."""
    import jupytext
    from nbconvert import MarkdownExporter

    nb = _executed_notebook(script) if execute else jupytext.read(script)
    if execute:
        nb = published_outputs(nb, script.name)
    body, resources = MarkdownExporter().from_notebook_node(
        nb, resources={"output_files_dir": f"{script.stem}_files"})
    download = (f"*Run it yourself: [`{script.name}`]({script.name}) is a plain Python script "
                f"(`python docs/tutorials/{script.name}`; `LDS_TUTORIAL_QUICK=1` for a "
                "smaller, faster version), also a notebook through jupytext.*\n\n")
    if not execute:
        download += ("!!! note \"Not executed\"\n    This build rendered the tutorial without "
                     "running it (`LDS_DOCS_EXECUTE=0`); `make docs` shows its output and "
                     "figures.\n\n")
    lines = body.lstrip().split("\n", 1)  # keep the title first
    if lines[0].startswith("# "):
        body = lines[0] + "\n\n" + download + (lines[1] if len(lines) > 1 else "")
    else:
        body = download + body
    return body, dict(resources.get("outputs", {}))


# --------------------------------------------------------------------------- lessons


def _lessons_module():
    import importlib.util
    import sys

    name = "lds_docs_lessons"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, DOCS / "_site" / "lessons.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


def lesson_nav() -> list[dict[str, str]]:
    """Navigation entries of the lessons, in order: ``{"N. Title": "lessons/NN_slug.md"}``."""
    lessons = _lessons_module()
    return [{f"{int(s.name[:2])}. {lessons.lesson_title(s)}": f"lessons/{s.stem}.md"}
            for s in lessons.lesson_scripts()]


def lesson_times(text: str) -> dict[str, object]:
    """A lesson's time estimates from its source: the header's ``*Time: about N min ...*``
    (the whole lesson; "about N minutes of lecture and M of lab" adds up) and the
    ``(≈ N min)`` of each exercise heading and of the interpretation question's heading:
    ``{"total": N, "exercises": [...], "question": N}`` (``None`` where a lesson gives
    none)."""
    import re

    # "*Time: about 85 min — ...*", or "Time: about 90 minutes of lecture and 90 of lab"
    total = re.search(r"^# \*?Time: about (\d+) min(?:utes)?\b(?: of lecture and (\d+) of lab)?",
                      text, re.M)
    exercises = [int(m) for m in re.findall(r"^# ## Exercise \d+\b[^\n]*\(≈ (\d+) min\)\s*$",
                                            text, re.M)]
    question = re.search(r"^# ## Interpretation question \(≈ (\d+) min\)\s*$", text, re.M)
    minutes = sum(int(g) for g in total.groups() if g) if total else None
    return {"total": minutes, "exercises": exercises,
            "question": int(question.group(1)) if question else None}


def _time_cell(text: str) -> str:
    t = lesson_times(text)
    if t["total"] is None:
        return "—"
    parts = [f"{t['total']} min"]
    if t["exercises"]:
        parts.append("exercises " + ", ".join(str(m) for m in t["exercises"]))
    if t["question"] is not None:
        parts.append(f"question {t['question']}")
    return parts[0] + (f" ({'; '.join(parts[1:])})" if parts[1:] else "")


def lessons_table() -> str:
    """The syllabus's table of lessons: title, time (the whole lesson, then each exercise
    and the interpretation question, in minutes), graded exercises and slider of each."""
    import importlib

    lessons = _lessons_module()
    rows = []
    for script in lessons.lesson_scripts():
        module = lessons.module_name(script)
        try:
            mod = importlib.import_module(module)
        except ModuleNotFoundError as exc:  # lesson 8 without torch
            checks, sliders = f"(needs {exc.name})", ""
        else:
            checks = ", ".join(f"`{n}`" for n in mod.CHECKS)
            from lds_toolkit.teaching import registered_sliders

            sliders = ", ".join(f"`{k}`" for k, v in registered_sliders().items()
                                if v.module == module)
        rows.append(f"| {int(script.name[:2])} | [{lessons.lesson_title(script)}]"
                    f"({script.stem}.md) | {_time_cell(script.read_text())} | {checks} | "
                    f"{sliders} |")
    return ("| lesson | title | time | exercises (graded answers) | slider |\n"
            "| --- | --- | --- | --- | --- |\n" + "\n".join(rows))


def on_config(config):
    """Fill the "Teaching" section of the navigation with the lessons found on disk."""
    for entry in config["nav"] or []:
        if isinstance(entry, dict) and "Teaching" in entry:
            section = [e for e in entry["Teaching"] if not (isinstance(e, dict) and any(
                str(v).startswith("lessons/") and v != "lessons/index.md"
                for v in e.values()))]
            entry["Teaching"] = section + lesson_nav()
    return config


# --------------------------------------------------------------------------- experiments


def _claims_section(name: str) -> str:
    from lds_toolkit.experiments.base import SCALES
    from lds_toolkit.experiments.report import reproduction_table

    table = reproduction_table({s: DOCS / "results" / s for s in SCALES}, names=[name])
    return ("\n\n## Declared claims and their verdicts\n\n"
            "*Generated from the experiment's declarations "
            "(`lds_toolkit/experiments/catalog/`) and the committed runs in `docs/results/` "
            "(see the [reproduction table](../index.md#what-reproduces-and-what-does-not)).*\n\n"
            + (table if table.count("\n") > 2 else "This experiment declares no paper claim.\n"))


def _config_block(exp) -> str:
    from lds_toolkit.experiments.base import SCALES
    from lds_toolkit.experiments.config import build_config

    out = []
    for scale in (s for s in SCALES if s in exp.scales):  # "gpu" only where defined
        cfg = build_config(exp, scale=scale)
        cfg = {k: v for k, v in cfg.items() if k not in ("scale", "seed")}
        text = json.dumps(cfg)
        if len(text) > 600:
            text = text[:600] + " …"
        out.append(f"* **{scale}**: `{text}`")
    return "\n".join(out)


def _script(name: str) -> str:
    """The simulations/ script that runs experiment ``name``."""
    for f in sorted((ROOT / "simulations").glob("*.py")):
        if f'"{name}"' in f.read_text():
            return f"simulations/{f.name}"
    raise ValueError(f"no script in simulations/ runs {name!r}")


def generated_experiment_page(name: str) -> str:
    from lds_toolkit.experiments import get_experiment

    exp = get_experiment(name)
    page, label = TEACHING.get(name, (None, None))
    teach = f"\n\nThe figure, the method and what the numbers mean are explained in the " \
            f"[{label} page](../{page}).\n" if page else "\n"
    return (f"# `{name}`\n\n{exp.description[:1].upper()}{exp.description[1:]}.\n\n"
            f"**Paper:** {exp.paper}.{teach}\n"
            f"```bash\nlds-toolkit reproduce {name} --quick        # CPU scale, as make "
            f"figures\nlds-toolkit reproduce {name} --scale paper  # the paper's sizes\n"
            f"python {_script(name)} --quick  # the same through the public API\n```\n\n"
            f"## Configuration at each scale\n\n"
            f"Every entry can be changed with `--set KEY=VALUE`.\n\n{_config_block(exp)}\n")


# --------------------------------------------------------------------------- MkDocs events


def on_files(files: Files, config) -> Files:
    execute = _execute()
    for script in sorted((DOCS / "tutorials").glob("[0-9][0-9]_*.py")):
        body, figures = tutorial_markdown(script, execute)
        files.append(File.generated(config, f"tutorials/{script.stem}.md", content=body))
        for rel, data in figures.items():
            files.append(File.generated(config, f"tutorials/{rel}", content=data))
    lessons = _lessons_module()
    for script in lessons.lesson_scripts():
        body, extra = lessons.site_files(script, execute, published=published_outputs)
        files.append(File.generated(config, f"lessons/{script.stem}.md", content=body))
        for rel, data in extra.items():
            files.append(File.generated(config, f"lessons/{rel}", content=data))
    if execute:  # the slides' reveal.js, require.js and MathJax, once: lessons/vendor/
        for rel, data in lessons.slide_assets().items():
            files.append(File.generated(config, f"lessons/{rel}", content=data))
    import tempfile

    from lds_toolkit.teaching.datasets import save_course_streams

    with tempfile.TemporaryDirectory() as tmp:
        data = save_course_streams(Path(tmp) / "course_streams.npz").read_bytes()
    files.append(File.generated(config, "lessons/course_streams.npz", content=data))
    from lds_toolkit.experiments import list_experiments

    for name in list_experiments():
        src = f"experiments/{name}.md"
        if files.get_file_from_path(src) is None:
            files.append(File.generated(config, src, content=generated_experiment_page(name)))
    return files


def _experiments_table() -> str:
    from lds_toolkit.experiments import list_experiments

    rows = [f"| [`{n}`]({n}.md) | {e.paper} | {e.description} |"
            for n, e in list_experiments().items()]
    return "| experiment | paper | what it runs |\n| --- | --- | --- |\n" + "\n".join(rows)


def on_page_markdown(markdown: str, page, config, files) -> str:
    src = page.file.src_uri
    if not src.startswith("tutorials/"):  # executed output is not ours to rewrite
        from lds_toolkit.experiments.report.quotes import render

        markdown = render(markdown, DOCS / "results", where=f"docs/{src}")
    marker = "<!-- experiments-table: generated from the registry by docs/_site/hooks.py -->"
    if src == "experiments/index.md":
        return markdown.replace(marker, _experiments_table())
    if src == "lessons/index.md":
        return markdown.replace("<!-- lessons-table: generated by docs/_site/hooks.py -->",
                                lessons_table())
    if src.startswith("experiments/") and src.endswith(".md") and src != "experiments/index.md":
        from lds_toolkit.experiments import list_experiments

        name = src[len("experiments/"):-3]
        if name in list_experiments():
            return markdown + _claims_section(name)
    return markdown
