"""Benchmark: bf16 autocast training of the las-ablation gpu model against float32, the same
run otherwise (issue 34's acceptance: the bf16 loss tracks float32's within 2 %).

Both runs start from the same initial model (seed 0), see the same batches (ListOps of the
gpu scale: 500-2000 tokens, batches of 50, cropped and bucketed as the experiment trains)
and train ``--steps`` steps (default 200) through ``train``; bf16 keeps float32 master
weights. Printed: per-step losses every 20 steps, the largest relative difference of a step's
loss, the relative difference of the mean of the last 20 steps, and each run's ms/step.

Run: ``python benchmarks/bf16_training.py --device cuda [--json out.json]``;
``--cpu-smoke``: a tiny model for 10 steps on the CPU (checks the script).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main(argv=None) -> int:
    import torch

    from lds_toolkit.experiments.catalog import las_ablation
    from lds_toolkit.neural import train
    from lds_toolkit.neural.tasks import listops

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    p.add_argument("--model", default="las", choices=["las", "l-only"])
    p.add_argument("--steps", type=int, default=200)
    p.add_argument("--n-train", type=int, default=2000)
    p.add_argument("--cpu-smoke", action="store_true")
    p.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    p.add_argument("--json", type=Path)
    args = p.parse_args(argv)
    cfg = las_ablation.scale_config("gpu")
    if args.cpu_smoke:
        args.device, args.steps, args.n_train = "cpu", 10, 64
        cfg.update(d_model=16, n_layers=1, chunk_size=16, min_length=16, max_length=64,
                   batch_size=8)
    if args.device == "cuda" and not torch.cuda.is_available():
        print("--device cuda: no CUDA device available", file=sys.stderr)
        return 2
    torch.set_num_threads(args.threads)
    name = torch.cuda.get_device_name() if args.device == "cuda" else "CPU"
    print(f"device {name}, torch {torch.__version__}, las-ablation gpu model ({args.model}, "
          f"d {cfg['d_model']} x {cfg['n_layers']}), {args.steps} steps of "
          f"{cfg['batch_size']}, load {os.getloadavg()[0]:.1f}", flush=True)
    t0 = time.perf_counter()
    data = listops(args.n_train, min_length=cfg["min_length"], max_length=cfg["max_length"],
                   rng=0)
    print(f"data: {args.n_train} expressions in {time.perf_counter() - t0:.1f} s", flush=True)
    runs = {}
    for precision in ("fp32", "bf16"):
        model = las_ablation.build_model(args.model, cfg, seed=0)
        t0 = time.perf_counter()
        res = train(model, data, steps=args.steps, batch_size=cfg["batch_size"], lr=cfg["lr"],
                    warmup=min(cfg["warmup"], args.steps), weight_decay=cfg["weight_decay"],
                    crop=cfg["crop"], bucket=cfg["bucket"], log_every=10, seed=1,
                    precision=precision, device=args.device)
        runs[precision] = {"loss": res.history["loss"], "status": res.status,
                           "ms_per_step": 1e3 * (time.perf_counter() - t0) / max(res.steps_done, 1)}
        print(f"{precision}: {res.status} after {res.steps_done} steps, "
              f"{runs[precision]['ms_per_step']:.1f} ms/step (first steps included)", flush=True)
    fp32, bf16 = runs["fp32"]["loss"], runs["bf16"]["loss"]
    n = min(len(fp32), len(bf16))
    rel = np.abs(bf16[:n] - fp32[:n]) / np.abs(fp32[:n])
    tail = slice(max(n - 20, 0), n)
    tail_rel = abs(bf16[tail].mean() - fp32[tail].mean()) / fp32[tail].mean()
    for s in range(0, n, 20):
        print(f"  step {s:4d}: fp32 {fp32[s]:.5f}  bf16 {bf16[s]:.5f}  rel {rel[s]:.2e}")
    verdict = "within 2 %" if n == args.steps and rel.max() <= 0.02 else "NOT within 2 %"
    print(f"largest per-step relative difference {rel.max():.3e} (step {int(rel.argmax())}); "
          f"last-20-step means {fp32[tail].mean():.5f} / {bf16[tail].mean():.5f} "
          f"(relative {tail_rel:.3e}): {verdict}")
    if args.json:
        args.json.write_text(json.dumps({
            "device": name, "torch": torch.__version__, "model": args.model,
            "steps": args.steps, "max_rel": float(rel.max()), "argmax": int(rel.argmax()),
            "tail_rel": float(tail_rel), "verdict": verdict,
            "fp32": {k: (v.tolist() if hasattr(v, "tolist") else v)
                     for k, v in runs["fp32"].items()},
            "bf16": {k: (v.tolist() if hasattr(v, "tolist") else v)
                     for k, v in runs["bf16"].items()}}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
