"""The check API: passes what equals the toolkit, says 'not yet' with the right hint
otherwise, never raises on a student's answer."""

from __future__ import annotations

import numpy as np
import pytest

from lds_toolkit.teaching import (
    check_array,
    check_equal,
    check_function,
    check_scalar,
    report,
    run_checks,
)

EXPECTED = np.array([0.0, 1.0, 0.5, 0.25, 0.125])


@pytest.mark.parametrize("stub", [None, ...])
def test_stub_answers_are_not_yet(stub, capsys):
    for res in (check_array("h", stub, EXPECTED), check_scalar("m", stub, 3.0),
                check_equal("r", stub, "B"), check_function("f", stub, lambda: 1, [{}])):
        assert res.status == "todo" and not res.passed
        assert res.message.startswith("not yet:") and "stub" in res.message
    assert capsys.readouterr().out.count("not yet:") == 4


def test_function_returning_a_stub_is_not_yet():
    res = check_function("f", lambda a: None, lambda a: a, [{"a": 1.0}], verbose=False)
    assert res.status == "todo" and "returned None" in res.message


def test_pass_within_tolerance_and_quiet(capsys):
    res = check_array("h", EXPECTED * (1 + 1e-12), EXPECTED, verbose=False)
    assert res.passed and res.message.startswith("pass:")
    assert capsys.readouterr().out == ""


@pytest.mark.parametrize(("answer", "cause"), [
    (np.r_[0.0, EXPECTED[:-1]], "one step late"),
    (np.r_[EXPECTED[1:], 0.0], "one step early"),
    (-EXPECTED, "sign is flipped"),
    (3 * EXPECTED, "constant factor (expected = 0.333333 x yours)"),
    (EXPECTED[:, None], "shape is not: reshape"),
])
def test_hints_name_the_slip(answer, cause):
    res = check_array("h", answer, EXPECTED, verbose=False)
    assert res.status == "wrong" and cause in res.message, res.message


def test_hint_says_where_and_how_much():
    answer = EXPECTED.copy()
    answer[3] = 0.3
    res = check_array("h", answer, EXPECTED, verbose=False)
    assert "1 of 5 entries differ" in res.message and "index (3,)" in res.message
    assert res.details["index"] == (3,) and res.details["max_abs_error"] == pytest.approx(0.05)


def test_transpose_nan_and_non_numeric():
    m = np.arange(6.0).reshape(2, 3)
    assert "transpose" in check_array("P", m.T, m, verbose=False).message
    assert "entry (1,) is NaN" in check_array("h", [0.0, np.nan, 0, 0, 0], EXPECTED,
                                              verbose=False).message
    assert "got str" in check_array("h", "abc", EXPECTED, verbose=False).message


def test_lesson_specific_cause_wins():
    wrong = EXPECTED + 1
    res = check_array("h", wrong, EXPECTED, causes=[("Tustin instead of S4", wrong)],
                      verbose=False)
    assert "likely cause: Tustin instead of S4" in res.message


def test_student_exception_is_one_line_without_traceback():
    def student(a):
        raise ZeroDivisionError("division by zero")

    res = check_function("f", student, lambda a: a, [{"a": 2.0}], verbose=False)
    assert res.status == "wrong" and "Traceback" not in res.message
    assert "raised ZeroDivisionError: division by zero (case 1: a=2.0)" in res.message


def test_check_function_reports_the_failing_case():
    cases = [{"a": 1.0}, {"a": 2.0}]
    res = check_function("sq", lambda a: a * a if a < 2 else 5.0, lambda a: a * a, cases,
                         compare=check_scalar, verbose=False)
    assert "case 2 (a=2.0)" in res.message and "yours 5, expected 4" in res.message


def test_scalar_and_equal():
    assert check_scalar("m", np.array([34]), 34, atol=0.5, verbose=False).passed
    assert "sign is flipped" in check_scalar("x", -2.0, 2.0, verbose=False).message
    assert "overflowed" in check_scalar("x", np.inf, 2.0, verbose=False).message
    assert "one number" in check_scalar("x", [1, 2], 2.0, verbose=False).message
    res = check_equal("r", "A", "B", causes=[("open end point", "A")], verbose=False)
    assert "likely cause: open end point" in res.message


def test_run_checks_counts_and_report_validates(capsys):
    checks = {"x": lambda a, verbose=True: check_scalar("x", a, 1.0, verbose=verbose),
              "y": lambda a, verbose=True: check_scalar("y", a, 2.0, verbose=verbose)}
    out = run_checks(checks, {"x": 1.0, "y": 3.0})
    assert (out["passed"], out["wrong"], out["todo"], out["total"]) == (1, 1, 0, 2)
    assert "1 of 2 checks pass, 1 not right yet" in capsys.readouterr().out
    with pytest.raises(ValueError, match="status must be one of"):
        report("x", "ok", "text")
    with pytest.raises(ValueError, match="rtol must be a finite number >= 0"):
        check_array("x", [1.0], [1.0], rtol=-1)
