"""Figures of ``regret-scaling``: regret against T per setup and context, the per-seed slopes,
and the regret curves over t at the largest T."""

from __future__ import annotations

import numpy as np

from ._lengen_common import qkey


def _title(setup: str) -> str:
    return setup.replace("-", ", ").replace("alg", "Algorithm ").replace("region", "Region ")


def plot_regret(config, summary, arrays, outdir):
    """``regret_scaling`` (regret and context gap against T, per-seed slopes) and
    ``regret_curves``; returns the paths (PNG and PDF)."""
    from matplotlib import cm

    from ..plotting import figure, save_figure

    Ts = np.asarray(summary["T_values"], dtype=float)
    qs = config["q_values"]
    colors = cm.viridis(np.linspace(0.0, 0.9, len(qs)))
    setups = config["setups"]
    fig, axes = figure(4, len(setups), width=4.0 * len(setups), height=13.0, squeeze=False)
    for col, setup in enumerate(setups):
        ax, axg, axs, axe = axes[0, col], axes[1, col], axes[2, col], axes[3, col]
        reg = arrays[f"{setup}_regret"]
        gap = arrays[f"{setup}_context_gap"]
        for j, q in enumerate(qs):
            e = summary[setup][qkey(q)]
            med = np.median(reg[:, :, j], axis=0)
            lab = f"T^{q:g}"
            if e.get("slope_median") is not None:
                lab += f": median slope {e['slope_median']:.2f}"
            ax.plot(Ts, reg[:, :, j].T, "-", color=colors[j], alpha=0.15, lw=0.6)
            ax.plot(Ts, np.where(med > 0, med, np.nan), "o-", color=colors[j], label=lab)
            g = np.median(gap[:, :, j], axis=0)
            if np.any(g > 0):
                axg.plot(Ts, np.maximum(g, 1e-16), "o-", color=colors[j], label=f"T^{q:g}")
            s = np.array([np.nan if v is None else v for v in e["slope_per_seed"]])
            axs.plot(np.full(s.size, j) + np.linspace(-0.15, 0.15, s.size), s, ".",
                     color=colors[j])
            if np.any(np.isfinite(s)):
                axs.plot([j - 0.25, j + 0.25], [np.nanmedian(s)] * 2, "-", color="k")
            rel = np.array([np.nan if v is None else v
                            for v in e.get("regret_excess_rel_at_T_per_seed", [])])
            if rel.size:
                axe.plot(np.full(rel.size, j) + np.linspace(-0.15, 0.15, rel.size), rel, ".",
                         color=colors[j])
                axe.plot([j - 0.25, j + 0.25], [np.nanmedian(rel)] * 2, "-", color="k")
        ref = np.median(reg[:, 0, :])
        ax.plot(Ts, ref * np.sqrt(Ts / Ts[0]), "k:", label=r"$\propto \sqrt{T}$")
        ax.plot(Ts, ref * Ts / Ts[0], "k--", lw=0.7, label=r"$\propto T$")
        ax.set_title(_title(setup))
        ax.set_ylabel(r"Regret$_{\rm Asym,T}(A(T^q), \Pi_T)$ (median, seeds)")
        axg.set_ylabel(r"context gap $\min_{\Pi_{T^q}} - \min_{\Pi_T}$ (median)"
                       + ("" if np.all(np.isfinite(gap)) else ", largest T only"))
        for a in (ax, axg):
            a.set_xscale("log", base=2)
            a.set_yscale("log")
            a.set_xlabel("T")
            if a.get_legend_handles_labels()[0]:
                a.legend(loc="upper left", fontsize=6)
        axs.axhline(summary["bound_slope"], color="0.4", ls=":", lw=0.8,
                    label=r"slope of $\sqrt{T}\log T$")
        axs.axhline(1.0, color="0.4", ls="--", lw=0.8, label="linear")
        axs.set_xticks(range(len(qs)))
        axs.set_xticklabels([f"T^{q:g}" for q in qs])
        axs.set_ylabel("slope of log regret vs log T (per seed)")
        axs.legend(loc="lower left", fontsize=6)
        axe.set_yscale("symlog", linthresh=1e-4)
        axe.axhline(1e-3, color="tab:red", ls=":", lw=0.8, label="0.1 %")
        axe.axhline(-1e-3, color="tab:red", ls=":", lw=0.8)
        axe.set_xticks(range(len(qs)))
        axe.set_xticklabels([f"T^{q:g}" for q in qs])
        axe.set_ylabel(f"R_T(T^q) / R_T(T) - 1 at T = {int(Ts[-1])} (per seed)")
        axe.legend(loc="upper right", fontsize=6)
    fig.suptitle(f"Asymmetric-Regret against the best full-context predictor, each learner at "
                 f"its best step (validation); n = {summary['n']}, k = {summary['k']}, "
                 f"{summary['seeds']} seeds, bound slope (sqrt(T) log T) = "
                 f"{summary['bound_slope']:.2f}", fontsize=8)
    paths = save_figure(fig, outdir, "regret_scaling")
    fig2, ax = figure(1, 1, width=6.4, height=3.6)
    for setup, ls in zip(setups, ("-", "--", "-.", ":")):
        t = arrays[f"{setup}_curve_t"]
        for j, q in enumerate(qs):
            ax.plot(t, np.median(arrays[f"{setup}_curves"][:, j, :], axis=0), ls,
                    color=colors[j], label=f"{setup}, T^{q:g}")
    ax.set_xscale("log")
    ax.set_yscale("symlog", linthresh=1e-3)
    ax.set_xlabel("t")
    ax.set_ylabel("regret over steps 1..t (median over seeds)")
    ax.set_title(f"regret curve over t, T = {int(Ts[-1])}")
    ax.legend(loc="upper left", fontsize=5, ncol=2)
    return paths + save_figure(fig2, outdir, "regret_curves")
