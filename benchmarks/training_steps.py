"""Benchmark: training steps of the gpu-scale models through the toolkit's own ``train`` and
``train_group``, at fp32, tf32 and bf16, eager and compiled, against the device's measured
bf16 GEMM peak.

Rows (the gpu scale's models and batches; ``--cpu-smoke``: the same rows at tiny sizes, to
check the script on a CPU in seconds):

==============  ===============================================================
``las``         las-ablation gpu model: LaS attention 256 x 6 (8 heads, chunk 128,
                P = 5, ELD), batch-norm post-norm, batch 50 x 1280 tokens
``l-only``      the same with L-only attention (no smoothing)
``focus-1k``    assoc-recall gpu model: Focus 64 x 2, chunks of 32, L = 1024, batch 32
``focus-1k-xN`` N runs of ``focus-1k`` stacked (``train_group``; ``--stack N``)
``focus-4k``    Focus at L = 4096, batch 32
==============  ===============================================================

A point is one (row, precision, compile) combination: ``train`` (or ``train_group``) runs
``--warmup-steps`` steps (compilation and CUDA graph capture included) and then
``--steps`` timed steps; the time is taken at the loop's own readings of the step numbers
(every ``--read-every`` steps, one device-to-host transfer each, as training runs them), so
ms/step is the wall time between the reading after the warm-up and the last one, divided by
the steps in between: the loop's real cost, optimizer and gradient clipping included.
tokens/s counts every run of a stack. FLOPs per step are counted once per row (one forward
and backward in float32 eager, torch's ``FlopCounterMode`` plus FFTs, see ``_flops.py``;
times the runs of a stack); TFLOP/s and its fraction of the bf16 GEMM peak measured at the
start of the same run on the same device (``--no-peak`` skips it). tf32 is float32 on a CPU.

Each row runs in its own subprocess with a time box (``--row-timeout``); every finished
point is written at once to ``--jsonl``, so a row that runs out of time keeps its finished
points and the table marks the others "not measured". Eager points run before compiled
ones, bf16 first among those.

Run: ``python benchmarks/training_steps.py --device cuda [--json out.json] [--markdown
out.md]``; ``python benchmarks/training_steps.py --cpu-smoke``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))

ROWS = ("las", "l-only", "focus-1k", "focus-1k-xN", "focus-4k")
PRECISIONS = ("fp32", "tf32", "bf16")


def row_setup(row: str, smoke: bool, stack: int):
    """``(models, data, batch_size, runs)`` of a row: fresh models (one per run) and the
    training data."""
    import numpy as np

    from lds_toolkit.experiments.catalog import assoc_recall, las_ablation
    from lds_toolkit.neural.tasks import SequenceTask, associative_recall

    if row in ("las", "l-only"):
        cfg = las_ablation.scale_config("gpu")
        length, batch = 1280, cfg["batch_size"]
        if smoke:
            cfg.update(d_model=16, n_layers=1, chunk_size=16)
            length, batch = 64, 4
        rng = np.random.default_rng(0)
        n = 2 * batch
        mask = np.zeros((n, length), dtype=bool)
        mask[:, -1] = True
        targets = np.where(mask, rng.integers(0, 10, (n, length)), -100)
        data = SequenceTask(rng.integers(0, 16, (n, length)), targets, mask, mask,
                            vocab_size=16, n_classes=10, name=f"tokens-{length}")
        return [las_ablation.build_model(row, cfg, 0)], data, batch, 1
    cfg = assoc_recall.scale_config("gpu")
    length = 4096 if row == "focus-4k" else 1024
    batch = cfg["train"][str(length)]["batch_size"]
    if smoke:
        cfg.update(width=16, n_layers=1, focus_chunk=8)
        length, batch = (128 if row == "focus-4k" else 64), 4
    runs = stack if row == "focus-1k-xN" else 1
    data = associative_recall(4 * batch, length, vocab_size=cfg["vocab_size"], rng=0)
    return ([assoc_recall.build_model("focus", cfg, length, seed) for seed in range(runs)],
            data, batch, runs)


def count_flops(row: str, smoke: bool, device) -> float:
    """FLOPs of one training step of one run: forward + backward, float32 eager."""
    import torch
    from _flops import flop_counter

    from lds_toolkit.neural import input_checks

    models, data, batch, _ = row_setup(row, smoke, 1)
    model = models[0].to(device)
    x = torch.as_tensor(data.inputs[:batch]).to(device)
    counter = flop_counter()
    with counter, input_checks(False):
        model(x).float().square().mean().backward()
    return float(counter.get_total_flops())


class _Clock:
    """A training callback: the wall time of each reading (the first record it hands over)."""

    def __init__(self):
        self.times: dict[int, float] = {}

    def __call__(self, step, record):
        self.times.setdefault(step, time.perf_counter())


def time_point(row: str, precision: str, compiled: bool, args) -> dict:
    """ms per step of one (row, precision, compile) point (module docstring)."""
    from lds_toolkit.neural import RunSpec, train, train_group

    models, data, batch, runs = row_setup(row, args.cpu_smoke, args.stack)
    clock = _Clock()
    steps = args.warmup_steps + args.steps
    compile_opt = (args.smoke_compile if args.cpu_smoke else True) if compiled else False
    settings = dict(steps=steps, batch_size=batch, lr=1e-4, log_every=args.read_every,
                    precision=precision, compile=compile_opt, device=args.device,
                    divergence_factor=None, threads=args.threads)
    t0 = time.perf_counter()
    if runs == 1:
        res = [train(models[0], data, callback=clock, **settings)]
    else:
        res = train_group([RunSpec(m, data, callback=clock if i == 0 else None,
                                   overrides={"seed": i}) for i, m in enumerate(models)],
                          **settings)
    total = time.perf_counter() - t0
    if any(r.steps_done < steps for r in res):
        return {"status": f"stopped at step {min(r.steps_done for r in res)} "
                          f"({res[0].status})"}
    first = args.warmup_steps - 1  # the reading after the warm-up steps
    last = steps - 1
    ms = 1e3 * (clock.times[last] - clock.times[first]) / args.steps
    return {"status": "ok", "ms_per_step": ms, "ms_per_run_step": ms / runs, "runs": runs,
            "tokens_per_s": runs * batch * data.inputs.shape[1] / (ms / 1e3),
            "seconds": total, "final_loss": float(res[0].history["loss"][-1])}


def worker(args) -> int:
    """One row: every point, each appended to ``args.jsonl`` as it finishes."""
    import torch

    torch.set_num_threads(args.threads)
    flops = count_flops(args.row, args.cpu_smoke, args.device)
    points = [(p, False) for p in args.precisions]
    points += [(p, True) for p in sorted(args.precisions, key=lambda p: p != "bf16")
               if args.compile != "off"]
    if args.compile == "only":
        points = [pt for pt in points if pt[1]]
    for precision, compiled in points:
        try:
            r = time_point(args.row, precision, compiled, args)
        except Exception as exc:  # noqa: BLE001 - a failing point is reported, not fatal
            first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
            r = {"status": f"error: {type(exc).__name__}: {first[:200]}"}
        r.update(row=args.row, precision=precision, compile=compiled,
                 flops_per_run_step=flops)
        with open(args.jsonl, "a") as fh:
            fh.write(json.dumps(r) + "\n")
        print(json.dumps(r), flush=True)
    return 0


def peaks(args) -> dict:
    import torch
    from _flops import bf16_gemm_peak, copy_bandwidth

    torch.set_num_threads(args.threads)
    sizes = (128, 256) if args.cpu_smoke else None
    numel = 2**20 if args.cpu_smoke else None
    return {"bf16_tflops": bf16_gemm_peak(args.device, sizes),
            "copy_gbs": copy_bandwidth(args.device, numel)}


def _subprocess(args, extra: list[str], timeout: float) -> subprocess.CompletedProcess | None:
    cmd = [sys.executable, __file__, *extra, "--device", args.device,
           "--threads", str(args.threads), "--stack", str(args.stack),
           "--steps", str(args.steps), "--warmup-steps", str(args.warmup_steps),
           "--read-every", str(args.read_every), "--compile", args.compile,
           "--jsonl", str(args.jsonl), "--precisions", *args.precisions]
    if args.cpu_smoke:
        cmd.append("--cpu-smoke")
    env = dict(os.environ, PYTHONPATH=f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}")
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env,
                              check=False)
    except subprocess.TimeoutExpired:
        return None


def collect(jsonl: Path, rows=ROWS, precisions=PRECISIONS, compile_mode: str = "both"):
    """The points written to ``jsonl``, in table order, with those asked for but not there
    (their row ran out of time) marked "not measured (time box)"."""
    done = [json.loads(line) for line in jsonl.read_text().splitlines() if line.strip()]
    for row in rows:
        mine = {(r["precision"], r["compile"]) for r in done if r["row"] == row}
        for compiled in ((False,) if compile_mode == "off" else
                         (True,) if compile_mode == "only" else (False, True)):
            for prec in precisions:
                if (prec, compiled) not in mine:
                    done.append({"row": row, "precision": prec, "compile": compiled,
                                 "status": "not measured (time box)"})
    order = {r: i for i, r in enumerate(ROWS)}
    done.sort(key=lambda r: (order[r["row"]], r["compile"], PRECISIONS.index(r["precision"])))
    return done


def markdown(result: dict) -> str:
    """The table as markdown (what docs/benchmarks.md includes)."""
    peak = result.get("peaks", {}).get("bf16_tflops")
    lines = [f"Device: {result['device_name']}; torch {result['torch']}; measured bf16 GEMM "
             f"peak {_num(peak)} TFLOP/s, copy bandwidth "
             f"{_num(result.get('peaks', {}).get('copy_gbs'))} GB/s; "
             f"{result['steps']} timed steps after {result['warmup_steps']} "
             f"(load at start {result['load']}).", "",
             "| model | precision | compile | ms/step | ms/step per run | tokens/s | "
             "TFLOP/s | of bf16 peak |", "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in result["points"]:
        name = r["row"].replace("xN", f"x{result['stack']}")
        if r["status"] != "ok":
            lines.append(f"| {name} | {r['precision']} | {'yes' if r['compile'] else 'no'} | "
                         f"{r['status']} | | | | |")
            continue
        tflops = r["flops_per_run_step"] * r["runs"] / (r["ms_per_step"] / 1e3) / 1e12
        frac = f"{100 * tflops / peak:.2f} %" if peak else "-"
        lines.append(f"| {name} | {r['precision']} | {'yes' if r['compile'] else 'no'} | "
                     f"{r['ms_per_step']:.2f} | {r['ms_per_run_step']:.2f} | "
                     f"{r['tokens_per_s']:.3g} | {tflops:.3g} | {frac} |")
    return "\n".join(lines) + "\n"


def _num(v) -> str:
    return "-" if v is None else f"{v:.4g}"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    p.add_argument("--cpu-smoke", action="store_true", help="tiny sizes on the CPU")
    p.add_argument("--rows", nargs="*", choices=ROWS, default=list(ROWS))
    p.add_argument("--precisions", nargs="*", choices=PRECISIONS, default=list(PRECISIONS))
    p.add_argument("--compile", choices=["both", "off", "only"], default="both")
    p.add_argument("--stack", type=int, default=8, help="runs stacked in focus-1k-xN")
    p.add_argument("--steps", type=int, default=20, help="timed steps per point")
    p.add_argument("--warmup-steps", type=int, default=10)
    p.add_argument("--read-every", type=int, default=5)
    p.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    p.add_argument("--row-timeout", type=float, default=600.0, help="seconds per row")
    p.add_argument("--no-peak", action="store_true")
    p.add_argument("--jsonl", type=Path, help="points as they finish (default: beside --json)")
    p.add_argument("--json", type=Path)
    p.add_argument("--markdown", type=Path)
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--peaks-only", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--row", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    args.smoke_compile = {"backend": "eager"}  # the compile path in seconds on a CPU
    if args.cpu_smoke:
        args.device = "cpu"
    if args.steps % args.read_every or args.warmup_steps % args.read_every:
        p.error("--steps and --warmup-steps must be multiples of --read-every")
    if args.worker:
        return worker(args)
    if args.peaks_only:
        print(json.dumps(peaks(args)))
        return 0
    import torch

    if args.device == "cuda" and not torch.cuda.is_available():
        print("--device cuda: no CUDA device available", file=sys.stderr)
        return 2
    if args.jsonl is None:
        base = args.json or Path("training_steps.json")
        args.jsonl = base.with_suffix(".points.jsonl")
    args.jsonl.parent.mkdir(parents=True, exist_ok=True)
    args.jsonl.write_text("")
    name = torch.cuda.get_device_name() if args.device == "cuda" else "CPU"
    load = ", ".join(f"{v:.1f}" for v in os.getloadavg())
    print(f"device {name}, torch {torch.__version__}, load {load}", flush=True)
    result = {"device_name": name, "torch": torch.__version__, "load": load,
              "steps": args.steps, "warmup_steps": args.warmup_steps, "stack": args.stack,
              "peaks": {}, "points": []}
    if not args.no_peak and args.device == "cpu":
        result["peaks"] = peaks(args)
    elif not args.no_peak:  # in a subprocess: its memory goes with it
        proc = _subprocess(args, ["--peaks-only"], args.row_timeout)
        if proc is not None and proc.returncode == 0:
            result["peaks"] = json.loads(proc.stdout.strip().splitlines()[-1])
    with open(args.jsonl.with_suffix(".run.json"), "w") as fh:  # for a run cut short
        json.dump({k: v for k, v in result.items() if k != "points"}, fh)
        print(f"peaks: {result['peaks'] or 'not measured'}", flush=True)
    for row in args.rows:
        t0 = time.perf_counter()
        proc = _subprocess(args, ["--worker", "--row", row], args.row_timeout)
        state = ("timed out" if proc is None else
                 "ok" if proc.returncode == 0 else
                 f"failed: {(proc.stderr.strip().splitlines() or ['?'])[-1][:200]}")
        print(f"row {row}: {state} ({time.perf_counter() - t0:.0f} s)", flush=True)
    result["points"] = collect(args.jsonl, args.rows, args.precisions, args.compile)
    result["load_end"] = ", ".join(f"{v:.1f}" for v in os.getloadavg())
    text = markdown(result)
    print(text)
    if args.json:
        args.json.write_text(json.dumps(result, indent=1))
    if args.markdown:
        args.markdown.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
