"""Shared pieces of the length-generalization experiments (Figures 2-4 and regret scaling).

One task = one seed: draw a random symmetric LDS of hidden dimension n whose eigenvalues lie
in Region A (half from each part) or Region B of :func:`lds_toolkit.systems.eigenvalue_regions`
(defined with q = 7/8, as in the paper's Section 4.1), feed i.i.d. N(0, I) inputs, simulate
with the paper's convention (``simulate(..., output="lengen")``: C A^l B is the coefficient of
u_{t-l} in y_{t+1}, as the sentence below eq. 1 says; D = 0), and run the learner with context
T^q for every q of the sweep on that same stream.

Choices the paper leaves open (documented in docs/learning/spectral_filtering.md):

* inputs u_t ~ N(0, I), d_in = d_out = 1, B ~ N(0, 1), C ~ N(0, 1/n), D = 0
  (:func:`~lds_toolkit.systems.random_lds`); ``data_convention`` = ``"lengen"`` (the
  paper's reading) or ``"eq1-literal"`` (eq. 1 as printed, one step more delay: for the
  erratum's measurement);
* radius r = ||B||_2 ||C||_2 (Theorems 5 and 6 ask for r >= ||B|| ||C||);
* step size: chosen per task on a held-out validation stream of the same system (an
  independent input sequence) as the (schedule, lr) that gives the **full-context** learner
  the smallest mean loss over the last quarter (:func:`choose_step_size`: the grid
  ``lr_grid`` of each schedule is widened at an edge until the best value is interior, then
  refined by factors sqrt(2)); the shorter contexts use the same step size.  The choice never
  looks at q < 1 nor at the test stream;
* context length L = ceil(T^q) (q = 1: L = T, the full-context learner);
* ``final_loss`` = mean loss over the last quarter of the steps; curves are smoothed with a
  trailing moving average of ``smooth`` steps before plotting;
* step-size sensitivity: the test-stream final loss at the shortest and the full context for
  every constant step size of ``sensitivity_lrs`` (how the effect size depends on the step).
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from ...learning import (
    BestInHindsight,
    FilterPrecisionWarning,
    LastValue,
    LearnerDivergedError,
    SpectralFiltering,
    SpectralFilteringAR2,
)
from ...systems import eigenvalue_regions, random_lds, simulate

Q_VALUES = [1 / 2, 5 / 8, 3 / 4, 7 / 8, 1.0]
ALGORITHMS = {1: SpectralFiltering, 2: SpectralFilteringAR2}
#: starting step-size grid per schedule (widened/refined by :func:`choose_step_size`)
LR_GRID = {"constant": [0.025, 0.05, 0.1, 0.2, 0.4, 0.8],
           "inv_sqrt": [0.25, 0.5, 1.0, 2.0, 4.0, 8.0]}
#: constant step sizes at which the effect size is measured on the test stream
SENSITIVITY_LRS = [0.025, 0.05, 0.1, 0.2, 0.4]


def context_length(T: int, q: float) -> int:
    """L = ceil(T^q), at most T (round-off guarded: 2^14 ** 0.5 is exactly 128)."""
    return int(min(T, math.ceil(T**q - 1e-9)))


def qkey(q: float) -> str:
    return f"{q:g}"


def scale_config(scale: str, seeds: int | None, **extra) -> dict:
    # medium = paper: Figures 2-4 at T = 2^14, n = 512 run on a CPU in minutes
    if scale == "quick":
        cfg = {"T": 2**10, "k": 16, "n": 64, "seeds": 3}
    else:
        cfg = {"T": 2**14, "k": 24, "n": 512, "seeds": 8}
    cfg.update(region_q=7 / 8, q_values=Q_VALUES, d_in=1, d_out=1, lr_grid=LR_GRID,
               sensitivity_lrs=SENSITIVITY_LRS, data_convention="lengen",
               filter_precision="double")
    cfg.update(extra)
    if seeds is not None:
        cfg["seeds"] = seeds
    return cfg


def derive_config(config: dict) -> dict:
    """Entries computed from others: the smoothing window T/64 of the figures."""
    config["smooth"] = max(config["T"] // 64, 1)
    return config


def draw_system(config, region: str, rng):
    T = config["T"]
    regions = eigenvalue_regions(T, config["region_q"])
    intervals = list(regions.region_a) if region == "A" else [regions.region_b]
    return random_lds(config["n"], intervals, d_in=config["d_in"], d_out=config["d_out"],
                      symmetric=True, rng=rng)


def streams(system, T, rng, convention: str = "lengen"):
    """Validation and test streams (u, y) of the same system, independent inputs.

    Each comes from its own child of ``rng``, so the stream of length T is a prefix of the
    stream of length 2T drawn from the same state (the horizons of ``regret-scaling`` are
    nested)."""
    val, test = rng.spawn(2)
    u = np.stack([g.standard_normal((T, system.n_inputs)) for g in (val, test)])
    y = simulate(system, u, output=convention, return_states=False).y
    return (u[0], y[0]), (u[1], y[1])


def final_loss(losses) -> float:
    """Mean loss over the last quarter of the steps."""
    n = len(losses)
    return float(np.mean(losses[n - max(n // 4, 1):]))


def _validation_loss(cls, config, radius, u, y, schedule, lr, criterion):
    learner = cls(horizon=config["T"], k=config["k"], context=None, radius=radius, lr=lr,
                  lr_schedule=schedule, filter_precision=config["filter_precision"])
    try:
        learner.fit_predict(u, y)
    except LearnerDivergedError:
        return math.inf
    val = (final_loss(learner.losses_) if criterion == "final"
           else float(np.sum(learner.losses_)))
    return val if np.isfinite(val) else math.inf


def _argbest(vals: dict) -> float:
    """The step size with the smallest loss (the smaller step on a tie)."""
    return min(vals, key=lambda lr: (vals[lr], lr))


def choose_step_size(cls, config, radius, u, y, criterion: str = "final",
                     max_extend: int = 8):
    """(schedule, lr) minimising the full-context learner's loss on the stream (u, y).

    For each schedule of ``config["lr_grid"]``: evaluate the grid; while the best value sits
    at an edge, add the next value beyond it (factor 2, at most ``max_extend`` times); then
    try the geometric midpoints (factor sqrt(2)) on both sides of the best.  A diverged
    learner counts as infinitely bad.  The chosen value is then *interior*: evaluated
    neighbours on both sides are worse (``search["interior"]`` says so, and is False only if
    the extension limit was hit).  ``criterion``: ``"final"`` (mean loss over the last
    quarter) or ``"total"`` (summed loss).

    Returns
    -------
    (schedule, lr), search : tuple, dict
        ``search`` maps each schedule to its evaluated ``[[lr, loss], ...]`` (sorted by lr;
        ``None`` for a diverged run) and holds ``"chosen"`` and ``"interior"``.
    """
    search, best, best_val = {}, None, math.inf
    interior_of = {}
    for schedule, grid in config["lr_grid"].items():
        vals = {float(lr): _validation_loss(cls, config, radius, u, y, schedule, lr, criterion)
                for lr in grid}

        for _ in range(max_extend):
            lrs = sorted(vals)
            b = _argbest(vals)
            if b == lrs[0] and np.isfinite(vals[b]):
                new = lrs[0] / 2
            elif b == lrs[-1] and np.isfinite(vals[b]):
                new = lrs[-1] * 2
            else:
                break
            vals[new] = _validation_loss(cls, config, radius, u, y, schedule, new, criterion)
        b = _argbest(vals)
        for new in (b / math.sqrt(2), b * math.sqrt(2)):
            if new not in vals:
                vals[new] = _validation_loss(cls, config, radius, u, y, schedule, new,
                                             criterion)
        b = _argbest(vals)
        lrs = sorted(vals)
        interior_of[schedule] = (np.isfinite(vals[b]) and lrs[0] < b < lrs[-1])
        search[schedule] = [[lr, vals[lr] if np.isfinite(vals[lr]) else None] for lr in lrs]
        if vals[b] < best_val:
            best, best_val = (schedule, b), vals[b]
    if best is None:
        raise RuntimeError("every step size of lr_grid diverged on the validation stream")
    search["chosen"] = list(best)
    search["interior"] = bool(interior_of[best[0]])
    return best, search


def run_learning_task(config, rng, *, region: str, algorithm: int) -> dict:
    """Learner losses for every q on one system (see module docstring)."""
    cls = ALGORITHMS[algorithm]
    T, k = config["T"], config["k"]
    precision = config["filter_precision"]
    system = draw_system(config, region, rng)
    (u_val, y_val), (u, y) = streams(system, T, rng, config["data_convention"])
    radius = float(np.linalg.norm(system.B, 2) * np.linalg.norm(system.C, 2))

    def learner(c, L, **kw):
        return c(horizon=T, k=k, context=L, radius=radius, filter_precision=precision, **kw)

    out = {}
    with warnings.catch_warnings(record=True) as caught:
        # a filter below the float64 floor is reported once per task in the summary (not
        # silenced): precision="extended" resolves them
        warnings.simplefilter("always", FilterPrecisionWarning)
        (schedule, lr), search = choose_step_size(cls, config, radius, u_val, y_val)
        full = BestInHindsight(learner(cls, None))
        full.fit_predict(u, y)
        bench_total = float(full.losses_.sum())  # min over Pi_T of the total loss
        losses, finals, regrets, hindsight = [], [], [], []
        for q in config["q_values"]:
            L = context_length(T, q)
            run = learner(cls, L, lr=lr, lr_schedule=schedule)
            run.fit_predict(u, y)
            losses.append(run.losses_)
            finals.append(final_loss(run.losses_))
            regrets.append(float(run.losses_.sum()) - bench_total)
            best_l = BestInHindsight(learner(cls, L))
            best_l.fit_predict(u, y)
            hindsight.append(final_loss(best_l.losses_))
        # effect size against the step size: shortest and full context, constant steps
        q_short = min(config["q_values"])
        sens = []
        for s_lr in config["sensitivity_lrs"]:
            row = []
            for L in (context_length(T, q_short), None):
                try:
                    r = learner(cls, L, lr=s_lr, lr_schedule="constant")
                    r.fit_predict(u, y)
                    row.append(final_loss(r.losses_))
                except LearnerDivergedError:
                    row.append(math.inf)
            sens.append(row)
        if algorithm == 2:
            # Algorithm 1 on the same system and streams, its own step-size search: the
            # paper's "contrast with Figure 3"
            (s1, lr1), _ = choose_step_size(SpectralFiltering, config, radius, u_val, y_val)
            a1 = learner(SpectralFiltering, None, lr=lr1, lr_schedule=s1)
            a1.fit_predict(u, y)
            out["alg1_full_final_loss"] = final_loss(a1.losses_)
            out["alg1_step_size"] = [s1, lr1]
    below_floor = sorted({str(w.message).split(":")[0] for w in caught
                          if issubclass(w.category, FilterPrecisionWarning)})
    for w in caught:  # everything else is passed on, not swallowed
        if not issubclass(w.category, FilterPrecisionWarning):
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    trivial = LastValue()
    trivial.fit_predict(u, y)
    out.update({
        "losses": np.asarray(losses),
        "final_loss": finals,
        "asymmetric_regret": regrets,
        "hindsight_final_loss": hindsight,
        "benchmark_total_loss": bench_total,
        "trivial_final_loss": final_loss(trivial.losses_),
        "lr": lr,
        "lr_schedule": schedule,
        "step_size_search": search,
        "sensitivity": np.asarray(sens),
        "filter_warnings": below_floor,
        "radius": radius,
        "eigenvalues": np.linalg.eigvalsh(system.A),
    })
    return out


def summarize_learning(config, results) -> tuple[dict, dict]:
    """Per q: final loss (mean, min, max, per seed), its ratio to the full-context learner
    (ratio of the seed means, and per seed), Asymmetric-Regret and best-in-hindsight loss;
    the step sizes chosen per seed with their search; the step-size sensitivity."""
    qs = config["q_values"]
    T = config["T"]
    finals = np.array([r["final_loss"] for r in results])  # (seeds, q)
    full_j = qs.index(1.0) if 1.0 in qs else None
    per_q = {}
    for j, q in enumerate(qs):
        fl = finals[:, j]
        rg = np.array([r["asymmetric_regret"][j] for r in results])
        hs = np.array([r["hindsight_final_loss"][j] for r in results])
        entry = {
            "context": context_length(T, q),
            "final_loss": float(fl.mean()),
            "final_loss_min": float(fl.min()),
            "final_loss_max": float(fl.max()),
            "final_loss_per_seed": fl.tolist(),
            "asymmetric_regret": float(rg.mean()),
            "asymmetric_regret_per_seed": rg.tolist(),
            "hindsight_final_loss": float(hs.mean()),
            "hindsight_final_loss_per_seed": hs.tolist(),
        }
        if full_j is not None:
            per_seed = fl / finals[:, full_j]
            entry["final_loss_ratio_to_full"] = float(fl.mean() / finals[:, full_j].mean())
            entry["final_loss_ratio_per_seed"] = per_seed.tolist()
            entry["final_loss_ratio_median"] = float(np.median(per_seed))
            entry["seeds_worse_than_full"] = int(np.sum(per_seed > 1.0))
        per_q[qkey(q)] = entry
    summary = {
        "T": T, "k": config["k"], "n": config["n"], "seeds": config["seeds"],
        "data_convention": config["data_convention"],
        "per_q": per_q,
        "trivial_final_loss": float(np.mean([r["trivial_final_loss"] for r in results])),
        "step_sizes": [[r["lr_schedule"], r["lr"]] for r in results],
        "step_sizes_interior": all(r["step_size_search"]["interior"] for r in results),
        "step_size_search": [r["step_size_search"] for r in results],
        "filters_below_float64_floor": sorted({w for r in results
                                               for w in r["filter_warnings"]}),
    }
    if full_j is not None:
        ratios = [per_q[qkey(q)]["final_loss_ratio_to_full"] for q in qs]
        summary["ratio_to_full_by_q"] = ratios
        summary["ratio_to_full_short"] = ratios[0]
        hind = [per_q[qkey(q)]["hindsight_final_loss"] for q in qs]
        summary["hindsight_short_over_full"] = hind[0] / hind[full_j]
    sens = np.stack([r["sensitivity"] for r in results])  # (seeds, lrs, 2)
    with np.errstate(invalid="ignore", divide="ignore"):
        sens_ratio = sens[:, :, 0] / sens[:, :, 1]
    summary["step_size_sensitivity"] = {
        "q": min(qs), "lrs": list(config["sensitivity_lrs"]),
        "ratio_median": [_finite_or_none(np.median(c)) for c in sens_ratio.T],
        "ratio_min": [_finite_or_none(np.min(c)) for c in sens_ratio.T],
        "ratio_max": [_finite_or_none(np.max(c)) for c in sens_ratio.T],
        "full_final_loss_median": [_finite_or_none(np.median(c)) for c in sens[:, :, 1].T],
    }
    if "alg1_full_final_loss" in results[0]:
        a1 = np.array([r["alg1_full_final_loss"] for r in results])
        mine = finals[:, full_j] if full_j is not None else finals[:, -1]
        summary["alg1_full_final_loss"] = float(a1.mean())
        summary["alg1_full_final_loss_per_seed"] = a1.tolist()
        summary["alg1_over_alg2_full"] = float(a1.mean() / mine.mean())
        summary["alg1_over_alg2_full_per_seed"] = (a1 / mine).tolist()
        summary["alg1_step_sizes"] = [r["alg1_step_size"] for r in results]
    arrays = {
        "losses": np.stack([r["losses"] for r in results]),  # (seeds, q, T)
        "q_values": np.asarray(qs),
        "contexts": np.asarray([context_length(T, q) for q in qs]),
        "eigenvalues": np.stack([r["eigenvalues"] for r in results]),
        "sensitivity": sens,  # (seeds, lrs, [shortest context, full context])
    }
    return summary, arrays


def _finite_or_none(x):
    x = float(x)
    return x if np.isfinite(x) else None


def plot_learning(config, summary, arrays, outdir, *, name: str, title: str):
    from matplotlib import cm
    from matplotlib.ticker import MaxNLocator

    from ..plotting import band, figure, save_figure, smooth

    qs = arrays["q_values"]
    T = config["T"]
    w = config["smooth"]
    fig, (ax0, ax1, ax2) = figure(1, 3, width=13.0, height=4.4,
                                  gridspec_kw={"width_ratios": [1.6, 1.3, 1.0]})
    t = np.arange(1, T + 1)
    keep = t >= 4  # y_0 = y_1 = 0 (x_0 = 0, D = 0) are predicted exactly: loss 0
    colors = cm.viridis(np.linspace(0.0, 0.9, len(qs)))
    sm = smooth(arrays["losses"], w)  # (seeds, q, T)
    full = sm[:, -1, :]
    for j, q in enumerate(qs):
        label = f"L = T^{q:g} = {arrays['contexts'][j]}"
        band(ax0, t[keep], sm[:, j, keep], color=colors[j], label=label)
        late = t > w  # ratios of moving averages once the window is full
        ratio = sm[:, j, late] / np.maximum(full[:, late], 1e-300)
        band(ax1, t[late], ratio, color=colors[j], label=label, center="median")
    ax0.set_yscale("log")
    ax0.set_xlabel("t")
    ax0.set_ylabel(r"loss $\ell_t(M^t, T^q)$ (moving average)")
    ax0.set_title(f"{title}: mean of {config['seeds']} seeds (min–max band), "
                  f"moving average over {w} steps", fontsize=8)
    ax0.legend(loc="upper right")
    ax1.set_yscale("log")
    ax1.xaxis.set_major_locator(MaxNLocator(5))
    ax1.axhline(1.0, color="0.3", lw=0.8)
    ax1.set_xlabel("t")
    ax1.set_ylabel("loss / loss of the full-context learner")
    ax1.set_title("same seed ratio (median, min–max band)")
    per_q = summary["per_q"]
    keys = [qkey(q) for q in qs]
    ax2.plot(qs, [per_q[k]["final_loss"] for k in keys], "o-", color="k",
             label="online learner (OGD)")
    ax2.fill_between(qs, [per_q[k]["final_loss_min"] for k in keys],
                     [per_q[k]["final_loss_max"] for k in keys], color="k", alpha=0.15, lw=0)
    ax2.plot(qs, [per_q[k]["hindsight_final_loss"] for k in keys], "s--", color="tab:orange",
             label=r"best in hindsight over $\Pi_{T^q}$")
    ax2.axhline(summary["trivial_final_loss"], color="0.5", ls=":", label=r"$\hat y_t = y_{t-1}$")
    ax2.set_yscale("log")
    ax2.set_xlabel("q (context T^q)")
    ax2.set_ylabel("mean loss over the last quarter")
    ax2.set_title(f"T = {T}, k = {config['k']}, n = {config['n']}")
    ax2.legend(loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=1)
    return save_figure(fig, outdir, name) + plot_step_size(config, summary, arrays, outdir,
                                                           name=f"{name}_step_size",
                                                           title=title)


def plot_step_size(config, summary, arrays, outdir, *, name: str, title: str):
    """The effect size against the (constant) step size: final loss at the shortest context
    over the full-context one, per seed (median and min–max), and where the search landed."""
    from ..plotting import figure, save_figure

    sens = summary["step_size_sensitivity"]
    lrs = np.asarray(sens["lrs"])
    ratio = arrays["sensitivity"][:, :, 0] / arrays["sensitivity"][:, :, 1]  # (seeds, lrs)
    fig, (ax, ax1) = figure(1, 2, width=8.0, height=3.0)
    ok = np.all(np.isfinite(ratio), axis=0)
    ax.plot(lrs[ok], np.median(ratio[:, ok], axis=0), "o-", color="k",
            label=f"median of {ratio.shape[0]} seeds")
    ax.fill_between(lrs[ok], ratio[:, ok].min(axis=0), ratio[:, ok].max(axis=0), color="k",
                    alpha=0.15, lw=0, label="min–max")
    chosen = [lr for sched, lr in summary["step_sizes"] if sched == "constant"]
    for i, lr in enumerate(chosen):
        ax.axvline(lr, color="tab:orange", lw=0.8, alpha=0.6,
                   label="chosen (validation)" if i == 0 else None)
    ax.axhline(1.0, color="0.5", lw=0.8)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("constant step size lr")
    ax.set_ylabel(f"final loss ratio, T^{sens['q']:g} / full")
    ax.set_title(f"{title}: effect size against the step size", fontsize=8)
    ax.legend(fontsize=6)
    full = arrays["sensitivity"][:, :, 1]
    ax1.plot(lrs[ok], np.median(full[:, ok], axis=0), "s-", color="tab:blue",
             label="full context")
    ax1.plot(lrs[ok], np.median(arrays["sensitivity"][:, ok, 0], axis=0), "o-",
             color="tab:red", label=f"T^{sens['q']:g}")
    ax1.set_xscale("log", base=2)
    ax1.set_yscale("log")
    ax1.set_xlabel("constant step size lr")
    ax1.set_ylabel("final loss (median over seeds)")
    ax1.legend(fontsize=6)
    return save_figure(fig, outdir, name)
