"""Properties every layer must have (parametrised over conftest.LAYERS)."""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch
from torch.func import functional_call

from .conftest import DEVICES, randomize_zero_params

D_MODEL = 8


def _layer(case, dtype=torch.float64):
    layer = case.factory(D_MODEL).to(dtype)
    randomize_zero_params(layer)
    return layer.eval()


def _x(batch, length, dtype=torch.float64, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(batch, length, D_MODEL, generator=g, dtype=dtype)


@pytest.mark.parametrize("t", [0, 1, 9, 23, 30])
def test_causal(layer_case, t):
    """Outputs before t do not move when inputs at >= t change; outputs at >= t do."""
    if not layer_case.causal:
        pytest.skip("layer is not causal")
    layer = _layer(layer_case)
    x = _x(2, 32)
    x2 = x.clone()
    x2[:, t:] = _x(2, 32 - t, seed=1)
    with torch.no_grad():
        y, y2 = layer(x), layer(x2)
    assert y.shape == x.shape
    if t:
        assert (y2[:, :t] - y[:, :t]).abs().max().item() <= 1e-10
    # the perturbation must reach the output (rules out a layer that ignores its input)
    assert (y2[:, t:] - y[:, t:]).abs().max().item() > 1e-6


def test_every_parameter_gets_gradient(layer_case):
    layer = _layer(layer_case)
    x = _x(2, 16).requires_grad_(True)
    y = layer(x)
    w = torch.randn(y.shape, generator=torch.Generator().manual_seed(5), dtype=y.dtype)
    (y * w).sum().backward()
    assert x.grad is not None and x.grad.abs().max() > 0
    for name, p in layer.named_parameters():
        assert p.grad is not None, f"{name} got no gradient"
        assert torch.isfinite(p.grad).all(), f"{name} has a non-finite gradient"
        assert p.grad.abs().max() > 0, f"{name} has an all-zero gradient"


def test_gradcheck(layer_case):
    """Analytic gradients match finite differences: element by element w.r.t. the input, and
    w.r.t. the input and every parameter together in gradcheck's fast mode (random projections
    u, v of the full Jacobian: any wrong entry shows up unless errors cancel exactly)."""
    layer = _layer(layer_case)
    names = [n for n, _ in layer.named_parameters()]
    params = [p.detach().clone().requires_grad_(True) for _, p in layer.named_parameters()]
    x = _x(1, 5).requires_grad_(True)

    def f(x, *ps):
        return functional_call(layer, dict(zip(names, ps)), (x,))

    assert torch.autograd.gradcheck(layer, (x,), eps=1e-6, atol=1e-5, rtol=1e-4)
    assert torch.autograd.gradcheck(
        f, (x, *params), eps=1e-6, atol=1e-5, rtol=1e-4, fast_mode=True
    )


def test_output_follows_input_dtype(layer_case):
    layer = _layer(layer_case, torch.float32)
    x64 = _x(2, 12)
    if layer_case.dtype_policy == "strict":
        with pytest.raises(TypeError, match="dtype"):
            layer(x64)
        with torch.no_grad():
            y32 = layer(x64.float())
            y64 = copy.deepcopy(layer).double()(x64)
        assert y32.dtype == torch.float32 and y64.dtype == torch.float64
        np.testing.assert_allclose(y32.numpy(), y64.numpy(), rtol=0, atol=1e-4)
        return
    with torch.no_grad():
        y64 = layer(x64)
        ref = copy.deepcopy(layer).double()(x64)
        y32 = layer(x64.float())
        y16 = layer(x64.bfloat16())
    assert y64.dtype == torch.float64 and y32.dtype == torch.float32
    assert y16.dtype == torch.bfloat16 and torch.isfinite(y16.float()).all()
    np.testing.assert_allclose(y64.numpy(), ref.numpy(), rtol=0, atol=1e-12)
    np.testing.assert_allclose(y32.numpy(), y64.numpy(), rtol=0, atol=1e-4)


@pytest.mark.parametrize(
    "bad, err, match",
    [
        (lambda: torch.randn(4, D_MODEL), ValueError, "shape"),
        (lambda: torch.randn(2, 4, D_MODEL, 1), ValueError, "shape"),
        (lambda: torch.randn(2, 4, D_MODEL + 1), ValueError, str(D_MODEL)),
        (lambda: torch.randn(2, 0, D_MODEL), ValueError, "length"),
        (lambda: torch.ones(2, 4, D_MODEL, dtype=torch.int64), TypeError, "dtype"),
        (lambda: np.ones((2, 4, D_MODEL)), TypeError, "Tensor"),
    ],
    ids=["rank2", "rank4", "channels", "empty", "int-dtype", "numpy"],
)
def test_bad_input(layer_case, bad, err, match):
    layer = layer_case.factory(D_MODEL)
    with pytest.raises(err, match=match):
        layer(bad())


@pytest.mark.parametrize("device", DEVICES)
def test_device_step(layer_case, device):
    """On ``device``: the float64 forward at length 40 equals the CPU's, and a float32
    training step at length 256 gives finite gradients. The body ran on CUDA only until
    issue 34, where it fed those lengths to an STU built for 32 and failed (STU refuses
    inputs longer than its filters, on every device); running it on CPU in the default
    suite catches such a mismatch without a GPU. On CPU the first comparison is between two
    copies of the layer; the training step is the same as on CUDA."""
    layer = _layer(layer_case)
    x = _x(2, 40)
    with torch.no_grad():
        y_cpu = layer(x)
        moved = copy.deepcopy(layer).to(device)
        y_dev = moved(x.to(device))
    assert y_dev.device.type == device
    np.testing.assert_allclose(y_dev.cpu().numpy(), y_cpu.numpy(), rtol=0, atol=1e-9)
    # float32 training step
    layer32 = moved.float().train()
    xg = _x(2, 256, torch.float32).to(device).requires_grad_(True)
    layer32(xg).square().mean().backward()
    assert torch.isfinite(xg.grad).all() and xg.grad.abs().max() > 0
    for name, p in layer32.named_parameters():
        assert p.grad is not None and torch.isfinite(p.grad).all(), name
