"""Tests of the Focus layer: IIR filtering against scipy and a loop recursion, causality, the
one-bin shift of the hyper-network, the attention/gates against an explicit computation,
gradients, errors."""

from __future__ import annotations

import doctest
import math

import numpy as np
import pytest
import scipy.signal
import torch
import torch.nn.functional as F

from lds_toolkit.neural.layers._focus_hyper import FocusGlobalConv, causal_fft_conv
from lds_toolkit.neural.layers._focus_iir import (
    filter_bins,
    iir2_frequency_response,
    iir2_impulse,
    map_coefficients,
    paper_printed_bin_filter,
)
from lds_toolkit.neural.layers.focus import Focus

from .conftest import assert_parameter_gradcheck

F64 = torch.float64


# (a1, a2) pairs: complex poles, nearly marginal (|p| = sqrt(0.999)), real poles, a double pole
# (a1^2 = 4 a2), tiny coefficients, the sigmoid's corners
COEFFS = [(0.5, 0.5), (0.3, 0.999), (0.9, 0.1), (0.8, 0.16), (1e-3, 1e-3), (0.999, 0.999)]


def loop_iir2(x: np.ndarray, a1: float, a2: float) -> np.ndarray:
    """The order-2 recursion y[t] = x[t] - a1 y[t-1] - a2 y[t-2], run with a plain loop."""
    y = np.zeros_like(x)
    for t in range(len(x)):
        y[t] = x[t]
        if t >= 1:
            y[t] -= a1 * y[t - 1]
        if t >= 2:
            y[t] -= a2 * y[t - 2]
    return y


def poles(a1, a2):
    """Both roots of z^2 + a1 z + a2 (vectorised quadratic formula), shape (..., 2)."""
    a1, a2 = np.asarray(a1, dtype=complex), np.asarray(a2, dtype=complex)
    disc = np.sqrt(a1 * a1 - 4 * a2)
    return np.stack([(-a1 + disc) / 2, (-a1 - disc) / 2], axis=-1)


def make_input(bsz=2, length=50, d=8, seed=0, dtype=F64):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(bsz, length, d, generator=g, dtype=dtype)


def make_layer(d=8, seed=0, **kw):
    torch.manual_seed(seed)
    kw.setdefault("hyper_kernel_size", 64)
    return Focus(d, **kw).to(F64)


# ---------------------------------------------------------------- IIR filtering


@pytest.mark.parametrize("a1,a2", COEFFS)
def test_impulse_matches_scipy_lfilter(a1, a2):
    n = 3000
    h = iir2_impulse(torch.tensor([a1, a2], dtype=F64), n).numpy()
    delta = np.zeros(n)
    delta[0] = 1.0
    ref = scipy.signal.lfilter([1.0], [1.0, a1, a2], delta)
    np.testing.assert_allclose(h, ref, rtol=0, atol=1e-12 * max(1.0, np.abs(ref).max()))


@pytest.mark.parametrize("r", [1, 2, 5, 16, 37])
def test_filter_bins_equals_loop_recursion_per_bin(r):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 3, r, 4))
    a = rng.uniform(0, 1, size=(2, 3, 4, 2))
    a[0, 0, 0] = (0.3, 0.999)  # near-marginal pole: long response, still exact (bin-local)
    y = filter_bins(torch.from_numpy(x), iir2_impulse(torch.from_numpy(a), r)).numpy()
    ref = np.empty_like(x)
    for b, k, d in np.ndindex(2, 3, 4):
        ref[b, k, :, d] = loop_iir2(x[b, k, :, d], *a[b, k, d])
    np.testing.assert_allclose(y, ref, rtol=0, atol=1e-12)


