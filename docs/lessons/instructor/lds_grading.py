"""The autograder's hidden tests: one hidden case of one exercise, graded with the lesson's check.

Shipped inside every lesson's autograder archive (``docs/_site/lessons.py``), beside that
lesson's answer key ``lds_keyNN.py``; each hidden test of the archive is one call of
:func:`grade` (one case: partial credit case by case) and asserts that it passes.

How a case is graded, in this order:

* a choice question (``case is None``): the lesson's check of the answer;
* a lesson check that takes ``cases=`` and ``time_limit=`` (lesson 1's pattern): that check on
  the hidden case, with its hints and its own independent route to the expected value;
* otherwise :func:`lds_toolkit.teaching.check_function` comparing the student's function
  with the key's reference solution on the case, with the key's ``COMPARE[name]``
  (``(compare, options)``: ``"array"``, ``"scalar"`` or ``"equal"`` and their tolerances;
  ``options`` may name ``substitutes``: ``{global name: answer name}`` of an earlier
  exercise whose reference solution stands in for the student's during the call).

Every call of the student's function runs on deep copies with the key's ``TIME_LIMIT``.
"""

from __future__ import annotations

import inspect
from typing import Any


def grade(lesson, key, name: str, index: int, answer: Any):
    """Grade hidden case ``index`` of exercise ``name``: a ``CheckResult``."""
    from lds_toolkit.teaching import check_array, check_equal, check_function, check_scalar

    points, case = key.HIDDEN[name][index]
    check = lesson.CHECKS[name]
    if case is None:
        return check(answer, verbose=False)
    limit = getattr(key, "TIME_LIMIT", 5.0)
    if "cases" in inspect.signature(check).parameters:
        return check(answer, cases=[case], time_limit=limit, verbose=False)
    compare, options = getattr(key, "COMPARE", {}).get(name, ("array", {}))
    options = dict(options)
    subs = options.pop("substitutes", None)
    if subs:
        options["substitutes"] = {glob: (key.SOLUTIONS[ans], f"exercise {label}")
                                  for glob, (ans, label) in subs.items()}
    compare_fn = {"array": check_array, "scalar": check_scalar, "equal": check_equal}[compare]
    return check_function(name, answer, key.SOLUTIONS[name], [case], compare=compare_fn,
                          time_limit=limit, verbose=False, **options)


def score(lesson, key, answers: dict[str, Any]) -> dict[str, float]:
    """Points per exercise of a namespace of answers over every hidden case (what the
    archive's tests add up to; the grading rehearsal compares the two)."""
    out = {}
    for name, cases in key.HIDDEN.items():
        out[name] = sum(points for i, (points, _) in enumerate(cases)
                        if grade(lesson, key, name, i, answers.get(name)).passed)
    return out
