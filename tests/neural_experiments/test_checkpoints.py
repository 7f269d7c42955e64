"""Checkpoints: nothing in them can run code, a diverged run keeps the last good one, and a
diverged model is not silently used."""

from __future__ import annotations

import json
import os
import pickle

import numpy as np
import pytest
import torch
from torch import nn

from lds_toolkit.neural import SequenceModel
from lds_toolkit.neural.tasks import SequenceTask, sine_fit
from lds_toolkit.neural.training import (
    CheckpointError,
    CheckpointWarning,
    TrainConfig,
    batch_indices,
    diverged_checkpoint_path,
    evaluate,
    predict,
    train,
)

pytestmark = pytest.mark.usefixtures("one_torch_thread")

N, SEED, OUTLIER_STEP = 20, 3, 12


def _task_with_an_outlier():
    """Linear regression; the sequence drawn at step OUTLIER_STEP (batch size 1) has targets
    1000x too large, so its loss exceeds 100x the first loss: divergence at that step."""
    rng = np.random.default_rng(0)
    z = rng.standard_normal((N, 6, 2))
    y = z @ np.array([[1.0], [-1.0]])
    outlier = int(batch_indices(N, 1, SEED, OUTLIER_STEP)[0])
    y[outlier] *= 1000.0
    mask = np.ones((N, 6), bool)
    return SequenceTask(z, y, mask, mask.copy(), name="outlier")


def _model():
    torch.manual_seed(0)
    return nn.Linear(2, 1)


def _meta(path):
    return json.loads(torch.load(path, weights_only=True)["meta"])


def test_a_diverged_run_keeps_the_last_good_checkpoint_intact_and_resumable(tmp_path):
    ckpt = tmp_path / "run.pt"
    saved = {}

    def remember(step, record):
        if step + 1 == 10:  # the checkpoint of step 10 has just been written
            saved["bytes"] = ckpt.read_bytes()

    model = _model()
    with pytest.warns(RuntimeWarning, match=f"diverged at step {OUTLIER_STEP}"):
        res = train(model, _task_with_an_outlier(), steps=30, batch_size=1, lr=1e-2,
                    seed=SEED, checkpoint=ckpt, checkpoint_every=5, callback=remember)
    assert res.diverged and res.divergence.step == OUTLIER_STEP
    assert ckpt.read_bytes() == saved["bytes"], "the last good checkpoint was not touched"
    assert _meta(ckpt)["step"] == 10
    diverged = diverged_checkpoint_path(ckpt)
    assert diverged.name == "run.diverged.pt" and _meta(diverged)["step"] == OUTLIER_STEP
    # resumable: continue from step 10 to step 12 (just before the outlier)
    resumed_model = _model()
    again = train(resumed_model, _task_with_an_outlier(), steps=OUTLIER_STEP, batch_size=1,
                  lr=1e-2, seed=SEED, checkpoint=ckpt, checkpoint_every=5)
    assert again.resumed_from == 10 and again.status == "completed"
    assert again.steps_done == OUTLIER_STEP
    np.testing.assert_array_equal(again.history["loss"], res.history["loss"][:OUTLIER_STEP])
    for p, q in zip(resumed_model.parameters(), model.parameters()):
        assert torch.equal(p, q)


class _Payload:
    def __init__(self, marker):
        self.marker = str(marker)

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


@pytest.mark.filterwarnings("ignore:Detected pickle protocol")
@pytest.mark.parametrize("how", ["torch.save", "pickle"])
def test_a_malicious_checkpoint_is_refused_without_running_it(tmp_path, how):
    marker = tmp_path / "pwned"
    ckpt = tmp_path / "run.pt"
    payload = {"model": _Payload(marker), "meta": "{}"}
    if how == "torch.save":
        torch.save(payload, ckpt)
    else:
        ckpt.write_bytes(pickle.dumps(payload))
    with pytest.raises(CheckpointError, match=r"cannot be loaded safely .* delete it or pass "
                                              r"resume=False"):
        train(_model(), _task_with_an_outlier(), steps=3, batch_size=1, checkpoint=ckpt)
    assert not marker.exists()


