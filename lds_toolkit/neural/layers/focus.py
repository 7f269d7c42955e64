"""Focus layer (Lutati, Zimerman & Wolf, "Focus your attention (with adaptive IIR filters)").

See ``docs/layers/focus.md`` for the equations, the paper's printed form and why we differ.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .._cast import full_precision, work_dtype
from .._validation import (
    check_choice,
    check_divisible,
    check_int,
    check_matches_parameters,
    check_nonnegative_float,
    check_sequence,
    watch_outputs,
)
from ._focus_hyper import FocusGlobalConv, FocusHyperNetwork
from ._focus_iir import COEFFICIENT_MAPS, filter_bins, iir2_impulse, map_coefficients
from ._recompute import active, rowwise

__all__ = ["Focus", "FocusGlobalConv"]

#: Chunk length when neither ``chunk_size`` nor ``n_chunks`` is given (Table 6's "C = 32" read
#: as a length).
DEFAULT_CHUNK_SIZE = 32


class Focus(nn.Module):
    r"""Adaptive order-2 IIR filtering followed by chunked causal attention and Mega-style gates.

    Maps ``x`` of shape (batch, length, d_model) to ``o`` of the same shape; causal: ``o[:, t]``
    depends on ``x[:, :t+1]`` only.

    1. **Hyper-network** (eqs. 1-3): a causal long convolution of ``x`` (one FFT over the
       whole sequence; global when ``hyper_kernel_size >= L``), adaptive max pooling of
       every time bin to ``oversample`` values per channel, a 2-layer MLP with sigmoids
       producing ``Theta`` of shape (batch, n_bins, d_model, n_filters, 2) in (0, 1). ``Theta``
       is shifted right by one bin: bin ``b`` is filtered with the coefficients computed from
       bin ``b - 1`` (bin 0 with a learned default).
    2. **Per-bin IIR filtering** (eqs. 4-8): each bin ``x_r`` (length ``R``, zero initial
       state) is filtered by ``H(z) = 1 / (1 + Theta0 z^-1 + Theta1 z^-2)`` (eq. 5), and the
       ``n_filters`` outputs are summed (eq. 7)::

           x_f[t] = sum_f y_f[t],   y_f[t] = x[t] - Theta0_f y_f[t-1] - Theta1_f y_f[t-2]

       inside each bin. With Theta in (0, 1)^2 both poles lie strictly inside the unit circle
       (second-order stability triangle ``|a2| < 1, |a1| < 1 + a2``), so every filter is stable;
       but they also have a negative real part, so no low-pass (EMA-like) filter is reachable,
       contrary to the paper's Fig. 2 (its Sec. 4 analyses ``1/(a s^2 + b s + 1)`` as if ``S``
       were the Laplace variable). ``coefficients="stable_triangle"`` maps Theta onto the whole
       stability triangle instead (see ``_focus_iir.map_coefficients``).
       Implemented as an FFT of size ``2R`` of the bin times the FFT of the exact first ``R``
       taps of the impulse response: a linear (not circular) convolution equal to the
       recursion. The paper's eq. 6 multiplies an unpadded ``R``-point FFT by the *conjugate*
       response, which is a circular cross-correlation: anti-causal inside the bin. We do not
       implement that (see the docs page).
    3. **Chunked attention** (eqs. 9-10): the sequence is cut into chunks of length ``M``
       (``chunk_size``, or ``ceil(L / n_chunks)``); inside each chunk, causal softmax
       attention with queries from ``x`` and keys/values from ``x_f``:
       ``y = softmax(Q K^T / sqrt(d_head) + causal mask) V``, ``Q = x W_q``,
       ``K = x_f W_k``, ``V = x_f W_v`` (``n_heads`` heads, default 1).
    4. **Gates** (eqs. 11-14)::

           gamma = SiLU(x_f W_gamma + b_gamma)
           phi   = sigmoid(x_f W_phi + b_phi)
           z     = SiLU(x_f W_h + (gamma * y) U_h + b_h)
           o     = phi * z + (1 - phi) * x

    Parameters
    ----------
    d_model : int
        Channels D.
    n_bins : int, default 4
        Number of time bins when ``bin_size`` is None: ``R = ceil(L / n_bins)`` (Table 6:
        NFFT = L/4). Bin edges then scale with the sequence length, so the output on a prefix
        differs from the prefix of the output; pass ``bin_size`` for a length-independent layer.
    bin_size : int or None, default None
        Fixed bin length ``R`` (overrides ``n_bins``).
    chunk_size : int or None, default None
        Attention chunk length M, the same for every sequence length. Give this or
        ``n_chunks``, not both; with neither, ``chunk_size = 32``.
    n_chunks : int or None, default None
        Number of chunks C instead: ``M = ceil(L / C)``, so the chunks grow with the
        sequence (Sec. 3.2: "split into C separate non-overlapping chunks ... L = MC").
        Table 6 lists "C = 32" without saying which; the two readings coincide at L = 1024
        and differ elsewhere (L = 4096: M = 32 or 128; L = 30: M = 32, i.e. one chunk, or 1).
    n_filters : int, default 1
        Filter-bank size F (Table 6).
    n_heads : int, default 1
        Attention heads (the paper uses one small head).
    adaptive : bool, default True
        False gives the paper's **Focus-H** ablation: the IIR coefficients are free parameters
        (``sigmoid`` of learned logits, one set per channel and filter, shared by all bins) and no
        hyper-network is built.
    coefficients : {"paper", "stable_triangle"}, default "paper"
        How Theta in (0, 1)^2 becomes the denominator ``(a1, a2)``: as printed (``a = Theta``) or
        onto every stable order-2 filter (``a2 = 2 Theta1 - 1``, ``a1 = (1 + a2)(2 Theta0 - 1)``).
    oversample : int, default 16
        Hyper-network oversampling factor O (not given in the paper).
    hyper_hidden : int, default 32
        Hidden width of the hyper-network MLP (not given in the paper).
    hyper_kernel_size : int, default 1024
        Taps K of the hyper-network's long-convolution kernel: the convolution is global
        (every ``u[t]`` sees all of ``x[0..t]``) for sequences up to K; set K >= L for a
        global hyper-network at length L (the experiments do).
    squash : float, default 1e-3
        Soft-threshold of that kernel (Fu et al. 2023).
    hyper_conv : FocusGlobalConv or None, default None
        A long convolution (H_global of Sec. 3.2) to use instead of building one; pass the
        same instance to several layers to share it across layers (then
        ``hyper_kernel_size`` and ``squash`` are the instance's).

    Notes
    -----
    Lengths that are not a multiple of the bin size or of ``chunk_size`` are zero-padded at the
    end and the output cropped back to ``L``; because every stage is causal, padding at the end
    does not change any output. Cost: O(L log L * D) for the convolutions and O(L M D) for the
    attention. The layer follows the dtype and device of its parameters; move it with ``.to``.

    Examples
    --------
    >>> import torch
    >>> from lds_toolkit.neural.layers.focus import Focus
    >>> _ = torch.manual_seed(0)
    >>> layer = Focus(16).double()
    >>> x = torch.randn(2, 100, 16, dtype=torch.float64)
    >>> y = layer(x)
    >>> y.shape
    torch.Size([2, 100, 16])
    >>> x2 = x.clone(); x2[:, 60:] = 0.0      # change the future ...
    >>> bool((layer(x2)[:, :60] - y[:, :60]).abs().max() < 1e-10)   # ... the past stays
    True
    >>> layer.iir_coefficients(x).shape       # (batch, bins, channels, filters, 2)
    torch.Size([2, 4, 16, 1, 2])
    """

    #: Run the batch in blocks of rows, each recomputed in the backward pass
    #: (:func:`~lds_toolkit.neural.training.recompute.set_recompute`).
    recompute = False

    def __init__(
        self,
        d_model: int,
        *,
        n_bins: int = 4,
        bin_size: int | None = None,
        chunk_size: int | None = None,
        n_chunks: int | None = None,
        n_filters: int = 1,
        n_heads: int = 1,
        adaptive: bool = True,
        coefficients: str = "paper",
        oversample: int = 16,
        hyper_hidden: int = 32,
        hyper_kernel_size: int = 1024,
        squash: float = 1e-3,
        hyper_conv: FocusGlobalConv | None = None,
    ) -> None:
        super().__init__()
        watch_outputs(self)  # NaN/inf outputs of finite inputs raise
        d_model = check_int(d_model, "d_model", "Focus")
        n_heads = check_int(n_heads, "n_heads", "Focus")
        check_divisible(d_model, n_heads, "d_model", "n_heads", "Focus")
        n_bins = check_int(n_bins, "n_bins", "Focus")
        if bin_size is not None:
            bin_size = check_int(bin_size, "bin_size", "Focus")
        if chunk_size is not None and n_chunks is not None:
            raise ValueError("Focus: give chunk_size (a chunk length) or n_chunks (a number of "
                             f"chunks), not both; got chunk_size={chunk_size}, "
                             f"n_chunks={n_chunks}")
        if n_chunks is not None:
            n_chunks = check_int(n_chunks, "n_chunks", "Focus")
        else:
            chunk_size = check_int(DEFAULT_CHUNK_SIZE if chunk_size is None else chunk_size,
                                   "chunk_size", "Focus")
        n_filters = check_int(n_filters, "n_filters", "Focus")
        oversample = check_int(oversample, "oversample", "Focus")
        hyper_hidden = check_int(hyper_hidden, "hyper_hidden", "Focus")
        hyper_kernel_size = check_int(hyper_kernel_size, "hyper_kernel_size", "Focus")
        if not isinstance(adaptive, bool):
            raise TypeError(f"Focus: adaptive must be a bool, got {type(adaptive).__name__}")
        check_choice(coefficients, "coefficients", "Focus", COEFFICIENT_MAPS)
        squash = check_nonnegative_float(squash, "squash", "Focus")
        if hyper_conv is not None:
            if not isinstance(hyper_conv, FocusGlobalConv):
                raise TypeError("Focus: hyper_conv must be a FocusGlobalConv or None, got "
                                f"{type(hyper_conv).__name__}")
            if hyper_conv.d_model != d_model:
                raise ValueError(f"Focus: hyper_conv has d_model={hyper_conv.d_model}, the "
                                 f"layer {d_model}")
            if not adaptive:
                raise ValueError("Focus: hyper_conv needs adaptive=True (Focus-H has no "
                                 "hyper-network)")
        self.d_model = d_model
        self.n_bins = n_bins
        self.bin_size = bin_size
        self.chunk_size = chunk_size
        self.n_chunks = n_chunks
        self.n_filters = n_filters
        self.n_heads = n_heads
        self.adaptive = adaptive
        self.coefficients = coefficients

        if adaptive:
            if hyper_conv is None:
                hyper_conv = FocusGlobalConv(d_model, hyper_kernel_size, squash=squash)
            self.hyper = FocusHyperNetwork(d_model, n_filters, oversample, hyper_hidden,
                                           hyper_conv)
            self.register_parameter("theta_logits", None)
        else:
            self.hyper = None
            self.theta_logits = nn.Parameter(torch.randn(d_model, n_filters, 2))

        self.q_proj = nn.Linear(d_model, d_model)
        self.k_proj = nn.Linear(d_model, d_model)
        self.v_proj = nn.Linear(d_model, d_model)
        self.gamma_proj = nn.Linear(d_model, d_model)  # W_gamma, b_gamma
        self.phi_proj = nn.Linear(d_model, d_model)  # W_phi, b_phi
        self.h_proj = nn.Linear(d_model, d_model)  # W_h, b_h
        self.u_proj = nn.Linear(d_model, d_model, bias=False)  # U_h

    def chunk_length(self, length: int) -> int:
        """Attention chunk length M used for a sequence of ``length`` tokens."""
        if self.n_chunks is not None:
            return -(-length // self.n_chunks)
        return min(self.chunk_size, length)

    def _bins(self, length: int) -> tuple[int, int]:
        r = self.bin_size if self.bin_size is not None else -(-length // self.n_bins)
        return -(-length // r), r

    def iir_coefficients(self, x: Tensor) -> Tensor:
        """Denominator ``(a1, a2)`` of each bin's filters, (batch or 1, n_bins, d_model, F, 2).

        Entry ``[:, b]`` is applied to bin ``b`` (already shifted: computed from bin ``b - 1``);
        with ``coefficients="paper"`` it is Theta itself. For ``adaptive=False`` the batch and
        bin axes have size 1.
        """
        check_sequence(x, self.d_model, "Focus")
        check_matches_parameters(x, self, "Focus")
        n_bins, r = self._bins(x.shape[1])
        return self._theta(F.pad(x, (0, 0, 0, n_bins * r - x.shape[1])), n_bins, r)

    def _theta(self, x_pad: Tensor, n_bins: int, r: int) -> Tensor:
        """IIR denominators in ``work_dtype`` of the input (float32 under bf16 autocast: a
        coefficient rounded to bf16 moves a pole near the unit circle by ~0.2 %, which
        compounds over the R taps), computed with autocast off."""
        with full_precision(x_pad.device):
            x_pad = x_pad.to(work_dtype(x_pad.dtype))
            if self.hyper is not None:
                theta = self.hyper(x_pad, n_bins, r)
            else:
                theta = torch.sigmoid(self.theta_logits.to(x_pad.dtype))[None, None]
            return map_coefficients(theta, self.coefficients)

    def filtered(self, x: Tensor) -> Tensor:
        """The adaptively filtered sequence ``x_f`` (eq. 8), shape (batch, length, d_model)."""
        check_sequence(x, self.d_model, "Focus")
        check_matches_parameters(x, self, "Focus")
        return self._filtered(x)

    def _filtered(self, x: Tensor) -> Tensor:
        bsz, length, d = x.shape
        n_bins, r = self._bins(length)
        x_pad = F.pad(x, (0, 0, 0, n_bins * r - length))
        theta = self._theta(x_pad, n_bins, r)
        with full_precision(x.device):  # taps and their FFT convolution in >= float32
            h = iir2_impulse(theta, r).sum(dim=-2)  # (B|1, nb|1, D, R): bank summed, eq. 7
            xf = filter_bins(x_pad.reshape(bsz, n_bins, r, d).to(h.dtype), h)
        return xf.reshape(bsz, n_bins * r, d)[:, :length].to(x.dtype)

    def _chunk_attention(self, x: Tensor, xf: Tensor) -> Tensor:
        bsz, length, d = x.shape
        m = self.chunk_length(length)
        pad = -length % m
        n_chunks = (length + pad) // m
        dh = d // self.n_heads

        def split(t: Tensor) -> Tensor:  # (B, L, D) -> (B*C, H, M, dh)
            t = F.pad(t, (0, 0, 0, pad))
            t = t.reshape(bsz, n_chunks, m, self.n_heads, dh).transpose(2, 3)
            # 4-D for SDPA: inductor's lowering of 5-D inputs fails (torch 2.13)
            return t.reshape(bsz * n_chunks, self.n_heads, m, dh)

        q = split(self.q_proj(x))
        k = split(self.k_proj(xf))
        v = split(self.v_proj(xf))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        y = y.reshape(bsz, n_chunks, self.n_heads, m, dh)
        return y.transpose(2, 3).reshape(bsz, n_chunks * m, d)[:, :length]

    def forward(self, x: Tensor) -> Tensor:
        """Apply the layer to ``x`` of shape (batch, length, d_model)."""
        check_sequence(x, self.d_model, "Focus")
        check_matches_parameters(x, self, "Focus")
        if active(self):  # rows in blocks, each recomputed in the backward pass
            return rowwise(self._forward, x)
        return self._forward(x)

    def _forward(self, x: Tensor) -> Tensor:
        xf = self._filtered(x)
        y = self._chunk_attention(x, xf)
        gamma = F.silu(self.gamma_proj(xf))
        phi = torch.sigmoid(self.phi_proj(xf))
        z = F.silu(self.h_proj(xf) + self.u_proj(gamma * y))
        return phi * z + (1.0 - phi) * x

    def extra_repr(self) -> str:
        bins = f"bin_size={self.bin_size}" if self.bin_size else f"n_bins={self.n_bins}"
        chunks = (f"n_chunks={self.n_chunks}" if self.n_chunks is not None
                  else f"chunk_size={self.chunk_size}")
        return (
            f"d_model={self.d_model}, {bins}, {chunks}, "
            f"n_filters={self.n_filters}, n_heads={self.n_heads}, adaptive={self.adaptive}, "
            f"coefficients={self.coefficients!r}"
        )
