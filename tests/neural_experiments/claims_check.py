"""Assert an experiment's declared claims on one of its runs (shared by the claim tests)."""

from __future__ import annotations

from lds_toolkit.experiments import get_experiment
from lds_toolkit.experiments.claims import HOLDS, evaluate_claim


def assert_declared_claims_hold(name: str, summary: dict) -> list:
    """Every claim of experiment ``name`` declared for the scale of ``summary`` holds.

    Returns the claims checked (a claim not declared for that scale is reported by
    ``lds-toolkit report`` but not asserted).
    """
    scale = summary["config"]["scale"]
    checked = []
    for claim in get_experiment(name).claims:
        if scale not in claim.scales:
            continue
        res = evaluate_claim(claim, summary)
        assert res.verdict == HOLDS, (f"{name}: claim {claim.id!r} ({claim.statement}) "
                                      f"{res.verdict} at {scale} scale: {claim.quantity} = "
                                      f"{res.value!r}, expected {claim.describe_test()} "
                                      f"{res.message}")
        checked.append(claim.id)
    return checked
