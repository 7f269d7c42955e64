"""Activation recomputation (``set_recompute``) against the plain forward pass.

The independent route is the layer without recomputation: with it on, outputs and the
gradients of every parameter and of the input must be the same numbers (float64: to 1e-12;
the blocks run the same operations on slices). That recomputation happened is checked by
counting the checkpointed pieces' runs: once each in the forward pass, once more in the
backward pass. How much memory that saves at long lengths is measured by
``benchmarks/neural_layers.py`` (the ``-rc`` rows), not asserted here.
"""

from __future__ import annotations

import pytest
import torch

from lds_toolkit import neural
from lds_toolkit.neural.training.recompute import set_recompute

L, D, B = 64, 8, 4

LAYERS = {
    "s4-dplr": lambda: neural.S4(D, d_state=8, mode="dplr", seed=0),
    "s4d": lambda: neural.S4(D, d_state=8, seed=1),
    "stu-exact": lambda: neural.STU(D, seq_len=L, num_filters=4, form="exact", seed=2),
    "focus": lambda: neural.Focus(D, chunk_size=16, hyper_kernel_size=L),
}


@pytest.fixture
def runs(monkeypatch):
    """How many checkpointed pieces there were and how often they ran."""
    from lds_toolkit.neural.layers import _recompute as recompute

    count = {"pieces": 0, "runs": 0}
    real = recompute.checkpoint

    def spy(fn, *args, **kwargs):
        count["pieces"] += 1

        def counted(*a, **kw):
            count["runs"] += 1
            return fn(*a, **kw)

        return real(counted, *args, **kwargs)

    monkeypatch.setattr(recompute, "checkpoint", spy)
    return count


def _pass(layer, x):
    x = x.clone().requires_grad_()
    y = layer(x)
    y.square().sum().backward()
    grads = {n: p.grad.clone() for n, p in layer.named_parameters() if p.grad is not None}
    layer.zero_grad(set_to_none=True)
    return y.detach(), x.grad, grads


@pytest.mark.parametrize("name", sorted(LAYERS))
def test_recomputation_gives_the_same_outputs_and_gradients(name, runs):
    torch.manual_seed(0)
    layer = LAYERS[name]().double()
    x = torch.randn(B, L, D, dtype=torch.float64)
    y0, gx0, g0 = _pass(layer, x)
    assert runs == {"pieces": 0, "runs": 0}
    assert set_recompute(layer) >= 1
    y1, gx1, g1 = _pass(layer, x)
    # every piece ran in the forward pass and again in the backward pass
    assert runs["pieces"] >= 2 and runs["runs"] == 2 * runs["pieces"], runs
    torch.testing.assert_close(y1, y0, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(gx1, gx0, rtol=1e-12, atol=1e-12)
    assert g1.keys() == g0.keys() and g0
    for n in g0:
        torch.testing.assert_close(g1[n], g0[n], rtol=1e-12, atol=1e-12, msg=n)
    pieces = runs["pieces"]
    with torch.no_grad():  # no gradients: the plain path, the same numbers
        torch.testing.assert_close(layer(x), y0, rtol=1e-12, atol=1e-12)
    set_recompute(layer, False)
    _pass(layer, x)
    assert runs["pieces"] == pieces  # off again: nothing checkpointed


def test_recomputation_in_a_model_under_bf16_autocast_and_its_errors():
    """In a SequenceModel, under bf16 autocast (checkpoint recomputes in the same autocast
    state): the loss and gradients of the plain run, to bf16's round-off (the blocks'
    matrix products round on other shapes)."""
    model = neural.SequenceModel(D, 2, "focus", layer_kwargs={"chunk_size": 16},
                                 vocab_size=10, seed=0)
    x = torch.randint(0, 10, (B, L))

    def run():
        with torch.autocast("cpu", dtype=torch.bfloat16):
            loss = model(x).float().square().mean()
        loss.backward()
        grads = [p.grad.clone() for p in model.parameters()]
        model.zero_grad(set_to_none=True)
        return loss.detach(), grads

    loss0, g0 = run()
    assert set_recompute(model) == 2
    loss1, g1 = run()
    torch.testing.assert_close(loss1, loss0, rtol=1e-3, atol=0)
    flat0, flat1 = torch.cat([g.flatten() for g in g0]), torch.cat([g.flatten() for g in g1])
    # (relative to the largest gradient: some, such as the key bias's, are round-off alone)
    torch.testing.assert_close(flat1, flat0, rtol=0, atol=1e-2 * float(flat0.abs().max()))
    with pytest.raises(ValueError, match="no layer with activation recomputation"):
        set_recompute(neural.SelfAttention(D))
    with pytest.raises(TypeError, match="enabled must be True or False"):
        set_recompute(model, "yes")
    with pytest.raises(TypeError, match="torch.nn.Module"):
        set_recompute(object())
