"""The documentation site builds in strict mode (mkdocs.yml; `make docs`).

The build here skips executing the tutorials (``LDS_DOCS_EXECUTE=0``; they run in
tests/test_tutorials.py) so that the check stays fast; everything else is the real build:
strict mode turns a broken link or anchor, an unresolved API reference or a docstring griffe
cannot parse into an error.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("mkdocs", reason="the docs extra is not installed (pip install -e .[docs])")

from lds_toolkit.experiments import list_experiments  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    out = tmp_path_factory.mktemp("site")
    env = dict(os.environ, LDS_DOCS_EXECUTE="0", NO_MKDOCS_2_WARNING="1")
    proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict",
                           "--site-dir", str(out)], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-5000:]
    return out


def test_api_reference_is_generated_from_the_docstrings(site):
    html = (site / "api" / "systems.html").read_text()
    for name in ("systems.eigenvalue_regions", "systems.random_lds", "systems.LDS",
                 "systems.simulate.simulate", "systems.discretize.discretize"):
        assert f'id="lds_toolkit.{name}"' in html, name
    html = (site / "api" / "control.html").read_text()
    assert 'id="lds_toolkit.control.continuous_lyapunov"' in html
    assert ":func:" not in html  # Sphinx roles rendered as code (docs/_site/griffe_rst.py)


def test_every_tutorial_and_experiment_has_a_page(site):
    for script in (ROOT / "docs" / "tutorials").glob("[0-9][0-9]_*.py"):
        page = (site / "tutorials" / f"{script.stem}.html").read_text()
        assert "Not executed" in page  # this build skips execution
        assert (site / "tutorials" / script.name).is_file()  # the script, downloadable
    for name in list_experiments():
        page = (site / "experiments" / f"{name}.html").read_text()
        assert "Declared claims and their verdicts" in page, name


def test_equations_are_marked_for_the_vendored_katex(site):
    page = (site / "tutorials" / "02_spectral_filtering.html").read_text()
    assert 'class="arithmatex"' in page
    assert (site / "assets" / "katex" / "katex.min.js").is_file()
    index = (site / "index.html").read_text()
    assert "fonts.googleapis" not in index and "cdn.jsdelivr" not in index


def _check_site():
    import importlib.util

    spec = importlib.util.spec_from_file_location("check_site",
                                                  ROOT / "docs" / "_site" / "check_site.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_one_math_mechanism_no_raw_math_no_equations_in_code_blocks(site):
    """What `make docs-check` checks before opening a browser: no page shows raw ``$…$`` or
    LaTeX, and the prose pages hold no code block without a language (equations as code)."""
    check = _check_site()
    assert check.static_problems(site) == {}
    for page in ("systems.html", "control.html", "learning/spectral_filtering.html",
                 "layers/focus.html", "layers/las.html"):
        assert (site / page).read_text().count('class="arithmatex"') >= 10, page
    # docstrings' :math: roles and .. math:: blocks render like every other equation
    neural = (site / "api" / "neural.html").read_text()
    assert ":math:" not in neural and 'class="arithmatex"' in neural


def test_the_math_check_catches_what_it_is_for():
    check = _check_site()
    equation_as_code = ('<p>the recursion</p><div class="language-text highlight"><pre><span>'
                        '</span><code>s_{t+1} = A s_t\n</code></pre></div>')
    labelled = '<div class="language-python highlight"><pre><code>x = 1</code></pre></div>'
    raw = "<p>the cost is $O(n^2)$ per step and \\frac{a}{b}</p>"
    marked = '<p>the cost is <span class="arithmatex">\\(O(n^2)\\)</span> per step</p>'
    assert len(check.page_problems(equation_as_code, prose=True)) == 1
    assert check.page_problems(equation_as_code, prose=False) == []
    assert check.page_problems(labelled, prose=True) == []
    assert len(check.page_problems(raw, prose=False)) == 2
    assert check.page_problems(marked, prose=True) == []
    assert check.page_problems("<p>costs $5 and $10</p>", prose=True) == []
    assert len(check.page_problems("<p>Let :math:`v_1` be</p>", prose=False)) == 1


def test_published_tutorial_outputs_show_nothing_of_the_building_machine():
    import importlib.util

    import nbformat

    spec = importlib.util.spec_from_file_location("hooks", ROOT / "docs" / "_site" / "hooks.py")
    hooks = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hooks)
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("x = 1")
    cell.outputs = [nbformat.v4.new_output("stream", name="stderr",
                                           text=f"{sys.prefix}/tqdm/auto.py: TqdmWarning"),
                    nbformat.v4.new_output("stream", name="stdout", text="events: 21\n")]
    nb.cells = [cell]
    out = hooks.published_outputs(nb, "t.py")
    assert [o["name"] for o in out.cells[0].outputs] == ["stdout"]  # stderr dropped
    cell.outputs.append(nbformat.v4.new_output("stream", name="stdout",
                                               text=f"saved to {ROOT}/figures/x.png\n"))
    with pytest.raises(ValueError, match="building machine's path"):
        hooks.published_outputs(nb, "t.py")


def test_teaching_section_lists_every_lesson(site):
    """The syllabus's generated table and the navigation name every lesson in
    docs/lessons/; each lesson has a page (this build does not execute them: make docs makes
    the downloads) and the course data set is offered."""
    syllabus = (site / "lessons" / "index.html").read_text()
    for script in sorted((ROOT / "docs" / "lessons").glob("[0-9][0-9]_*.py")):
        assert f'href="{script.stem}.html"' in syllabus, script.name
        page = (site / "lessons" / f"{script.stem}.html").read_text()
        # the public site shows no solution: no folded answer, no source, no answer key
        assert "Not executed" in page and "<summary>Solution</summary>" not in page, \
            script.name
        assert "BEGIN SOLUTION" not in page and "# SOLUTION" not in page, script.name
        assert not (site / "lessons" / script.name).exists(), script.name
    assert not (site / "lessons" / "instructor").exists()
    assert "Teaching" in (site / "index.html").read_text()
    assert (site / "lessons" / "course_streams.npz").stat().st_size > 0
