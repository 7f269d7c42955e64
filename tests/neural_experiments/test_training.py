"""The training loop: learning, masks, schedule, reproducibility, resume, divergence."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from torch import nn

from lds_toolkit.neural.tasks import SequenceTask, induction_heads, listops
from lds_toolkit.neural.training import (
    Plateau,
    TrainConfig,
    TrainingDivergedError,
    batch_indices,
    bucketed_batch_indices,
    evaluate,
    lr_factor,
    predict,
    train,
)

pytestmark = pytest.mark.usefixtures("one_torch_thread")


class TinyRNN(nn.Module):
    """Embedding -> GRU -> linear head: a small causal token model for the loop's tests."""

    def __init__(self, vocab, n_classes, width=16, seed=0):
        super().__init__()
        g = torch.Generator().manual_seed(seed)
        self.emb = nn.Embedding(vocab, width)
        self.rnn = nn.GRU(width, width, batch_first=True)
        self.head = nn.Linear(width, n_classes)
        with torch.no_grad():
            for p in self.parameters():
                p.copy_(0.3 * torch.randn(p.shape, generator=g))

    def forward(self, x):
        return self.head(self.rnn(self.emb(x))[0])


def _regression_task(n=64, length=8, seed=0):
    """targets = inputs @ W at masked positions, garbage (1e6) elsewhere."""
    rng = np.random.default_rng(seed)
    z = rng.standard_normal((n, length, 3))
    w = np.array([[1.0, -2.0], [0.5, 0.0], [0.0, 3.0]])
    y = z @ w
    mask = rng.random((n, length)) < 0.5
    y[~mask] = 1e6
    return SequenceTask(z, y, mask, mask.copy(), name="linear"), w


def test_loop_learns_a_linear_map_and_ignores_unmasked_positions():
    data, w = _regression_task()
    torch.manual_seed(0)
    model = nn.Linear(3, 2)
    res = train(model, data, steps=400, batch_size=16, lr=0.05, warmup=10, grad_clip=None,
                eval_data=data, divergence_factor=None)
    assert res.status == "completed" and res.steps_done == 400
    np.testing.assert_allclose(model.weight.detach().numpy().T, w, atol=1e-3)
    assert res.final_eval["loss"] < 1e-6
    assert res.history["loss"][0] > 1.0
    assert math.isnan(res.final_eval["accuracy"])
    out = predict(model, data)
    np.testing.assert_allclose(out[data.mask], data.targets[data.mask], atol=1e-2)


def test_evaluate_accuracy_matches_a_direct_count():
    data = induction_heads(40, 10, rng=1)
    model = TinyRNN(data.vocab_size, data.n_classes)
    logits = predict(model, data)
    direct = np.mean(logits[:, -1].argmax(-1) == data.info["answer"])
    lp = torch.log_softmax(torch.as_tensor(logits[:, -1]), -1).numpy()
    ce = -np.mean(lp[np.arange(40), data.info["answer"]])
    res = evaluate(model, data, batch_size=7)
    assert res["accuracy"] == pytest.approx(direct, abs=0)
    assert res["loss"] == pytest.approx(ce, rel=1e-5)


def test_batches_cover_each_epoch_once_and_depend_only_on_seed_and_step():
    n, b = 10, 4
    epoch0 = np.concatenate([batch_indices(n, b, 3, s) for s in range(3)])
    assert sorted(epoch0) == list(range(n))
    assert [len(batch_indices(n, b, 3, s)) for s in range(3)] == [4, 4, 2]
    np.testing.assert_array_equal(batch_indices(n, b, 3, 4), batch_indices(n, b, 3, 4))
    assert not np.array_equal(batch_indices(n, b, 3, 3), batch_indices(n, b, 3, 0))


def test_lr_schedule_warmup_then_cosine():
    cfg = TrainConfig(steps=110, warmup=10, schedule="cosine", min_lr_ratio=0.1)
    f = [lr_factor(s, cfg) for s in range(110)]
    np.testing.assert_allclose(f[:10], np.arange(1, 11) / 10)
    assert f[10] == pytest.approx(1.0) and f[-1] == pytest.approx(0.1)
    assert np.all(np.diff(f[10:]) <= 1e-12)
    data, _ = _regression_task()
    res = train(nn.Linear(3, 2), data, cfg, steps=110, lr=0.01)
    np.testing.assert_allclose(res.history["lr"], 0.01 * np.array(f))


