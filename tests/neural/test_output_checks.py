"""Numerics attacks on the layers (issue 27): a finite but huge input must not come back as a
silent NaN. Each layer either computes a finite output or raises FloatingPointError naming
itself, the first bad (batch, position, channel) and the input's scale."""

from __future__ import annotations

import re
import warnings

import pytest
import torch

from lds_toolkit import neural
from lds_toolkit.neural import input_checks

D, L = 8, 16

OVERFLOWING = {  # layers whose float32 arithmetic overflows at |x| ~ 1e20-1e30
    "S4PlusPlus": lambda: neural.S4PlusPlus(D),
    "Focus": lambda: neural.Focus(D),
    "LaSAttention": lambda: neural.LaSAttention(D, n_heads=2),
    "SelfAttention": lambda: neural.SelfAttention(D),
}


@pytest.mark.parametrize("scale", [1e20, 1e30])
@pytest.mark.parametrize("name", sorted(OVERFLOWING))
def test_a_huge_finite_input_raises_naming_the_layer_and_the_position(name, scale):
    torch.manual_seed(0)
    layer = OVERFLOWING[name]()
    x = torch.randn(2, L, D) * scale
    assert bool(torch.isfinite(x).all())
    with pytest.raises(FloatingPointError,
                       match=rf"^{name}: output is not finite at batch \d+, position \d+, "
                             rf"channel \d+ \(.*\) although its input is finite \(largest "
                             rf"\|x\| = .*, torch.float32\): the layer's arithmetic overflows"):
        layer(x)


@pytest.mark.parametrize("name", sorted(OVERFLOWING))
def test_the_same_input_in_float64_is_finite(name):
    torch.manual_seed(0)
    layer = OVERFLOWING[name]().double()
    y = layer(torch.randn(2, L, D, dtype=torch.float64) * 1e30)
    assert bool(torch.isfinite(y).all())


def test_the_output_check_names_the_first_bad_position():
    class Spiky(torch.nn.Module):
        def __init__(self):
            super().__init__()
            neural._validation.watch_outputs(self)

        def forward(self, x):
            y = x.clone()
            y[1, 5, 3] = float("nan")
            y[0, 7, 2] = float("inf")  # batch 0 comes first in the flat order
            return y

    with pytest.raises(FloatingPointError, match=re.escape(
            "Spiky: output is not finite at batch 0, position 7, channel 2 (inf)")):
        Spiky()(torch.ones(2, 9, 4))


def test_the_output_check_follows_the_input_check_switch():
    layer = OVERFLOWING["SelfAttention"]()
    x = torch.randn(1, L, D) * 1e30
    with input_checks(False):
        y = layer(x)  # training-style: no per-call checks; the loss reports a divergence
    assert not bool(torch.isfinite(y).all())


@pytest.mark.parametrize("seq_len, k", [(64, 24), (32, 24)])
def test_stu_with_filters_below_the_float64_floor_is_finite(seq_len, k):
    """STU(seq_len=64) with the default 24 filters: eigenvalues below the floor come out
    slightly negative, and their fourth root made every output NaN (found in issue 27's
    second pass). They are clipped to 0."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        layer = neural.STU(4, seq_len=seq_len, num_filters=k)
    assert bool(torch.isfinite(layer.filters).all())
    y = layer(torch.randn(2, seq_len, 4))
    assert bool(torch.isfinite(y).all())
    # the clipped filters carry (numerically) nothing: the top filters alone give the output
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        small = neural.STU(4, seq_len=seq_len, num_filters=12, seed=0)
        big = neural.STU(4, seq_len=seq_len, num_filters=k, seed=0)
    f_small, f_big = small.filters[:, :12], big.filters[:, :k]  # the f^+ half of each
    assert torch.allclose(f_big[:, :12], f_small, atol=1e-8)
    assert float(f_big[:, 16:].abs().max()) < 1e-3
