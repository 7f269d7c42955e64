"""Hyper-network of the Focus layer (eqs. 1-3): x -> per-bin order-2 IIR coefficients.

Split as the paper splits it (Sec. 3.2: "can be split into local (H_local) and global
(H_global) subcomponents ... shared across multiple Focus layers"):

    H_global:  u     = GELU(k * x + d . x)                   causal per-channel long convolution
    H_local:   e[b]  = AdaptiveMaxPool_O(u restricted to bin b)    (B, n_bins, D, O)
               Theta = sigmoid(W2 sigmoid(W1 e + c1) + c2)       (B, n_bins, D, F, 2) in (0, 1)

then the coefficients are shifted right by one bin, so bin ``b`` is filtered with the
coefficients computed from bin ``b - 1`` (bin 0 uses a learned default): the filter applied to
bin ``b`` depends only on samples of earlier bins.

The long convolution is one FFT over the whole sequence (size >= L + K - 1, zero padded, so
linear, not circular); with ``K >= L`` taps every output ``u[t]`` sees the whole past
``x[0..t]`` (a global convolution). One :class:`FocusGlobalConv` can be given to several Focus
layers, which then share its kernel.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .._cast import linear
from .._validation import check_int, check_nonnegative_float
from ._fftconv import causal_conv
from ._init import Seed, seeded

__all__ = ["FocusGlobalConv", "FocusHyperNetwork", "causal_fft_conv"]


def causal_fft_conv(x: Tensor, kernel: Tensor) -> Tensor:
    """Causal per-channel convolution ``y[t, d] = sum_{s=0}^{min(t, K-1)} k[d, s] x[t - s, d]``.

    ``x``: (B, L, D); ``kernel``: (D, K). :func:`~lds_toolkit.neural.layers._fftconv.causal_conv`
    with a power-of-two FFT size >= L + min(K, L) - 1 (linear, not circular): one FFT over the
    whole length.
    """
    length = x.shape[1]
    n_fft = 1 << math.ceil(math.log2(length + min(kernel.shape[1], length) - 1))
    # FFT along the last, contiguous axis (faster than along axis 1 of (B, L, D))
    return causal_conv(x.transpose(1, 2).contiguous(), kernel, n=n_fft).transpose(1, 2)


class FocusGlobalConv(nn.Module):
    r"""H_global of the Focus hyper-network: ``u = GELU(k * x + d ⊙ x)``, causal, by FFT.

    ``(k * x)[t, c] = sum_{s=0}^{min(t, K-1)} k_sq[c, s] x[t - s, c]`` with the squashed
    kernel ``k_sq = sign(k) relu(|k| - squash)`` (Fu et al. 2023's regulariser) and a skip
    ``d``; tap ``s = 0`` multiplies the current sample. One FFT of size >= L + K - 1 over the
    whole sequence. With ``kernel_size >= L`` it is global: ``u[t]`` depends on every
    ``x[s]``, ``s <= t``; taps beyond ``L`` are unused.

    Pass one instance as ``Focus(..., hyper_conv=...)`` to several layers to share it (its
    kernel and skip; each layer convolves its own input).

    Parameters
    ----------
    d_model : int
        Channels D.
    kernel_size : int
        Taps K of the explicit kernel (initialised with std ``1/sqrt(K)``: unit output
        variance for a unit-variance input).
    squash : float, default 1e-3
        Soft threshold of the taps.
    seed : int, torch.Generator or None
        Seeds the kernel (None: the global torch RNG).
    """

    def __init__(self, d_model: int, kernel_size: int, *, squash: float = 1e-3,
                 seed: Seed = None) -> None:
        super().__init__()
        owner = "FocusGlobalConv"
        self.d_model = check_int(d_model, "d_model", owner)
        self.kernel_size = check_int(kernel_size, "kernel_size", owner)
        self.squash = check_nonnegative_float(squash, "squash", owner)
        with seeded(seed, owner):
            self.kernel = nn.Parameter(torch.randn(d_model, kernel_size)
                                       / math.sqrt(kernel_size))
        self.skip = nn.Parameter(torch.ones(d_model))

    def squashed_kernel(self) -> Tensor:
        """``sign(k) relu(|k| - squash)``, (D, K)."""
        return torch.sign(self.kernel) * F.relu(self.kernel.abs() - self.squash)

    def forward(self, x: Tensor) -> Tensor:
        """``x``: (B, L, D) -> ``u``: (B, L, D)."""
        return F.gelu(causal_fft_conv(x, self.squashed_kernel()) + self.skip.to(x.dtype) * x)

    def extra_repr(self) -> str:
        return f"d_model={self.d_model}, kernel_size={self.kernel_size}, squash={self.squash}"


class FocusHyperNetwork(nn.Module):
    """Map a (padded) input to the per-bin IIR coefficients Theta (eqs. 1-3), shifted by one bin.

    Parameters
    ----------
    d_model : int
        Channels D.
    n_filters : int
        Filter-bank size F (Table 6: 1).
    oversample : int
        Oversampling factor O: each bin is max-pooled to O values per channel.
    hidden : int
        Width of the MLP's hidden layer.
    conv : FocusGlobalConv
        H_global (possibly shared with other layers).
    """

    def __init__(self, d_model: int, n_filters: int, oversample: int, hidden: int,
                 conv: FocusGlobalConv) -> None:
        super().__init__()
        self.n_filters = n_filters
        self.oversample = oversample
        self.conv = conv
        self.fc1 = nn.Linear(oversample, hidden)
        self.fc2 = nn.Linear(hidden, 2 * n_filters)
        # Xavier for both layers (Sec. 3.2). Chang et al.'s hyperfan init targets generated
        # weights of a linear primary layer; ours go through a sigmoid, so we keep Xavier and
        # zero biases: Theta starts near sigmoid(0) = 0.5 (poles of radius ~0.71).
        for fc in (self.fc1, self.fc2):
            nn.init.xavier_uniform_(fc.weight)
            nn.init.zeros_(fc.bias)
        # coefficients (as logits) used for bin 0, which has no earlier bin to look at
        self.first_bin_logits = nn.Parameter(torch.randn(d_model, n_filters, 2))

    def forward(self, x: Tensor, n_bins: int, bin_size: int) -> Tensor:
        """``x``: (B, n_bins * bin_size, D) -> Theta (B, n_bins, D, F, 2), shifted by one bin."""
        bsz, _, d = x.shape
        u = self.conv(x)
        # (B, nb, R, D) -> (B*nb*D, 1, R): pool each bin separately, never across a bin edge
        u = u.reshape(bsz, n_bins, bin_size, d).permute(0, 1, 3, 2)
        e = F.adaptive_max_pool1d(u.reshape(-1, 1, bin_size), self.oversample)
        e = e.reshape(bsz, n_bins, d, self.oversample)
        # in the input's dtype (the parameters are cast, as the other layers do): Focus runs
        # this MLP in float32 under bf16 autocast, its outputs being IIR coefficients
        theta = torch.sigmoid(linear(self.fc2, torch.sigmoid(linear(self.fc1, e))))
        theta = theta.reshape(bsz, n_bins, d, self.n_filters, 2)
        first = torch.sigmoid(self.first_bin_logits.to(theta.dtype))
        first = first.expand(bsz, 1, d, self.n_filters, 2)
        return torch.cat([first, theta[:, :-1]], dim=1)
