"""Fixtures shared by the whole suite: a private filter cache, and experiment runs shared
between test modules (one run per experiment and scale per session)."""

from __future__ import annotations

import os

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


@pytest.fixture(scope="session")
def experiment_run(tmp_path_factory):
    """``experiment_run(name, scale="quick", jobs=1)``: the :class:`RunResult` of one
    ``reproduce`` per (name, scale) in this session, shared by every test that asks."""
    from lds_toolkit.experiments import reproduce

    runs = {}

    def run(name: str, scale: str = "quick", jobs: int = 1):
        if (name, scale) not in runs:
            out = tmp_path_factory.mktemp(f"{name}-{scale}")
            runs[name, scale] = reproduce(name, scale=scale, out=out, jobs=jobs,
                                          progress=False)
        return runs[name, scale]

    return run
