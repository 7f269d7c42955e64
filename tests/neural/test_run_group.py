"""Several runs trained at once (:func:`train_group`) against each run trained alone.

The independent route is :func:`train` itself, one run at a time, with the same seed, data,
settings and stop rules: every run of a group must end with the same history, evaluations,
status and steps, and its trained model must compute the same function (round-off of the
batched kernels: measured on this machine's CPU, losses within 1.5e-7 relative and the
trained models' outputs within 2.2e-7 of their largest value after 12 steps; asserted at
1e-5). The models are compared by their outputs, not their parameters: a parameter whose
gradient is round-off (the key projection's bias, which softmax ignores: gradient ~1e-11)
takes AdamW's normalised steps in the direction of that round-off, so the same run alone
on 1 and on 2 threads already ends 2e-4 apart there. A spy on the stacked engine checks that
the runs were in fact stacked.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from lds_toolkit.neural import SequenceModel
from lds_toolkit.neural.tasks import associative_recall
from lds_toolkit.neural.training import _engines as engines
from lds_toolkit.neural.training import train
from lds_toolkit.neural.training.run_group import RunSpec, train_group

L = 16
COMMON = {"steps": 12, "batch_size": 4, "lr": 1e-2, "warmup": 2, "eval_every": 4}


def _model(seed: int, adaptive: bool = True, dropout: float = 0.0) -> SequenceModel:
    return SequenceModel(8, 1, "focus", layer_kwargs={"chunk_size": 4, "hyper_kernel_size": L,
                                                      "adaptive": adaptive},
                         vocab_size=30, dropout=dropout, seed=seed)


_DATA = [associative_recall(24, L, vocab_size=30, rng=k) for k in range(2)]
_EVAL = associative_recall(8, L, vocab_size=30, rng=7)


class _StopAt:
    """A callback that stops its run after step ``at`` (0-based)."""

    def __init__(self, at: int):
        self.at, self.seen = at, []

    def __call__(self, step, record):
        self.seen.append((step, record["loss"]))
        return step >= self.at


def _specs():
    """Five runs: two seeds on one data set, one on another, a callback that stops at step 5,
    a target accuracy reached at the first evaluation, a run that diverges at step 0 (a
    weight near float32's largest value makes its loss infinite), and one of another
    architecture (Focus-H: a stack of its own)."""
    blown = _model(3)
    with torch.no_grad():
        blown.encoder.weight[0].fill_(3e38)
    return [
        RunSpec(_model(0), _DATA[0], eval_data=_EVAL, overrides={"seed": 0}),
        RunSpec(_model(1), _DATA[0], eval_data=_EVAL, callback=_StopAt(5),
                overrides={"seed": 1}),
        RunSpec(_model(2), _DATA[1], eval_data=_EVAL,
                overrides={"seed": 2, "target_accuracy": 1e-6}),
        RunSpec(blown, _DATA[1], eval_data=_EVAL, overrides={"seed": 3}),
        RunSpec(_model(4, adaptive=False), _DATA[0], eval_data=_EVAL, overrides={"seed": 4}),
    ]


def _alone(spec: RunSpec):
    with pytest.warns(RuntimeWarning, match="diverged") if spec.overrides["seed"] == 3 \
            else _no_warning():
        return train(spec.model, spec.data, eval_data=spec.eval_data, callback=spec.callback,
                     **COMMON, **spec.overrides)


class _no_warning:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


@pytest.fixture
def stack_sizes(monkeypatch):
    """The sizes of the stacks the group built (a spy on StackedEngine)."""
    sizes = []
    init = engines.StackedEngine.__init__

    def spy(self, runs, cfg, device):
        sizes.append(len(runs))
        init(self, runs, cfg, device)

    monkeypatch.setattr(engines.StackedEngine, "__init__", spy)
    return sizes


def _assert_same_run(a, b, model_a, model_b):
    assert (a.status, a.steps_done) == (b.status, b.steps_done)
    for key in ("step",):
        np.testing.assert_array_equal(a.history[key], b.history[key])
        np.testing.assert_array_equal(a.evals[key], b.evals[key])
    for key in ("loss", "grad_norm", "lr"):
        np.testing.assert_allclose(b.history[key], a.history[key], rtol=1e-5)
    np.testing.assert_allclose(b.history["accuracy"], a.history["accuracy"], atol=1e-12)
    np.testing.assert_allclose(b.evals["loss"], a.evals["loss"], rtol=1e-5)
    np.testing.assert_allclose(b.evals["accuracy"], a.evals["accuracy"], atol=1e-12)
    assert a.final_eval.keys() == b.final_eval.keys()
    assert (a.divergence is None) == (b.divergence is None)
    if a.divergence is not None:
        assert (a.divergence.step, a.divergence.reason) == (b.divergence.step,
                                                             b.divergence.reason)
    if a.status != "diverged":  # (a diverged model's outputs are not finite)
        x = torch.as_tensor(_EVAL.inputs)
        with torch.no_grad():
            out_a, out_b = model_a.eval()(x), model_b.eval()(x)
        scale = float(out_a.abs().max())
        torch.testing.assert_close(out_b, out_a, rtol=0, atol=1e-5 * scale)


def test_group_gives_each_run_its_numbers_alone(stack_sizes):
    alone_specs = _specs()
    alone = [_alone(s) for s in alone_specs]
    # the runs end as the docstring of _specs says (on this data, every machine)
    assert [r.status for r in alone] == ["completed", "completed", "target_reached",
                                         "diverged", "completed"]
    assert [r.steps_done for r in alone] == [12, 6, 4, 0, 12]
    group_specs = _specs()
    with pytest.warns(RuntimeWarning, match="diverged at step 0"):
        grouped = train_group(group_specs, **COMMON)
    assert stack_sizes == [4]  # the four Focus runs in one stack, Focus-H alone
    for a, b, sa, sb in zip(alone, grouped, alone_specs, group_specs):
        _assert_same_run(a, b, sa.model, sb.model)
    # the callback saw the same records, in order
    assert [s for s, _ in group_specs[1].callback.seen] == list(range(6))
    np.testing.assert_allclose([v for _, v in group_specs[1].callback.seen],
                               [v for _, v in alone_specs[1].callback.seen], rtol=1e-5)


class _InterruptAt:
    """Raises KeyboardInterrupt once, after step ``at``."""

    def __init__(self, at: int):
        self.at, self.fired = at, False

    def __call__(self, step, record):
        if step == self.at and not self.fired:
            self.fired = True
            raise KeyboardInterrupt


def test_interrupted_group_resumes_to_the_numbers_of_runs_alone(tmp_path, stack_sizes):
    """A group interrupted after step 5 (log_every 3: steps read in threes) saves each run's
    checkpoint; a new group resumes them to the uninterrupted runs' numbers, and a run's
    checkpoint written in a group resumes under train() alone to the same numbers."""
    settings = dict(COMMON, log_every=3)
    alone_models = [_model(s) for s in (0, 1)]
    alone = [train(m, _DATA[s], eval_data=_EVAL, seed=s, **settings)
             for s, m in zip((0, 1), alone_models)]

    def specs(callback=None):
        return [RunSpec(_model(s), _DATA[s], eval_data=_EVAL, callback=callback if s else None,
                        overrides={"seed": s, "checkpoint": tmp_path / f"run{s}.pt"})
                for s in (0, 1)]

    with pytest.raises(KeyboardInterrupt):
        train_group(specs(_InterruptAt(5)), **settings)
    assert all((tmp_path / f"run{s}.pt").exists() for s in (0, 1))
    again = specs()
    resumed = train_group(again, **settings)
    assert [r.resumed_from for r in resumed] == [6, 6]
    for a, b, ma, spec in zip(alone, resumed, alone_models, again):
        _assert_same_run(a, b, ma, spec.model)
    assert stack_sizes == [2, 2]
    # run 1's checkpoint from an interrupted group, resumed by train() alone
    with pytest.raises(KeyboardInterrupt):
        train_group(specs(_InterruptAt(5)), **settings, resume=False)
    solo_model = _model(1)
    solo = train(solo_model, _DATA[1], eval_data=_EVAL, seed=1,
                 checkpoint=tmp_path / "run1.pt", **settings)
    assert solo.resumed_from == 6
    _assert_same_run(alone[1], solo, alone_models[1], solo_model)


def test_group_refuses_dropout_and_bad_arguments():
    with pytest.raises(ValueError, match="random numbers.*dropout"):
        train_group([RunSpec(_model(s, dropout=0.1), _DATA[0]) for s in (0, 1)], steps=1,
                    batch_size=4)
    with pytest.raises(TypeError, match="sequence of RunSpec"):
        train_group(RunSpec(_model(0), _DATA[0]))
    with pytest.raises(TypeError, match=r"runs\[1\] must be a RunSpec"):
        train_group([RunSpec(_model(0), _DATA[0]), (_model(1), _DATA[0])])
    shared = _model(0)
    with pytest.raises(ValueError, match="share one model"):
        train_group([RunSpec(shared, _DATA[0]), RunSpec(shared, _DATA[1])])
    with pytest.raises(ValueError, match="max_stack"):
        train_group([RunSpec(_model(0), _DATA[0])], max_stack=0)
    with pytest.raises(TypeError, match="unknown settings"):
        train_group([RunSpec(_model(0), _DATA[0])], stepz=3)


@pytest.mark.slow
def test_compiled_group_gives_the_eager_runs_numbers():
    """compile=True for a stack compiles the vmapped step (aot_eager here: dynamo and
    AOTAutograd without inductor's code generation, seconds on a CPU)."""
    alone = [train(_model(s), _DATA[0], eval_data=_EVAL, seed=s, **COMMON) for s in (0, 1)]
    grouped = train_group([RunSpec(_model(s), _DATA[0], eval_data=_EVAL, overrides={"seed": s})
                           for s in (0, 1)], compile={"backend": "aot_eager"}, **COMMON)
    for a, b in zip(alone, grouped):
        np.testing.assert_allclose(b.history["loss"], a.history["loss"], rtol=1e-5)
        np.testing.assert_allclose(b.evals["loss"], a.evals["loss"], rtol=1e-5)
