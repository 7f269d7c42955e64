"""Self-checking exercises: compare a student's answer with the toolkit's, say what differs.

Every check returns a :class:`CheckResult` and prints one line (``verbose=False`` keeps it
quiet): ``pass: ...`` when the answer matches, ``not yet: ...`` when the exercise is still a
stub (an answer of ``None`` or ``...``, or a function that returns one of them), and
``not yet: ...`` with a hint otherwise — what differs (shape, the first wrong entry, the
largest error), by how much, and a likely cause found by trying the usual slips (an index
shifted by one step, a transposed matrix, a flipped sign, a constant factor, the conjugate).
A check never raises on a student's answer: an exception raised by the student's function is
reported as a line naming the exception and the case, without a traceback. Bad arguments of
the *check itself* (a reference that is not an array, a negative tolerance) raise as usual:
those are the lesson author's mistakes.

Lessons build their exercise checks from :func:`check_array`, :func:`check_scalar` and
:func:`check_function` (see ``lds_toolkit/teaching/lesson01.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = [
    "CheckResult",
    "check_array",
    "check_function",
    "check_equal",
    "check_scalar",
    "is_stub",
    "report",
    "run_checks",
    "summarize",
]

#: The three states of an exercise: solved, still a stub, answered but not right yet.
STATUSES = ("pass", "todo", "wrong")


@dataclass(frozen=True)
class CheckResult:
    """The outcome of one check.

    Attributes
    ----------
    name : str
        The exercise, as the lesson names it (``"impulse response"``).
    status : str
        ``"pass"``, ``"todo"`` (the answer is still a stub) or ``"wrong"``.
    message : str
        The line shown to the student (starts with ``pass:`` or ``not yet:``).
    details : dict
        The numbers behind the message (``max_abs_error``, ``index``, ...), for autograders
        and tests.
    """

    name: str
    status: str
    message: str
    details: Mapping[str, Any] = field(default_factory=dict)
    printed: bool = False

    @property
    def passed(self) -> bool:
        return self.status == "pass"

    def __bool__(self) -> bool:
        return self.passed

    def __str__(self) -> str:
        return self.message

    def __repr__(self) -> str:
        return f"CheckResult({self.message!r})"

    def _ipython_display_(self) -> None:
        # a check cell ends with the call: the line was printed already, do not repeat it
        if not self.printed:
            print(self.message)


def is_stub(answer: Any) -> bool:
    """True for an answer a student has not written yet: ``None`` or ``...`` (Ellipsis)."""
    return answer is None or answer is Ellipsis


def report(name: str, status: str, text: str, verbose: bool = True,
           details: Mapping[str, Any] | None = None) -> CheckResult:
    """A check's result from its parts, for lesson checks that compare in their own way.

    ``status`` is ``"pass"``, ``"todo"`` or ``"wrong"``; the message reads
    ``"pass: NAME — TEXT"`` or ``"not yet: NAME — TEXT"`` and is printed when ``verbose``.
    """
    if status not in STATUSES:
        raise ValueError(f"status must be one of {STATUSES}, got {status!r}")
    prefix = "pass" if status == "pass" else "not yet"
    message = f"{prefix}: {name} — {text}"
    if verbose:
        print(message)
    return CheckResult(name, status, message, dict(details or {}), printed=verbose)


def _todo(name: str, verbose: bool, what: str = "the answer is still a stub (None or ...)"
          ) -> CheckResult:
    return report(name, "todo", f"{what}; write it and run this cell again", verbose)


def _as_numeric(answer: Any) -> np.ndarray | None:
    try:
        arr = np.asarray(answer)
    except Exception:  # noqa: BLE001 - anything that is not array-like is reported, not raised
        return None
    if arr.dtype == object or not (np.issubdtype(arr.dtype, np.number)
                                   or arr.dtype == np.bool_):
        return None
    return arr


def _close(a: np.ndarray, b: np.ndarray, rtol: float, atol: float) -> bool:
    return a.shape == b.shape and bool(np.allclose(a, b, rtol=rtol, atol=atol))


def _likely_cause(answer: np.ndarray, expected: np.ndarray, rtol: float, atol: float,
                  axis: int) -> str | None:
    """Name the usual slip that turns ``expected`` into ``answer``, if one does."""
    if expected.ndim >= 1 and expected.shape[axis] > 1 and answer.shape == expected.shape:
        n = expected.shape[axis]
        later = np.take(expected, range(0, n - 1), axis=axis)
        earlier = np.take(expected, range(1, n), axis=axis)
        if _close(np.take(answer, range(1, n), axis=axis), later, rtol, atol):
            return "each entry sits one step late: an index shifted by one (t vs t-1)"
        if _close(np.take(answer, range(0, n - 1), axis=axis), earlier, rtol, atol):
            return "each entry sits one step early: an index shifted by one (t vs t+1)"
    if answer.ndim == 2 and answer.shape == expected.shape[::-1] and \
            _close(answer.T, expected, rtol, atol):
        return "it is the transpose of the expected matrix"
    if answer.shape == expected.shape:
        if _close(-answer, expected, rtol, atol):
            return "the sign is flipped"
        if np.iscomplexobj(expected) and _close(np.conj(answer), expected, rtol, atol):
            return "it is the complex conjugate"
        denom = float(np.vdot(answer, answer).real)
        if denom > 0:
            scale = complex(np.vdot(answer, expected)) / denom
            if scale.imag == 0 and abs(scale.real - 1) > 1e-6 and \
                    _close(scale.real * answer, expected, rtol, atol):
                return f"it is off by a constant factor (expected = {scale.real:.6g} x yours)"
    if answer.size == expected.size and answer.shape != expected.shape and \
            _close(answer.reshape(expected.shape), expected, rtol, atol):
        return "the numbers are right but the shape is not: reshape it"
    return None


def check_array(name: str, answer: Any, expected: Any, *, rtol: float = 1e-7,
                atol: float = 1e-10, axis: int = 0, causes: Sequence[tuple[str, Any]] = (),
                verbose: bool = True) -> CheckResult:
    """Compare an array answer with the expected one.

    Passes when the shapes agree and ``|answer - expected| <= atol + rtol |expected|``
    entrywise (``numpy.allclose``). Otherwise the hint names the first mismatch: a stub, a
    non-numeric answer, a wrong shape, NaN/inf entries, or the first wrong entry with the
    largest absolute and relative errors, plus a likely cause.

    Parameters
    ----------
    name : str
        What the exercise computes, used in the message.
    answer, expected : array_like
        The student's answer and the toolkit's.
    rtol, atol : float
        Tolerances as in ``numpy.allclose``.
    axis : int
        The time axis, used to detect an index shifted by one step.
    causes : sequence of (str, array_like)
        Lesson-specific wrong answers to recognise: when ``answer`` matches one of these
        arrays, its description is given as the likely cause (``("Tustin instead of S4's
        form", tustin_matrix)``).
    verbose : bool
        Print the message (default).
    """
    if rtol < 0 or atol < 0:
        raise ValueError(f"rtol and atol must be >= 0, got rtol={rtol}, atol={atol}")
    exp = np.asarray(expected)
    if exp.dtype == object:
        raise TypeError(f"expected must be a numeric array, got {exp!r}")
    if is_stub(answer):
        return _todo(name, verbose)
    ans = _as_numeric(answer)
    if ans is None:
        return report(name, "wrong", f"expected a numeric array of shape {exp.shape}, got "
                       f"{type(answer).__name__}", verbose)
    if ans.shape != exp.shape:
        hint = f"expected shape {exp.shape}, got {ans.shape}"
        cause = _likely_cause(ans, exp, rtol, atol, axis)
        if cause:
            hint += f"; likely cause: {cause}"
        return report(name, "wrong", hint, verbose, {"shape": ans.shape})
    bad = ~np.isfinite(ans)
    if bad.any():
        where = tuple(int(i) for i in np.argwhere(bad)[0])
        return report(name, "wrong", f"entry {where} is {ans[where]}: the computation "
                       "overflowed or divided by zero", verbose, {"index": where})
    if np.allclose(ans, exp, rtol=rtol, atol=atol):
        err = float(np.max(np.abs(ans - exp))) if exp.size else 0.0
        return report(name, "pass", f"matches the toolkit (largest difference {err:.1e})",
                       verbose, {"max_abs_error": err})
    diff = np.abs(ans - exp)
    wrong = diff > atol + rtol * np.abs(exp)
    first = tuple(int(i) for i in np.argwhere(wrong)[0])
    scale = float(np.max(np.abs(exp))) if exp.size else 0.0
    err = float(diff.max())
    text = (f"{int(wrong.sum())} of {exp.size} entries differ; first at index {first}: "
            f"yours {_fmt(ans[first])}, expected {_fmt(exp[first])}; largest difference "
            f"{err:.3g} ({err / scale if scale else float('inf'):.3g} of the largest entry)")
    cause = None
    for label, wrong_answer in causes:
        wa = np.asarray(wrong_answer)
        if _close(ans, wa, rtol, atol):
            cause = label
            break
    cause = cause or _likely_cause(ans, exp, rtol, atol, axis)
    if cause:
        text += f"; likely cause: {cause}"
    return report(name, "wrong", text, verbose,
                   {"index": first, "max_abs_error": err, "n_wrong": int(wrong.sum())})


def _fmt(x: Any) -> str:
    return f"{complex(x):.6g}" if np.iscomplexobj(x) else f"{float(x):.6g}"


def check_scalar(name: str, answer: Any, expected: float, *, rtol: float = 1e-7,
                 atol: float = 1e-10, causes: Sequence[tuple[str, float]] = (),
                 verbose: bool = True) -> CheckResult:
    """Compare a number with the expected one (``|a - e| <= atol + rtol |e|``).

    ``causes`` lists lesson-specific wrong values with their description, as in
    :func:`check_array`. A one-element array is accepted as a number.
    """
    if is_stub(answer):
        return _todo(name, verbose)
    ans = _as_numeric(answer)
    if ans is None or ans.size != 1:
        got = type(answer).__name__ if ans is None else f"an array of shape {ans.shape}"
        return report(name, "wrong", f"expected one number, got {got}", verbose)
    value = complex(ans.reshape(())) if np.iscomplexobj(ans) else float(ans.reshape(()))
    if not np.isfinite(value):
        return report(name, "wrong", f"got {value}: the computation overflowed or divided "
                       "by zero", verbose)
    err = abs(value - expected)
    if err <= atol + rtol * abs(expected):
        return report(name, "pass", f"{_fmt(value)} matches the toolkit's "
                       f"{_fmt(expected)}", verbose, {"abs_error": err})
    text = (f"yours {_fmt(value)}, expected {_fmt(expected)} (difference {err:.3g}, "
            f"{err / abs(expected) if expected else float('inf'):.3g} relative)")
    for label, wrong_value in causes:
        if abs(value - wrong_value) <= atol + rtol * abs(wrong_value):
            text += f"; likely cause: {label}"
            break
    else:
        if expected and abs(value + expected) <= atol + rtol * abs(expected):
            text += "; likely cause: the sign is flipped"
    return report(name, "wrong", text, verbose, {"abs_error": err})


def check_equal(name: str, answer: Any, expected: Any, *,
                causes: Sequence[tuple[str, Any]] = (), verbose: bool = True) -> CheckResult:
    """Compare an exact answer (a label, an integer, a tuple) with the expected one.

    ``causes`` lists lesson-specific wrong answers with their description, as in
    :func:`check_array`.
    """
    if is_stub(answer):
        return _todo(name, verbose)
    try:
        same = bool(answer == expected)
    except Exception:  # noqa: BLE001 - an answer that cannot be compared is not equal
        same = False
    if same:
        return report(name, "pass", f"{answer!r}, as the toolkit says", verbose)
    text = f"yours {answer!r}, expected {expected!r}"
    for label, wrong in causes:
        if answer == wrong:
            text += f"; likely cause: {label}"
            break
    return report(name, "wrong", text, verbose)


def check_function(name: str, student: Any, reference: Callable[..., Any],
                   cases: Iterable[Mapping[str, Any]], *,
                   compare: Callable[..., CheckResult] = check_array,
                   verbose: bool = True, **compare_options: Any) -> CheckResult:
    """Call a student's function on test cases and compare each output with the reference.

    Parameters
    ----------
    name : str
        The exercise, used in the message.
    student : callable or None
        The student's function. ``None``/``...`` (not written yet), or a function that
        returns ``None``/``...`` on the first case, gives "not yet".
    reference : callable
        The toolkit's answer, called with the same keyword arguments.
    cases : iterable of dict
        Keyword arguments of each call; the message names the first failing case.
    compare : callable
        :func:`check_array` (default) or :func:`check_scalar`; ``compare_options`` are
        passed to it (``rtol``, ``atol``, ``causes``...). ``causes`` may also be a function
        of the case returning that list.

    An exception raised by the student's function becomes the message ("your function
    raised ZeroDivisionError: ... for a=0.5, n=8"), never a traceback.
    """
    if is_stub(student):
        return _todo(name, verbose)
    if not callable(student):
        return report(name, "wrong", f"expected a function, got {type(student).__name__}",
                       verbose)
    cases = list(cases)
    if not cases:
        raise ValueError("cases must hold at least one dict of keyword arguments")
    worst: float | None = None
    for i, case in enumerate(cases):
        described = ", ".join(f"{k}={_short(v)}" for k, v in case.items())
        try:
            got = student(**case)
        except Exception as exc:  # noqa: BLE001 - a student's error is reported, not raised
            return report(name, "wrong", f"your function raised {type(exc).__name__}: "
                           f"{exc} (case {i + 1}: {described})", verbose,
                           {"case": i, "exception": type(exc).__name__})
        if is_stub(got):
            return _todo(name, verbose, f"your function returned {got!r} "
                         f"(case {i + 1}: {described})")
        options = dict(compare_options)
        if callable(options.get("causes")):
            options["causes"] = options["causes"](**case)
        res = compare(name, got, reference(**case), verbose=False, **options)
        if not res.passed:
            text = res.message.split(" — ", 1)[1]
            return report(name, res.status, f"case {i + 1} ({described}): {text}", verbose,
                           {"case": i, **res.details})
        err = res.details.get("max_abs_error", res.details.get("abs_error"))
        if err is not None:
            worst = max(worst or 0.0, float(err))
    text = f"matches the toolkit on all {len(cases)} cases"
    if worst is not None:
        text += f" (largest difference {worst:.1e})"
    return report(name, "pass", text, verbose, {} if worst is None else
                  {"max_abs_error": worst})


def _short(value: Any) -> str:
    if isinstance(value, np.ndarray):
        return f"array{value.shape}"
    text = repr(value)
    return text if len(text) <= 30 else text[:27] + "..."


class Summary(dict):
    """The record of :func:`summarize` (a ``dict``); a notebook does not display it again
    after its line was printed."""

    printed = False

    def _ipython_display_(self) -> None:
        if not self.printed:
            print(dict(self))


def summarize(results: Iterable[CheckResult], *, verbose: bool = True) -> dict[str, Any]:
    """Count passed, stub and wrong checks of a lesson; print one line.

    Returns ``{"passed": int, "todo": int, "wrong": int, "total": int, "names": {name:
    status}}`` (the record an autograder stores).
    """
    results = list(results)
    counts = {s: sum(r.status == s for r in results) for s in STATUSES}
    out = Summary({"passed": counts["pass"], "todo": counts["todo"], "wrong": counts["wrong"],
                   "total": len(results), "names": {r.name: r.status for r in results}})
    out.printed = verbose
    if verbose:
        print(f"{out['passed']} of {out['total']} checks pass"
              + (f", {out['todo']} not started" if out["todo"] else "")
              + (f", {out['wrong']} not right yet" if out["wrong"] else ""))
    return out


def run_checks(checks: Mapping[str, Callable[..., CheckResult]], answers: Mapping[str, Any],
               *, verbose: bool = True) -> dict[str, Any]:
    """Run a lesson's graded checks on the student's answers and summarise them.

    ``checks`` maps the name of each answer (the variable or function the exercise asks for,
    ``"impulse_response"``) to its check; ``answers`` maps the same names to the student's
    objects (a missing one counts as a stub). Prints one line per check that does not pass
    and the count (``verbose``); returns :func:`summarize`'s record plus ``"messages"``.
    This is what an autograder calls on a student's namespace.
    """
    results = []
    for key, check in checks.items():
        res = check(answers.get(key), verbose=False)
        if verbose and not res.passed:
            print(res.message)
        results.append(res)
    out = summarize(results, verbose=verbose)
    out["messages"] = {r.name: r.message for r in results}
    return out