@pytest.mark.parametrize("a1,a2", COEFFS[:4])
def test_dft_of_impulse_response_is_eq5(a1, a2):
    """Pins the sign convention: our recursion has the frequency response printed as eq. 5.

    The N-point DFT of the first N taps equals H(k/N) up to the truncated tail ~|pole|^N."""
    n = 20000
    a = torch.tensor([a1, a2], dtype=F64)
    h = iir2_impulse(a, n)
    freqs = torch.arange(n // 2 + 1, dtype=F64) / n
    ref = iir2_frequency_response(a, freqs)
    tail = math.sqrt(max(a2, 1e-12)) ** n * n if a1 * a1 < 4 * a2 else 1e-6
    err = (torch.fft.rfft(h) - ref).abs().max().item()
    assert err < 1e-9 + tail
    # and the conjugate response is *not* the response of the causal recursion
    assert (torch.fft.rfft(h) - ref.conj()).abs().max().item() > 1e-2


def test_coefficients_in_unit_square_give_stable_filters():
    """Sec. 4's claim: sigmoid outputs (0, 1)^2 always give a stable order-2 filter."""
    a1, a2 = np.meshgrid(*(2 * [np.linspace(1e-4, 1 - 1e-4, 201)]))
    p = poles(a1, a2)
    np.testing.assert_allclose(p[..., 0] * p[..., 1], a2, atol=1e-12)  # they are the roots
    assert np.abs(p).max() < 1.0


def test_paper_coefficients_cannot_give_a_low_pass_filter():
    """With (a1, a2) in (0, 1)^2 the poles have negative real part and the DC gain is < 1: the
    EMA-like kernel of the paper's Fig. 2 is out of reach (why "stable_triangle" exists)."""
    a1, a2 = np.meshgrid(*(2 * [np.linspace(1e-3, 1 - 1e-3, 201)]))
    assert poles(a1, a2).real.max() < 0
    assert (1.0 / (1.0 + a1 + a2)).max() < 1.0  # DC gain, |H(f = 0)|


def test_stable_triangle_map_covers_stable_filters_only():
    t = torch.linspace(1e-3, 1 - 1e-3, 41, dtype=F64)
    theta = torch.stack(torch.meshgrid(t, t, indexing="ij"), dim=-1).reshape(-1, 2)
    a = map_coefficients(theta, "stable_triangle").numpy()
    assert np.abs(poles(a[:, 0], a[:, 1])).max() < 1.0
    assert poles(a[:, 0], a[:, 1]).real.max() > 0.9  # low-frequency poles are reachable
    # corners of the triangle are approached: a2 -> +-1, |a1| -> 2
    assert a[:, 1].min() < -0.99 and a[:, 1].max() > 0.99 and np.abs(a[:, 0]).max() > 1.99
    # an EMA: Theta = (0.1, 0.5) -> a = (-0.8, 0) -> h[n] = 0.8^n
    a_ema = map_coefficients(torch.tensor([0.1, 0.5], dtype=F64), "stable_triangle")
    torch.testing.assert_close(a_ema, torch.tensor([-0.8, 0.0], dtype=F64))
    h = iir2_impulse(a_ema, 50)
    torch.testing.assert_close(h, 0.8 ** torch.arange(50, dtype=F64), rtol=1e-13, atol=0)
    assert torch.equal(map_coefficients(theta, "paper"), theta)


def test_paper_printed_form_is_anticausal_and_circular():
    """Eq. 6 read literally (unpadded FFT times the conjugate response) leaks the future."""
    r = 32
    x = make_input(1, r, 3).reshape(1, 1, r, 3)
    a = torch.full((1, 1, 3, 2), 0.5, dtype=F64)
    y = paper_printed_bin_filter(x, a)
    x2 = x.clone()
    x2[:, :, 20:] += 1.0
    y2 = paper_printed_bin_filter(x2, a)
    assert (y2[:, :, :20] - y[:, :, :20]).abs().max() > 1e-2  # past outputs moved
    # while ours is causal and equals the recursion
    ours = filter_bins(x, iir2_impulse(a, r))
    ours2 = filter_bins(x2, iir2_impulse(a, r))
    assert (ours2[:, :, :20] - ours[:, :, :20]).abs().max() < 1e-12


@pytest.mark.parametrize("radius,n_taps", [(0.9995, 16384), (0.99, 4096), (0.5, 64)])
def test_float32_taps_near_the_unit_circle(radius, n_taps):
    """float32 taps equal the float64 recursion to float32 round-off, even for a pole next to
    the unit circle (repeated squaring in float32 lost 1.3e-2 here; the taps are now built in
    float64 and rounded once)."""
    theta = 0.3
    a1, a2 = -2 * radius * math.cos(theta), radius**2  # poles radius * exp(+-j theta)
    ref = scipy.signal.lfilter([1.0], [1.0, a1, a2], np.r_[1.0, np.zeros(n_taps - 1)])
    h32 = iir2_impulse(torch.tensor([a1, a2], dtype=torch.float32), n_taps)
    assert h32.dtype == torch.float32
    # the reference for a float32 input is the filter of the float32-rounded coefficients
    a32 = np.float32([a1, a2]).astype(np.float64)
    ref32 = scipy.signal.lfilter([1.0], [1.0, *a32], np.r_[1.0, np.zeros(n_taps - 1)])
    scale = np.abs(ref32).max()
    assert np.abs(h32.numpy() - ref32).max() / scale < 1e-6
    # and float64 taps match the float64 recursion to round-off
    h64 = iir2_impulse(torch.tensor([a1, a2], dtype=F64), n_taps).numpy()
    assert np.abs(h64 - ref).max() / np.abs(ref).max() < 1e-10


def test_float32_taps_keep_their_gradient():
    a = torch.tensor([0.3, 0.6], dtype=torch.float32, requires_grad=True)
    iir2_impulse(a, 50).sum().backward()
    a64 = a.detach().double().requires_grad_(True)
    iir2_impulse(a64, 50).sum().backward()
    assert a.grad.dtype == torch.float32
    torch.testing.assert_close(a.grad.double(), a64.grad, rtol=1e-6, atol=1e-6)


# ---------------------------------------------------------------- the layer's filtered signal


@pytest.mark.parametrize(
    "kw,length",
    [
        (dict(), 50),  # n_bins=4 -> R = 13, padded to 52
        (dict(bin_size=7, n_filters=2), 30),
        (dict(adaptive=False, n_filters=3, n_bins=3), 31),
        (dict(bin_size=9, coefficients="stable_triangle"), 40),
    ],
)
def test_filtered_equals_loop_reference(kw, length):
    layer = make_layer(**kw)
    x = make_input(length=length)
    theta = layer.iir_coefficients(x).detach().numpy()
    xf = layer.filtered(x).detach().numpy()
    r = kw.get("bin_size") or -(-length // kw.get("n_bins", 4))
    xn = x.numpy()
    ref = np.zeros_like(xn)
    for b, d in np.ndindex(xn.shape[0], xn.shape[2]):
        for start in range(0, length, r):
            k = start // r
            th = theta[min(b, theta.shape[0] - 1), min(k, theta.shape[1] - 1), d]
            seg = xn[b, start : start + r, d]
            ref[b, start : start + r, d] = sum(loop_iir2(seg, *th[f]) for f in range(len(th)))
    np.testing.assert_allclose(xf, ref, rtol=0, atol=1e-12)


def test_hypernetwork_is_shifted_by_one_bin():
    layer = make_layer(bin_size=10)
    x = make_input(length=60)
    theta = layer.iir_coefficients(x)
    assert theta.shape == (2, 6, 8, 1, 2)
    assert bool(((theta > 0) & (theta < 1)).all())
    # bin 0 uses the learned default, identical for every batch element
    assert torch.equal(theta[0, 0], theta[1, 0])
    for b in range(5):
        x2 = x.clone()
        x2[:, 10 * b : 10 * (b + 1)] += torch.randn_like(x2[:, 10 * b : 10 * (b + 1)])
        theta2 = layer.iir_coefficients(x2)
        # coefficients of bins <= b do not see bin b; bin b + 1 does
        assert (theta2[:, : b + 1] - theta[:, : b + 1]).abs().max() < 1e-14
        assert (theta2[:, b + 1] - theta[:, b + 1]).abs().max() > 1e-6


@pytest.mark.parametrize("length,ksize", [(1, 4), (37, 5), (20, 64)])
def test_causal_fft_conv_equals_numpy_convolve(length, ksize):
    rng = np.random.default_rng(2)
    x = rng.standard_normal((2, length, 3))
    k = rng.standard_normal((3, ksize))
    y = causal_fft_conv(torch.from_numpy(x), torch.from_numpy(k)).numpy()
    ref = np.empty_like(x)
    for b, d in np.ndindex(2, 3):
        ref[b, :, d] = np.convolve(x[b, :, d], k[d])[:length]  # k[d, 0] multiplies x[t]
    np.testing.assert_allclose(y, ref, rtol=0, atol=1e-12)


def test_hypernetwork_equals_explicit_computation():
    """Eqs. 2-3 by hand: squashed causal conv + skip, GELU, max over torch's adaptive windows
    inside each bin, MLP with two sigmoids, then the shift by one bin."""
    layer = make_layer(d=3, bin_size=7, oversample=3, hyper_hidden=4, n_filters=2)
    hyp = layer.hyper
    x = make_input(1, 21, 3)
    k = hyp.conv.kernel.detach().numpy()
    k = np.sign(k) * np.maximum(np.abs(k) - hyp.conv.squash, 0.0)
    xn = x[0].numpy()
    u = np.stack([np.convolve(xn[:, d], k[d])[:21] for d in range(3)], axis=1)
    u = F.gelu(torch.from_numpy(u + hyp.conv.skip.detach().numpy() * xn)).numpy()
    w1, c1 = hyp.fc1.weight.detach().numpy(), hyp.fc1.bias.detach().numpy()
    w2, c2 = hyp.fc2.weight.detach().numpy(), hyp.fc2.bias.detach().numpy()
    sig = lambda z: 1 / (1 + np.exp(-z))
    theta = layer.iir_coefficients(x)[0].detach().numpy()  # (3 bins, D, F, 2)
    np.testing.assert_allclose(theta[0], sig(hyp.first_bin_logits.detach().numpy()), atol=1e-14)
    for b in range(2):
        seg = u[7 * b : 7 * (b + 1)]
        e = np.stack([seg[(i * 7) // 3 : -(-(i + 1) * 7 // 3)].max(0) for i in range(3)], 1)
        th = sig(sig(e @ w1.T + c1) @ w2.T + c2).reshape(3, 2, 2)  # (D, F, 2)
        np.testing.assert_allclose(theta[b + 1], th, rtol=0, atol=1e-13)


def test_focus_h_coefficients_are_free_parameters_shared_by_bins():
    layer = make_layer(adaptive=False, n_filters=2)
    assert layer.hyper is None and layer.theta_logits.shape == (8, 2, 2)
    theta = layer.iir_coefficients(make_input(length=40))
    assert theta.shape == (1, 1, 8, 2, 2)
    torch.testing.assert_close(theta[0, 0], torch.sigmoid(layer.theta_logits))


# ---------------------------------------------------------------- whole layer


def explicit_forward(layer: Focus, x: torch.Tensor) -> torch.Tensor:
    """Eqs. 9-14 with explicit chunk loops and masks, using the (separately tested) x_f."""
    xf = layer.filtered(x)
    bsz, length, d = x.shape
    nh = layer.n_heads
    # chunk length: fixed, or the paper's C chunks of ceil(L / C)
    m = layer.chunk_size if layer.n_chunks is None else math.ceil(length / layer.n_chunks)
    dh = d // nh
    q, k, v = layer.q_proj(x), layer.k_proj(xf), layer.v_proj(xf)
    y = torch.zeros_like(x)
    for start in range(0, length, m):
        sl = slice(start, min(start + m, length))
        n = sl.stop - sl.start
        mask = torch.ones(n, n, dtype=torch.bool).tril()
        for h in range(nh):
            hs = slice(h * dh, (h + 1) * dh)
            s = q[:, sl, hs] @ k[:, sl, hs].transpose(1, 2) / math.sqrt(dh)
            p = torch.softmax(s.masked_fill(~mask, float("-inf")), dim=-1)
            y[:, sl, hs] = p @ v[:, sl, hs]
    gamma = F.silu(xf @ layer.gamma_proj.weight.T + layer.gamma_proj.bias)
    phi = torch.sigmoid(xf @ layer.phi_proj.weight.T + layer.phi_proj.bias)
    z = F.silu(xf @ layer.h_proj.weight.T + (gamma * y) @ layer.u_proj.weight.T + layer.h_proj.bias)
    return phi * z + (1 - phi) * x


@pytest.mark.parametrize(
    "kw,length",
    [(dict(), 64), (dict(chunk_size=7, n_heads=2), 45), (dict(chunk_size=100), 30),
     (dict(n_chunks=4), 64), (dict(n_chunks=5, n_heads=2), 47), (dict(n_chunks=32), 30)],
)
def test_forward_equals_explicit_computation(kw, length):
    layer = make_layer(**kw)
    x = make_input(length=length)
    torch.testing.assert_close(layer(x), explicit_forward(layer, x), rtol=0, atol=1e-12)


CAUSAL_CASES = [
    dict(),
    dict(adaptive=False),
    dict(bin_size=6, chunk_size=5, n_filters=2, n_heads=2),
    dict(n_bins=3, chunk_size=8, oversample=4),
    dict(bin_size=10, coefficients="stable_triangle"),
    dict(n_chunks=4),
    dict(n_chunks=6, bin_size=9, coefficients="stable_triangle"),
    dict(n_chunks=3, adaptive=False),
    dict(hyper_kernel_size=53),  # global hyper-network convolution
    dict(hyper_kernel_size=4),
]


@pytest.mark.parametrize("kw", CAUSAL_CASES)
def test_causality(kw):
    layer = make_layer(**kw)
    x = make_input(length=53)
    y = layer(x)
    g = torch.Generator().manual_seed(5)
    for t in (1, 6, 13, 14, 27, 40, 52):
        x2 = x.clone()
        x2[:, t:] += torch.randn(x2[:, t:].shape, generator=g, dtype=F64)
        y2 = layer(x2)
        assert (y2[:, :t] - y[:, :t]).abs().max().item() <= 1e-10, f"leak before t={t}"
        assert (y2[:, t:] - y[:, t:]).abs().max().item() > 1e-6  # the perturbation is seen


def test_causality_with_a_shared_hyper_network_convolution():
    torch.manual_seed(0)
    shared = FocusGlobalConv(8, 53)
    layers = torch.nn.Sequential(Focus(8, hyper_conv=shared, n_chunks=4),
                                 Focus(8, hyper_conv=shared, chunk_size=5)).to(F64)
    x = make_input(length=53)
    y = layers(x)
    for t in (1, 14, 40):
        x2 = x.clone()
        x2[:, t:] += 1.0
        assert (layers(x2)[:, :t] - y[:, :t]).abs().max().item() <= 1e-10


def test_n_chunks_reads_c_as_a_number_of_chunks():
    layer = make_layer(n_chunks=32)
    assert layer.chunk_size is None and layer.n_chunks == 32
    assert [layer.chunk_length(n) for n in (30, 1024, 4096, 1000)] == [1, 32, 128, 32]
    fixed = make_layer(chunk_size=32)
    assert [fixed.chunk_length(n) for n in (30, 1024, 4096)] == [30, 32, 32]
    assert make_layer().chunk_size == 32 and make_layer().n_chunks is None  # the default
    # with n_chunks the attention of the first chunk ignores the second chunk entirely
    four = make_layer(n_chunks=4)
    x = make_input(length=40)
    y = four(x)
    assert four.chunk_length(40) == 10
    # the attention of chunk 1 (positions 10..19) ignores chunk 0: only x_f, the hyper-network
    # and the gates carry chunk 0 into it, so with Focus-H and bins = chunks it is exactly blind
    blind = make_layer(n_chunks=4, adaptive=False, bin_size=10)
    x2 = x.clone()
    x2[:, :10] += 1.0
    assert (blind(x2)[:, 10:] - blind(x)[:, 10:]).abs().max() <= 1e-12
    assert (four(x2)[:, 10:] - y[:, 10:]).abs().max() > 1e-6  # the hyper-network carries it
    assert "n_chunks=32" in repr(layer) and "chunk_size=32" in repr(fixed)


def test_shared_hyper_network_convolution_is_one_set_of_parameters():
    torch.manual_seed(0)
    shared = FocusGlobalConv(8, 16, squash=0.0)
    a, b = Focus(8, hyper_conv=shared), Focus(8, hyper_conv=shared)
    assert a.hyper.conv is b.hyper.conv is shared
    model = torch.nn.Sequential(a, b)
    names = [n for n, _ in model.named_parameters()]
    assert sum("conv.kernel" in n for n in names) == 1  # counted once by the optimiser
    (model(torch.randn(2, 20, 8)) ** 2).sum().backward()
    assert shared.kernel.grad is not None and shared.kernel.grad.abs().max() > 0


def test_global_convolution_sees_the_whole_past():
    """With hyper_kernel_size >= L, u[t] depends on x[0] for every t (one FFT over the whole
    length); with 1024 taps (the old default) a 3000-long input forgets x[0] after t = 1023."""
    torch.manual_seed(0)
    length = 3000
    x = torch.zeros(1, length, 2, dtype=F64)
    x2 = x.clone()
    x2[:, 0] = 1.0
    for k in (length, 1024):
        conv = FocusGlobalConv(2, k, squash=0.0).to(F64)
        du = (conv(x2) - conv(x)).abs()[0, :, 0]
        assert (du[:k] > 1e-8).all()
        assert (du[k:] < 1e-12).all()  # empty for the global kernel


def test_prefix_consistency_with_fixed_bins():
    """With fixed bin and chunk sizes the output of a prefix is the prefix of the output."""
    layer = make_layer(bin_size=8, chunk_size=6)
    x = make_input(length=70)
    y = layer(x)
    for t in (1, 9, 24, 41):
        torch.testing.assert_close(layer(x[:, :t]), y[:, :t], rtol=0, atol=1e-12)


@pytest.mark.parametrize("adaptive", [True, False])
@pytest.mark.parametrize("coefficients", ["paper", "stable_triangle"])
def test_every_parameter_gets_a_gradient(adaptive, coefficients):
    layer = make_layer(adaptive=adaptive, n_filters=2, chunk_size=8, coefficients=coefficients)
    x = make_input(length=40)
    (layer(x) ** 2).sum().backward()
    for name, p in layer.named_parameters():
        assert p.grad is not None, name
        assert torch.isfinite(p.grad).all(), name
        assert p.grad.abs().max() > 0, f"zero gradient for {name}"


@pytest.mark.parametrize("adaptive", [True, False])
def test_gradcheck(adaptive):
    torch.manual_seed(3)
    layer = Focus(
        4, bin_size=3, chunk_size=4, n_filters=2, oversample=2, hyper_hidden=3,
        hyper_kernel_size=5, adaptive=adaptive,
    ).to(F64)  # fmt: skip
    x = make_input(1, 10, 4, seed=4).requires_grad_(True)
    assert torch.autograd.gradcheck(layer, (x,), eps=1e-6, atol=1e-6)
    assert_parameter_gradcheck(layer, x, atol=1e-6)


def test_follows_float32():
    torch.manual_seed(0)
    layer = Focus(16)
    x = torch.randn(2, 100, 16)
    y = layer(x)
    assert y.dtype == torch.float32 and y.shape == x.shape and torch.isfinite(y).all()
    y64 = layer.to(F64)(x.to(F64))
    torch.testing.assert_close(y.to(F64), y64, rtol=1e-4, atol=1e-4)


def test_bad_inputs():
    layer = make_layer()
    with pytest.raises(ValueError, match="with 2 dimensions"):
        layer(torch.zeros(10, 8, dtype=F64))
    with pytest.raises(ValueError, match="d_model=8"):
        layer(torch.zeros(2, 10, 5, dtype=F64))
    with pytest.raises(ValueError, match="length >= 1"):
        layer(torch.zeros(2, 0, 8, dtype=F64))
    with pytest.raises(TypeError, match="float32"):
        layer(torch.zeros(2, 10, 8, dtype=torch.float32))
    with pytest.raises(TypeError, match="floating"):
        layer(torch.zeros(2, 10, 8, dtype=torch.int64))
    with pytest.raises(TypeError, match="torch.Tensor"):
        layer(np.zeros((2, 10, 8)))
    with pytest.raises(ValueError, match="divisible by n_heads"):
        Focus(10, n_heads=3)
    with pytest.raises(ValueError, match="chunk_size must be an int >= 1"):
        Focus(8, chunk_size=0)
    with pytest.raises(ValueError, match="n_chunks must be an int >= 1"):
        Focus(8, n_chunks=0)
    with pytest.raises(ValueError, match="not both"):
        Focus(8, chunk_size=32, n_chunks=32)
    with pytest.raises(TypeError, match="hyper_conv must be a FocusGlobalConv"):
        Focus(8, hyper_conv=torch.nn.Linear(8, 8))
    with pytest.raises(ValueError, match="hyper_conv has d_model=4"):
        Focus(8, hyper_conv=FocusGlobalConv(4, 8))
    with pytest.raises(ValueError, match="adaptive=True"):
        Focus(8, adaptive=False, hyper_conv=FocusGlobalConv(8, 8))
    with pytest.raises(TypeError, match="bin_size must be an int"):
        Focus(8, bin_size=2.5)
    with pytest.raises(ValueError, match="squash"):
        Focus(8, squash=-1.0)
    with pytest.raises(ValueError, match="coefficients must be one of"):
        Focus(8, coefficients="unit")


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
@pytest.mark.parametrize("adaptive", [True, False])
def test_runs_on_cuda(adaptive):
    layer = make_layer(16, adaptive=adaptive)
    x = make_input(2, 300, 16)
    ref = layer(x)
    gpu = layer.to("cuda")
    torch.testing.assert_close(gpu(x.cuda()).cpu(), ref, rtol=0, atol=1e-10)
    y32 = gpu.float()(x.float().cuda())
    assert y32.device.type == "cuda"
    torch.testing.assert_close(y32.double().cpu(), ref, rtol=1e-3, atol=1e-3)
    (y32**2).sum().backward()
    assert all(p.grad is not None and p.grad.abs().max() > 0 for p in gpu.parameters())
    # causality on the device, float64
    g64 = gpu.double()
    x64 = x.cuda()
    x2 = x64.clone()
    x2[:, 150:] += 1.0
    assert (g64(x2)[:, :150] - g64(x64)[:, :150]).abs().max().item() <= 1e-10


def test_docstring_examples():
    import lds_toolkit.neural.layers.focus as module

    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0
