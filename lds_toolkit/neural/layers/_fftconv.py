"""Causal long convolution by FFT (shared by S4, S4+, S4++, STU and Focus).

``y[..., t] = sum_{j=0}^{min(t, Lk-1)} k[..., j] * u[..., t-j]`` for ``t = 0..L-1``: tap ``k[0]``
multiplies the current input ``u[t]``. Both signals are zero-padded to ``n >= L + Lk - 1``
(``n = 2L`` for a power-of-two ``L`` and ``Lk = L``, as in state-spaces/s4 ``fftconv``), so the
circular convolution equals the linear one on the first ``L`` outputs, which are kept.

The gradient is written by hand (:class:`CausalFFTConv`): with ``G = rfft(dL/dy, n)``,
``dL/du = irfft(G conj(K))[:L]`` and ``dL/dk = irfft(G conj(U))[:Lk]`` (circular
cross-correlations, exact for the same ``n >= L + Lk - 1``). Autograd's own route differentiates
``rfft`` through a full complex FFT of the zero-padded gradient; the hand-written one needs three
real FFTs and reuses the forward's spectra: 1.1-1.55x faster forward + backward of the
convolution on CPU, 1.2x for whole Focus and S4 layers (``benchmarks/fft_conv.py``).
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


class CausalFFTConv(torch.autograd.Function):
    r"""``y = irfft(rfft(u, n) rfft(k, n), n)[..., :L]`` with a hand-written backward.

    For ``y[t] = sum_j k[j] u[t - j]`` (no wrap-around when ``n >= L + Lk - 1``)::

        dL/du[s] = sum_t g[t] k[t - s]  = irfft(G * conj(K), n)[s],   s < L
        dL/dk[j] = sum_t g[t] u[t - j]  = irfft(G * conj(U), n)[j],   j < Lk

    with ``G = rfft(g, n)``: the circular cross-correlations equal the linear ones on those
    indices for the same ``n`` (a negative lag ``t - s`` wraps to ``n + t - s >= Lk``, where the
    padded kernel is zero). Broadcast axes are summed in the frequency domain, before the
    inverse FFT. First derivatives only (``once_differentiable``): a second backward raises.
    Real float32/float64 inputs; ``causal_conv`` casts.
    """

    # forward and setup_context apart (with a vmap rule generated from them), so that the
    # convolution also runs under torch.func.vmap (several runs trained at once,
    # lds_toolkit.neural.training.run_group); the spectra the backward reuses are returned as
    # extra outputs that carry no gradient (an autograd.Function under functorch saves only
    # its inputs and outputs)
    generate_vmap_rule = True

    @staticmethod
    def forward(u: torch.Tensor, k: torch.Tensor, n: int):
        u_f = torch.fft.rfft(u, n=n)
        k_f = torch.fft.rfft(k, n=n)
        return torch.fft.irfft(u_f * k_f, n=n)[..., : u.shape[-1]], u_f, k_f

    @staticmethod
    def setup_context(ctx, inputs, output):
        u, k, n = inputs
        _, u_f, k_f = output
        ctx.mark_non_differentiable(u_f, k_f)
        ctx.save_for_backward(u_f, k_f)
        ctx.n = n
        ctx.shapes = (u.shape, k.shape)

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, grad_y: torch.Tensor, _grad_u_f=None, _grad_k_f=None):
        u_f, k_f = ctx.saved_tensors
        u_shape, k_shape = ctx.shapes
        n = ctx.n
        g_f = torch.fft.rfft(grad_y, n=n)
        grad_u = grad_k = None
        if ctx.needs_input_grad[0]:
            prod = (g_f * k_f.conj()).sum_to_size(*u_shape[:-1], g_f.shape[-1])
            grad_u = torch.fft.irfft(prod, n=n)[..., : u_shape[-1]]
        if ctx.needs_input_grad[1]:
            prod = (g_f * u_f.conj()).sum_to_size(*k_shape[:-1], g_f.shape[-1])
            grad_k = torch.fft.irfft(prod, n=n)[..., : k_shape[-1]]
        return grad_u, grad_k, None


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
        if u.numel() and k.numel():
            return CausalFFTConv.apply(u.to(cdt), k.to(cdt), n)[0].to(out_dtype)
        k_f = rfft(k.to(cdt), n=n)
    elif n is None:
        raise TypeError("causal_conv: n must be given with a precomputed k_f")
    u_f = rfft(u.to(cdt), n=n)
    y = irfft(u_f * k_f, n=n)[..., :L]
    return y.to(out_dtype)
