"""Shared by Figures 2-4 of the length-generalization paper: online losses for contexts T^q.

:class:`_LengenLearning` is the experiment the three figures share; each sets its region,
algorithm and claims in its own module:

* ``lengen-region-a`` (Figure 2, :mod:`.lengen_region_a`): Algorithm 1, eigenvalues half from
  each part of Region A;
* ``lengen-region-b`` (Figure 3, :mod:`.lengen_region_b`): Algorithm 1, all eigenvalues in
  Region B;
* ``lengen-alg2`` (Figure 4, :mod:`.lengen_alg2`): Algorithm 2, all eigenvalues in Region B
  (the same systems and inputs as ``lengen-region-b`` for the same seed: contrast with
  Figure 3).

Per q, ``summary.json`` holds ``final_loss`` (mean over seeds of the mean loss over the last
quarter of the steps), the Asymmetric-Regret at T against the full-context class Pi_T
(``asymmetric_regret``), and the best-in-hindsight loss of the class Pi_{T^q}
(``hindsight_final_loss``), which separates what the context allows from what OGD reaches in
T steps.  See :mod:`._lengen_common` for the protocol and the choices the paper leaves open.
"""

from __future__ import annotations

from ..base import Experiment
from ..claims import Claim
from ._config_ranges import LENGEN_RANGES, lengen_largest, lengen_relations
from ._lengen_common import (
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

    # what each config entry may hold, checked before any task (experiments/ranges.py)
    ranges = LENGEN_RANGES
    relations = lengen_relations()

    def largest_array(self, config):
        return lengen_largest(config, config["T"])

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


def class_level_claim(where: str) -> Claim:
    """The claim Figures 2 and 3 share: with context T^{1/2} even the best predictor in
    hindsight loses at least 10x more than the best full-context one (figure ``where``)."""
    return Claim("class-level", LENGEN, where,
                 "the best predictor in hindsight with context T^{1/2} loses at least 10x more "
                 "than the best full-context one (what the context allows, no step size)",
                 "hindsight_short_over_full", ">=", 10.0, scales=("quick", "paper"))
