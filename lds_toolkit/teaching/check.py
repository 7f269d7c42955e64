"""Self-checking exercises: compare a student's answer with the toolkit's, say what differs.

Every check returns a :class:`CheckResult` and prints one line (``verbose=False`` keeps it
quiet): ``pass: ...`` when the answer matches, ``not yet: ...`` when the exercise is still a
stub (an answer of ``None`` or ``...``, or a function that returns one of them), and
``not yet: ...`` with a hint otherwise — what differs (shape, the first wrong entry, the
largest error), by how much, and a likely cause found by trying the usual slips (an index
shifted by one step, a transposed matrix, a flipped sign, a constant factor, the conjugate).
A check never raises on a student's answer: whatever the student's function does — raise,
run past its time limit, call ``sys.exit``, modify its inputs in place, return an object
whose ``__eq__`` raises — is reported as a line naming what happened and the case, without a
traceback (the calling discipline: :mod:`lds_toolkit.teaching.calling`). Bad arguments of
the *check itself* (a reference that is not an array, a negative, NaN, infinite or string
tolerance, a NaN expected value) raise ``ValueError``/``TypeError`` naming the argument:
those are the lesson author's mistakes.

Lessons build their exercise checks from :func:`check_array`, :func:`check_scalar` and
:func:`check_function` (see ``lds_toolkit/teaching/lesson01.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from .calling import (
    DEFAULT_TIME_LIMIT,
    call_student,
    check_time_limit,
    fresh_case,
    given_cases,
    guarded,
    substituted,
)
from .results import (  # noqa: F401 - STATUSES, Summary: importable from here as before
    STATUSES,
    CheckResult,
    Summary,
    _todo,
    is_stub,
    report,
    run_checks,
    summarize,
)

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

def _tolerance(name: str, value: Any) -> float:
    """A tolerance of a check: a finite number >= 0 (NaN or inf would let anything pass)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer,
                                                                     np.floating)):
        raise TypeError(f"{name} must be a finite number >= 0, got {type(value).__name__} "
                        f"{value!r}")
    if not np.isfinite(value) or value < 0:
        raise ValueError(f"{name} must be a finite number >= 0, got {value!r}")
    return float(value)


def _expected_array(expected: Any) -> np.ndarray:
    """The check's expected value as a numeric array, refused when it holds NaN (nothing
    would ever equal it)."""
    exp = np.asarray(expected)
    if exp.dtype == object or not (np.issubdtype(exp.dtype, np.number)
                                   or exp.dtype == np.bool_):
        raise TypeError(f"expected must be a numeric array, got {expected!r}")
    if np.issubdtype(exp.dtype, np.inexact) and np.isnan(exp).any():
        raise ValueError("expected holds NaN: no answer could match it (compute the expected "
                         "value without NaN, or check NaN entries separately)")
    return exp


