"""The calling discipline of the checks (lds_toolkit/teaching/calling.py): deep copies, a
time limit per call, nothing escaping (BaseException included), an earlier exercise's
stand-in; and the check helpers refusing nonsense arguments (issue 46)."""

from __future__ import annotations

import signal
import sys
import threading
import time

import numpy as np
import pytest

from lds_toolkit.teaching import check_array, check_equal, check_function, check_scalar
from lds_toolkit.teaching.calling import by_case, call_student, substituted


def _double(a):
    return 2 * np.asarray(a)


def test_an_in_place_answer_changes_neither_the_expected_value_nor_another_case():
    shared = np.arange(3.0)
    cases = [{"a": shared}, {"a": shared}]  # the same array in two cases, on purpose

    def in_place(a):  # correct, but doubles its argument in place
        a *= 2
        return a

    def wrong_in_place(a):  # wrong (x4), and in place: it must not make itself "right"
        a *= 2
        return 2 * a

    def reference(a):  # would see a doubled input if the student ran first on the same array
        return 2 * a

    assert check_function("d", in_place, reference, cases, verbose=False).passed
    res = check_function("d", wrong_in_place, reference, cases, verbose=False)
    assert res.status == "wrong" and "changed its input(s) a in place" in res.message
    np.testing.assert_array_equal(shared, [0.0, 1.0, 2.0])  # the case itself untouched


@pytest.mark.parametrize(("body", "words"), [
    (lambda a: sys.exit(3), "called sys.exit(3) (SystemExit)"),
    (lambda a: sys.exit(), "called sys.exit()"),
    (lambda a: (_ for _ in ()).throw(KeyboardInterrupt), "was interrupted (KeyboardInterrupt)"),
    (lambda a: 1 / 0, "raised ZeroDivisionError: division by zero"),
    (lambda a: (_ for _ in ()).throw(GeneratorExit), "raised GeneratorExit"),
])
def test_nothing_escapes_base_exceptions_included(body, words):
    res = check_function("f", body, _double, [{"a": 1.0}], verbose=False)
    assert res.status == "wrong" and words in res.message and "case 1" in res.message


def test_an_endless_function_is_stopped_at_its_time_limit_even_if_it_swallows_it():
    def stubborn(a):  # swallows the first interruption, then loops again
        try:
            while True:
                pass
        except BaseException:  # noqa: BLE001 - the student's bare except
            pass
        while True:
            pass

    start = time.monotonic()
    res = check_function("f", stubborn, _double, [{"a": 1.0}], time_limit=0.3, verbose=False)
    assert time.monotonic() - start < 5
    assert "took longer than 0.3 s" in res.message
    # the check's own timer is gone: nothing fires later
    assert signal.getitimer(signal.ITIMER_REAL)[0] == 0.0


def test_a_timer_set_before_the_check_gets_its_time_back():
    """pytest-timeout and the like set ITIMER_REAL: the check restores it, minus the time
    the call took."""
    fired = []
    old = signal.signal(signal.SIGALRM, lambda *_: fired.append(1))
    try:
        signal.setitimer(signal.ITIMER_REAL, 5.0)
        call_student(lambda: time.sleep(0.2), {}, time_limit=2.0)
        left = signal.getitimer(signal.ITIMER_REAL)[0]
        assert 4.0 < left < 4.9 and not fired
        assert signal.getsignal(signal.SIGALRM) is not None
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0.0)
        signal.signal(signal.SIGALRM, old)


def test_off_the_main_thread_the_limit_still_holds():
    out = {}

    def run():
        out["res"] = call_student(lambda: time.sleep(3), {}, time_limit=0.2)

    t = threading.Thread(target=run)
    t.start()
    t.join(5)
    assert out["res"].kind == "timeout" and "took longer than 0.2 s" in out["res"].error


