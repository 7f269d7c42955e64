"""The online learners as river estimators (``river.base.Regressor``): what river users take.

Each class here *is* the toolkit's learner of the same name (a subclass: same equations,
same numbers, ``fit_predict`` included) and a ``river.base.Regressor``, so river's tools take
it: ``river.evaluate.progressive_val_score``, ``river.metrics``, pipelines such as
``preprocessing.StandardScaler() | SpectralFiltering()``, and ``river.checks.check_estimator``
passes on every one (see ``tests/learning/test_river.py``). Needs the ``river`` extra
(``pip install "lds_toolkit[river]"``); ``lds_toolkit.learning`` itself never imports river.

What river's contract adds to the learners of :mod:`lds_toolkit.learning.learners`:

* **Features by name.** ``x`` is a dict; its keys are matched by name, never by position
  (reordering them changes nothing, bit for bit). A feature that is missing counts as 0, a new
  one becomes an input column whose past values were 0 (river's convention for emerging and
  disappearing features); an :class:`LDSOracle` reads its system's ``input_labels`` and refuses
  any other key, naming it.
* **One form per target.** ``predict_one`` returns a ``float`` for a scalar target, cold or
  warm (a dict for dict targets).
* **Stable on unscaled streams by default.** :class:`SpectralFiltering` and
  :class:`SpectralFilteringAR2` default to ``lr_schedule="normalized"`` with ``lr=0.5``:
  eta_t = lr / (sqrt(t) max_{s<=t} ||x_s||_F^2), which is scale-free (features of any unit give
  the same predictions) and never overshoots a step's own loss (lr <= 1). The core classes keep
  their defaults (``"inv_sqrt"``, ``lr=1e-2``), which diverge on river's TrumpApproval stream.
* **Feature-less streams.** ``x = {}`` (a plain time series, as river hands over
  AirlinePassengers without its date) makes the target's own past the input: u_t := y_t, so
  the prediction of y_t reads y_{t-1}, y_{t-2}, ... (:mod:`lds_toolkit.learning._protocol`).
* **Stream speed.** A step is one compiled call; with ``filters="auto"`` (the default) the
  spectral learners stream their filters through a small diagonal LDS wherever that is
  cheaper (:mod:`lds_toolkit.learning._lds_route`), so a step costs O(n m d) whatever t and
  the horizon.
* **river's clone and repr.** ``clone(new_params=None)`` and the ``repr`` are river's
  (``river.base.Base``); the core learners' ``clone(**overrides)`` is not used here.

The prediction of y_t is made before u_t enters (the module docstring of
:mod:`lds_toolkit.learning.learners`: the learner predicts y_t from u_{<t}, y_{<t}); river's
``predict_one(x_t)`` then ``learn_one(x_t, y_t)`` is exactly that protocol.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

try:
    from river import base as _river_base
except ImportError as exc:  # pragma: no cover - exercised without the extra
    raise ModuleNotFoundError(
        "lds_toolkit.learning.river needs river, which is not installed: "
        'pip install "lds_toolkit[river]" (river >= 0.26)', name="river") from exc

from ..systems.lds import LDS
from . import learners as _core
from ._online import OnlineLearner

__all__ = ["SpectralFiltering", "SpectralFilteringAR2", "LastValue", "LDSOracle",
           "BestInHindsight", "TRUMP_APPROVAL_FEATURES"]

#: The feature names of river's ``datasets.TrumpApproval`` (the stream river's checks use for
#: regressors), as the inputs of :meth:`LDSOracle._unit_test_params`' system.
TRUMP_APPROVAL_FEATURES = ("ordinal_date", "gallup", "ipsos", "morning_consult", "rasmussen",
                           "you_gov")


class _RiverLearner(_river_base.Regressor):
    """river's side of a twin: its ``learn_one``/``predict_one`` are the learner's."""

    def learn_one(self, x, y=None, **kwargs) -> None:
        """Reveal (u_t, y_t) = (``x``, ``y``): :meth:`OnlineLearner.learn_one`."""
        if kwargs:
            raise TypeError(f"{type(self).__name__}.learn_one takes x and y only, got "
                            f"{sorted(kwargs)}")
        OnlineLearner.learn_one(self, x, y)  # type: ignore[arg-type]

    def predict_one(self, x, **kwargs):
        """The prediction of y_t: :meth:`OnlineLearner.predict_one`."""
        if kwargs:
            raise TypeError(f"{type(self).__name__}.predict_one takes x only, got "
                            f"{sorted(kwargs)}")
        return OnlineLearner.predict_one(self, x)  # type: ignore[arg-type]


class _StableDefaults:
    """The spectral learners' constructor with river's defaults: ``lr=0.5``,
    ``lr_schedule="normalized"`` (module docstring)."""

    def __init__(self, horizon: int = 2**14, k: int = 24, context: int | None = None,
                 radius: float = math.inf, lr: float = 0.5, lr_schedule: str = "normalized",
                 filter_precision: str = "double", filters: str = "auto"):
        super().__init__(horizon=horizon, k=k, context=context, radius=radius,  # type: ignore
                         lr=lr, lr_schedule=lr_schedule, filter_precision=filter_precision,
                         filters=filters)


class SpectralFiltering(_RiverLearner, _StableDefaults,  # type: ignore[misc]
                        _core.SpectralFiltering):
    """Algorithm 1 (:class:`lds_toolkit.learning.SpectralFiltering`) as a river regressor.

    Parameters are the core class's; the defaults differ in ``lr=0.5`` and
    ``lr_schedule="normalized"`` (stable on unscaled streams; module docstring).

    Examples
    --------
    >>> from river import datasets, evaluate, metrics
    >>> from lds_toolkit.learning.river import SpectralFiltering
    >>> model = SpectralFiltering(horizon=256, k=8)
    >>> metric = evaluate.progressive_val_score(datasets.TrumpApproval(), model, metrics.MAE())
    """

    @classmethod
    def _unit_test_params(cls):
        yield {"horizon": 64, "k": 6}
        yield {"horizon": 128, "k": 5, "context": 16, "radius": 50.0, "lr": 0.05,
               "lr_schedule": "inv_sqrt"}


class SpectralFilteringAR2(_RiverLearner, _StableDefaults,  # type: ignore[misc]
                           _core.SpectralFilteringAR2):
    """Algorithm 2 (:class:`lds_toolkit.learning.SpectralFilteringAR2`) as a river regressor.

    Parameters are the core class's; the defaults differ in ``lr=0.5`` and
    ``lr_schedule="normalized"`` (stable on unscaled streams; module docstring).
    """

    @classmethod
    def _unit_test_params(cls):
        yield {"horizon": 64, "k": 6}


class LastValue(_RiverLearner, _core.LastValue):  # type: ignore[misc]
    """The baseline yhat_t = y_{t-1} (:class:`lds_toolkit.learning.LastValue`) as a river
    regressor; nothing is learned."""


class LDSOracle(_RiverLearner, _core.LDSOracle):  # type: ignore[misc]
    """The true system's prediction (:class:`lds_toolkit.learning.LDSOracle`) as a river
    regressor: the keys of ``x`` are the system's ``input_labels`` (a missing input counts as
    0, another key is refused naming it).

    Parameters
    ----------
    system : lds_toolkit.systems.LDS or control.StateSpace
        Discrete-time system whose input names are the stream's feature names.
    x0 : tuple of float, optional
        Initial state x_0 (zeros by default).
    """

    def __init__(self, system: Any, x0: Any = None):
        super().__init__(system=system, x0=x0)

    @classmethod
    def _unit_test_params(cls):
        # a stable system read by TrumpApproval's feature names (river's regression stream)
        rng = np.random.default_rng(0)
        A = np.diag([0.9, 0.5, -0.3])
        B = 1e-3 * rng.standard_normal((3, len(TRUMP_APPROVAL_FEATURES)))
        C = rng.standard_normal((1, 3))
        yield {"system": LDS(A, B, C, dt=1.0, inputs=list(TRUMP_APPROVAL_FEATURES),
                             outputs=["five_thirty_eight"], name="oracle")}


class BestInHindsight(_RiverLearner, _core.BestInHindsight):  # type: ignore[misc]
    """The best fixed predictor of a class (:class:`lds_toolkit.learning.BestInHindsight`) as
    a river regressor. It needs the whole stream (``fit_predict``); streamed, it predicts with
    the fixed M of its last solve (zero before any), learning nothing.
    """

    def __init__(self, template: Any, context: int | None = None, radius: float | None = None,
                 tol: float = 1e-10):
        super().__init__(template=template, context=context, radius=radius, tol=tol)

    @classmethod
    def _unit_test_params(cls):
        yield {"template": _core.SpectralFiltering(horizon=64, k=4)}
        yield {"template": SpectralFiltering(horizon=32, k=3), "context": 8, "radius": 2.0}
