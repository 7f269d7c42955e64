"""Benchmark: how the cost of each path grows, with the fitted exponent beside the theoretical one.

For every path, the wall time (best of a few calls) is measured on a geometric grid of sizes
and a line is fitted to log(time) against log(size) over the upper half of the grid (where
the asymptotic term dominates); the slope is the fitted exponent. Theory:

* simulation, time against T (n = 128, one stream): every path is linear in T;
* simulation, time against n (T = 2^14): the blocked dense route for outputs
  O(T (n^2 / L + n)) with L ~ n, i.e. ~n per step, plus an O(n^3 log L) set-up; the blocked
  dense route with states O(T n^2) (every state is one n x n product, batched over the blocks)
  plus the same set-up; the modal path with states O(T n^2) (one n x n back-transform per step)
  plus the O(n^3) eigen-decomposition. At T = 2^14 the n^3 set-ups dominate the outputs route
  and the modal path from n ~ 128 on (theoretical exponent 3 over the upper half of the grid),
  while T n^2 stays the larger term of the blocked states route (exponent 2);
* spectral filters against T (k = 24): fast path O(T log T) (exponent ~1.07 over 2^12-2^20),
  dense ``eigh`` O(T^3);
* layers against L (batch 8, d = 64, fwd+bwd, one thread): S4 and STU O(L log L), LaS-chunk
  O(L M) = O(L), causal softmax attention O(L^2).

Run: ``python benchmarks/growth.py [--quick] [--out DIR]`` (``--out`` writes one PNG per
group and ``growth.json``).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _harness import table  # noqa: E402


def _best(fn, repeat: int = 3) -> float:
    fn()
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def fit_exponent(sizes, times) -> float:
    """Slope of log(time) against log(size) over the upper half of the points."""
    x, y = np.log(np.asarray(sizes, float)), np.log(np.asarray(times, float))
    h = len(x) // 2 if len(x) >= 4 else 0
    return float(np.polyfit(x[h:], y[h:], 1)[0])


def simulation_series(quick: bool) -> list[dict]:
    from simulate import general_system

    from lds_toolkit.systems import simulate

    out = []
    Ts = [2**k for k in (range(10, 14) if quick else range(10, 18))]
    sys_ = general_system(64 if quick else 128)
    rng = np.random.default_rng(0)
    paths = {
        "dense, blocked (outputs)": (lambda s, u: simulate(s, u, return_states=False), 1.0),
        "dense, blocked (outputs + states)": (lambda s, u: simulate(s, u, method="dense"),
                                              1.0),
        "modal (outputs + states)": (lambda s, u: simulate(s, u, method="modal"), 1.0),
    }
    inputs = {T: rng.standard_normal((T, 1)) for T in Ts}
    for name, (fn, theory) in paths.items():
        times = [_best(lambda T=T, fn=fn: fn(sys_, inputs[T])) for T in Ts]
        out.append(dict(group="simulation vs T", series=name, sizes=Ts, seconds=times,
                        fitted=fit_exponent(Ts, times), theory=theory, x="T"))
    ns = [16, 32, 64, 128] if quick else [32, 64, 128, 256, 512]
    T = 2**12 if quick else 2**14
    u = rng.standard_normal((T, 1))
    # for fixed T the n^3 set-up (A^L by squaring, or the eigen-decomposition) dominates
    # at the larger n, except for the blocked states route's T n^2 products
    theory_n = {"dense, blocked (outputs)": 3.0, "modal (outputs + states)": 3.0,
                "dense, blocked (outputs + states)": 2.0}
    systems = {n: general_system(n) for n in ns}
    for name, (fn, _) in paths.items():
        times = [_best(lambda s=systems[n], fn=fn: fn(s, u), repeat=2) for n in ns]
        out.append(dict(group="simulation vs n", series=name, sizes=ns, seconds=times,
                        fitted=fit_exponent(ns, times), theory=theory_n[name], x="n"))
    return out


def filter_series(quick: bool) -> list[dict]:
    from lds_toolkit.learning import FilterPrecisionWarning, spectral_filters

    warnings.simplefilter("ignore", FilterPrecisionWarning)
    Ts = [2**k for k in (range(12, 17) if quick else range(12, 21))]
    fast = [_best(lambda T=T: spectral_filters(T, 24, method="fast", cache=False),
                  repeat=1 if T >= 2**18 else 2) for T in Ts]
    theory = float(np.polyfit(np.log(Ts[len(Ts) // 2:]),
                              np.log([T * np.log(T) for T in Ts[len(Ts) // 2:]]), 1)[0])
    Td = [256, 512, 1024] if quick else [256, 512, 1024, 2048]
    dense = [_best(lambda T=T: spectral_filters(T, 24, method="dense", cache=False), repeat=1)
             for T in Td]
    return [dict(group="spectral filters vs T", series="fast (quadrature + FFT)", sizes=Ts,
                 seconds=fast, fitted=fit_exponent(Ts, fast), theory=theory, x="T"),
            dict(group="spectral filters vs T", series="dense eigh", sizes=Td, seconds=dense,
                 fitted=fit_exponent(Td, dense), theory=3.0, x="T")]


def layer_series(quick: bool) -> list[dict]:
    import torch

    from lds_toolkit import neural
    from lds_toolkit.learning import FilterPrecisionWarning

    warnings.simplefilter("ignore", FilterPrecisionWarning)
    torch.set_num_threads(1)
    Ls = [256, 512, 1024, 2048] if quick else [256, 512, 1024, 2048, 4096, 8192]
    builders = {
        "S4 (S4D)": (lambda L: neural.S4(64, seed=0), 1.0),
        "STU (tensordot)": (lambda L: neural.STU(64, seq_len=L, num_filters=24, seed=0), 1.0),
        "LaS-chunk (M = 128)": (lambda L: neural.LaSAttention(64, chunk_size=128), 1.0),
        "causal attention (SDPA)": (lambda L: neural.SelfAttention(64, n_heads=1, causal=True,
                                                                   seed=0), 2.0),
    }
    out = []
    for name, (build, theory) in builders.items():
        times = []
        for L in Ls:
            layer = build(L)
            x = torch.randn(8, L, 64, requires_grad=True)
            times.append(_best(lambda f=layer, x=x: f(x).square().mean().backward(), repeat=2))
        if theory == 1.0:
            theory = float(np.polyfit(np.log(Ls[len(Ls) // 2:]),
                                      np.log([L * np.log(L) for L in Ls[len(Ls) // 2:]]), 1)[0]
                           ) if "LaS" not in name else 1.0
        out.append(dict(group="layers vs L (fwd+bwd)", series=name, sizes=Ls, seconds=times,
                        fitted=fit_exponent(Ls, times), theory=theory, x="L"))
    return out


def run(quick: bool = False) -> list[dict]:
    return simulation_series(quick) + filter_series(quick) + layer_series(quick)


def figure_name(group: str) -> str:
    """The PNG file name of a group's figure (``growth_simulation_vs_T.png``)."""
    return "growth_" + group.split(" (")[0].replace(" ", "_") + ".png"


