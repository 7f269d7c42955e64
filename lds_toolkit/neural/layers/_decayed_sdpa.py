r"""LaS's ELD attention on a CPU beyond one block of queries: fused SDPA on query tiles.

For one head with decay ``alpha >= 0``, LaS's eq. 3 without ALiBi is

    s[i, j] = exp(-alpha (i - j)) * scale * (q_i . k_j)   for j <= i,
    out_i   = sum_{j <= i} softmax_j(s[i, :]) v_j.

The decay factors: ``exp(-alpha (i - j)) = exp(-alpha (i - c)) * exp(alpha (j - c))`` for any
``c``. On a tile of queries ``i`` in ``[c, c + T)``, whose keys are ``j`` in ``[0, c + T)``,

    s[i, j] = scale * (exp(-alpha (i - c)) q_i) . (exp(alpha (j - c)) k_j),

so the tile is ordinary causal attention, aligned at the lower right (query ``c + t`` sees the
keys up to ``c + t``), of rescaled queries and keys (with small decays, ``max(alpha) L <= 30``,
one tile covers the sequence: one causal SDPA call): torch's fused
:func:`~torch.nn.functional.scaled_dot_product_attention` (flash attention on a CPU: no
T x (c + T) score tensor leaves the cache, forward or backward). Per tile the rescaling costs
O((c + T) d), against the attention's O(T (c + T) d).

Why this construction is safe here when the one LaS used before issue 34 was not (it folded
the decay around one centre for the whole sequence, and CUDA's bf16 kernels turned that into
47-70 % errors, :mod:`._scored_attention`):

* the factors are bounded: tiles are short enough that ``max(alpha) T <= MAX_EXPONENT``, so a
  query's factor lies in ``[e^-30, 1]`` and a tile key's in ``(0, e^30]``. Keys far before the
  tile get factors that underflow to 0, where the true score ``exp(-alpha (i - j)) q_i . k_j``
  is below ``e^-87 |q_i . k_j|`` in float32 (``e^-708`` in float64): 0 to working precision
  either way (both give the key the weight ``e^0`` relative to a zero score);
* the kernel works in float32 (float64 for float64 inputs) with autocast off: bf16 never
  rounds a rescaled operand;
* the causal mask is boolean (the kernel replaces masked scores by -inf; it does not add a
  finite number to scores of up to ``e^30 |q . k|``).

:func:`~._las_core.las_attention` takes this route on a CPU, outside ``torch.compile``, for
more than one block of queries (``block``, 1024 by default: no committed run meets that
length), when LaS has no ALiBi and :func:`eld_tile` finds a tile; everywhere else it uses the
float32 scores of :mod:`._scored_attention`. Tests pin the two against eq. 3's explicit
L x L form (outputs and gradients, float64). Under ``torch.func.vmap`` (runs stacked by
:func:`~lds_toolkit.neural.training.train_group`) the decays cannot be read on the host, so
stacked runs keep the explicit scores: the same equation by another kernel, so a stacked run
beyond one block differs from the run alone by float32 round-off per step, not bit for bit.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor
from torch.nn.attention.bias import causal_lower_right

from .._cast import full_precision, work_dtype

#: largest ``alpha * (distance inside a tile)`` the rescaled queries and keys may carry
MAX_EXPONENT = 30.0
#: tiles are multiples of this many queries (and at least this many)
TILE_STEP = 64


def eld_tile(alpha: Tensor, length: int) -> int:
    """Queries per tile for decays ``alpha`` (H,) over ``length`` queries: ``length`` (one
    call) while ``max(alpha) * length <= MAX_EXPONENT``, else the largest multiple of
    ``TILE_STEP`` that keeps it; 0 when even ``TILE_STEP`` queries are too many (decays
    above ``MAX_EXPONENT / TILE_STEP`` = 0.47 per token: the caller then computes explicit
    scores). Reads ``alpha`` on the host; where it cannot be read (inside ``torch.func.vmap``
    of stacked runs, whose buffers are batched tensors), 0."""
    try:
        amax = float(alpha.max()) if alpha.numel() else 0.0
    except RuntimeError:  # vmap: "calling .item() on a Tensor" is refused
        return 0
    if not math.isfinite(amax) or amax < 0:
        return 0
    if amax * length <= MAX_EXPONENT:
        return length
    tile = int(MAX_EXPONENT / amax) // TILE_STEP * TILE_STEP
    return tile if tile >= TILE_STEP else 0


def eld_sdpa(q: Tensor, k: Tensor, v: Tensor, alpha: Tensor, tile: int) -> Tensor:
    """Causal attention with ELD-decayed scores (module docstring) of ``q, k`` (N, H, L, d)
    and ``v`` (N, H, L, dv), decays ``alpha`` (H,), score scale ``1 / sqrt(d)``, in query
    tiles of ``tile`` (:func:`eld_tile`; one causal call when ``tile >= L``). Computed in
    float32 (float64 for float64 inputs), autocast off; the output has ``q``'s dtype."""
    dtype = q.dtype
    work = work_dtype(dtype)
    n = q.shape[-2]
    scale = 1.0 / math.sqrt(q.shape[-1])
    with full_precision(q.device):
        q, k, v = (t.to(work) for t in (q, k, v))
        a = alpha.to(dtype=work, device=q.device)[:, None]  # (H, 1)
        pos = torch.arange(n, dtype=work, device=q.device)
        tiles = []
        for c in range(0, n, tile):
            e = min(c + tile, n)
            q_tile = q[..., c:e, :] * torch.exp(-a * (pos[c:e] - c))[..., None]
            k_tile = k[..., :e, :] * torch.exp(a * (pos[:e] - c))[..., None]
            # the first tile's keys start with its queries: plain causal, which the kernel
            # runs without a mask tensor; later tiles see every earlier key (lower right)
            mask = None if c == 0 else causal_lower_right(e - c, e)
            tiles.append(F.scaled_dot_product_attention(
                q_tile, k_tile, v[..., :e, :], attn_mask=mask, is_causal=c == 0,
                scale=scale))
        out = tiles[0] if len(tiles) == 1 else torch.cat(tiles, dim=-2)
    return out.to(dtype)
