"""Dtypes of the layers' arithmetic (shared by the layers and blocks).

S4, S4+, S4++, STU, attention and the blocks follow the dtype of their input: parameters are
cast to it at each call instead of the input being cast to the parameters' dtype
(:func:`linear`, :func:`cast_call`).

Under ``torch.autocast`` (bf16 or fp16) the projections run in the low precision, but what
bf16's 8-bit mantissa would spoil stays in float32 (as state-spaces/s4 keeps its SSM kernel in
float32 under AMP): SSM kernels and their FFTs, STU's filters and transfer matrices, Focus's
IIR taps, decay and position biases of the attention scores and the softmax statistics.
Those parts run inside :func:`full_precision`, which switches autocast off for their device
and restores it on exit, and compute in :func:`work_dtype` of their inputs.
"""

from __future__ import annotations

import contextlib

import torch
from torch import nn
from torch.nn import functional as F


def linear(layer: nn.Linear, x: torch.Tensor) -> torch.Tensor:
    """``layer(x)`` computed in ``x``'s dtype."""
    b = None if layer.bias is None else layer.bias.to(x.dtype)
    return F.linear(x, layer.weight.to(x.dtype), b)


def cast_call(module: nn.Module, x: torch.Tensor) -> torch.Tensor:
    """``module(x)`` in ``x``'s dtype for Linear, LayerNorm and RMSNorm; other modules (e.g.
    an MLP built from them, Identity) are called as they are."""
    if isinstance(module, nn.Linear):
        return linear(module, x)
    if isinstance(module, nn.LayerNorm):
        w = None if module.weight is None else module.weight.to(x.dtype)
        b = None if module.bias is None else module.bias.to(x.dtype)
        return F.layer_norm(x, module.normalized_shape, w, b, module.eps)
    if isinstance(module, nn.RMSNorm):
        w = None if module.weight is None else module.weight.to(x.dtype)
        return F.rms_norm(x, module.normalized_shape, w, module.eps)
    return module(x)


#: device types torch.autocast accepts (others, e.g. meta, have no autocast to switch off)
AUTOCAST_DEVICES = ("cpu", "cuda", "xpu", "mps", "hpu")


def work_dtype(dtype: torch.dtype) -> torch.dtype:
    """float32 for half-precision dtypes (bf16, fp16), else ``dtype`` (float32 or float64)."""
    return torch.promote_types(dtype, torch.float32)


def full_precision(device: torch.device):
    """Context in which autocast is off on ``device``'s type (a no-op where it is not on), so
    the operations inside run in their inputs' dtypes; the caller casts those to
    :func:`work_dtype`. Restores the autocast state on exit."""
    kind = device.type
    if kind in AUTOCAST_DEVICES and torch.is_autocast_enabled(kind):
        return torch.autocast(kind, enabled=False)
    return contextlib.nullcontext()
