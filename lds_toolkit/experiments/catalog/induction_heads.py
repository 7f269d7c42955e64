r"""``induction-heads``: STU length generalization on induction heads (length-generalization
paper, Sec. 4.2, Fig. 5).

Task (:func:`lds_toolkit.neural.tasks.induction_heads`): blank filler, a flag followed by one
of 4 tokens, and a final flag at which the model must name that token. Model as the paper
(after Liu et al. 2024): embedding, two tensordot-STU blocks with ReLU MLPs, output projection;
STU filters of length T, no autoregressive terms. We use the top 20 eigenvectors of H_T, not
24: at T = 256 the eigenvalues 21-24 lie below the float64 resolvable floor, so those filters
would be round-off that differs between machines (FACTS.md).

Each training length n of ``train_lengths`` gets a model trained from scratch "until
convergence" and evaluated at ``n · f`` for every factor f of ``eval_factors`` up to T
(1×, 2×, 4×, 8×, 16×). When training stops:

* quick and paper scale: once the held-out accuracy at the training length reaches
  ``target_accuracy`` (or after ``max_steps``);
* medium scale: once the held-out curve has flattened (the config's ``plateau``, see
  :class:`~lds_toolkit.neural.training.Plateau`) — on the held-out **accuracy**: a solved task
  drives the cross-entropy down geometrically for ever (measured: it halves every ~250 steps
  from 1e-4 on, with the accuracy at 100 %), so a relative loss rule would never fire.

Every ``probe_every`` steps the model is also evaluated at every evaluation length on
``n_probe`` fresh sequences, so the figure shows whether generalization was still changing
when training stopped. Seeds are kept apart: the paper reports bimodal outcomes (a model
generalises fully or not at all), so the figure shows every seed, not only the mean.

Why a model fails at a longer length is measured, not guessed: the test accuracy is split by
the **recall distance** d = L - 1 - p (from the first flag at p to the final flag), into
distances the training length contained (d <= n - 1) and longer ones.

``summary.json`` keys: ``accuracy[n][m]`` (mean over seeds at evaluation length m),
``accuracy_seeds[n][m]``, ``accuracy_by_factor[n][f]`` (and ``_seeds``),
``best_seed_at_longest[n]``, ``accuracy_by_distance[n][m]`` (``within`` / ``beyond`` the
training distances), ``steps``, ``plateaued``, ``status``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..base import register
from ..claims import Claim
from ..plotting import figure, save_figure
from ..scales import by_scale
from ._config_ranges import F64, TRAINING_RANGES, Int, ListOf, Relation, activations, tokens
from ._neural_common import (
    TRAINING_DEFAULTS,
    NeuralExperiment,
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
    from ...neural import SequenceModel

#: the medium scale's plateau: held-out accuracy flat (within 1 point) for 10 evaluations
ACCURACY_PLATEAU = {"window": 10, "min_delta": 0.01, "metric": "accuracy"}


def build_model(config: dict, seed: int) -> SequenceModel:
    from ...neural import SequenceModel

    return SequenceModel(
        config["d_model"], 2, "stu",
        layer_kwargs={"seq_len": config["T"], "num_filters": config["num_filters"],
                      "form": "tensordot"},
        vocab_size=config["vocab_size"] + 2, d_output=config["vocab_size"],
        activation="relu", mlp_ratio=config["mlp_ratio"], seed=seed)


def eval_lengths(config: dict, n: int) -> list[int]:
    """``n · f`` for the factors f of ``eval_factors``, up to the filter length T."""
    return [n * f for f in config["eval_factors"] if n * f <= config["T"]]


def recall_accuracy(model, data, n_train: int) -> tuple[float, dict]:
    """Accuracy of ``model`` on ``data`` (the share of sequences whose last output names the
    recalled token: what :func:`~lds_toolkit.neural.training.evaluate` scores on the
    last-position mask), and the same split by the recall distance d = L - 1 - p: ``within``
    (d <= n_train - 1, distances a training sequence of length n_train holds) and ``beyond``
    (longer), with the counts; NaN for an empty group. One forward pass over ``data``."""
    from ...neural.training import predict

    pred = predict(model, data, batch_size=128)[:, -1].argmax(-1)
    correct = pred == data.info["answer"]
    d = data.targets.shape[1] - 1 - data.info["trigger_position"]
    out = {}
    for key, sel in (("within", d <= n_train - 1), ("beyond", d > n_train - 1)):
        out[key] = float(correct[sel].mean()) if sel.any() else float("nan")
        out[f"n_{key}"] = int(sel.sum())
    return float(correct.mean()), out


class Probe:
    """Training callback: every ``every`` steps, the accuracy at each evaluation length on a
    fixed probe set (``accuracy[m]`` lists, ``steps``)."""

    def __init__(self, model, probes: dict, every: int):
        self.model, self.probes, self.every = model, probes, every
        self.steps: list[int] = []
        self.accuracy: dict = {m: [] for m in probes}

    def __call__(self, step, record):
        from ...neural.training import evaluate

        if self.every and (step + 1) % self.every == 0:
            self.steps.append(step + 1)
            for m, d in self.probes.items():
                self.accuracy[m].append(evaluate(self.model, d, batch_size=128)["accuracy"])
        return False

    def state_dict(self) -> dict:
        """The probes so far (JSON), for training checkpoints."""
        return {"steps": list(self.steps),
                "accuracy": {str(m): list(a) for m, a in self.accuracy.items()}}

    def load_state_dict(self, state: dict) -> None:
        self.steps = [int(s) for s in state["steps"]]
        self.accuracy = {m: [float(a) for a in state["accuracy"][str(m)]] for m in self.probes}


@register
class InductionHeads(NeuralExperiment):
    name = "induction-heads"
    description = "STU trained on induction heads at length n, evaluated at 1x to 16x n"
    paper = "length generalization Sec. 4.2 / Fig. 5"
    claims = (
        Claim("solved", "length generalization", "Sec. 4.2 (after Liu et al. 2024)",
              "a two-layer STU solves induction heads at its training length",
              "accuracy_by_factor/*/1", ">=", 0.99,
              spread="accuracy_by_factor_seeds/*/1"),
        Claim("generalizes", "length generalization", "Sec. 4.2, Fig. 5",
              "models occasionally generalize all the way to the longest length (some seed "
              "at least 90 % accurate there, for every training length)",
              "best_seed_at_longest/*", ">=", 0.9, scales=(),
              spread="accuracy_at_longest_seeds/*",
              note="Measured: every seed falls towards chance at 8x-16x, and the errors are "
                   "the recalls over distances longer than any in training "
                   "(accuracy_by_distance: within-distance recalls stay near 100 %)."),
    )

    # what each config entry may hold, checked before any task (experiments/config/ranges.py)
    ranges = {**TRAINING_RANGES, "T": Int(3, 2**24), "train_lengths": ListOf(
        Int(3, 2**24), unique=True), "eval_factors": ListOf(Int(1, 2**20), unique=True),
        "vocab_size": Int(2, 2**20), "d_model": Int(1, 2**16), "num_filters": Int(1, 4096),
        "n_train": Int(1, 10**8), "n_eval": Int(1, 10**8), "n_probe": Int(1, 10**8),
        "probe_every": Int(0, 10**9), "max_steps": Int(1, 10**9)}
    relations = (Relation("train_lengths", "<=", "T"), Relation("num_filters", "<=", "T"))

    def largest_array(self, config):
        T, n = config["T"], max(config["train_lengths"])
        width = config["d_model"] * max(config["mlp_ratio"], 1.0)
        return max(tokens(config["n_train"], n), tokens(config["n_eval"], T),
                   activations(128, T, width), (F64 * T * config["num_filters"],
                                                f"the (T={T}, num_filters) STU filters"))

    def config(self, scale, seeds):
        cfg = {"T": by_scale(scale, quick=256, medium=512, paper=256),
               "train_lengths": by_scale(scale, quick=[16, 64], medium=[16, 32],
                                         paper=[16, 32, 64, 128]),
               "eval_factors": [1, 2, 4, 8, 16],
               "vocab_size": 4, "d_model": by_scale(scale, quick=32, medium=64, paper=64),
               "num_filters": 20, "mlp_ratio": 2.0, "n_train": 4096, "n_eval": 512,
               "n_probe": 128, "probe_every": by_scale(scale, quick=0, medium=250, paper=50),
               "max_steps": by_scale(scale, quick=1500, medium=6000, paper=20000),
               "batch_size": 32, "lr": 3e-3, "warmup": 50, "weight_decay": 0.0,
               "eval_every": by_scale(scale, quick=50, medium=100, paper=50),
               "target_accuracy": by_scale(scale, quick=0.995, medium=None, paper=0.995),
               "plateau": by_scale(scale, quick=None, medium=ACCURACY_PLATEAU, paper=None),
               "seeds": by_scale(scale, quick=3, medium=8, paper=5)}
        cfg.update(TRAINING_DEFAULTS)
        if seeds is not None:
            cfg["seeds"] = seeds
        return cfg

    def tasks(self, config):
        # longest training length first: its runs take 3-5x as long (quick: 300-450 steps at
        # 64 against 100-150 at 16), and the workers take tasks in this order, so the short
        # runs fill the gaps at the end instead of leaving one worker on a long run alone
        return [{"seed_index": s, "train_length": n}
                for n in sorted(config["train_lengths"], reverse=True)
                for s in range(config["seeds"])]

    def run_task(self, config, task, rng):
        from ...neural.tasks import induction_heads

        n = task["train_length"]
        v = config["vocab_size"]
        lengths = eval_lengths(config, n)
        train_set = induction_heads(config["n_train"], n, vocab_size=v, rng=rng)
        held_out = induction_heads(config["n_eval"], n, vocab_size=v, rng=rng)
        evals = {m: induction_heads(config["n_eval"], m, vocab_size=v, rng=rng)
                 for m in lengths}
        probes = ({m: induction_heads(config["n_probe"], m, vocab_size=v, rng=rng)
                   for m in lengths} if config["probe_every"] else {})
        seed = torch_seed(rng)
        with task_threads(1):
            model = build_model(config, seed)
            probe = Probe(model, probes, config["probe_every"])
            res = train_in_task(model, train_set, config, eval_data=held_out,
                                steps=config["max_steps"], batch_size=config["batch_size"],
                                lr=config["lr"], warmup=config["warmup"],
                                weight_decay=config["weight_decay"],
                                eval_every=config["eval_every"],
                                target_accuracy=config["target_accuracy"],
                                plateau=plateau_rule(config), seed=seed, device=task_device(),
                                callback=step_progress(config["max_steps"], probe))
            model.cpu()
            if res.diverged:  # a diverged model is not evaluated (divergence is recorded)
                acc = {str(m): float("nan") for m in evals}
                by_distance = {str(m): {"within": float("nan"), "beyond": float("nan"),
                                        "n_within": 0, "n_beyond": 0} for m in evals}
            else:
                scored = {str(m): recall_accuracy(model, d, n) for m, d in evals.items()}
                acc = {m: a for m, (a, _) in scored.items()}
                by_distance = {m: split for m, (_, split) in scored.items()}
        return {"accuracy": acc, "by_distance": by_distance,
                "eval_steps": res.evals["step"], "eval_accuracy": res.evals["accuracy"],
                "eval_loss": res.evals["loss"], "probe_steps": np.asarray(probe.steps),
                **{f"probe/{m}": np.asarray(a) for m, a in probe.accuracy.items()},
                **training_record(res)}

    def summarize(self, config, tasks, results):
        acc, acc_seeds, by_f, by_f_seeds, best, longest_seeds = {}, {}, {}, {}, {}, {}
        steps, status, plateaued, by_dist = {}, {}, {}, {}
        for n in config["train_lengths"]:
            key = str(n)
            rs = [r for t, r in zip(tasks, results) if t["train_length"] == n]
            lengths = eval_lengths(config, n)
            acc_seeds[key] = {str(m): [r["accuracy"][str(m)] for r in rs] for m in lengths}
            acc[key] = {m: spread(v)["mean"] for m, v in acc_seeds[key].items()}
            by_f_seeds[key] = {str(m // n): acc_seeds[key][str(m)] for m in lengths}
            by_f[key] = {f: spread(v)["mean"] for f, v in by_f_seeds[key].items()}
            longest_seeds[key] = acc_seeds[key][str(lengths[-1])]
            best[key] = spread(longest_seeds[key])["max"]  # NaN (diverged) ignored
            by_dist[key] = {str(m): {g: spread([r["by_distance"][str(m)][g] for r in rs])["mean"]
                                     for g in ("within", "beyond")} for m in lengths}
            steps[key] = [r["steps_done"] for r in rs]
            status[key] = [r["status"] for r in rs]
            plateaued[key] = [r["plateaued"] for r in rs]
        summary = {"accuracy": acc, "accuracy_seeds": acc_seeds, "accuracy_by_factor": by_f,
                   "accuracy_by_factor_seeds": by_f_seeds, "best_seed_at_longest": best,
                   "accuracy_at_longest_seeds": longest_seeds, "accuracy_by_distance": by_dist,
                   "steps": steps, "status": status, "plateaued": plateaued, "T": config["T"],
                   "chance": 1.0 / config["vocab_size"]}
        arrays = {}
        for n in config["train_lengths"]:
            rs = [r for t, r in zip(tasks, results) if t["train_length"] == n]
            arrays[f"accuracy/{n}"] = np.array([[r["accuracy"][str(m)] for r in rs]
                                                for m in eval_lengths(config, n)])
            for key in ("eval_steps", "eval_accuracy", "eval_loss", "probe_steps"):
                arrays[f"{key}/{n}"] = stack_ragged([r[key] for r in rs])
            for m in eval_lengths(config, n):
                if config["probe_every"]:
                    arrays[f"probe/{n}/{m}"] = stack_ragged([r[f"probe/{m}"] for r in rs])
        return summary, arrays

    def plot(self, config, summary, arrays, outdir):
        colors = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd"]
        probes = bool(config["probe_every"])
        ncols = 3 + probes
        fig, axes = figure(1, ncols, width=5.0 * ncols, height=3.8)
        ax = axes[0]
        chance = summary["chance"]
        for i, n in enumerate(config["train_lengths"]):
            c = colors[i % len(colors)]
            f = np.array(eval_lengths(config, n)) // n
            seeds = arrays[f"accuracy/{n}"]  # (eval, seed)
            ax.plot(f, seeds.mean(axis=1), color=c, lw=1.6, marker="o",
                    label=f"trained at {n} (mean)")
            for s in range(seeds.shape[1]):
                jitter = 1 + 0.03 * (s - seeds.shape[1] / 2)
                ax.scatter(f * jitter, seeds[:, s], color=c, s=9, alpha=0.6)
        ax.set_xscale("log", base=2)
        ax.set_ylim(0, 1.05)
        ax.axhline(chance, color="0.5", lw=0.8, ls="--", label="chance")
        ax.set_xlabel("evaluation length / training length")
        ax.set_ylabel("accuracy (line: mean; dots: seeds)")
        ax.set_title(f"STU on induction heads, filters of length T = {config['T']}")
        ax.legend(loc="lower left")
        ax = axes[1]
        for i, n in enumerate(config["train_lengths"]):
            c = colors[i % len(colors)]
            lengths = eval_lengths(config, n)
            f = np.array(lengths) // n
            dist = summary["accuracy_by_distance"][str(n)]
            for group, ls in (("within", "-"), ("beyond", "--")):
                ax.plot(f, [dist[str(m)][group] for m in lengths], color=c, ls=ls, marker="o",
                        ms=3, label=f"trained at {n}: recall distance "
                        + ("< n" if group == "within" else ">= n"))
        ax.axhline(chance, color="0.5", lw=0.8)
        ax.set_xscale("log", base=2)
        ax.set_ylim(0, 1.05)
        ax.set_xlabel("evaluation length / training length")
        ax.set_ylabel("accuracy (mean over seeds)")
        ax.set_title("by recall distance d = L − 1 − p (first flag at p)")
        ax.legend(fontsize=7, loc="lower left")
        ax = axes[2]
        for i, n in enumerate(config["train_lengths"]):
            c = colors[i % len(colors)]
            st, ac = arrays[f"eval_steps/{n}"], arrays[f"eval_loss/{n}"]
            for s in range(st.shape[0]):
                ax.plot(st[s], ac[s], color=c, lw=0.8, alpha=0.7,
                        label=f"trained at {n}" if s == 0 else None)
        ax.set_yscale("log")
        ax.set_xlabel("step")
        ax.set_ylabel("held-out loss at the training length")
        ax.set_title("training curves (every seed; stop: " + (
            "plateau of the held-out accuracy)" if config["plateau"] else "target accuracy)"))
        ax.legend()
        if probes:
            ax = axes[3]
            styles = ["-", "--", "-.", ":", (0, (1, 3))]
            for i, n in enumerate(config["train_lengths"]):
                c = colors[i % len(colors)]
                st = arrays[f"probe_steps/{n}"]
                for j, m in enumerate(eval_lengths(config, n)):
                    pa = arrays[f"probe/{n}/{m}"]
                    ax.plot(np.nanmax(st, 0), np.nanmean(pa, 0), color=c, ls=styles[j % 5],
                            lw=1.1, label=f"{n} at {m // n}x")
            ax.axhline(chance, color="0.5", lw=0.8)
            ax.set_ylim(0, 1.05)
            ax.set_xlabel("step")
            ax.set_ylabel(f"accuracy on {config['n_probe']} probe sequences (mean over seeds)")
            ax.set_title("generalization during training")
            ax.legend(fontsize=6, ncol=2)
        return save_figure(fig, outdir, "induction_heads")

