"""``nss-etc``: the NSS perturbation example of the S4++ paper (Sec. 2.2, Fig. 1), as curves.

1. Checks the paper's printed matrices against its own eq. 8 (they fail; the toolkit uses
   the consistent system of Tabuada 2007, :func:`lds_toolkit.control.paper_system`).
2. Runs the event-triggered loop with the paper's Lyapunov rule (eq. 12, κ = 0.5) on
   ``[0, 10]`` monitored on the grid ``h = 0.01`` (and, for reference, continuously).
3. Replays the recorded inputs open loop at the original instants and at instants perturbed
   by ``δ_i ~ U(-ε, ε)``, ε = h/2 by default, and reports ``max |x|`` of both (Fig. 1).
4. Sweeps the final ``|x(10)|`` of the perturbed replay over ε (from 1e-6 h to 0.9 h) and
   over κ, one curve per seed, plus the contrast the paper does not show: the same loop
   *with feedback*, monitored on a grid jittered by ε, stays stable.

Each task is one seed (one perturbation draw per point); the ETC runs are deterministic.
"""

from __future__ import annotations

import numpy as np

from ...control import (
    LyapunovRule,
    level_set,
    nss_experiment,
    nss_sweep,
    paper_system,
    printed_matrices_check,
    simulate_etc,
)
from ..base import Experiment, register
from ..claims import Claim
from ..plotting import band, figure, save_figure
from ._config_ranges import F64, POSITIVE, ListOf, Real, Relation

_TRAJ_KEYS = ("t", "x_etc", "x_original", "x_perturbed", "x_jittered", "V", "V_bound")


