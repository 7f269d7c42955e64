"""LaS attention without the L x L matrix (Zimerman & Wolf, "On the long range abilities of
transformers", eq. 3).

Per head ``c`` with decay ``alpha_c`` and causal distances ``D[i, j] = i - j`` (``j <= i``):

    A = softmax( exp(-alpha_c D) * (Q K^T / sqrt(d)) + causal mask ),   out = AP(A) V.

* **ELD and ALiBi are biases of the scores.** The ELD factor ``exp(-alpha_c (i - j))``
  multiplies each score and ALiBi's ``-m_h D / sqrt(d)`` (the paper's eq. 1, for its Table 3
  ablation) is added to it: both are functions of the head and the two positions, computed in
  float32 inside the attention (:mod:`._scored_attention`: flex_attention's ``score_mod``,
  fused under torch.compile on CUDA, or explicit float32 scores in query blocks elsewhere). So
  bf16 inputs lose nothing of the decay. (Until issue 34 the decay was folded into rescaled
  queries and keys, ``(exp(-alpha (i - c)) q_i) . (exp(alpha (j - c)) k_j)``, which handed the
  fused kernel operands of ~1e9 and masked scores of ~1e17: fine in exact float32, 47-70 %
  wrong on an H200 in bf16; the construction is kept in :mod:`._las_reference` for the test
  that reproduces that on CPU.) On a CPU beyond one block of queries without ALiBi, the
  decay is folded into queries and keys again, but per tile of queries, with bounded factors,
  in float32 and under a boolean mask (:mod:`._decayed_sdpa` says why that is safe), so that
  torch's fused SDPA kernel computes it.
* **Row pooling moves onto V.** Causal average pooling of every attention row over the key
  window ``[j, j + P - 1]`` (zero padding, divisor P) is ``AP(A) = A S^T`` with ``S`` the
  (P-tap) moving-average matrix, hence ``AP(A) V = A (S V)``: attention over values smoothed by a
  causal moving average ``V_bar[k] = (1/P) sum_{m<P} V[k - m]``.
  Pooling *before* the softmax (the other ordering, see the docs) is the same trick on keys:
  pooling the scores ``exp(-alpha D) * S`` over ``[j - P + 1, j]`` equals eq. 3 without pooling
  but with keys ``K_hat[j] = (1/P) sum_{m<P} exp(-alpha m) K[j - m]``. Pooled before the
  softmax, ALiBi's bias averages over the window too: ``-(m_h / sqrt(d)) (w_j (i - j) + r_j)``
  with ``w_j = n_j / P``, ``r_j = n_j (n_j - 1) / (2P)``, ``n_j = min(P, j + 1)``
  (``w_j = 1, r_j = 0`` otherwise; :func:`alibi_shift`).
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor

from .._cast import work_dtype
from ._decayed_sdpa import eld_sdpa, eld_tile
from ._scored_attention import scored_attention

__all__ = ["ALPHA_SCHEDULES", "alibi_bias", "alibi_shift", "alibi_slopes",
           "causal_weighted_pool", "eld_factor", "eld_factors", "las_alpha_init",
           "las_attention"]

POOL_ORDERS = ("after_softmax", "before_softmax")
#: Readings of the paper's alpha_c initialisation (see :func:`las_alpha_init`).
ALPHA_SCHEDULES = ("exp_uniform", "linear", "log")


def las_alpha_init(n_heads: int, bound: float, schedule: str = "exp_uniform") -> Tensor:
    r"""Decay rates ``alpha_c``, c = 0..n_heads-1 (float64), under one reading of Sec. 4.1.

    The paper asks for alpha_0 = 0 (a vanilla head), alpha_c "evenly spaced ... in exponential
    space", "exponential-uniformly in [0, B] (namely, enforce that exp(-alpha_c) is uniformly
    distributed in [0, B])", B in (0, 1) (Table 4: 1e-3 or 1e-4). The last phrase cannot hold
    literally (exp(-alpha_0) = 1 is not in [0, B]), so three readings are offered; with
    ``c' = c / (H - 1)``:

    ``"exp_uniform"`` (default)
        :math:`e^{-\alpha_c}` evenly spaced between 1 and :math:`e^{-B}`:
        :math:`\alpha_c = -\log(1 - c' (1 - e^{-B}))`; alpha in [0, B].
    ``"linear"``
        :math:`\alpha_c = c' B`; alpha in [0, B]. For B <= 1e-3 within 0.05 % of
        ``"exp_uniform"``: both leave the ELD factor above exp(-127 B) >= 0.88 inside a
        128-token chunk.
    ``"log"``
        :math:`\alpha_0 = 0` and :math:`\log \alpha_c` evenly spaced from :math:`\log B`
        (head 1) to 0 (head H-1): :math:`\alpha_c = B^{(H-1-c)/(H-2)}`, effective lengths
        :math:`1/\alpha_c` from 1/B down to one token ("evenly spaced in exponential
        space" read as log-spaced rates, B the slowest non-zero rate). For H = 2 it is
        ``[0, B]``.

    ``bound = 0`` gives all zeros (no decay) under every schedule.
    """
    if schedule not in ALPHA_SCHEDULES:
        raise ValueError(f"alpha schedule must be one of {ALPHA_SCHEDULES}, got {schedule!r}")
    if n_heads == 1 or bound == 0:
        return torch.zeros(n_heads, dtype=torch.float64)
    c = torch.arange(n_heads, dtype=torch.float64)
    frac = c / (n_heads - 1)
    if schedule == "exp_uniform":
        return -torch.log1p(-frac * (-math.expm1(-bound)))
    if schedule == "linear":
        return frac * bound
    if n_heads == 2:
        return torch.tensor([0.0, bound], dtype=torch.float64)
    alpha = bound ** ((n_heads - 1 - c) / (n_heads - 2))
    alpha[0] = 0.0
    return alpha


def eld_factors(alpha: Tensor, length: int) -> Tensor:
    """First row of every head's ELD matrix: ``exp(-alpha_c d)``, d = 0..length-1, (H, length).

    The ELD matrix is Toeplitz, ``exp(-alpha_c D_L)[i, j] = exp(-alpha_c (i - j))`` for
    ``j <= i``: its entry at distance ``d`` is the factor that multiplies a score ``d`` tokens
    back.
    """
    d = torch.arange(length, dtype=torch.float64)
    return torch.exp(-alpha.to(torch.float64)[:, None] * d)


def alibi_slopes(n_heads: int) -> Tensor:
    """ALiBi's head slopes ``m_h = 2^(-8 h / H)``, h = 1..H (Press et al. 2021), float64."""
    h = torch.arange(1, n_heads + 1, dtype=torch.float64)
    return 2.0 ** (-8.0 * h / n_heads)


def eld_factor(alpha: Tensor, i: Tensor, j: Tensor) -> Tensor:
    """ELD factor ``exp(-alpha (i - j))`` for ``j <= i`` and 1 above the diagonal (masked
    there; 1 keeps the masked products finite), in ``alpha``'s dtype; ``alpha``, ``i``, ``j``
    broadcast against each other."""
    return torch.exp(-alpha * (i - j).clamp(min=0).to(alpha.dtype))


def alibi_shift(slopes: Tensor, i: Tensor, j: Tensor, d_head: int, pool_size: int = 1,
                pooled_scores: bool = False) -> Tensor:
    r"""ALiBi's additive score bias ``-m_h (w_j (i - j) + r_j) / sqrt(d_head)`` (eq. 1; the
    module docstring gives ``w_j, r_j``: 1 and 0 unless ``pooled_scores`` with
    ``pool_size > 1``), in ``slopes``' dtype, without the causal mask; ``slopes``, ``i``,
    ``j`` broadcast against each other."""
    dist = (i - j).to(slopes.dtype)
    if pooled_scores and pool_size > 1:
        n = torch.clamp(j + 1, max=pool_size).to(slopes.dtype)
        dist = (n * dist + n * (n - 1) / 2) / pool_size
    return -slopes * dist / math.sqrt(d_head)


def alibi_bias(slopes: Tensor, rows: Tensor, cols: Tensor, d_head: int, pool_size: int = 1,
               pooled_scores: bool = False) -> Tensor:
    r"""Additive ALiBi bias of eq. 1 for query positions ``rows`` and key positions ``cols``.

    ``-m_h (i - j) / sqrt(d_head)`` (eq. 1 divides the bias by :math:`\sqrt{d_k}` together
    with the scores), for ``j <= i``; ``-inf`` above the diagonal (causal mask). With
    ``pooled_scores`` (pooling before the softmax over keys ``[j - P + 1, j]``, zero padding,
    divisor P) the bias is averaged the same way:
    ``-(m_h / sqrt(d)) (n_j (i - j) + n_j (n_j - 1) / 2) / P`` with ``n_j = min(P, j + 1)``.
    Returns (H, len(rows), len(cols)) in float64 (:func:`alibi_shift` on the grid).
    """
    i, j = rows[:, None], cols[None, :]
    bias = alibi_shift(slopes.to(torch.float64)[:, None, None], i, j, d_head, pool_size,
                       pooled_scores)
    return bias.masked_fill((j > i)[None], float("-inf"))


def causal_weighted_pool(x: Tensor, weights: Tensor) -> Tensor:
    """``y[..., h, t, :] = sum_{m < P} weights[h, m] * x[..., h, t - m, :]`` (zero before t=0).

    ``x``: (N, H, T, d); ``weights``: (H or 1, P). P is a few taps, so the loop is over taps.
    """
    t = x.shape[-2]
    y = x * weights[:, 0, None, None]
    for m in range(1, min(weights.shape[1], t)):
        y = y + F.pad(x, (0, 0, m, 0))[..., :t, :] * weights[:, m, None, None]
    return y


def las_attention(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    alpha: Tensor,
    pool_size: int,
    pool_order: str = "after_softmax",
    alibi: Tensor | None = None,
    *,
    block: int = 1024,
    backend: str = "auto",
) -> Tensor:
    """Causal LaS attention (eq. 3) of ``q, k, v`` of shape (N, H, T, d) with decays ``alpha`` (H,).

    Equal to the explicit L x L form in ``_las_reference.las_attention_dense`` (tests pin this).
    ``alibi``: ALiBi slopes (H,) to add eq. 1's bias (:func:`alibi_bias`), or None. The decay,
    the bias, the pooling weights, the scores and the softmax are computed in float32 (float64
    for float64 inputs); the output has ``q``'s dtype. ``block`` and ``backend``: see
    :func:`~lds_toolkit.neural.layers._scored_attention.scored_attention`. On a CPU, outside
    ``torch.compile``, with more than ``block`` queries and no ALiBi, ``backend="auto"``
    computes the ELD attention with fused SDPA on query tiles (:mod:`._decayed_sdpa`: the
    same numbers to round-off, without explicit scores).
    """
    dtype = q.dtype
    work = work_dtype(dtype)
    d_head = q.shape[-1]
    a = alpha.to(dtype=work, device=q.device)
    if pool_size > 1:
        taps = torch.arange(pool_size, dtype=work, device=q.device)
        if pool_order == "after_softmax":
            w = torch.full_like(taps, 1.0 / pool_size)[None]
            v = causal_weighted_pool(v.to(work), w).to(dtype)
        else:
            k = causal_weighted_pool(k.to(work), torch.exp(-a[:, None] * taps) / pool_size)
            k = k.to(dtype)
    pooled_scores = pool_order == "before_softmax"
    slopes = None if alibi is None else alibi.to(dtype=work, device=q.device)

    if (slopes is None and backend == "auto" and q.device.type == "cpu"
            and q.shape[-2] > block and not torch.compiler.is_compiling()):
        tile = eld_tile(a, q.shape[-2])
        if tile:  # fused SDPA on tiles of rescaled queries and keys (._decayed_sdpa)
            return eld_sdpa(q, k, v, a, tile)

    def factor(h: Tensor, i: Tensor, j: Tensor) -> Tensor:
        return eld_factor(a[h], i, j)

    def shift(h: Tensor, i: Tensor, j: Tensor) -> Tensor:
        return alibi_shift(slopes[h], i, j, d_head, pool_size, pooled_scores)

    return scored_attention(q, k, v, factor=factor, shift=None if slopes is None else shift,
                            causal=True, block=block, backend=backend)