@pytest.mark.parametrize("damage, match", [
    (lambda p: p.write_bytes(p.read_bytes()[:200]), "cannot be loaded safely"),
    (lambda p: p.write_bytes(b""), "cannot be loaded safely"),
    (lambda p: torch.save({"model": {}, "step": 3}, p), "not a checkpoint of this version"),
])
def test_a_corrupted_or_foreign_checkpoint_is_refused(tmp_path, damage, match):
    ckpt = tmp_path / "run.pt"
    train(_model(), _task_with_an_outlier(), steps=4, batch_size=1, seed=SEED, checkpoint=ckpt)
    damage(ckpt)
    with pytest.raises(CheckpointError, match=match):
        train(_model(), _task_with_an_outlier(), steps=6, batch_size=1, seed=SEED,
              checkpoint=ckpt)


def _flip_a_parameter_byte(path):
    """Change one byte inside the stored weight's data: torch.load reads such a file without
    complaint (it checks no checksum), so only the checkpoint's digest can notice."""
    data = bytearray(path.read_bytes())
    weight = torch.load(path, weights_only=True)["model"]["weight"]
    raw = weight.numpy().tobytes()
    i = bytes(data).index(raw) + 2
    data[i] ^= 0x40
    path.write_bytes(bytes(data))
    assert not torch.equal(torch.load(path, weights_only=True)["model"]["weight"], weight)


def test_a_checkpoint_with_one_altered_byte_is_refused_as_corrupted(tmp_path):
    ckpt = tmp_path / "run.pt"
    train(_model(), _task_with_an_outlier(), steps=4, batch_size=1, seed=SEED, checkpoint=ckpt)
    _flip_a_parameter_byte(ckpt)
    with pytest.raises(CheckpointError, match="is corrupted .*does not match the digest"):
        train(_model(), _task_with_an_outlier(), steps=6, batch_size=1, seed=SEED,
              checkpoint=ckpt)


def test_a_stale_or_corrupt_checkpoint_can_be_set_aside_and_training_restarts(tmp_path):
    """bad_checkpoint="restart" (what the experiment runner uses): a checkpoint tagged for
    another task or code version, or a corrupted one, is refused with a warning, and the
    run is exactly a fresh one (model, optimizer and RNG as if no file had been there)."""
    data = _task_with_an_outlier()
    ckpt = tmp_path / "run.pt"
    fresh_model = _model()
    fresh = train(fresh_model, data, steps=8, batch_size=1, seed=SEED)
    train(_model(), data, steps=4, batch_size=1, seed=SEED, checkpoint=ckpt,
          checkpoint_tag="task-a@v1")
    with pytest.raises(CheckpointError, match=r"is stale: it was written for 'task-a@v1', "
                                              r"this run is 'task-a@v2'"):
        train(_model(), data, steps=8, batch_size=1, seed=SEED, checkpoint=ckpt,
              checkpoint_tag="task-a@v2")
    for damage in ("stale", "corrupt"):
        if damage == "corrupt":
            train(_model(), data, steps=4, batch_size=1, seed=SEED, checkpoint=ckpt,
                  checkpoint_tag="task-a@v2", resume=False)
            _flip_a_parameter_byte(ckpt)
        model = _model()
        with pytest.warns(CheckpointWarning, match="training restarts from step 0"):
            res = train(model, data, steps=8, batch_size=1, seed=SEED, checkpoint=ckpt,
                        checkpoint_tag="task-a@v2", bad_checkpoint="restart")
        assert res.resumed_from is None
        np.testing.assert_array_equal(res.history["loss"], fresh.history["loss"])
        for p, q in zip(model.parameters(), fresh_model.parameters()):
            assert torch.equal(p, q)
        assert _meta(ckpt)["tag"] == "task-a@v2" and _meta(ckpt)["step"] == 8


def test_a_checkpoint_holds_no_pickled_objects(tmp_path):
    ckpt = tmp_path / "run.pt"
    train(_model(), _task_with_an_outlier(), steps=4, batch_size=1, seed=SEED, checkpoint=ckpt)
    state = torch.load(ckpt, weights_only=True)  # would raise on any non-tensor object
    meta = json.loads(state["meta"])
    assert meta["step"] == 4 and meta["format"] == "lds_toolkit-checkpoint/2"
    assert state["history"]["step"].dtype == torch.int64
    assert not list(tmp_path.glob(".*.tmp"))


