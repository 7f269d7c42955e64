"""Forward+backward time and peak memory of the torch sequence layers vs causal SDPA attention.

Usage::

    python benchmarks/neural_layers.py                 # CPU, L in {1024, 4096, 16384}
    python benchmarks/neural_layers.py --quick         # CPU, L in {256, 1024}: about a minute
    python benchmarks/neural_layers.py --device cuda   # same table on a GPU
    python benchmarks/neural_layers.py --scores        # LaS attention core: routes compared

Every (layer, L) point runs in its own subprocess, so one measurement's memory cannot leak into
the next. Sizes: batch 8, d_model 64 (``--batch``, ``--d-model``). Each point times
``loss = layer(x).square().mean(); loss.backward()`` (input requires grad) and reports the
median over repeats (at least one untimed warm-up unless a single pass takes > 5 s).

What "peak memory" measures:

* CPU: the growth of the process's resident set during one forward+backward pass, after an
  untimed warm-up pass (so thread pools, FFT plans and other one-time allocations are not
  counted): the kernel's high-water mark ``VmHWM``, reset through ``/proc/self/clear_refs``
  just before the measured passes, minus the resident set ``VmRSS`` at that moment (layer,
  parameters and input already allocated). The worker runs with glibc's
  ``MALLOC_MMAP_THRESHOLD_=65536`` so freed tensor buffers go back to the OS instead of staying
  in malloc's cache; the resident-set peak then tracks the live memory the pass needs (torch's
  CPU allocator does not cache). Where ``clear_refs`` is not writable the script falls back to
  ``ru_maxrss`` minus the RSS before the warm-up and says so.
* CUDA: ``torch.cuda.max_memory_allocated()`` minus the allocated memory before the first pass
  (live tensors held by torch's caching allocator; excludes the CUDA context).

The baseline is a causal softmax self-attention layer with ``scaled_dot_product_attention``
(qkv and output projections, one head), which dispatches to a fused (flash / memory-efficient)
kernel where one exists. Growth factors are reported from L = 4096 to 16384 (from the two
largest lengths with ``--quick``); FFT- and chunk-based layers should grow close to 4x, full
attention close to 16x.

Focus and LaS attention (``lds_toolkit/neural/layers/focus.py``, ``las.py``) run with their defaults
(LaS also as LaS-chunk, chunk 128) and are reported as "not available" where those modules are
missing.

``--scores`` times only the attention of LaS (the las-ablation shape: 8 heads of width 8,
128-token chunks, log-spaced decays up to 1) by each route, forward+backward and forward only:
the route the layer takes since issue 34 (decay and bias in float32 scores: explicit scores on
CPU and eager CUDA, ``flex_attention`` compiled on CUDA), the pre-issue-34 construction (decay
folded into rescaled queries and keys, fused SDPA; wrong in bf16 on an H200) and plain causal
SDPA without any decay (a floor). flex_attention has no CPU backward, so on CPU it is timed
forward only, eagerly.

STU needs the spectral filters of H_L (``lds_toolkit.learning.filters``). Where that module is
missing the benchmark uses random orthonormal stand-in filters of the same shape (timing and
memory do not depend on the filter values) and says so.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
from _harness import reset_peak_rss, status_mb  # noqa: E402

# name -> (description, constructor source); each constructor is called as f(d_model, L)
LAYERS = {
    "s4": "S4 (S4D, N=64, bilinear)",
    "s4-dplr": "S4 (DPLR HiPPO-LegS, N=64, bilinear)",
    "s4plus": "S4+ (SMR tau=4)",
    "s4plusplus": "S4++ (causal, 1 head)",
    "stu-tensordot": "STU tensordot (k=24, ±)",
    "stu-exact": "STU exact (k=24, ±)",
    "focus": "Focus",
    "las": "LaS attention (full)",
    "las-chunk": "LaS-chunk (chunk 128)",
    "sdpa": "SDPA causal attention (baseline)",
    # LaS's head layout (8 heads of d/8): the like-for-like fused baseline for full LaS
    "sdpa-h8": "SDPA causal attention, 8 heads",
    # the long-sequence paths with activation recomputation (lds_toolkit.neural.training.recompute)
    "s4-dplr-rc": "S4 (DPLR) + recomputation",
    "stu-exact-rc": "STU exact + recomputation",
    "focus-rc": "Focus + recomputation",
}


def _stu_filters(L: int, k: int):
    import numpy as np

    try:
        from lds_toolkit.neural.layers.stu import shared_filters

        return shared_filters(L, k, "H"), ""
    except ImportError:
        rng = np.random.default_rng(0)
        phi = np.linalg.qr(rng.standard_normal((L, k)))[0]
        sigma = np.sort(rng.random(k))[::-1].copy()
        return (sigma, phi), "stand-in (lds_toolkit.learning.filters not available)"


def build(name: str, d_model: int, L: int):
    """Return (layer, note) or raise ImportError when the layer is not available."""
    from lds_toolkit import neural

    if name.endswith("-rc"):
        from lds_toolkit.neural.training.recompute import set_recompute

        layer, note = build(name[:-3], d_model, L)
        set_recompute(layer)
        return layer, note

    if name == "s4":
        return neural.S4(d_model, seed=0), ""
    if name == "s4-dplr":
        return neural.S4(d_model, mode="dplr", seed=0), ""
    if name == "s4plus":
        return neural.S4Plus(d_model, seed=0), ""
    if name == "s4plusplus":
        return neural.S4PlusPlus(d_model, seed=0), ""
    if name.startswith("stu"):
        filters, note = _stu_filters(L, 24)
        form = "exact" if name == "stu-exact" else "tensordot"
        return neural.STU(d_model, L, 24, form=form, filters=filters, seed=0), note
    if name == "focus":
        return neural.Focus(d_model), ""
    if name == "las":
        return neural.LaSAttention(d_model), ""
    if name == "las-chunk":
        return neural.LaSAttention(d_model, chunk_size=128), ""
    if name == "sdpa":
        return neural.SelfAttention(d_model, n_heads=1, causal=True, seed=0), ""
    if name == "sdpa-h8":
        return neural.SelfAttention(d_model, n_heads=8, causal=True, seed=0), ""
    raise ValueError(f"unknown layer {name!r}")


def worker(args) -> dict:
    """Measure one (layer, L) point in this process and return a result dict."""
    import torch

    torch.set_num_threads(args.threads)
    device = torch.device(args.device)
    try:
        layer, note = build(args.layer, args.d_model, args.length)
    except (ImportError, AttributeError) as exc:
        return {"status": "not available", "note": str(exc)}
    layer = layer.to(device)
    g = torch.Generator().manual_seed(0)
    x = torch.randn(args.batch, args.length, args.d_model, generator=g).to(device)
    x.requires_grad_(True)

    def sync():
        if device.type == "cuda":
            torch.cuda.synchronize()

    def one_pass() -> float:
        x.grad = None
        layer.zero_grad(set_to_none=True)
        sync()
        t0 = time.perf_counter()
        layer(x).square().mean().backward()
        sync()
        return time.perf_counter() - t0

    rss_before_warmup = status_mb("VmRSS") if device.type == "cpu" else 0.0
    first = one_pass()  # warm-up (timed only when a pass is slow, see below)
    counted = {}
    if args.fractions:  # one more pass, counted: FLOPs (with FFTs) and eager bytes moved
        from _flops import OpCounter, flop_counter

        flops, ops = flop_counter(), OpCounter()
        with flops, ops:
            one_pass()
        counted = {"flops": float(flops.get_total_flops()), "bytes": float(ops.bytes)}
    gc.collect()
    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats(device)
        base = torch.cuda.memory_allocated(device)
    else:
        base = status_mb("VmRSS")
        if not reset_peak_rss():
            base = rss_before_warmup
            note = (note + "; " if note else "") + "peak RSS since before the warm-up"
    times = [first] if first >= 5.0 else []  # a slow first pass counts as a measurement
    measured = 0  # passes since the peak was reset: the memory needs one
    while (len(times) < args.min_repeats or measured == 0
           or (sum(times) < args.min_time and len(times) < 10)):
        times.append(one_pass())
        measured += 1
        if times[-1] >= 5.0:
            break
    if device.type == "cuda":
        peak = (torch.cuda.max_memory_allocated(device) - base) / 2**20
    else:
        peak = status_mb("VmHWM") - base
    return {
        "status": "ok",
        "time_s": statistics.median(times),
        "repeats": len(times),
        "peak_mb": peak,
        "note": note,
        **counted,
    }


def run_point(args, layer: str, L: int) -> dict:
    cmd = [
        sys.executable, __file__, "--worker", "--layer", layer, "--length", str(L),
        "--batch", str(args.batch), "--d-model", str(args.d_model), "--device", args.device,
        "--threads", str(args.threads), "--min-repeats", str(args.min_repeats),
        "--min-time", str(args.min_time),
    ]
    if args.fractions:
        cmd.append("--fractions")
    env = dict(os.environ, PYTHONPATH=f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}")
    # freed buffers >= 64 KiB are unmapped at once, so the resident set tracks live memory
    env.setdefault("MALLOC_MMAP_THRESHOLD_", "65536")
    try:
        proc = subprocess.run(
            cmd, capture_output=True, text=True, timeout=args.timeout, env=env, check=False
        )
    except subprocess.TimeoutExpired:
        return {"status": f"timeout (> {args.timeout} s)"}
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["?"])[-1]
        if "OutOfMemory" in proc.stderr or proc.returncode in (-9, 137):
            return {"status": "out of memory", "note": last}
        return {"status": "error", "note": last}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _median_time(fn, sync, min_repeats=5, min_time=1.0) -> float:
    fn()  # warm-up (first-call set-up, compilation)
    times: list[float] = []
    while len(times) < min_repeats or (sum(times) < min_time and len(times) < 50):
        sync()
        t0 = time.perf_counter()
        fn()
        sync()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def scores_table(args) -> None:
    """``--scores``: the LaS attention core by route (module docstring)."""
    import warnings

    import torch
    import torch.nn.functional as F

    from lds_toolkit.neural.layers._las_core import las_alpha_init, las_attention
    from lds_toolkit.neural.layers._las_reference import las_attention_rescaled

    torch.set_num_threads(args.threads)
    dev = torch.device(args.device)
    n_chunks, heads, m, dh = args.batch * max(1, args.chunk_length // 128), 8, 128, 8
    g = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(n_chunks, heads, m, dh, generator=g).to(dev) for _ in range(3))
    alpha = las_alpha_init(heads, 1e-3, "log").to(dev)

    def sync():
        if dev.type == "cuda":
            torch.cuda.synchronize()

    scores = las_attention
    if dev.type == "cuda":  # the layer's route under torch.compile: flex_attention
        scores = torch.compile(las_attention, fullgraph=True)
    routes = {
        "scores (this route)": lambda q, k, v: scores(q, k, v, alpha, 1),
        "rescaled SDPA (pre-34)": lambda q, k, v: las_attention_rescaled(q, k, v, alpha, 1),
        "causal SDPA, no decay": lambda q, k, v: F.scaled_dot_product_attention(
            q, k, v, is_causal=True),
    }
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"LaS attention core on {args.device}, {args.threads} threads: {n_chunks} chunks x "
          f"{heads} heads x {m} x {dh} (batch {args.batch} x L {args.chunk_length}, "
          f"chunk 128), float32\nload average at start: {load} on {os.cpu_count()} cores\n")
    results = {}
    for label, fn in routes.items():
        qkv = [t.clone().requires_grad_(True) for t in (q, k, v)]
        fwd_bwd = _median_time(lambda fn=fn, qkv=qkv: fn(*qkv).square().sum().backward(), sync)
        with torch.no_grad():
            fwd = _median_time(lambda fn=fn: fn(q, k, v), sync)
        results[label] = (fwd_bwd, fwd)
    if dev.type == "cpu":  # eager flex_attention, forward only
        with torch.no_grad(), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fwd = _median_time(lambda: las_attention(q, k, v, alpha, 1, backend="flex"), sync)
        results["flex_attention eager (fwd only)"] = (None, fwd)
    base = results["rescaled SDPA (pre-34)"]
    print(f"{'route':34s} {'fwd+bwd':>10s} {'ratio':>6s} {'fwd':>10s} {'ratio':>6s}")
    for label, (fb, f) in results.items():
        fb_txt = (f"{'-':>10s} {'-':>6s}" if fb is None
                  else f"{fb * 1e3:8.2f}ms {fb / base[0]:6.2f}")
        print(f"{label:34s} {fb_txt} {f * 1e3:8.2f}ms {f / base[1]:6.2f}")
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"\nratios against the rescaled SDPA route in the same run; load average at end: {load}")


def _fmt(v, unit=""):
    return "-" if v is None else f"{v:.3g}{unit}"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="L in {256, 1024} instead of the full set")
    p.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    p.add_argument("--lengths", type=int, nargs="*", help="override the sequence lengths")
    p.add_argument("--layers", nargs="*", choices=list(LAYERS), help="subset of layers")
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--d-model", type=int, default=64)
    p.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    p.add_argument("--min-repeats", type=int, default=3)
    p.add_argument("--min-time", type=float, default=2.0, help="keep repeating up to this (s)")
    p.add_argument("--timeout", type=float, default=1800, help="per point, seconds")
    p.add_argument("--fractions", action="store_true",
                   help="count FLOPs and bytes per pass and measure the device's bf16 GEMM "
                        "peak and copy bandwidth: the fraction of each per point")
    p.add_argument("--json", type=Path, help="also write the results here")
    p.add_argument("--markdown", type=Path, help="also write the table as markdown here")
    p.add_argument("--peaks-only", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--scores", action="store_true",
                   help="time the LaS attention core by route instead (see the docstring)")
    p.add_argument("--chunk-length", type=int, default=1024,
                   help="--scores: sequence length cut into 128-token chunks")
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--layer", help=argparse.SUPPRESS)
    p.add_argument("--length", type=int, help=argparse.SUPPRESS)
    args = p.parse_args(argv)

    if args.worker:
        print(json.dumps(worker(args)))
        return 0
    if args.peaks_only:
        print(json.dumps(_measure_peaks(args)))
        return 0
    if args.scores:
        scores_table(args)
        return 0
    if args.device == "cuda":
        import torch

        if not torch.cuda.is_available():
            print("--device cuda: no CUDA device available", file=sys.stderr)
            return 2
    lengths = args.lengths or ([256, 1024] if args.quick else [1024, 4096, 16384])
    layers = args.layers or list(LAYERS)
    if "sdpa" not in layers:
        layers.append("sdpa")
    if args.quick:
        args.min_repeats, args.min_time = 2, 0.5
    mem_what = (
        "resident-set growth during fwd+bwd after a warm-up (VmHWM - VmRSS, see --help)"
        if args.device == "cpu"
        else "torch.cuda.max_memory_allocated growth during fwd+bwd"
    )
    load = ", ".join(f"{v:.1f}" for v in os.getloadavg())
    load_start = load
    print(
        f"device={args.device} threads={args.threads} batch={args.batch} "
        f"d_model={args.d_model} lengths={lengths}\npeak memory = {mem_what}\n"
        f"load average at start (1, 5, 15 min): {load} on {os.cpu_count()} cores; timings are "
        "only comparable within one run\n"
    )
    # every point is also written as it is measured (a run cut short keeps them)
    points = args.json.with_suffix(".points.jsonl") if args.json else None
    if points is not None:
        points.write_text("")
    peaks = _peaks(args) if args.fractions else {}
    if points is not None:
        with open(points, "a") as fh:
            fh.write(json.dumps({"peaks": peaks, "device": args.device}) + "\n")
    if args.fractions:
        print(f"measured peaks: bf16 GEMM {_fmt(peaks.get('bf16_tflops'))} TFLOP/s, copy "
              f"{_fmt(peaks.get('copy_gbs'))} GB/s (bytes read + written)\n", flush=True)
    results: dict[str, dict[int, dict]] = {}
    for name in layers:
        results[name] = {}
        for L in lengths:
            r = run_point(args, name, L)
            results[name][L] = r
            if points is not None:
                with open(points, "a") as fh:
                    fh.write(json.dumps({"layer": name, "L": L, **r}) + "\n")
            msg = (
                f"{_fmt(r['time_s'] * 1e3, ' ms')}, {_fmt(r['peak_mb'], ' MB')}"
                if r["status"] == "ok"
                else r["status"]
            )
            print(f"  measured {name:15s} L={L:6d}: {msg}", flush=True)
            if r["status"] == "not available":
                print(f"    {name} not available ({r.get('note', '')})")
                break
    print()
    head = f"{'layer':34s} {'L':>6s} {'fwd+bwd':>11s} {'peak':>10s} {'t/sdpa':>7s} {'m/sdpa':>7s}"
    print(head)
    print("-" * len(head))
    notes = set()
    for name, L, r, tr, mr in against_sdpa(results, layers, lengths):
        if r["status"] != "ok":
            print(f"{LAYERS[name]:34s} {L:6d} {r['status']}")
            continue
        if r.get("note"):
            notes.add(f"{name}: {r['note']}")
        print(
            f"{LAYERS[name]:34s} {L:6d} {r['time_s'] * 1e3:9.1f}ms {r['peak_mb']:8.1f}MB "
            f"{_fmt(tr):>7s} {_fmt(mr):>7s}"
        )
    lo, hi = ((4096, 16384) if {4096, 16384} <= set(lengths) else
              tuple(sorted(lengths)[-2:]) if len(lengths) > 1 else (None, None))
    if lo is not None:
        print(f"\ngrowth factor from L={lo} to L={hi} (x{hi // lo} length):")
    for name in layers if lo is not None else []:
        a, b = results[name].get(lo), results[name].get(hi)
        if a and b and a["status"] == b["status"] == "ok":
            mg = b["peak_mb"] / a["peak_mb"] if a["peak_mb"] > 0 else None
            tg = b["time_s"] / a["time_s"]
            print(f"  {LAYERS[name]:34s} time x{tg:.2f}   memory x{_fmt(mg)}")
    for n in sorted(notes):
        print(f"note: {n}")
    load = ", ".join(f"{v:.1f}" for v in os.getloadavg())
    print(f"load average at end (1, 5, 15 min): {load}")
    table_md = markdown(results, layers, lengths, peaks, args.device)
    if args.fractions:
        print("\n" + table_md)
    if args.json:
        args.json.write_text(json.dumps({"args": vars(args) | {"json": str(args.json),
                                                                "markdown": str(args.markdown)},
                                         "peaks": peaks, "results": results,
                                         "load_start": load_start, "load_end": load,
                                         "torch": _torch_version(),
                                         "date": time.strftime("%Y-%m-%d")},
                                        indent=1, default=str))
    if args.markdown:
        args.markdown.write_text(table_md)
    return 0


def _torch_version() -> str:
    import torch

    return torch.__version__


def _measure_peaks(args) -> dict:
    import torch
    from _flops import bf16_gemm_peak, copy_bandwidth

    torch.set_num_threads(args.threads)
    small = args.device == "cpu"
    return {"bf16_tflops": bf16_gemm_peak(args.device, (256, 512) if small else None),
            "copy_gbs": copy_bandwidth(args.device, 2**22 if small else None)}


def _peaks(args) -> dict:
    """The device's bf16 GEMM peak (TFLOP/s) and copy bandwidth (GB/s), measured in this
    run: on a CPU here, on CUDA in a subprocess (its memory released with it; empty when
    that fails)."""
    if args.device == "cpu":
        return _measure_peaks(args)
    cmd = [sys.executable, __file__, "--peaks-only", "--device", args.device,
           "--threads", str(args.threads)]
    env = dict(os.environ, PYTHONPATH=f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}")
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout,
                              env=env, check=False)
    except subprocess.TimeoutExpired:
        return {}
    if proc.returncode != 0:
        return {}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def against_sdpa(results, layers, lengths):
    """``(name, L, result, time / SDPA's, memory / SDPA's)`` for every measured point (the
    ratios None where SDPA has no result at that length)."""
    base = results.get("sdpa", {})
    for name in layers:
        for L in lengths:
            r = results[name].get(L)
            if r is None:
                continue
            b = base.get(L, {})
            ok = r["status"] == "ok" and b.get("status") == "ok"
            tr = r["time_s"] / b["time_s"] if ok else None
            mr = r["peak_mb"] / b["peak_mb"] if ok and b["peak_mb"] > 0 else None
            yield name, L, r, tr, mr


def markdown(results, layers, lengths, peaks, device) -> str:
    """The table as markdown: time and memory against SDPA; with counted FLOPs and bytes,
    TFLOP/s and GB/s and their fractions of the measured peaks."""
    peak, bw = peaks.get("bf16_tflops"), peaks.get("copy_gbs")
    mem = "torch.cuda.max_memory_allocated growth" if device == "cuda" else "RSS growth"
    lines = [f"Peak memory: {mem} during one forward+backward. Fractions: of the measured "
             f"bf16 GEMM peak ({_fmt(peak)} TFLOP/s) and copy bandwidth ({_fmt(bw)} GB/s; "
             "bytes of eager execution, every op reading its inputs and writing its outputs).",
             "", "| layer | L | fwd+bwd ms | peak MB | time / SDPA | memory / SDPA | TFLOP/s "
             "| of bf16 peak | GB/s | of bandwidth |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for name, L, r, tr, mr in against_sdpa(results, layers, lengths):
        if r["status"] != "ok":
            lines.append(f"| {LAYERS[name]} | {L} | {r['status']} | | | | | | | |")
            continue
        tf = r["flops"] / r["time_s"] / 1e12 if "flops" in r else None
        gb = r["bytes"] / r["time_s"] / 1e9 if "bytes" in r else None
        ftf = f"{100 * tf / peak:.2f} %" if tf is not None and peak else "-"
        fgb = f"{100 * gb / bw:.1f} %" if gb is not None and bw else "-"
        lines.append(f"| {LAYERS[name]} | {L} | {r['time_s'] * 1e3:.1f} | "
                     f"{r['peak_mb']:.0f} | {_fmt(tr)} | {_fmt(mr)} | {_fmt(tf)} | {ftf} | "
                     f"{_fmt(gb)} | {fgb} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
