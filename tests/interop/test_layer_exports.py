"""``control.forced_response(layer.to_lds(), T, U)`` equals the layer's own SSM output to 1e-8
(relative to the output's scale) in float64, for S4 (HiPPO-LegS in DPLR form), S4D (diagonal),
S4+ (the SSM after its SMR pre-filter) and a bare DPLR kernel, with both discretisations, with
the trained-style random D and with D = 0; python-control's frequency response of the export
is the layer kernel's DFT, and the S4 form cannot be handed to python-control by mistake. The
signal names of the system a layer was built from (``from_lds``) survive every export."""

from __future__ import annotations

import control as ct
import numpy as np
import pytest

torch = pytest.importorskip("torch")

from lds_toolkit.neural import DPLRSSM, S4, DiagonalSSM, S4Plus  # noqa: E402
from lds_toolkit.systems import LDS, S4Recursion, simulate  # noqa: E402

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


def _named_plant():
    """Two channels (block-diagonal, a complex pair in channel 0), named signals."""
    A = np.zeros((3, 3))
    A[:2, :2] = [[0.8, -0.3], [0.3, 0.8]]
    A[2, 2] = 0.6
    B = np.array([[1.0, 0.0], [0.5, 0.0], [0.0, 1.0]])
    C = np.array([[1.0, -0.4, 0.0], [0.0, 0.0, 2.0]])
    return LDS(A, B, C, dt=1.0, inputs=["f", "g"], outputs=["p", "q"], name="plant")


FROM_LDS = {"DiagonalSSM": DiagonalSSM.from_lds, "S4": S4.from_lds, "S4+": S4Plus.from_lds}


def _exports(layer):
    """Every export of a layer, by name: the systems it gives."""
    return {"to_lds": layer.to_lds(), "to_lds(channel=1)": layer.to_lds(1),
            "continuous": layer.to_lds(continuous=True),
            "s4_recursion.to_lds": layer.s4_recursion().to_lds(),
            "from_lds(to_lds)": type(layer).from_lds(layer.to_lds()).to_lds(),
            "from_lds(s4_recursion)": type(layer).from_lds(layer.s4_recursion()).to_lds(),
            "from_lds(continuous)": type(layer).from_lds(layer.to_lds(continuous=True)).to_lds()}


@pytest.mark.parametrize("given", ["LDS", "StateSpace", "S4Recursion"])
@pytest.mark.parametrize("kind", list(FROM_LDS))
def test_names_round_trip_through_every_export(kind, given):
    plant = _named_plant()
    source = {"LDS": plant, "StateSpace": plant.to_statespace(),
              "S4Recursion": S4Recursion.from_lds(plant)}[given]
    layer = FROM_LDS[kind](source)
    assert layer.s4_recursion().names == {"inputs": ["f", "g"], "outputs": ["p", "q"],
                                          "name": "plant"}
    for what, sys_ in _exports(layer).items():
        if what == "to_lds(channel=1)":
            assert (sys_.input_labels, sys_.output_labels) == (["g"], ["q"]), what
        else:
            assert (sys_.input_labels, sys_.output_labels, sys_.name) == (
                ["f", "g"], ["p", "q"], "plant"), what
    # and the numbers are the system's: the export's response is the plant's
    u = np.random.default_rng(0).standard_normal((40, 2))
    np.testing.assert_allclose(simulate(layer.to_lds(), u).y, simulate(plant, u).y, atol=1e-9)


def test_names_of_single_channel_systems_and_their_defaults():
    a = LDS([[0.9]], [[1.0]], [[1.0]], dt=1.0, inputs="left", outputs="out_l")
    b = LDS([[0.5]], [[1.0]], [[1.0]], dt=1.0, inputs="right", outputs="out_r")
    named = S4.from_lds([a, b]).to_lds()
    assert (named.input_labels, named.output_labels) == (["left", "right"], ["out_l", "out_r"])
    same = S4.from_lds([a, a.with_matrices(A=[[0.3]])]).to_lds()   # two inputs named 'left'
    assert (same.input_labels, same.output_labels) == (["u[0]", "u[1]"], ["y[0]", "y[1]"])
    fresh = S4(2, 4, seed=0).to_lds()
    assert fresh.input_labels == ["u[0]", "u[1]"] and fresh.output_labels == ["y[0]", "y[1]"]


@pytest.mark.parametrize("kind", list(FROM_LDS))
def test_names_survive_load_state_dict_into_a_fresh_layer(kind):
    """A trained layer's state dict carries its names: a fresh layer of the same shape (here
    built from the same plant with python-control's default names) that loads it exports the
    plant's names, and the same numbers."""
    plant = _named_plant()
    layer = FROM_LDS[kind](plant)
    fresh = FROM_LDS[kind](plant.with_matrices(inputs=["u0", "u1"], outputs=["y0", "y1"],
                                               name="other"))
    assert fresh.to_lds().input_labels == ["u0", "u1"]
    state = layer.state_dict()
    assert any(k.endswith("_lds_names") and v.dtype == torch.uint8 for k, v in state.items())
    fresh.load_state_dict(state)  # strict: the names entry is expected, not unexpected
    got = fresh.to_lds()
    assert (got.input_labels, got.output_labels, got.name) == (["f", "g"], ["p", "q"], "plant")
    assert got.equals(layer.to_lds())
    # a state dict written before names travelled (or of a layer never given any) loads
    # strictly and leaves the names as they are
    old = {k: v for k, v in state.items() if not k.endswith("_lds_names")}
    unnamed = FROM_LDS[kind](plant)
    unnamed.load_state_dict(old)
    assert unnamed.to_lds().input_labels == ["f", "g"]
    bad = dict(state, **{next(k for k in state if k.endswith("_lds_names")): torch.ones(2)})
    with pytest.raises(RuntimeError, match=r"_lds_names must be the signal names of a layer's "
                                           r"state dict"):
        FROM_LDS[kind](plant).load_state_dict(bad)


def test_a_transfer_function_builds_a_layer_with_its_names():
    tf = ct.tf([1.0], [1.0, -0.5], 1.0, inputs="u", outputs="y", name="G")
    layer = S4.from_lds(tf)
    got = layer.to_lds()
    assert (got.input_labels, got.output_labels, got.name) == (["u"], ["y"], "G")
    u = np.random.default_rng(1).standard_normal((30, 1))
    np.testing.assert_allclose(simulate(got, u).y, simulate(ct.ss(tf), u).y, atol=1e-9)


def test_a_dplr_kernel_carries_its_names_through_load_state_dict_too():
    """The names live on the SSM base class: the DPLR kernel (no from_lds of its own; its
    names come from the layer that holds it) keeps them through a state dict as well."""
    from lds_toolkit.neural.layers._bridge import remember_names

    ssm = LAYERS["DPLR"]("zoh")
    remember_names(ssm, _named_plant())
    fresh = LAYERS["DPLR"]("zoh")
    fresh.load_state_dict(ssm.state_dict())
    got = fresh.to_lds()
    assert (got.input_labels, got.output_labels, got.name) == (["f", "g"], ["p", "q"], "plant")
