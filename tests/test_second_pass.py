"""Issue 27's second pass over the public API: every bad input of
:mod:`tests._second_pass_cases` ends with a clear error naming the argument (none unclear,
none silent). The cases list says what each one tries."""

from __future__ import annotations

import pytest

from ._second_pass_cases import cases, run_case

CASES = cases()


def test_the_second_pass_has_at_least_100_cases():
    assert len(CASES) >= 100
    assert len({c[0] for c in CASES}) == len(CASES), "case ids are unique"


@pytest.mark.parametrize("case_id, call, names", CASES, ids=[c[0] for c in CASES])
def test_every_bad_input_gets_a_clear_error(case_id, call, names):
    verdict, detail = run_case(call, names)
    assert verdict == "clear", f"{case_id}: {verdict}: {detail}"
