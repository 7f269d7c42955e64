"""How a check calls a student's code: on deep copies, with a time limit, nothing escaping.

The calling discipline of :func:`~lds_toolkit.teaching.check_function` (and of every lesson
check built on it):

* **Copies.** Every call gets its own :func:`copy.deepcopy` of the case's arguments, and the
  expected value is computed *before* the student's function runs, on another copy: an answer
  that modifies its inputs in place can change neither the expected value nor a later case
  (:func:`fresh_case`). Whether the student's call changed its inputs is recorded
  (:attr:`Outcome.modified_inputs`) so that a wrong answer's hint can say so.
* **A time limit per call** (:data:`DEFAULT_TIME_LIMIT` seconds unless the check says
  otherwise). On POSIX, in the main thread, a real-time interval timer
  (:func:`signal.setitimer`) raises an exception inside the student's code when the time is
  up, and again every :data:`_REPEAT` seconds until the call ends (a student's bare
  ``except:`` that swallows the first one does not keep it running — only code that catches
  ``BaseException`` inside its own endless loop can outlast it, which no worker short of a
  separate process could stop); the handler and any timer
  already set (pytest-timeout's, say) are restored afterwards, the remaining time of that
  timer included. Elsewhere (Windows, another thread) the call runs in a daemon thread that
  the check waits for at most the limit: the check reports the time-out and goes on, but a
  Python thread cannot be killed, so that call keeps running in the background until it ends.
  A worker *process* was not used: a function defined in a notebook cannot be pickled into one
  (it lives in ``__main__`` of the kernel), and a fork would copy a kernel's threads badly.
  A call stuck inside one long C routine (a huge ``numpy`` product) is interrupted only when
  it returns to Python.
* **Nothing escapes.** Every exception the student's code raises becomes an :class:`Outcome`
  with a one-line description, :class:`BaseException` included: ``sys.exit()``
  (``SystemExit``) would otherwise end the notebook's kernel or the autograder, and
  ``KeyboardInterrupt`` — the interrupt button pressed while a student's endless loop runs —
  ends the check with a "not yet" line instead of a traceback (the interrupt has done its job:
  the cell stops). :func:`guarded` does the same for comparing or printing an answer (an
  ``__eq__`` or ``__repr__`` that raises, an array where a number was expected).
* **Substitutes.** A later exercise that calls an earlier one (lesson 4: ``first_event``
  calls ``trigger``) is checked with the toolkit's version of the earlier one put in place of
  the student's for the duration of the call (:func:`substituted`), so one slip costs one
  point; the check then says when the earlier exercise was the cause.
"""

from __future__ import annotations

import contextlib
import copy
import inspect
import signal
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["DEFAULT_TIME_LIMIT", "Outcome", "by_case", "call_student", "check_time_limit",
           "describe_exception", "fresh_case", "given_cases", "guarded", "substituted"]

#: Seconds one call of a student's function may take (a check may set its own).
DEFAULT_TIME_LIMIT = 10.0
#: After the limit, the timer fires again every this many seconds until the call ends.
_REPEAT = 0.05


class _TimeUp(BaseException):
    """Raised inside a student's call when its time is up (a BaseException: a student's
    ``except Exception`` does not catch it)."""


@dataclass(frozen=True)
class Outcome:
    """What one call of a student's function gave.

    Attributes
    ----------
    value : object
        The returned value (``None`` when the call failed).
    error : str or None
        ``None`` when the call returned; otherwise a one-line description of what happened
        ("raised ZeroDivisionError: division by zero", "took longer than 10 s", "called
        sys.exit(1)").
    kind : str
        ``"ok"``, ``"raised"``, ``"timeout"`` or ``"exit"`` (SystemExit, KeyboardInterrupt and
        other BaseExceptions that are not errors).
    modified_inputs : tuple of str
        The arguments whose value the call changed (an in-place answer).
    seconds : float
        Wall-clock time of the call.
    """

    value: Any
    error: str | None
    kind: str
    modified_inputs: tuple[str, ...] = ()
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return self.error is None


def fresh_case(case: Mapping[str, Any]) -> dict[str, Any]:
    """A deep copy of a case's keyword arguments: nothing shared with the case or another
    copy (arrays included), so neither call can change what the other sees."""
    return copy.deepcopy(dict(case))


