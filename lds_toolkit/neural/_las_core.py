"""LaS attention without the L x L matrix (Zimerman & Wolf, "On the long range abilities of
transformers", eq. 3).

Per head ``c`` with decay ``alpha_c`` and causal distances ``D[i, j] = i - j`` (``j <= i``):

    A = softmax( exp(-alpha_c D) * (Q K^T / sqrt(d)) + causal mask ),   out = AP(A) V.

Two identities remove the L x L matrix:

* **ELD is rank-separable.** ``exp(-alpha (i - j)) q_i . k_j = (exp(-alpha (i - c)) q_i) .
  (exp(alpha (j - c)) k_j)`` for any reference ``c``. Rescaling queries and keys by per-position
  factors turns eq. 3 into plain causal softmax attention, which torch's fused
  ``scaled_dot_product_attention(is_causal=True)`` computes in O(L) memory. With ``c`` the middle
  of the sequence the factors stay within ``exp(+-alpha (L - 1) / 2)``; when that would leave the
  dtype's safe range we fall back to query blocks with their own reference ``c`` (still no L x L
  tensor, only block x prefix masks).
* **Row pooling moves onto V.** Causal average pooling of every attention row over the key
  window ``[j, j + P - 1]`` (zero padding, divisor P) is ``AP(A) = A S^T`` with ``S`` the
  (P-tap) moving-average matrix, hence ``AP(A) V = A (S V)``: attention over values smoothed by a
  causal moving average ``V_bar[k] = (1/P) sum_{m<P} V[k - m]``.
  Pooling *before* the softmax (the other ordering, see the docs) is the same trick on keys:
  pooling the scores ``exp(-alpha D) * S`` over ``[j - P + 1, j]`` equals eq. 3 without pooling
  but with keys ``K_hat[j] = (1/P) sum_{m<P} exp(-alpha m) K[j - m]``.

ALiBi (the LaS paper's eq. 1, for its Table 3 ablation) subtracts ``m_h D / sqrt(d)`` inside
the softmax. Pooled before the softmax the bias averages over the window too (see
:func:`alibi_bias`); in both cases it is a rank-2 bilinear form in (query, key) position,

    sqrt(d) * bias[i, j] = -m_h (w_j (i - j) + r_j)
                         = (i - c) * (-m_h w_j) + 1 * m_h (w_j (j - c) - r_j),

with ``w_j = n_j / P``, ``r_j = n_j (n_j - 1) / (2P)``, ``n_j = min(P, j + 1)`` when pooled and
``w_j = 1, r_j = 0`` otherwise, and any reference ``c``. So it also leaves the fused causal
kernel intact: two extra columns ``[i - c, 1]`` on the queries and ``[-m_h w_j, m_h (w_j (j -
c) - r_j)]`` on the keys add exactly the bias to ``q . k`` (:func:`alibi_columns`). An explicit
``attn_mask`` tensor would push torch onto its general masked kernel, about twice as slow on
CPU for the Table 3 shapes (``benchmarks/``).
"""

from __future__ import annotations

import functools
import math

import torch
import torch.nn.functional as F
from torch import Tensor

__all__ = ["ALPHA_SCHEDULES", "alibi_bias", "alibi_columns", "alibi_slopes", "causal_weighted_pool",
           "eld_factors", "las_alpha_init", "las_attention"]

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


