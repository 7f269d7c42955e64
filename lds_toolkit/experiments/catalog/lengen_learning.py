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

    def plot(self, config, summary, arrays, outdir):
        return plot_learning(config, summary, arrays, outdir, name=self.name.replace("-", "_"),
                             title=f"Algorithm {self.algorithm}, Region {self.region}")


@register
class LengenRegionA(_LengenLearning):
    name = "lengen-region-a"
    description = "Algorithm 1 on Region A systems, contexts T^q (Figure 2)"
    paper = "length generalization, Fig. 2"
    region, algorithm = "A", 1


@register
class LengenRegionB(_LengenLearning):
    name = "lengen-region-b"
    description = "Algorithm 1 on Region B systems, contexts T^q (Figure 3)"
    paper = "length generalization, Fig. 3"
    region, algorithm = "B", 1


@register
class LengenAlg2(_LengenLearning):
    name = "lengen-alg2"
    description = "Algorithm 2 (two AR terms) on Region B systems, contexts T^q (Figure 4)"
    paper = "length generalization, Fig. 4"
    region, algorithm = "B", 2
