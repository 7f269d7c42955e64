"""Every layer: NaN/inf inputs refused naming the first bad position (switchable), batch size 0
gives an empty output, dropout must be a probability."""

from __future__ import annotations

import math
import threading

import pytest
import torch

from lds_toolkit import neural
from lds_toolkit.neural import input_checks, input_checks_enabled, set_input_checks

D, L = 8, 16


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_non_finite_input_raises_naming_the_first_bad_position(layer_case, bad):
    layer = layer_case.factory(D)
    x = torch.randn(3, L, D)
    x[2, 12, 0] = bad
    x[1, 9, 2] = bad  # the first bad position, though in a later batch row than another
    with pytest.raises(ValueError, match=rf"must be finite; the first non-finite value is at "
                                         rf"position 9 \(batch 1, position 9, channel 2: "
                                         rf"{bad}\)"):
        layer(x)


def test_input_check_can_be_switched_off(layer_case):
    """With the check off the NaN reaches the output (or, in STU's output recursion, its own
    divergence check); afterwards the input check is on again."""
    layer = layer_case.factory(D).eval()
    x = torch.randn(2, L, D)
    x[0, 10, 0] = math.nan
    with input_checks(False):
        assert not input_checks_enabled()
        try:
            assert bool(torch.isnan(layer(x)[0]).any())
        except FloatingPointError as exc:
            assert "output is not finite" in str(exc)
    assert input_checks_enabled()
    with pytest.raises(ValueError, match="position 10"):
        layer(x)


def test_set_input_checks_returns_the_previous_setting_and_is_per_thread():
    assert set_input_checks(False) is True
    seen = []
    t = threading.Thread(target=lambda: seen.append(input_checks_enabled()))
    t.start()
    t.join()
    try:
        assert not input_checks_enabled() and seen == [True]
    finally:
        assert set_input_checks(True) is False
    with pytest.raises(TypeError, match="enabled must be True or False"):
        set_input_checks(0)


def _has_step(layer):
    return hasattr(layer, "step") and hasattr(layer, "initial_state")


def test_step_input_is_checked_too(layer_case):
    layer = layer_case.factory(D)
    if not _has_step(layer):
        pytest.skip("no step mode")
    state = layer.initial_state(2, dtype=torch.float32)
    x_t = torch.randn(2, D)
    x_t[1, 3] = math.nan
    with pytest.raises(ValueError, match=r"first non-finite value is at batch 1, channel 3"):
        layer.step(x_t, state)


def test_batch_size_zero_gives_an_empty_output(layer_case):
    layer = layer_case.factory(D)
    x = torch.zeros(0, L, D, requires_grad=True)
    y = layer(x)
    assert tuple(y.shape) == (0, L, D) and y.dtype == x.dtype
    y.sum().backward()  # and the graph is intact
    assert tuple(x.grad.shape) == (0, L, D)
    if _has_step(layer):
        state = layer.initial_state(0, dtype=torch.float32)
        y_t, _ = layer.step(torch.zeros(0, D), state)
        assert tuple(y_t.shape) == (0, D)


def test_batch_size_zero_in_chunked_mode_and_sequence_models():
    s4 = neural.S4(D, d_state=8, seed=0)
    y, state = s4(torch.zeros(0, L, D), s4.initial_state(0), return_state=True)
    assert tuple(y.shape) == (0, L, D) and state.shape[0] == 0
    tokens = neural.SequenceModel(D, 2, "s4", vocab_size=5, seed=0)
    assert tuple(tokens(torch.zeros(0, L, dtype=torch.int64)).shape) == (0, L, 5)
    for pool, shape in (("none", (0, L, 3)), ("mean", (0, 3)), ("last", (0, 3))):
        model = neural.SequenceModel(D, 1, "stu", d_input=2, d_output=3, pool=pool,
                                     layer_kwargs={"seq_len": L, "num_filters": 4}, seed=0)
        assert tuple(model(torch.zeros(0, L, 2)).shape) == shape


@pytest.mark.parametrize("make", [
    lambda p: neural.S4(D, dropout=p),
    lambda p: neural.Block(D, "s4", dropout=p),
    lambda p: neural.SequenceModel(D, 1, "s4", dropout=p),
])
def test_dropout_must_be_a_probability(make):
    for p, err, match in ((-0.5, ValueError, r"dropout must be a probability in \[0, 1\), "
                                             r"got -0.5"),
                          (1.0, ValueError, "got 1.0"), (True, TypeError, "got bool True"),
                          ("0.1", TypeError, "got str")):
        with pytest.raises(err, match=match):
            make(p)
    assert isinstance(make(0.25), torch.nn.Module)
