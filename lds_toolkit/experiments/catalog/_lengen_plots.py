"""Figures of the length-generalization experiments (Figures 2-4 and their step-size pages).

:func:`plot_learning` draws a figure's three panels (online losses per context T^q, their
ratio to the full-context learner on the same seed, the final loss against q) and, for
Figure 4, Algorithm 1 on the same systems and streams (dashed: the contrast the paper's
caption asks for). :func:`plot_step_size` draws the effect size against the constant step
size for every seed, with each seed's chosen step, safe step and stability edge marked.

Time axis: arrays hold the paper's u_t, y_t for t = 0..T-1 (``losses[..., t]`` is the loss of
the prediction of y_t). With x_0 = 0 and D = 0, y_0 = 0 and every learner predicts it exactly
(loss 0, left out of the log-scale plots); y_1 = C B u_0 is the first output an input reaches.
"""

from __future__ import annotations

import numpy as np

from ._lengen_common import qkey


def _full_index(qs) -> int | None:
    qs = [float(q) for q in qs]
    return qs.index(1.0) if 1.0 in qs else None


def plot_learning(config, summary, arrays, outdir, *, name: str, title: str):
    """The figure of one experiment (PNG and PDF) and its step-size figure; their paths."""
    from matplotlib import cm
    from matplotlib.ticker import MaxNLocator

    from ..plotting import band, figure, save_figure, smooth

    qs = arrays["q_values"]
    T = config["T"]
    w = config["smooth"]
    fig, (ax0, ax1, ax2) = figure(1, 3, width=13.0, height=4.4,
                                  gridspec_kw={"width_ratios": [1.6, 1.3, 1.0]})
    t = np.arange(T)  # the paper's t of y_t: losses[..., t] scores the prediction of y_t
    keep = t >= 1  # y_0 = 0 (x_0 = 0, D = 0) is predicted exactly: loss 0
    colors = cm.viridis(np.linspace(0.0, 0.9, len(qs)))
    sm = smooth(arrays["losses"], w)  # (seeds, q, T)
    full_j = _full_index(qs)
    late = t >= w  # ratios of moving averages once the window is full
    for j, q in enumerate(qs):
        label = f"L = T^{q:g} = {arrays['contexts'][j]}"
        band(ax0, t[keep], sm[:, j, keep], color=colors[j], label=label, center="median")
        if full_j is not None:
            ratio = sm[:, j, late] / np.maximum(sm[:, full_j, late], 1e-300)
            band(ax1, t[late], ratio, color=colors[j], label=label, center="median")
    if "alg1_losses" in arrays:  # Figure 4: Algorithm 1 on the same systems and streams
        a1 = smooth(arrays["alg1_losses"], w)  # (seeds, [shortest, full], T)
        for i, (ls, lab) in enumerate(((":", f"Algorithm 1, T^{min(qs):g}"),
                                       ("--", "Algorithm 1, full context"))):
            ax0.plot(t[keep], np.median(a1[:, i, keep], axis=0), ls, color="0.25", lw=1.2,
                     label=lab)
    ax0.set_yscale("log")
    ax0.set_xlabel("t (prediction of y_t)")
    ax0.set_ylabel(r"loss $\ell_t(M^t, T^q)$ (moving average)")
    ax0.set_title(f"{title}: median of {config['seeds']} seeds (min–max band), "
                  f"moving average over {w} steps", fontsize=8)
    ax0.legend(loc="upper right", fontsize=6)
    ax1.set_yscale("log")
    ax1.xaxis.set_major_locator(MaxNLocator(5))
    ax1.axhline(1.0, color="0.3", lw=0.8)
    ax1.set_xlabel("t (prediction of y_t)")
    ax1.set_ylabel("loss / loss of the full-context learner (q = 1)")
    ax1.set_title("same seed ratio (median, min–max band)")
    per_q = summary["per_q"]
    keys = [qkey(q) for q in qs]
    ax2.plot(qs, [np.median(per_q[k]["final_loss_per_seed"]) for k in keys], "o-", color="k",
             label="online learner (OGD), median")
    ax2.fill_between(qs, [per_q[k]["final_loss_min"] for k in keys],
                     [per_q[k]["final_loss_max"] for k in keys], color="k", alpha=0.15, lw=0)
    ax2.plot(qs, [np.median(per_q[k]["hindsight_final_loss_per_seed"]) for k in keys], "s--",
             color="tab:orange", label=r"best in hindsight over $\Pi_{T^q}$, median")
    if "alg1_full_final_loss_per_seed" in summary:
        ax2.plot([min(qs), 1.0], [np.median(summary["alg1_short_final_loss_per_seed"]),
                                  np.median(summary["alg1_full_final_loss_per_seed"])],
                 "x:", color="0.25", label="Algorithm 1 (same streams), median")
    ax2.axhline(summary["trivial_final_loss"], color="0.5", ls=":", label=r"$\hat y_t = y_{t-1}$")
    ax2.set_yscale("log")
    ax2.set_xlabel("q (context T^q)")
    ax2.set_ylabel("mean loss over the last quarter")
    ax2.set_title(f"T = {T}, k = {config['k']}, n = {config['n']}")
    ax2.legend(loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=1, fontsize=6)
    return save_figure(fig, outdir, name) + plot_step_size(config, summary, outdir,
                                                           name=f"{name}_step_size",
                                                           title=title)


