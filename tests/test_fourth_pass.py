"""Issue 46's own pass (:mod:`tests._fourth_pass_cases`, the library's new entry points, and
:mod:`tests._fourth_pass_teaching_cases`, the lessons' checks, sliders, helpers and build):
every bad input ends in a clear error naming the argument -- none unclear, none silent.

Also "nothing outside a run is touched": the lesson build and the streaming benchmark, run as
a user runs them (a subprocess whose current directory is a fresh one under ``tmp_path``),
write only under their ``--out``/``--json`` (and the caches they are pointed at), and change,
add or remove no file of the repository.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from . import _fourth_pass_cases, _fourth_pass_teaching_cases

ROOT = Path(__file__).resolve().parents[1]
PASSES = {"issue 46": _fourth_pass_cases, "issue 46 teaching": _fourth_pass_teaching_cases}
CASES = [(f"{tag}: {case_id}", call, names)
         for tag, module in PASSES.items() for case_id, call, names in module.cases()]
#: cases that build something large first (a started learner's filters at T = 2^20: ~30 s)
SLOW = {"issue 46: SpectralFiltering learn_one keys grow past memory"}


def test_the_pass_has_at_least_150_cases_with_unique_ids():
    ids = [c[0] for c in CASES]
    assert len(ids) >= 150
    assert len(set(ids)) == len(ids)
    assert SLOW <= set(ids)


@pytest.mark.parametrize("case_id, call, names", [
    pytest.param(*c, id=c[0], marks=[pytest.mark.slow] if c[0] in SLOW else []) for c in CASES])
def test_every_bad_input_gets_a_clear_error(case_id, call, names):
    verdict, detail = _fourth_pass_cases.run_case(call, names)
    assert verdict == "clear", f"{case_id}: {verdict}: {detail}"


# ------------------------------------------------------------------ what is still accepted
def test_numpy_integers_are_taken_where_integers_are():
    from lds_toolkit import filters_as_lds

    a = filters_as_lds(np.int64(64), np.int32(4), tol=np.float32(1e-4))
    b = filters_as_lds(64, 4, tol=float(np.float32(1e-4)))
    assert np.array_equal(a.A, b.A) and np.array_equal(a.C, b.C)


def test_a_cold_predict_one_still_answers_zero_with_good_parameters():
    from lds_toolkit.learning import SpectralFiltering

    learner = SpectralFiltering(horizon=64, k=4, filters="lds")
    assert learner.predict_one({"a": 1.0}) == 0.0


def test_a_check_still_takes_its_own_cases_and_a_list_of_them():
    from lds_toolkit.teaching import lesson01, lesson06

    def memory_of(a, eps):
        return 0.0

    assert lesson01.check_memory_formula(memory_of, verbose=False).status == "wrong"
    own = lesson01.check_memory_formula(memory_of, verbose=False, cases=[{"a": 0.5,
                                                                         "eps": 1e-3}])
    assert own.status == "wrong" and "a=0.5" in own.message
    # check_hankel_matrix ignored its cases before the pass: they are used now
    res = lesson06.check_hankel_matrix(lambda T: np.zeros((T, T)), verbose=False,
                                       cases=[{"T": 3}])
    assert "T=3" in res.message


def test_the_instructor_switch_reads_its_documented_values(monkeypatch):
    lessons = _fourth_pass_teaching_cases._lessons_module()
    for value, expected in (("1", True), ("yes", True), ("TRUE", True), ("0", False),
                            ("", False), ("no", False)):
        monkeypatch.setenv("LDS_DOCS_INSTRUCTOR", value)
        assert lessons.instructor_site() is expected


# ------------------------------------------------------------------ nothing outside a run
_SKIP_DIRS = {".git", ".venv", ".pytest_cache", "__pycache__", ".mypy_cache", ".ruff_cache",
              ".hypothesis"}


def _snapshot(root: Path) -> dict[str, tuple[int, int]]:
    """Every file under ``root`` (but the caches of git, the interpreter and the tools):
    path -> (size, mtime in ns)."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d not in _SKIP_DIRS]
        for name in filenames:
            path = Path(dirpath) / name
            with_stat = path.lstat()
            out[str(path.relative_to(root))] = (with_stat.st_size, with_stat.st_mtime_ns)
    return out


def _run_outside(tmp_path: Path, *argv: str, timeout: float) -> Path:
    """Run ``python argv`` from a fresh directory under ``tmp_path`` with the caches pointed
    there; assert the repository is byte-for-byte where it was (no file changed, added or
    removed) and return the run's directory."""
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    env = dict(os.environ, LDS_TOOLKIT_CACHE=str(tmp_path / "cache"),
               NUMBA_CACHE_DIR=str(tmp_path / "numba"), PYTHONDONTWRITEBYTECODE="1",
               MPLBACKEND="Agg", MPLCONFIGDIR=str(tmp_path / "mpl"))
    before = _snapshot(ROOT)
    done = subprocess.run([sys.executable, *argv], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=timeout)
    assert done.returncode == 0, done.stderr[-3000:]
    after = _snapshot(ROOT)
    changed = sorted(k for k in before.keys() & after.keys() if before[k] != after[k])
    assert not changed, f"files of the repository changed: {changed[:10]}"
    assert not (after.keys() - before.keys()), sorted(after.keys() - before.keys())[:10]
    assert not (before.keys() - after.keys()), sorted(before.keys() - after.keys())[:10]
    return cwd


@pytest.mark.slow
def test_the_lesson_build_writes_only_under_its_out(tmp_path):
    cwd = _run_outside(tmp_path, str(ROOT / "docs" / "_site" / "lessons.py"), "--out",
                       "handout", "--no-slides", "--only", "01", timeout=600)
    assert sorted(p.name for p in cwd.iterdir()) == ["handout"]
    assert sorted(p.name for p in (cwd / "handout").iterdir()) == ["instructor", "student"]
    assert (cwd / "handout" / "student" / "01_memory_and_regions.ipynb").is_file()


@pytest.mark.slow
def test_the_streaming_benchmark_writes_only_its_json(tmp_path):
    cwd = _run_outside(tmp_path, str(ROOT / "benchmarks" / "streaming.py"), "--quick",
                       "--json", "streaming.json", timeout=1800)
    assert sorted(p.name for p in cwd.iterdir()) == ["streaming.json"]
    assert "per_step_s" in json.loads((cwd / "streaming.json").read_text())
