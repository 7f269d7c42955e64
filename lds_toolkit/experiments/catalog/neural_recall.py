r"""``assoc-recall``: associative recall (Focus paper, Sec. 5.1, Tables 1 and 6).

Task: :func:`lds_toolkit.neural.tasks.associative_recall` with a vocabulary of 30 (14 keys,
14 values, the copy prefix and a no-op), each sequence with its own dictionary; the model
must give the value of the query key at the last position. Models (Table 6: 2 layers,
width 64; token embedding, pre-norm residual blocks with MLP, linear head over the 30 ids):

=============  ================================================================
``focus``      :class:`~lds_toolkit.neural.Focus` (adaptive IIR, chunked attention)
``focus-h``    ``Focus(adaptive=False)``: the paper's Focus-H ablation
``las``        :class:`~lds_toolkit.neural.LaSAttention` (8 heads, P = 5, B = 1e-3)
``s4++``       :class:`~lds_toolkit.neural.S4PlusPlus` (causal)
``transformer``  causal softmax self-attention (one head, no positional encoding)
=============  ================================================================

Training: AdamW (β = 0.9, 0.98 as Table 6) with warm-up, 2000 training sequences, every
key position supervised with its value (as Hyena's training data), accuracy scored at the
query only, on held-out sequences.

Quick (CPU) mode, a deviation forced by the budget: L = 30 is trained from scratch; the
L = 1K model starts from the L = 30 model of the same run (a length curriculum) and trains
``steps_long`` more steps at L = 1K with batch 8, instead of a full run from scratch. Paper
scale trains every length from scratch with Table 6's settings.

Structural ceiling of Focus with chunked attention (see docs/experiments/assoc-recall.md):
its attention sees only the current chunk of ``chunk_size`` tokens and its IIR filters are
linear (no content-addressed memory), so the answer is reachable only when the query key
occurs among the key-value pairs inside the query's chunk. ``summary["chunk_ceiling"]`` gives
that probability, 1 - (1 - 1/K)^m + (1 - 1/K)^m / K for m pairs in the chunk and K keys.

``summary.json`` key ``accuracy[model][length]`` (mean over seeds) and
``accuracy_seeds[model][length]``.
"""

from __future__ import annotations

import numpy as np

from ...neural import SequenceModel
from ...neural.tasks import associative_recall
from ...neural.training import evaluate, train
from ..base import register
from ..plotting import figure, save_figure
from .neural_common import (
    NeuralExperiment,
    by_model,
    require_defined_scale,
    spread,
    task_device,
    task_threads,
    torch_seed,
    training_record,
)

MODELS = ("focus", "focus-h", "las", "s4++", "transformer")
LAYERS = {
    "focus": ("focus", {}),
    "focus-h": ("focus", {"adaptive": False}),
    "las": ("las", {}),
    "s4++": ("s4plusplus", {}),
    "transformer": ("attention", {"n_heads": 1}),
}
PAPER = {"focus": {"30": 100.0, "1024": 100.0, "8192": 100.0, "32768": 100.0, "65536": 100.0},
         "focus-h": {"30": 100.0, "1024": 98.0, "8192": 85.3, "32768": 34.6, "65536": 28.0},
         "transformer": {"30": 100.0, "1024": 100.0}}


def build_model(name: str, config: dict, seed: int) -> SequenceModel:
    layer, kwargs = LAYERS[name]
    return SequenceModel(config["width"], config["n_layers"], layer, layer_kwargs=kwargs,
                         vocab_size=config["vocab_size"], mlp_ratio=config["mlp_ratio"],
                         seed=seed)