@register
class NSSETC(Experiment):
    name = "nss-etc"
    description = "event-triggered control, replay of its samples at perturbed instants (NSS)"
    paper = "S4++, Sec. 2.2 / Fig. 1"
    claims = (
        Claim("original-stable", "S4++", "Fig. 1 (third panel)",
              "replaying the recorded ETC inputs at the original instants keeps the state "
              "bounded (max |x| at most twice |x0| = 1)",
              "max_abs_state/original", "<=", 2.0,
              note="open loop through the unstable plant: the replay reproduces the "
                   "closed-loop trajectory up to rounding, which the plant amplifies too "
                   "(docs/control.md)"),
        Claim("perturbed-reaches-1e6", "S4++", "Fig. 1 (rightmost panel)",
              "replaying the same inputs at instants perturbed within the grid width (eps = h/2) "
              "makes |x| grow to the order of 10^6 (median over perturbation draws)",
              "max_abs_state/ratio_per_seed", ">=", 1e6, per_seed=True, min_share=0.5,
              note="max |x| of the perturbed replay over that of the original replay, one "
                   "perturbation draw per seed, 16 draws at every scale (the quick scale's "
                   "3 draws gave a median of 6.0e5 for base seed 2: the draws range over "
                   "1e5-5e6); x0 and kappa are not printed in the paper (x0 = (1, 0), "
                   "kappa = 0.5 here)"),
        Claim("every-draw-diverges", "S4++", "Sec. 2.2",
              "nearly every perturbation draw (at least 9 in 10), not just a lucky one, blows "
              "the state up by at least four orders of magnitude",
              "max_abs_state/ratio_per_seed", ">=", 1e4, per_seed=True, min_share=0.9,
              note="per draw: max |x| of the perturbed replay over that of the original "
                   "replay. Not every draw: over base seeds 0-9 at quick scale one draw of "
                   "160 grew |x| by 2.4e3 only (the next smallest 1.4e4, then 8.5e4), so a "
                   "claim on the smallest of 16 draws fails on about one base seed in ten; "
                   "15 of 16 draws fails on about one in 200"),
        Claim("printed-example-eq8", "S4++", "Sec. 2.2, eq. 8",
              "the printed example (A, B, T, P, M) satisfies the paper's Lyapunov equation, "
              "eq. 8", "printed_matrices_check/printed_satisfies_eq8", "is", True, scales=(),
              note="it does not: T is printed as a column (B T undefined) and, read as a row, "
                   "the closed loop is unstable (residual norm 12.7); the experiment uses the "
                   "consistent system of Tabuada (2007) with the same P and M "
                   "(paper_system(), docs/control.md section 2)",
              records_paper_error=True, override_harmless=("*",)),
    )

    # what each config entry may hold, checked before any task (experiments/config/ranges.py)
    ranges = {"magnitude_fractions": ListOf(Real(0.0, 1.0, low_open=True, high_open=True)),
              "kappas": ListOf(Real(0.0, 1.0, low_open=True, high_open=True)),
              "horizon": Real(0.0, 1e9, low_open=True), "grid_step": POSITIVE,
              "kappa": Real(0.0, 1.0, low_open=True, high_open=True),
              "magnitude_fraction": Real(0.0, 1.0, low_open=True, high_open=True),
              "x0": ListOf(Real(), min_len=2, max_len=2), "output_step": POSITIVE,
              "bracket_step": POSITIVE, "tol": Real(0.0, 1.0, low_open=True, high_open=True)}
    relations = (Relation("grid_step", "<=", "horizon"), Relation("output_step", "<=", "horizon"),
                 Relation("bracket_step", "<=", "horizon"))

    def largest_array(self, config):
        steps = config["horizon"] / min(config["grid_step"], config["output_step"])
        return (F64 * 2 * (steps + 1),
                f"the (horizon / step = {steps:.3g}, 2) sampled trajectory")

    def config(self, scale, seeds):
        # medium = paper: the whole paper-scale sweep runs on a CPU in seconds
        if scale == "quick":
            # 16 perturbation draws, as at paper scale: a task is ~0.25 s of CPU, and the
            # median of 3 draws fell below 1e6 on one of base seeds 0-9 (5.99e5, seed 2)
            cfg = {"seeds": 16,
                   "magnitude_fractions": [1e-6, 1e-4, 1e-2, 0.1, 0.5, 0.9],
                   "kappas": [0.2, 0.5, 0.8]}
        else:
            cfg = {"seeds": 16,
                   "magnitude_fractions": [1e-6, 1e-5, 1e-4, 1e-3, 3e-3, 1e-2, 3e-2, 0.1,
                                           0.2, 0.3, 0.5, 0.7, 0.9],
                   "kappas": [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9]}
        cfg.update(horizon=10.0, grid_step=0.01, kappa=0.5, magnitude_fraction=0.5,
                   x0=[1.0, 0.0], output_step=0.002, bracket_step=1e-3, tol=1e-10)
        if seeds is not None:
            cfg["seeds"] = seeds
        return cfg

    def run_task(self, config, task, rng):
        system = paper_system()
        h = config["grid_step"]
        rule = LyapunovRule(config["kappa"])
        fig_rng, sweep_rng = rng.spawn(2)
        etc = simulate_etc(system, rule, config["x0"], horizon=config["horizon"], mode="grid",
                           grid_step=h, output_step=config["output_step"])
        exact = simulate_etc(system, rule, config["x0"], horizon=config["horizon"],
                             mode="exact", bracket_step=config["bracket_step"],
                             tol=config["tol"], output_step=config["output_step"])
        r = nss_experiment(system, rule, config["x0"], horizon=config["horizon"], grid_step=h,
                           magnitude=config["magnitude_fraction"] * h, rng=fig_rng, etc=etc)
        sw = nss_sweep(system, config["x0"],
                       magnitudes=[f * h for f in config["magnitude_fractions"]],
                       kappas=config["kappas"], seeds=1, rng=sweep_rng,
                       horizon=config["horizon"], grid_step=h, default_kappa=config["kappa"],
                       default_magnitude=config["magnitude_fraction"] * h)
        return {
            "max_abs_original": r.max_abs_original,
            "max_abs_perturbed": r.max_abs_perturbed,
            "max_abs_jittered_etc": r.max_abs_jittered_etc,
            "final_abs_original": r.final_abs_original,
            "final_abs_perturbed": r.final_abs_perturbed,
            "replay_error": r.replay_error,
            "etc_grid": etc.summary(), "etc_exact": exact.summary(),
            "sample_times": etc.sample_times, "perturbed_times": r.perturbed_times,
            "inputs": etc.inputs, "exact_sample_times": exact.sample_times,
            "jittered_sample_times": r.etc_jittered.sample_times,
            "t": r.t, "x_etc": etc.x, "x_original": r.x_original,
            "x_perturbed": r.x_perturbed, "x_jittered": r.etc_jittered.x,
            "V": etc.V, "V_exact": exact.V, "V_bound": exact.V_bound,
            "sweep": {k: np.asarray(v) for k, v in sw.items()},
        }

    def summarize(self, config, tasks, results):
        h = config["grid_step"]
        first = results[0]
        ratios = np.array([r["max_abs_perturbed"] / r["max_abs_original"] for r in results])
        sweeps = [r["sweep"] for r in results]
        fm = np.concatenate([s["final_norm_vs_magnitude"] for s in sweeps])      # seeds x E
        jm = np.concatenate([s["jittered_etc_final_norm_vs_magnitude"] for s in sweeps])
        fk = np.concatenate([s["final_norm_vs_kappa"] for s in sweeps])          # seeds x Q
        mags = np.asarray(sweeps[0]["magnitudes"])
        # growth law: log-log slope of the median final |x| against ε
        slope = float(np.polyfit(np.log(mags), np.log(np.median(fm, axis=0)), 1)[0])

        def stats(a):
            return {"median": np.median(a, axis=0), "min": a.min(axis=0),
                    "max": a.max(axis=0)}

        system = paper_system()
        summary = {
            "system": {**system.as_dict(), "x0": config["x0"],
                       "rule": LyapunovRule(config["kappa"]).params(),
                       "open_loop_eigenvalues": np.linalg.eigvals(system.A).real,
                       "closed_loop_eigenvalues": [[z.real, z.imag] for z in
                                                   np.linalg.eigvals(system.closed_loop)],
                       "decay_rate_iota": system.decay_rate},
            "printed_matrices_check": printed_matrices_check(),
            "events": first["etc_grid"]["events"],
            "events_counting": "triggered updates in (0, 10]; the initial sample at t = 0 "
                               "is not counted",
            "min_inter_event": first["etc_grid"]["min_inter_event"],
            "monitoring": {"grid": first["etc_grid"], "exact": first["etc_exact"]},
            "max_abs_state": {
                "original": first["max_abs_original"],
                "perturbed": first["max_abs_perturbed"],
                "ratio": first["max_abs_perturbed"] / first["max_abs_original"],
                "magnitude": config["magnitude_fraction"] * h,
                "jittered_grid_etc": first["max_abs_jittered_etc"],
                "ratio_over_seeds": {"median": float(np.median(ratios)),
                                     "min": float(ratios.min()), "max": float(ratios.max())},
                "ratio_per_seed": ratios,
                "replay_error_original": first["replay_error"],
            },
            "sweep": {
                "magnitudes": mags,
                "magnitude_over_grid_step": mags / h,
                "final_norm_vs_magnitude": stats(fm),
                "loglog_slope_vs_magnitude": slope,
                "jittered_etc_final_norm_vs_magnitude": stats(jm),
                "kappas": np.asarray(sweeps[0]["kappas"]),
                "final_norm_vs_kappa": stats(fk),
                "events_vs_kappa": sweeps[0]["events_vs_kappa"],
                "min_inter_event_vs_kappa": sweeps[0]["min_inter_event_vs_kappa"],
                "original_final_norm_vs_kappa": sweeps[0]["original_final_norm_vs_kappa"],
                "seeds": len(results),
            },
        }
        arrays = {k: first[k] for k in _TRAJ_KEYS}
        arrays.update(sample_times=first["sample_times"],
                      perturbed_times=first["perturbed_times"], inputs=first["inputs"],
                      exact_sample_times=first["exact_sample_times"], V_exact=first["V_exact"],
                      jittered_sample_times=first["jittered_sample_times"],
                      magnitudes=mags, kappas=np.asarray(sweeps[0]["kappas"]),
                      final_norm_vs_magnitude=fm, jittered_etc_final_norm_vs_magnitude=jm,
                      final_norm_vs_kappa=fk)
        return summary, arrays

    def plot(self, config, summary, arrays, outdir):
        return (_fig1(config, summary, arrays, outdir) + _sweep_fig(config, summary, arrays,
                                                                      outdir)
                + _lyapunov_fig(config, summary, arrays, outdir))


