"""Every graded check of every lesson keeps the calling discipline (lds_toolkit/teaching/
calling.py), whatever the student's function does: it exits, is interrupted, never returns,
hands back an object whose comparisons raise, or the wrong kind of thing. Each becomes one
"not yet" line naming what happened; nothing escapes, nothing hangs.

The answers here take any arguments (``*args, **kwargs``), so they reach every check's
first case, whatever the exercise's signature.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import sys
import time

import numpy as np
import pytest

import lds_toolkit.teaching as teaching


def _graded():
    out = []
    for info in pkgutil.iter_modules(teaching.__path__):
        if not info.name.startswith("lesson"):
            continue
        try:
            module = importlib.import_module(f"lds_toolkit.teaching.{info.name}")
        except ImportError:  # lesson 8/10 without torch
            continue
        for answer, check in getattr(module, "CHECKS", {}).items():
            if answer != "interpretation":  # a value, not a function
                out.append(pytest.param(check, id=f"{info.name}.{answer}"))
    return out


GRADED = _graded()


class Hostile:
    def __eq__(self, other):
        raise RuntimeError("eq")

    def __ne__(self, other):
        raise RuntimeError("ne")

    def __repr__(self):
        raise RuntimeError("repr")

    def __array__(self, *args, **kwargs):
        raise RuntimeError("array")

    def __iter__(self):
        raise RuntimeError("iter")

    def __len__(self):
        raise RuntimeError("len")

    def __float__(self):
        raise RuntimeError("float")

    __hash__ = None


def _exits(*args, **kwargs):
    sys.exit(2)


def _interrupted(*args, **kwargs):
    raise KeyboardInterrupt


def _hostile(*args, **kwargs):
    return Hostile()


def _matrix(*args, **kwargs):
    return np.ones((3, 3))


def _text(*args, **kwargs):
    return "an answer"


@pytest.mark.parametrize("check", GRADED)
@pytest.mark.parametrize(("answer", "words"), [
    (_exits, "sys.exit(2)"), (_interrupted, "KeyboardInterrupt"), (_hostile, ""),
    (_matrix, ""), (_text, ""),
])
def test_nothing_the_answer_does_escapes(check, answer, words):
    res = check(answer, verbose=False)
    assert res.status in ("wrong", "todo") and res.message.startswith("not yet:")
    assert words in res.message, res.message


@pytest.mark.parametrize("check", GRADED)
def test_an_endless_answer_is_stopped_at_the_time_limit(check):
    if "time_limit" not in inspect.signature(check).parameters:
        pytest.fail(f"{check.__module__}.{check.__name__} takes no time_limit")

    def endless(*args, **kwargs):
        while True:
            pass

    start = time.monotonic()
    res = check(endless, verbose=False, time_limit=0.2)
    assert "took longer than 0.2 s" in res.message, res.message
    assert time.monotonic() - start < 30  # the expected values take their own time
