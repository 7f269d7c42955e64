"""Argument and input checks shared by the torch layers.

Every check raises ``TypeError`` (wrong kind of object or dtype) or ``ValueError`` (wrong shape or
value) with a message that names the layer, the argument, what was expected and what came.

Input values. Every layer's ``forward`` and ``step`` check their input with
:func:`check_sequence` / :func:`check_step_input`, which also refuse NaN and inf, naming the
first bad position: a NaN at the last position would otherwise reach *earlier* outputs
through the FFT convolution and break causality silently.

Output values. Under the same switch, every layer checks its own output
(:func:`watch_outputs`, a forward hook registered when the layer is built): a finite but
huge input (1e30 in float32) can overflow a product or a softmax inside the layer, and the
layer then raises ``FloatingPointError`` naming itself, the first bad (batch, position,
channel) and the input's scale, instead of returning NaN silently.

Where the value checks run, and why. A value check reads a device value into Python
(``bool(isfinite(x).all())``): on a GPU that is a host synchronisation per layer (8-9 % of a
training step measured on an H200), and under ``torch.compile`` a graph break. The checks
are meant for a user who calls a layer directly, where a clear error beats a few per cent,
so they run in eager mode by default and are skipped

* in the documented fast mode, for the current thread or task::

      with lds_toolkit.neural.input_checks(False):
          y = model(x)

  or for the rest of the program with ``lds_toolkit.neural.set_input_checks(False)``.
  :func:`~lds_toolkit.neural.training.train` and :func:`~lds_toolkit.neural.evaluate` run
  in this mode: they check the data once before the first step and report a non-finite loss
  as a divergence, so nothing becomes NaN silently, at no cost per layer;
* while ``torch.compile`` traces the layer (:func:`torch.compiler.is_compiling`): a compiled
  model has no per-layer check (0 graph breaks); the loop that compiles it owns the checks
  above;
* on the ``meta`` device, which has no values (layers build and run there to size a model).

``torch._assert_async`` would keep a check without a host synchronisation, but it cannot say
*where* the first bad value is, and on CUDA a failed device assertion leaves the process's
CUDA context unusable: worse for the direct user the checks exist for.
"""

from __future__ import annotations

import contextlib
import contextvars
import math
from collections.abc import Iterable
from numbers import Integral, Real

import torch
from torch import nn

from ._cast import AUTOCAST_DEVICES

_INPUT_CHECKS: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "lds_toolkit_neural_input_checks", default=True)


def input_checks_enabled() -> bool:
    """Whether the layers check their inputs for NaN and inf (see the module docstring)."""
    return _INPUT_CHECKS.get()


def set_input_checks(enabled: bool) -> bool:
    """Switch the layers' NaN/inf input check on or off for the current context (the main
    thread: the rest of the program); return the previous setting."""
    if not isinstance(enabled, bool):
        raise TypeError(f"enabled must be True or False, got {enabled!r}")
    previous = _INPUT_CHECKS.get()
    _INPUT_CHECKS.set(enabled)
    return previous


@contextlib.contextmanager
def input_checks(enabled: bool = True):
    """Context manager: the layers' NaN/inf input check on or off inside the block."""
    if not isinstance(enabled, bool):
        raise TypeError(f"enabled must be True or False, got {enabled!r}")
    token = _INPUT_CHECKS.set(enabled)
    try:
        yield
    finally:
        _INPUT_CHECKS.reset(token)


def values_checked(x: torch.Tensor) -> bool:
    """Whether the value checks run on ``x`` (module docstring): not while ``torch.compile``
    traces (tested first: dynamo cannot read the context variable), not on the meta device,
    not for an empty tensor, and only while the switch is on."""
    if torch.compiler.is_compiling():
        return False
    return x.device.type != "meta" and x.numel() > 0 and _INPUT_CHECKS.get()


def check_finite_input(x: torch.Tensor, owner: str, name: str, *, sequence: bool) -> None:
    """``ValueError`` naming the first position (``sequence``: axis 1 of (batch, length,
    channels)) where ``x`` holds NaN or inf; nothing where the checks do not run
    (:func:`values_checked`)."""
    if not values_checked(x):
        return
    finite = torch.isfinite(x)
    if bool(finite.all()):
        return
    bad = ~finite
    if sequence:
        t = int(torch.nonzero(bad.any(dim=2).any(dim=0))[0, 0])
        b, c = (int(i) for i in torch.nonzero(bad[:, t])[0])
        index = (b, t, c)
        where, first = f"batch {b}, position {t}, channel {c}", f"position {t}"
    else:
        b, c = (int(i) for i in torch.nonzero(bad)[0])
        index = (b, c)
        where = first = f"batch {b}, channel {c}"
    value = float(x[index])
    raise ValueError(
        f"{owner}: {name} must be finite; the first non-finite value is at {first} ({where}: "
        f"{value}). Inside a model this means an earlier layer produced it. Switch the check "
        "off with lds_toolkit.neural.input_checks(False)")


