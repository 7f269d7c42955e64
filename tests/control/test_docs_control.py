"""docs/control.md sections 7 and 8: the analysis example runs as written and gives the
numbers the page states; the sign-convention message quoted there is the one raised."""

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


def test_analysis_example_runs_and_gives_the_stated_numbers():
    blocks = re.findall(r"```python\n(.*?)```", _section("## 8. Analyses of an LDS"), flags=re.S)
    assert len(blocks) == 1
    ns: dict = {}
    exec(compile(blocks[0], str(DOC), "exec"), ns)  # noqa: S102 - our own docs
    emap, mem, cert, stats = ns["emap"], ns["mem"], ns["cert"], ns["stats"]
    assert emap.labels.tolist() == ["B", "A-left", "A-left", "A-left", "outside"]
    np.testing.assert_allclose(emap.modulus, [0.9999, 0.999, 0.95, 0.95, 0.5], rtol=1e-12)
    assert emap.theorem_condition is False
    assert (mem.length, round(mem.single_mode_length, 1)) == (32611, 34537.0)
    assert round(cert.rho, 6) == 0.999982 and round(cert.spectral_radius, 10) == 0.9999
    assert cert.proves_stability
    tight = ns["discrete_certificate"](ns["sysd"], rate=0.99991)
    assert round(tight.rho, 6) == 0.999908 and f"{tight.condition:.1e}" == "2.2e+05"
    assert stats.n_events == 508
    assert (round(stats.min, 3), round(stats.median, 3), round(stats.max, 3)) == (
        0.161, 0.270, 0.949)


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
