"""``lengen-regions`` (Figure 1): eigenvalue Regions A and B and how they move with q.

Region B(q) = (1 - log T / (8 T^q), 1 - 1/(2 T^{5/4})) is where Theorem 5 gives no length
generalisation for context T^q; Region A hugs B(7/8) on both sides (left part
[0.9 (1 - log T/(8 T^{7/8})), 1 - log T/(8 T^{7/8})], right part [1 - 1/(2 T^{5/4}), 1]).
As q decreases below 7/8, B(q) grows to the left and swallows part of Region A's left part;
``summary.json`` gives, per q, the interval B(q), the share of Region A's left part that lies
in B(q) (``region_a_left_bad_share``), and 1/delta = 8 T^q / log T, the memory length at the
left edge of B(q) (an eigenvalue 1 - delta is forgotten after ~1/delta steps).
"""

from __future__ import annotations

import numpy as np

from ...systems import eigenvalue_regions
from ..base import Experiment, register
from ..plotting import COLORS, figure, save_figure
from ._config_ranges import LENGEN_RANGES, Check, ListOf, Q, region_b_problem
from ._lengen_common import Q_VALUES, context_length, qkey


def _bad_share(T, q, region_q):
    a_left = eigenvalue_regions(T, region_q).region_a[0]
    b = eigenvalue_regions(T, q).region_b
    lo, hi = max(a_left.low, b.low), min(a_left.high, b.high)
    return max(hi - lo, 0.0) / a_left.width


@register
class LengenRegions(Experiment):
    name = "lengen-regions"
    description = "eigenvalue Regions A and B of Theorem 5 and their dependence on q (Figure 1)"
    paper = "length generalization, Fig. 1"

    # what each config entry may hold, checked before any task (experiments/config/ranges.py)
    ranges = {"T": LENGEN_RANGES["T"], "region_q": Q, "q_values": ListOf(Q, unique=True),
              "q_grid": ListOf(Q, max_len=10**6)}
    relations = (Check(("q_grid", "T", "region_q", "q_values"), lambda c: next(
        (region_b_problem(c["T"], q) for q in [c["region_q"], *c["q_values"], *c["q_grid"]]
         if region_b_problem(c["T"], q)), None)),)

    def config(self, scale, seeds):
        return {"T": 2**10 if scale == "quick" else 2**14, "region_q": 7 / 8, "q_values": Q_VALUES,
                "q_grid": np.linspace(0.3, 1.0, 141).tolist(), "seeds": 1}

    def run_task(self, config, task, rng):
        T, rq = config["T"], config["region_q"]
        lows = [eigenvalue_regions(T, q).region_b.low for q in config["q_grid"]]
        share = [_bad_share(T, q, rq) for q in config["q_grid"]]
        return {"b_low": np.asarray(lows), "a_left_bad_share": np.asarray(share)}

    def summarize(self, config, tasks, results):
        T, rq = config["T"], config["region_q"]
        reg = eigenvalue_regions(T, rq)
        per_q = {}
        for q in config["q_values"]:
            b = eigenvalue_regions(T, q).region_b
            per_q[qkey(q)] = {
                "context": context_length(T, q),
                "region_b": [b.low, b.high],
                "one_minus_region_b": [1 - b.high, 1 - b.low],
                "memory_length_at_b_low": float(8 * T**q / np.log(T)),
                "region_a_left_bad_share": _bad_share(T, q, rq),
                "region_b_7_8_inside_b_q": bool(b.low <= reg.region_b.low),
            }
        summary = {
            "T": T, "region_q": rq,
            "region_a": [[iv.low, iv.high] for iv in reg.region_a],
            "region_b": [reg.region_b.low, reg.region_b.high],
            "per_q": per_q,
        }
        arrays = {"q_grid": np.asarray(config["q_grid"]), "b_low": results[0]["b_low"],
                  "a_left_bad_share": results[0]["a_left_bad_share"]}
        return summary, arrays

    def plot(self, config, summary, arrays, outdir):
        T = summary["T"]
        fig, (ax0, ax1) = figure(1, 2, width=10.5, height=4.0)
        # left: the number line of 1 - lambda for each q of the sweep (Figure 1)
        (al_lo, al_hi), (ar_lo, ar_hi) = summary["region_a"]
        floor = 0.2 * (1 - ar_lo)
        for i, q in enumerate(config["q_values"]):
            e = summary["per_q"][qkey(q)]
            blo, bhi = e["one_minus_region_b"]
            ax0.barh(i, blo - max(bhi, floor), left=max(bhi, floor), height=0.35,
                     color=COLORS["B"], alpha=0.8, label="Region B(q)" if i == 0 else None)
            for lo, hi in ((1 - al_hi, 1 - al_lo), (floor, 1 - ar_lo)):
                ax0.barh(i - 0.3, hi - lo, left=lo, height=0.2, color=COLORS["region_a"],
                         alpha=0.8, label="Region A (q = 7/8)" if (i == 0 and lo > floor)
                         else None)
        ax0.set_yticks(range(len(config["q_values"])))
        ax0.set_yticklabels([f"q = {q:g}" for q in config["q_values"]])
        ax0.set_xscale("log")
        ax0.set_xlabel(r"$1 - \lambda$ (log scale; right part of A extends to $\lambda = 1$)")
        ax0.set_title(f"Regions for T = {T}")
        ax0.legend(loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=2)
        # right: share of Region A's left part that is bad for context T^q
        ax1.plot(arrays["q_grid"], arrays["a_left_bad_share"], color=COLORS["B"])
        ax1.axvline(7 / 8, color="0.5", ls=":")
        ax1.set_xlabel("q (context T^q)")
        ax1.set_ylabel("share of Region A (left part) inside B(q)")
        ax1.set_title("Region A becomes bad as q decreases below 7/8")
        return save_figure(fig, outdir, "lengen_regions")
