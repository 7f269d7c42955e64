"""Figure of docs/experiments/las-ablation.md: the ListOps stall against expressions seen.

Three `las-ablation --scale medium` runs of `l-only` (seed 0) that differ only in the batch
size, each with the same number of training expressions (8000), made when the medium held-out
set had 200 expressions (``n_valid=200``; 100 since commit 70636ef)::

    lds-toolkit reproduce las-ablation --scale medium --seeds 1 --set 'models=["l-only"]' \\
        --set n_valid=200 --set batch_size=4 --set max_steps=2000 --set eval_every=100 \\
        --out figures-probe/bs4
    lds-toolkit reproduce las-ablation --scale medium --seeds 1 --set 'models=["l-only"]' \\
        --set n_valid=200 --set batch_size=16 --set max_steps=500 --set eval_every=25 \\
        --out figures-probe/bs16
    lds-toolkit reproduce las-ablation --scale medium --seeds 1 --set 'models=["l-only"]' \\
        --set n_valid=200 --out figures-probe/bs8

(the last is seed 0 of the medium run of that time: batch 8, 1000 steps). Usage:
``python docs/img/make_las_batch_figure.py BS4_DIR BS8_DIR BS16_DIR`` (each the directory
holding ``las-ablation/arrays.npz``); writes ``las_batch_probe.png`` next to this file and prints
the numbers quoted on the page.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

OUT = Path(__file__).resolve().parent


def main(dirs: list[str]) -> None:
    fig, ax = plt.subplots(figsize=(6.4, 3.6))
    for d in dirs:
        run = Path(d) / "las-ablation"
        arrays = np.load(run / "arrays.npz")
        summary = json.loads((run / "summary.json").read_text())
        timings = json.loads((run / "run.json").read_text())["timings"]["train_seconds"]
        seconds = next(t["seconds"] for t in timings
                       if t["model"] == "l-only" and t["seed_index"] == 0)
        batch = summary["config"]["batch_size"]
        seen = arrays["eval_steps/l-only"] * batch
        loss = arrays["eval_loss/l-only"][0]
        below = seen[np.argmax(loss < 2.2)] if (loss < 2.2).any() else None
        print(f"batch {batch}: held-out loss first < 2.2 after {below} expressions; "
              f"{loss[-1]:.3f} after {seen[-1]}; test accuracy "
              f"{summary['accuracy_seeds']['l-only'][0]:.3f}; "
              f"{seconds:.0f} s of training (run.json)")
        ax.plot(seen, loss, marker=".", lw=1.2, label=f"batch {batch}")
    ax.axhline(np.log(10), color="0.5", ls=":", lw=1, label="log 10 (uniform guess)")
    ax.set(xlabel="training expressions seen", ylabel="held-out loss",
           title="ListOps 500-2000 tokens, l-only, seed 0")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(OUT / "las_batch_probe.png", dpi=130)
    plt.close(fig)


if __name__ == "__main__":
    main(sys.argv[1:])
