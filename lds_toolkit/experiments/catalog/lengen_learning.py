"""Figures 2-4 of the length-generalization paper: online losses for contexts T^q.

* ``lengen-region-a`` (Figure 2): Algorithm 1, eigenvalues half from each part of Region A;
* ``lengen-region-b`` (Figure 3): Algorithm 1, all eigenvalues in Region B;
* ``lengen-alg2`` (Figure 4): Algorithm 2, all eigenvalues in Region B (the same systems and
  inputs as ``lengen-region-b`` for the same seed: contrast with Figure 3).

Per q, ``summary.json`` holds ``final_loss`` (mean over seeds of the mean loss over the last
quarter of the steps), the Asymmetric-Regret at T against the full-context class Pi_T
(``asymmetric_regret``), and the best-in-hindsight loss of the class Pi_{T^q}
(``hindsight_final_loss``), which separates what the context allows from what OGD reaches in
T steps.  See :mod:`.lengen_common` for the protocol and the choices the paper leaves open.
"""

from __future__ import annotations

from ..base import Experiment, register
from ..claims import Claim
from .lengen_common import (
    derive_config,
    plot_learning,
    run_learning_task,
    scale_config,
    summarize_learning,
)


class _LengenLearning(Experiment):
    """One experiment per (region, algorithm); the figure file is named after ``name``."""

    region = "A"
    algorithm = 1

    def config(self, scale, seeds):
        return scale_config(scale, seeds, region=self.region, algorithm=self.algorithm)

    def derive(self, config):
        return derive_config(config)

    def run_task(self, config, task, rng):
        return run_learning_task(config, rng, region=config["region"],
                                 algorithm=config["algorithm"])

    def summarize(self, config, tasks, results):
        summary, arrays = summarize_learning(config, results)
        summary["region"] = config["region"]
        summary["algorithm"] = config["algorithm"]
        return summary, arrays

    def headline(self, summary):
        ratios = ", ".join(f"T^{q}: {e['final_loss_ratio_to_full']:.3g}"
                           for q, e in summary["per_q"].items()
                           if "final_loss_ratio_to_full" in e)
        steps = sorted({f"{s} {lr:.3g}" for s, lr in summary["step_sizes"]})
        return [f"final loss / full context: {ratios}",
                f"step sizes (validation, full context): {', '.join(steps)}"
                + ("" if summary["step_sizes_interior"] else " (NOT interior)")
                ] + super().headline(summary)

    def plot(self, config, summary, arrays, outdir):
        return plot_learning(config, summary, arrays, outdir, name=self.name.replace("-", "_"),
                             title=f"Algorithm {self.algorithm}, Region {self.region}")


LENGEN = "length generalization"
RATIO_SPREAD = "per_q/0.5/final_loss_ratio_per_seed"


def _class_level(where):
    return Claim("class-level", LENGEN, where,
                 "the best predictor in hindsight with context T^{1/2} loses at least 10x more "
                 "than the best full-context one (what the context allows, no step size)",
                 "hindsight_short_over_full", ">=", 10.0, scales=("quick", "paper"))


@register
class LengenRegionA(_LengenLearning):
    name = "lengen-region-a"
    description = "Algorithm 1 on Region A systems, contexts T^q (Figure 2)"
    paper = "length generalization, Fig. 2"
    region, algorithm = "A", 1
    claims = (
        Claim("short-fails", LENGEN, "Fig. 2",
              "context T^{1/2} fails: its final loss is at least 20x the full-context one",
              "ratio_to_full_short", ">=", 20.0, scales=("quick", "paper"),
              spread=RATIO_SPREAD, note="ratio of the seed means of the final loss"),
        Claim("monotone", LENGEN, "Fig. 2",
              "the loss ratio to full context does not increase with q",
              "ratio_to_full_by_q", "nonincreasing", 0.05, scales=("quick", "paper"),
              note="an entry may exceed its predecessor by at most 5 %"),
        Claim("7/8-matches", LENGEN, "Fig. 2",
              "context T^{7/8} matches full context (final loss within 10 %)",
              "per_q/0.875/final_loss_ratio_to_full", "between", (0.9, 1.1),
              scales=("paper",), spread="per_q/0.875/final_loss_ratio_per_seed",
              note="ratio of seed means; sensitive to one seed whose heavy Region-A mode sits "
                   "near the region's left edge (e^{-delta T^{7/8}} ~ 0.2 of its weight beyond "
                   "the context, log T / 8 = 1.2 at T = 2^14): measured in "
                   "docs/learning/spectral_filtering.md; at quick scale (log T / 8 = 0.87) "
                   "only the median claim is expected"),
        Claim("7/8-matches-median", LENGEN, "Fig. 2",
              "context T^{7/8} matches full context on the typical seed (median per-seed "
              "ratio within 10 %)",
              "per_q/0.875/final_loss_ratio_median", "between", (0.9, 1.1),
              scales=("quick", "paper"), spread="per_q/0.875/final_loss_ratio_per_seed"),
        _class_level("Fig. 2"),
    )


@register
class LengenRegionB(_LengenLearning):
    name = "lengen-region-b"
    description = "Algorithm 1 on Region B systems, contexts T^q (Figure 3)"
    paper = "length generalization, Fig. 3"
    region, algorithm = "B", 1
    claims = (
        Claim("short-fails", LENGEN, "Fig. 3",
              "Region B: context T^{1/2} is at least 5x worse than full context",
              "ratio_to_full_short", ">=", 5.0, scales=("quick", "paper"),
              spread=RATIO_SPREAD, note="ratio of the seed means of the final loss"),
        Claim("monotone", LENGEN, "Fig. 3",
              "Region B: the loss ratio to full context does not increase with q",
              "ratio_to_full_by_q", "nonincreasing", 0.05, scales=("quick", "paper")),
        _class_level("Fig. 3"),
    )


@register
class LengenAlg2(_LengenLearning):
    name = "lengen-alg2"
    description = "Algorithm 2 (two AR terms) on Region B systems, contexts T^q (Figure 4)"
    paper = "length generalization, Fig. 4"
    region, algorithm = "B", 2
    claims = (
        Claim("every-q-matches", LENGEN, "Fig. 4 / Thm. 6",
              "Algorithm 2 on Region B: every context down to T^{1/2} within 5 % of full",
              "ratio_to_full_by_q", "between", (0.95, 1.05), scales=("quick", "paper"),
              spread=RATIO_SPREAD),
        Claim("beats-alg1", LENGEN, "Fig. 4 vs Fig. 3",
              "Algorithm 2's full-context loss is at least 10x below Algorithm 1's on the "
              "same systems and streams",
              "alg1_over_alg2_full", ">=", 10.0, scales=("quick", "paper"),
              spread="alg1_over_alg2_full_per_seed"),
    )

    def config(self, scale, seeds):
        # N_{T-2} has filters below the float64 floor at T = 2^14: resolve them
        # (paid once per (T, k), cached); the docs compare with "double"
        return dict(super().config(scale, seeds), filter_precision="extended")
