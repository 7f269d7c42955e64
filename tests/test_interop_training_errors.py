"""Issue 46: every bad input of the classes ``report --compare``/``report``, interop, training
and the experiment API gets a clear error (:mod:`tests._interop_training_cases`), and the
training setting that trains but not as its value says is kept in the result."""

from __future__ import annotations

import numpy as np
import pytest

from ._interop_training_cases import cases, run_case

CASES = cases()


def test_the_listed_cases_have_unique_ids():
    assert len({c[0] for c in CASES}) == len(CASES)


@pytest.mark.parametrize("case_id, call, names", CASES, ids=[c[0] for c in CASES])
def test_every_listed_case_gets_a_clear_error(case_id, call, names, tmp_path):
    verdict, detail = run_case(call, names, tmp_path)
    assert verdict == "clear", f"{case_id}: {verdict}: {detail}"


def test_a_warmup_longer_than_the_run_is_kept_in_the_result():
    """Not a plain "completed": the result's notes say the learning rate never reached lr,
    with the fraction the schedule (t + 1) / warmup gives at the last step."""
    torch = pytest.importorskip("torch")
    from lds_toolkit.neural import SequenceModel, train
    from lds_toolkit.neural.tasks import SequenceTask
    from lds_toolkit.neural.training._call_checks import TrainSettingWarning

    x = np.random.default_rng(0).standard_normal((4, 8, 1))
    mask = np.ones((4, 8), bool)
    data = SequenceTask(x, np.cumsum(x, axis=1), mask, mask.copy(), name="cumsum")
    torch.manual_seed(0)
    with pytest.warns(TrainSettingWarning):
        res = train(SequenceModel(4, 1, "s4d", d_input=1, d_output=1, seed=0), data, steps=3,
                    warmup=300, lr=1e-2)
    assert res.status == "completed"
    [note] = res.notes
    assert "warmup=300 is longer than the run (steps=3)" in note and "0.01 of it" in note
    assert res.history["lr"][-1] == pytest.approx(1e-2 * 3 / 300)
    assert "notes=" in repr(res)
    plain = train(SequenceModel(4, 1, "s4d", d_input=1, d_output=1, seed=0), data, steps=3,
                  warmup=2, lr=1e-2)
    assert plain.notes == [] and "notes=" not in repr(plain)
