"""Order-2 IIR filtering of non-overlapping time bins, for the Focus layer.

Time-index convention: inside one bin of length ``R`` the filter is the causal recursion

    y[t] = x[t] - a1 * y[t-1] - a2 * y[t-2],    t = 0, ..., R-1,    y[-1] = y[-2] = 0,

whose transfer function is ``H(z) = 1 / (1 + a1 z^-1 + a2 z^-2)``; on the unit circle
``z = exp(j 2 pi f)`` this is eq. 5 of Lutati et al. with ``(a1, a2) = (Theta[0], Theta[1])``.
``y[t]`` sees ``x[t]`` (tap 0 multiplies the current input) and never a later sample.

Each bin starts from a zero state (the paper processes every bin "on its own"), so only the
first ``R`` taps of the infinite impulse response can reach an output of that bin. We therefore
compute those ``R`` taps exactly and convolve by FFT with ``2R`` zero padding: the result equals
the recursion above up to round-off, with no truncation or aliasing error, and it is causal.
"""

from __future__ import annotations

import torch
from torch import Tensor

from ._fftconv import causal_conv

__all__ = [
    "COEFFICIENT_MAPS",
    "filter_bins",
    "map_coefficients",
    "iir2_frequency_response",
    "iir2_impulse",
    "paper_printed_bin_filter",
]


COEFFICIENT_MAPS = ("paper", "stable_triangle")


def map_coefficients(theta: Tensor, mode: str) -> Tensor:
    """Map sigmoid outputs ``theta`` in (0, 1)^2 to denominator coefficients ``(a1, a2)``.

    ``"paper"``: ``(a1, a2) = theta`` (eq. 5 as printed). Always stable, but the poles then have
    a negative real part (their sum is ``-a1 < 0``), so the response peaks at f >= 1/4 and the DC
    gain is ``1 / (1 + a1 + a2) < 1``: low-pass / EMA-like kernels cannot be produced.
    ``"stable_triangle"``: ``a2 = 2 theta1 - 1``, ``a1 = (1 + a2)(2 theta0 - 1)``, a bijection of
    (0, 1)^2 onto the open stability triangle ``|a2| < 1, |a1| < 1 + a2``: every stable order-2
    filter, EMA-like ones included, and nothing unstable.
    """
    if mode == "paper":
        return theta
    a2 = 2.0 * theta[..., 1:2] - 1.0
    a1 = (1.0 + a2) * (2.0 * theta[..., 0:1] - 1.0)
    return torch.cat([a1, a2], dim=-1)


def iir2_impulse(a: Tensor, n_taps: int) -> Tensor:
    """First ``n_taps`` samples of the impulse response of ``1 / (1 + a1 z^-1 + a2 z^-2)``.

    ``h[0] = 1``, ``h[1] = -a1`` and ``h[k] = -a1 h[k-1] - a2 h[k-2]``. With the companion
    matrix ``M = [[-a1, -a2], [1, 0]]`` and state ``s_k = (h[k], h[k-1])`` we have
    ``s_k = M^k e_1``, so the taps are built by doubling, ``s_{k+m} = M^m s_k`` for
    ``k < m`` and ``M^{2m} = M^m M^m``: ``ceil(log2 n_taps)`` vectorised steps instead of an
    ``n_taps``-long Python loop, exact up to round-off and differentiable.

    Precision. Repeated squaring amplifies round-off when a pole is close to the unit
    circle (in float32, radius 0.9995 and 16384 taps: 1.3e-2 relative error, where the plain
    float32 recursion gets 3e-5). The taps are therefore always computed in float64 and
    rounded once to ``a``'s dtype: float32 taps are then correct to float32 round-off
    (``tests/neural/test_focus.py::test_float32_taps_near_the_unit_circle``).

    Parameters
    ----------
    a : Tensor, shape (..., 2)
        Denominator coefficients ``(a1, a2)`` (any leading batch shape; real dtype).
    n_taps : int
        Number of taps to return (>= 1).

    Returns
    -------
    Tensor, shape (..., n_taps)
    """
    if n_taps < 1:
        raise ValueError(f"n_taps must be >= 1, got {n_taps}")
    out_dtype = a.dtype
    a = a.to(torch.float64)
    a1, a2 = a[..., 0:1], a[..., 1:2]
    # rows of the current power P = M^m, kept as 4 broadcastable tensors (2x2 matmuls by hand
    # are much cheaper than batched matmul on tiny matrices)
    p00, p01, p10, p11 = -a1, -a2, torch.ones_like(a1), torch.zeros_like(a1)
    s0 = torch.ones_like(a1)  # h[k] for the taps computed so far
    s1 = torch.zeros_like(a1)  # h[k-1]
    while s0.shape[-1] < n_taps:
        n0 = p00 * s0 + p01 * s1
        n1 = p10 * s0 + p11 * s1
        s0 = torch.cat([s0, n0], dim=-1)
        s1 = torch.cat([s1, n1], dim=-1)
        p00, p01, p10, p11 = (
            p00 * p00 + p01 * p10,
            p00 * p01 + p01 * p11,
            p10 * p00 + p11 * p10,
            p10 * p01 + p11 * p11,
        )
    return s0[..., :n_taps].to(out_dtype)


