"""``lds-impulse``: impulse responses of random symmetric LDS with eigenvalues in each region.

The length-generalization paper's Regions A and B (Section 4.1) are defined by how long an
input keeps influencing the output. This experiment makes that concrete: for each region
(left part of A, B, right part of A) it draws random symmetric systems, computes the impulse
response h_t = C A^{t-1} B with :func:`lds_toolkit.systems.simulate`, and measures

* ``tail_fraction[region][q]`` — the share of the response energy beyond lag T^q,
  Σ_{t > T^q} h_t² / Σ_t h_t², i.e. what a learner with context T^q cannot see;
* ``energy_time_99[region]`` — the lag by which 99% of the energy has arrived.

Region A-left forgets within T^{7/8} steps (small tail), Region B does not (large tail for
q < 7/8), and Region A-right barely decays at all: its long memory is what spectral filtering
captures without long context.
"""

from __future__ import annotations

import numpy as np

from ...systems import eigenvalue_regions, random_lds, simulate
from ..base import Experiment, register
from ..plotting import COLORS, band, figure, save_figure
from ._config_ranges import F64, LENGEN_RANGES, Check, ListOf, Q, region_b_problem
from ._lengen_common import context_length, qkey

REGIONS = ("A-left", "B", "A-right")


def _interval(regions, name):
    return {"A-left": regions.region_a[0], "B": regions.region_b,
            "A-right": regions.region_a[1]}[name]


@register
class ImpulseRegions(Experiment):
    name = "lds-impulse"
    description = "impulse responses of random symmetric LDS per eigenvalue region"
    paper = "length generalization, Sec. 4.1 / Fig. 1"

    # what each config entry may hold, checked before any task (experiments/config/ranges.py)
    ranges = {"T": LENGEN_RANGES["T"], "n": LENGEN_RANGES["n"], "region_q": Q,
              "q_values": ListOf(Q, unique=True)}
    relations = (Check(("region_q", "T"), lambda c: region_b_problem(c["T"], c["region_q"])),)

    def largest_array(self, config):
        T, n = config["T"], config["n"]
        return max((F64 * n * n * 2, f"the ({n}, {n}) complex eigenvectors of the system"),
                   (F64 * 4 * (T + 1), f"the (T+1 = {T + 1},) impulse response and energies"))

    def config(self, scale, seeds):
        # medium = paper: the impulse responses at T = 2^14, n = 512 take seconds
        if scale == "quick":
            cfg = {"T": 2**10, "n": 64, "seeds": 3}
        else:
            cfg = {"T": 2**14, "n": 512, "seeds": 8}
        cfg.update(region_q=7 / 8, q_values=[1 / 2, 5 / 8, 3 / 4, 7 / 8, 1.0])
        if seeds is not None:
            cfg["seeds"] = seeds
        return cfg

    def tasks(self, config):
        return [{"seed_index": s, "region": r} for s in range(config["seeds"]) for r in REGIONS]

    def run_task(self, config, task, rng):
        T, n = config["T"], config["n"]
        regions = eigenvalue_regions(T, config["region_q"])
        system = random_lds(n, [_interval(regions, task["region"])], rng=rng)
        impulse = np.zeros((T + 1, 1))
        impulse[0, 0] = 1.0
        h = simulate(system, impulse, return_states=False).y[1:, 0]  # h_t, t = 1..T
        energy = np.cumsum(h**2)
        total = energy[-1]
        tails = {}
        for q in config["q_values"]:
            L = context_length(T, q)
            tails[qkey(q)] = float((total - energy[L - 1]) / total)
        t99 = int(np.searchsorted(energy, 0.99 * total) + 1)
        return {"h": h, "tail_fraction": tails, "energy_time_99": t99,
                "eigenvalues": np.linalg.eigvalsh(system.A)}

    def summarize(self, config, tasks, results):
        qs = [qkey(q) for q in config["q_values"]]
        tail, t99 = {}, {}
        for r in REGIONS:
            rows = [res for task, res in zip(tasks, results) if task["region"] == r]
            tail[r] = {q: float(np.mean([res["tail_fraction"][q] for res in rows])) for q in qs}
            t99[r] = float(np.mean([res["energy_time_99"] for res in rows]))
        regions = {}
        for q in config["q_values"]:
            reg = eigenvalue_regions(config["T"], q)
            regions[qkey(q)] = {"B": list(reg.region_b), "A_left": list(reg.region_a[0]),
                                 "A_right": list(reg.region_a[1])}
        seeds = config["seeds"]
        h = np.stack([np.stack([res["h"] for task, res in zip(tasks, results)
                                if task["region"] == r]) for r in REGIONS])
        lam = np.stack([np.stack([res["eigenvalues"] for task, res in zip(tasks, results)
                                  if task["region"] == r]) for r in REGIONS])
        summary = {"T": config["T"], "n": config["n"], "seeds": seeds,
                   "regions": regions, "tail_fraction": tail, "energy_time_99": t99}
        return summary, {"impulse_response": h, "eigenvalues": lam,
                         "region_names": np.array(REGIONS)}

    def plot(self, config, summary, arrays, outdir):
        T = config["T"]
        fig, (ax0, ax1) = figure(1, 2, width=9.0, height=3.4)
        qgrid = np.linspace(0.5, 1.0, 101)
        b_lo = [1 - eigenvalue_regions(T, q).region_b.low for q in qgrid]
        b_hi = 1 - eigenvalue_regions(T, 0.5).region_b.high
        ax0.fill_betweenx(qgrid, b_hi, b_lo, color=COLORS["B"], alpha=0.35, label="Region B")
        ax0.fill_betweenx(qgrid, b_lo, [0.1 + 0.9 * v for v in b_lo], color=COLORS["A-left"],
                          alpha=0.35, label="Region A")
        ax0.fill_betweenx(qgrid, 1e-9, b_hi, color=COLORS["A-left"], alpha=0.35)
        ax0.set_xscale("log")
        ax0.set_xlabel("1 − λ")
        ax0.set_ylabel("q (context T^q)")
        ax0.set_title(f"eigenvalue regions, T = {T}")
        ax0.legend(loc="lower left")
        t = np.arange(1, T + 1)
        h2 = arrays["impulse_response"] ** 2
        tail = 1.0 - np.cumsum(h2, axis=-1) / h2.sum(axis=-1, keepdims=True)
        for i, r in enumerate(REGIONS):
            band(ax1, t[:-1], np.maximum(tail[i][:, :-1], 1e-16), color=COLORS[r],
                 label=f"Region {r}", center="median")
        for q in config["q_values"]:
            ax1.axvline(T**q, color="0.5", lw=0.6, ls=":")
        ax1.set_xscale("log")
        ax1.set_yscale("log")
        ax1.set_xlabel("lag t (dotted: T^q for q in the sweep)")
        ax1.set_ylabel("share of Σ h² after lag t")
        ax1.set_title("response energy after lag t (median, min–max)")
        ax1.legend(loc="lower left")
        return save_figure(fig, outdir, "impulse_regions")
