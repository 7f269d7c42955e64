r"""``nss-s4``: the S4++ paper's non-stable-states example (Sec. 2.3, Figs. 2 and 4).

100 equidistant samples of sin(5πt) on [0, 1] train a one-layer S4 and a one-layer S4+ (State
Memory Replay, eq. 15) for 2000 steps (the paper's 2000 epochs of its single sequence). The
sampling instants are then perturbed by less than the grid step (``t'_i = t_i + δ_i``,
``|δ_i| < jitter · h``), and the trained models run on the perturbed samples u'.

**Training target (our choice; the paper does not say).** Next-sample prediction: the output at
position i must give sin(5π t_{i+1}) (:func:`lds_toolkit.neural.tasks.sine_fit`). Fitting the
input itself would be solved by the feed-through D with no use of the state; the next sample
needs the phase, which only the state holds. On u' the target is the next *perturbed* sample.

Measured per model and seed:

* ``state_volume`` — the paper's "Total State Vol": V_t = Σ |x_t| over all N states of every
  channel (each stored complex mode stands for a conjugate pair and counts twice), from the
  layer's recurrent mode; we report its mean over t on u (``original``) and on u'
  (``perturbed``, averaged over ``n_perturbations`` draws of the instants), and the peaks;
* ``perturbed_error`` — MSE of the prediction on u' against the next perturbed samples
  (``original_error``: the same on u);
* training-loss and gradient-norm curves (norms before clipping; no clipping is applied here,
  so the curves are the raw ones of Fig. 4).

Model: linear encoder 1 -> d, one residual block with the SSM layer and no MLP or normalisation
(a LayerNorm across the channels of a lifted scalar would divide its value out), linear head.
"""

from __future__ import annotations

import numpy as np
import torch

from ...neural import SequenceModel
from ...neural.tasks import sine_fit
from ...neural.training import evaluate, predict, train
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

MODELS = ("s4", "s4+")
LABELS = {"s4": "S4", "s4+": "S4+ (SMR)"}
COLORS = {"s4": "#1f77b4", "s4+": "#d62728"}


def build_model(name: str, config: dict, seed: int) -> SequenceModel:
    layer = {"s4": "s4", "s4+": "s4plus"}[name]
    return SequenceModel(config["d_model"], 1, layer, layer_kwargs={"d_state": config["d_state"]},
                         d_input=1, d_output=1, norm="none", mlp_ratio=0.0, seed=seed)


@torch.no_grad()
def state_volume(model: SequenceModel, u: np.ndarray) -> np.ndarray:
    """V_t = Σ |x_t| over every state of the (single) SSM layer, from its step mode.

    ``u``: (length, 1). The layer stores N/2 complex modes per channel standing for N/2
    conjugate pairs, so the sum over the N real-system states is twice the sum over the stored
    modes. Returns V of shape (length,).
    """
    model.eval()
    dtype = next(model.parameters()).dtype
    device = next(model.parameters()).device
    x = torch.as_tensor(u, dtype=dtype, device=device)
    states = model.initial_state(1, dtype=dtype, device=device)
    vol = np.empty(len(u))
    for t in range(len(u)):
        _, states = model.step(x[t][None], states)
        s = states[0]
        ssm = s.ssm if hasattr(s, "ssm") else s  # S4PlusState or S4's complex tensor
        vol[t] = 2.0 * float(ssm.abs().sum())
    model.train()
    return vol


