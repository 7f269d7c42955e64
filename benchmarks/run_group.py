"""Benchmark: N runs of one small model trained stacked (``train_group``) against the same N
runs trained one after another (``train``), on this device.

The model is assoc-recall's gpu-scale Focus (width 64, 2 layers, chunks of 32, global
hyper-network convolution) on associative recall at ``--length`` in batches of ``--batch``;
each run has its own seed. Both routes train ``--steps`` steps after ``--warmup-steps``
untimed ones (timed from the loop's own readings, as ``training_steps.py`` does) and report
run-steps per second (runs x steps / seconds); the speed-up is the stacked rate over the
one-at-a-time rate. A GPU is where stacking is meant to pay (a small model is bound by kernel
launches there); on a CPU the same count of operations dispatches fewer times, so the
gain is that of the per-operation overhead only.

Run: ``python benchmarks/run_group.py [--device cpu] [--length 30] [--batch 32] [--runs 4]``.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from training_steps import _Clock  # noqa: E402


def main(argv=None) -> int:
    import torch

    from lds_toolkit.experiments.catalog import assoc_recall
    from lds_toolkit.neural import RunSpec, train, train_group
    from lds_toolkit.neural.tasks import associative_recall

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    p.add_argument("--length", type=int, default=30)
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--runs", type=int, default=4)
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--warmup-steps", type=int, default=5)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--repeat", type=int, default=2, help="alternate the two routes this often")
    args = p.parse_args(argv)
    torch.set_num_threads(args.threads)
    cfg = assoc_recall.scale_config("gpu")
    data = associative_recall(4 * args.batch, args.length, vocab_size=cfg["vocab_size"], rng=0)
    settings = dict(steps=args.warmup_steps + args.steps, batch_size=args.batch, lr=1e-4,
                    log_every=args.warmup_steps if args.steps % args.warmup_steps == 0 else 1,
                    device=args.device, divergence_factor=None)
    first, last = args.warmup_steps - 1, args.warmup_steps + args.steps - 1

    def models():
        return [assoc_recall.build_model("focus", cfg, args.length, s) for s in range(args.runs)]

    def alone() -> float:
        seconds = 0.0
        for seed, model in enumerate(models()):
            clock = _Clock()
            train(model, data, seed=seed, callback=clock, **settings)
            seconds += clock.times[last] - clock.times[first]
        return args.runs * args.steps / seconds

    def stacked() -> float:
        clock = _Clock()
        train_group([RunSpec(m, data, callback=clock if s == 0 else None,
                             overrides={"seed": s}) for s, m in enumerate(models())],
                    **settings)
        return args.runs * args.steps / (clock.times[last] - clock.times[first])

    load = os.getloadavg()
    print(f"{args.runs} Focus runs (width {cfg['width']}, {cfg['n_layers']} layers) at L = "
          f"{args.length}, batch {args.batch}, {args.steps} timed steps after "
          f"{args.warmup_steps}; device {args.device}, {args.threads} thread(s), torch "
          f"{torch.__version__}; load {load[0]:.1f}, {load[1]:.1f}, {load[2]:.1f} on "
          f"{os.cpu_count()} cores", flush=True)
    rates: dict[str, list[float]] = {"alone": [], "stacked": []}
    t0 = time.perf_counter()
    for _ in range(args.repeat):  # alternated, so that a change of load hits both
        rates["alone"].append(alone())
        rates["stacked"].append(stacked())
    best = {k: max(v) for k, v in rates.items()}
    for k in ("alone", "stacked"):
        print(f"  {k:8s}: {', '.join(f'{r:.2f}' for r in rates[k])} run-steps/s "
              f"(best {best[k]:.2f}; {1e3 / best[k]:.1f} ms per run-step)")
    load = os.getloadavg()
    print(f"stacked / one at a time: {best['stacked'] / best['alone']:.2f}x "
          f"({time.perf_counter() - t0:.0f} s; load at end {load[0]:.1f}, {load[1]:.1f}, "
          f"{load[2]:.1f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