def _token_run(**kw):
    data = induction_heads(48, 12, rng=5)
    model = TinyRNN(data.vocab_size, data.n_classes, seed=2)
    res = train(model, data, steps=24, batch_size=8, lr=3e-3, warmup=4, seed=11,
                eval_data=data, eval_every=8, **kw)
    return model, res


def test_same_seed_same_loss_curve_and_another_seed_another():
    _, a = _token_run()
    _, b = _token_run()
    for key in ("loss", "grad_norm", "accuracy"):
        np.testing.assert_array_equal(a.history[key], b.history[key])
    np.testing.assert_array_equal(a.evals["loss"], b.evals["loss"])
    data = induction_heads(48, 12, rng=5)
    other = train(TinyRNN(data.vocab_size, data.n_classes, seed=2), data, steps=24,
                  batch_size=8, lr=3e-3, warmup=4, seed=12)
    assert not np.array_equal(a.history["loss"], other.history["loss"])


def test_resumed_run_equals_an_uninterrupted_run(tmp_path):
    ref_model, ref = _token_run()
    ckpt = tmp_path / "run.pt"

    def interrupt(step, record):
        if step == 13:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        _token_run(checkpoint=ckpt, checkpoint_every=5, callback=interrupt)
    assert ckpt.exists()
    model, res = _token_run(checkpoint=ckpt, checkpoint_every=5)
    assert res.resumed_from == 14 and res.steps_done == 24
    for key in ("loss", "grad_norm", "lr", "step"):
        np.testing.assert_array_equal(res.history[key], ref.history[key])
    np.testing.assert_array_equal(res.evals["loss"], ref.evals["loss"])
    for p, q in zip(model.parameters(), ref_model.parameters()):
        assert torch.equal(p, q)
    # a checkpoint from other settings is refused, not silently mixed in
    data = induction_heads(48, 12, rng=5)
    with pytest.raises(ValueError, match="different training settings"):
        train(TinyRNN(data.vocab_size, data.n_classes), data, steps=24, batch_size=8, lr=1e-2,
              warmup=4, seed=11, checkpoint=ckpt)


def _sabotage_at(step_to_break, how):
    data, _ = _regression_task()
    torch.manual_seed(0)
    model = nn.Linear(3, 2)
    snapshot = {}

    def cb(step, record):
        if step == step_to_break:
            with torch.no_grad():
                if how == "nan":
                    model.weight[0, 0] = float("nan")
                else:
                    model.weight.mul_(1e4)
            snapshot["w"] = model.weight.detach().clone()

    return model, data, cb, snapshot


@pytest.mark.parametrize("how, reason", [("nan", "non-finite loss"), ("blowup", "loss blew up")])
def test_divergence_stops_before_the_bad_update_and_names_the_step(how, reason):
    model, data, cb, snap = _sabotage_at(6, how)
    with pytest.warns(RuntimeWarning, match=f"diverged at step 7: {reason}"):
        res = train(model, data, steps=50, batch_size=16, lr=1e-3, callback=cb)
    assert res.status == "diverged" and res.diverged and res.steps_done == 7
    assert res.divergence.step == 7 and reason in res.divergence.reason
    assert len(res.history["loss"]) == 7 and np.all(np.isfinite(res.history["loss"]))
    # the offending update was not applied
    assert torch.allclose(model.weight.detach(), snap["w"], rtol=0, atol=0, equal_nan=True)


def test_with_log_every_a_divergence_is_found_at_the_next_reading_and_named_where_it_was():
    """Steps are read every 5 (steps 4, 9, 14, ...), and the callback of each step runs at
    the reading: the callback of step 6 (at step 9's reading) makes the weights NaN, so step
    10's loss is NaN. It is found when step 14 is read; the report names step 10, the
    history ends before it, and the updates of steps 10-13 were applied (step 14's not)."""
    model, data, cb, _ = _sabotage_at(6, "nan")
    with pytest.warns(RuntimeWarning, match=r"diverged at step 10: non-finite loss .*found "
                                             r"when step 14 was read .*steps 10-13 were "
                                             r"applied"):
        res = train(model, data, steps=50, batch_size=16, lr=1e-3, callback=cb, log_every=5)
    assert res.divergence.step == 10 and res.divergence.found_at == 14
    assert res.steps_done == 14 and len(res.history["loss"]) == 10


