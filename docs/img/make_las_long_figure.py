"""Figure of docs/experiments/las-ablation.md: `l-only` and `las` trained 4x the medium budget.

One `las-ablation --scale medium` run of seed 0 (the data and initialisation of the medium
run's seed 0) with the step budget raised from 1000 to 4000; everything else is the medium
configuration, so its first 1000 steps are the medium run's::

    lds-toolkit reproduce las-ablation --scale medium --seeds 1 \\
        --set 'models=["l-only","las"]' --set max_steps=4000 --out figures-probe/las-long

Usage: ``python docs/img/make_las_long_figure.py PROBE_DIR`` (the directory holding
``las-ablation/arrays.npz``); writes ``las_long_probe.png`` next to this file and prints the
numbers quoted on the page (where each run stopped and why, its lowest held-out loss, its
test accuracy, and the held-out accuracy at the medium budget and at the end).
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
MODELS = ("l-only", "las")
MEDIUM_STEPS = 1000


def main(probe_dir: str) -> None:
    run = Path(probe_dir) / "las-ablation"
    arrays = np.load(run / "arrays.npz")
    summary = json.loads((run / "summary.json").read_text())
    fig, (ax_loss, ax_acc) = plt.subplots(1, 2, figsize=(10, 3.6))
    for i, name in enumerate(MODELS):
        steps = arrays[f"eval_steps/{name}"]
        loss, acc = arrays[f"eval_loss/{name}"][0], arrays[f"eval_accuracy/{name}"][0]
        ok = np.isfinite(loss)
        steps, loss, acc = steps[ok], loss[ok], acc[ok]
        best = int(np.argmin(loss))
        at_budget = acc[steps <= MEDIUM_STEPS][-1]
        print(f"{name}: stopped at step {summary['steps'][name][0]} "
              f"({summary['status'][name][0]}, plateaued {summary['plateaued'][name][0]}); "
              f"lowest held-out loss {loss[best]:.3f} at step {steps[best]}, final "
              f"{loss[-1]:.3f}; held-out accuracy {at_budget:.2f} at step {MEDIUM_STEPS}, "
              f"{acc[-1]:.2f} at the end, best {acc.max():.2f}; test accuracy "
              f"{summary['accuracy_seeds'][name][0]:.3f}; "
              f"{summary['train_seconds'][name][0]:.0f} s of training")
        ax_loss.plot(steps, loss, color=f"C{i}", lw=1.2, label=name)
        ax_acc.plot(steps, acc, color=f"C{i}", lw=1.2, label=name)
    majority = summary["majority_accuracy"]
    ax_loss.axhline(np.log(10), color="0.5", ls=":", lw=1, label="log 10 (uniform guess)")
    ax_acc.axhline(majority, color="0.5", ls=":", lw=1, label="majority class (test)")
    for ax in (ax_loss, ax_acc):
        ax.axvline(MEDIUM_STEPS, color="k", ls="--", lw=0.8, label="medium budget")
        ax.set_xlabel("step (batch 8)")
        ax.legend(fontsize=8)
    ax_loss.set(ylabel="held-out loss", title="ListOps 500-2000 tokens, seed 0")
    ax_acc.set(ylabel="held-out accuracy (100 expressions)")
    fig.tight_layout()
    fig.savefig(OUT / "las_long_probe.png", dpi=130)
    plt.close(fig)


if __name__ == "__main__":
    main(sys.argv[1])
