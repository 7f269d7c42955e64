"""Private helper: the signal that work stopped at its time budget (torch-free, shared by
:mod:`lds_toolkit.neural.training` and the experiment runner).

:func:`~lds_toolkit.neural.training.train` given a ``deadline`` saves a checkpoint and raises
:class:`TimeBudgetReached` once the wall clock passes it; the sweep stops starting tasks at
the same deadline, and :func:`~lds_toolkit.experiments.runner.reproduce` raises it (no
summary is written) with what finished and what was saved mid-training. Running the same
command again resumes. Every reading of the clock for a deadline goes through this module
(:func:`deadline_after`, :func:`remaining`, :func:`passed`).
"""

from __future__ import annotations

import math
import time


class TimeBudgetReached(Exception):
    """Work stopped at its time budget; what finished, and the checkpoints of what was
    running, are kept, so that the same call (or command) resumes.

    Attributes
    ----------
    finished, total, partial : int or None
        Set by :func:`~lds_toolkit.experiments.runner.reproduce`: tasks finished (stored) of
        ``total``, and how many of the others were saved mid-training.
    """

    def __init__(self, message: str, *, finished: int | None = None,
                 total: int | None = None, partial: int | None = None):
        super().__init__(message)
        self.finished, self.total, self.partial = finished, total, partial


def check_time_budget(seconds) -> float | None:
    """``seconds`` as a float if it is a positive finite number (None passes through), else
    ``ValueError``/``TypeError`` naming ``time_budget``."""
    if seconds is None:
        return None
    if isinstance(seconds, bool) or not isinstance(seconds, int | float):
        raise TypeError(f"time_budget must be a number of seconds, got "
                        f"{type(seconds).__name__} {seconds!r}")
    if not (math.isfinite(seconds) and seconds > 0):
        raise ValueError(f"time_budget must be a positive finite number of seconds, got "
                         f"{seconds!r}")
    return float(seconds)


def deadline_after(seconds: float | None) -> float | None:
    """The wall-clock time (``time.time()``) ``seconds`` from now (None for None)."""
    return None if seconds is None else time.time() + seconds


def remaining(deadline: float | None) -> float | None:
    """Seconds left until ``deadline`` (negative once passed; None for None)."""
    return None if deadline is None else deadline - time.time()


def passed(deadline: float | None) -> bool:
    """Whether the wall clock (``time.time()``) has reached ``deadline`` (never for None)."""
    return deadline is not None and time.time() >= deadline