def chunk_ceiling(length: int, vocab_size: int, chunk: int) -> float:
    """Accuracy reachable when only the query's attention chunk can be searched.

    Focus's chunks start at multiples of ``chunk``; the query's chunk starts at
    ``c0 = ((L - 1) // chunk) * chunk`` and holds the m key positions of the sequence at or
    after c0. The query key (uniform over the K keys, which all occur in a long sequence) is
    found there with probability 1 - (1 - 1/K)^m; otherwise a uniform guess over the K values
    is right with probability 1/K. A sequence that fits in one chunk has ceiling 1.
    """
    if length <= chunk:
        return 1.0
    k = (vocab_size - 2) // 2
    n_pairs, offset = (length - 2) // 2, (length - 2) % 2
    c0 = ((length - 1) // chunk) * chunk
    keys = offset + 2 * np.arange(n_pairs)
    m = int(np.sum(keys >= c0))
    miss = (1 - 1 / k) ** m
    return float(1 - miss + miss / k)


@register
class AssocRecall(NeuralExperiment):
    name = "assoc-recall"
    description = "associative recall: Focus, Focus-H, LaS, S4++ and a transformer"
    paper = "Focus Sec. 5.1 / Tables 1 and 6"

    def config(self, scale, seeds):
        require_defined_scale(self.name, scale)
        quick = scale == "quick"
        cfg = {"vocab_size": 30, "n_train": 2000, "n_test": 200, "width": 64, "n_layers": 2,
               "mlp_ratio": 2.0, "betas": [0.9, 0.98], "weight_decay": 0.0,
               "models": list(MODELS), "focus_chunk": 32}
        if quick:
            cfg.update(lengths=[30, 1024], curriculum=True, steps=800, batch_size=32,
                       lr=3e-3, warmup=20, steps_long=60, batch_size_long=8,
                       eval_every=40, target_accuracy=0.99, seeds=1)
        else:
            # Table 6: lr 1e-4, batch 32, 10 warm-up epochs; 200 epochs of 2000 samples
            cfg.update(lengths=[30, 1024, 8192, 32768, 65536], curriculum=False,
                       steps=12500, batch_size=32, lr=1e-4, warmup=630, steps_long=12500,
                       batch_size_long=32, eval_every=625, target_accuracy=1.0, seeds=3)
        if seeds is not None:
            cfg["seeds"] = seeds
        return cfg

    def run_task(self, config, task, rng):
        lengths = sorted(config["lengths"])
        data = {n: (associative_recall(config["n_train"], n, vocab_size=config["vocab_size"],
                                       rng=rng),
                    associative_recall(config["n_test"], n, vocab_size=config["vocab_size"],
                                       rng=rng))
                for n in lengths}
        seed = torch_seed(rng)
        out = {"accuracy": {}, "steps": {}, "status": {}, "curves": {}, "train_seconds": {}}
        model = None
        with task_threads(1 if config["curriculum"] else 2):
            for i, n in enumerate(lengths):
                if model is None or not config["curriculum"]:
                    model = build_model(task["model"], config, seed + i)
                first = i == 0 or not config["curriculum"]
                steps = config["steps"] if first else config["steps_long"]
                bs = config["batch_size"] if first else config["batch_size_long"]
                train_set, test_set = data[n]
                res = train(model, train_set, eval_data=test_set, steps=steps, batch_size=bs,
                            lr=config["lr"], warmup=config["warmup"],
                            betas=tuple(config["betas"]), weight_decay=config["weight_decay"],
                            eval_every=config["eval_every"] if first else
                            max(config["steps_long"] // 4, 1),
                            target_accuracy=config["target_accuracy"], seed=seed + i,
                            eval_batch_size=16 if n > 256 else 128, device=task_device())
                rec = training_record(res)
                if res.diverged:  # a diverged model is not evaluated (divergence recorded)
                    acc = float("nan")
                else:
                    acc = (res.final_eval["accuracy"] if res.final_eval
                           else evaluate(model, test_set, batch_size=16)["accuracy"])
                out["accuracy"][str(n)] = float(acc)
                out["steps"][str(n)] = rec["steps_done"]
                out["status"][str(n)] = rec["status"]
                out["curves"][str(n)] = (res.evals["step"], res.evals["accuracy"])
                out["train_seconds"][str(n)] = rec["train_seconds"]
        return out

    def summarize(self, config, tasks, results):
        models, lengths = config["models"], [str(n) for n in sorted(config["lengths"])]
        by = by_model(config, tasks, results)
        acc_seeds = {m: {n: [r["accuracy"][n] for r in by[m]] for n in lengths}
                     for m in models}
        summary = {
            "accuracy": {m: {n: spread(v)["mean"] for n, v in acc_seeds[m].items()}
                         for m in models},
            "accuracy_seeds": acc_seeds,
            "steps": {m: {n: [r["steps"][n] for r in by[m]] for n in lengths} for m in models},
            "status": {m: {n: [r["status"][n] for r in by[m]] for n in lengths}
                       for m in models},
            "chunk_ceiling": {n: chunk_ceiling(int(n), config["vocab_size"],
                                               config["focus_chunk"]) for n in lengths},
            "paper_accuracy_percent": PAPER,
        }
        arrays = {}
        for m in models:
            for n in lengths:
                curves = [r["curves"][n] for r in by[m]]
                longest = max(curves, key=lambda c: len(c[0]))[0]
                acc = np.full((len(curves), len(longest)), np.nan)  # early stops: NaN-padded
                for i, (_, a) in enumerate(curves):
                    acc[i, :len(a)] = a
                arrays[f"eval_steps/{m}/{n}"] = np.asarray(longest)
                arrays[f"eval_accuracy/{m}/{n}"] = acc
        return summary, arrays

    def plot(self, config, summary, arrays, outdir):
        models, lengths = config["models"], [str(n) for n in sorted(config["lengths"])]
        fig, axes = figure(1, 2, width=10.5, height=3.6)
        width = 0.8 / len(lengths)
        for j, n in enumerate(lengths):
            for i, m in enumerate(models):
                vals = summary["accuracy_seeds"][m][n]
                x = i + (j - (len(lengths) - 1) / 2) * width
                axes[0].bar(x, summary["accuracy"][m][n], width=width * 0.95,
                            color=f"C{j}", label=f"L = {n}" if i == 0 else None)
                axes[0].scatter(np.full(len(vals), x), vals, color="k", s=6, zorder=3)
            axes[0].axhline(summary["chunk_ceiling"][n], color=f"C{j}", ls=":", lw=1)
        axes[0].set_xticks(range(len(models)), models)
        axes[0].set_ylim(0, 1.05)
        axes[0].set_ylabel("test accuracy at the query")
        axes[0].set_title("associative recall (dotted: Focus chunk ceiling)")
        axes[0].legend(loc="lower right")
        for m in models:
            for j, n in enumerate(lengths):
                acc = arrays[f"eval_accuracy/{m}/{n}"]
                steps = arrays[f"eval_steps/{m}/{n}"]
                if steps.size:
                    axes[1].plot(steps, np.nanmean(acc, axis=0), ls="-" if j == 0 else "--",
                                 color=f"C{models.index(m)}", label=f"{m}, L={n}")
        axes[1].set_xlabel("step (per length)")
        axes[1].set_ylabel("held-out accuracy")
        axes[1].legend(fontsize=6, ncol=2)
        return save_figure(fig, outdir, "assoc_recall")
