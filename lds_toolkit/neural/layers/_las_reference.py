"""Explicit L x L LaS attention (eq. 3), built term by term, for tests and figures only.

Independent of ``_las_core``: it forms the distance matrix ``D_L``, the ELD matrix, the scores,
the softmax and a row-wise ``avg_pool1d`` of the L x L matrix, exactly as the paper describes.
``pool_window="centred"`` reproduces the paper's "padding to preserve the shape" literally (a
centred window), which reads future positions; the tests show it breaks causality.

:func:`las_attention_rescaled` is the construction the layer used before issue 34 (the decay
folded into rescaled queries and keys for a fused kernel), kept for the test that reproduces
its bf16 failure and as the baseline of ``benchmarks/neural_layers.py`` (it shares the pooling
of ``_las_core``, eq. 3's explicit form above does not); the layer does not use it.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor

from ._las_core import causal_weighted_pool

__all__ = ["las_attention_dense", "las_attention_matrix", "las_attention_rescaled"]


def _pool_rows(a: Tensor, pool_size: int, pad: tuple[int, int]) -> Tensor:
    """1-D average pooling of every row of ``a`` (..., T, T) along its last axis, divisor P."""
    shape = a.shape
    flat = a.reshape(-1, shape[-2], shape[-1])  # rows as channels, pool along the key axis
    out = F.avg_pool1d(F.pad(flat, pad), pool_size, stride=1, count_include_pad=True)
    return out.reshape(shape)


def las_attention_matrix(
    q: Tensor,
    k: Tensor,
    alpha: Tensor,
    pool_size: int,
    pool_order: str = "after_softmax",
    pool_window: str = "causal",
    alibi: Tensor | None = None,
) -> Tensor:
    """The pooled L x L attention matrix of eq. 3, shape (N, H, T, T).

    ``pool_order="after_softmax"`` is eq. 3, ``AP(softmax(ELD * S))``; ``"before_softmax"`` is
    ``softmax(AP(ELD * S))``. ``pool_window="causal"`` pools keys ``[j, j+P-1]`` after the
    softmax (so no weight lands on keys after the query) and ``[j-P+1, j]`` before it (so no
    future score is read); ``"centred"`` uses ``[j-P//2, j+P//2]`` as the paper's padding does.
    ``alibi``: slopes ``m_h`` (H,); the scores become ``ELD * S - m_h D_L / sqrt(d)`` (eq. 1).
    """
    n_pos, d = q.shape[-2], q.shape[-1]
    i = torch.arange(n_pos, device=q.device)[:, None]
    j = torch.arange(n_pos, device=q.device)[None, :]
    dist = (i - j).clamp(min=0).to(q.dtype)  # D_L: distance matrix times the causal mask
    eld = torch.exp(-alpha.to(q.dtype)[:, None, None] * dist)  # (H, T, T)
    scores = eld * (q @ k.transpose(-1, -2) / math.sqrt(d))
    if alibi is not None:
        scores = scores - alibi.to(q.dtype)[:, None, None] * dist / math.sqrt(d)
    causal = j <= i
    half = pool_size // 2
    if pool_window == "centred":
        if pool_size % 2 == 0:
            raise ValueError(f"a centred window needs an odd pool_size, got {pool_size}")
        pads = {"after_softmax": (half, half), "before_softmax": (half, half)}
    else:
        pads = {"after_softmax": (0, pool_size - 1), "before_softmax": (pool_size - 1, 0)}
    if pool_order == "before_softmax":
        scores = _pool_rows(scores, pool_size, pads[pool_order])
        return torch.softmax(scores.masked_fill(~causal, float("-inf")), dim=-1)
    probs = torch.softmax(scores.masked_fill(~causal, float("-inf")), dim=-1)
    return _pool_rows(probs, pool_size, pads[pool_order])


def las_attention_dense(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    alpha: Tensor,
    pool_size: int,
    pool_order: str = "after_softmax",
    pool_window: str = "causal",
    alibi: Tensor | None = None,
) -> Tensor:
    """``las_attention_matrix(...) @ v``: (N, H, T, d)."""
    return las_attention_matrix(q, k, alpha, pool_size, pool_order, pool_window, alibi) @ v


def las_attention_rescaled(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    alpha: Tensor,
    pool_size: int,
    pool_order: str = "after_softmax",
    max_exponent: float | None = None,
    sdpa=F.scaled_dot_product_attention,
) -> Tensor:
    """Eq. 3 (no ALiBi) by the pre-issue-34 rescaling: ``exp(-a (i - j)) q_i . k_j =
    (exp(-a (i - c)) q_i) . (exp(a (j - c)) k_j)`` fed to a fused causal kernel ``sdpa``.

    One reference ``c`` (the middle) for heads with ``a (T - 1) / 2 <= max_exponent``
    (default ``log(finfo.max) / 4`` of the dtype); the others in query blocks of
    ``max_exponent / a`` positions, each with its own reference and an explicit boolean causal
    mask. The rescaled operands reach ``exp(max_exponent)`` (~4e9 in float32 and bf16) and the
    masked (future) scores ``exp(a (j - i))`` times the real ones: exact only for a kernel that
    masks with -inf. ``sdpa`` replaces ``F.scaled_dot_product_attention`` (to emulate a kernel).
    """
    dtype, n_pos = q.dtype, q.shape[-2]
    work = torch.promote_types(dtype, torch.float32)
    a = alpha.to(dtype=work, device=q.device)[:, None]  # (H, 1)
    if pool_size > 1:
        taps = torch.arange(pool_size, dtype=work, device=q.device)
        if pool_order == "after_softmax":
            v = causal_weighted_pool(v, torch.full_like(taps, 1.0 / pool_size)[None].to(dtype))
        else:
            k = causal_weighted_pool(k, (torch.exp(-a * taps) / pool_size).to(dtype))
    if max_exponent is None:
        max_exponent = math.log(torch.finfo(dtype).max) / 4
    pos = torch.arange(n_pos, dtype=work, device=q.device)
    scale = 1.0 / math.sqrt(q.shape[-1])
    out = torch.empty(v.shape, dtype=dtype, device=q.device)
    for h in range(q.shape[-3]):
        ah = a[h]
        qh, kh, vh = q[..., h : h + 1, :, :], k[..., h : h + 1, :, :], v[..., h : h + 1, :, :]
        if float(ah) * (n_pos - 1) / 2 <= max_exponent:
            c = (n_pos - 1) / 2
            qs = qh * torch.exp(-ah * (pos - c)).to(dtype)[:, None]
            ks = kh * torch.exp(ah * (pos - c)).to(dtype)[:, None]
            out[..., h : h + 1, :, :] = sdpa(qs, ks, vh, is_causal=True, scale=scale)
            continue
        block = max(1, int(max_exponent / float(ah)))
        for s in range(0, n_pos, block):
            e = min(s + block, n_pos)
            qb = qh[..., s:e, :] * torch.exp(-ah * (pos[s:e] - s)).to(dtype)[:, None]
            kb = kh[..., :e, :] * torch.exp(ah * (pos[:e] - s)).to(dtype)[:, None]
            causal = pos[None, :e] <= pos[s:e, None]
            out[..., h : h + 1, s:e, :] = sdpa(qb, kb, vh[..., :e, :], attn_mask=causal,
                                               scale=scale)
    return out
