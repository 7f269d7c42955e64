"""The second passes over the public API (issue 27: :mod:`tests._second_pass_cases`; issue 38,
entry points that no earlier list named: :mod:`tests._third_pass_cases`): every bad input ends
with a clear error naming the argument (none unclear, none silent). The cases lists say what
each one tries."""

from __future__ import annotations

import pytest

from . import _second_pass_cases, _third_pass_cases

PASSES = {"issue 27": _second_pass_cases, "issue 38": _third_pass_cases}
CASES = [(f"{tag}: {case_id}", call, names, module.run_case)
         for tag, module in PASSES.items() for case_id, call, names in module.cases()]


@pytest.mark.parametrize("tag", PASSES)
def test_each_pass_has_at_least_100_cases(tag):
    ids = [c[0] for c in PASSES[tag].cases()]
    assert len(ids) >= 100
    assert len(set(ids)) == len(ids), "case ids are unique"


@pytest.mark.parametrize("case_id, call, names, run_case", CASES, ids=[c[0] for c in CASES])
def test_every_bad_input_gets_a_clear_error(case_id, call, names, run_case):
    verdict, detail = run_case(call, names)
    assert verdict == "clear", f"{case_id}: {verdict}: {detail}"
