"""Private helpers of :class:`~lds_toolkit.systems.LDS`: the timebase rule, a state vector's
check, python-control's name of a sampled system and its realisation of a transfer
function."""

from __future__ import annotations

from numbers import Real

import control
import numpy as np

from .._validation import as_float_array


def sampled_name(name: str) -> str:
    """python-control's name of a sampled system: ``name`` with the prefix and suffix of
    ``control.config.defaults['iosys.sampled_system_name_prefix'/'_suffix']`` ($sampled)."""
    d = control.config.defaults
    return (d["iosys.sampled_system_name_prefix"] + name
            + d["iosys.sampled_system_name_suffix"])


def as_state_vector(name: str, x, n: int) -> np.ndarray:
    """Validate an initial state of shape (..., n)."""
    arr = as_float_array(name, x)
    if arr.ndim == 0 or arr.shape[-1] != n:
        raise ValueError(f"{name} must have shape (..., {n}), got {arr.shape}")
    return arr


def timebase(dt) -> float | bool | int:
    """Normalise a timebase: None, 0 or False -> 0 (continuous, python-control's value);
    True -> True (discrete, unspecified step); a float > 0 -> that float. See :class:`LDS`."""
    if dt is None:
        return 0
    if isinstance(dt, bool | np.bool_):
        return True if dt else 0
    want = ("dt must be None or 0 (continuous time), True (discrete, unspecified step) or a "
            "finite sample time > 0")
    if not isinstance(dt, Real | np.floating | np.integer):
        raise TypeError(f"{want}, got {type(dt).__name__} {dt!r}")
    value = float(dt)
    if not (np.isfinite(value) and value >= 0.0):
        raise ValueError(f"{want}, got {value:g}")
    return 0 if value == 0.0 else value


#: What every function that takes a system accepts (the words of its errors).
SYSTEM_TYPES = "an LDS, a control.StateSpace or a control.TransferFunction"


def realise_transfer_function(system, name: str = "system") -> control.StateSpace:
    """python-control's state-space realisation (``control.ss``) of the
    ``control.TransferFunction`` ``system``. ``TypeError`` naming ``name`` when
    python-control cannot realise it (a multi-input or multi-output transfer function needs
    slycot), ``ValueError`` when its timebase is unspecified (``dt=None``)."""
    try:
        realised = control.ss(system)
    except control.ControlMIMONotImplemented as exc:
        raise TypeError(f"{name} is a {system.ninputs}-input, {system.noutputs}-output "
                        f"control.TransferFunction, which python-control realises only with "
                        f"slycot ({exc}); install slycot, or pass a control.StateSpace of "
                        "it") from None
    if realised.dt is None:
        raise ValueError(f"{name} is a control.TransferFunction with python-control's "
                         f"timebase dt=None ('not specified'), which is ambiguous; set it "
                         f"first, e.g. control.tf({name}, dt=0) for continuous time")
    return realised