def alibi_bias(slopes: Tensor, rows: Tensor, cols: Tensor, d_head: int, pool_size: int = 1,
               pooled_scores: bool = False) -> Tensor:
    r"""Additive ALiBi bias of eq. 1 for query positions ``rows`` and key positions ``cols``.

    ``-m_h (i - j) / sqrt(d_head)`` (eq. 1 divides the bias by :math:`\sqrt{d_k}` together
    with the scores), for ``j <= i``; ``-inf`` above the diagonal (causal mask). With
    ``pooled_scores`` (pooling before the softmax over keys ``[j - P + 1, j]``, zero padding,
    divisor P) the bias is averaged the same way:
    ``-(m_h / sqrt(d)) (n_j (i - j) + n_j (n_j - 1) / 2) / P`` with ``n_j = min(P, j + 1)``.
    Returns (H, len(rows), len(cols)) in float64.
    """
    i = rows.to(torch.float64)[:, None]
    j = cols.to(torch.float64)[None, :]
    dist = i - j
    if pooled_scores and pool_size > 1:
        n = torch.clamp(j + 1, max=pool_size)
        dist = (n * dist + n * (n - 1) / 2) / pool_size
    bias = -slopes.to(torch.float64)[:, None, None] * dist / math.sqrt(d_head)
    return bias.masked_fill((j > i)[None], float("-inf"))


def alibi_columns(slopes: Tensor, rows: Tensor, cols: Tensor, ref: float, pool_size: int = 1,
                  pooled_scores: bool = False) -> tuple[Tensor, Tensor]:
    r"""Extra query and key columns whose dot product is ``sqrt(d) *`` :func:`alibi_bias`.

    Returns ``(q_extra, k_extra)`` of shapes (len(rows), 2) and (H, len(cols), 2), float64:
    ``q_extra[i] = [rows[i] - ref, 1]`` and ``k_extra[h, j] = [-m_h w_j, m_h (w_j (cols[j] -
    ref) - r_j)]`` (module docstring), so ``q_extra[i] . k_extra[h, j] = -m_h (w_j (i - j) +
    r_j)`` for every ``i, j`` (the causal mask is left to the attention call). ``ref`` keeps
    both terms of the size of the distances they encode.
    """
    i = rows.to(torch.float64)
    j = cols.to(torch.float64)
    if pooled_scores and pool_size > 1:
        n = torch.clamp(j + 1, max=pool_size)
        w, r = n / pool_size, n * (n - 1) / (2 * pool_size)
    else:
        w, r = torch.ones_like(j), torch.zeros_like(j)
    m = slopes.to(torch.float64)[:, None]
    q_extra = torch.stack([i - ref, torch.ones_like(i)], dim=-1)
    k_extra = torch.stack([(-m * w).expand(-1, len(j)), m * (w * (j - ref) - r)], dim=-1)
    return q_extra, k_extra


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
    max_exponent: float | None = None,
    alibi: Tensor | None = None,
) -> Tensor:
    """Causal LaS attention (eq. 3) of ``q, k, v`` of shape (N, H, T, d) with decays ``alpha`` (H,).

    Equal to the explicit L x L form in ``_las_reference.las_attention_dense`` (tests pin this).
    ``max_exponent`` bounds ``alpha * distance`` inside one rescaling (default: a quarter of
    ``log(finfo.max)`` of the dtype); beyond it the query axis is processed in blocks.
    ``alibi``: ALiBi slopes (H,) to add eq. 1's bias (:func:`alibi_bias`), or None.
    """
    n_pos, dtype = q.shape[-2], q.dtype
    # positions and decay factors in >= float32 (fp16 cannot even hold positions > 2048
    # exactly), rounded to the input dtype only once, as multipliers
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
    # a head whose decay spans more than max_exponent over the sequence needs query blocks;
    # the others (e.g. 7 of the 8 log-spaced heads of a 128-token chunk in float32) go through
    # one fused call
    fits = alpha.to(q.device) * (n_pos - 1) / 2 <= max_exponent
    opts = dict(pool_size=pool_size, pooled_scores=pool_order == "before_softmax",
                max_exponent=max_exponent, work=work)
    if bool(fits.all()) or not bool(fits.any()):
        return _rescaled_attention(q, k, v, a, alibi, blocked=not bool(fits.all()), **opts)
    out = torch.empty(v.shape, dtype=dtype, device=q.device)
    for group, blocked in ((fits, False), (~fits, True)):
        heads = torch.nonzero(group).flatten()
        pick = functools.partial(torch.index_select, dim=-3, index=heads)
        out[..., heads, :, :] = _rescaled_attention(
            pick(q), pick(k), pick(v), a[heads], None if alibi is None else alibi[heads.cpu()],
            blocked=blocked, **opts)
    return out


