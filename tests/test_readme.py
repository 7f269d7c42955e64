"""The README's Python examples run as written (in order, sharing one namespace) and give
what their comments say."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import numpy as np
import pytest

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_python_blocks_run(experiment_run, tmp_path, monkeypatch):
    pytest.importorskip("torch")
    import control as ct

    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
    assert len(blocks) == 3, "one example per use: reproduce, python-control, a lesson"
    # The first example reproduces nss-etc into ./figures: start it from this session's
    # task store (tests/conftest.py), so it loads every task and only summarises, plots and
    # judges, as a rerun would.
    shared = experiment_run("nss-etc", "quick")
    shutil.copytree(shared.outdir / ".tasks", tmp_path / "figures" / "nss-etc" / ".tasks")
    monkeypatch.chdir(tmp_path)
    namespace: dict = {}
    for block in blocks:
        exec(compile(block, str(README), "exec"), namespace)  # noqa: S102 - our own README

    run = namespace["run"]
    assert run.outdir == Path("figures") / "nss-etc" and (run.outdir / "run.json").is_file()
    assert run.stats.n_cached == run.stats.n_tasks > 0  # loaded from the store, none recomputed
    assert namespace["verdicts"] == {r.result.claim.id: r.verdict for r in shared.claims}
    assert namespace["verdicts"]["printed-example-eq8"] == "paper error confirmed"

    lt = namespace["lt"]
    assert isinstance(namespace["Gd"], ct.StateSpace) and namespace["Gd"].dt == 0.1
    assert np.all(np.abs(namespace["poles"]) < 1)  # a stable plant sampled: inside the circle
    assert 0 < namespace["cert"].rho < 1
    assert namespace["resp"].output_labels == ["position"]
    assert namespace["resp"].outputs.shape == (200,)
    assert isinstance(namespace["ssm"], lt.LDS) and isinstance(namespace["ssm"], ct.StateSpace)
    assert np.isfinite(namespace["gain"])

    assert namespace["check"].passed
    wrong = namespace["lesson01"].check_memory_formula(lambda a, eps: 1, verbose=False)
    assert not wrong.passed and wrong.message.startswith("not yet")


def test_getting_started_python_blocks_run():
    """The first session of docs/getting-started.md (the examples the README used to carry)
    runs as written."""
    pytest.importorskip("torch")
    pytest.importorskip("river")
    page = README.parent / "docs" / "getting-started.md"
    blocks = re.findall(r"```python\n(.*?)```", page.read_text(), flags=re.S)
    assert len(blocks) == 3
    namespace: dict = {}
    for block in blocks:
        exec(compile(block, str(page), "exec"), namespace)  # noqa: S102 - our own docs
    assert namespace["res"].y.shape == (8, 2**14, 1)
    assert namespace["y_hat"].shape == (2**14, 1)
    assert namespace["phi"].shape == (2**12, 24)
    assert namespace["etc"].sample_times[0] == 0 and namespace["etc"].sample_times[-1] <= 10
    assert tuple(namespace["y"].shape) == (8, 1024, 64)
    assert namespace["ssm"].nstates == 64
