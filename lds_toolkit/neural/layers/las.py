"""Local and Smooth (LaS) attention (Zimerman & Wolf, "On the long range abilities of
transformers"), with the LaS-chunk variant.

See ``docs/layers/las.md`` for the equations and the choices made where the paper is unclear.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from numbers import Real

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .._validation import (
    check_choice,
    check_divisible,
    check_flag,
    check_int,
    check_matches_parameters,
    check_nonnegative_float,
    check_sequence,
    watch_outputs,
)
from ._las_core import (
    ALPHA_SCHEDULES,
    POOL_ORDERS,
    alibi_slopes,
    eld_factors,
    las_alpha_init,
    las_attention,
)

__all__ = ["LaSAttention"]


class LaSAttention(nn.Module):
    r"""Causal multi-head LaS attention (eq. 3), optionally chunked (LaS-chunk).

    Maps ``x`` of shape (batch, length, d_model) to the same shape; ``out[:, t]`` depends on
    ``x[:, :t+1]`` only. Per head ``c`` (``Q, K, V`` the head's projections of ``x``)::

        A_c   = softmax( exp(-alpha_c D_L) * (Q K^T / sqrt(d_head)) + causal mask )
        out_c = AP(A_c) V

    ``D_L[i, j] = i - j`` for ``j <= i`` (distance matrix times the causal mask), so the ELD
    matrix ``exp(-alpha_c D_L)`` multiplies each score by a factor decaying with the distance;
    ``AP`` is 1-D average pooling (window ``pool_size``, divisor ``pool_size``, zero padding) of
    every row of the attention matrix. The heads are concatenated and projected by ``W_o``.

    Causal pooling. The paper pads the pool "to preserve the shape", i.e. a centred window,
    which gives key ``j = i + 1 .. i + P//2`` (future positions) a share of the weight of key
    ``i``. We pool every row over the keys ``[j, j + P - 1]`` instead: each weight ``A[i, k]`` is
    spread evenly over keys ``k - P + 1 .. k``, never onto a later key. Then
    ``AP(A) V = A V_bar`` with ``V_bar`` the causal ``P``-tap moving average of ``V``, which is
    how it is computed (no L x L matrix; see ``_las_core``).

    Order of pooling and softmax. Eq. 3 pools after the softmax (default,
    ``pool_order="after_softmax"``); the paper's Fig. 2 draws pooling before it.
    ``pool_order="before_softmax"`` pools the decayed scores over keys ``[j - P + 1, j]`` and
    then applies the softmax, which equals eq. 3 without pooling but with keys smoothed by
    ``K_hat[j] = (1/P) sum_{m<P} exp(-alpha_c m) K[j - m]``.

    ELD, ALiBi and the softmax are computed in float32 inside the attention, whatever the
    input's dtype (:mod:`~lds_toolkit.neural.layers._scored_attention`): under ``torch.compile`` on
    CUDA as flex_attention's ``score_mod`` (one fused kernel, no L x L tensor), elsewhere as
    explicit float32 scores in blocks of queries. Under bf16 autocast the layer stays within
    1 % of its float32 output (``tests/neural/test_bf16.py``).

    Parameters
    ----------
    d_model : int
        Channels; must be divisible by ``n_heads``.
    n_heads : int, default 8
        Heads (Appendix A: 8 heads in every experiment).
    pool_size : int, default 5
        Average-pooling window P (Table 4: 5 for ListOps/Text/Retrieval, 3 for Image/Pathfinder).
        ``pool_size=1`` gives the paper's L-attention ablation (no smoothing).
    decay_bound : float, default 1e-3
        B of Table 4 (1e-3 for four of five tasks, 1e-4 for Text). ``decay_bound=0`` gives the
        S-attention ablation (no decay). The rates are a buffer ``alpha``, not learned (the
        paper adds no parameters).
    alpha_schedule : {"exp_uniform", "linear", "log"}, default "exp_uniform"
        How B becomes the per-head rates (the paper's sentence admits several readings, see
        :func:`~lds_toolkit.neural.layers._las_core.las_alpha_init`): ``"exp_uniform"``
        ``alpha_c = -log(1 - c/(H-1) (1 - exp(-B)))`` (``exp(-alpha_c)`` evenly spaced,
        ``alpha`` in [0, B]); ``"linear"`` ``alpha_c = c B/(H-1)``; ``"log"`` ``alpha_0 = 0``
        and ``alpha_c = B^((H-1-c)/(H-2))``, log-spaced from B to 1. Always ``alpha_0 = 0``.
    alpha : sequence of float or None, default None
        The rates per head, given directly (length ``n_heads``, each finite and >= 0); then
        ``decay_bound`` and ``alpha_schedule`` are not used.
    alibi : bool, default False
        Add ALiBi's distance bias as the LaS paper's eq. 1 writes it,
        ``softmax((Q K^T - m_h D_L) / sqrt(d_head))`` with ``m_h = 2^(-8 h / H)``,
        h = 1..H: the bias is divided by ``sqrt(d_head)`` with the scores. With ELD the
        scores are ``ELD * (Q K^T / sqrt(d)) - m_h D_L / sqrt(d)``. For the paper's Table 3
        ablation (``cT + ALiBi``: ``pool_size=1, decay_bound=0, alibi=True``). The bias is
        added to the scores in float32, as the decay.
    chunk_size : int or None, default None
        None: full causal attention over the whole sequence (O(L^2) time; O(L) memory with
        the fused kernel, O(1024 L) in blocks of 1024 queries otherwise). An int M (the
        paper's LaS-chunk uses 128): the sequence is cut into chunks of M and LaS attention
        runs inside each chunk only (distances, decay and pooling restart at every chunk
        start); cost O(L M). A length that is not a multiple of M is
        zero-padded at the end and the output cropped; causality makes this exact.
    pool_order : {"after_softmax", "before_softmax"}, default "after_softmax"
        Eq. 3's order or Fig. 2's, see above.
    bias : bool, default True
        Biases of the Q, K, V and output projections.

    Examples
    --------
    >>> import torch
    >>> from lds_toolkit.neural.layers.las import LaSAttention
    >>> _ = torch.manual_seed(0)
    >>> layer = LaSAttention(64)                 # 8 heads, P = 5, B = 1e-3
    >>> [round(a, 6) for a in layer.alpha.tolist()[:3]]
    [0.0, 0.000143, 0.000286]
    >>> [round(a, 4) for a in LaSAttention(64, alpha_schedule="log").alpha.tolist()]
    [0.0, 0.001, 0.0032, 0.01, 0.0316, 0.1, 0.3162, 1.0]
    >>> LaSAttention(16, n_heads=2, alpha=[0.0, 0.25]).alpha.tolist()
    [0.0, 0.25]
    >>> x = torch.randn(2, 300, 64)
    >>> layer(x).shape
    torch.Size([2, 300, 64])
    >>> LaSAttention(64, chunk_size=128)(x).shape  # LaS-chunk; 300 is padded to 384 inside
    torch.Size([2, 300, 64])
    """

    def __init__(
        self,
        d_model: int,
        n_heads: int = 8,
        *,
        pool_size: int = 5,
        decay_bound: float = 1e-3,
        chunk_size: int | None = None,
        pool_order: str = "after_softmax",
        bias: bool = True,
        alpha_schedule: str = "exp_uniform",
        alpha: Sequence[float] | None = None,
        alibi: bool = False,
    ) -> None:
        super().__init__()
        watch_outputs(self)  # NaN/inf outputs of finite inputs raise
        d_model = check_int(d_model, "d_model", "LaSAttention")
        n_heads = check_int(n_heads, "n_heads", "LaSAttention")
        check_divisible(d_model, n_heads, "d_model", "n_heads", "LaSAttention")
        pool_size = check_int(pool_size, "pool_size", "LaSAttention")
        if chunk_size is not None:
            chunk_size = check_int(chunk_size, "chunk_size", "LaSAttention")
        decay_bound = check_nonnegative_float(decay_bound, "decay_bound", "LaSAttention")
        check_choice(pool_order, "pool_order", "LaSAttention", POOL_ORDERS)
        check_choice(alpha_schedule, "alpha_schedule", "LaSAttention", ALPHA_SCHEDULES)
        if not isinstance(alibi, bool):
            raise TypeError(f"LaSAttention: alibi must be a bool, got {type(alibi).__name__}")
        check_flag(bias, "bias", "LaSAttention")
        if alpha is None:
            rates = las_alpha_init(n_heads, decay_bound, alpha_schedule)
        else:
            rates = _check_alpha(alpha, n_heads)
            alpha_schedule = "custom"
        self.d_model = d_model
        self.n_heads = n_heads
        self.pool_size = pool_size
        self.decay_bound = decay_bound
        self.alpha_schedule = alpha_schedule
        self.chunk_size = chunk_size
        self.pool_order = pool_order
        self.alibi = alibi
        # float64 whatever the default dtype, so that given rates survive exactly (a float32
        # model casts them once, where it uses them)
        self.register_buffer("alpha", rates)
        self.register_buffer("alibi_slopes", alibi_slopes(n_heads).to(torch.get_default_dtype())
                             if alibi else None, persistent=False)
        self.q_proj = nn.Linear(d_model, d_model, bias=bias)
        self.k_proj = nn.Linear(d_model, d_model, bias=bias)
        self.v_proj = nn.Linear(d_model, d_model, bias=bias)
        self.out_proj = nn.Linear(d_model, d_model, bias=bias)

    def _heads(self, t: Tensor) -> Tensor:  # (B, L, D) -> (B, H, L, dh)
        bsz, length, _ = t.shape
        return t.reshape(bsz, length, self.n_heads, self.d_model // self.n_heads).transpose(1, 2)

    def forward(self, x: Tensor) -> Tensor:
        """Apply the layer to ``x`` of shape (batch, length, d_model)."""
        check_sequence(x, self.d_model, "LaSAttention")
        check_matches_parameters(x, self, "LaSAttention")
        bsz, length, d = x.shape
        q, k, v = (self._heads(p(x)) for p in (self.q_proj, self.k_proj, self.v_proj))
        if self.chunk_size is None:
            y = las_attention(q, k, v, self.alpha, self.pool_size, self.pool_order,
                              alibi=self.alibi_slopes)
        else:
            m, dh = min(self.chunk_size, length), d // self.n_heads
            pad = -length % m
            n_chunks = (length + pad) // m

            def chunks(t: Tensor) -> Tensor:  # (B, H, L, dh) -> (B*C, H, M, dh)
                t = F.pad(t, (0, 0, 0, pad))
                t = t.reshape(bsz, self.n_heads, n_chunks, m, dh).transpose(1, 2)
                return t.reshape(bsz * n_chunks, self.n_heads, m, dh)

            y = las_attention(chunks(q), chunks(k), chunks(v), self.alpha, self.pool_size,
                              self.pool_order, alibi=self.alibi_slopes)
            dv = y.shape[-1]  # explicit: -1 is ambiguous for a batch of size 0
            y = y.reshape(bsz, n_chunks, self.n_heads, m, dv).transpose(1, 2)
            y = y.reshape(bsz, self.n_heads, n_chunks * m, dv)[:, :, :length]
        return self.out_proj(y.transpose(1, 2).reshape(bsz, length, d))

    def attention_matrix(self, x: Tensor) -> Tensor:
        """The explicit pooled attention matrix, (batch, n_heads, L, L); O(L^2), for inspection.

        Only for ``chunk_size=None`` (the chunked layer's matrix is block diagonal).
        """
        from ._las_reference import las_attention_matrix

        check_sequence(x, self.d_model, "LaSAttention")
        check_matches_parameters(x, self, "LaSAttention")
        if self.chunk_size is not None:
            raise ValueError("LaSAttention: attention_matrix is only available for chunk_size=None")
        q, k = self._heads(self.q_proj(x)), self._heads(self.k_proj(x))
        return las_attention_matrix(q, k, self.alpha, self.pool_size, self.pool_order,
                                    alibi=self.alibi_slopes)

    def eld_factors(self, length: int | None = None) -> Tensor:
        """``exp(-alpha_c d)`` for d = 0..length-1, (n_heads, length), float64: the factor the
        ELD matrix puts on a score ``d`` tokens back (default length: the chunk, else 128)."""
        if length is None:
            length = self.chunk_size or 128
        length = check_int(length, "length", "LaSAttention.eld_factors")
        return eld_factors(self.alpha, length)

    def extra_repr(self) -> str:
        rates = (f"alpha={[round(a, 6) for a in self.alpha.tolist()]}"
                 if self.alpha_schedule == "custom"
                 else f"decay_bound={self.decay_bound}, alpha_schedule={self.alpha_schedule!r}")
        return (
            f"d_model={self.d_model}, n_heads={self.n_heads}, pool_size={self.pool_size}, "
            f"{rates}, chunk_size={self.chunk_size}, pool_order={self.pool_order!r}, "
            f"alibi={self.alibi}"
        )


def _check_alpha(alpha, n_heads: int) -> Tensor:
    """``alpha`` as a float64 tensor of ``n_heads`` finite rates >= 0, else raise."""
    if isinstance(alpha, Tensor):
        alpha = alpha.detach().cpu().tolist()
    if isinstance(alpha, str | bytes) or not isinstance(alpha, Sequence):
        raise TypeError(f"LaSAttention: alpha must be a sequence of {n_heads} floats, got "
                        f"{type(alpha).__name__}")
    if len(alpha) != n_heads:
        raise ValueError(f"LaSAttention: alpha must have one rate per head ({n_heads}), got "
                         f"{len(alpha)}")
    for a in alpha:
        if isinstance(a, bool) or not isinstance(a, Real) or not (math.isfinite(a) and a >= 0):
            raise ValueError(f"LaSAttention: alpha must hold finite rates >= 0, got {a!r}")
    return torch.tensor([float(a) for a in alpha], dtype=torch.float64)