def _nan(values):
    return np.array([np.nan if v is None else v for v in values], dtype=float)


def plot_step_size(config, summary, outdir, *, name: str, title: str):
    """The effect size (final loss at the shortest context over the full-context one)
    against the constant step size, one line per seed, with each seed's chosen step (the
    validation search's, where it chose a constant step), safe step and stability edge."""
    from ..plotting import figure, save_figure

    sens = summary["step_size_sensitivity"]
    lrs = np.asarray(sens["lrs"], dtype=float)
    ratios = np.array([_nan(r) for r in sens["ratio_per_seed"]])  # (seeds, lrs)
    fig, (ax, ax1) = figure(1, 2, width=9.0, height=3.4)
    for i, r in enumerate(ratios):
        ax.plot(lrs, r, "-", color="0.6", lw=0.6, alpha=0.8,
                label=f"each of {len(ratios)} seeds" if i == 0 else None)
    ax.plot(lrs, _nan(sens["ratio_median"]), "o-", color="k", lw=1.6, label="median")
    constant = [s == "constant" for s in sens["chosen_schedule_per_seed"]]
    chosen = _nan([lr if c else None for lr, c in
                   zip(sens["chosen_lr_per_seed"], constant)])
    at_chosen = _nan(sens["ratio_at_chosen_per_seed"])
    n_inv = len(constant) - sum(constant)
    ax.plot(chosen, at_chosen, "o", color="tab:orange", ms=5,
            label="chosen step (validation)" + (f"; {n_inv} seed(s) chose 1/√t, not shown"
                                                if n_inv else ""))
    ax.plot(_nan(sens["safe_lr_per_seed"]), _nan(sens["ratio_at_safe_per_seed"]), "v",
            color="tab:green", ms=5,
            label=f"safe step ({sens['safe_step_factor']:g} × edge)")
    ax.axhline(1.0, color="0.5", lw=0.8)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("constant step size lr")
    ax.set_ylabel(f"final loss ratio, T^{sens['q']:g} / full (test stream)")
    ax.set_title(f"{title}: effect size against the step size", fontsize=8)
    ax.legend(fontsize=6)
    edges = _nan(sens["edge_per_seed"])
    ax1.hist(np.log2(edges[np.isfinite(edges)]), bins=np.arange(np.log2(lrs[0]) - 0.5,
                                                                 np.log2(lrs[-1]) + 1.0),
             color="tab:red", alpha=0.6, label="stability edge")
    ax1.hist(np.log2(chosen[np.isfinite(chosen)]), bins=np.arange(np.log2(lrs[0]) - 0.25,
                                                                  np.log2(lrs[-1]) + 1.0, 0.5),
             color="tab:orange", alpha=0.6, label="chosen step")
    ax1.set_xlabel("log2(lr)")
    ax1.set_ylabel("seeds")
    ax1.set_title("per seed: chosen step; edge = first step\nno better than "
                  "y_{t-1} (validation)", fontsize=7)
    ax1.legend(fontsize=6)
    return save_figure(fig, outdir, name)