def _as_numeric(answer: Any) -> np.ndarray | None:
    arr, err = guarded(np.asarray, answer)
    if err is not None:  # anything that is not array-like is reported, not raised
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
    rtol, atol = _tolerance("rtol", rtol), _tolerance("atol", atol)
    exp = _expected_array(expected)
    if is_stub(answer):
        return _todo(name, verbose)
    ans = _as_numeric(answer)
    if ans is None:
        return report(name, "wrong", f"expected a numeric array of shape {exp.shape}, got "
                       f"{type(answer).__name__}", verbose)
    if np.iscomplexobj(ans) and not np.iscomplexobj(exp):
        if np.all(ans.imag == 0):  # a real answer held in a complex array is still right
            ans = ans.real
        else:
            return report(name, "wrong", "your answer is complex, the expected one is real "
                           f"(largest imaginary part {float(np.max(np.abs(ans.imag))):.3g})",
                           verbose)
    if ans.shape != exp.shape:
        hint = f"expected shape {exp.shape}, got {ans.shape}"
        cause = _lesson_cause(ans, causes, rtol, atol) or _likely_cause(ans, exp, rtol, atol,
                                                                         axis)
        if cause:
            hint += f"; likely cause: {cause}"
        return report(name, "wrong", hint, verbose, {"shape": ans.shape})
    # a non-finite entry is wrong only where the expected entry is not the same infinity
    # (a legitimate inf, "no event", is an answer, not an overflow)
    same_inf = np.isinf(ans) & np.isinf(exp) & (np.sign(ans) == np.sign(exp)) \
        if exp.dtype.kind in "fc" and ans.dtype.kind in "fc" else np.zeros(ans.shape, bool)
    bad = ~np.isfinite(ans) & ~same_inf
    if bad.any():
        where = tuple(int(i) for i in np.argwhere(bad)[0])
        value = ans[where]
        text = (f"entry {where} is NaN (not a number): a 0/0, inf - inf, the log or square "
                "root of a negative number, or a NaN input"
                if np.isnan(value) else f"entry {where} is {value}, expected "
                f"{_fmt(exp[where])}: the computation overflowed or divided by zero")
        for label, wrong_answer in causes:  # a known slip that divides by zero, say
            wa = np.asarray(wrong_answer)
            if wa.dtype != object and wa.shape == ans.shape and \
                    bool(np.allclose(ans, wa, rtol=rtol, atol=atol, equal_nan=True)):
                text += f"; likely cause: {label}"
                break
        return report(name, "wrong", text, verbose, {"index": where})
    if np.allclose(ans, exp, rtol=rtol, atol=atol):
        finite = np.isfinite(exp)
        err = float(np.max(np.abs(ans[finite] - exp[finite]))) if finite.any() else 0.0
        return report(name, "pass", f"matches the toolkit (largest difference {err:.1e})",
                       verbose, {"max_abs_error": err})
    with np.errstate(invalid="ignore"):  # inf - inf where both are the same infinity
        diff = np.where(same_inf, 0.0, np.abs(ans - exp))
        wrong = (diff > atol + rtol * np.abs(exp)) | (np.isinf(exp) & ~same_inf)
        diff = np.where(np.isinf(diff), np.inf, diff)
    first = tuple(int(i) for i in np.argwhere(wrong)[0])
    finite = np.isfinite(exp)
    scale = float(np.max(np.abs(exp[finite]))) if finite.any() else 0.0
    err = float(diff.max())
    text = (f"{int(wrong.sum())} of {exp.size} entries differ; first at index {first}: "
            f"yours {_fmt(ans[first])}, expected {_fmt(exp[first])}; largest difference "
            f"{err:.3g} ({err / scale if scale else float('inf'):.3g} of the largest entry)")
    cause = _lesson_cause(ans, causes, rtol, atol) or _likely_cause(ans, exp, rtol, atol, axis)
    if cause:
        text += f"; likely cause: {cause}"
    return report(name, "wrong", text, verbose,
                   {"index": first, "max_abs_error": err, "n_wrong": int(wrong.sum())})


def _lesson_cause(ans: np.ndarray, causes: Sequence[tuple[str, Any]], rtol: float,
                  atol: float) -> str | None:
    """The first of a lesson's known wrong answers (of any shape) that ``ans`` matches."""
    for label, wrong_answer in causes:
        wa = np.asarray(wrong_answer)
        if wa.dtype != object and _close(ans, wa, rtol, atol):
            return label
    return None


def _fmt(x: Any) -> str:
    return f"{complex(x):.6g}" if np.iscomplexobj(x) else f"{float(x):.6g}"


def check_scalar(name: str, answer: Any, expected: float, *, rtol: float = 1e-7,
                 atol: float = 1e-10, causes: Sequence[tuple[str, float]] = (),
                 verbose: bool = True) -> CheckResult:
    """Compare a number with the expected one (``|a - e| <= atol + rtol |e|``).

    ``causes`` lists lesson-specific wrong values with their description, as in
    :func:`check_array`. A one-element array is accepted as a number. An infinite expected
    value (``inf``: "no event") is matched by the same infinity; NaN is never expected.
    """
    rtol, atol = _tolerance("rtol", rtol), _tolerance("atol", atol)
    exp_arr = _expected_array(expected)
    if exp_arr.size != 1:
        raise ValueError(f"expected must be one number, got an array of shape {exp_arr.shape}")
    exp = complex(exp_arr.reshape(())) if np.iscomplexobj(exp_arr) else \
        float(exp_arr.reshape(()))
    if is_stub(answer):
        return _todo(name, verbose)
    ans = _as_numeric(answer)
    if ans is None or ans.size != 1:
        got = type(answer).__name__ if ans is None else f"an array of shape {ans.shape}"
        return report(name, "wrong", f"expected one number, got {got}", verbose)
    value = complex(ans.reshape(())) if np.iscomplexobj(ans) else float(ans.reshape(()))
    if isinstance(value, complex) and value.imag == 0 and not isinstance(exp, complex):
        value = value.real
    if not np.isfinite(value):
        if value == exp:  # the same infinity: a legitimate answer
            return report(name, "pass", f"{value} matches the toolkit's {exp}", verbose,
                          {"abs_error": 0.0})
        for label, wrong_value in causes:  # a slip that never triggers gives inf too
            if value == wrong_value:
                return report(name, "wrong", f"got {value}, expected {_fmt(exp)}; likely "
                              f"cause: {label}", verbose)
        what = ("NaN (not a number): a 0/0, inf - inf, the log or square root of a negative "
                "number, or a NaN input" if np.isnan(value)
                else f"{value}: the computation overflowed or divided by zero")
        return report(name, "wrong", f"got {what}; expected {_fmt(exp)}", verbose)
    if not np.isfinite(exp):
        return report(name, "wrong", f"yours {_fmt(value)}, expected {exp}", verbose)
    err = abs(value - exp)
    if err <= atol + rtol * abs(exp):
        return report(name, "pass", f"{_fmt(value)} matches the toolkit's "
                       f"{_fmt(exp)}", verbose, {"abs_error": err})
    text = (f"yours {_fmt(value)}, expected {_fmt(exp)} (difference {err:.3g}, "
            f"{err / abs(exp) if exp else float('inf'):.3g} relative)")
    for label, wrong in causes:
        wv: complex | float = complex(wrong) if isinstance(wrong, complex) else float(wrong)
        if value == wv or (np.isfinite(wv) and  # an infinite slip would match every value
                           abs(value - wv) <= atol + rtol * abs(wv)):
            text += f"; likely cause: {label}"
            break
    else:
        if exp and abs(value + exp) <= atol + rtol * abs(exp):
            text += "; likely cause: the sign is flipped"
    return report(name, "wrong", text, verbose, {"abs_error": err})


