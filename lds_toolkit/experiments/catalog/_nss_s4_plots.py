"""Figures of ``nss-s4`` (the S4++ paper's Sec. 2.3): the paper's panels and the analysis.

:func:`plot_paper` draws Figs. 2 and 4 (predictions on the perturbed input u', the state
volumes, raw and weighted, the training loss and the gradients); :func:`plot_analysis` the
error above its floor, the rising volume explained and where NSS would appear (the trained
modes and their distance to ``|λ| >= 1`` against the step). Both read the ``summary`` and
``arrays`` that :meth:`~lds_toolkit.experiments.catalog.nss_s4.NssS4.summarize` returns and
return the paths written (PNG and PDF).
"""

from __future__ import annotations

import numpy as np

from ..plotting import figure, save_figure
from ._nss_s4_measures import RATES

#: Label and colour of each model in the figures.
LABELS = {"s4": "S4 (LegS, DPLR)", "s4d": "S4D-Lin", "s4+": "S4+ (SMR on S4-LegS)",
          "s4d-free": "S4D-Lin, free Re A"}
COLORS = {"s4": "#1f77b4", "s4d": "#2ca02c", "s4+": "#d62728", "s4d-free": "#9467bd"}


def _models_with(arrays, models, key):
    """The models of ``models`` that have the array ``key`` (a model can be left out)."""
    return [m for m in models if f"{key}/{m}" in arrays]


def plot_paper(config, summary, arrays, outdir):
    """Figs. 2 and 4: predictions on u', volumes (raw and weighted), loss, gradients."""
    models = config["models"]
    fig, axes = figure(2, 3, width=14.0, height=6.6)
    ax = axes[0, 0]
    have = _models_with(arrays, models, "t_perturbed")
    if have:
        t = arrays[f"t_perturbed/{have[0]}"][0]
        ax.plot(t, arrays[f"target_perturbed/{have[0]}"][0], color="k", lw=1.2,
                label="next perturbed sample")
    for m in have:
        ax.plot(arrays[f"t_perturbed/{m}"][0], arrays[f"prediction_perturbed/{m}"][0],
                color=COLORS[m], lw=0.9, label=LABELS[m])
    ax.set_xlabel("t'")
    ax.set_title("prediction on u' (seed 0)")
    ax.legend(fontsize=7)
    for ax, key, title in (
            (axes[0, 1], "volume",
             "paper's Total State Vol 2Σ|x_t|\n(not rescaling-invariant)"),
            (axes[0, 2], "weighted", "weighted volume 2Σ|C||x_t| (rescaling-invariant)")):
        for m in _models_with(arrays, models, f"{key}_original"):
            a0, a1 = arrays[f"{key}_original/{m}"], arrays[f"{key}_perturbed/{m}"]
            pos = np.arange(a0.shape[1])
            ax.plot(pos, np.median(a0, 0), color=COLORS[m], lw=1.2, label=f"{LABELS[m]}, u")
            ax.plot(pos, np.median(a1, 0), color=COLORS[m], lw=1.2, ls="--",
                    label=f"{LABELS[m]}, u'")
        ax.set_xlabel("position t")
        ax.set_ylabel("median over seeds")
        ax.set_title(title)
        ax.legend(fontsize=6, ncol=2)
    panels = ((axes[1, 0], "loss_curve", "training loss", "log"),
              (axes[1, 1], "grad_sum_curve", "sum of parameter gradients Σ∂L/∂θ (Fig. 4)",
               "symlog"),
              (axes[1, 2], "grad_norm_curve", "gradient norm ||∂L/∂θ||₂", "log"))
    for ax, key, title, yscale in panels:
        for m in models:
            c = arrays[f"{key}/{m}"]
            steps = np.arange(c.shape[1])
            ax.plot(steps, np.nanmedian(c, 0), color=COLORS[m], lw=0.9, label=LABELS[m])
            if c.shape[0] > 1 and key != "grad_sum_curve":
                ax.fill_between(steps, np.nanmin(c, 0), np.nanmax(c, 0), color=COLORS[m],
                                alpha=0.15, lw=0)
        if key == "loss_curve":
            for m in models:
                st, ev = arrays[f"eval_steps/{m}"], arrays[f"eval_loss/{m}"]
                for i in range(st.shape[0]):
                    ax.plot(st[i], ev[i], color=COLORS[m], lw=0.8, ls="--",
                            label="held-out u' draws (every seed)"
                            if i == 0 and m == models[0] else None)
        if yscale == "symlog":
            ax.set_yscale("symlog", linthresh=1e-4)
        else:
            ax.set_yscale(yscale)
        ax.set_xlabel("step")
        ax.set_title(f"{title}\n(median over seeds" + (", min-max)" if yscale == "log"
                                                        else ")"))
        ax.legend(fontsize=7)
    return save_figure(fig, outdir, "nss_s4")


