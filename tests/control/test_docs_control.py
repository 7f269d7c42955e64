"""docs/control.md: the sign-convention message quoted in section 7 is the one raised."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "control.md"


def _section(title: str) -> str:
    text = DOC.read_text()
    start = text.index(title)
    end = text.find("\n## ", start + 1)
    return text[start:] if end < 0 else text[start:end]


def test_quoted_sign_message_is_the_raised_one():
    import control

    from lds_toolkit.control import ETCSystem

    quoted = " ".join(re.search(r"fails with\n\n(.*?)\n\n", _section("## 7. Working with "
                                                                        "python-control"),
                                flags=re.S).group(1).split())
    A, B = np.array([[0.0, 1.0], [-2.0, 3.0]]), np.array([[0.0], [1.0]])
    K_lqr = control.lqr(A, B, np.eye(2), np.eye(1))[0]
    with pytest.raises(ValueError) as info:
        ETCSystem(A, B, K_lqr)
    assert str(info.value) == quoted
