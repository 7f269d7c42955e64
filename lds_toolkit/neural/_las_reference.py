"""Explicit L x L LaS attention (eq. 3), built term by term, for tests and figures only.

Independent of ``_las_core``: it forms the distance matrix ``D_L``, the ELD matrix, the scores,
the softmax and a row-wise ``avg_pool1d`` of the L x L matrix, exactly as the paper describes.
``pool_window="centred"`` reproduces the paper's "padding to preserve the shape" literally (a
centred window), which reads future positions; the tests show it breaks causality.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor

__all__ = ["las_attention_dense", "las_attention_matrix"]


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