def test_a_model_with_non_finite_parameters_is_refused_by_predict_and_evaluate():
    data = _task_with_an_outlier()
    model = _model()
    with torch.no_grad():
        model.weight[0, 1] = float("nan")
    for fn in (predict, evaluate):
        with pytest.raises(ValueError, match=r"parameter 'weight' holds NaN or inf"):
            fn(model, data)


def test_at_lr_1e30_predict_says_so_instead_of_returning_nan():
    data = sine_fit(40)
    model = SequenceModel(8, 2, "s4", d_input=1, d_output=1, seed=0)
    with pytest.warns(RuntimeWarning, match="diverged at step 1: non-finite loss"):
        res = train(model, data, steps=20, lr=1e30, batch_size=1)
    assert res.diverged
    with pytest.raises(FloatingPointError, match=r"predict: the model's output is not finite "
                                                 r"at sequence 0, position 0"):
        predict(model, data)


def test_non_finite_training_data_is_refused_up_front():
    data = _task_with_an_outlier()
    data.inputs[4, 2, 1] = np.inf
    with pytest.raises(ValueError, match=r"data.inputs must contain only finite values; "
                                         r"entry \(4, 2, 1\) is inf"):
        train(_model(), data, steps=2)


@pytest.mark.parametrize("field, value, err, match", [
    ("lr", True, TypeError, "TrainConfig.lr must be a real number, got bool True"),
    ("lr", float("inf"), ValueError, "TrainConfig.lr must be finite, got inf"),
    ("lr", 0.0, ValueError, r"TrainConfig.lr must lie in \(0, inf\), got 0"),
    ("weight_decay", True, TypeError, "TrainConfig.weight_decay must be a real number"),
    ("weight_decay", float("inf"), ValueError, "TrainConfig.weight_decay must be finite"),
    ("min_lr_ratio", True, TypeError, "TrainConfig.min_lr_ratio must be a real number"),
    ("grad_clip", True, TypeError, "TrainConfig.grad_clip must be a real number"),
    ("grad_clip", float("inf"), ValueError, "TrainConfig.grad_clip must be finite"),
    ("divergence_factor", float("inf"), ValueError, "TrainConfig.divergence_factor must be"),
    ("betas", (True, 0.5), TypeError, r"TrainConfig.betas\[0\] must be a real number"),
    ("betas", "ab", TypeError, "TrainConfig.betas must be two numbers"),
    ("betas", (0.9, 1.0), ValueError, r"TrainConfig.betas\[1\] must lie in \[0, 1\)"),
    ("device", 3, TypeError, "TrainConfig.device must be a string"),
    ("checkpoint", 3, TypeError, "TrainConfig.checkpoint must be a path or None"),
    ("resume", 1, TypeError, "TrainConfig.resume must be True or False"),
    ("precision", "fp16", ValueError, r"TrainConfig.precision must be one of \('fp32', "
                                      r"'tf32', 'bf16'\), got 'fp16'"),
    ("compile", "yes", TypeError, "TrainConfig.compile must be True, False or a dict"),
    ("compile", {"mode": "default", "cache": 1}, ValueError,
     r"TrainConfig.compile: unknown torch.compile arguments \['cache'\]"),
    ("log_every", 0, ValueError, "TrainConfig.log_every"),
    ("length_multiple", 0, ValueError, "TrainConfig.length_multiple"),
    ("checkpoint_seconds", -1.0, ValueError, "TrainConfig.checkpoint_seconds"),
    ("bad_checkpoint", "ignore", ValueError, "TrainConfig.bad_checkpoint must be one of"),
    ("checkpoint_tag", 3, TypeError, "TrainConfig.checkpoint_tag must be a string or None"),
])
def test_train_config_refuses_invalid_values(field, value, err, match):
    with pytest.raises(err, match=match):
        TrainConfig(**{field: value})
