"""Registered experiments: one module per experiment, named after it.

The experiment ``NAME`` lives in ``catalog/NAME_with_underscores.py`` (``lds-toolkit
reproduce lengen-region-a`` runs :mod:`.lengen_region_a`); :data:`EXPERIMENT_MODULES` lists
them and :func:`~lds_toolkit.experiments.base.discover` imports exactly those. Code shared by
several experiments lives in private modules whose names start with an underscore and say
what they hold:

* :mod:`._lengen_common`: the length-generalization protocol (systems, streams, step-size
  choice, learning task, summaries and plots), used by the ``lengen-*``, ``regret-scaling``,
  ``lds-impulse`` and ``lds-streams`` experiments;
* :mod:`._lengen_learning`: the experiment class Figures 2-4 share (``lengen-region-a``,
  ``lengen-region-b``, ``lengen-alg2``);
* :mod:`._neural_common`: what the torch experiments share (device and threads, seeds,
  scales, the plateau rule, reductions over seeds);
* :mod:`._nss_s4_measures`: the state volumes and the LDS analysis ``nss-s4`` measures, and
  :mod:`._nss_s4_plots`, its figures;
* :mod:`._cloze_layers`: the S4 + cross-attention layer of ``cloze`` (a ``torch.nn.Module``).

To add an experiment: write ``catalog/NAME_with_underscores.py`` with an
:class:`~lds_toolkit.experiments.Experiment` subclass decorated with
:func:`~lds_toolkit.experiments.register`, and add ``"NAME": "NAME_with_underscores"`` to
:data:`EXPERIMENT_MODULES`. Every experiment module imports without torch: a neural one
imports torch and :mod:`lds_toolkit.neural` inside the functions that train and measure, and
declares ``requires = ("torch",)`` (its private helpers that subclass torch classes, like
:mod:`._cloze_layers`, are imported there too). This file imports no experiment module: the
mapping can be read without paying for any of them, and ``get_experiment(NAME)`` imports only
NAME's module.
"""

#: Registered name -> module of this package defining it, cheapest quick run first (``reproduce
#: all`` runs them in this order): the numpy experiments, then the torch ones by their quick
#: run time: the longer of the two workers' task CPU times, 12, 13, 14, 15, 17 and 10-18 s
#: (assoc-recall's runs stop when solved; measured one task at a time on 2 loaded cores), see
#: docs/results/quick/*/run.json for the sweeps.
EXPERIMENT_MODULES: dict[str, str] = {
    "lengen-regions": "lengen_regions",
    "lengen-alg2": "lengen_alg2",
    "lengen-region-b": "lengen_region_b",
    "lengen-region-a": "lengen_region_a",
    "lds-impulse": "lds_impulse",
    "nss-etc": "nss_etc",
    "regret-scaling": "regret_scaling",
    "nss-s4": "nss_s4",
    "induction-heads": "induction_heads",
    "las-ablation": "las_ablation",
    "lds-streams": "lds_streams",
    "cloze": "cloze",
    "assoc-recall": "assoc_recall",
}