def check_flag(value, name: str, owner: str) -> bool:
    """``value`` if it is ``True`` or ``False``: a truthy string (``"no"``), a number or
    ``None`` is a ``TypeError`` naming the layer and the argument."""
    if isinstance(value, bool):
        return value
    raise TypeError(f"{owner}: {name} must be True or False, got {type(value).__name__} "
                    f"{value!r}")


def make_dropout(p, owner: str) -> nn.Module:
    """``nn.Dropout(p)`` for a probability ``p`` in [0, 1), ``nn.Identity()`` for 0."""
    if isinstance(p, bool) or not isinstance(p, Real):
        raise TypeError(f"{owner}: dropout must be a probability in [0, 1), got "
                        f"{type(p).__name__} {p!r}")
    if not 0 <= p < 1:
        raise ValueError(f"{owner}: dropout must be a probability in [0, 1), got {p!r}")
    return nn.Dropout(float(p)) if p > 0 else nn.Identity()


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
    """Check that ``x`` is a floating tensor of shape (batch, length, d_model) with length >= 1
    and (unless switched off) finite values."""
    _check_floating_tensor(x, "batch, length", 3, d_model, owner, name)
    if x.shape[1] < 1:
        raise ValueError(f"{owner}: {name} must have length >= 1, got shape {tuple(x.shape)}")
    check_finite_input(x, owner, name, sequence=True)


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
    parameters' dtype and device, as ``nn.Linear`` requires; under ``torch.autocast`` on
    ``x``'s device, ``x`` may also have the autocast dtype (the projections then mix dtypes
    as autocast allows)."""
    p = next(layer.parameters(), None)
    if p is None:
        return
    kind = x.device.type
    autocast_dtype = (kind in AUTOCAST_DEVICES and torch.is_autocast_enabled(kind)
                      and x.dtype == torch.get_autocast_dtype(kind))
    if p.device != x.device or (p.dtype != x.dtype and not autocast_dtype):
        raise TypeError(
            f"{owner}: x has dtype {x.dtype} on {x.device} but the layer's parameters are "
            f"{p.dtype} on {p.device}; move the layer with .to(x.dtype) / .to(x.device)"
        )


def check_step_input(x_t, d_model: int, owner: str, name: str = "x_t") -> None:
    """Check one time step of input: a floating tensor of shape (batch, d_model)."""
    _check_floating_tensor(x_t, "batch", 2, d_model, owner, name)
    check_finite_input(x_t, owner, name, sequence=False)


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
    blow-up is reported with where it happened instead of propagating silent inf/NaN. Runs
    where the other value checks run (:func:`values_checked`); elsewhere the training loop's
    loss check reports the divergence.
    """
    if not values_checked(t):
        return
    finite = torch.isfinite(t)
    if bool(finite.all()):
        return
    bad = (~finite).movedim(axis, -1).reshape(-1, t.shape[axis]).any(dim=0)
    first = int(torch.nonzero(bad)[0, 0])
    raise FloatingPointError(f"{owner}: {what} is not finite from index {first} along axis {axis}")


def _output_hook(module: nn.Module, args, output) -> None:
    """Forward hook of :func:`watch_outputs`: ``FloatingPointError`` when the layer's output
    holds NaN or inf although its (checked) input is finite."""
    y = output[0] if isinstance(output, tuple) and output else output
    if not isinstance(y, torch.Tensor) or not values_checked(y):
        return
    finite = torch.isfinite(y)
    if bool(finite.all()):
        return
    owner = type(module).__name__
    index = tuple(int(i) for i in torch.nonzero(~finite)[0])
    axes = (("batch", "channel", "position") if getattr(module, "transposed", False)
            else ("batch", "position", "channel"))
    where = ", ".join(f"{a} {i}" for a, i in zip(axes, index)) if y.ndim == 3 else \
        f"index {index}"
    x = args[0] if args and isinstance(args[0], torch.Tensor) else None
    scale = ""
    if x is not None and x.numel() and bool(torch.isfinite(x).all()):
        big = float(x.detach().abs().max())
        scale = (f" although its input is finite (largest |x| = {big:.3g}, {x.dtype}): the "
                 "layer's arithmetic overflows at this input scale; rescale the input (e.g. "
                 "normalise it) or compute in float64")
    value = y.detach()[index].item()
    raise FloatingPointError(f"{owner}: output is not finite at {where} ({value}){scale}")


def watch_outputs(layer: nn.Module) -> nn.Module:
    """Register the output check (see the module docstring) on ``layer``; returns it."""
    layer.register_forward_hook(_output_hook)
    return layer

