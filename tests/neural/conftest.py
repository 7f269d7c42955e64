"""Shared fixtures for the torch layer tests.

``LAYERS`` drives the common property suite (test_common.py: causality, gradients, gradcheck,
dtype/device, bad inputs, CUDA). Adding a layer to every common test is one line here; each
factory builds a *small* instance ``factory(d_model)`` so the suite stays fast.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass

import pytest

torch = pytest.importorskip("torch")

# The tests use small tensors on a shared 2-core machine: one intra-op thread avoids OpenMP
# barrier contention (measured: a tiny conv1d takes 30 us with 1 thread, 2 ms with 2 threads
# when the other core is busy).
torch.set_num_threads(1)

import numpy as np  # noqa: E402

from lds_toolkit import neural  # noqa: E402


def dense_hankel_filters(T: int, k: int):
    """Top-k eigenpairs of H_T (entries 2/((n+1)(n+2)(n+3)), n = i+j from 0) by dense eigh:
    an independent route to the shared filters. sigma descending, phi[0, i] > 0."""
    i = np.arange(T)
    n = i[:, None] + i[None, :]
    w, v = np.linalg.eigh(2.0 / ((n + 1) * (n + 2) * (n + 3)))
    sigma, phi = w[::-1][:k].copy(), v[:, ::-1][:, :k].copy()
    return sigma, phi * np.sign(phi[0])


@functools.lru_cache(maxsize=1)
def stu_filters(T: int = 256, k: int = 4):
    """:func:`dense_hankel_filters` of the common STU cases, computed once."""
    return dense_hankel_filters(T, k)


@dataclass(frozen=True)
class LayerCase:
    id: str
    factory: Callable[[int], torch.nn.Module]
    causal: bool = True  # whether the common causality test applies
    # "follow": the layer computes in the input's dtype (parameters cast); "strict": the input
    # dtype must equal the parameters' dtype, else a TypeError (Focus / LaS policy)
    dtype_policy: str = "follow"


LAYERS: list[LayerCase] = [
    LayerCase("s4", lambda d: neural.S4(d, d_state=8, seed=0)),
    LayerCase("s4-zoh-inv", lambda d: neural.S4(d, d_state=8, disc="zoh", init="inv", seed=1)),
    LayerCase("s4d-legs", lambda d: neural.S4(d, d_state=8, init="legs", seed=10)),
    LayerCase(
        "s4d-free-real", lambda d: neural.S4(d, d_state=8, real_transform="none", seed=11)
    ),
    LayerCase("s4-dplr", lambda d: neural.S4(d, d_state=8, mode="dplr", seed=12)),
    LayerCase("s4-dplr-zoh", lambda d: neural.S4(d, d_state=6, mode="dplr", disc="zoh", seed=13)),
    LayerCase("s4plus", lambda d: neural.S4Plus(d, d_state=8, tau=3, seed=2)),
    LayerCase("s4plus-dplr", lambda d: neural.S4Plus(d, d_state=6, mode="dplr", tau=3, seed=14)),
    # attn_block=3 exercises the blocked (checkpointed) attention path even at tiny lengths
    LayerCase(
        "s4plusplus",
        lambda d: neural.S4PlusPlus(
            d, d_state=4, d_qk=4, d_v=4, n_heads=2, tau=3, attn_block=3, seed=3
        ),
    ),
    # STU refuses inputs longer than its filters (seq_len): built for the longest length the
    # common tests feed (256, test_device_step), not 32 as before issue 34, whose CUDA test fed
    # 40 and 256 tokens to a seq_len-32 STU
    LayerCase(
        "stu-exact",
        lambda d: neural.STU(d, 256, 4, form="exact", filters=stu_filters(), seed=5),
    ),
    LayerCase(
        "stu-tensordot-ar",
        lambda d: neural.STU(d, 256, 4, k_u=2, k_y=2, lag=1, filters=stu_filters(), seed=6),
    ),
    LayerCase("attention", lambda d: neural.SelfAttention(d, n_heads=2, seed=4)),
    LayerCase("focus", lambda d: neural.Focus(d, bin_size=8, chunk_size=4), dtype_policy="strict"),
    LayerCase("las", lambda d: neural.LaSAttention(d, n_heads=2), dtype_policy="strict"),
    LayerCase(
        "las-chunk",
        lambda d: neural.LaSAttention(d, n_heads=2, chunk_size=8),
        dtype_policy="strict",
    ),
]


@pytest.fixture(params=LAYERS, ids=[c.id for c in LAYERS])
def layer_case(request) -> LayerCase:
    return request.param


def randomize_zero_params(module: torch.nn.Module, seed: int = 0) -> None:
    """Give zero-initialised parameters (e.g. S4++'s positional bias) random values so tests
    exercise them; the layer's maths is unchanged."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in module.parameters():
            if p.numel() and not bool(p.abs().sum()):
                p.copy_(0.5 * torch.randn(p.shape, generator=g, dtype=p.dtype))


def run_steps(layer, x):
    """Run ``layer.step`` over the positions of ``x`` (batch, length, d): outputs stacked along
    the length axis, and the final state."""
    state = layer.initial_state(x.shape[0], dtype=x.dtype)
    ys = []
    for t in range(x.shape[1]):
        y_t, state = layer.step(x[:, t], state)
        ys.append(y_t)
    return torch.stack(ys, 1), state


def run_step_states(layer, x, state=None, **kwargs):
    """Like :func:`run_steps` for an SSM kernel, but returns every state ``x_k`` stacked along
    the length axis (batch, length, ...)."""
    state = layer.initial_state(x.shape[0], dtype=x.dtype) if state is None else state
    states = []
    for t in range(x.shape[1]):
        _, state = layer.step(x[:, t], state, **kwargs)
        states.append(state)
    return torch.stack(states, 1)


def assert_parameter_gradcheck(layer, x, **tol):
    """gradcheck with respect to every parameter of ``layer`` at once, along random directions
    (fast_mode: the full mode costs 2 forwards per parameter entry)."""
    from torch.func import functional_call

    names = [n for n, _ in layer.named_parameters()]
    params = tuple(p.detach().clone().requires_grad_(True) for p in layer.parameters())

    def by_params(*ps):
        return functional_call(layer, dict(zip(names, ps)), (x.detach(),))

    assert torch.autograd.gradcheck(by_params, params, eps=1e-6, fast_mode=True, **tol)


cuda_only = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")

#: the device of a test parametrised over devices: CPU in the default suite, CUDA under
#: ``-m gpu`` (``make test-gpu``; skipped without CUDA)
DEVICES = ["cpu", pytest.param("cuda", marks=[pytest.mark.gpu, cuda_only])]
