"""Private helper: python-control ``StateSpace`` objects in pickles.

python-control's ``StateSpace`` holds closures (its ``__init__`` binds lambdas) and does not
pickle; an object that keeps one as a parameter (``LDSOracle(system=ct.ss(...))``, which
river's model saving pickles and ``clone`` copies) stores it through
:func:`pickled_system` in ``__getstate__`` and :func:`unpickled_system` in
``__setstate__``: the matrices, timebase and signal and system names, rebuilt as a plain
``StateSpace`` equal to the original. Anything else (an :class:`~lds_toolkit.systems.LDS`,
which pickles itself, a ``TransferFunction``, None) passes unchanged.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import control
import numpy as np


class PickledStateSpace(NamedTuple):
    """A plain ``control.StateSpace`` as picklable data."""

    A: np.ndarray
    B: np.ndarray
    C: np.ndarray
    D: np.ndarray
    dt: Any
    names: dict


def pickled_system(system):
    """``system`` as picklable data when it is a plain ``control.StateSpace``, else itself."""
    if type(system) is not control.StateSpace:
        return system
    names = {"inputs": list(system.input_labels), "outputs": list(system.output_labels),
             "states": list(system.state_labels), "name": system.name}
    return PickledStateSpace(*(np.array(getattr(system, k)) for k in "ABCD"), system.dt, names)


def unpickled_system(value):
    """The ``control.StateSpace`` that :func:`pickled_system` stored, else ``value``."""
    if not isinstance(value, PickledStateSpace):
        return value
    return control.StateSpace(value.A, value.B, value.C, value.D, value.dt,
                              remove_useless_states=False, **value.names)
