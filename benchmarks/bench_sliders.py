"""Warm time of every lesson slider's callback, against rebuilding its figure from scratch.

    python benchmarks/bench_sliders.py [--repeat 5] [--json out.json]

Finds every slider the teaching package registers (``registered_sliders()``: the
``lds_toolkit.teaching.lessonNN`` modules, lesson 8 when torch is installed) and, for each
parameter at three values (its ends and middle, as the headless tests), times the callback a
widget runs on a move, ``SliderApp.render`` (redraw + PNG), warm: the app is built and rendered
once first, and each value is rendered ``repeat`` times, best wall time and its CPU time
reported. The baseline, in the same run, is the cold route a naive slider takes on every
move: a new figure, its axes built again, drawn and rendered (``SliderApp(name).render``).
The budget is 100 ms per warm callback (issue 36); the table marks any callback above it.
Timings depend on the machine's load, printed at the start and the end.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

BUDGET_MS = 100.0


def _load() -> str:
    return ", ".join(f"{v:.2f}" for v in os.getloadavg())


def _best(fn, repeat: int) -> tuple[float, float]:
    """Best wall time of ``repeat`` calls and the CPU time of that call, in ms."""
    best = (float("inf"), float("inf"))
    for _ in range(repeat):
        w, c = time.perf_counter(), time.process_time()
        fn()
        wall, cpu = time.perf_counter() - w, time.process_time() - c
        if wall < best[0]:
            best = (wall, cpu)
    return best[0] * 1e3, best[1] * 1e3


def _cold(name: str, move: dict) -> None:
    from lds_toolkit.teaching import SliderApp

    SliderApp(name).render(**move)


def run(repeat: int = 5) -> list[dict]:
    from lds_toolkit.teaching import SliderApp, registered_sliders

    rows = []
    for name, spec in registered_sliders().items():
        app = SliderApp(name)
        app.render()  # warm: imports, first draw, numba compiles
        for key, param in spec.params.items():
            for value in param.values(3):
                move = {key: value}
                wall, cpu = _best(functools.partial(app.render, **move), repeat)
                cold, _ = _best(functools.partial(_cold, name, move), max(1, repeat // 2))
                rows.append({"slider": name, "param": key, "value": value, "warm_ms": wall,
                             "warm_cpu_ms": cpu, "cold_ms": cold})
            app.render(**{key: param.default})
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--json", type=Path, help="also write the rows as JSON")
    args = parser.parse_args(argv)
    print(f"load average at start: {_load()} on {os.cpu_count()} cores")
    rows = run(args.repeat)
    print(f"{'slider':18s} {'parameter':9s} {'value':>10s} {'warm ms':>8s} {'(CPU)':>7s} "
          f"{'cold ms':>8s} {'cold/warm':>9s}")
    for r in rows:
        flag = "  OVER BUDGET" if r["warm_ms"] > BUDGET_MS else ""
        print(f"{r['slider']:18s} {r['param']:9s} {r['value']:10.4g} {r['warm_ms']:8.1f} "
              f"{r['warm_cpu_ms']:7.1f} {r['cold_ms']:8.1f} {r['cold_ms'] / r['warm_ms']:9.1f}"
              f"{flag}")
    worst = max(rows, key=lambda r: r["warm_ms"])
    print(f"slowest warm callback: {worst['slider']} ({worst['param']} = {worst['value']:.4g})"
          f" {worst['warm_ms']:.1f} ms wall, {worst['warm_cpu_ms']:.1f} ms CPU; budget "
          f"{BUDGET_MS:.0f} ms: {'met' if worst['warm_ms'] <= BUDGET_MS else 'NOT met'} "
          f"({len(rows)} callbacks, {len({r['slider'] for r in rows})} sliders)")
    print(f"load average at end: {_load()}")
    if args.json:
        args.json.write_text(json.dumps({"load_end": _load(), "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
