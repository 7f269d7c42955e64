"""One benchmark table: ours against each anchor's algorithm, the training roofline, and how
cost grows. ``make bench`` runs ``python benchmarks/bench_table.py --write-docs``.

Sections (each also runs on its own, see the scripts):

* simulation (``simulate.py``): python-control's ``forced_response``, ``scipy.signal.dlsim`` and
  a per-step BLAS loop against ``simulate`` / ``simulate_continuous``;
* spectral filters (``learning.py``): dense ``eigh`` (what every public implementation runs)
  against the fast path, and the fast path alone up to T = 2^20, cold;
* layers (``anchors.py``): s4d.py's Vandermonde kernel and flash-stu's ``convolve`` against our
  S4D and STU;
* roofline (``roofline.py``): float32 GEMM peak and every layer's fraction of it at the
  experiments' shapes, with the reason each stays below 25 % (``roofline.REASONS``);
  ``--before-tree DIR`` also runs it on another checkout (e.g. ``git worktree add
  /tmp/before <commit>``) for a before/after column;
* growth (``growth.py``): log-log time against T (and n) per path, fitted exponents.

``--write-docs`` writes ``docs/benchmarks.md``, the figures ``docs/img/benchmarks/*.png`` and
the raw numbers ``docs/img/benchmarks/bench.json``, with the machine described (CPU model,
cores, memory, library versions, BLAS) and the load average before and after. Times depend on
what else runs: use an idle machine for the committed table (the script prints the load).
``--quick`` uses small sizes (a few minutes) and never writes the docs unless asked.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))

DOC = ROOT / "docs" / "benchmarks.md"
IMG = ROOT / "docs" / "img" / "benchmarks"


def machine() -> dict:
    """What the numbers were measured on."""
    import numpy as np
    import scipy

    cpu = platform.processor() or "?"
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(line.split(":", 1)[1].strip() for line in f
                       if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    info = {"cpu": cpu, "cores": os.cpu_count(), "os": platform.platform(),
            "python": platform.python_version(), "numpy": np.__version__,
            "scipy": scipy.__version__}
    try:
        import psutil

        info["memory_gb"] = round(psutil.virtual_memory().total / 2**30, 1)
    except ImportError:
        pass
    for name in ("torch", "control", "numba"):
        try:
            info[name] = __import__(name).__version__
        except ImportError:
            info[name] = "not installed"
    try:
        cfg = np.show_config(mode="dicts")
        blas = cfg["Build Dependencies"]["blas"]
        info["blas"] = f"{blas.get('name', '?')} {blas.get('version', '')}".strip()
    except Exception:  # noqa: BLE001 - numpy's config format varies between versions
        info["blas"] = "?"
    return info


def load() -> str:
    return ", ".join(f"{v:.2f}" for v in os.getloadavg())


def roofline_other_tree(tree: Path, quick: bool) -> dict:
    """Run roofline.py with ``tree`` first on the path (the previous implementation)."""
    out = ROOT / ".bench_before.json"
    env = dict(os.environ, PYTHONPATH=f"{tree}{os.pathsep}{os.environ.get('PYTHONPATH', '')}")
    cmd = [sys.executable, str(Path(__file__).with_name("roofline.py")), "--json", str(out)]
    subprocess.run(cmd + (["--quick"] if quick else []), env=env, check=True,
                   stdout=subprocess.DEVNULL)
    res = json.loads(out.read_text())
    out.unlink()
    return res


def collect(quick: bool, before_tree: Path | None) -> dict:
    import anchors
    import growth
    import learning
    import roofline
    import simulate

    res = {"machine": machine(), "load_start": load(),
           "date": datetime.date.today().isoformat(), "quick": quick}
    print(f"load average at start: {res['load_start']}", flush=True)
    res["anchors"] = simulate.run(quick)
    print("  simulation done", flush=True)
    res["anchors"] += learning.filter_rows(quick)
    print("  filters done", flush=True)
    res["anchors"] += anchors.run(quick)
    print("  layer anchors done", flush=True)
    res["roofline"] = roofline.run(quick, threads=1)
    if before_tree is not None:
        res["roofline_before"] = roofline_other_tree(before_tree, quick)
    print("  roofline done", flush=True)
    res["growth"] = growth.run(quick)
    print("  growth done", flush=True)
    res["load_end"] = load()
    print(f"load average at end: {res['load_end']}", flush=True)
    return res


def _fmt_s(s: float) -> str:
    return f"{s * 1e3:.3g} ms" if s < 1 else f"{s:.3g} s"


def markdown(res: dict, figures: list[str]) -> str:
    from roofline import REASONS

    m = res["machine"]
    lines = [
        "# Benchmarks", "",
        "<!-- written by `make bench` (benchmarks/bench_table.py --write-docs); "
        "do not edit by hand -->", "",
        "Ours against each anchor's algorithm, the training roofline and how cost grows, "
        "measured in one run of `make bench`"
        + (" (`--quick` sizes)" if res["quick"] else "") + ".", "",
        "**Machine.** "
        f"{m['cpu']}, {m['cores']} cores"
        + (f", {m['memory_gb']} GiB" if "memory_gb" in m else "")
        + f"; {m['os']}; Python {m['python']}, numpy {m['numpy']} ({m['blas']}), scipy "
          f"{m['scipy']}, torch {m['torch']}, python-control {m['control']}, numba "
          f"{m['numba']}. Load average (1, 5, 15 min) {res['load_start']} at the start, "
          f"{res['load_end']} at the end; {res['date']}. Times are the best of several calls "
          "(layers: the median); peak memory is the extra resident memory of one call "
          "(`benchmarks/_harness.py`).", "",
        "## Ours against the anchors", "",
        "| section | workload | method | time | peak MB | speed-up | note |",
        "| --- | --- | --- | ---: | ---: | ---: | --- |",
    ]
    for r in res["anchors"]:
        ratio = "—" if r["ratio"] != r["ratio"] else f"{r['ratio']:.3g}×"
        lines.append(f"| {r['section']} | {r['workload']} | {r['method']} | "
                     f"{_fmt_s(r['seconds'])} | {r['peak_mb']:.0f} | {ratio} | {r['note']} |")
    rf = res["roofline"]
    before = {r["layer"]: r for r in res.get("roofline_before", {}).get("rows", [])}
    lines += [
        "", "## Training roofline", "",
        f"Attainable peak: float32 GEMM on {rf['threads']} thread (what every neural "
        f"experiment trains with): **{rf['peak_gflops']:.1f} GFLOP/s**. FLOPs per pass are "
        "counted from the shapes of the dispatched operations (torch's `FlopCounterMode` plus "
        "FFTs at 2.5 N log2 N), forward and backward; shapes are the medium experiments' "
        "(`benchmarks/roofline.py`).", "",
        "| layer (experiment) | input | GFLOP/pass | fwd+bwd | of peak | aten ops |"
        + (" before |" if before else "") + " why below 25 %, what was done |",
        "| --- | --- | ---: | ---: | ---: | ---: |" + (" ---: |" if before else "") + " --- |",
    ]
    for r in rf["rows"]:
        b = before.get(r["layer"])
        bcol = (f" {_fmt_s(b['seconds'])} |" if b else " — |") if before else ""
        lines.append(f"| {r['layer']} | {'×'.join(map(str, r['shape']))} | {r['gflop']:.3f} | "
                     f"{_fmt_s(r['seconds'])} | {100 * r['fraction']:.1f} % | {r['ops']} |"
                     f"{bcol} {REASONS.get(r['layer'], '')} |")
    lines += ["", "## How cost grows", "",
              "Wall time against the size on log-log axes; the exponent is the slope fitted "
              "over the upper half of each grid, beside the theoretical one "
              "(`benchmarks/growth.py` explains each).", "",
              "| group | path | fitted exponent | theory |", "| --- | --- | ---: | ---: |"]
    for s in res["growth"]:
        lines.append(f"| {s['group']} | {s['series']} | {s['fitted']:.2f} | {s['theory']:.2f} |")
    lines.append("")
    for f in figures:
        lines += [f"![{f}](img/benchmarks/{f})", ""]
    return "\n".join(lines)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="small sizes (a few minutes)")
    p.add_argument("--write-docs", action="store_true",
                   help="write docs/benchmarks.md and docs/img/benchmarks/")
    p.add_argument("--before-tree", type=Path,
                   help="a checkout of the previous implementation for the roofline's "
                        "before column")
    args = p.parse_args(argv)
    res = collect(args.quick, args.before_tree)
    figures = []
    if args.write_docs:
        import growth

        IMG.mkdir(parents=True, exist_ok=True)
        figures = [f.name for f in growth.figures(res["growth"], IMG)]
        (IMG / "bench.json").write_text(json.dumps(res, indent=1))
    text = markdown(res, figures)
    if args.write_docs:
        DOC.write_text(text)
        print(f"wrote {DOC.relative_to(ROOT)} and {IMG.relative_to(ROOT)}/")
    else:
        print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
