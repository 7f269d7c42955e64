"""Assert an experiment's declared paper claims on one of its summaries.

The thresholds live in the experiment's ``claims`` (lds_toolkit.experiments.claims); tests
never restate them. A claim is asserted only at the scales it is declared for.
"""

from __future__ import annotations

from lds_toolkit.experiments import get_experiment
from lds_toolkit.experiments.claims import HOLDS, evaluate_claim


def claims_at(name: str, scale: str) -> list:
    """The claims of experiment ``name`` declared to hold at ``scale``."""
    return [c for c in get_experiment(name).claims if scale in c.scales]


def assert_claims(name: str, summary: dict, scale: str) -> int:
    """Every claim of ``name`` declared for ``scale`` holds on ``summary``; returns how many
    were checked (so a caller can insist there was something to check)."""
    assert summary["config"]["scale"] == scale
    failures = []
    claims = claims_at(name, scale)
    for claim in claims:
        res = evaluate_claim(claim, summary)
        if res.verdict != HOLDS:
            failures.append(f"{claim.id} ({claim.where}: {claim.statement}): "
                            f"{claim.quantity} = {res.value} does not satisfy "
                            f"{claim.describe_test()} [{res.verdict}] {res.message}")
    assert not failures, f"{name} at {scale} scale:\n" + "\n".join(failures)
    return len(claims)
