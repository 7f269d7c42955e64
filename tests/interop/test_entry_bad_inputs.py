"""Bad inputs at the river and python-control entry points (issue 37): each of the cases in
``_entry_cases`` is a clear error naming the argument (what was expected, what came) or
correct behaviour. The list is data so that it can also count another version's answers
(clear / unclear / silent)."""

from __future__ import annotations

import re
import warnings

import pytest

from ._entry_cases import CASES, Raises

pytest.importorskip("river")  # the river twins' cases


def test_there_are_at_least_100_cases_with_distinct_ids():
    ids = [c.id for c in CASES]
    assert len(ids) == len(set(ids)) and len(ids) >= 100


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_entry_point_answers_clearly_or_correctly(case):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # filter-precision notes of tiny horizons
        if isinstance(case.expect, Raises):
            with pytest.raises(case.expect.exc) as info:
                case.call()
            assert re.search(case.expect.pattern, str(info.value)), str(info.value)
        else:
            result = case.call()
            assert case.expect.check(result), (case.expect.what, result)
