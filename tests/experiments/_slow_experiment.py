"""A deliberately slow toy experiment used by the interruption tests (not registered)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import numpy as np

from lds_toolkit.experiments import Experiment


class SlowSquares(Experiment):
    """Each task sleeps, draws from its stream and logs its own execution to a file."""

    name = "slow-squares"
    description = "test fixture"

    def __init__(self, log_dir: str | os.PathLike, delay: float = 0.0, fail_on: int | None = None):
        self.log_dir = str(log_dir)
        self.delay = delay
        self.fail_on = fail_on

    def config(self, scale, seeds):
        return {"seeds": seeds or 6, "params": [1, 2]}

    def tasks(self, config):
        return [{"seed_index": s, "p": p} for s in range(config["seeds"]) for p in config["params"]]

    def run_task(self, config, task, rng):
        index = task["seed_index"] * len(config["params"]) + config["params"].index(task["p"])
        if self.fail_on is not None and index == self.fail_on:
            raise KeyboardInterrupt(f"simulated interruption at task {index}")
        time.sleep(self.delay)
        Path(self.log_dir, f"ran-{index}-{os.getpid()}-{time.monotonic_ns()}").touch()
        return {"value": float(rng.standard_normal()) * task["p"]}

    def summarize(self, config, tasks, results):
        values = np.array([r["value"] for r in results])
        return {"values": values.tolist()}, {"values": values}


def ran_tasks(log_dir) -> list[int]:
    return sorted(int(p.name.split("-")[1]) for p in Path(log_dir).glob("ran-*"))


class TinyPlot(Experiment):
    """Two cheap tasks, a summary, arrays and a small figure: the full output path of a run
    in well under a second (for the tests of the final writes)."""

    name = "tiny-plot"
    description = "test fixture"

    def config(self, scale, seeds):
        return {"seeds": seeds or 2, "n": 2000}

    def run_task(self, config, task, rng):
        return {"x": rng.standard_normal(config["n"])}

    def summarize(self, config, tasks, results):
        x = np.stack([r["x"] for r in results])
        return {"mean": float(x.mean()), "x": x[:, :200].tolist()}, {"x": x}

    def plot(self, config, summary, arrays, outdir):
        from lds_toolkit.experiments.plotting import figure, save_figure

        fig, ax = figure()
        ax.plot(arrays["x"][0])
        return save_figure(fig, outdir, "tiny")
