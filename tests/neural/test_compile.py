"""Every layer and SequenceModel traces under torch.compile without graph breaks, and builds
and runs on the meta device (issue 34).

A graph break splits a compiled model where Python needs a value from the device (a host
synchronisation on a GPU): the layers' value checks are skipped while dynamo traces
(``lds_toolkit.neural._validation``) and nothing else reads device values in ``forward``.
"""

from __future__ import annotations

import pytest
import torch
from torch import nn

from lds_toolkit import neural

from .conftest import dense_hankel_filters

D, L = 8, 24


def _stu(**kw):
    return neural.STU(D, 32, 4, filters=dense_hankel_filters(32, 4), **kw)


LAYERS = {  # one instance of every layer variant the bf16 tests cover, small
    "s4d": lambda: neural.S4(D, d_state=8, seed=0),
    "s4-dplr-legs": lambda: neural.S4(D, d_state=8, mode="dplr", seed=1),
    "s4-dplr-zoh": lambda: neural.S4(D, d_state=6, mode="dplr", disc="zoh", seed=2),
    "s4plus": lambda: neural.S4Plus(D, d_state=8, tau=3, seed=3),
    # attn_block 8 < L: query blocks, recomputed in the backward pass
    "s4plusplus": lambda: neural.S4PlusPlus(D, d_state=4, n_heads=2, attn_block=8, seed=4),
    "stu-exact": lambda: _stu(form="exact", seed=5),
    "stu-tensordot-ar": lambda: _stu(k_u=2, k_y=2, lag=1, seed=6),
    "focus": lambda: neural.Focus(D, bin_size=8, chunk_size=4),
    "focus-h": lambda: neural.Focus(D, bin_size=8, chunk_size=4, adaptive=False),
    "las-eld": lambda: neural.LaSAttention(D, 2, alpha_schedule="log"),
    "las-alibi-chunk": lambda: neural.LaSAttention(D, 2, chunk_size=8, alibi=True,
                                                   pool_order="before_softmax"),
    "attention": lambda: neural.SelfAttention(D, 2, seed=7),
}


def every_layer() -> dict[str, nn.Module]:
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)  # Focus and LaS draw from the global RNG
        return {name: build() for name, build in LAYERS.items()}


def break_report(explanation) -> str:
    lines = []
    for b in explanation.break_reasons:
        where = b.user_stack[-1] if b.user_stack else None
        loc = f" at {where.filename}:{where.lineno}" if where else ""
        lines.append(b.reason.splitlines()[0] + loc)
    return "\n".join(lines)


def test_every_layer_traces_without_graph_breaks():
    """One trace of all layers stacked, then of a SequenceModel: 0 graph breaks in either
    (each layer is in the stack, so each has none; ``test_each_layer_traces...`` in the slow
    suite names the layer when one appears)."""
    torch._dynamo.reset()
    stack = nn.Sequential(*every_layer().values())
    explanation = torch._dynamo.explain(stack)(torch.randn(2, L, D))
    assert explanation.graph_break_count == 0, break_report(explanation)
    model = neural.SequenceModel(D, 2, "s4", layer_kwargs=dict(d_state=8), d_input=3,
                                 d_output=2, pool="cummean", seed=0)
    explanation = torch._dynamo.explain(model)(torch.randn(2, L, 3))
    assert explanation.graph_break_count == 0, break_report(explanation)


@pytest.mark.slow
@pytest.mark.parametrize("autocast", [False, True], ids=["float32", "bf16-autocast"])
@pytest.mark.parametrize("name", sorted(LAYERS))
def test_each_layer_traces_without_graph_breaks(name, autocast):
    torch._dynamo.reset()
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        layer = LAYERS[name]()
    with torch.autocast("cpu", torch.bfloat16, enabled=autocast):
        explanation = torch._dynamo.explain(layer)(torch.randn(2, L, D))
    assert explanation.graph_break_count == 0, break_report(explanation)