def _same(a: Any, b: Any) -> bool:
    """Did an argument keep its value? (Arrays entrywise, NaN equal to NaN.)"""
    try:
        if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
            a, b = np.asarray(a), np.asarray(b)
            return a.shape == b.shape and a.dtype == b.dtype and bool(
                np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"))
        if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
            return type(a) is type(b) and len(a) == len(b) and all(
                _same(x, y) for x, y in zip(a, b))
        if isinstance(a, dict) and isinstance(b, dict):
            return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
        return bool(a == b)
    except Exception:  # noqa: BLE001 - cannot tell: say unchanged rather than accuse
        return True


def describe_exception(exc: BaseException) -> tuple[str, str]:
    """``(kind, one line)`` for an exception raised by a student's code."""
    if isinstance(exc, SystemExit):
        code = exc.code
        return "exit", f"called sys.exit({'' if code is None else repr(code)}) (SystemExit)"
    if isinstance(exc, KeyboardInterrupt):
        return "exit", "was interrupted (KeyboardInterrupt)"
    if not isinstance(exc, Exception):
        return "exit", f"raised {type(exc).__name__}"
    try:
        text = str(exc)
    except Exception:  # noqa: BLE001 - an exception whose str() fails
        text = "(its message cannot be shown)"
    text = text.strip().splitlines()[0] if text.strip() else ""
    if len(text) > 160:
        text = text[:157] + "..."
    return "raised", f"raised {type(exc).__name__}" + (f": {text}" if text else "")


def _can_use_timer() -> bool:
    return hasattr(signal, "setitimer") and \
        threading.current_thread() is threading.main_thread()


def _call_with_timer(fn: Callable[[], Any], limit: float) -> tuple[Any, BaseException | None]:
    active = [True]

    def on_alarm(signum, frame):  # noqa: ARG001 - signal handler signature
        if active[0]:
            raise _TimeUp

    start = time.monotonic()
    old_handler = signal.signal(signal.SIGALRM, on_alarm)
    old_timer = signal.setitimer(signal.ITIMER_REAL, limit, _REPEAT)
    try:
        try:
            value = fn()
        finally:
            active[0] = False
            signal.setitimer(signal.ITIMER_REAL, 0.0)
        return value, None
    except BaseException as exc:  # noqa: BLE001 - everything the student's code does
        return None, exc
    finally:
        signal.signal(signal.SIGALRM, old_handler)
        if old_timer[0] > 0:  # someone else's timer (pytest-timeout): give it its time back
            left = old_timer[0] - (time.monotonic() - start)
            signal.setitimer(signal.ITIMER_REAL, max(left, 1e-3), old_timer[1])


def _call_in_thread(fn: Callable[[], Any], limit: float) -> tuple[Any, BaseException | None]:
    box: dict[str, Any] = {}

    def run():
        try:
            box["value"] = fn()
        except BaseException as exc:  # noqa: BLE001 - handed to the check
            box["error"] = exc

    worker = threading.Thread(target=run, daemon=True, name="lds-student-call")
    worker.start()
    worker.join(limit)
    if worker.is_alive():  # cannot be killed: it runs on in the background
        return None, _TimeUp()
    return box.get("value"), box.get("error")


def check_time_limit(time_limit: Any) -> float | None:
    """A check's ``time_limit``: a finite number of seconds > 0, or None (no limit); a bool,
    a string, NaN or inf is the lesson author's mistake, refused naming the argument."""
    if time_limit is None:
        return None
    if isinstance(time_limit, (bool, np.bool_)) or not isinstance(
            time_limit, (int, float, np.integer, np.floating)):
        raise TypeError(f"time_limit must be a positive number of seconds or None, got "
                        f"{type(time_limit).__name__} {time_limit!r:.80}")
    if not (np.isfinite(time_limit) and time_limit > 0):
        raise ValueError(f"time_limit must be a positive number of seconds or None, "
                         f"got {time_limit!r}")
    return float(time_limit)


def given_cases(cases: Any) -> list[dict[str, Any]] | None:
    """A check's ``cases`` argument: None (the check's own cases: ``given_cases(cases) or
    default``), else a non-empty list of dicts of keyword arguments, refused naming
    ``cases`` otherwise (an empty list would silently grade the public cases instead)."""
    if cases is None:
        return None
    if isinstance(cases, (str, bytes, Mapping)) or not isinstance(cases, Iterable):
        what = (f"a dict with keys {sorted(map(str, cases))} (wrap one case in a list)"
                if isinstance(cases, Mapping) else f"{type(cases).__name__} {cases!r:.60}")
        raise TypeError(f"cases must be a list of dicts (the keyword arguments of each call), "
                        f"got {what}")
    out = list(cases)
    if not out:
        raise ValueError("cases must hold at least one dict of keyword arguments, got an "
                         "empty list (pass None for the check's own cases)")
    for i, case in enumerate(out):
        if not isinstance(case, Mapping) or not all(isinstance(k, str) for k in case):
            raise TypeError(f"cases[{i}] must be a dict of keyword arguments (str keys), got "
                            f"{type(case).__name__} {' '.join(repr(case).split()):.60}")
    return [dict(c) for c in out]


def call_student(fn: Callable[..., Any], case: Mapping[str, Any], *,
                 time_limit: float | None = DEFAULT_TIME_LIMIT) -> Outcome:
    """Call ``fn(**copy_of_case)`` with a time limit; never raises.

    Parameters
    ----------
    fn : callable
        The student's function.
    case : mapping
        Its keyword arguments; the call gets a deep copy (:func:`fresh_case`), compared with
        the case afterwards to record arguments changed in place.
    time_limit : float or None
        Seconds (``None``: no limit).
    """
    check_time_limit(time_limit)
    kwargs = fresh_case(case)

    def call():
        return fn(**kwargs)

    start = time.monotonic()
    if time_limit is None:
        try:
            value, exc = call(), None
        except BaseException as e:  # noqa: BLE001 - everything the student's code does
            value, exc = None, e
    elif _can_use_timer():
        value, exc = _call_with_timer(call, float(time_limit))
    else:
        value, exc = _call_in_thread(call, float(time_limit))
    seconds = time.monotonic() - start
    modified = tuple(k for k in case if not _same(case[k], kwargs[k]))
    if isinstance(exc, _TimeUp):
        return Outcome(None, f"took longer than {time_limit:g} s (stopped)", "timeout",
                       modified, seconds)
    if exc is not None:
        kind, text = describe_exception(exc)
        return Outcome(None, text, kind, modified, seconds)
    return Outcome(value, None, "ok", modified, seconds)


def guarded(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> tuple[Any, str | None]:
    """``(fn(*args, **kwargs), None)``, or ``(None, description)`` when it raises anything
    (for comparing and printing a student's answer: its ``__eq__``, ``__repr__``,
    ``__array__`` are the student's code too)."""
    try:
        return fn(*args, **kwargs), None
    except BaseException as exc:  # noqa: BLE001 - the answer's own methods raised
        return None, describe_exception(exc)[1]


@contextlib.contextmanager
def substituted(student: Any, replacements: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
    """Put ``replacements`` (name -> object) in place of the same names in the globals of
    the student's function for the duration; yields the student's own objects of those
    names (absent ones left out). The globals are restored even if the call fails. A check's
    wrapper around the student's function names it in ``__wrapped__``: its globals are the
    student's."""
    target, _ = guarded(inspect.unwrap, student)
    namespace = getattr(target if target is not None else student, "__globals__", None)
    if not isinstance(namespace, dict) or not replacements:
        yield {}
        return
    saved = {name: namespace[name] for name in replacements if name in namespace}
    try:
        for name in saved:
            namespace[name] = replacements[name]
        yield dict(saved)
    finally:
        for name, value in saved.items():
            namespace[name] = value


def by_case(route: Callable[[dict[str, Any]], Any]) -> Callable[..., Any]:
    """``reference`` for :func:`~lds_toolkit.teaching.check_function` from a route that takes
    the case as one dict: ``by_case(route)(**case) == route(case)``. The lessons' expected
    values are computed by such routes, so that no function of the package has an exercise's
    signature (none can be handed to a check as an answer)."""
    def reference(**case: Any) -> Any:
        return route(case)

    return reference
