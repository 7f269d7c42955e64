"""STU.to_lds() and the constant-time STU.step: the layer as one LDS.

``simulate(layer.to_lds(), u)`` against ``forward`` (an independent route: FFT convolutions
with the exact filters) for every form, branch, lag, k_u and k_y; the single-input slice; the
default step against ``forward``; its operation count at early and late positions; and
python-control's analysis (poles, frequency response: what ``ct.bode`` plots, forced
response) of a trained STU."""

from __future__ import annotations

import warnings

import control as ct
import numpy as np
import pytest
import torch
from torch.utils._python_dispatch import TorchDispatchMode

from lds_toolkit.learning.filters import FilterPrecisionWarning
from lds_toolkit.neural import STU, train
from lds_toolkit.neural.layers._stu_lds import STULDSState
from lds_toolkit.neural.tasks import SequenceTask
from lds_toolkit.systems import LDS, simulate

from .conftest import dense_hankel_filters, randomize_zero_params

T, K, D = 40, 5, 3
VARIANTS = [dict(), dict(lag=1), dict(k_u=3, k_y=2), dict(k_u=2, k_y=1, lag=2),
            dict(branches="positive", k_y=1)]


def _stu(filters="dense", **kw):
    filt = dense_hankel_filters(T, K) if filters == "dense" else None
    layer = STU(D, T, K, filters=filt, seed=0, **kw).double()
    randomize_zero_params(layer, seed=1)
    with torch.no_grad():  # keep random AR coefficients clearly stable
        if layer.a_y is not None:
            layer.a_y.mul_(0.5)
    return layer


def _rel(a, b):
    return float(np.linalg.norm(np.asarray(a) - np.asarray(b)) / np.linalg.norm(np.asarray(b)))


@pytest.mark.parametrize("form", ["exact", "tensordot"])
@pytest.mark.parametrize("kw", VARIANTS, ids=lambda kw: ",".join(f"{k}={v}" for k, v in
                                                                 kw.items()) or "plain")
def test_simulated_export_equals_forward(form, kw):
    layer = _stu(form=form, **kw)
    x = torch.randn(2, T, D, dtype=torch.float64, generator=torch.Generator().manual_seed(3))
    with torch.no_grad():
        y = layer(x).numpy()
    sys = layer.to_lds()
    assert isinstance(sys, LDS) and sys.dt == 1.0 and (sys.n_inputs, sys.n_outputs) == (D, D)
    assert list(sys.input_labels) == [f"u[{h}]" for h in range(D)]
    assert list(sys.output_labels) == [f"y[{h}]" for h in range(D)]
    assert _rel(simulate(sys, x.numpy(), return_states=False).y, y) <= 1e-5
    # the single-input slice: input 1 alone reaches every output
    one = layer.to_lds(1)
    assert (one.n_inputs, one.n_outputs, list(one.input_labels)) == (1, D, ["u[1]"])
    x1 = torch.zeros_like(x)
    x1[..., 1] = x[..., 1]
    with torch.no_grad():
        y1 = layer(x1).numpy()
    assert _rel(simulate(one, x[..., 1:2].numpy(), return_states=False).y, y1) <= 1e-5


