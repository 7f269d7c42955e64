"""``regret-scaling``: Asymmetric-Regret at T against T, Algorithms 1 and 2.

For each horizon T of the sweep and each seed: Algorithm 1 on a Region A system and
Algorithm 2 on a Region B system (regions of :func:`~lds_toolkit.systems.eigenvalue_regions`
at that T, q = 7/8; n, k, inputs and radius as in :mod:`.lengen_common`), each with context
T^q for q in ``q_values``, trained by OGD with the theory's schedule eta_t = lr / sqrt(t).
The same rule sets ``lr`` for every T (one algorithm, horizons varying):
lr = ``lr_scale`` / E||x_t||^2, the features' mean squared norm measured on a held-out input
stream of the same system -- half the stability limit of the first LMS step for
``lr_scale = 0.5``; no tuning against the regret.
Regret_Asymmetric,T(A(T^q), Pi_T) (Definition 3) is the learner's total loss minus the
best-in-hindsight total loss of the full-context class Pi_T over K_r, solved exactly.
Theorems 5 and 6 bound it by O~(sqrt(T)); the summary reports the slope of a least-squares
line through log(mean regret) against log T.
"""

from __future__ import annotations

import warnings

import numpy as np

from ...learning import FilterPrecisionWarning
from ...learning.regret import asymmetric_regret, loglog_slope
from ..base import Experiment, register
from ..plotting import figure, save_figure
from .lengen_common import (
    ALGORITHMS,
    context_length,
    draw_system,
    qkey,
    streams,
)

SETUPS = {"alg1-regionA": (1, "A"), "alg2-regionB": (2, "B")}


@register
class RegretScaling(Experiment):
    name = "regret-scaling"
    description = "Asymmetric-Regret at T against T for Algorithms 1 and 2 (Theorems 5, 6)"
    paper = "length generalization, Theorems 5 and 6"

    def config(self, scale, seeds):
        if scale == "quick":
            cfg = {"T_values": [2**7, 2**8, 2**9, 2**10], "k": 16, "n": 64, "seeds": 2}
        else:
            cfg = {"T_values": [2**9, 2**10, 2**11, 2**12, 2**13, 2**14], "k": 24, "n": 512,
                   "seeds": 4}
        cfg.update(region_q=7 / 8, q_values=[1 / 2, 7 / 8, 1.0], d_in=1, d_out=1,
                   lr_scale=0.5, curve_points=24)
        if seeds is not None:
            cfg["seeds"] = seeds
        return cfg

    def tasks(self, config):
        return [{"seed_index": s, "T": T} for s in range(config["seeds"])
                for T in config["T_values"]]

    def run_task(self, config, task, rng):
        T = task["T"]
        cfg = dict(config, T=T)
        out = {}
        for setup, (alg, region) in SETUPS.items():
            cls = ALGORITHMS[alg]
            system = draw_system(cfg, region, rng)
            (u_val, y_val), (u, y) = streams(system, T, rng)
            radius = float(np.linalg.norm(system.B, 2) * np.linalg.norm(system.C, 2))
            regrets, curves = [], []
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", FilterPrecisionWarning)
                X, _ = cls(horizon=T, k=config["k"]).design(u_val, y_val)
                lr = config["lr_scale"] / float(np.mean(np.sum(X**2, axis=(1, 2))))
                schedule = "inv_sqrt"
                for q in config["q_values"]:
                    learner = cls(horizon=T, k=config["k"], context=context_length(T, q),
                                  radius=radius, lr=lr, lr_schedule=schedule)
                    curve = asymmetric_regret(learner, u, y, n_points=config["curve_points"])
                    regrets.append(curve.final)
                    curves.append(np.stack([curve.t, curve.regret]))
            out[setup] = {"regret": regrets, "curves": curves, "lr": lr}
        return out

    def summarize(self, config, tasks, results):
        Ts = config["T_values"]
        summary = {"T_values": Ts, "k": config["k"], "n": config["n"],
                   "seeds": config["seeds"], "theory_slope": 0.5}
        arrays = {"T_values": np.asarray(Ts)}
        for setup in SETUPS:
            reg = np.zeros((config["seeds"], len(Ts), len(config["q_values"])))
            for task, res in zip(tasks, results):
                reg[task["seed_index"], Ts.index(task["T"])] = res[setup]["regret"]
            arrays[f"{setup}_regret"] = reg
            entry = {}
            for j, q in enumerate(config["q_values"]):
                mean = reg[:, :, j].mean(axis=0)
                e = {"regret_mean": mean.tolist(), "regret_at_T": float(mean[-1])}
                if np.all(mean > 0):
                    fit = loglog_slope(Ts, mean)
                    e.update(slope=fit.slope, slope_stderr=fit.slope_stderr,
                             intercept=fit.intercept)
                else:
                    e.update(slope=None, note="non-positive mean regret: no log-log fit")
                entry[qkey(q)] = e
            entry["step_sizes"] = {str(task["T"]): res[setup]["lr"]
                                   for task, res in zip(tasks, results)
                                   if task["seed_index"] == 0}
            summary[setup] = entry
            last = [res[setup]["curves"] for task, res in zip(tasks, results)
                    if task["T"] == Ts[-1]]
            arrays[f"{setup}_curve_t"] = last[0][0][0]
            arrays[f"{setup}_curves"] = np.stack([[c[1] for c in cs] for cs in last])
        return summary, arrays

    def plot(self, config, summary, arrays, outdir):
        from matplotlib import cm

        Ts = np.asarray(summary["T_values"], dtype=float)
        qs = config["q_values"]
        colors = cm.viridis(np.linspace(0.0, 0.9, len(qs)))
        fig, axes = figure(1, 3, width=13.0, height=3.6)
        for ax, setup in zip(axes[:2], SETUPS):
            reg = arrays[f"{setup}_regret"]
            for j, q in enumerate(qs):
                e = summary[setup][qkey(q)]
                ax.plot(Ts, reg[:, :, j].T, ".", color=colors[j], alpha=0.4)
                lab = f"L = T^{q:g}"
                if e.get("slope") is not None:
                    lab += f": slope {e['slope']:.2f} ± {e['slope_stderr']:.2f}"
                    ax.plot(Ts, np.exp(e["intercept"]) * Ts ** e["slope"], "-",
                            color=colors[j], label=lab)
            ref = reg.mean(axis=(0, 2))
            ax.plot(Ts, ref[0] * np.sqrt(Ts / Ts[0]), "k:", label=r"$\propto \sqrt{T}$")
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            ax.set_xlabel("T")
            ax.set_ylabel(r"Regret$_{\rm Asym,T}(A(T^q), \Pi_T)$")
            ax.set_title(setup.replace("-", ", ").replace("alg", "Algorithm ")
                         .replace("region", "Region "))
            ax.legend(loc="upper left")
        ax = axes[2]
        for setup, ls in zip(SETUPS, ("-", "--")):
            t = arrays[f"{setup}_curve_t"]
            for j, q in enumerate(qs):
                ax.plot(t, arrays[f"{setup}_curves"][:, j, :].mean(axis=0), ls, color=colors[j],
                        label=f"{setup}, T^{q:g}")
        ax.set_xscale("log")
        ax.set_yscale("symlog", linthresh=1.0)
        ax.set_xlabel("t")
        ax.set_ylabel("regret over steps 1..t")
        ax.set_title(f"regret curve over t, T = {int(Ts[-1])}")
        ax.legend(loc="upper left", fontsize=6)
        return save_figure(fig, outdir, "regret_scaling")
