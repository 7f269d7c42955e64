"""Causal long convolution by FFT (shared by S4, S4+, S4++, STU and Focus).

``y[..., t] = sum_{j=0}^{min(t, Lk-1)} k[..., j] * u[..., t-j]`` for ``t = 0..L-1``: tap ``k[0]``
multiplies the current input ``u[t]``. Both signals are zero-padded to ``n >= L + Lk - 1``
(``n = 2L`` for a power-of-two ``L`` and ``Lk = L``, as in state-spaces/s4 ``fftconv``), so the
circular convolution equals the linear one on the first ``L`` outputs, which are kept.
"""

from __future__ import annotations

import torch

_FFT_DTYPES = (torch.float32, torch.float64)


def fast_fft_len(n: int) -> int:
    """Smallest 2^a 3^b 5^c >= n (lengths pocketfft/cuFFT handle fastest)."""
    if n <= 1:
        return 1
    best = 1 << (n - 1).bit_length()
    p5 = 1
    while p5 < best:
        p35 = p5
        while p35 < best:
            m = p35
            while m < n:
                m *= 2
            best = min(best, m)
            p35 *= 3
        p5 *= 5
    return best


def fft_len(length: int, kernel_length: int) -> int:
    return fast_fft_len(length + kernel_length - 1)


def rfft(x: torch.Tensor, n: int, dim: int = -1) -> torch.Tensor:
    """``torch.fft.rfft(x, n=n, dim=dim)``, also for an empty ``x`` (batch size 0), where
    MKL's FFT fails ("Inconsistent configuration parameters")."""
    if x.numel():
        return torch.fft.rfft(x, n=n, dim=dim)
    shape = list(x.shape)
    shape[dim] = n // 2 + 1
    cdt = torch.complex128 if x.dtype == torch.float64 else torch.complex64
    return x.new_zeros(shape, dtype=cdt) + x.sum()  # keeps the autograd graph


def irfft(x: torch.Tensor, n: int, dim: int = -1) -> torch.Tensor:
    """``torch.fft.irfft(x, n=n, dim=dim)``, also for an empty ``x`` (see :func:`rfft`)."""
    if x.numel():
        return torch.fft.irfft(x, n=n, dim=dim)
    shape = list(x.shape)
    shape[dim] = n
    rdt = torch.float64 if x.dtype == torch.complex128 else torch.float32
    return x.new_zeros(shape, dtype=rdt) + x.sum().real


def compute_dtype(dtype: torch.dtype) -> torch.dtype:
    """FFTs run in float32 for half-precision inputs (half FFTs need power-of-two sizes)."""
    return dtype if dtype in _FFT_DTYPES else torch.float32


def causal_conv(
    u: torch.Tensor, k: torch.Tensor | None = None, *, k_f: torch.Tensor | None = None, n=None
) -> torch.Tensor:
    """Causal convolution along the last axis, computed by FFT.

    Parameters
    ----------
    u : (..., L) real tensor.
    k : (..., Lk) real kernel, broadcastable against ``u`` except in the last axis; ``Lk <= L``
        is not required (taps beyond ``L`` simply never reach the output).
    k_f : precomputed ``torch.fft.rfft(k, n=n)`` (then ``n`` must be given), instead of ``k``.
    n : FFT size; default ``fft_len(L, Lk)``.

    Returns
    -------
    (..., L) tensor in ``u``'s dtype.
    """
    L = u.shape[-1]
    out_dtype = u.dtype
    cdt = compute_dtype(u.dtype)
    if k_f is None:
        if k is None:
            raise TypeError("causal_conv: give either k or k_f")
        k = k[..., :L]
        if n is None:
            n = fft_len(L, k.shape[-1])
        k_f = rfft(k.to(cdt), n=n)
    elif n is None:
        raise TypeError("causal_conv: n must be given with a precomputed k_f")
    u_f = rfft(u.to(cdt), n=n)
    y = irfft(u_f * k_f, n=n)[..., :L]
    return y.to(out_dtype)
