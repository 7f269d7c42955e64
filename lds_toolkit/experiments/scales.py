"""The three scales every experiment is defined at, and the helpers that choose by scale.

A run's scale selects the sizes of its configuration (:meth:`Experiment.config
<lds_toolkit.experiments.base.Experiment.config>`) and the claims expected to hold
(:class:`~lds_toolkit.experiments.claims.Claim`). This module imports nothing from the rest
of :mod:`lds_toolkit.experiments`: :mod:`~lds_toolkit.experiments.base` and
:mod:`~lds_toolkit.experiments.claims` both import it, and neither imports the other for the
scales (``from lds_toolkit.experiments.base import SCALES, by_scale, check_scale`` still
works: base re-exports them).
"""

from __future__ import annotations

from .._validation import check_choice

#: The three scales of every experiment: ``"quick"`` (the pipeline: each experiment within
#: 30 s on 2 cores), ``"medium"`` (CPU evidence: trained to a plateau where training is
#: involved; the neural set within an hour on 2 cores) and ``"paper"`` (the papers' sizes;
#: the neural ones want a GPU).
SCALES = ("quick", "medium", "paper")


def by_scale(scale: str, *, quick, medium, paper):
    """The value for ``scale``: ``by_scale(scale, quick=2**10, medium=2**14, paper=2**14)``."""
    check_scale(scale)
    return {"quick": quick, "medium": medium, "paper": paper}[scale]


def check_scale(scale) -> str:
    """``scale`` if it is one of :data:`SCALES`, else ``ValueError`` naming the choices."""
    if not isinstance(scale, str):
        raise TypeError(f"scale must be one of {list(SCALES)}, got {type(scale).__name__}")
    return check_choice("scale", scale, SCALES)