def test_divergence_can_raise():
    model, data, cb, _ = _sabotage_at(2, "nan")
    with pytest.raises(TrainingDivergedError, match="step 3") as info:
        train(model, data, steps=10, batch_size=16, callback=cb, on_divergence="raise")
    assert info.value.report.step == 3


def test_target_accuracy_stops_early():
    data = induction_heads(64, 6, vocab_size=2, rng=0)
    model = TinyRNN(data.vocab_size, data.n_classes, width=24)
    res = train(model, data, steps=600, batch_size=32, lr=1e-2, eval_data=data, eval_every=10,
                target_accuracy=1.0)
    assert res.status == "target_reached" and res.steps_done < 600
    assert res.final_eval["accuracy"] == 1.0


def test_plateau_rule_by_hand():
    rule = Plateau(window=2, min_delta=0.1)  # loss: relative
    assert not rule.reached([1.0, 0.8])  # not enough evaluations
    assert not rule.reached([1.0, 0.8, 0.7])  # 0.7 <= 0.9 * 1.0: still improving
    assert rule.reached([1.0, 0.5, 0.48, 0.47])  # 0.47 > 0.9 * 0.5: flat
    assert not rule.reached([1.0, 0.5, 0.48, 0.40])  # 0.40 <= 0.45
    assert rule.reached([1.0, 0.5, 0.6, float("nan")])  # NaN is no improvement
    acc = Plateau(window=3, min_delta=0.05, metric="accuracy")  # accuracy: absolute
    assert not acc.reached([0.1, 0.2, 0.3, 0.36])
    assert acc.reached([0.1, 0.5, 0.52, 0.54, 0.53])
    assert acc.first([0.1, 0.2, 0.3, 0.31, 0.32, 0.33, 0.9]) == 5
    assert acc.first([0.1, 0.2, 0.3]) is None
    stall = [2.0, 2.0, 2.0, 2.0, 2.0, 1.0, 0.5, 0.5, 0.5]
    assert Plateau(window=2, min_delta=0.1).first(stall) == 2
    assert Plateau(window=2, min_delta=0.1, min_evals=6).first([2.0] * 9) == 5
    # a stall at the start is no plateau: the loss must first fall by min_gain
    assert Plateau(window=2, min_delta=0.1, min_gain=0.1).first(stall) == 8
    assert Plateau(window=2, min_delta=0.1, min_gain=0.1).first([2.0] * 20) is None
    assert Plateau(window=2, min_delta=0.05, metric="accuracy", min_gain=0.2).first(
        [0.1, 0.1, 0.1, 0.5, 0.5, 0.5]) == 5
    with pytest.raises(ValueError, match="min_gain"):
        Plateau(min_gain=-0.1)
    with pytest.raises(ValueError, match="metric"):
        Plateau(metric="f1")
    with pytest.raises(ValueError, match="min_delta"):
        Plateau(min_delta=1.5)


