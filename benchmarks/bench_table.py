"""One benchmark table: ours against each anchor's algorithm, the training roofline, and how
cost grows. ``make bench`` runs ``python benchmarks/bench_table.py --write-docs``.

Sections (each also runs on its own, see the scripts):

* simulation (``simulate.py``): python-control's ``forced_response``, ``scipy.signal.dlsim`` and
  a per-step BLAS loop against ``simulate`` / ``simulate_continuous``;
* spectral filters (``learning.py``): dense ``eigh`` (what every public implementation runs)
  against the fast path, and the fast path alone up to T = 2^20, cold;
* layers (``anchors.py``): s4d.py's Vandermonde kernel and flash-stu's ``convolve`` against our
  S4D and STU;
* roofline (``roofline.py``): float32 GEMM peak and stream-copy bandwidth, and every
  layer's fraction of the roofline at the experiments' shapes, with the reason of each that
  stays below 25 % (``roofline.REASONS``); ``--before-tree DIR`` also times the layers issue 28
  changed (``CHANGED_LAYERS``) on another checkout's package (e.g. ``mkdir /tmp/before &&
  git archive <commit> lds_toolkit | tar -x -C /tmp/before``) for a before/after column;
* growth (``growth.py``): log-log time against T (and n) per path, fitted exponents;
* CUDA (``cuda_section.py``): what ``gpu_check.sh`` measures, its newest committed run
  (``docs/results/gpu-check/``) and issue 34's measurements before it (measured nothing here).

``--write-docs`` writes ``docs/benchmarks.md``, the figures ``docs/img/benchmarks/*.png`` and
the raw numbers ``docs/img/benchmarks/bench.json``, with the machine described (CPU model,
cores, memory, library versions, BLAS) and the load average before and after. Times depend on
what else runs: use an idle machine for the committed table (the script prints the load).
``--quick`` uses small sizes (a few minutes) and never writes the docs unless asked.

Measuring and rendering are separate: :func:`render_page` writes the page from a
``bench.json`` and the committed files it reads (the neural runs' ``run.json``, the CPU
evidence and GPU runs of the CUDA section), measuring nothing. The page below its title is
one generated region (:data:`BEGIN` ... :data:`END`); ``tests/test_docs_benchmarks.py``
re-renders it from the committed inputs and fails when the page differs.
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

import cuda_section  # noqa: E402

DOC = ROOT / "docs" / "benchmarks.md"
IMG = ROOT / "docs" / "img" / "benchmarks"
#: The markers of the page's generated region (``tests/test_docs_numbers.py`` skips it; the
#: test that re-renders it is ``tests/test_docs_benchmarks.py``).
BEGIN = ("<!-- bench-table:begin (written by `make bench`: benchmarks/bench_table.py "
         "--write-docs; do not edit by hand) -->")
END = "<!-- bench-table:end -->"


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


#: Layers whose code issue 28 changed (the DPLR kernel); the others run the same code before
#: and after, so only these are measured on the previous tree.
CHANGED_LAYERS = ["dplr"]


def roofline_tree(tree: Path, quick: bool, only: list[str]) -> dict:
    """Run roofline.py in a fresh process with ``tree`` first on the path."""
    out = ROOT / ".bench_roofline.json"
    env = dict(os.environ, PYTHONPATH=f"{tree}{os.pathsep}{os.environ.get('PYTHONPATH', '')}")
    cmd = [sys.executable, str(Path(__file__).with_name("roofline.py")), "--json", str(out),
           "--only", *only]
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
        # the changed layers on both trees, each in fresh processes, alternating (three
        # rounds, the fastest of each layer's medians kept: load drifts during a run)
        for _ in range(3):
            for key, tree in (("roofline_before", before_tree), ("roofline_after", ROOT)):
                got = roofline_tree(tree, quick, CHANGED_LAYERS)
                if key in res:
                    for mine, new in zip(res[key]["rows"], got["rows"]):
                        if new["seconds"] < mine["seconds"]:
                            mine.update(new)
                else:
                    res[key] = got
    print("  roofline done", flush=True)
    res["growth"] = growth.run(quick)
    print("  growth done", flush=True)
    res["load_end"] = load()
    print(f"load average at end: {res['load_end']}", flush=True)
    return res


def _fmt_s(s: float) -> str:
    return f"{s * 1e3:.3g} ms" if abs(s) < 1 else f"{s:.3g} s"


def nss_s4_passes(scale: str) -> int:
    """Training passes of the nss-s4 experiment per DPLR model at ``scale`` (steps x seeds,
    from its config; medium stops early on a plateau, so its figure is an upper bound)."""
    from lds_toolkit.experiments import get_experiment
    from lds_toolkit.experiments.config import build_config

    cfg = build_config(get_experiment("nss-s4"), scale=scale)
    return int(cfg["steps"]) * int(cfg["seeds"])


#: The neural experiments, whose wall time the layers' speed decides.
NEURAL = ("induction-heads", "cloze", "nss-s4", "las-ablation", "lds-streams", "assoc-recall")


def committed_wall(scale: str, root: Path = ROOT / "docs" / "results") -> dict:
    """Sweep seconds, date, workers and load average (start and end of the sweep, where the
    run recorded it) of the committed neural runs at ``scale``, read from their run.json
    (written by the runner, not by this script)."""
    out = {}
    for name in NEURAL:
        f = root / scale / name / "run.json"
        if f.exists():
            run = json.loads(f.read_text())
            out[name] = (run["sweep_seconds"], run["date"][:10], run["jobs"],
                         run.get("load_average"))
    return out


def neural_wall(before: dict, after: dict) -> str:
    """What the layer changes mean for the neural experiments' wall time, with the committed
    runs' own times (docs/results/{quick,medium}/*/run.json)."""
    parts = []
    for scale in ("quick", "medium"):
        runs = committed_wall(scale)
        if runs:
            total = sum(s for s, _, _, _ in runs.values())
            each = ", ".join(f"{n} {s:.0f} s" for n, (s, _, _, _) in runs.items())
            dates = sorted({d for _, d, _, _ in runs.values()})
            loads = [x for *_, la in runs.values() if la for x in la]
            load = (f", load average {min(loads):g}–{max(loads):g}"
                    if len(loads) == 2 * len(runs) else "")
            parts.append(f"{scale} {total / 60:.1f} min of sweeps ({each}; "
                         f"{' to '.join(dict.fromkeys([dates[0], dates[-1]]))}, "
                         f"--jobs {max(j for _, _, j, _ in runs.values())}{load})")
    text = ("**Neural experiments' wall time.** The committed runs' sweeps (their run.json, "
            "not this script; the quick set comes from one session, with the load average "
            "its runs recorded, "
            "the medium runs from separate sessions, several under load, so their sum is not "
            "an idle wall time): "
            + "; ".join(parts) + ". Of the layers above only the DPLR kernel (S4 / S4+ with "
            "`mode=\"dplr\"`, the nss-s4 experiment's `s4` and `s4+` models) changed in issue "
            "28; the others run the same code, so the training share of those times changes "
            "only by nss-s4's")
    both = [k for k in after if k in before]
    if both:
        per_step = sum(before[k]["seconds"] - after[k]["seconds"] for k in both)
        text += (f": {per_step * 1e3:.3g} ms per training step of the {len(both)} models "
                 f"together, i.e. {per_step * nss_s4_passes('quick'):.3g} s of CPU over the "
                 f"quick run and at most {per_step * nss_s4_passes('medium'):.3g} s over the "
                 "medium one (the plateau stops earlier), spread over the run's workers")
    return text + "."


