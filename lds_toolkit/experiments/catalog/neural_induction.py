r"""``induction-heads``: STU length generalization on induction heads (length-generalization
paper, Sec. 4.2, Fig. 5).

Task (:func:`lds_toolkit.neural.tasks.induction_heads`): blank filler, a flag followed by one
of 4 tokens, and a final flag at which the model must name that token. Model as the paper
(after Liu et al. 2024): embedding, two tensordot-STU blocks with ReLU MLPs, output projection;
STU filters of length T = 256, no autoregressive terms. We use the top 20 eigenvectors of H_T,
not 24: at T = 256 the eigenvalues 21-24 lie below the float64 resolvable floor, so those
filters would be round-off that differs between machines (FACTS.md).

For each training length T^q the model is trained "until convergence" (Adam(W) with warm-up;
training stops once the held-out accuracy at the training length reaches ``target_accuracy``
or after ``max_steps``) and evaluated at every length of ``eval_lengths`` up to T. Seeds are
kept apart: the paper reports bimodal outcomes (a model generalises fully or not at all), so
the figure shows every seed, not only the mean.

``summary.json`` keys: ``accuracy[train_length][eval_length]`` (mean over seeds),
``accuracy_seeds[train_length][eval_length]`` (one value per seed), ``steps`` (steps each run
trained for).
"""

from __future__ import annotations

import numpy as np

from ...neural import SequenceModel
from ...neural.tasks import induction_heads
from ...neural.training import evaluate, train
from ..base import register
from ..plotting import figure, save_figure
from .neural_common import (
    NeuralExperiment,
    require_defined_scale,
    spread,
    task_device,
    task_threads,
    torch_seed,
    training_record,
)


def build_model(config: dict, seed: int) -> SequenceModel:
    return SequenceModel(
        config["d_model"], 2, "stu",
        layer_kwargs={"seq_len": config["T"], "num_filters": config["num_filters"],
                      "form": "tensordot"},
        vocab_size=config["vocab_size"] + 2, d_output=config["vocab_size"],
        activation="relu", mlp_ratio=config["mlp_ratio"], seed=seed)


@register
class InductionHeads(NeuralExperiment):
    name = "induction-heads"
    description = "STU trained on induction heads at length T^q, evaluated up to T"
    paper = "length generalization Sec. 4.2 / Fig. 5"

    def config(self, scale, seeds):
        require_defined_scale(self.name, scale)
        quick = scale == "quick"
        qs = [0.5, 0.75] if quick else [0.5, 0.625, 0.75, 0.875]
        cfg = {"T": 256, "q_values": qs,
               "eval_lengths": [16, 32, 64, 128, 256],
               "vocab_size": 4, "d_model": 32 if quick else 64, "num_filters": 20,
               "mlp_ratio": 2.0, "n_train": 4096, "n_eval": 512,
               "max_steps": 1500 if quick else 20000, "batch_size": 32, "lr": 3e-3,
               "warmup": 50, "weight_decay": 0.0, "eval_every": 50,
               "target_accuracy": 0.995, "seeds": 5 if quick else 10}
        if seeds is not None:
            cfg["seeds"] = seeds
        return cfg

    def derive(self, config):
        config["train_lengths"] = [int(round(config["T"] ** q)) for q in config["q_values"]]
        return config

    def tasks(self, config):
        return [{"seed_index": s, "train_length": n} for s in range(config["seeds"])
                for n in config["train_lengths"]]

    def run_task(self, config, task, rng):
        n = task["train_length"]
        v = config["vocab_size"]
        train_set = induction_heads(config["n_train"], n, vocab_size=v, rng=rng)
        held_out = induction_heads(config["n_eval"], n, vocab_size=v, rng=rng)
        evals = {m: induction_heads(config["n_eval"], m, vocab_size=v, rng=rng)
                 for m in config["eval_lengths"]}
        seed = torch_seed(rng)
        with task_threads(1):
            model = build_model(config, seed)
            res = train(model, train_set, eval_data=held_out, steps=config["max_steps"],
                        batch_size=config["batch_size"], lr=config["lr"],
                        warmup=config["warmup"], weight_decay=config["weight_decay"],
                        eval_every=config["eval_every"],
                        target_accuracy=config["target_accuracy"], seed=seed,
                        device=task_device())
            acc = {str(m): float("nan") if res.diverged else  # divergence is recorded
                   evaluate(model, d, batch_size=128)["accuracy"] for m, d in evals.items()}
        return {"accuracy": acc, "eval_steps": res.evals["step"],
                "eval_accuracy": res.evals["accuracy"], **training_record(res)}

    def summarize(self, config, tasks, results):
        acc, acc_seeds, steps, status = {}, {}, {}, {}
        for n in config["train_lengths"]:
            rs = [r for t, r in zip(tasks, results) if t["train_length"] == n]
            acc_seeds[str(n)] = {str(m): [r["accuracy"][str(m)] for r in rs]
                                 for m in config["eval_lengths"]}
            acc[str(n)] = {m: spread(v)["mean"] for m, v in acc_seeds[str(n)].items()}
            steps[str(n)] = [r["steps_done"] for r in rs]
            status[str(n)] = [r["status"] for r in rs]
        summary = {"accuracy": acc, "accuracy_seeds": acc_seeds, "steps": steps,
                   "status": status, "T": config["T"]}
        grid = np.array([[acc_seeds[str(n)][str(m)] for m in config["eval_lengths"]]
                         for n in config["train_lengths"]])  # (train, eval, seed)
        return summary, {"accuracy": grid, "train_lengths": np.array(config["train_lengths"]),
                         "eval_lengths": np.array(config["eval_lengths"])}

    def plot(self, config, summary, arrays, outdir):
        fig, ax = figure(1, 1, width=6.0, height=3.6)
        evl = arrays["eval_lengths"]
        colors = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd"]
        for i, n in enumerate(arrays["train_lengths"]):
            c = colors[i % len(colors)]
            seeds = arrays["accuracy"][i]  # (eval, seed)
            ax.plot(evl, seeds.mean(axis=1), color=c, lw=1.6, marker="o",
                    label=f"trained at {n} (mean)")
            for s in range(seeds.shape[1]):
                jitter = 1 + 0.03 * (s - seeds.shape[1] / 2)
                ax.scatter(evl * jitter, seeds[:, s], color=c, s=9, alpha=0.6)
            ax.axvline(n, color=c, ls=":", lw=0.8)
        ax.set_xscale("log", base=2)
        ax.set_ylim(0, 1.05)
        ax.axhline(1 / config["vocab_size"], color="0.5", lw=0.8, ls="--", label="chance")
        ax.set_xlabel("evaluation length")
        ax.set_ylabel("accuracy (line: mean; dots: seeds)")
        ax.set_title(f"STU on induction heads, filters of length T = {config['T']}")
        ax.legend(loc="lower left")
        return save_figure(fig, outdir, "induction_heads")