def _equal(answer: Any, expected: Any) -> bool:
    """``answer == expected`` for labels, numbers, tuples and arrays (shape and entries);
    never raises (a comparison that fails is "not equal")."""
    if isinstance(answer, np.ndarray) or isinstance(expected, np.ndarray):
        same, err = guarded(lambda: np.shape(answer) == np.shape(expected)
                            and bool(np.array_equal(answer, expected)))
        return bool(same) and err is None
    same, err = guarded(lambda: bool(answer == expected))
    return err is None and bool(same)


def _safe_repr(value: Any) -> str:
    text, err = guarded(repr, value)
    if err is not None or not isinstance(text, str):
        return f"a {type(value).__name__} (its repr {err or 'is not a string'})"
    return text if len(text) <= 200 else text[:197] + "..."


def check_equal(name: str, answer: Any, expected: Any, *,
                causes: Sequence[tuple[str, Any]] = (), verbose: bool = True) -> CheckResult:
    """Compare an exact answer (a label, an integer, a tuple, an array) with the expected one.

    Arrays are equal when their shapes and entries are (``numpy.array_equal``). An answer
    whose comparison raises (its ``__eq__``, an array where a label is expected) is "not
    equal", with what happened in the hint. ``causes`` lists lesson-specific wrong answers
    with their description, as in :func:`check_array`. A NaN expected value is refused.
    """
    if isinstance(expected, (float, np.floating)) and np.isnan(expected) or (
            isinstance(expected, np.ndarray) and expected.dtype.kind in "fc"
            and np.isnan(expected).any()):
        raise ValueError("expected is NaN: NaN equals nothing, no answer could match it")
    if is_stub(answer):
        return _todo(name, verbose)
    if _equal(answer, expected):
        return report(name, "pass", f"{_safe_repr(answer)}, as the toolkit says", verbose)
    text = f"yours {_safe_repr(answer)}, expected {_safe_repr(expected)}"
    if isinstance(answer, np.ndarray) and not isinstance(expected, np.ndarray):
        text += f" (an array of shape {answer.shape} where one value was expected)"
    else:
        _, err = guarded(lambda: bool(answer == expected))
        if err is not None and isinstance(answer, type(expected)) is False:
            text += f" (comparing your answer {err})"
    for label, wrong in causes:
        if _equal(answer, wrong):
            text += f"; likely cause: {label}"
            break
    return report(name, "wrong", text, verbose)