def acceptance(res: dict) -> list[str]:
    """Issue 28's numeric acceptance lines, read off the rows of this run."""
    rows = res["anchors"]
    lines = []
    for r in rows:
        w, m = r["workload"], r["method"]
        if r["section"] == "simulation" and "1 stream" in w and m.startswith("simulate, outputs"):
            lines.append(f"general A ({w}), {m}: {r['ratio']:.3g}x control.forced_response "
                         f"(target >= 10x, rel. error <= 1e-10); {r['note']}")
        elif "batch 64" in w and m.startswith("simulate"):
            lines.append(f"{w}, {m}: {r['ratio']:.3g}x the per-step BLAS loop (target >= 10x); "
                         f"{r['note']}")
        elif r["section"] == "filters" and "2^20" in w:
            verdict = "under" if r["seconds"] < 10 else "NOT under"
            lines.append(f"{w}: {r['seconds']:.3g} s wall, {verdict} the 10 s target")
    return lines


def markdown(res: dict, figures: list[str]) -> str:
    from roofline import REASONS

    m = res["machine"]
    lines = [
        "# Benchmarks", "",
        BEGIN, "",
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
        "## Issue 28's targets", "",
        *[f"- {line}" for line in acceptance(res)], "",
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
    after = {r["layer"]: r for r in res.get("roofline_after", {}).get("rows", [])}
    lines += [
        "", "## Training roofline", "",
        f"Measured in this run on {rf['threads']} thread (what every neural experiment trains "
        f"with): compute peak (float32 GEMM) **{rf['peak_gflops']:.1f} GFLOP/s**, stream-copy "
        f"bandwidth **{rf['bandwidth_gbs']:.1f} GB/s**. Per pass (forward and backward) the "
        "FLOPs are counted from the shapes of the dispatched operations (torch's "
        "`FlopCounterMode` plus FFTs at 2.5 N log2 N) and the bytes as every non-view aten "
        "operation reading its arguments and writing its results once; the roofline's time is "
        "max(FLOPs / peak, bytes / bandwidth) and *of roofline* is that time over the measured "
        "one. Shapes are the medium experiments' (`benchmarks/roofline.py`)."
        + (" *Before* / *after*: the layers issue 28 changed, on the code before it "
           "(`--before-tree`) and on this tree, each in fresh processes alternating over "
           "three rounds in this run (the fastest median kept); *saved* is their difference. "
           "The other layers run the same code before and after." if before else ""), "",
        "| layer (experiment) | input | GFLOP | MB moved | fwd+bwd | roofline | of roofline "
        "| of GEMM peak | aten ops |" + (" before / after | saved/pass |" if before else "")
        + " why below 25 %, what was done |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
        + (" ---: | ---: |" if before else "") + " --- |",
    ]
    for r in rf["rows"]:
        b = before.get(r["layer"])
        a = after.get(r["layer"])
        bcol = ((f" {_fmt_s(b['seconds'])} / {_fmt_s(a['seconds'])} | "
                 f"{_fmt_s(b['seconds'] - a['seconds'])} |" if b and a
                 else " same code | — |") if before else "")
        why = REASONS.get(r["layer"], "") if r["fraction"] < 0.25 else ""
        lines.append(f"| {r['layer']} | {'×'.join(map(str, r['shape']))} | {r['gflop']:.3f} | "
                     f"{r['mb']:.0f} | {_fmt_s(r['seconds'])} | {_fmt_s(r['roof_seconds'])} "
                     f"({r['bound']}) | {100 * r['fraction']:.1f} % | "
                     f"{100 * r['gemm_fraction']:.1f} % | {r['ops']} |{bcol} {why} |")
    lines += ["", neural_wall(before, after)]
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
    lines += cuda_section.markdown()
    lines += [END, ""]
    return "\n".join(lines)


def render_page(res: dict) -> str:
    """``docs/benchmarks.md`` for the measurements ``res`` (a ``bench.json``), with the
    growth figures' names, measuring and drawing nothing."""
    import growth

    return markdown(res, growth.figure_names(res["growth"]))


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="small sizes (a few minutes)")
    p.add_argument("--write-docs", action="store_true",
                   help="write docs/benchmarks.md and docs/img/benchmarks/")
    p.add_argument("--before-tree", type=Path,
                   help="a checkout of the previous implementation for the roofline's "
                        "before column")
    p.add_argument("--from-json", type=Path,
                   help="measure nothing: render the table from a bench.json this script "
                        "wrote (e.g. after a change to the reasons' text)")
    args = p.parse_args(argv)
    if args.from_json:
        res = json.loads(args.from_json.read_text())
    else:
        res = collect(args.quick, args.before_tree)
    print("\n".join(acceptance(res)), flush=True)
    if args.write_docs:
        import growth

        IMG.mkdir(parents=True, exist_ok=True)
        if not args.from_json:
            (IMG / "bench.json").write_text(json.dumps(res, indent=1))
        growth.figures(res["growth"], IMG)
    text = render_page(res)
    if args.write_docs:
        DOC.write_text(text)
        print(f"wrote {DOC.relative_to(ROOT)} and {IMG.relative_to(ROOT)}/")
    else:
        print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
