"""A grading rehearsal: a class of synthetic submissions graded by the autograder archive.

The archive is the one ``otter assign`` makes for the lesson (``lessons.assign``: hidden
tests weighted per case, the answer key and ``lds_grading.py`` inside). The class:

* **correct** — the solution: every point;
* **partial** — one exercise wrong (``memory_of`` without the square): that exercise's
  points lost, nothing else;
* **wrong** — every answer wrong; Region B closed is wrong on one hidden case of six only,
  so it keeps the rest (**partial credit per case**);
* **in place** — a correct ``impulse_response`` that overwrites its argument: every point
  (each call gets copies);
* **endless** — an ``impulse_response`` that never returns: its points lost at the time
  limit, the grading goes on;
* **exiting** — a ``memory_of`` that calls ``sys.exit()``: its points lost, the grading
  goes on;
* **shipped** — answers taken from the installed package (its case-taking toolkit route;
  the ``reference_*`` that no longer exist): nothing for them;
* lesson 4, **one slip** — a wrong ``trigger`` with a correct ``first_event`` that calls it:
  only ``trigger``'s points are lost (``first_event`` is graded with the toolkit's trigger).

The default test grades in this process with otter's own test-file runner
(``OKTestFile.run``) on the archive's ``tests/*.py``, the archive's ``files/`` on the path:
the submission's code cells run without its check cells (which would only print), and the
key's ``TIME_LIMIT`` is lowered to 0.5 s in the extracted copy to keep it fast. The slow test
runs ``otter run`` on the archive as it is (a kernel per submission, the 5 s limit).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from . import _builder

pytest.importorskip("otter", reason="the docs extra is not installed (pip install -e .[docs])")
pytest.importorskip("jupytext", reason="the docs extra is not installed")

ROOT = Path(__file__).resolve().parents[2]



lessons = _builder.load()

IMPULSE_IN_PLACE = '''
def impulse_response(A, B, C, D, length):
    B = np.atleast_2d(B)
    out = [np.atleast_2d(D).astype(float)]
    for _ in range(1, length):
        out.append(np.atleast_2d(C) @ B)
        B[...] = np.atleast_2d(A) @ B   # overwrites the caller's B
    return np.array(out)
'''
IMPULSE_ENDLESS = '''
def impulse_response(A, B, C, D, length):
    h = 0
    while True:
        h += 1
'''
IMPULSE_NO_D = '''
def impulse_response(A, B, C, D, length):
    A, B, C = (np.atleast_2d(np.asarray(M, dtype=float)) for M in (A, B, C))
    return np.stack([np.zeros((C.shape[0], B.shape[1]))]
                    + [C @ np.linalg.matrix_power(A, t - 1) @ B for t in range(1, length)])
'''
MEMORY_NO_SQUARE = '''
def memory_of(a, eps):
    return 1 + int(np.ceil(np.log(eps) / np.log(abs(a))))
'''
MEMORY_FROM_ZERO = '''
def memory_of(a, eps):
    return int(np.ceil(np.log(eps) / (2 * np.log(abs(a)))))
'''
MEMORY_EXITS = '''
import sys

def memory_of(a, eps):
    sys.exit("I give up")
'''
REGION_CLOSED_B = '''
def region_of(lam, T, q):
    good = 1 - np.log(T) / (8 * T**q)
    marginal = 1 - 1 / (2 * T**1.25)
    if 0.9 * good <= lam < good:
        return "A-left"
    if good <= lam <= marginal:
        return "B"
    if marginal < lam <= 1:
        return "A-right"
    return "outside"
'''
SHIPPED = {
    "impulse_response": "impulse_response = lesson01._toolkit_impulse_response\n",
    "region_of": "region_of = getattr(lesson01, 'reference_region', None)\n",
}
TRIGGER_NO_TWO = '''
def trigger(x, e, P, M, B, K, kappa):
    return kappa * x @ M @ x - x @ P @ B @ K @ e
'''

#: name -> (lesson, the answers it replaces, expected points per question)
CLASS = {
    "correct": ("01", {}, {"impulse_response": 3, "memory_of": 2, "region_of": 3,
                           "interpretation": 1}),
    "partial": ("01", {"memory_of": MEMORY_NO_SQUARE},
                {"impulse_response": 3, "memory_of": 0, "region_of": 3, "interpretation": 1}),
    "wrong": ("01", {"impulse_response": IMPULSE_NO_D, "memory_of": MEMORY_FROM_ZERO,
                     "region_of": REGION_CLOSED_B, "interpretation": 'interpretation = "c"\n'},
              {"impulse_response": 0, "memory_of": 0, "region_of": 2.5, "interpretation": 0}),
    "in place": ("01", {"impulse_response": IMPULSE_IN_PLACE},
                 {"impulse_response": 3, "memory_of": 2, "region_of": 3, "interpretation": 1}),
    "endless": ("01", {"impulse_response": IMPULSE_ENDLESS},
                {"impulse_response": 0, "memory_of": 2, "region_of": 3, "interpretation": 1}),
    "exiting": ("01", {"memory_of": MEMORY_EXITS},
                {"impulse_response": 3, "memory_of": 0, "region_of": 3, "interpretation": 1}),
    "shipped": ("01", SHIPPED,
                {"impulse_response": 0, "memory_of": 2, "region_of": 0, "interpretation": 1}),
    "one slip (lesson 4)": ("04", {"trigger": TRIGGER_NO_TWO},
                            {"trigger": 0, "first_event": 2, "replay": 2, "interpretation": 1}),
}


def submission(nn: str, replaced: dict[str, str], *, checks: bool):
    """The lesson's solution notebook with the exercise cells defining ``replaced``'s names
    swapped for the submission's code (and, unless ``checks``, without its check cells)."""
    script = next(s for s in lessons.lesson_scripts() if s.name.startswith(nn))
    nb = lessons.read_lesson(script)
    cells = []
    for cell in nb.cells:
        tags = cell.get("metadata", {}).get("tags", [])
        if "check" in tags and not checks:
            continue
        if "exercise" in tags:
            names = lessons.defined_names(cell.source)
            for name, code in replaced.items():
                if name in names:
                    cell.source = code
        cells.append(cell)
    nb.cells = cells
    return script, nb


