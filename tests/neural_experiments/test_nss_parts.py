"""The measurements of ``nss-s4`` checked against independent computations (fast).

The acceptance check of issue 13: the weighted state volume (and the weighted state change)
is unchanged when a layer's state is rescaled (x -> s x, B -> s B, C -> C / s), while the
paper's raw volume is not.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from lds_toolkit.experiments.catalog import _nss_s4_measures as measures
from lds_toolkit.experiments.catalog import nss_s4 as nss
from lds_toolkit.neural.tasks import sine_fit

pytestmark = pytest.mark.usefixtures("one_torch_thread")

CFG = {"d_model": 4, "d_state": 8}


def _model(name, seed=3):
    torch.set_default_dtype(torch.float64)
    try:
        return nss.build_model(name, CFG, seed)
    finally:
        torch.set_default_dtype(torch.float32)


def _rescale_state(model, s):
    """x -> s x: B -> s B, C -> C / s (s complex (H, N/2) for a diagonal SSM)."""
    ssm = model.blocks[0].layer.ssm
    with torch.no_grad():
        B = torch.view_as_complex(ssm.B.data) * s
        C = torch.view_as_complex(ssm.C.data) / s
        ssm.B.data.copy_(torch.view_as_real(B))
        ssm.C.data.copy_(torch.view_as_real(C))


@pytest.mark.parametrize("name", ["s4d", "s4d-free", "s4", "s4+"])
def test_weighted_volume_is_unchanged_when_the_state_is_rescaled(name):
    model = _model(name)
    u = sine_fit(30).inputs[0]
    u_pert = sine_fit(30, jitter=0.5, rng=1).inputs[0]
    _, x, C = measures.layer_states(model, u)
    _, xp, _ = measures.layer_states(model, u_pert)
    y = model(torch.as_tensor(u[None]))
    H, N2 = C.shape
    gen = np.random.default_rng(0)
    if name in ("s4", "s4+"):  # DPLR: modes coupled by P P*, one real factor per channel
        s = torch.as_tensor(gen.uniform(0.05, 20.0, (H, 1)) * np.ones((1, N2)),
                            dtype=torch.complex128)
    else:  # diagonal: any complex factor per mode
        s = torch.as_tensor(gen.uniform(0.05, 20.0, (H, N2))
                            * np.exp(1j * gen.uniform(-np.pi, np.pi, (H, N2))))
    _rescale_state(model, s)
    _, x2, C2 = measures.layer_states(model, u)
    _, xp2, _ = measures.layer_states(model, u_pert)
    # the rescaled layer is the same function ...
    torch.testing.assert_close(model(torch.as_tensor(u[None])), y, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(x2, x * s.numpy(), rtol=1e-9, atol=1e-12)
    # ... the weighted measures do not move, the raw volume does
    np.testing.assert_allclose(measures.weighted_state_volume(x2, C2),
                               measures.weighted_state_volume(x, C), rtol=1e-10)
    assert measures.relative_state_change(x2, xp2, C2) == pytest.approx(
        measures.relative_state_change(x, xp, C), rel=1e-10)
    raw, raw2 = measures.state_volume(x), measures.state_volume(x2)
    assert np.max(np.abs(raw2 / raw - 1)) > 0.5


def test_a_common_rescaling_leaves_the_raw_state_change_unchanged():
    model = _model("s4d")
    u = sine_fit(30).inputs[0]
    u_pert = sine_fit(30, jitter=0.5, rng=2).inputs[0]
    _, x, _ = measures.layer_states(model, u)
    _, xp, _ = measures.layer_states(model, u_pert)
    _rescale_state(model, torch.tensor(7.0 - 2.0j, dtype=torch.complex128))
    _, x2, _ = measures.layer_states(model, u)
    _, xp2, _ = measures.layer_states(model, u_pert)
    assert measures.relative_state_change(x2, xp2) == pytest.approx(
        measures.relative_state_change(x, xp), rel=1e-10)
    assert measures.state_volume(x2)[-1] == pytest.approx(
        abs(7 - 2j) * measures.state_volume(x)[-1])


@pytest.mark.parametrize("name", ["s4d", "s4", "s4+"])
def test_recurrent_states_equal_the_layers_states_and_its_final_state(name):
    model = _model(name)
    u = np.sin(np.linspace(0, 3, 40))[:, None]
    v, x, C = measures.layer_states(model, u)
    layer = model.blocks[0].layer
    z = model.encoder(torch.as_tensor(u[None]))
    scan = layer.states(z)[0].detach().numpy()  # the doubling scan (S4+: after SMR)
    np.testing.assert_allclose(x, scan, rtol=1e-9, atol=1e-12)
    _, state = layer(z, return_state=True)  # convolution mode's x_{L-1}
    final = state.ssm if hasattr(state, "ssm") else state
    np.testing.assert_allclose(x[-1], final.detach().numpy()[0], rtol=1e-9, atol=1e-12)
    # the SSM output 2 Re(C x_t) + D v_t is the layer's SSM part
    D = layer.ssm.D.detach().numpy()
    y = 2 * np.einsum("hn,thn->th", C, x).real + D * v
    np.testing.assert_allclose(y, layer.ssm(torch.as_tensor(v[None]))[0].detach().numpy(),
                               rtol=1e-9, atol=1e-10)


def test_nominal_floor_is_the_expected_squared_jitter_of_the_next_sample():
    """E over δ ~ U(-jh, jh) of (sin(ω t) - sin(ω (t + δ)))^2, by quadrature, averaged over
    the grid, against the mean of nominal_floor over many draws."""
    n, omega, j = 100, 5 * math.pi, 0.5
    h = 1 / (n - 1)
    t = h * np.arange(1, n + 1)
    delta = np.linspace(-j * h, j * h, 2001)
    exact = np.mean([np.trapezoid((np.sin(omega * ti) - np.sin(omega * (ti + delta))) ** 2,
                                  delta) / (2 * j * h) for ti in t])
    draws = [measures.nominal_floor(sine_fit(n, jitter=j, rng=i)) for i in range(400)]
    assert np.mean(draws) == pytest.approx(exact, rel=0.03)
    assert exact == pytest.approx(omega**2 * (j * h) ** 2 / 3 * 0.5, rel=0.05)  # ≈ 1.05e-3


def test_lds_analysis_matches_the_closed_form_of_a_diagonal_layer():
    model = _model("s4d-free")
    ssm = model.blocks[0].layer.ssm
    with torch.no_grad():  # two modes with Re A > 0: growing at every step
        ssm.A_real.data[0, 0] = 0.3
        ssm.A_real.data[2, 1] = 0.05
    res = measures.lds_analysis(model, rates=[0.5, 1.0, 8.0])
    dt = torch.exp(ssm.log_dt).detach().numpy()
    a = torch.complex(ssm.A_real, ssm.A_imag).detach().numpy()

    def moduli(rate):
        z = (dt * rate)[:, None] * a
        return np.abs((1 + z / 2) / (1 - z / 2))

    want = np.sort(np.repeat(moduli(1.0).ravel(), 2))  # conjugate pairs
    np.testing.assert_allclose(np.sort(res["moduli"]), want, rtol=1e-10)
    assert res["unstable_modes"] == 4 and res["unstable_channels"] == 2
    np.testing.assert_allclose(res["radius_at_rate"], [moduli(r).max() for r in (0.5, 1, 8)],
                               rtol=1e-10)
    # for a normal (diagonal) stable channel the certificate proves exactly its radius
    stable = [h for h in range(4) if moduli(1.0)[h].max() < 1]
    assert res["certified_rho"] == pytest.approx(max(moduli(1.0)[h].max() for h in stable),
                                                 rel=1e-8)
    assert np.isnan(res["memory_length"][0]) and np.isfinite(res["memory_length"][1])
    assert measures.nss_threshold(100) == pytest.approx(10 ** 0.06)


@pytest.mark.parametrize("name", ["s4", "s4+", "s4d"])
def test_radius_at_rate_is_read_from_the_blocks_of_to_lds(name):
    """The spectral radius at each rate, taken from the layer's per-channel Ā_h, is the one of
    the diagonal blocks of the exported block-diagonal system ``to_lds(rate=r)`` (the route
    before: the same matrices, so the same numbers to the last bit)."""
    model = _model(name)
    layer = model.blocks[0].layer
    rates = [0.25, 1.0, 16.0]
    N = layer.ssm.d_state
    want = []
    for r in rates:
        A = layer.to_lds(rate=r).A
        want.append(max(float(np.abs(np.linalg.eigvals(A[h * N:(h + 1) * N,
                                                          h * N:(h + 1) * N])).max())
                        for h in range(layer.ssm.d_model)))
        assert np.count_nonzero(A) == np.count_nonzero(
            [A[h * N:(h + 1) * N, h * N:(h + 1) * N] for h in range(layer.ssm.d_model)])
    got = measures.lds_analysis(model, rates=rates)["radius_at_rate"]
    np.testing.assert_array_equal(got, want)


def test_gradient_sum_is_the_sum_of_every_parameter_gradient():
    model = _model("s4d")
    data = sine_fit(20)
    rec = nss.GradientSum(model)
    loss = ((model(torch.as_tensor(data.inputs)) - torch.as_tensor(data.targets)) ** 2).mean()
    loss.backward()
    rec(0, {})
    flat = torch.cat([p.grad.ravel() for p in model.parameters()])
    assert rec.values == [pytest.approx(float(flat.sum()), rel=1e-12)]
