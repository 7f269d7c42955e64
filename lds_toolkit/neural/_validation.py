"""Argument and input checks shared by the torch layers.

Every check raises ``TypeError`` (wrong kind of object or dtype) or ``ValueError`` (wrong shape or
value) with a message that names the layer, the argument, what was expected and what came.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from numbers import Integral, Real

import torch


def check_int(value, name: str, owner: str, *, minimum: int = 1) -> int:
    """Return ``value`` as int if it is an integer >= ``minimum``, else raise."""
    if isinstance(value, bool) or not isinstance(value, Integral):
        raise TypeError(f"{owner}: {name} must be an int >= {minimum}, got {type(value).__name__}")
    if value < minimum:
        raise ValueError(f"{owner}: {name} must be an int >= {minimum}, got {value}")
    return int(value)


def check_positive_float(value, name: str, owner: str) -> float:
    if isinstance(value, bool) or not isinstance(value, Real):
        raise TypeError(f"{owner}: {name} must be a positive float, got {type(value).__name__}")
    if not value > 0:
        raise ValueError(f"{owner}: {name} must be a positive float, got {value}")
    return float(value)


def check_nonnegative_float(value, name: str, owner: str) -> float:
    if isinstance(value, bool) or not isinstance(value, Real):
        raise TypeError(f"{owner}: {name} must be a finite float >= 0, got {type(value).__name__}")
    if not (math.isfinite(value) and value >= 0):
        raise ValueError(f"{owner}: {name} must be a finite float >= 0, got {value!r}")
    return float(value)


def check_choice(value, name: str, owner: str, choices: Iterable[str]) -> str:
    choices = tuple(choices)
    if value not in choices:
        raise ValueError(f"{owner}: {name} must be one of {choices}, got {value!r}")
    return value


def check_divisible(value: int, divisor: int, name: str, divisor_name: str, owner: str) -> None:
    if value % divisor != 0:
        raise ValueError(
            f"{owner}: {name}={value} must be divisible by {divisor_name}={divisor} "
            f"(remainder {value % divisor})"
        )


def _check_floating_tensor(x, axes: str, ndim: int, d_model: int, owner: str, name: str):
    """A floating tensor of shape ``(*axes, d_model)`` (``axes`` as text, e.g. "batch")."""
    shape = f"({axes}, d_model={d_model})"
    if not isinstance(x, torch.Tensor):
        raise TypeError(
            f"{owner}: {name} must be a torch.Tensor of shape {shape}, got {type(x).__name__}"
        )
    if x.ndim != ndim:
        raise ValueError(
            f"{owner}: {name} must have shape {shape}, "
            f"got shape {tuple(x.shape)} with {x.ndim} dimensions"
        )
    if x.shape[-1] != d_model:
        raise ValueError(
            f"{owner}: {name} must have {d_model} channels in its last dimension {shape}, "
            f"got shape {tuple(x.shape)}"
        )
    if not x.is_floating_point():
        raise TypeError(
            f"{owner}: {name} must have a floating dtype (float16/bfloat16/float32/float64), "
            f"got {x.dtype}"
        )


def check_sequence(x, d_model: int, owner: str, name: str = "x") -> None:
    """Check that ``x`` is a floating tensor of shape (batch, length, d_model) with length >= 1."""
    _check_floating_tensor(x, "batch, length", 3, d_model, owner, name)
    if x.shape[1] < 1:
        raise ValueError(f"{owner}: {name} must have length >= 1, got shape {tuple(x.shape)}")


def channels_last(x, d_model: int, owner: str, name: str = "x") -> torch.Tensor:
    """Check a channels-first sequence (batch, d_model, length) and return it as
    (batch, length, d_model) (the ``transposed=True`` layout of S4-style layers)."""
    if isinstance(x, torch.Tensor) and x.ndim == 3 and x.shape[1] != d_model:
        raise ValueError(
            f"{owner}: {name} must have shape (batch, d_model={d_model}, length) "
            f"(transposed=True), got shape {tuple(x.shape)}"
        )
    if isinstance(x, torch.Tensor) and x.ndim != 3:
        raise ValueError(
            f"{owner}: {name} must have shape (batch, d_model={d_model}, length) "
            f"(transposed=True), got shape {tuple(x.shape)} with {x.ndim} dimensions"
        )
    if isinstance(x, torch.Tensor):
        x = x.transpose(1, 2)
    check_sequence(x, d_model, owner, name)
    return x


def check_matches_parameters(x: torch.Tensor, layer: torch.nn.Module, owner: str) -> None:
    """For layers built from torch modules that need it (Focus, LaS): ``x`` must share the
    parameters' dtype and device, as ``nn.Linear`` requires."""
    p = next(layer.parameters(), None)
    if p is not None and (p.dtype != x.dtype or p.device != x.device):
        raise TypeError(
            f"{owner}: x has dtype {x.dtype} on {x.device} but the layer's parameters are "
            f"{p.dtype} on {p.device}; move the layer with .to(x.dtype) / .to(x.device)"
        )


def check_step_input(x_t, d_model: int, owner: str, name: str = "x_t") -> None:
    """Check one time step of input: a floating tensor of shape (batch, d_model)."""
    _check_floating_tensor(x_t, "batch", 2, d_model, owner, name)


def check_same_device(module: torch.nn.Module, x: torch.Tensor, owner: str) -> None:
    """Raise if the module's parameters live on another device than the input."""
    for p in module.parameters():
        if p.device != x.device:
            raise ValueError(
                f"{owner}: input is on {x.device} but the layer's parameters are on {p.device}; "
                f"move the layer with .to({str(x.device)!r})"
            )
        return


def check_finite(t: torch.Tensor, what: str, owner: str, axis: int = -1) -> None:
    """Raise FloatingPointError naming the first non-finite index along ``axis``.

    Used where a learned recurrence may diverge (e.g. STU's output-autoregressive terms), so a
    blow-up is reported with where it happened instead of propagating silent inf/NaN.
    """
    finite = torch.isfinite(t)
    if bool(finite.all()):
        return
    bad = (~finite).movedim(axis, -1).reshape(-1, t.shape[axis]).any(dim=0)
    first = int(torch.nonzero(bad)[0, 0])
    raise FloatingPointError(f"{owner}: {what} is not finite from index {first} along axis {axis}")
