"""Progress inside a task (training steps), shown on the sweep's bar wherever the task runs.

A task reports how far it is with :func:`report_progress` (the neural experiments do so from
their training callback, :func:`lds_toolkit.experiments.catalog._neural_common.step_progress`);
outside a sweep, or with progress bars off, the call does nothing. The sweep
(:func:`~lds_toolkit.experiments.runner.sweep.run_sweep`) listens while its tasks run and writes the
running tasks' counts after its bar, ``assoc-recall: 45%|████  | 5/11 [steps 240/800]``:

* a task run in the sweep's own process reports to a callback that updates the bar
  (at most every :data:`MIN_INTERVAL` seconds);
* a task run in a local worker process (``--jobs 2``) writes ``"done total"`` to a small file
  named after its task in a private temporary directory (replaced atomically, at most every
  :data:`MIN_INTERVAL` seconds), which a thread of the sweep reads back
  (:class:`ProgressBoard`). Files rather than a pipe: nothing to set up in a worker, and
  a worker that dies leaves nothing blocked.

Progress never changes a number: it is not part of any config, store key or result.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

#: Seconds between two reports of one task (and between two refreshes of the bar).
MIN_INTERVAL = 0.5

_reporter: Callable[[int, int], None] | None = None


def report_progress(done: int, total: int) -> None:
    """Tell the sweep running this task that ``done`` of ``total`` units (training steps) are
    finished. Cheap enough to call every step; does nothing outside a listening sweep."""
    if _reporter is not None:
        _reporter(int(done), int(total))


@contextlib.contextmanager
def reporting_to(callback: Callable[[int, int], None] | None) -> Iterator[None]:
    """Within the block, :func:`report_progress` calls ``callback`` (throttled to one call
    per :data:`MIN_INTERVAL` seconds, the last report of a task always passed on); ``None``
    leaves reports ignored. Restores the previous reporter on exit."""
    global _reporter
    previous = _reporter
    _reporter = None if callback is None else _throttled(callback)
    try:
        yield
    finally:
        _reporter = previous


def _throttled(callback: Callable[[int, int], None]) -> Callable[[int, int], None]:
    last = [-float("inf")]

    def call(done: int, total: int) -> None:
        now = time.monotonic()
        if now - last[0] >= MIN_INTERVAL or done >= total:
            last[0] = now
            callback(done, total)

    return call


def file_reporter(directory: str, name: str) -> Callable[[int, int], None]:
    """A reporter that writes ``"done total"`` to ``directory/name`` (atomically replaced);
    errors (the directory removed when the sweep ended) are ignored."""
    path = os.path.join(directory, name)

    def write(done: int, total: int) -> None:
        tmp = f"{path}.{os.getpid()}.tmp"
        try:
            with open(tmp, "w") as fh:
                fh.write(f"{done} {total}")
            os.replace(tmp, path)
        except OSError:
            pass

    return write


class ProgressBoard:
    """The sweep's side: the running tasks' ``(done, total)``, shown after the bar.

    ``board.local(i)`` is the reporter of task ``i`` run in this process; ``board.directory``
    is where tasks in worker processes write (:func:`file_reporter`, file name ``str(i)``),
    read by a thread every :data:`MIN_INTERVAL` seconds while the board is open (``with
    board:``). ``board.done(i)`` forgets a finished task."""

    def __init__(self, bar: Any) -> None:
        self.bar = bar
        self._counts: dict[str, tuple[int, int]] = {}
        self._finished: set[str] = set()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.directory: str | None = None
        self._shown = ""

    def __enter__(self) -> ProgressBoard:
        self.directory = tempfile.mkdtemp(prefix="lds-toolkit-progress-")
        self._thread = threading.Thread(target=self._poll, name="lds-toolkit-progress",
                                        daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=2 * MIN_INTERVAL)
        if self.directory is not None:
            shutil.rmtree(self.directory, ignore_errors=True)

    def local(self, i: int) -> Callable[[int, int], None]:
        def update(done: int, total: int) -> None:
            with self._lock:
                self._counts[str(i)] = (done, total)
            self._show()

        return update

    def done(self, i: int) -> None:
        with self._lock:
            self._counts.pop(str(i), None)
            self._finished.add(str(i))
        if self.directory is not None:
            with contextlib.suppress(OSError):
                os.unlink(os.path.join(self.directory, str(i)))
        self._show()

    def _poll(self) -> None:
        while not self._stop.wait(MIN_INTERVAL):
            for path in Path(self.directory or ".").glob("[0-9]*"):
                if path.suffix == ".tmp":
                    continue
                try:
                    done, total = (int(x) for x in path.read_text().split())
                except (OSError, ValueError):
                    continue
                with self._lock:
                    if path.name not in self._finished:
                        self._counts[path.name] = (done, total)
            self._show()

    def _show(self) -> None:
        with self._lock:
            running = [f"{d}/{t}" for _, (d, t) in sorted(self._counts.items(),
                                                           key=lambda kv: int(kv[0]))]
        text = f"steps {' '.join(running)}" if running else ""
        if text != self._shown:
            self._shown = text
            self.bar.set_postfix_str(text, refresh=True)
