"""Interpretation questions: multiple choice, auto-checked, with no answer in the clear.

Every lesson ends its exercises with an *interpretation question*: what a result means, not
how to compute it. A :class:`ChoiceQuestion` holds the question, its choices, a hint for each
wrong choice and a time estimate; the right choice is stored only as a digest,
``sha256("<key>:<choice>")`` (:func:`choice_digest`), so the installed package does not
print the answer (a student can still try every letter: the check is there to teach, the
autograder's hidden tests are there to grade).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .calling import guarded
from .results import CheckResult, _todo, is_stub, report

__all__ = ["ChoiceQuestion", "choice_digest"]


def choice_digest(key: str, choice: str) -> str:
    """``sha256("<key>:<choice>")`` in hex: how a question stores its right choice."""
    return hashlib.sha256(f"{key}:{choice}".encode()).hexdigest()


@dataclass(frozen=True)
class ChoiceQuestion:
    """A multiple-choice interpretation question.

    Attributes
    ----------
    key : str
        Its identity, ``"lessonNN.interpretation"`` (salts the digest).
    question : str
        The question, as the lesson asks it.
    choices : mapping of str to str
        Letter -> the choice's text.
    digest : str
        :func:`choice_digest` of ``key`` and the right letter.
    hints : mapping of str to str
        Letter -> why that choice is not right (every wrong letter has one).
    minutes : int
        The time estimate.
    """

    key: str
    question: str
    choices: Mapping[str, str]
    digest: str
    hints: Mapping[str, str] = field(default_factory=dict)
    minutes: int = 5

    def __post_init__(self) -> None:
        right = [c for c in self.choices if choice_digest(self.key, c) == self.digest]
        if len(right) != 1:
            raise ValueError(f"{self.key}: the digest matches {len(right)} of the choices "
                             f"{sorted(self.choices)}; it must match exactly one")
        missing = sorted(set(self.choices) - set(right) - set(self.hints))
        if missing:
            raise ValueError(f"{self.key}: wrong choice(s) {missing} have no hint")

    def check(self, answer: Any, *, verbose: bool = True) -> CheckResult:
        """``pass`` for the right letter; "not yet" with that choice's hint otherwise."""
        name = "interpretation"
        if is_stub(answer):
            return _todo(name, verbose)
        letter, err = guarded(lambda: str(answer).strip().lower().strip("()."))
        if err is not None or letter not in self.choices:
            return report(name, "wrong", f"answer with one of the letters "
                          f"{', '.join(map(repr, self.choices))} (a string), got "
                          f"{type(answer).__name__}", verbose)
        if choice_digest(self.key, letter) == self.digest:
            return report(name, "pass", f"({letter}) is right", verbose)
        return report(name, "wrong", f"({letter}) is not it: {self.hints[letter]}", verbose)