def _steps(ax, times, values, horizon, **kw):
    t = np.append(times[times <= horizon], horizon)
    v = values[: t.size - 1, 0]
    ax.step(t, np.append(v, v[-1]), where="post", **kw)


def _fig1(config, summary, arrays, outdir):
    t = arrays["t"]
    ts, tp, u = arrays["sample_times"], arrays["perturbed_times"], arrays["inputs"]
    H = config["horizon"]
    fig, ax = figure(1, 4, width=15.0, height=3.3)
    ax[0].plot(t, arrays["x_etc"][:, 0], label="x₁")
    ax[0].plot(t, arrays["x_etc"][:, 1], label="x₂")
    for s in ts[1:]:
        ax[0].axvline(s, color="0.6", ls="--", lw=0.5)
    ax[0].set_title(f"ETC, h = {config['grid_step']:g}: {summary['events']} events "
                    "(dashed)")
    ax[0].legend(loc="upper right")
    _steps(ax[1], ts, u, H, label="original u", color="C0", lw=1.6)
    _steps(ax[1], tp, u, H, label=f"perturbed, ε = {summary['max_abs_state']['magnitude']:g}",
           color="C3", lw=0.9, ls="--")
    ax[1].set_title("sampled input: original vs perturbed instants")
    ax[1].legend(loc="upper right")
    ax[2].plot(t, arrays["x_original"][:, 0], label="x₁")
    ax[2].plot(t, arrays["x_original"][:, 1], label="x₂")
    ax[2].set_title(f"open-loop replay, original instants: max|x| = "
                    f"{summary['max_abs_state']['original']:.3g}")
    ax[2].legend(loc="upper right")
    ax[3].semilogy(t, np.linalg.norm(arrays["x_perturbed"], axis=1), color="C3",
                   label="replay, perturbed instants")
    ax[3].semilogy(t, np.linalg.norm(arrays["x_original"], axis=1), color="C0",
                   label="replay, original instants")
    ax[3].semilogy(t, np.linalg.norm(arrays["x_jittered"], axis=1), color="C2", lw=0.9,
                   label="ETC with feedback, jittered grid")
    ax[3].set_title(f"|x(t)|: max {summary['max_abs_state']['perturbed']:.3g} vs "
                    f"{summary['max_abs_state']['original']:.3g}")
    ax[3].legend(loc="center left")
    for a in ax:
        a.set_xlabel("t")
    return save_figure(fig, outdir, "nss_etc_fig1")