def _compiled_matches_eager(layer: nn.Module, backend: str) -> None:
    x = torch.randn(2, L, D, requires_grad=True)
    compiled = torch.compile(layer, backend=backend, fullgraph=True)
    y, yc = layer(x), compiled(x)
    torch.testing.assert_close(yc, y, rtol=1e-4, atol=1e-5)
    (g,) = torch.autograd.grad(y.square().sum(), x)
    (gc,) = torch.autograd.grad(compiled(x).square().sum(), x)
    torch.testing.assert_close(gc, g, rtol=1e-4, atol=1e-5)


@pytest.mark.slow
def test_compiled_layers_match_eager():
    """The stack compiled through AOT autograd (``aot_eager``: the graphs torch.compile
    builds, forward and backward, run without code generation): eager outputs and input
    gradients. ~25 s of CPU; inductor's code generation for the whole stack takes minutes."""
    torch._dynamo.reset()
    _compiled_matches_eager(nn.Sequential(*every_layer().values()), "aot_eager")


@pytest.mark.slow
def test_inductor_compiles_focus():
    """Inductor (CPU code generation) on Focus, whose chunked attention once handed SDPA 5-D
    tensors, which inductor's lowering rejects (torch 2.13); now 4-D. ~25 s of CPU."""
    torch._dynamo.reset()
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        layer = LAYERS["focus"]()
    _compiled_matches_eager(layer, "inductor")


@pytest.mark.slow
def test_flex_route_traces_in_one_graph():
    """The route compiled on CUDA (flex_attention with the decay and pooled ALiBi as
    score_mod, the causal block mask built inside the graph) traced on CPU through AOT
    autograd with fullgraph, forward only (flex_attention has no CPU backward): the dense
    route's output to float32 round-off. ~15 s of CPU."""
    from lds_toolkit.neural.layers._las_core import alibi_slopes, las_attention

    torch._dynamo.reset()
    g = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(2, 4, 40, 8, generator=g) for _ in range(3))
    alpha, slopes = torch.tensor([0.0, 0.01, 0.3, 1.0]), alibi_slopes(4)

    def flex(q, k, v):
        return las_attention(q, k, v, alpha, 3, "before_softmax", alibi=slopes, backend="flex")

    with torch.no_grad():
        out = torch.compile(flex, backend="aot_eager", fullgraph=True)(q, k, v)
        ref = las_attention(q, k, v, alpha, 3, "before_softmax", alibi=slopes)
    torch.testing.assert_close(out, ref, rtol=0, atol=1e-6)


@pytest.mark.parametrize("build", ["context", "moved"])
def test_every_layer_builds_and_runs_on_meta(build):
    """Built inside ``torch.device("meta")`` or moved there with ``.to("meta")``: every
    parameter and buffer is a meta tensor and forward + backward run (shapes only: nothing
    reads a value)."""
    def layers():
        models = {
            "sequence-model": neural.SequenceModel(
                D, 2, "s4", layer_kwargs=dict(d_state=8), d_input=3, d_output=2, seed=0),
            "sequence-model-tokens": neural.SequenceModel(
                D, 2, "las", layer_kwargs=dict(n_heads=2), vocab_size=5, seed=1),
        }
        return {**every_layer(), **models}

    if build == "context":
        with torch.device("meta"):
            built = layers()
    else:
        built = {name: layer.to("meta") for name, layer in layers().items()}
    for name, layer in built.items():
        tensors = [*layer.parameters(), *layer.buffers()]
        assert all(t.device.type == "meta" for t in tensors), name
        if name == "sequence-model-tokens":
            y = layer(torch.zeros(2, L, dtype=torch.long, device="meta"))
            assert y.device.type == "meta" and y.shape == (2, L, 5), name
            y.sum().backward()
            assert layer.encoder.weight.grad.shape == (5, D), name
            continue
        d_in = 3 if name == "sequence-model" else D
        x = torch.randn(2, L, d_in, device="meta", requires_grad=True)
        y = layer(x)
        assert y.device.type == "meta", name
        assert y.shape == ((2, L, 2) if name == "sequence-model" else (2, L, D)), name
        y.sum().backward()
        assert x.grad is not None and x.grad.shape == x.shape, name