@register
class NssS4(NeuralExperiment):
    name = "nss-s4"
    description = "S4 vs S4+ on sin(5 pi t): states and predictions under perturbed sampling"
    paper = "S4++ Sec. 2.3 / Figs. 2 and 4"

    def config(self, scale, seeds):
        require_defined_scale(self.name, scale)
        quick = scale == "quick"
        cfg = {"n_points": 100, "frequency": float(5 * np.pi), "jitter": 0.5,
               "n_perturbations": 10, "steps": 2000, "lr": 3e-3, "warmup": 100,
               "d_model": 16, "d_state": 64, "seeds": 3 if quick else 10,
               "models": list(MODELS)}
        if seeds is not None:
            cfg["seeds"] = seeds
        return cfg

    def run_task(self, config, task, rng):
        n, freq, jit = config["n_points"], config["frequency"], config["jitter"]
        data = sine_fit(n, frequency=freq)
        seed = torch_seed(rng)
        perturbed = [sine_fit(n, frequency=freq, jitter=jit, rng=rng)
                     for _ in range(config["n_perturbations"])]
        with task_threads(1):
            model = build_model(task["model"], config, seed)
            res = train(model, data, steps=config["steps"], batch_size=1, lr=config["lr"],
                        warmup=config["warmup"], schedule="cosine", grad_clip=None,
                        divergence_factor=None, seed=seed, device=task_device())
            if res.diverged:
                return {"diverged": True, **training_record(res)}
            model.cpu()
            original_error = evaluate(model, data)["loss"]
            perturbed_error = [evaluate(model, p)["loss"] for p in perturbed]
            vol_orig = state_volume(model, data.inputs[0])
            vol_pert = np.stack([state_volume(model, p.inputs[0]) for p in perturbed])
            pred_orig = predict(model, data)[0, :, 0]
            pred_pert = predict(model, perturbed[0])[0, :, 0]
        return {
            "diverged": False,
            "original_error": original_error,
            "perturbed_error": float(np.mean(perturbed_error)),
            "perturbed_error_draws": np.asarray(perturbed_error),
            "volume_original": vol_orig,
            "volume_perturbed": vol_pert.mean(axis=0),
            "prediction_original": pred_orig,
            "prediction_perturbed": pred_pert,
            "t_perturbed": perturbed[0].info["t"],
            "target_perturbed": perturbed[0].targets[0, :, 0],
            **training_record(res),
        }

    def summarize(self, config, tasks, results):
        models = config["models"]
        by = by_model(config, tasks, results)
        ok = {m: [r for r in by[m] if not r["diverged"]] for m in models}
        summary = {"state_volume": {}, "state_volume_peak": {}, "perturbed_error": {},
                   "original_error": {}, "state_volume_seeds": {}, "perturbed_error_seeds": {},
                   "perturbed_error_spread": {},
                   "diverged": {m: [r["divergence"] for r in by[m] if r["diverged"]]
                                for m in models},
                   "final_train_loss": {}}
        arrays = {}
        for m in models:
            rs = ok[m]
            vo = [float(r["volume_original"].mean()) for r in rs]
            vp = [float(r["volume_perturbed"].mean()) for r in rs]
            summary["state_volume"][m] = {"original": spread(vo)["mean"],
                                          "perturbed": spread(vp)["mean"]}
            summary["state_volume_seeds"][m] = {"original": vo, "perturbed": vp}
            summary["state_volume_peak"][m] = {
                "original": spread([r["volume_original"].max() for r in rs])["mean"],
                "perturbed": spread([r["volume_perturbed"].max() for r in rs])["mean"]}
            pe = [r["perturbed_error"] for r in rs]
            summary["perturbed_error"][m] = spread(pe)["mean"]
            summary["perturbed_error_seeds"][m] = pe
            summary["perturbed_error_spread"][m] = spread(pe)
            summary["original_error"][m] = spread([r["original_error"] for r in rs])["mean"]
            summary["final_train_loss"][m] = spread(
                [r["loss_curve"][-100:].mean() for r in rs])["mean"]
            arrays[f"loss_curve/{m}"] = np.stack([r["loss_curve"] for r in by[m]])
            arrays[f"grad_norm_curve/{m}"] = np.stack([r["grad_norm_curve"] for r in by[m]])
            if rs:
                for key in ("volume_original", "volume_perturbed", "prediction_original",
                            "prediction_perturbed", "t_perturbed", "target_perturbed"):
                    arrays[f"{key}/{m}"] = np.stack([r[key] for r in rs])
        return summary, arrays

    def plot(self, config, summary, arrays, outdir):
        models = config["models"]
        fig, axes = figure(1, 4, width=14.0, height=3.2)
        ax = axes[0]
        first = next((m for m in models if f"t_perturbed/{m}" in arrays), None)
        if first is not None:
            t = arrays[f"t_perturbed/{first}"][0]
            ax.plot(t, arrays[f"target_perturbed/{first}"][0], color="k", lw=1,
                    label="next perturbed sample")
        for m in models:
            if f"prediction_perturbed/{m}" in arrays:
                ax.plot(arrays[f"t_perturbed/{m}"][0], arrays[f"prediction_perturbed/{m}"][0],
                        color=COLORS[m], lw=1, label=LABELS[m])
        ax.set_xlabel("t'")
        ax.set_title("prediction on u' (seed 0)")
        ax.legend()
        ax = axes[1]
        for m in models:
            if f"volume_original/{m}" not in arrays:
                continue
            n = arrays[f"volume_original/{m}"].shape[1]
            ax.plot(np.arange(n), np.median(arrays[f"volume_original/{m}"], 0), color=COLORS[m],
                    lw=1.2, label=f"{LABELS[m]}, u")
            ax.plot(np.arange(n), np.median(arrays[f"volume_perturbed/{m}"], 0),
                    color=COLORS[m], lw=1.2, ls="--", label=f"{LABELS[m]}, u'")
        ax.set_xlabel("position")
        ax.set_ylabel("Σ |x_t| (median over seeds)")
        ax.set_title("total state volume")
        ax.legend()
        for ax, key, title in ((axes[2], "loss_curve", "training loss"),
                               (axes[3], "grad_norm_curve", "gradient norm")):
            for m in models:
                c = arrays[f"{key}/{m}"]
                ax.plot(np.median(c, 0), color=COLORS[m], lw=1, label=LABELS[m])
                if c.shape[0] > 1:
                    ax.fill_between(np.arange(c.shape[1]), c.min(0), c.max(0), color=COLORS[m],
                                    alpha=0.2, lw=0)
            ax.set_yscale("log")
            ax.set_xlabel("step")
            ax.set_title(f"{title} (median, min-max)")
            ax.legend()
        return save_figure(fig, outdir, "nss_s4")