@pytest.mark.parametrize("kind", ["H", "N"])
@pytest.mark.parametrize("form", ["exact", "tensordot"])
def test_shared_filters_export(kind, form):
    """The layer's own (shared) filters go through filters_as_lds and its cache."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FilterPrecisionWarning)
        layer = STU(2, 256, 8, form=form, filter_kind=kind, k_u=1, seed=0).double()
        randomize_zero_params(layer, seed=2)
        sys = layer.to_lds()
    x = torch.randn(1, 256, 2, dtype=torch.float64, generator=torch.Generator().manual_seed(4))
    with torch.no_grad():
        y = layer(x).numpy()
    assert _rel(simulate(sys, x.numpy(), return_states=False).y, y) <= 1e-5


@pytest.mark.parametrize("form", ["exact", "tensordot"])
def test_default_step_is_the_lds_and_equals_forward(form):
    layer = _stu(form=form, k_u=2, k_y=2, lag=1)
    x = torch.randn(2, T, D, dtype=torch.float64, generator=torch.Generator().manual_seed(5))
    with torch.no_grad():
        y = layer(x)
        state = layer.initial_state(2)
        assert isinstance(state, STULDSState)
        shapes = [tuple(t.shape) for t in state]
        ys = []
        for t in range(T):
            y_t, state = layer.step(x[:, t], state)
            assert [tuple(s.shape) for s in state] == shapes  # constant-size state
            ys.append(y_t)
    assert _rel(torch.stack(ys, 1).numpy(), y.numpy()) <= 1e-5
    # the state is the exported system's state: banks, then the delay line, then outputs
    sys = layer.to_lds()
    assert sum(int(np.prod(s[1:])) for s in shapes) == sys.n_states


class _Count(TorchDispatchMode):
    """Counts aten operations and the elements they produce (a machine-independent cost)."""

    def __init__(self):
        super().__init__()
        self.ops = self.elements = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        self.ops += 1
        for o in out if isinstance(out, tuple | list) else (out,):
            if isinstance(o, torch.Tensor):
                self.elements += o.numel()
        return out


def _step_cost(layer, state, x_t):
    with torch.no_grad(), _Count() as c:
        _, state = layer.step(x_t, state)
    return (c.ops, c.elements), state


@pytest.mark.parametrize("form", ["exact", "tensordot"])
def test_step_cost_does_not_grow_with_position_or_horizon(form):
    """Same operations and elements at position 1 and at position 2000 of a T = 2048 layer,
    and far fewer elements than the sliding-window step, whose work is proportional to T."""
    layer = STU(2, 2048, 24, form=form, k_y=1, seed=0).double()
    x = torch.randn(1, 2, dtype=torch.float64)
    state = layer.initial_state(1)
    _, state = layer.step(x, state)  # builds the matrices once
    first, state = _step_cost(layer, state, x)
    for _ in range(2000):
        _, state = layer.step(x, state)
    late, state = _step_cost(layer, state, x)
    assert first == late
    window = layer.initial_state(1, mode="window")
    (_, window_elements), _ = _step_cost(layer, window, x)
    assert late[1] * 20 < window_elements


def _trained_stu():
    rng = np.random.default_rng(0)
    u = rng.standard_normal((32, 24, 1))
    y = 0.3 * np.cumsum(u, axis=1) / np.sqrt(np.arange(1, 25))[None, :, None]
    mask = np.ones((32, 24), dtype=bool)
    data = SequenceTask(u.astype(np.float32), y.astype(np.float32), mask, mask.copy(),
                        name="decayed-sum")
    layer = STU(1, 64, 8, form="exact", k_y=1, seed=0)
    before = layer.M.detach().clone()
    train(layer, data, steps=5, batch_size=8, lr=1e-2, progress=False)
    assert not torch.equal(before, layer.M.detach())  # it did learn
    return layer


def test_python_control_analyses_a_trained_stu():
    layer = _trained_stu()
    sys = layer.to_lds()
    ss = ct.ss(sys)
    poles = ct.poles(ss)
    # the filter-bank decays (+-alpha) and the AR pole a_1: real, inside the unit circle
    assert np.all(np.abs(poles.imag) < 1e-9) and np.all(np.abs(poles) < 1)
    a1 = float(layer.a_y.detach()[0, 0])
    assert np.min(np.abs(poles - a1)) < 1e-9
    # forced response (python-control's own simulation) equals the layer's forward
    x = np.random.default_rng(1).standard_normal((1, 64, 1))
    with torch.no_grad():
        y = layer.double()(torch.from_numpy(x)).numpy()[0]
    resp = ct.forced_response(ss, np.arange(64.0), x[0].T)
    assert _rel(resp.outputs.reshape(-1), y[:, 0]) <= 1e-5
    # Bode / frequency response = the DTFT of the system's Markov parameters (long enough
    # for the slowest decay to die out)
    w = np.array([0.01, 0.3, 1.0, 2.5])
    fr = ct.frequency_response(ss, w)
    h = sys.impulse_response(40000)[:, 0, 0]
    dtft = (h[None, :] * np.exp(-1j * np.outer(w, np.arange(h.size)))).sum(1)
    np.testing.assert_allclose(fr.magnitude.ravel(), np.abs(dtft), rtol=1e-6)
    np.testing.assert_allclose(fr.complex.ravel(), dtft, rtol=1e-6)


def test_to_lds_arguments():
    layer = _stu()
    with pytest.raises(ValueError, match=r"channel must be in \[0, 2\]"):
        layer.to_lds(3)
    with pytest.raises(ValueError, match=r"tol must be a number in \(0, 1\)"):
        layer.to_lds(tol=0)
    with pytest.raises(ValueError, match="mode must be one of"):
        layer.initial_state(1, mode="fast")
    with pytest.raises(TypeError, match="STULDSState or STUState"):
        layer.step(torch.zeros(1, D, dtype=torch.float64), (1, 2))


def test_float32_layer_steps_in_float64_state():
    """A float32 layer: the state is float64 (the exponential sums' coefficients cancel), the
    output float32, and the steps follow the float32 forward to float32 accuracy."""
    layer = STU(2, 64, 8, form="tensordot", seed=0)
    x = torch.randn(1, 64, 2, generator=torch.Generator().manual_seed(6))
    with torch.no_grad():
        y = layer(x)
        state = layer.initial_state(1)
        assert all(t.dtype == torch.float64 for t in state)
        ys = []
        for t in range(64):
            y_t, state = layer.step(x[:, t], state)
            ys.append(y_t)
    out = torch.stack(ys, 1)
    assert out.dtype == torch.float32
    assert _rel(out.numpy(), y.numpy()) <= 1e-5


def test_unreachable_tol_names_the_ways_out():
    """N_T's last filters at T = 2048 are round-off: no short exponential sum meets 1e-6."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FilterPrecisionWarning)
        layer = STU(1, 2048, 24, filter_kind="N", seed=0)
        with pytest.raises(ValueError, match=r"STU: filters_as_lds\(T=2048, k=24, kind='N'\)"
                                             r".*mode='window'"):
            layer.initial_state(1)
        assert isinstance(layer.initial_state(1, mode="window"), tuple)
        assert layer.to_lds(tol=1e-5).n_inputs == 1
