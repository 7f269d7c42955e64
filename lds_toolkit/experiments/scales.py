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

#: The scales: ``"quick"`` (the pipeline: each experiment within a minute on 2 cores),
#: ``"medium"`` (CPU evidence: trained to a plateau where training is involved; the neural
#: set within an hour on 2 cores),
#: ``"paper"`` (the papers' sizes; the neural ones want a GPU) — every experiment has these
#: three — and ``"gpu"``: what fits about 40 minutes of one H100, defined only by the
#: experiments whose paper scale is out of a CPU's reach (their ``scales`` attribute lists
#: it; :func:`check_experiment_scale`).
SCALES = ("quick", "medium", "paper", "gpu")
#: The scales every experiment defines.
COMMON_SCALES = ("quick", "medium", "paper")

_UNSET = object()


def by_scale(scale: str, *, quick, medium, paper, gpu=_UNSET):
    """The value for ``scale``: ``by_scale(scale, quick=2**10, medium=2**14, paper=2**14)``
    (``gpu=`` only where the experiment defines that scale)."""
    check_scale(scale)
    if scale == "gpu" and gpu is _UNSET:
        raise ValueError("this experiment defines no 'gpu' scale; available: "
                         f"{', '.join(COMMON_SCALES)}")
    return {"quick": quick, "medium": medium, "paper": paper, "gpu": gpu}[scale]


def check_experiment_scale(experiment, scale) -> str:
    """``scale`` if ``experiment`` defines it (its ``scales`` attribute, default
    :data:`COMMON_SCALES`), else ``ValueError`` naming the ones it has."""
    check_scale(scale)
    defined = tuple(getattr(experiment, "scales", COMMON_SCALES))
    if scale not in defined:
        raise ValueError(f"{experiment.name} has no {scale!r} scale; available: "
                         f"{', '.join(defined)}")
    return scale


def check_scale(scale) -> str:
    """``scale`` if it is one of :data:`SCALES`, else ``ValueError`` naming the choices."""
    if not isinstance(scale, str):
        raise TypeError(f"scale must be one of {list(SCALES)}, got {type(scale).__name__}")
    return check_choice("scale", scale, SCALES)