def test_noise_aware_plateau_does_not_stop_a_noisy_curve_that_is_still_improving():
    """A held-out loss falling 5 % per window under evaluation noise larger than that fall
    (sigma 0.08 against 0.1 per 5 evaluations): the best-of-window rule stops most of these
    runs on a lucky earlier evaluation; the noise-aware rule of the neural experiments
    (window means, improvement below the tolerance by z = 3 of its measured standard errors)
    stops at most 2 % of them (one check per evaluation, ~35 checks per run) while they
    improve, and does stop once the curve is flat and the noise resolves it."""
    from lds_toolkit.experiments.catalog._neural_common import PLATEAU

    rng = np.random.default_rng(0)
    best_of = Plateau(window=5, min_delta=0.02, min_evals=8, min_gain=0.1)
    noise_aware = Plateau(**PLATEAU)
    assert noise_aware == Plateau(window=5, min_delta=0.02, min_evals=8, min_gain=0.1,
                                  confidence=3.0)
    n_runs, early_best, early_noise = 200, 0, 0
    for _ in range(n_runs):
        t = np.arange(45)
        curve = 3.0 - 0.02 * t + rng.normal(0.0, 0.08, t.size)  # still falling at the end
        early_best += best_of.first(curve) is not None
        early_noise += noise_aware.first(curve) is not None
    assert early_best >= 0.5 * n_runs
    assert early_noise <= 0.02 * n_runs
    # measured noise: the residual scatter about the local trend, close to the true 0.08
    sigma = [noise_aware.noise(3.0 - 0.02 * np.arange(10) + rng.normal(0, 0.08, 10))
             for _ in range(400)]
    assert 0.07 < np.sqrt(np.mean(np.square(sigma))) < 0.09
    # flat after the fall, with a small noise: the rule fires within two windows
    flat = np.r_[3.0 - 0.1 * np.arange(12), np.full(30, 1.9)] + rng.normal(0, 0.005, 42)
    first = noise_aware.first(flat)
    assert first is not None and 12 <= first <= 12 + 2 * 5
    # the same flat tail under large noise cannot be resolved: no plateau is declared
    assert noise_aware.first(np.r_[flat[:12], 1.9 + rng.normal(0, 0.2, 30)]) is None
    acc = Plateau(window=4, min_delta=0.01, metric="accuracy", confidence=3.0)
    assert acc.first([0.2, 0.5, 0.9, 0.99] + [1.0] * 8) is not None
    assert acc.first([0.1 + 0.03 * i for i in range(20)]) is None  # rising 3 points per eval
    with pytest.raises(ValueError, match="confidence"):
        Plateau(confidence=-1.0)


def test_training_stops_when_the_held_out_curve_is_flat():
    data = induction_heads(64, 6, vocab_size=2, rng=0)
    model = TinyRNN(data.vocab_size, data.n_classes, width=24)
    rule = Plateau(window=3, min_delta=0.05)
    res = train(model, data, steps=2000, batch_size=32, lr=1e-2, eval_data=data, eval_every=10,
                plateau=rule)
    assert res.status == "plateaued" and res.steps_done < 2000
    losses = list(res.evals["loss"])
    assert rule.reached(losses) and rule.first(losses) == len(losses) - 1  # stopped at once
    # the same run without the rule goes on
    model2 = TinyRNN(data.vocab_size, data.n_classes, width=24)
    res2 = train(model2, data, steps=res.steps_done + 20, batch_size=32, lr=1e-2,
                 eval_data=data, eval_every=10)
    assert res2.status == "completed"
    np.testing.assert_array_equal(res2.evals["loss"][: len(losses)], losses)
    with pytest.raises(TypeError, match="plateau must be a Plateau"):
        train(model, data, steps=2, plateau=5)