@pytest.fixture(scope="module")
def archives(tmp_path_factory):
    """Each lesson's autograder archive, made and extracted once; the extracted key's time
    limit lowered to 0.5 s (the default suite's budget; the slow test keeps 5 s)."""
    out = {}
    for nn in sorted({lesson for lesson, _, _ in CLASS.values()}):
        script = next(s for s in lessons.lesson_scripts() if s.name.startswith(nn))
        made = lessons.assign(script, tmp_path_factory.mktemp(f"assign{nn}"))
        where = tmp_path_factory.mktemp(f"archive{nn}")
        zipfile.ZipFile(made["autograder"]).extractall(where)
        key = where / "files" / f"lds_key{nn}.py"
        text = key.read_text()
        assert "TIME_LIMIT = 5.0" in text
        key.write_text(text.replace("TIME_LIMIT = 5.0", "TIME_LIMIT = 0.5"))
        out[nn] = {"zip": made["autograder"], "dir": where}
    return out


def grade_in_process(archive_dir: Path, namespace: dict) -> dict[str, float]:
    """Points per question: otter's test-file runner on the archive's tests/*.py."""
    from otter.test_files import OKTestFile

    scores = {}
    for path in sorted((archive_dir / "tests").glob("*.py")):
        test = OKTestFile.from_file(str(path))
        test.run(dict(namespace))
        scores[test.name] = test.score
    return scores


@pytest.mark.parametrize("who", list(CLASS))
def test_a_class_of_submissions_gets_the_expected_scores(who, archives, monkeypatch):
    nn, replaced, expected = CLASS[who]
    archive = archives[nn]
    for mod in ("lds_grading", f"lds_key{nn}"):  # the archive's copies, not another test's
        monkeypatch.delitem(sys.modules, mod, raising=False)
    monkeypatch.syspath_prepend(str(archive["dir"] / "files"))
    _, nb = submission(nn, replaced, checks=False)
    namespace: dict = {}
    records = lessons.run_in_process(nb, quick=True, namespace=namespace)
    assert not [r["error"] for r in records if r["error"]]
    scores = grade_in_process(archive["dir"], namespace)
    assert scores == pytest.approx(expected), scores
    for mod in ("lds_grading", f"lds_key{nn}"):
        sys.modules.pop(mod, None)


def test_the_rehearsal_can_fail_a_wrong_expectation(archives, monkeypatch):
    """The grading is not a constant: a wrong answer does not get the correct one's points."""
    monkeypatch.delitem(sys.modules, "lds_key01", raising=False)
    monkeypatch.delitem(sys.modules, "lds_grading", raising=False)
    monkeypatch.syspath_prepend(str(archives["01"]["dir"] / "files"))
    namespace: dict = {}
    lessons.run_in_process(submission("01", CLASS["wrong"][1], checks=False)[1], quick=True,
                           namespace=namespace)
    assert grade_in_process(archives["01"]["dir"], namespace) != CLASS["correct"][2]
    sys.modules.pop("lds_key01", None)
    sys.modules.pop("lds_grading", None)


@pytest.mark.slow
@pytest.mark.parametrize("who", ["correct", "endless", "exiting", "shipped", "wrong"])
def test_otter_run_grades_the_class_with_the_archive_as_it_is(who, archives, tmp_path):
    """``otter run`` (a kernel per submission, the notebook with its check cells, the key's
    5 s limit) on the archive as assign made it."""
    import nbformat

    nn, replaced, expected = CLASS[who]
    _, nb = submission(nn, replaced, checks=True)
    path = tmp_path / "submission.ipynb"
    nbformat.write(nb, path)
    env = dict(os.environ, PYTHONPATH=str(ROOT), LDS_LESSON_QUICK="1", MPLBACKEND="Agg")
    done = subprocess.run([sys.executable, "-m", "otter", "run", "-a",
                           str(archives[nn]["zip"]), "-o", str(tmp_path), str(path)],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    results = json.loads((tmp_path / "results.json").read_text())
    scores = {t["name"]: t["score"] for t in results["tests"] if t.get("max_score")}
    assert scores == pytest.approx(expected), scores