def check_function(name: str, student: Any, reference: Callable[..., Any],
                   cases: Iterable[Mapping[str, Any]], *,
                   compare: Callable[..., CheckResult] = check_array,
                   verbose: bool = True, **compare_options: Any) -> CheckResult:
    """Call a student's function on test cases and compare each output with the reference.

    For each case (its keyword arguments): the expected value ``reference(**copy)`` is
    computed first, on a deep copy; then the student's function runs on another deep copy,
    with a time limit, nothing it raises escaping (:func:`~lds_toolkit.teaching.calling.
    call_student`); then ``compare(name, got, expected, **options)`` runs, also guarded.

    Parameters
    ----------
    name : str
        The exercise, used in the message.
    student : callable or None
        The student's function. ``None``/``...`` (not written yet), or a function that
        returns ``None``/``...`` on the first case, gives "not yet".
    reference : callable
        The expected value of a case, called with the same keyword arguments (an
        independent route: a toolkit function, precomputed values).
    cases : iterable of dict
        Keyword arguments of each call; the message names the first failing case.
    compare : callable
        :func:`check_array` (default), :func:`check_scalar` or :func:`check_equal`;
        ``compare_options`` are passed to it (``rtol``, ``atol``, ``causes``...).
        ``causes`` may also be a function of the case returning that list.

    Other options (taken out of ``compare_options``):

    * ``time_limit`` — seconds per call of the student's function (default
      :data:`~lds_toolkit.teaching.calling.DEFAULT_TIME_LIMIT`; ``None``: no limit);
    * ``substitutes`` — ``{global name: (object, "exercise 1 (trigger)")}``: during each call
      the student's function sees ``object`` under that global name instead of the student's
      own (a later exercise checked with the reference of an earlier one); when the case
      then passes but fails with the student's own object, or fails because of it, the hint
      names that exercise.

    Whatever the student's function does becomes the message ("your function raised
    ZeroDivisionError: ... (case 2: a=0.5, n=8)", "took longer than 10 s", "called
    sys.exit()"), never a traceback.
    """
    time_limit = check_time_limit(compare_options.pop("time_limit", DEFAULT_TIME_LIMIT))
    substitutes = dict(compare_options.pop("substitutes", None) or {})
    # the author's arguments are checked before the student's answer is looked at
    case_list = given_cases(cases if cases is not None else ()) or []
    if not callable(reference):
        raise TypeError(f"reference must be a function of the cases' keyword arguments, got "
                        f"{type(reference).__name__}")
    if is_stub(student):
        return _todo(name, verbose)
    if not callable(student):
        return report(name, "wrong", f"expected a function, got {type(student).__name__}",
                       verbose)
    worst: float | None = None
    earlier_note = ""
    for i, case in enumerate(case_list):
        described = ", ".join(f"{k}={_short(v)}" for k, v in case.items())
        try:
            expected = reference(**fresh_case(case))
        except Exception as exc:  # noqa: BLE001 - a case the reference cannot take: the author's
            raise ValueError(f"cases[{i}] ({described}) is not a case of this check: the "
                             f"reference raised {type(exc).__name__}: "
                             f"{' '.join(str(exc).split())}") from exc
        with substituted(student, {k: v[0] for k, v in substitutes.items()}) as own:
            out = call_student(student, case, time_limit=time_limit)
        if not out.ok:
            return report(name, "wrong", f"your function {out.error} (case {i + 1}: "
                           f"{described})", verbose,
                           {"case": i, "exception": out.error, "kind": out.kind})
        if is_stub(out.value):
            return _todo(name, verbose, f"your function returned {out.value!r} "
                         f"(case {i + 1}: {described})")
        options = dict(compare_options)
        if callable(options.get("causes")):
            options["causes"] = options["causes"](**fresh_case(case))
        res, err = guarded(compare, name, out.value, expected, verbose=False, **options)
        if err is not None:
            return report(name, "wrong", f"case {i + 1} ({described}): your answer could not "
                           f"be compared: it {err}", verbose, {"case": i})
        if not res.passed:
            text = res.message.split(" — ", 1)[1]
            if out.modified_inputs:
                text += ("; note: your function changed its input(s) "
                         f"{', '.join(out.modified_inputs)} in place")
            text += _blame_earlier(student, case, own, substitutes, time_limit, expected,
                                   compare, options, passed=False)
            return report(name, res.status, f"case {i + 1} ({described}): {text}", verbose,
                           {"case": i, **res.details})
        if own and not earlier_note:
            earlier_note = _blame_earlier(student, case, own, substitutes, time_limit,
                                          expected, compare, options, passed=True)
        err_value = res.details.get("max_abs_error", res.details.get("abs_error"))
        if err_value is not None:
            worst = max(worst or 0.0, float(err_value))
    text = f"matches the toolkit on all {len(case_list)} cases"
    if worst is not None:
        text += f" (largest difference {worst:.1e})"
    return report(name, "pass", text + earlier_note, verbose, {} if worst is None else
                  {"max_abs_error": worst})


def _blame_earlier(student, case, own, substitutes, time_limit, expected, compare, options,
                   *, passed: bool) -> str:
    """The note naming an earlier exercise: the case run again with the student's own
    earlier answer(s) (``own``) instead of the substitutes."""
    if not own:
        return ""
    labels = ", ".join(substitutes[k][1] for k in own)
    if passed:  # passes with the toolkit's earlier answer: does it with the student's own?
        mine = call_student(student, case, time_limit=time_limit)
        res, err = (None, "failed") if not mine.ok else guarded(
            compare, "", mine.value, expected, verbose=False, **options)
        if err is None and res is not None and res.passed:
            return ""
        return (f" (checked with the toolkit's {labels}; with yours it does not match yet: "
                f"fix {labels} first)")
    return f" (checked with the toolkit's {labels}, so the slip is in this function)"


def _short(value: Any) -> str:
    if isinstance(value, np.ndarray):
        return f"array{value.shape}"
    text = repr(value)
    return text if len(text) <= 30 else text[:27] + "..."