def test_bucketed_batches_cover_each_epoch_once_with_similar_lengths():
    rng = np.random.default_rng(0)
    lengths = rng.integers(10, 1000, size=103)
    per_epoch = -(-103 // 8)
    for epoch in range(2):
        batches = [bucketed_batch_indices(lengths, 8, 4, 5, epoch * per_epoch + j)
                   for j in range(per_epoch)]
        assert sorted(np.concatenate(batches).tolist()) == list(range(103))
        spread_b = np.mean([np.ptp(lengths[b]) for b in batches])
        spread_r = np.mean([np.ptp(lengths[batch_indices(103, 8, 5, epoch * per_epoch + j)])
                            for j in range(per_epoch)])
        assert spread_b < 0.5 * spread_r  # bucketed batches hold similar lengths
    again = bucketed_batch_indices(lengths, 8, 4, 5, 3)
    assert np.array_equal(again, bucketed_batch_indices(lengths, 8, 4, 5, 3))


def test_crop_and_bucket_leave_a_causal_models_numbers_unchanged():
    """Cropping each batch after its last scored position changes nothing for a causal model
    (same losses, same evaluation); bucketing changes only which sequences share a batch."""
    data = listops(96, min_length=8, max_length=40, rng=0)
    assert (data.info["lengths"] < 40).any()  # there is padding to skip
    runs = {}
    for crop in (False, True):
        model = TinyRNN(data.vocab_size, data.n_classes, width=16)
        res = train(model, data, steps=20, batch_size=16, lr=1e-2, eval_data=data,
                    eval_every=10, crop=crop)
        runs[crop] = (res, evaluate(model, data, batch_size=16, crop=crop))
    np.testing.assert_allclose(runs[True][0].history["loss"], runs[False][0].history["loss"],
                               rtol=1e-5)
    np.testing.assert_allclose(runs[True][0].evals["loss"], runs[False][0].evals["loss"],
                               rtol=1e-5)
    assert runs[True][1]["accuracy"] == runs[False][1]["accuracy"]
    assert runs[True][1]["loss"] == pytest.approx(runs[False][1]["loss"], rel=1e-5)
    model = TinyRNN(data.vocab_size, data.n_classes, width=16)
    res = train(model, data, steps=12, batch_size=16, lr=1e-2, crop=True, bucket=2)
    assert res.status == "completed" and np.isfinite(res.history["loss"]).all()


def test_a_length_multiple_rounds_the_cut_and_leaves_a_causal_models_numbers():
    """Cropped batches cut at a multiple of 16 tokens (the shapes a compiled model meets:
    3 lengths instead of one per batch) score the same positions: the same losses up to
    round-off."""
    data = listops(96, min_length=8, max_length=40, rng=0)
    runs = {}
    for multiple in (1, 16):
        model = TinyRNN(data.vocab_size, data.n_classes, width=16)
        runs[multiple] = train(model, data, steps=12, batch_size=16, lr=1e-2, crop=True,
                               bucket=2, length_multiple=multiple).history["loss"]
    np.testing.assert_allclose(runs[16], runs[1], rtol=1e-5)


def test_tf32_on_a_cpu_is_float32_and_no_setting_is_left_changed():
    data, _ = _regression_task()
    before = torch.get_float32_matmul_precision()
    res = {}
    for precision in ("fp32", "tf32"):
        torch.manual_seed(0)
        res[precision] = train(nn.Linear(3, 2), data, steps=5, batch_size=16,
                               precision=precision).history["loss"]
    np.testing.assert_array_equal(res["tf32"], res["fp32"])
    assert torch.get_float32_matmul_precision() == before
    assert not torch.is_autocast_enabled("cpu")


def test_bad_settings_are_named():
    data, _ = _regression_task()
    with pytest.raises(TypeError, match="unknown settings.*'stpes'"):
        train(nn.Linear(3, 2), data, stpes=3)
    with pytest.raises(ValueError, match="TrainConfig.lr"):
        train(nn.Linear(3, 2), data, lr=-1.0)
    with pytest.raises(ValueError, match="model output must have shape"):
        train(nn.Linear(3, 5), data, steps=1)
    with pytest.raises(TypeError, match="data must be a SequenceTask"):
        train(nn.Linear(3, 2), np.zeros((2, 3)))


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_training_runs_on_cuda_and_starts_from_the_cpu_loss():
    data = induction_heads(64, 12, rng=5)
    cpu = train(TinyRNN(data.vocab_size, data.n_classes, seed=2), data, steps=3, batch_size=16,
                seed=1)
    gpu_model = TinyRNN(data.vocab_size, data.n_classes, seed=2)
    gpu = train(gpu_model, data, steps=3, batch_size=16, seed=1, device="cuda")
    assert next(gpu_model.parameters()).is_cuda
    assert gpu.history["loss"][0] == pytest.approx(cpu.history["loss"][0], rel=1e-4)
    assert np.all(np.isfinite(gpu.history["loss"]))


def test_result_prints_in_one_short_line():
    data, _ = _regression_task()
    res = train(nn.Linear(3, 2), data, steps=20, batch_size=16, lr=0.01)
    text = repr(res)
    assert text.startswith("TrainResult(") and "\n" not in text and len(text) < 200, text
    assert "steps_done=20" in text and f"last_loss={res.history['loss'][-1]:.6g}" in text