def figure_names(series: list[dict]) -> list[str]:
    """The file names :func:`figures` writes for ``series``, in order, drawing nothing."""
    return [figure_name(group) for group in dict.fromkeys(s["group"] for s in series)]


def figures(series: list[dict], out: Path) -> list[Path]:
    """One log-log PNG per group (matplotlib Figure objects: no global pyplot state)."""
    from matplotlib.figure import Figure

    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for group in dict.fromkeys(s["group"] for s in series):
        fig = Figure(figsize=(6.4, 4.2), dpi=110)
        ax = fig.add_subplot()
        for s in (s for s in series if s["group"] == group):
            line, = ax.loglog(s["sizes"], s["seconds"], "o-",
                              label=f"{s['series']}: fitted {s['fitted']:.2f} "
                                    f"(theory {s['theory']:.2f})")
        ax.set_xlabel(next(s["x"] for s in series if s["group"] == group))
        ax.set_ylabel("wall time [s]")
        ax.set_title(group)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
        fig.tight_layout()
        path = out / figure_name(group)
        fig.savefig(path)
        paths.append(path)
    return paths


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true")
    p.add_argument("--out", type=Path, help="write the figures and growth.json here")
    args = p.parse_args(argv)
    series = run(args.quick)
    print(table([(s["group"], s["series"], f"{s['fitted']:.2f}", f"{s['theory']:.2f}",
                  " ".join(f"{t:.3g}" for t in s["seconds"])) for s in series],
                ("group", "path", "fitted exponent", "theory", "seconds")))
    if args.out:
        figures(series, args.out)
        (args.out / "growth.json").write_text(json.dumps(series, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
