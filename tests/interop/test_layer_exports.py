"""``control.forced_response(layer.to_lds(), T, U)`` equals the layer's own SSM output to 1e-8
(relative to the output's scale) in float64, for S4 (HiPPO-LegS in DPLR form), S4D (diagonal),
S4+ (the SSM after its SMR pre-filter) and a bare DPLR kernel, with both discretisations, with
the trained-style random D and with D = 0; python-control's frequency response of the export
is the layer kernel's DFT, and the S4 form cannot be handed to python-control by mistake."""

from __future__ import annotations

import control as ct
import numpy as np
import pytest

torch = pytest.importorskip("torch")

from lds_toolkit.neural import DPLRSSM, S4, S4Plus  # noqa: E402
from lds_toolkit.systems import LDS, S4Recursion  # noqa: E402

L = 120
LAYERS = {
    "S4": lambda disc: S4(2, 8, mode="dplr", disc=disc, dt_min=0.05, dt_max=0.5, seed=1),
    "S4D": lambda disc: S4(2, 8, init="lin", disc=disc, dt_min=0.05, dt_max=0.5, seed=2),
    "S4+": lambda disc: S4Plus(2, 8, disc=disc, dt_min=0.05, dt_max=0.5, seed=3),
    "DPLR": lambda disc: DPLRSSM(2, 8, disc=disc, dt_min=0.05, dt_max=0.5, seed=4),
}


def _ssm_io(layer, u):
    """(input of the SSM, SSM output) for a numpy u (L, H): S4+ filters u through SMR first."""
    x = torch.from_numpy(u)[None]
    with torch.no_grad():
        if isinstance(layer, DPLRSSM):
            return u, layer(x).numpy()[0]
        v = layer.smr(x) if isinstance(layer, S4Plus) else x
        return v.numpy()[0], layer.ssm(v).numpy()[0]


@pytest.mark.parametrize("with_d", [True, False], ids=["D", "no-D"])
@pytest.mark.parametrize("disc", ["bilinear", "zoh"])
@pytest.mark.parametrize("kind", list(LAYERS))
def test_forced_response_of_the_export_is_the_layer_output(kind, disc, with_d):
    layer = LAYERS[kind](disc).double()
    ssm = layer if isinstance(layer, DPLRSSM) else layer.ssm
    g = torch.Generator().manual_seed(7)
    with torch.no_grad():                          # move off the structured initialisation
        for name, p in ssm.named_parameters():
            if name not in ("log_dt", "D"):
                p.add_(0.1 * torch.randn(p.shape, generator=g, dtype=p.dtype))
        if not with_d:
            ssm.D.zero_()
    u = np.random.default_rng(0).standard_normal((L, 2))
    v, ref = _ssm_io(layer, u)
    sys = layer.to_lds()
    assert isinstance(sys, LDS) and isinstance(sys, ct.StateSpace) and sys.dt == 1.0
    resp = ct.forced_response(sys, np.arange(L, dtype=float), v.T)
    scale = np.abs(ref).max()
    np.testing.assert_allclose(resp.y.T, ref, rtol=0, atol=1e-8 * scale)
    if not with_d:  # the export's feed-through is C B̄ alone
        rec = layer.s4_recursion()
        np.testing.assert_allclose(sys.D, rec.C @ rec.B_bar, rtol=0, atol=1e-15)


@pytest.mark.parametrize("kind", ["S4", "S4D"])
def test_frequency_response_of_the_export_is_the_kernel_dft(kind):
    """An independent route: the export's transfer function at z = e^{iω} is
    Σ_k K_k z^{-k} + D of the layer's convolution kernel (stable modes: the tail is
    negligible after 4000 taps)."""
    layer = LAYERS[kind]("bilinear").double()
    K = layer.kernel(4000, torch.float64).detach().numpy()  # (H, L)
    D = layer.ssm.D.detach().numpy()
    w = np.array([0.05, 0.4, 1.3, 3.0])
    z = np.exp(1j * w)
    for h in range(2):
        ref = (K[h][None, :] * z[:, None] ** -np.arange(4000)[None, :]).sum(1) + D[h]
        ours = layer.to_lds(h)(z).ravel()
        np.testing.assert_allclose(ours, ref, rtol=1e-8)


def test_the_s4_form_is_not_a_system():
    layer = S4(2, 4, seed=0).double()
    rec = layer.s4_recursion()
    assert isinstance(rec, S4Recursion) and not isinstance(rec, ct.StateSpace)
    with pytest.raises(TypeError, match="StateSpace"):
        ct.forced_response(rec, np.arange(5.0), np.zeros((2, 5)))
    from lds_toolkit import simulate
    with pytest.raises(TypeError, match=r"convert it with system.to_lds\(\) first"):
        simulate(rec, np.zeros((5, 2)))
    assert rec.to_lds().equals(layer.to_lds())
