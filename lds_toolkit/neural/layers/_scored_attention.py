r"""Softmax attention whose scores carry a bias computed in float32 (LaS, S4++).

For queries ``q`` (N, H, Lq, d), keys ``k`` (N, H, Lk, d) and values ``v`` (N, H, Lk, dv)::

    s[n, h, i, j] = factor(h, i', j) * scale * (q[n, h, i] . k[n, h, j]) + shift(h, i', j)
    out[n, h, i]  = sum_j softmax_j(s[n, h, i, :] + mask) v[n, h, j],     i' = i + q_offset,

with ``mask`` = -inf where ``j > i'`` (causal; none otherwise). ``factor`` and ``shift`` are
elementwise functions of the head and of the absolute query and key positions (LaS's ELD decay
``exp(-alpha_h (i - j))`` multiplies, ALiBi's and S4++'s bucketed relative-position bias add).

Precision. The scores, the bias, the softmax and its statistics are computed in float32 (in
float64 for float64 inputs) whatever the dtype of ``q, k, v``: under bf16 autocast only the
inputs are rounded to bf16, the decay or bias is not. (Folding the decay into rescaled
queries and keys, as LaS did before, hands the fused kernel operands of ~4e9 and masked scores
up to ~4e9 times the real ones, which a kernel with a finite mask value (-65504) turns into
47-70 % errors: ``tests/neural/test_bf16.py``.)

Two routes compute the same numbers:

* ``"flex"``: :func:`torch.nn.attention.flex_attention` with the bias as its ``score_mod``
  and the causal mask as a block mask; torch.compile turns it into one fused kernel (scores in
  float32 inside, no L x L tensor). Used on CUDA while ``torch.compile`` traces the model.
* ``"dense"``: explicit float32 scores, one block of ``block`` queries at a time (when there
  are several blocks and gradients are needed, the backward pass recomputes them:
  :mod:`._streamed_attention` tile by tile, keeping no scores, when the bias needs no
  gradient, else each block under ``torch.utils.checkpoint``, O(block * Lk) memory), each in
  causal tiles of ``TILE`` queries (a tile's keys end at its last query) and pieces of the
  batch of about ``PIECE_ENTRIES`` scores (they stay in cache). Used everywhere else: on CPU
  (flex_attention has no CPU backward), in eager mode on CUDA (eager flex_attention
  materialises every score at once), on the meta device and on torch builds without
  flex_attention. It runs under ``torch.compile`` without graph breaks.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
from torch import Tensor
from torch.nn import functional as F
from torch.utils.checkpoint import checkpoint

from .._cast import full_precision, work_dtype
from ._streamed_attention import Scores, StreamedAttention

try:  # torch >= 2.5
    from torch.nn.attention.flex_attention import create_block_mask, flex_attention
except ImportError:  # pragma: no cover - older torch: the dense route only
    create_block_mask = flex_attention = None

__all__ = ["BiasFn", "BACKENDS", "scored_attention"]

#: ``f(head, query_pos, key_pos) -> Tensor`` broadcastable over the three index tensors
BiasFn = Callable[[Tensor, Tensor, Tensor], Tensor]
BACKENDS = ("auto", "flex", "dense")


def _use_flex(q: Tensor) -> bool:
    return flex_attention is not None and q.is_cuda and torch.compiler.is_compiling()


def scored_attention(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    *,
    factor: BiasFn | None = None,
    shift: BiasFn | None = None,
    scale: float | None = None,
    causal: bool = True,
    q_offset: int = 0,
    block: int = 1024,
    backend: str = "auto",
) -> Tensor:
    """Attention with biased scores (module docstring), output in ``q``'s dtype.

    Parameters
    ----------
    q, k, v : (N, H, Lq, d), (N, H, Lk, d), (N, H, Lk, dv).
    factor, shift : bias functions of ``(head, query position, key position)`` (int tensors
        that broadcast against each other), returning values in float32 (float64 for float64
        inputs); None: 1 and 0. They must be elementwise torch code (no Python branches on
        values): flex_attention traces them.
    scale : score scale (default ``1 / sqrt(d)``).
    causal : mask keys after the query's absolute position ``i + q_offset``.
    q_offset : absolute position of the first query (keys start at 0).
    block : queries per block of the dense route.
    backend : ``"auto"`` (module docstring), ``"flex"`` or ``"dense"``.
    """
    if backend not in BACKENDS:
        raise ValueError(f"scored_attention: backend must be one of {BACKENDS}, got {backend!r}")
    if scale is None:
        scale = 1.0 / math.sqrt(q.shape[-1])
    if backend == "flex" or (backend == "auto" and _use_flex(q)):
        return _flex(q, k, v, factor, shift, scale, causal, q_offset)
    return _dense(q, k, v, factor, shift, scale, causal, q_offset, block)


def _flex(q, k, v, factor, shift, scale, causal, q_offset):
    if flex_attention is None:
        raise RuntimeError("scored_attention: this torch has no flex_attention (torch >= 2.5)")
    dv = v.shape[-1]
    # one common head width, a power of two >= 16 (what the fused kernels take): zero columns
    # change neither q . k nor the first dv columns of the output
    width = max(16, 1 << (max(q.shape[-1], dv) - 1).bit_length())
    q, k, v = (F.pad(t, (0, width - t.shape[-1])) for t in (q, k, v))

    def score_mod(score, b, h, i, j):
        i = i + q_offset
        if factor is not None:
            score = score * factor(h, i, j)
        if shift is not None:
            score = score + shift(h, i, j)
        return score

    mask = None
    if causal:
        def causal_mask(b, h, i, j):
            return j <= i + q_offset

        mask = create_block_mask(causal_mask, None, None, q.shape[-2], k.shape[-2],
                                 device=q.device)
    out = flex_attention(q, k, v, score_mod=score_mod, block_mask=mask, scale=scale)
    return out[..., :dv]


#: score entries per piece of the dense route: pieces of this size stay in cache, where one
#: (N, H, L, L) tensor of 128-token chunks crosses memory at every elementwise step (measured
#: 1.2-1.5x faster forward+backward on LaS-chunk's shape, 80 x 8 x 128 x 128, one thread)
PIECE_ENTRIES = 1 << 21
#: queries per causal tile of the dense route: a tile's keys end at its last query, so the
#: fully masked upper blocks (half of a long causal score matrix) are never computed
TILE = 128


def _dense(q, k, v, factor, shift, scale, causal, q_offset, block):
    n_q, n_k = q.shape[-2], k.shape[-2]
    starts = range(0, n_q, block)
    recompute = (len(starts) > 1 and torch.is_grad_enabled()
                 and any(t.requires_grad for t in (q, k, v)))
    kw = dict(factor=factor, shift=shift, scale=scale, causal=causal)
    if recompute and not any(t.requires_grad for t in _bias_terms(q, 1, 1, q_offset, **kw)):
        # no learned bias: the streamed route keeps no scores for the backward pass
        how = Scores(_bias_terms, factor, shift, scale, causal, q_offset, TILE, PIECE_ENTRIES)
        return StreamedAttention.apply(q, k, v, how)
    blocks = []
    for s in starts:
        e = min(s + block, n_q)
        # keys after the block's last query are masked for every query of the block
        nk = min(n_k, q_offset + e) if causal else n_k
        args = (q[..., s:e, :], k[..., :nk, :], v[..., :nk, :], q_offset + s)
        if recompute:
            blocks.append(checkpoint(_dense_rows, *args, use_reentrant=False, **kw))
        else:
            blocks.append(_dense_rows(*args, **kw))
    return blocks[0] if len(blocks) == 1 else torch.cat(blocks, dim=-2)


def _dense_rows(q, k, v, start, *, factor, shift, scale, causal):
    """Queries at absolute positions ``start ..`` over keys ``0 ..``, in causal tiles of
    ``TILE`` queries and pieces of the batch of about ``PIECE_ENTRIES`` scores."""
    n_q, n_k = q.shape[-2], k.shape[-2]
    tile = TILE if causal else n_q
    rows = []
    # split (not index) along the batch: its backward concatenates the pieces' gradients
    # once instead of adding each into a zero tensor of the full size
    for ts, q_tile in zip(range(0, n_q, tile), q.split(tile, dim=-2)):
        nk = min(n_k, start + ts + q_tile.shape[-2]) if causal else n_k
        # the bias terms over (H, tile, keys) once per tile, shared by every piece of the
        # batch (computing them per piece repeated them once per batch element at long L)
        mult, add = _bias_terms(q, q_tile.shape[-2], nk, start + ts, factor=factor,
                                shift=shift, scale=scale, causal=causal)
        group = max(1, PIECE_ENTRIES // max(1, q.shape[1] * q_tile.shape[-2] * nk))
        pieces = [_dense_block(qp, kp, vp, mult, add)
                  for qp, kp, vp in zip(q_tile.split(group), k[..., :nk, :].split(group),
                                        v[..., :nk, :].split(group))]
        rows.append(pieces[0] if len(pieces) == 1 else torch.cat(pieces, dim=0))
    return rows[0] if len(rows) == 1 else torch.cat(rows, dim=-2)


def _bias_terms(q, n_q, n_k, start, *, factor, shift, scale, causal):
    """``(mult, add)`` of ``s = mult * (q . k) + add`` for queries at absolute positions
    ``start .. start + n_q - 1`` and keys ``0 .. n_k - 1``: (H, n_q, n_k) in the work dtype
    (a scalar where there is no factor or shift), the causal mask folded into ``add``."""
    wp = work_dtype(q.dtype)
    dev = q.device
    heads = torch.arange(q.shape[-3], device=dev)[:, None, None]
    i = torch.arange(start, start + n_q, device=dev)[:, None]
    j = torch.arange(n_k, device=dev)[None, :]
    with full_precision(dev):
        mult = scale if factor is None else factor(heads, i, j).to(wp) * scale
        add = (torch.zeros((), dtype=wp, device=dev) if shift is None
               else shift(heads, i, j).to(wp))
        if causal:
            add = torch.where(j > i, float("-inf"), add)
    return torch.as_tensor(mult, dtype=wp, device=dev), add


def _dense_block(q, k, v, mult, add):
    """One piece of the dense route: ``softmax(mult * (q k^T) + add) v`` in the work dtype,
    one fused multiply-add over the (N, H, queries, keys) scores."""
    wp = work_dtype(q.dtype)
    with full_precision(q.device):
        qk = q.to(wp) @ k.to(wp).transpose(-1, -2)
        scores = torch.addcmul(add, qk, mult)
        out = torch.softmax(scores, dim=-1) @ v.to(wp)
    return out.to(q.dtype)
