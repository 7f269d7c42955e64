r"""``cloze``: the S4++ paper's toy (Sec. 3.2, eq. 17, Table 1) — why an SSM needs attention.

Sequences of length 100 are zero except u_12, u_94 ~ U[1, 2]; the target at position 63 is
u_12² + u_94² (:func:`lds_toolkit.neural.tasks.cloze`). 200 samples, split 8:2, three
one-layer models trained for 100 epochs (paper scale: the paper's budget; quick scale: 60
epochs at twice the learning rate; cosine decay) or until the loss on ``n_validation`` fresh
samples (neither training nor test set) has flattened (medium scale: the config's
``plateau``, constant learning rate after warm-up, at most ``epochs``), test MSE over seeds:

* ``attention`` — f_φ: bidirectional softmax self-attention (one head, no positional encoding);
* ``s4`` — f_θ: a causal S4 layer (it cannot see u_94 from position 63);
* ``s4+attention`` — f_{φ,θ} = f_θ + f_φ with f_φ the cross attention of eq. 16,
  ``softmax((W_q u)(W_k y)ᵀ / sqrt(d)) W_v u`` whose keys come from the S4 output y
  (:mod:`._cloze_layers`).

Each model is one residual block (layer, then a position-wise MLP) between a linear encoder of
the scalar input and a linear head, without normalisation (a LayerNorm across channels of a
lifted scalar would divide its value out). Identical data and initial seeds for the three
models of a seed (common random numbers). Keys of ``summary.json``: ``mse[model]`` (mean test
MSE over seeds), ``mse_seeds[model]``, ``mse_spread[model]``, ``solved_seeds[model]`` (seeds
with test MSE < 0.1), ``combination_ratio`` (the sum's MSE over the better single model's),
``causal_floor`` (the test MSE of the best causal predictor u_12² + E[u_94²]) and
``causal_floor_ratio[model]``, ``baseline_mse`` (predicting the training mean) for scale, and
``training[model]`` (steps, plateaued, status per seed).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from ..base import register
from ..claims import Claim
from ..plotting import figure, save_figure
from ..scales import by_scale
from ._config_ranges import (
    F64,
    TRAINING_RANGES,
    Int,
    Real,
    activations,
    model_names,
)
from ._neural_common import (
    PLATEAU,
    TRAINING_DEFAULTS,
    NeuralExperiment,
    by_model,
    divergences,
    over_seeds,
    plateau_rule,
    spread,
    stack_ragged,
    step_progress,
    task_device,
    task_threads,
    torch_seed,
    train_in_task,
    training_record,
)

if TYPE_CHECKING:  # pragma: no cover - torch is imported where a model is trained
    from torch import nn

MODELS = ("attention", "s4", "s4+attention")
COLORS = {"attention": "#ff7f0e", "s4": "#1f77b4", "s4+attention": "#2ca02c"}
#: The models by the cost of a training step, costliest first (measured on one core, quick
#: scale: ~20, ~14 and ~8 ms)
BY_COST = ("s4+attention", "s4", "attention")


def build_model(name: str, config: dict, seed: int) -> nn.Module:
    """The one-block model ``name`` (attention, s4 or s4+attention, the last one
    :class:`~lds_toolkit.experiments.catalog._cloze_layers.S4WithCrossAttention`)."""
    from ...neural import S4, SelfAttention, SequenceModel
    from ._cloze_layers import S4WithCrossAttention

    d, n = config["d_model"], config["d_state"]
    layers = {
        "attention": lambda dm: SelfAttention(dm, n_heads=1, causal=False),
        "s4": lambda dm: S4(dm, n),
        "s4+attention": lambda dm: S4WithCrossAttention(dm, n),
    }
    return SequenceModel(d, 1, layers[name], d_input=1, d_output=1, norm="none",
                         mlp_ratio=config["mlp_ratio"], seed=seed)


@register
class Cloze(NeuralExperiment):
    name = "cloze"
    description = "S4++ cloze toy: attention vs S4 vs their sum on y_63 = u_12^2 + u_94^2"
    paper = "S4++ Sec. 3.2 / Table 1"

    claims = (
        Claim("s4-fails", "S4++", "Table 1",
              "a causal S4 alone cannot solve the cloze task (paper: MSE 0.67): its test MSE "
              "stays at the causal floor (ratio >= 0.8 on every seed)",
              "causal_floor_ratio_seeds/s4", ">=", 0.8, spread="causal_floor_ratio_seeds/s4",
              note="A causal model cannot see u_94 from position 63; the best it can do is "
                   "u_12^2 + E[u_94^2], whose MSE on a test set is the mean of "
                   "(u_94^2 - 7/3)^2 (0.756 in expectation, 0.5-0.95 on 40 samples). The "
                   "ratio of a model's test MSE to that floor is ~1 for a causal model and "
                   "~0.01 for a solved task."),
        Claim("attention-fails", "S4++", "Table 1",
              "attention alone fails on the cloze task (paper: MSE 1.19), on every seed",
              "mse_seeds/attention", ">=", 0.5, scales=(), spread="mse_seeds/attention",
              note="Bidirectional attention without positional encoding can solve it: the "
                   "only non-zero inputs are u_12 and u_94 and the output at 63 is a "
                   "symmetric function of them, which the target is. Measured: it solves the "
                   "task (test MSE < 0.1) on some seeds and stays at or near the mean "
                   "predictor on the others (summary.json solved_seeds/attention; the counts "
                   "per scale are on docs/experiments/cloze.md)."),
        Claim("sum-solves", "S4++", "Table 1",
              "attention + S4 solves the cloze task (paper: MSE 0.02): test MSE <= 0.05 on "
              "the median seed and on at least 3 of 4 seeds",
              "mse_seeds/s4+attention", "<=", 0.05, per_seed=True, min_share=0.75,
              note="judged per seed, not on the mean of the quick scale's 2 seeds, which one "
                   "seed still at the causal floor decides (0.182 on another machine, where "
                   "base seed 0 was mid-jump when 40 epochs ended)"),
        Claim("sum-beats-both", "S4++", "Table 1",
              "attention + S4 is at least 10x better than the better single model "
              "(paper: 0.02 against 0.67, 34x)",
              "combination_ratio", "<=", 0.1, scales=("medium", "paper"),
              note="a ratio of means over seeds: attention alone solves the task on about "
                   "half of the seeds (6 of 10 at paper scale), so with the quick scale's 2 "
                   "seeds it can solve both (base seed 2 on another machine: ratio 0.466) "
                   "and the ratio measures the draw, not the models; declared where 8 "
                   "(medium) and 10 (paper) seeds make both attention seeds solving "
                   "unlikely"),
    )

    # what each config entry may hold, checked before any task (experiments/config/ranges.py)
    ranges = {**TRAINING_RANGES, "n_samples": Int(2, 10**7),
              "train_fraction": Real(0.0, 1.0, low_open=True, high_open=True),
              "length": Int(95, 10**7), "epochs": Int(1, 10**6), "d_model": Int(1, 2**16),
              "d_state": Int(1, 2**16), "models": model_names(*MODELS)}

    def largest_array(self, config):
        n, L, b = config["n_samples"], config["length"], config["batch_size"]
        width = config["d_model"] * max(config["mlp_ratio"], 1.0)
        return max((F64 * n * L, f"the ({n}, {L}) sequences"), activations(max(b, 64), L, width),
                   (8.0 * config["d_model"] * config["d_state"] * L,
                    f"the ({config['d_model']}, {config['d_state']}, {L}) SSM kernel terms"))

    def config(self, scale, seeds):
        # quick: 60 of the paper's 100 epochs at twice the learning rate, 2 seeds. The sum
        # model sits at the causal floor, then jumps to a solution; the budget must let every
        # seed finish its jump. Over 40 epochs (cosine) base seed 0 was mid-jump at step ~325
        # of 400 on another machine (MSE 0.35): its verdict depended on the machine. Over 60
        # epochs the jump (20-step mean training loss below 0.3 x the floor) came at steps
        # 82-297 of 600 on base seeds 0-9 (20 runs) and every run solved (test MSE
        # 0.0007-0.022). Not the plateau rule: the held-out MSE keeps falling after the jump
        # (at medium the sum plateaued on 1 of 8 seeds within 5000 steps), so it would train
        # to its budget, and the stall at the floor before the jump would count as a plateau
        # once the first evaluation lies above the floor.
        cfg = {"n_samples": 200, "train_fraction": 0.8, "length": 100,
               "epochs": by_scale(scale, quick=60, medium=500, paper=100),
               "schedule": by_scale(scale, quick="cosine", medium="constant", paper="cosine"),
               "n_validation": by_scale(scale, quick=0, medium=200, paper=0),
               "eval_every": by_scale(scale, quick=0, medium=50, paper=0),
               "plateau": by_scale(scale, quick=None, medium=PLATEAU, paper=None),
               "batch_size": 16, "lr": by_scale(scale, quick=4e-3, medium=2e-3, paper=2e-3),
               "warmup": 50, "weight_decay": 0.0,
               "d_model": 32, "d_state": 64, "mlp_ratio": 2.0,
               "seeds": by_scale(scale, quick=2, medium=8, paper=10), "models": list(MODELS)}
        cfg.update(TRAINING_DEFAULTS)
        if seeds is not None:
            cfg["seeds"] = seeds
        return cfg

    def tasks(self, config):
        # the costliest model's runs first: the workers take tasks in this order, so the
        # cheap runs fill the gaps at the end (a task's stream depends on its seed index
        # only, so the order changes no number)
        models = sorted(config["models"], key=BY_COST.index)
        return [{"seed_index": s, "model": m} for m in models for s in range(config["seeds"])]

    def run_task(self, config, task, rng):
        from ...neural.tasks import cloze
        from ...neural.training import evaluate, predict

        data = cloze(config["n_samples"], length=config["length"], rng=rng)
        train_set, test_set = data.split(config["train_fraction"])
        # held-out curve (medium): fresh samples, neither the training nor the test set
        validation = (cloze(config["n_validation"], length=config["length"], rng=rng)
                      if config["n_validation"] else None)
        seed = torch_seed(rng)
        steps = config["epochs"] * math.ceil(len(train_set) / config["batch_size"])
        with task_threads(1):
            model = build_model(task["model"], config, seed)
            res = train_in_task(model, train_set, config, eval_data=validation, steps=steps,
                                batch_size=config["batch_size"], lr=config["lr"],
                                warmup=config["warmup"], schedule=config["schedule"],
                                weight_decay=config["weight_decay"],
                                eval_every=config["eval_every"] if validation is not None else 0,
                                plateau=plateau_rule(config), seed=seed, device=task_device(),
                                callback=step_progress(steps))
            if res.diverged:  # a diverged model is not evaluated (divergence is recorded)
                nan = {"loss": float("nan")}
                test, train_fit, pred = nan, nan, np.full(len(test_set), np.nan)
            else:
                test = evaluate(model, test_set)
                train_fit = evaluate(model, train_set)
                pred = predict(model, test_set)[:, 63, 0]
        # the best causal prediction is u_12^2 + E[u_94^2] (E[u^2] = 7/3 for u ~ U[1, 2])
        causal_floor = float(np.mean((test_set.inputs[:, 94, 0] ** 2 - 7 / 3) ** 2))
        mean_target = float(train_set.targets[:, 63, 0].mean())
        baseline = float(np.mean((test_set.targets[:, 63, 0] - mean_target) ** 2))
        return {"test_mse": test["loss"], "train_mse": train_fit["loss"],
                "causal_floor": causal_floor,
                "baseline_mse": baseline, "prediction": pred,
                "target": test_set.targets[:, 63, 0], "eval_steps": res.evals["step"],
                "eval_loss": res.evals["loss"], **training_record(res)}

    def summarize(self, config, tasks, results):
        models = config["models"]
        by = by_model(config, tasks, results)
        mse = {m: spread([r["test_mse"] for r in by[m]])["mean"] for m in models}
        summary = {
            **over_seeds("mse", {m: [r["test_mse"] for r in by[m]] for m in models}),
            **over_seeds("causal_floor_ratio", {m: [r["test_mse"] / r["causal_floor"]
                                                    for r in by[m]] for m in models}),
            "causal_floor": spread([r["causal_floor"] for r in by[models[0]]])["mean"],
            "train_mse": {m: spread([r["train_mse"] for r in by[m]])["mean"] for m in models},
            "baseline_mse": spread([r["baseline_mse"] for r in by[models[0]]])["mean"],
            "solved_seeds": {m: int(sum(r["test_mse"] < 0.1 for r in by[m])) for m in models},
            "diverged": divergences(by),
            "training": {m: {"steps": [r["steps_done"] for r in by[m]],
                             "plateaued": [r["plateaued"] for r in by[m]],
                             "status": [r["status"] for r in by[m]]} for m in models},
            "paper_mse": {"attention": 1.19, "s4": 0.67, "s4+attention": 0.02},
        }
        singles = [m for m in ("attention", "s4") if m in models]
        if "s4+attention" in models and singles:
            summary["combination_ratio"] = mse["s4+attention"] / min(mse[m] for m in singles)
        arrays = {}
        for m in models:
            arrays[f"loss_curve/{m}"] = stack_ragged([r["loss_curve"] for r in by[m]])
            arrays[f"eval_steps/{m}"] = stack_ragged([r["eval_steps"] for r in by[m]])
            arrays[f"eval_loss/{m}"] = stack_ragged([r["eval_loss"] for r in by[m]])
            arrays[f"prediction/{m}"] = np.stack([r["prediction"] for r in by[m]])
            arrays[f"target/{m}"] = np.stack([r["target"] for r in by[m]])
        return summary, arrays

    def plot(self, config, summary, arrays, outdir):
        models = config["models"]
        fig, (ax0, ax1, ax2) = figure(1, 3, width=11.0, height=3.4)
        for i, m in enumerate(models):
            vals = summary["mse_seeds"][m]
            ax0.bar(i, summary["mse"][m], color=COLORS[m], alpha=0.6)
            ax0.scatter(np.full(len(vals), i), vals, color="k", s=8, zorder=3)
            ax0.scatter([i + 0.3], [summary["paper_mse"][m]], marker="x", color="r", zorder=3,
                        label="paper" if i == 0 else None)
        ax0.axhline(summary["baseline_mse"], color="0.5", ls=":", lw=1, label="predict mean")
        ax0.axhline(summary["causal_floor"], color="#1f77b4", ls="--", lw=0.8,
                    label="causal floor")
        ax0.set_xticks(range(len(models)), models)
        ax0.set_yscale("log")
        ax0.set_ylabel("test MSE (bars: mean; dots: seeds)")
        ax0.set_title("cloze: y_63 = u_12² + u_94²")
        ax0.legend()
        for m in models:
            curves = arrays[f"loss_curve/{m}"]
            ax1.plot(np.nanmedian(curves, axis=0), color=COLORS[m], label=m, lw=1.2)
            st, ev = arrays[f"eval_steps/{m}"], arrays[f"eval_loss/{m}"]
            for i in range(st.shape[0]):
                ax1.plot(st[i], ev[i], color=COLORS[m], lw=0.7, ls="--", alpha=0.7,
                         label="held-out (every seed)" if i == 0 and m == models[0] else None)
        ax1.set_yscale("log")
        ax1.set_xlabel("step")
        ax1.set_ylabel("training loss (median over seeds)")
        ax1.legend()
        for m in models:
            ax2.scatter(arrays[f"target/{m}"][0], arrays[f"prediction/{m}"][0], s=8,
                        color=COLORS[m], label=m)
        lo, hi = 2.0, 8.0
        ax2.plot([lo, hi], [lo, hi], color="0.5", lw=0.8)
        ax2.set_xlabel("target u_12² + u_94² (test set, first seed)")
        ax2.set_ylabel("prediction")
        ax2.legend()
        return save_figure(fig, outdir, "cloze")
