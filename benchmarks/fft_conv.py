"""Benchmark: the causal FFT convolution's hand-written gradient against autograd's.

``lds_toolkit.neural.layers._fftconv.causal_conv`` (S4, S4+, S4++, STU, both Focus convolutions)
differentiates ``y = irfft(rfft(u) rfft(k))`` by hand (``CausalFFTConv``: three real FFTs,
reusing the forward's spectra). The baseline is the same forward left to autograd, which
differentiates each ``rfft`` through a full complex FFT of the zero-padded gradient.

Workloads (forward + backward, float32, 1 thread), the shapes the medium experiments train:

* Focus hyper-network, global convolution: u (4, 64, 4096), k (64, 4096), FFT 8192;
* Focus per-bin IIR filtering: u and k (4, 4, 64, 1024), one kernel per bin, FFT 2048;
* S4 / STU long convolution: u (16, 32, 1024), k (32, 1024), FFT 2048.

and, whole layers (batch 8, d_model 64), the same layer with ``causal_conv`` switched to the
autograd route for the baseline: ``Focus(64)`` at 4096 tokens and ``S4(64)`` at 16384.

``--quick`` divides the lengths by 8. Prints best-of-3 (``--quick``: 20) wall time, peak
extra RSS and the ratios baseline / ours; both routes are checked to agree first. Run:
``python benchmarks/fft_conv.py [--quick]``.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _harness import measure, table  # noqa: E402

import lds_toolkit.neural.layers._fftconv as fftconv  # noqa: E402
from lds_toolkit.neural import S4, Focus  # noqa: E402
from lds_toolkit.neural.layers._fftconv import causal_conv  # noqa: E402


def autograd_route(u: torch.Tensor, k: torch.Tensor, n: int) -> torch.Tensor:
    """The same convolution with autograd's gradient of rfft / irfft (the baseline)."""
    return torch.fft.irfft(torch.fft.rfft(u, n=n) * torch.fft.rfft(k, n=n), n=n)[..., :u.shape[-1]]


class _AutogradConv:
    """Stands in for ``CausalFFTConv`` (same ``apply`` signature: the output first) with
    autograd's gradient."""

    @staticmethod
    def apply(u, k, n):
        return (autograd_route(u, k, n),)


@contextlib.contextmanager
def autograd_gradient():
    """Inside: every ``causal_conv`` (hence every layer) uses the autograd route."""
    saved = fftconv.CausalFFTConv
    fftconv.CausalFFTConv = _AutogradConv
    try:
        yield
    finally:
        fftconv.CausalFFTConv = saved


def layer_rows(div: int) -> list[tuple]:
    """Whole layers, forward + backward of ``layer(x).square().mean()``, both gradients."""
    rows = []
    for name, make, length in (("Focus(64) layer", lambda: Focus(64), 4096 // div),
                               ("S4(64) layer", lambda: S4(64), 16384 // div)):
        torch.manual_seed(0)
        layer = make()
        x = torch.randn(8, length, 64, requires_grad=True)

        def run(layer=layer, x=x):
            layer(x).square().mean().backward()

        ours = measure(run)
        with autograd_gradient():
            base = measure(run)
        rows.append((f"{name}, L={length}", "ours", ours.seconds * 1e3, ours.peak_mb, 1.0, 1.0))
        rows.append((f"{name}, L={length}", "autograd", base.seconds * 1e3, base.peak_mb,
                     base.seconds / ours.seconds, base.peak_mb / max(ours.peak_mb, 1e-9)))
    return rows


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="lengths / 8")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    div = 8 if args.quick else 1
    cases = [
        ("Focus global conv", (4, 64, 4096 // div), (64, 4096 // div)),
        ("Focus bins", (4, 4, 64, 1024 // div), (4, 4, 64, 1024 // div)),
        ("S4 / STU conv", (16, 32, 1024 // div), (32, 1024 // div)),
    ]
    gen = torch.Generator().manual_seed(0)
    rows = []
    for name, u_shape, k_shape in cases:
        u = torch.randn(u_shape, generator=gen, requires_grad=True)
        k = torch.randn(k_shape, generator=gen, requires_grad=True)
        n = 2 * u_shape[-1]
        w = torch.randn(torch.broadcast_shapes(u_shape[:-1], k_shape[:-1]) + (u_shape[-1],),
                        generator=gen)
        routes = {"ours": lambda u=u, k=k, n=n: causal_conv(u, k, n=n),
                  "autograd": lambda u=u, k=k, n=n: autograd_route(u, k, n)}
        grads = {r: torch.autograd.grad((w * fn()).sum(), (u, k)) for r, fn in routes.items()}
        for a, b in zip(grads["ours"], grads["autograd"]):
            err = float((a - b).abs().max() / b.abs().max())
            if not err < 1e-5:
                raise AssertionError(f"{name}: gradients disagree by {err:.2e} (relative)")
        # millisecond calls in --quick: more repeats, or the best-of is noise
        res = {r: measure(lambda fn=fn, w=w: (w * fn()).sum().backward(),
                          repeat=20 if args.quick else 3)
               for r, fn in routes.items()}
        ours = res["ours"]
        for r, m in res.items():
            rows.append((name, r, m.seconds * 1e3, m.peak_mb, m.seconds / ours.seconds,
                         m.peak_mb / max(ours.peak_mb, 1e-9)))
    rows += layer_rows(div)
    print("causal FFT convolution, forward + backward, float32, 1 thread")
    print(table(rows, ("workload", "route", "ms", "peak MiB", "time / ours", "memory / ours")))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
