"""A check's result and a lesson's count: :class:`CheckResult`, :func:`report`,
:func:`summarize`, :func:`run_checks` (re-exported by :mod:`lds_toolkit.teaching.check`)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["STATUSES", "CheckResult", "Summary", "is_stub", "report", "run_checks",
           "summarize"]

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


def check_verbose(verbose: Any) -> bool:
    """A check's ``verbose``: True or False (a string such as ``"no"`` is truthy)."""
    if not isinstance(verbose, bool) and type(verbose).__name__ != "bool_":
        raise TypeError(f"verbose must be True or False, got {type(verbose).__name__} "
                        f"{verbose!r:.80}")
    return bool(verbose)


def report(name: str, status: str, text: str, verbose: bool = True,
           details: Mapping[str, Any] | None = None) -> CheckResult:
    """A check's result from its parts, for lesson checks that compare in their own way.

    ``status`` is ``"pass"``, ``"todo"`` or ``"wrong"``; the message reads
    ``"pass: NAME — TEXT"`` or ``"not yet: NAME — TEXT"`` and is printed when ``verbose``.
    """
    if status not in STATUSES:
        raise ValueError(f"status must be one of {STATUSES}, got {status!r}")
    check_verbose(verbose)
    if not isinstance(name, str):
        raise TypeError(f"name must be a str (what the exercise computes), got "
                        f"{type(name).__name__} {name!r:.80}")
    prefix = "pass" if status == "pass" else "not yet"
    message = f"{prefix}: {name} — {text}"
    if verbose:
        print(message)
    return CheckResult(name, status, message, dict(details or {}), printed=verbose)


def _todo(name: str, verbose: bool, what: str = "the answer is still a stub (None or ...)"
          ) -> CheckResult:
    return report(name, "todo", f"{what}; write it and run this cell again", verbose)


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
    unknown = sorted(set(answers) - set(checks))
    if unknown:  # a misspelt answer name would be graded as a stub without a word
        raise ValueError(f"answers has no check named {', '.join(map(repr, unknown))}; the "
                         f"lesson's answers are {', '.join(map(repr, checks))}")
    check_verbose(verbose)
    results = []
    for key, check in checks.items():
        res = check(answers.get(key), verbose=False)
        if verbose and not res.passed:
            print(res.message)
        results.append(res)
    out = summarize(results, verbose=verbose)
    out["messages"] = {r.name: r.message for r in results}
    return out
