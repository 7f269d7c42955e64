"""Fixtures shared by the whole suite: a private filter cache, and experiment runs shared
between test modules (one run per experiment and scale per session; under pytest-xdist the
workers share each run's task store, so an experiment is computed once per session)."""

from __future__ import annotations

import os
import shutil

import pytest


@pytest.fixture(scope="session", autouse=True)
def _private_filter_cache(tmp_path_factory):
    """Keep the on-disk filter cache of the test session out of the user's ~/.cache."""
    old = os.environ.get("LDS_TOOLKIT_CACHE")
    os.environ["LDS_TOOLKIT_CACHE"] = str(tmp_path_factory.mktemp("filter_cache"))
    yield
    if old is None:
        os.environ.pop("LDS_TOOLKIT_CACHE", None)
    else:
        os.environ["LDS_TOOLKIT_CACHE"] = old


def _shared_root(tmp_path_factory):
    """Under pytest-xdist: a directory every worker of this session sees (the parent of the
    workers' base temporaries is per session); ``None`` in a single process."""
    if "PYTEST_XDIST_WORKER" not in os.environ:
        return None
    root = tmp_path_factory.getbasetemp().parent / "shared-experiment-runs"
    root.mkdir(exist_ok=True)
    return root


@pytest.fixture(scope="session")
def experiment_run(tmp_path_factory):
    """``experiment_run(name, scale="quick", jobs=1)``: the :class:`RunResult` of one
    ``reproduce`` per (name, scale) in this session, shared by every test that asks.

    Each worker writes its own output directory (tests may modify what they read); under
    pytest-xdist the first worker to need a run computes it under a file lock and publishes
    its task store, and the others start from a copy of it, so their ``reproduce`` loads
    every task (the store checks each file's integrity and code version) and only
    summarises and plots."""
    from filelock import FileLock

    from lds_toolkit.experiments import reproduce

    runs = {}
    shared = _shared_root(tmp_path_factory)

    def compute(name: str, scale: str, jobs: int):
        out = tmp_path_factory.mktemp(f"{name}-{scale}")
        if shared is None:
            return reproduce(name, scale=scale, out=out, jobs=jobs, progress=False)
        published = shared / f"{name}-{scale}"
        with FileLock(str(published) + ".lock"):
            if published.is_dir():
                shutil.copytree(published, out / name / ".tasks")
            res = reproduce(name, scale=scale, out=out, jobs=jobs, progress=False)
            if not published.is_dir():
                shutil.copytree(out / name / ".tasks", published)
        return res

    def run(name: str, scale: str = "quick", jobs: int = 1):
        if (name, scale) not in runs:
            runs[name, scale] = compute(name, scale, jobs)
        return runs[name, scale]

    return run
