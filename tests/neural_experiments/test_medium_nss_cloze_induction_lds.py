"""Medium-scale runs of nss-s4, cloze, induction-heads and lds-streams (slow: about 13 minutes
on 2 idle cores with ``--jobs 2``).

``LDS_TOOLKIT_MEDIUM_OUT=DIR`` reuses the outputs of ``lds-toolkit reproduce NAME --scale medium
--out DIR``: the result store loads every finished task, so only missing tasks are computed.
The tests assert the claims declared for the medium scale and what a medium run must record:
every model trained from scratch, its steps and whether its held-out curve flattened.
"""

from __future__ import annotations

import os

import pytest

from ..claims import assert_claims
from .medium import run_medium, summary

pytestmark = pytest.mark.slow
NAMES = ("nss-s4", "cloze", "induction-heads", "lds-streams")


@pytest.fixture(scope="module")
def medium_out(tmp_path_factory):
    out = os.environ.get("LDS_TOOLKIT_MEDIUM_OUT") or tmp_path_factory.mktemp("medium")
    return run_medium(NAMES, out)


# nss-s4 declares no claim at any scale (each note gives the measured cause): nothing to assert
@pytest.mark.parametrize("name", ("cloze", "induction-heads"))
def test_claims_declared_for_the_medium_scale_hold(medium_out, name):
    assert assert_claims(name, summary(medium_out, name), "medium") >= 1


@pytest.mark.parametrize("name", ("nss-s4", "cloze", "lds-streams"))
def test_every_model_records_its_steps_and_plateau(medium_out, name):
    s = summary(medium_out, name)
    cfg = s["config"]
    for m, rec in s["training"].items():
        assert len(rec["steps"]) == cfg["seeds"] * (len(cfg["regions"]) if "regions" in cfg
                                                    else 1), m
        assert all(isinstance(f, bool) for f in rec["plateaued"]), m
        assert all(0 < st <= cfg["steps"] if "steps" in cfg else st > 0
                   for st in rec["steps"]), m


def test_induction_heads_medium_evaluates_up_to_16x_at_two_lengths(medium_out):
    s = summary(medium_out, "induction-heads")
    assert len(s["config"]["train_lengths"]) == 2
    for n in s["config"]["train_lengths"]:
        assert list(s["accuracy_by_factor"][str(n)]) == ["1", "2", "4", "8", "16"]
        assert len(s["accuracy_by_factor_seeds"][str(n)]["16"]) == s["config"]["seeds"]
        assert all(isinstance(f, bool) for f in s["plateaued"][str(n)])