def _sweep_fig(config, summary, arrays, outdir):
    mags = arrays["magnitudes"]
    h = config["grid_step"]
    fig, ax = figure(1, 3, width=13.0, height=3.4)
    band(ax[0], mags / h, arrays["final_norm_vs_magnitude"], color="C3",
         label="open-loop replay, perturbed instants", center="median")
    band(ax[0], mags / h, arrays["jittered_etc_final_norm_vs_magnitude"], color="C2",
         label="ETC with feedback, jittered grid", center="median")
    ax[0].set_xscale("log")
    ax[0].set_yscale("log")
    ax[0].set_xlabel("perturbation half-width ε / h")
    ax[0].set_ylabel("|x(10)|")
    ax[0].set_title(f"final |x| vs ε (median, min–max over {summary['sweep']['seeds']} "
                    f"seeds); slope {summary['sweep']['loglog_slope_vs_magnitude']:.2f}")
    ax[0].legend(loc="center right")
    kap = arrays["kappas"]
    band(ax[1], kap, arrays["final_norm_vs_kappa"], color="C3", center="median",
         label=f"perturbed replay, ε = {summary['max_abs_state']['magnitude']:g}")
    ax[1].plot(kap, summary["sweep"]["original_final_norm_vs_kappa"], "o-", color="C0",
               label="replay, original instants")
    ax[1].set_yscale("log")
    ax[1].set_xlabel("κ (eq. 12)")
    ax[1].set_ylabel("|x(10)|")
    ax[1].set_title("final |x| vs κ")
    ax[1].legend(loc="center right")
    l1, = ax[2].plot(kap, summary["sweep"]["events_vs_kappa"], "o-", color="C0",
                     label="events on [0, 10] (left)")
    ax2 = ax[2].twinx()
    l2, = ax2.plot(kap, summary["sweep"]["min_inter_event_vs_kappa"], "s--", color="C1",
                   label="min inter-event time (right)")
    ax[2].set_xlabel("κ")
    ax[2].set_ylabel("events on [0, 10]", color="C0")
    ax2.set_ylabel("min inter-event time", color="C1")
    ax[2].legend(handles=[l1, l2], loc="upper center")
    ax[2].set_title("ETC sampling vs κ (h = 0.01)")
    return save_figure(fig, outdir, "nss_etc_sweep")


def _lyapunov_fig(config, summary, arrays, outdir):
    P = np.asarray(summary["system"]["P"])
    x = arrays["x_etc"]
    V = arrays["V_exact"]
    fig, ax = figure(1, 2, width=9.5, height=3.6)
    for c in (0.05, 0.2, 0.5, float(x[0] @ P @ x[0])):
        pts = level_set(P, c)
        ax[0].plot(pts[:, 0], pts[:, 1], color="0.7", lw=0.8)
    ax[0].plot(x[:, 0], x[:, 1], color="C0", label="ETC trajectory")
    xs = arrays["x_etc"][np.searchsorted(arrays["t"], arrays["sample_times"][1:] - 1e-12)]
    ax[0].plot(xs[:, 0], xs[:, 1], ".", color="C3", ms=4, label="events")
    ax[0].set_aspect("equal")
    ax[0].set_xlabel("x₁")
    ax[0].set_ylabel("x₂")
    ax[0].set_title("level sets of V = xᵀPx")
    ax[0].legend(loc="lower left")
    t = arrays["t"]
    ax[1].semilogy(t, V, label="V(t), continuous monitoring")
    ax[1].semilogy(t, arrays["V"], lw=0.9, label="V(t), grid h = 0.01")
    ax[1].semilogy(t, arrays["V_bound"], "k--", lw=0.9, label="bound of eq. 13")
    ax[1].set_xlabel("t")
    ax[1].set_title(f"V(0) e^(-(1-κ)ιt), ι = λmin(M)/λmax(P) = "
                    f"{summary['system']['decay_rate_iota']:.3f}")
    ax[1].legend(loc="lower left")
    return save_figure(fig, outdir, "nss_etc_lyapunov")