def filter_bins(x_bins: Tensor, h: Tensor) -> Tensor:
    """Causal, bin-local linear convolution of each bin with its own impulse response.

    Parameters
    ----------
    x_bins : Tensor, shape (B, n_bins, R, D)
        The input split into ``n_bins`` non-overlapping bins of length ``R``.
    h : Tensor, shape (B or 1, n_bins or 1, D, R)
        The first ``R`` taps of each bin's (summed filter-bank) impulse response.

    Returns
    -------
    Tensor, shape (B, n_bins, R, D)
        ``y[b, r, t, d] = sum_{s <= t} h[b, r, d, t - s] * x[b, r, s, d]``:
        :func:`~lds_toolkit.neural.layers._fftconv.causal_conv` with an FFT of size ``2R`` (zero
        padding makes the circular product a linear convolution).
    """
    r = x_bins.shape[2]
    # FFTs along the last, contiguous axis: ~2.5x faster than along axis 2 of (B, nb, R, D)
    return causal_conv(x_bins.transpose(2, 3).contiguous(), h, n=2 * r).transpose(2, 3)


def iir2_frequency_response(a: Tensor, freqs: Tensor) -> Tensor:
    """Eq. 5: ``H(f) = 1 / (1 + a1 exp(-j 2 pi f) + a2 exp(-j 4 pi f))``, ``f`` in cycles/sample.

    ``a`` has shape (..., 2); the result has shape (..., len(freqs)) and is complex.
    """
    w = torch.exp(-2j * torch.pi * freqs.to(torch.float64)).to(torch.complex128)
    a1 = a[..., 0:1].to(torch.complex128)
    a2 = a[..., 1:2].to(torch.complex128)
    return 1.0 / (1.0 + a1 * w + a2 * w * w)


def paper_printed_bin_filter(x_bins: Tensor, a: Tensor) -> Tensor:
    """Eqs. 4-8 read literally: an unpadded R-point FFT times the *conjugate* response.

    Not used by the layer. It is kept (private) so that tests and the docs figure can show why
    it was not implemented: ``X[k] * conj(H(k/R))`` is the DFT of the circular
    *cross-correlation* of the bin with the (aliased) impulse response, so output ``t`` mixes in
    samples ``t+1, ..., R-1`` of the same bin (anti-causal) and wraps around the bin edge
    (circular). ``x_bins``: (B, n_bins, R, D); ``a``: broadcastable to (B, n_bins, D, 2).
    """
    r = x_bins.shape[2]
    freqs = torch.arange(r, dtype=torch.float64) / r
    hk = iir2_frequency_response(a, freqs).transpose(-1, -2)  # (., ., R, D)
    xk = torch.fft.fft(x_bins.to(torch.float64), n=r, dim=2)
    return torch.fft.ifft(xk * hk.conj(), n=r, dim=2).real.to(x_bins.dtype)
