r"""``las-ablation``: LaS attention against its ablations and ALiBi on generated ListOps (LaS
paper, Table 3, in miniature).

Five causal attention variants in the same model (token embedding, ``n_layers`` pre-norm
blocks with 8 heads, linear head read at the expression's closing bracket), all chunked with
chunk 128 as the paper's ablation baseline "cT":

=============  ======================================================================
``las``        LaS attention, eq. 3: ELD (decay bound B) and average pooling (P)
``vanilla``    plain causal softmax attention (LaS with P = 1 and B = 0)
``l-only``     ELD only, the paper's L-attention (P = 1)
``s-only``     smoothing only, the paper's S-attention (B = 0)
``alibi``      causal attention with ALiBi's linear distance bias (Press et al. 2021)
=============  ======================================================================

The first four are :class:`lds_toolkit.neural.LaSAttention` with the options it offers for
these ablations (``pool_size=1`` removes smoothing, ``decay_bound=0`` removes ELD). The layer
has no ALiBi option, so :class:`ALiBiAttention` below is a small local baseline (same
projections, ALiBi's bias added to the scores of a causal softmax attention, chunked alike).
Hyper-parameters of the LaS operators as Table 4 for ListOps: P = 5, B = 1e-3. With chunk 128
the largest distance is 127, so the ELD factors lie in [exp(-0.127), 1]: weak, in the paper's
setting as in ours.

Data: :func:`lds_toolkit.neural.tasks.listops` with short expressions (``min_length`` ..
``max_length`` tokens) instead of LRA's 500-2000, so that a CPU can train it. ``summary.json``
key ``accuracy[model]`` (test accuracy, mean over seeds), ``accuracy_seeds[model]``.
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from ...neural import LaSAttention, SequenceModel
from ...neural.tasks import listops
from ...neural.training import train
from ..base import register
from ..plotting import figure, save_figure
from .neural_common import (
    NeuralExperiment,
    by_model,
    divergences,
    over_seeds,
    require_defined_scale,
    spread,
    task_device,
    task_threads,
    torch_seed,
    training_record,
)

MODELS = ("las", "vanilla", "l-only", "s-only", "alibi")
PAPER_LISTOPS = {"las": 46.21, "l-only": 41.08, "s-only": 46.13, "alibi": 39.94}


def alibi_slopes(n_heads: int) -> torch.Tensor:
    """ALiBi's head slopes m_h = 2^(-8 h / H), h = 1..H (Press et al. 2021)."""
    return torch.tensor([2.0 ** (-8.0 * (h + 1) / n_heads) for h in range(n_heads)])


