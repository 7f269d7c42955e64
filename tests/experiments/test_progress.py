"""Progress inside a task: training steps reach the sweep's bar from this process and from
worker processes, are throttled, and never change a number."""

from __future__ import annotations

import time

import numpy as np

from lds_toolkit.experiments.runner import progress
from lds_toolkit.experiments.runner.sweep import run_sweep
from lds_toolkit.experiments.store import task_key

STEPS = 6


def stepping_task(config, task, rng):
    """Reports STEPS steps, a little apart, then returns a draw of its stream."""
    for step in range(1, STEPS + 1):
        progress.report_progress(step, STEPS)
        time.sleep(config["pause"])
    return {"x": float(rng.standard_normal())}


def _sweep(jobs, show, pause=0.0):
    config = {"seed": 0, "pause": pause}
    tasks = [{"seed_index": i} for i in range(4)]
    keys = [task_key("progress-toy", config, t) for t in tasks]
    results, _ = run_sweep(stepping_task, config, tasks, keys, jobs=jobs, progress=show,
                           desc="toy")
    return [r["x"] for r in results]


def test_outside_a_sweep_reports_go_nowhere_and_inside_are_throttled(monkeypatch):
    progress.report_progress(3, 10)  # no listener: nothing happens
    seen = []
    clock = iter([0.0, 0.1, 0.2, 0.6, 0.7, 0.8])
    monkeypatch.setattr(progress.time, "monotonic", lambda: next(clock))
    with progress.reporting_to(lambda d, t: seen.append((d, t))):
        for step in range(1, 7):
            progress.report_progress(step, 6)
    # the first report, the next one MIN_INTERVAL (0.5 s) later, and the last one
    assert seen == [(1, 6), (4, 6), (6, 6)]
    progress.report_progress(1, 6)
    assert len(seen) == 3  # the reporter is gone after the block


def test_the_file_reporter_writes_what_the_board_reads(tmp_path):
    write = progress.file_reporter(str(tmp_path), "3")
    write(40, 100)
    assert (tmp_path / "3").read_text() == "40 100"
    progress.file_reporter(str(tmp_path / "gone"), "1")(1, 2)  # a removed folder: ignored


def test_running_tasks_show_their_steps_on_the_bar(capsys):
    for jobs in (1, 2):
        _sweep(jobs, show=True, pause=0.25)
        err = capsys.readouterr().err
        assert "steps " in err and f"/{STEPS}" in err, (jobs, err[-500:])


def test_progress_never_changes_a_number():
    quiet = _sweep(1, show=False)
    assert _sweep(1, show=True) == quiet
    assert _sweep(2, show=True) == quiet
    assert np.isfinite(quiet).all()
