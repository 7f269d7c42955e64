"""Benchmark: LaS-chunk attention of the Table 3 ablation, ours against two baselines.

Workload: the ``las-ablation --scale medium`` shape, one layer, forward + backward: batch 8,
1280 tokens (the mean ListOps length of 500-2000), d_model 64, 8 heads (head dim 8), chunk
128; ``--quick`` uses 384 tokens. Every Table 3 row is timed:

* **ours**: :class:`~lds_toolkit.neural.LaSAttention` as the experiment builds it. ELD is
  folded into per-position query/key factors and ALiBi into two extra query/key columns, so
  every row is one fused causal ``scaled_dot_product_attention`` call (plus query blocks for a
  head whose decay overflows one rescaling).
* **masked**: the same rescaling, but ALiBi passed as an explicit ``attn_mask`` bias tensor
  (the obvious way, and this toolkit's code before the column trick): torch leaves its fused
  causal path.
* **width 8** (``vanilla`` only): torch's fused causal call on the unpadded head width 8, the
  baseline for the padding to width 16 that ours does on CPU; ``--full 4096`` adds the same
  comparison for the unchunked layer at that length.
* **dense**: the explicit chunk x chunk form of eq. 3 (``_las_reference.las_attention_dense``),
  the independent route the tests compare against.

Prints best-of-3 wall time and peak extra RSS per row and the ratios to ours. Run:
``python benchmarks/las_table3.py [--quick]``.
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import torch
import torch.nn.functional as F

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _harness import measure, table  # noqa: E402

from lds_toolkit.experiments.catalog.las_ablation import layer_options, scale_config  # noqa: E402
from lds_toolkit.neural import LaSAttention  # noqa: E402
from lds_toolkit.neural.layers._las_core import alibi_bias, causal_weighted_pool  # noqa: E402
from lds_toolkit.neural.layers._las_reference import las_attention_dense  # noqa: E402

ROWS = ("vanilla", "alibi", "l-only", "s-only", "s+alibi", "las")


def masked_alibi_attention(q, k, v, slopes, pool_size):
    """ALiBi through an explicit additive bias (no ELD: the Table 3 ALiBi rows have none)."""
    n_pos = q.shape[-2]
    if pool_size > 1:
        v = causal_weighted_pool(v, torch.full((1, pool_size), 1.0 / pool_size, dtype=v.dtype))
    pos = torch.arange(n_pos)
    bias = alibi_bias(slopes, pos, pos, q.shape[-1]).to(q.dtype)
    return F.scaled_dot_product_attention(q, k, v, attn_mask=bias)


def chunked(layer: LaSAttention, x: torch.Tensor, attention) -> torch.Tensor:
    """The layer's projections and chunking around another attention routine."""
    bsz, length, d = x.shape
    m, h = layer.chunk_size, layer.n_heads

    def heads(t):  # (B, L, D) -> (B * C, H, M, dh), L a multiple of the chunk
        return (t.reshape(bsz, length // m, m, h, d // h).transpose(2, 3)
                .reshape(-1, h, m, d // h))

    q, k, v = (heads(p(x)) for p in (layer.q_proj, layer.k_proj, layer.v_proj))
    y = attention(q, k, v).reshape(bsz, length // m, h, m, d // h).transpose(2, 3)
    return layer.out_proj(y.reshape(bsz, length, d))


def make_routes(layer: LaSAttention, x: torch.Tensor) -> dict:
    """route name -> a function computing the layer's output that way."""

    def masked(q, k, v):
        return masked_alibi_attention(q, k, v, layer.alibi_slopes, layer.pool_size)

    def dense(q, k, v):
        return las_attention_dense(q, k, v, layer.alpha, layer.pool_size, layer.pool_order,
                                   alibi=layer.alibi_slopes)

    def width8(q, k, v):
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)

    routes = {"ours": lambda: layer(x)}
    if not layer.alibi and layer.pool_size == 1 and float(layer.alpha.max()) == 0:
        routes["width 8"] = lambda: chunked(layer, x, width8)
    if layer.alibi:
        routes["masked"] = lambda: chunked(layer, x, masked)
    routes["dense"] = lambda: chunked(layer, x, dense)
    return routes


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="384 tokens instead of 1280")
    ap.add_argument("--full", type=int, metavar="L",
                    help="also time the unchunked vanilla layer at L tokens, padded vs width 8")
    args = ap.parse_args(argv)
    torch.set_num_threads(1)  # as each las-ablation worker runs
    cfg = scale_config("medium")
    length = 384 if args.quick else 1280
    x = torch.randn(8, length, 64, requires_grad=True, generator=torch.Generator().manual_seed(0))
    rows = []
    for name in ROWS:
        opts = layer_options(name, cfg)
        torch.manual_seed(0)
        layer = LaSAttention(64, **opts)
        routes = make_routes(layer, x)
        ref = routes["ours"]().detach()
        for route, fn in routes.items():
            err = float((fn().detach() - ref).abs().max())
            if not math.isfinite(err) or err > 1e-4:
                raise AssertionError(f"{name}/{route} disagrees with ours by {err:.2e}")
        results = {r: measure(lambda fn=fn: fn().square().mean().backward())
                   for r, fn in routes.items()}
        ours = results["ours"]
        for route, res in results.items():
            rows.append((name, route, res.seconds * 1e3, res.peak_mb,
                         res.seconds / ours.seconds, res.peak_mb / max(ours.peak_mb, 1e-9)))
    if args.full:
        torch.manual_seed(0)
        layer = LaSAttention(64, pool_size=1, decay_bound=0.0)
        xf = torch.randn(8, args.full, 64, requires_grad=True)

        def full_width8():
            bsz, length, d = xf.shape
            q, k, v = (p(xf).reshape(bsz, length, 8, d // 8).transpose(1, 2)
                       for p in (layer.q_proj, layer.k_proj, layer.v_proj))
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            return layer.out_proj(y.transpose(1, 2).reshape(bsz, length, d))

        err = float((full_width8() - layer(xf)).abs().max())
        if err > 1e-4:
            raise AssertionError(f"unchunked width-8 route disagrees with ours by {err:.2e}")
        ours = measure(lambda: layer(xf).square().mean().backward(), repeat=2)
        base = measure(lambda: full_width8().square().mean().backward(), repeat=2)
        rows.append((f"vanilla, unchunked {args.full}", "ours", ours.seconds * 1e3,
                     ours.peak_mb, 1.0, 1.0))
        rows.append((f"vanilla, unchunked {args.full}", "width 8", base.seconds * 1e3,
                     base.peak_mb, base.seconds / ours.seconds,
                     base.peak_mb / max(ours.peak_mb, 1e-9)))
    print(f"LaS-chunk attention, batch 8 x {length} tokens, d_model 64, 8 heads, chunk 128, "
          f"forward+backward, 1 thread")
    print(table(rows, ("row", "route", "ms", "peak MiB", "time / ours", "memory / ours")))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