def _rescaled_attention(q: Tensor, k: Tensor, v: Tensor, a: Tensor, alibi: Tensor | None, *,
                        pool_size: int, pooled_scores: bool, max_exponent: float,
                        blocked: bool, work: torch.dtype) -> Tensor:
    """Eq. 3 (pooling already applied) by the query/key rescaling of the module docstring.

    ``a``: decays (H, 1). Unblocked, one reference ``c`` = the middle of the sequence, which
    needs ``a (T - 1) / 2 <= max_exponent`` for every head; blocked, query blocks of
    ``max_exponent / max(a)`` positions, each with its own reference.
    """
    n_pos, dtype = q.shape[-2], q.dtype
    pos = torch.arange(n_pos, dtype=work, device=q.device)
    scale = 1.0 / math.sqrt(q.shape[-1])

    def with_alibi(qb: Tensor, kb: Tensor, rows: Tensor, cols: Tensor, ref: float):
        """Append the ALiBi columns (:func:`alibi_columns`) to a block of queries and keys."""
        if alibi is None:
            return qb, kb
        q_extra, k_extra = alibi_columns(alibi, rows, cols, ref, pool_size, pooled_scores)
        q_extra = q_extra.to(dtype=dtype, device=q.device).expand(*qb.shape[:-2], -1, -1)
        k_extra = k_extra.to(dtype=dtype, device=q.device).expand(*kb.shape[:-3], -1, -1, -1)
        return torch.cat([qb, q_extra], dim=-1), torch.cat([kb, k_extra], dim=-1)

    def attend(qb: Tensor, kb: Tensor, vb: Tensor, **mask) -> Tensor:
        """Fused attention at one common width for q, k and v (zero columns change neither
        q . k nor the output's first ``dv`` columns): torch's CPU kernel leaves its fast path
        when the widths differ (ALiBi's two columns: 1.8x slower at d = 8) and is about 1.25x
        faster at width 16 than 8 even with the padding (``benchmarks/neural_layers.py``).
        The width is at least 16 and a multiple of 8 (what CUDA's fused kernels want)."""
        width, dv = qb.shape[-1], vb.shape[-1]
        common = max(16, -(-max(width, dv) // 8) * 8)
        if width != common:
            qb, kb = (F.pad(t, (0, common - width)) for t in (qb, kb))
        if dv != common:
            vb = F.pad(vb, (0, common - dv))
        return F.scaled_dot_product_attention(qb, kb, vb, scale=scale, **mask)[..., :dv]

    if not blocked:
        c = (n_pos - 1) / 2
        qs = q * torch.exp(-a * (pos - c)).to(dtype)[..., None]
        ks = k * torch.exp(a * (pos - c)).to(dtype)[..., None]
        qs, ks = with_alibi(qs, ks, pos, pos, c)
        return attend(qs, ks, v, is_causal=True)

    # is_causal aligns the mask top-left, so query blocks past the first need an explicit one
    block = max(1, int(max_exponent / float(a.max())))
    outs = []
    for s in range(0, n_pos, block):
        e = min(s + block, n_pos)
        qb = q[..., s:e, :] * torch.exp(-a * (pos[s:e] - s)).to(dtype)[..., None]
        kb = k[..., :e, :] * torch.exp(a * (pos[:e] - s)).to(dtype)[..., None]  # <= e^(a block)
        qb, kb = with_alibi(qb, kb, pos[s:e], pos[:e], s)
        causal = pos[None, :e] <= pos[s:e, None]
        outs.append(attend(qb, kb, v[..., :e, :], attn_mask=causal))
    return torch.cat(outs, dim=-2)
