"""Figure of docs/experiments/las-ablation.md: `l-only` and `las` trained 4x the medium budget.

One `las-ablation --scale medium` run of seed 0 (the data and initialisation of the medium
run's seed 0) with the step budget raised from 1000 to 4000; everything else is the medium
configuration, so its first 1000 steps are the medium run's::

    lds-toolkit reproduce las-ablation --scale medium --seeds 1 \\
        --set 'models=["l-only","las"]' --set max_steps=4000 --out figures-probe/las-long

and, because the plateau rule may stop a run on a noisy stretch of the curve, `l-only` again
with the rule switched off (a window longer than the run) for 3000 steps::

    lds-toolkit reproduce las-ablation --scale medium --seeds 1 --set 'models=["l-only"]' \\
        --set max_steps=3000 --out figures-probe/las-noplateau --set 'plateau={"window": 1000,
        "min_delta": 0.02, "metric": "loss", "min_evals": 8, "min_gain": 0.1}'

Usage: ``python docs/img/make_las_long_figure.py PROBE_DIR [NO_PLATEAU_DIR]`` (each the
directory holding ``las-ablation/arrays.npz``); writes ``las_long_probe.png`` next to this
file and prints the numbers quoted on the page (where each run stopped and why, its lowest
held-out loss, its test accuracy, and the held-out accuracy at the medium budget and at the
end).
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


def load(directory: str) -> tuple:
    """The run's arrays and summary, with its training seconds (from run.json, where wall
    times live) as ``summary["train_seconds"][model]``."""
    run = Path(directory) / "las-ablation"
    summary = json.loads((run / "summary.json").read_text())
    seconds: dict = {}
    for t in json.loads((run / "run.json").read_text())["timings"]["train_seconds"]:
        seconds.setdefault(t["model"], []).append(t["seconds"])
    return np.load(run / "arrays.npz"), {**summary, "train_seconds": seconds}


def main(probe_dir: str, no_plateau_dir: str | None = None) -> None:
    arrays, summary = load(probe_dir)
    runs = [(name, f"C{i}", "-", name, arrays, summary) for i, name in enumerate(MODELS)]
    if no_plateau_dir is not None:
        arrays2, summary2 = load(no_plateau_dir)
        runs.append(("l-only", "C0", ":", "l-only, no plateau rule", arrays2, summary2))
    fig, (ax_loss, ax_acc) = plt.subplots(1, 2, figsize=(10, 3.6))
    for name, color, style, label, arrays, summary in runs:
        steps = arrays[f"eval_steps/{name}"]
        loss, acc = arrays[f"eval_loss/{name}"][0], arrays[f"eval_accuracy/{name}"][0]
        ok = np.isfinite(loss)
        steps, loss, acc = steps[ok], loss[ok], acc[ok]
        best = int(np.argmin(loss))
        at_budget = acc[steps <= MEDIUM_STEPS][-1]
        print(f"{label}: stopped at step {summary['steps'][name][0]} "
              f"({summary['status'][name][0]}, plateaued {summary['plateaued'][name][0]}); "
              f"lowest held-out loss {loss[best]:.3f} at step {steps[best]}, final "
              f"{loss[-1]:.3f}; held-out accuracy {at_budget:.2f} at step {MEDIUM_STEPS}, "
              f"{acc[-1]:.2f} at the end, best {acc.max():.2f}; test accuracy "
              f"{summary['accuracy_seeds'][name][0]:.3f}; "
              f"{summary['train_seconds'][name][0]:.0f} s of training")
        if no_plateau_dir is not None and label == "l-only, no plateau rule":
            for k in (2000, 3000):  # the mean held-out loss over 500-step windows
                win = (steps > k - 500) & (steps <= k)
                print(f"  mean held-out loss over steps {k - 450}-{k}: {loss[win].mean():.3f}")
        ax_loss.plot(steps, loss, color=color, ls=style, lw=1.2, label=label)
        ax_acc.plot(steps, acc, color=color, ls=style, lw=1.2, label=label)
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
    main(*sys.argv[1:3])
