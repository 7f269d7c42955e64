"""How many local worker processes a sweep starts, checked before any is started.

``jobs`` is what the user asks for (``-1``: one per core). A sweep never starts more workers
than it has tasks to compute (``--jobs 400000`` for 9 tasks starts 9), and a worker count
that this machine cannot hold is refused before the first one starts, naming the argument:

* more than the processes this user may run (the soft ``RLIMIT_NPROC``, ``ulimit -u``;
  Linux counts every thread of the user's processes against it), counting those running;
* more memory than is available now, at :data:`WORKER_BYTES` a worker (a worker process
  imports numpy, scipy and the toolkit: about 200 MiB measured, 380 MiB with torch).

Passing the check does not promise the workers fit (other programs start processes too);
it stops the requests that cannot, such as a fork bomb by typo.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..._safe_files import human_bytes
from ..._validation import available_memory_bytes

#: Memory a local worker process is assumed to need at least (numpy, scipy, the toolkit).
WORKER_BYTES = 192 * 2**20


def check_jobs(jobs, label: str = "jobs") -> int:
    """``jobs`` if it is a positive integer or -1 (all cores), else ``ValueError`` naming
    ``label``."""
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs == 0 or jobs < -1:
        raise ValueError(f"{label} must be a positive integer or -1 (all cores), got {jobs!r}")
    return jobs


def local_workers(jobs: int, n_tasks: int) -> int:
    """Worker processes for ``n_tasks`` tasks: ``jobs`` (the cores for ``-1``), never more
    than the tasks and at least one."""
    want = (os.cpu_count() or 1) if jobs == -1 else jobs
    return max(1, min(want, n_tasks))


def process_limit() -> int | None:
    """The soft limit on this user's processes (``ulimit -u``), ``None`` when unlimited or
    not known."""
    try:
        import resource

        soft, _ = resource.getrlimit(resource.RLIMIT_NPROC)
    except (ImportError, AttributeError, ValueError, OSError):  # pragma: no cover - non-POSIX
        return None
    return None if soft == resource.RLIM_INFINITY or soft < 0 else int(soft)


def user_task_count() -> int | None:
    """Threads of this user's processes now (what ``RLIMIT_NPROC`` counts on Linux), from
    ``/proc``; ``None`` where there is no ``/proc``."""
    proc = Path("/proc")
    if not (proc / "self" / "status").is_file():
        return None  # pragma: no cover - not Linux
    uid, total = str(os.getuid()), 0
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            text = (entry / "status").read_text()
        except OSError:  # ended meanwhile, or not ours to read
            continue
        fields = dict(line.split(":", 1) for line in text.splitlines() if ":" in line)
        if fields.get("Uid", "").split()[:1] == [uid]:
            total += int(fields.get("Threads", "1").strip() or 1)
    return total


def check_workers(jobs, n_tasks: int, label: str = "jobs") -> int:
    """The number of local workers a sweep of ``n_tasks`` tasks with ``jobs`` starts, after
    the checks of the module docstring (``ValueError`` naming ``label``)."""
    jobs = check_jobs(jobs, label)
    limit = process_limit()
    cores = os.cpu_count() or 1
    advice = f"give at most the number of cores ({cores}), or -1 for one worker per core"
    if limit is not None and jobs > limit:
        raise ValueError(f"{label}={jobs} is more than the {limit} processes this user may run "
                         f"(ulimit -u); {advice}")
    workers = local_workers(jobs, n_tasks)
    if workers == 1:
        return workers  # the sweep runs in this process
    if limit is not None:
        used = user_task_count()
        if used is not None and used + workers > limit:
            raise ValueError(f"{label}={jobs} would start {workers} worker processes, but this "
                             f"user already runs {used} of the {limit} processes (threads) "
                             f"allowed (ulimit -u); {advice}")
    available = available_memory_bytes()
    if available is not None and workers * WORKER_BYTES > available:
        raise ValueError(f"{label}={jobs} would start {workers} worker processes, which need "
                         f"about {human_bytes(workers * WORKER_BYTES)} "
                         f"({human_bytes(WORKER_BYTES)} each), more than the "
                         f"{human_bytes(available)} of memory available now; {advice}")
    return workers