class ALiBiAttention(nn.Module):
    r"""Causal multi-head attention with ALiBi: ``softmax(q_i·k_j / sqrt(d_h) - m_h (i - j))``
    over ``j <= i``, optionally inside chunks of ``chunk_size`` (distances restart per chunk).

    Maps (batch, length, d_model) -> same. A local baseline of the ``las-ablation`` experiment
    (LaSAttention has no ALiBi option).
    """

    def __init__(self, d_model: int, n_heads: int = 8, *, chunk_size: int | None = None):
        super().__init__()
        if d_model % n_heads:
            raise ValueError(f"d_model={d_model} must be divisible by n_heads={n_heads}")
        self.n_heads, self.chunk_size = n_heads, chunk_size
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.out = nn.Linear(d_model, d_model)
        self.register_buffer("slopes", alibi_slopes(n_heads), persistent=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        bsz, length, d = x.shape
        m = length if self.chunk_size is None else min(self.chunk_size, length)
        pad = -length % m
        n_chunks = (length + pad) // m
        h = self.n_heads
        qkv = F.pad(self.qkv(x), (0, 0, 0, pad))
        qkv = qkv.view(bsz * n_chunks, m, 3, h, d // h).permute(2, 0, 3, 1, 4)
        pos = torch.arange(m, device=x.device)
        dist = (pos[:, None] - pos[None, :]).to(x.dtype)
        bias = -self.slopes.to(x.dtype)[:, None, None] * dist
        bias = bias.masked_fill(dist < 0, float("-inf"))  # causal
        o = F.scaled_dot_product_attention(qkv[0], qkv[1], qkv[2], attn_mask=bias)
        o = o.transpose(1, 2).reshape(bsz, n_chunks * m, d)[:, :length]
        return self.out(o)


def layer_factory(name: str, config: dict):
    h, c = config["n_heads"], config["chunk_size"]
    P, B = config["pool_size"], config["decay_bound"]
    opts = {"las": (P, B), "vanilla": (1, 0.0), "l-only": (1, B), "s-only": (P, 0.0)}
    if name == "alibi":
        return lambda d: ALiBiAttention(d, h, chunk_size=c)
    pool, decay = opts[name]
    return lambda d: LaSAttention(d, h, pool_size=pool, decay_bound=decay, chunk_size=c)


@register
class LaSAblation(NeuralExperiment):
    name = "las-ablation"
    description = "LaS vs vanilla / L-only / S-only attention and ALiBi on generated ListOps"
    paper = "LaS Table 3 (ListOps column, miniature)"

    def config(self, scale, seeds):
        require_defined_scale(self.name, scale)
        if scale == "quick":
            cfg = {"min_length": 16, "max_length": 64, "n_train": 4000, "n_test": 1000,
                   "d_model": 64, "n_layers": 2, "steps": 800, "seeds": 2}
        else:
            cfg = {"min_length": 100, "max_length": 500, "n_train": 20000, "n_test": 2000,
                   "d_model": 128, "n_layers": 4, "steps": 20000, "seeds": 3}
        cfg.update(n_heads=8, chunk_size=128, pool_size=5, decay_bound=1e-3, batch_size=32,
                   lr=1e-3, warmup=100, weight_decay=0.01, mlp_ratio=2.0,
                   models=list(MODELS))
        if seeds is not None:
            cfg["seeds"] = seeds
        return cfg

    def run_task(self, config, task, rng):
        n_tr, n_te = config["n_train"], config["n_test"]
        data = listops(n_tr + n_te, min_length=config["min_length"],
                       max_length=config["max_length"], rng=rng)
        train_set, test_set = data.subset(slice(0, n_tr)), data.subset(slice(n_tr, None))
        seed = torch_seed(rng)
        with task_threads(1):
            model = SequenceModel(config["d_model"], config["n_layers"],
                                  layer_factory(task["model"], config), vocab_size=16,
                                  d_output=10, mlp_ratio=config["mlp_ratio"], seed=seed)
            res = train(model, train_set, eval_data=test_set, steps=config["steps"],
                        batch_size=config["batch_size"], lr=config["lr"],
                        warmup=config["warmup"], schedule="cosine",
                        weight_decay=config["weight_decay"],
                        eval_every=max(config["steps"] // 10, 1), seed=seed,
                        device=task_device())
        majority = float(np.mean(test_set.info["label"] == np.bincount(
            train_set.info["label"], minlength=10).argmax()))
        return {"accuracy": res.final_eval.get("accuracy", float("nan")),
                "eval_steps": res.evals["step"], "eval_accuracy": res.evals["accuracy"],
                "majority_accuracy": majority, **training_record(res)}

    def summarize(self, config, tasks, results):
        models = config["models"]
        by = by_model(config, tasks, results)
        summary = {
            **over_seeds("accuracy", {m: [r["accuracy"] for r in by[m]] for m in models}),
            "majority_accuracy": spread([r["majority_accuracy"] for r in by[models[0]]])["mean"],
            "paper_listops_accuracy_percent": PAPER_LISTOPS,
            "diverged": divergences(by),
        }
        arrays = {}
        for m in models:
            arrays[f"eval_accuracy/{m}"] = np.stack([r["eval_accuracy"] for r in by[m]])
            arrays[f"eval_steps/{m}"] = by[m][0]["eval_steps"]
            arrays[f"loss_curve/{m}"] = np.stack([r["loss_curve"] for r in by[m]])
        return summary, arrays

    def plot(self, config, summary, arrays, outdir):
        models = config["models"]
        fig, (ax0, ax1) = figure(1, 2, width=10.0, height=3.4)
        for i, m in enumerate(models):
            vals = summary["accuracy_seeds"][m]
            ax0.bar(i, summary["accuracy"][m], color="#1f77b4" if m == "las" else "0.6")
            ax0.scatter(np.full(len(vals), i), vals, color="k", s=8, zorder=3)
        ax0.axhline(summary["majority_accuracy"], color="r", ls=":", lw=1,
                    label="majority class")
        ax0.set_xticks(range(len(models)), models)
        ax0.set_ylabel("test accuracy")
        ax0.set_title(f"ListOps, {config['min_length']}-{config['max_length']} tokens")
        ax0.legend()
        for m in models:
            acc = arrays[f"eval_accuracy/{m}"]
            ax1.plot(arrays[f"eval_steps/{m}"], acc.mean(axis=0), marker="o", ms=3, label=m)
        ax1.set_xlabel("step")
        ax1.set_ylabel("test accuracy (mean over seeds)")
        ax1.legend()
        return save_figure(fig, outdir, "las_ablation")