def test_answers_that_break_comparison_are_reported():
    class Hostile:
        def __eq__(self, other):
            raise RuntimeError("boom")

        def __repr__(self):
            raise ValueError("no repr")

        __hash__ = None

    res = check_function("r", lambda lam: Hostile(), lambda lam: "B", [{"lam": 0.5}],
                         compare=check_equal, verbose=False)
    assert res.status == "wrong" and "comparing your answer raised RuntimeError: boom" in \
        res.message and "its repr raised ValueError" in res.message
    res = check_function("r", lambda lam: np.array(["B", "B"]), lambda lam: "B",
                         [{"lam": 0.5}], compare=check_equal,
                         causes=[("a cause", "A")], verbose=False)
    assert "an array of shape (2,) where one value was expected" in res.message
    res = check_function("s", lambda a: np.ones(3), lambda a: 1.0, [{"a": 1.0}],
                         compare=check_scalar, verbose=False)
    assert "expected one number, got an array of shape (3,)" in res.message


def test_an_earlier_exercise_stands_in_and_is_named_when_it_is_the_cause():
    ns = {}
    exec("def inner(x):\n    return x + 1\n\ndef outer(x):\n    return 2 * inner(x)\n", ns)
    good_inner = lambda x: x + 2  # noqa: E731 - the "toolkit's" inner
    reference = lambda x: 2 * (x + 2)  # noqa: E731
    subs = {"inner": (good_inner, "exercise 1 (inner)")}
    res = check_function("outer", ns["outer"], reference, [{"x": 1.0}], compare=check_scalar,
                         substitutes=subs, verbose=False)
    assert res.passed and "fix exercise 1 (inner) first" in res.message
    assert ns["inner"](0) == 1  # restored
    ns_wrong = {}
    exec("def inner(x):\n    return x + 2\n\ndef outer(x):\n    return 3 * inner(x)\n",
         ns_wrong)
    res = check_function("outer", ns_wrong["outer"], reference, [{"x": 1.0}],
                         compare=check_scalar, substitutes=subs, verbose=False)
    assert res.status == "wrong" and "the slip is in this function" in res.message
    with substituted(ns["outer"], {"inner": good_inner}) as own:
        assert ns["inner"] is good_inner and own["inner"](0) == 1
    assert ns["inner"](0) == 1


def test_by_case_takes_the_case_as_one_dict():
    route = by_case(lambda case: case["a"] + case["b"])
    assert route(a=1, b=2) == 3


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -1.0])
def test_tolerances_must_be_finite_and_non_negative(bad):
    for kw in ("rtol", "atol"):
        with pytest.raises(ValueError, match=f"{kw} must be a finite number >= 0"):
            check_array("h", [1.0], [1.0], **{kw: bad})
        with pytest.raises(ValueError, match=f"{kw} must be a finite number >= 0"):
            check_scalar("h", 1.0, 1.0, **{kw: bad})


@pytest.mark.parametrize("bad", ["1e-3", None, True])
def test_string_or_bool_tolerances_are_refused_by_name(bad):
    with pytest.raises(TypeError, match="rtol must be a finite number >= 0, got"):
        check_array("h", [1.0], [1.0], rtol=bad)


def test_nan_expected_values_are_refused():
    with pytest.raises(ValueError, match="expected holds NaN"):
        check_array("h", [1.0, 2.0], [1.0, np.nan])
    with pytest.raises(ValueError, match="expected holds NaN"):
        check_scalar("h", 1.0, float("nan"))
    with pytest.raises(ValueError, match="expected is NaN"):
        check_equal("h", 1.0, float("nan"))


def test_check_equal_passes_two_equal_arrays_and_names_unequal_ones():
    assert check_equal("a", np.array([1, 2]), np.array([1, 2]), verbose=False).passed
    assert not check_equal("a", np.array([1, 2]), np.array([1, 3]), verbose=False).passed
    assert not check_equal("a", np.array([1, 2]), np.array([[1, 2]]), verbose=False).passed


def test_a_legitimate_infinity_is_an_answer_not_an_overflow():
    assert check_scalar("t", np.inf, np.inf, verbose=False).passed
    res = check_scalar("t", 0.3, np.inf, verbose=False)
    assert res.status == "wrong" and "overflow" not in res.message
    res = check_scalar("t", np.inf, 0.3, verbose=False)
    assert "overflowed" in res.message
    assert check_array("h", [1.0, np.inf], [1.0, np.inf], verbose=False).passed
    res = check_array("h", [np.nan, 1.0], [1.0, 1.0], verbose=False)
    assert "NaN (not a number)" in res.message
    res = check_scalar("t", float("nan"), 1.0, verbose=False)
    assert "NaN (not a number)" in res.message
