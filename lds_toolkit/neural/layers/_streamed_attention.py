r"""Biased softmax attention that keeps no score matrix for its backward pass.

The dense route of :mod:`._scored_attention` for long sequences under autograd: with ``Lq``
queries beyond one block it used to recompute each block under ``torch.utils.checkpoint``,
which holds the block's scores, probabilities and their products for its backward (about
four (N, H, 1024, Lk) float32 tensors: 4.7 GB for full LaS at L = 16384, batch 8, 8 heads).
This autograd function saves only ``q, k, v``, the output ``o`` and each row's log-sum-exp
``lse`` and, in its backward, rebuilds one causal tile of ``TILE`` queries (and a piece of the
batch) at a time, as flash attention's backward does. For the tile's scores
``s = mult * (q k^T) + add`` (float32; the bias terms are those of the dense route):

.. math::

    P = e^{s - \mathrm{lse}},\quad dV \mathrel{+}= P^\top dO,\quad
    dS = P \odot (dO\, V^\top - \delta),\quad \delta_i = \textstyle\sum_c dO_{ic} o_{ic},\quad
    dQ = (dS \odot \mathrm{mult})\, K,\quad dK \mathrel{+}= (dS \odot \mathrm{mult})^\top Q,

with ``mult`` holding the score scale (:math:`\partial s / \partial (q k^T)`). The forward
normalises after the product with ``V`` (``(e^{s - m} V) / \sum e^{s - m}``), so its output
differs from ``softmax(s) V`` by round-off only. The bias terms must not need gradients (LaS's
decay and ALiBi are buffers); a learned bias (S4++) keeps the checkpointed route.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

import torch
from torch import Tensor

from .._cast import full_precision, work_dtype


@dataclass(frozen=True)
class Scores:
    """How the scores of a query/key pair are formed (see :mod:`._scored_attention`)."""

    bias_terms: Callable[..., tuple[Tensor, Tensor]]
    factor: Callable | None
    shift: Callable | None
    scale: float
    causal: bool
    q_offset: int
    tile: int
    piece_entries: int

    def tiles(self, q: Tensor, n_k: int) -> Iterator[tuple[int, int, int, Tensor, Tensor]]:
        """``(first, end, keys, mult, add)`` per tile of queries ``first:end`` (their keys
        ``0:keys``; after the tile's last query all are masked when causal)."""
        n_q = q.shape[-2]
        for first in range(0, n_q, self.tile):
            end = min(first + self.tile, n_q)
            keys = min(n_k, self.q_offset + end) if self.causal else n_k
            mult, add = self.bias_terms(q, end - first, keys, self.q_offset + first,
                                        factor=self.factor, shift=self.shift,
                                        scale=self.scale, causal=self.causal)
            yield first, end, keys, mult, add

    def pieces(self, q: Tensor, rows: int, keys: int) -> Iterator[tuple[slice, slice]]:
        """``(sequences, heads)`` slices with about ``piece_entries`` scores each: whole
        sequences while one fits, else heads of one sequence (at L = 16384 one sequence's
        tile holds 16.7M scores, 67 MB, beyond the cache and glibc's reuse of freed memory)."""
        n, h = q.shape[0], q.shape[1]
        per_head = max(1, rows * keys)
        if h * per_head <= self.piece_entries:
            group = self.piece_entries // (h * per_head)
            for b in range(0, n, group):
                yield slice(b, min(b + group, n)), slice(None)
            return
        heads = max(1, self.piece_entries // per_head)
        for b in range(n):
            for c in range(0, h, heads):
                yield slice(b, b + 1), slice(c, min(c + heads, h))


class StreamedAttention(torch.autograd.Function):
    """``softmax(mult * q k^T + add) v`` over tiles, backward by recomputation per tile."""

    @staticmethod
    def forward(ctx, q: Tensor, k: Tensor, v: Tensor, how: Scores) -> Tensor:  # type: ignore[override]
        wp = work_dtype(q.dtype)
        out = q.new_empty(q.shape[:-1] + (v.shape[-1],), dtype=wp)
        lse = q.new_empty(q.shape[:-1], dtype=wp)
        with full_precision(q.device):
            for first, end, keys, mult, add in how.tiles(q, k.shape[-2]):
                for b, h in how.pieces(q, end - first, keys):
                    s = torch.addcmul(_heads(add, h), q[b, h, first:end].to(wp)
                                      @ k[b, h, :keys].to(wp).transpose(-1, -2),
                                      _heads(mult, h))
                    m = s.amax(dim=-1, keepdim=True)
                    p = s.sub_(m).exp_()
                    total = p.sum(dim=-1, keepdim=True)
                    out[b, h, first:end] = (p @ v[b, h, :keys].to(wp)).div_(total)
                    lse[b, h, first:end] = (m + total.log()).squeeze(-1)
        ctx.save_for_backward(q, k, v, out, lse)
        ctx.how = how
        return out.to(q.dtype)

    @staticmethod
    def backward(ctx, d_out: Tensor):  # type: ignore[override]
        q, k, v, out, lse = ctx.saved_tensors
        how: Scores = ctx.how
        wp = out.dtype
        dq = torch.zeros_like(q, dtype=wp)
        dk = torch.zeros_like(k, dtype=wp)
        dv = torch.zeros_like(v, dtype=wp)
        with full_precision(q.device):
            do = d_out.to(wp)
            delta = (do * out).sum(dim=-1, keepdim=True)
            for first, end, keys, mult, add in how.tiles(q, k.shape[-2]):
                for b, h in how.pieces(q, end - first, keys):
                    qt, kt = q[b, h, first:end].to(wp), k[b, h, :keys].to(wp)
                    vt, dot = v[b, h, :keys].to(wp), do[b, h, first:end]
                    s = torch.addcmul(_heads(add, h), qt @ kt.transpose(-1, -2),
                                      _heads(mult, h))
                    p = s.sub_(lse[b, h, first:end, None]).exp_()
                    dv[b, h, :keys] += p.transpose(-1, -2) @ dot
                    ds = (dot @ vt.transpose(-1, -2)).sub_(delta[b, h, first:end]).mul_(p)
                    ds = ds.mul_(_heads(mult, h))
                    dq[b, h, first:end] = ds @ kt
                    dk[b, h, :keys] += ds.transpose(-1, -2) @ qt
        return dq.to(q.dtype), dk.to(k.dtype), dv.to(v.dtype), None


def _heads(term: Tensor, heads: slice) -> Tensor:
    """The heads ``heads`` of a bias term of shape (H, rows, keys); a scalar as it is."""
    return term[heads] if term.dim() == 3 else term