def plot_analysis(config, summary, arrays, outdir):
    """Error above the floor, the rising volume explained, and where NSS would appear."""
    models = config["models"]
    L = config["n_points"]
    fig, axes = figure(1, 4, width=16.0, height=3.6)
    ax = axes[0]
    have = [m for m in models if summary["perturbed_error_seeds"].get(m)]
    xs = np.arange(len(have))
    keys = (("floor", "nominal floor"), ("above_floor", "error above floor"),
            ("output_effect", "mean (ŷ(u') − ŷ(u))²"))
    for j, (key, label) in enumerate(keys):
        vals = [summary[key][m] for m in have]
        ax.bar(xs + (j - 1) * 0.27, vals, width=0.27, label=label,
               color=["0.6", "#ff7f0e", "#8c564b"][j])
        for i, m in enumerate(have):
            ax.scatter(np.full(len(summary[f"{key}_seeds"][m]), i + (j - 1) * 0.27),
                       summary[f"{key}_seeds"][m], color="k", s=5, zorder=3)
    ax.set_xticks(xs, [LABELS[m].split(" (")[0] for m in have], fontsize=7)
    ax.set_ylabel("MSE on u' (bars: mean; dots: seeds)")
    ax.set_title("error on u' = floor + model's change")
    ax.legend(fontsize=7)
    ax = axes[1]
    for m in _models_with(arrays, models, "long_weighted"):
        w, wdc = arrays[f"long_weighted/{m}"], arrays[f"long_weighted_dc/{m}"]
        pos = np.arange(w.shape[1])
        ax.plot(pos, np.median(w, 0), color=COLORS[m], lw=1.2, label=LABELS[m])
        ax.plot(pos, np.median(wdc, 0), color=COLORS[m], lw=1.0, ls=":")
    ax.axvline(L, color="0.4", lw=0.8, ls="--")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel(f"position t (dashed: training length {L})")
    ax.set_ylabel("2Σ|C||x_t| (median over seeds)")
    ax.set_title("rising volume: full input (solid)\nvs its time average alone (dotted)")
    ax.legend(fontsize=7)
    ax = axes[2]
    for m in _models_with(arrays, models, "lds_moduli"):
        mod, dt = arrays[f"lds_moduli/{m}"], arrays[f"lds_steps/{m}"]
        ax.scatter(dt, np.abs(1 - mod), s=3, alpha=0.4, color=COLORS[m], label=LABELS[m])
        grow = mod > 1
        if grow.any():
            ax.scatter(dt[grow], mod[grow] - 1, s=14, marker="x", color=COLORS[m])
    ax.axhline(1.0 / L, color="0.4", lw=0.8, ls="--", label=f"|1 − |λ|| = 1/L (L = {L})")
    ax.axhline(summary["nss_threshold"] - 1, color="r", lw=0.8, ls=":",
               label="10⁶ growth within L (|λ| − 1)")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("trained step Δ_h of the mode's channel")
    ax.set_ylabel("|1 − |λ(Ā)||  (×: |λ| > 1)")
    ax.set_title("trained modes (all seeds)")
    ax.legend(fontsize=6)
    ax = axes[3]
    floor = 1e-7
    for m in _models_with(arrays, models, "lds_radius_at_rate"):
        gap = 1.0 - np.max(arrays[f"lds_radius_at_rate/{m}"], 0)
        ax.plot(RATES, np.maximum(gap, floor), color=COLORS[m], lw=1.2, marker="o", ms=3,
                label=LABELS[m])
        grow = gap <= 0
        if grow.any():
            ax.scatter(np.asarray(RATES)[grow], np.full(grow.sum(), floor), marker="x",
                       s=30, color=COLORS[m], zorder=3)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("step multiplier r (step rΔ_h, the layer's rate)")
    ax.set_ylabel("1 − max spectral radius of Ā")
    ax.set_title("distance to NSS (|λ| ≥ 1) against the step\n(× at the bottom: |λ| > 1)")
    ax.legend(fontsize=7)
    return save_figure(fig, outdir, "nss_s4_analysis")
