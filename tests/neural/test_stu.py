"""STU: output against a naive loop with the same filters, conventions, AR terms, modes."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from lds_toolkit.neural import STU
from lds_toolkit.neural.layers.stu import ar_impulse_response

from .conftest import dense_hankel_filters, randomize_zero_params

T, K, D = 40, 5, 3


def _stu(**kw):
    layer = STU(D, T, K, filters=dense_hankel_filters(T, K), seed=0, **kw).double()
    randomize_zero_params(layer, seed=1)
    with torch.no_grad():  # keep random AR coefficients clearly stable
        if layer.a_y is not None:
            layer.a_y.mul_(0.5)
    return layer


def _naive(layer: STU, x: np.ndarray) -> np.ndarray:
    """The STU equations as explicit loops over t, lags j and filters i."""
    sigma, phi = dense_hankel_filters(T, K)
    f = phi * sigma**0.25
    p = {n: v.detach().numpy() for n, v in layer.named_parameters()}
    B, L, _ = x.shape
    u = np.zeros_like(x)
    u[:, layer.lag :] = x[:, : L - layer.lag]  # input delayed by lag
    y = np.zeros((B, L, D))
    for b in range(B):
        for t in range(L):
            z = np.zeros(D)
            for j in range(t + 1):
                for i in range(K):
                    fp, fm = f[j, i], (-1) ** j * f[j, i]
                    if layer.form == "exact":
                        z += fp * u[b, t - j] @ p["M"][i] + fm * u[b, t - j] @ p["M"][K + i]
                    else:
                        v = u[b, t - j] @ p["M_in"]
                        z += (fp * p["M_filters"][i] + fm * p["M_filters"][K + i]) * v
            for i in range(layer.k_u):
                if t - i >= 0:
                    z += u[b, t - i] @ p["M_u"][i]
            for i in range(1, layer.k_y + 1):
                if t - i >= 0:
                    z += p["a_y"][i - 1] * y[b, t - i]
            y[b, t] = z
    return y


@pytest.mark.parametrize("form", ["exact", "tensordot"])
@pytest.mark.parametrize("k_u, k_y, lag", [(0, 0, 0), (0, 0, 1), (3, 2, 0), (2, 1, 2)])
def test_matches_naive_loop(form, k_u, k_y, lag):
    layer = _stu(form=form, k_u=k_u, k_y=k_y, lag=lag)
    x = np.random.default_rng(0).standard_normal((2, 33, D))
    with torch.no_grad():
        got = layer(torch.from_numpy(x)).numpy()
    np.testing.assert_allclose(got, _naive(layer, x), rtol=0, atol=1e-10)


@pytest.mark.parametrize("lag", [0, 1])
def test_tap_convention_impulse_response(lag):
    """phi[0] multiplies u_t (lag 0) or u_{t-1} (lag 1); the minus branch flips odd taps."""
    layer = _stu(form="exact", lag=lag)
    sigma, phi = dense_hankel_filters(T, K)
    f = phi * sigma**0.25
    x = torch.zeros(1, T, D, dtype=torch.float64)
    t0 = 4
    x[0, t0, 1] = 1.0
    with torch.no_grad():
        y = layer(x)[0].numpy()
        M = layer.M.detach().numpy()
    assert np.abs(y[: t0 + lag]).max() < 1e-14  # FFT round-off only
    for j in range(T - t0 - lag):
        sign = (-1) ** j
        ref = sum(f[j, i] * (M[i, 1] + sign * M[K + i, 1]) for i in range(K))
        np.testing.assert_allclose(y[t0 + lag + j], ref, rtol=0, atol=1e-12)


def test_shared_tensordot_vector_would_cancel_odd_taps():
    """Why m+ and m- are separate: with m+ == m- every odd tap of g_c is zero."""
    layer = _stu()
    with torch.no_grad():
        layer.M_filters[K:] = layer.M_filters[:K]
        g = layer.channel_filters()
    assert g[1::2].abs().max() < 1e-15 and g[0::2].abs().max() > 1e-3


def test_ar_impulse_response_matches_recursion():
    g = torch.Generator().manual_seed(0)
    a = 0.4 * torch.randn(3, 4, generator=g, dtype=torch.float64)
    h = ar_impulse_response(a, 300).numpy()
    ref = np.zeros((300, 4))
    for t in range(300):
        ref[t] = (t == 0) + sum(a[i - 1].numpy() * ref[t - i] for i in range(1, 4) if t >= i)
    np.testing.assert_allclose(h, ref, rtol=1e-10, atol=1e-10)
    # Algorithm 2's 2 y_{t-1} - y_{t-2}: double root at 1, h_j = j + 1
    h2 = ar_impulse_response(torch.tensor([[2.0], [-1.0]], dtype=torch.float64), 1000)
    np.testing.assert_allclose(h2[:, 0].numpy(), np.arange(1, 1001), rtol=1e-12)


def test_unstable_output_recursion_is_reported():
    layer = _stu(k_y=1)
    with torch.no_grad():
        layer.a_y.fill_(1e9)  # 1e9^39 overflows float64
    with pytest.raises(FloatingPointError, match="not finite from index"):
        layer(torch.randn(1, T, D, dtype=torch.float64))


@pytest.mark.parametrize("form", ["exact", "tensordot"])
def test_window_step_mode_equals_forward(form):
    """The sliding-window step (mode="window") is exact; the default LDS step is checked in
    test_stu_lds.py."""
    layer = _stu(form=form, k_u=2, k_y=2, lag=1)
    x = torch.randn(2, T, D, dtype=torch.float64)
    with torch.no_grad():
        y = layer(x)
        state = layer.initial_state(2, dtype=torch.float64, mode="window")
        ys = []
        for t in range(T):
            y_t, state = layer.step(x[:, t], state)
            ys.append(y_t)
    torch.testing.assert_close(torch.stack(ys, 1), y, rtol=0, atol=1e-10)


def test_first_taps_of_long_filters_for_short_inputs():
    """A length-L input uses the first L taps of the length-T filters (not H_L's filters)."""
    layer = _stu(form="exact")
    x = torch.randn(2, T, D, dtype=torch.float64)
    with torch.no_grad():
        torch.testing.assert_close(layer(x[:, :10]), layer(x)[:, :10], rtol=0, atol=1e-12)


def test_default_filters_come_from_the_shared_module():
    filters = pytest.importorskip("lds_toolkit.learning.filters")
    from lds_toolkit.neural.layers.stu import shared_filters

    layer = STU(4, seq_len=64, num_filters=6)
    sigma, phi = dense_hankel_filters(64, 6)
    f = phi * sigma**0.25
    f = np.concatenate([f, f * (-1.0) ** np.arange(64)[:, None]], axis=1)
    np.testing.assert_allclose(layer.filters.numpy(), f, rtol=0, atol=1e-8)
    assert shared_filters(64, 6, "H") is shared_filters(64, 6, "H")  # cached per (T, k, kind)
    s_ref, p_ref = filters.spectral_filters(64, 6, "H")
    np.testing.assert_allclose(shared_filters(64, 6, "H")[1], p_ref)


def test_bad_arguments():
    filt = dense_hankel_filters(T, K)
    with pytest.raises(ValueError, match="exceeds the filter length seq_len=40"):
        STU(D, T, K, filters=filt)(torch.randn(1, T + 1, D))
    with pytest.raises(ValueError, match="num_filters=50 must be <= seq_len=40"):
        STU(D, T, 50)
    with pytest.raises(ValueError, match="filters must have shapes"):
        STU(D, T, K, filters=dense_hankel_filters(T, K + 1))
    with pytest.raises(TypeError, match="pair"):
        STU(D, T, K, filters=3)
    with pytest.raises(ValueError, match="form"):
        STU(D, T, K, form="approx", filters=filt)
    with pytest.raises(ValueError, match="k_u"):
        STU(D, T, K, k_u=-1, filters=filt)
    layer = STU(D, T, K, filters=filt)
    with pytest.raises(TypeError, match="STUState"):
        layer.step(torch.randn(2, D), None)
    state = layer.initial_state(2, mode="window")
    assert state.inputs.dtype == torch.float32 and state.inputs.shape == (2, T, D)
