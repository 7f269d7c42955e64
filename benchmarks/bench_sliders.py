"""Warm time of every lesson slider's callback, against rebuilding its figure from scratch.

    python benchmarks/bench_sliders.py [--repeat 5] [--json out.json]

Finds every slider the teaching package registers (``registered_sliders()``: the
``lds_toolkit.teaching.lessonNN`` modules, lesson 8 when torch is installed) and, for each
parameter at three values (its ends and middle, as the headless tests), times the callback a
widget runs on a move, ``SliderApp.render`` (redraw + PNG), warm: the app is built and rendered
once first, and each value is rendered ``repeat`` times, best wall time and its CPU time
reported. The baseline, in the same run, is the cold route a naive slider takes on every
move: a new figure, its axes built again, drawn and rendered (``SliderApp(name).render``).
The budget is 100 ms of CPU per warm callback (issues 36 and 45), with numba and without:
the same moves are timed again in a child interpreter with ``NUMBA_DISABLE_JIT=1`` (numba's
own switch; every compiled core then runs its plain-Python form, as when numba is missing),
warm only. The tables mark any callback above the budget; the last lines give the largest
CPU time per slider with numba and without. Timings depend on the machine's load, printed at
the start and the end.
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


def run(repeat: int = 5, cold: bool = True) -> list[dict]:
    from lds_toolkit.teaching import SliderApp, registered_sliders

    rows = []
    for name, spec in registered_sliders().items():
        app = SliderApp(name)
        app.render()  # warm: imports, first draw, numba compiles
        for key, param in spec.params.items():
            for value in param.values(3):
                move = {key: value}
                wall, cpu = _best(functools.partial(app.render, **move), repeat)
                row = {"slider": name, "param": key, "value": value, "warm_ms": wall,
                       "warm_cpu_ms": cpu}
                if cold:
                    row["cold_ms"] = _best(functools.partial(_cold, name, move),
                                           max(1, repeat // 2))[0]
                rows.append(row)
            app.render(**{key: param.default})
    return rows


def run_without_numba(repeat: int) -> list[dict]:
    """:func:`run` (warm only) in a child interpreter with ``NUMBA_DISABLE_JIT=1``."""
    import subprocess
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "rows.json"
        env = dict(os.environ, NUMBA_DISABLE_JIT="1")
        subprocess.run([sys.executable, "-W", "ignore", __file__, "--child", str(out),
                        "--repeat", str(repeat)], env=env, check=True)
        return json.loads(out.read_text())


def _table(rows: list[dict], title: str) -> None:
    print(title)
    cold = "cold_ms" in rows[0]
    print(f"{'slider':19s} {'parameter':9s} {'value':>10s} {'warm ms':>8s} {'(CPU)':>7s}"
          + (f" {'cold ms':>8s} {'cold/warm':>9s}" if cold else ""))
    for r in rows:
        flag = "  OVER BUDGET" if r["warm_cpu_ms"] > BUDGET_MS else ""
        extra = f" {r['cold_ms']:8.1f} {r['cold_ms'] / r['warm_ms']:9.1f}" if cold else ""
        print(f"{r['slider']:19s} {r['param']:9s} {r['value']:10.4g} {r['warm_ms']:8.1f} "
              f"{r['warm_cpu_ms']:7.1f}{extra}{flag}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--json", type=Path, help="also write the rows as JSON")
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)  # the numba-free run
    args = parser.parse_args(argv)
    if args.child:
        args.child.write_text(json.dumps(run(args.repeat, cold=False)))
        return 0
    print(f"load average at start: {_load()} on {os.cpu_count()} cores")
    rows = run(args.repeat)
    plain = run_without_numba(args.repeat)
    _table(rows, "with numba (warm: the callback of a move; cold: a new figure each move)")
    _table(plain, "without numba (NUMBA_DISABLE_JIT=1, warm)")
    print(f"largest CPU ms per move (budget {BUDGET_MS:.0f} ms): slider, with numba, "
          "without numba")
    for name in dict.fromkeys(r["slider"] for r in rows):
        a = max(r["warm_cpu_ms"] for r in rows if r["slider"] == name)
        b = max(r["warm_cpu_ms"] for r in plain if r["slider"] == name)
        print(f"  {name:19s} {a:6.1f} {b:6.1f}")
    over = [r for r in rows + plain if r["warm_cpu_ms"] > BUDGET_MS]
    worst = max(rows + plain, key=lambda r: r["warm_cpu_ms"])
    print(f"slowest warm callback: {worst['slider']} ({worst['param']} = "
          f"{worst['value']:.4g}) {worst['warm_cpu_ms']:.1f} ms CPU; budget "
          f"{BUDGET_MS:.0f} ms: {'met' if not over else f'NOT met ({len(over)} moves)'} "
          f"({len(rows)} callbacks with numba and {len(plain)} without, "
          f"{len({r['slider'] for r in rows})} sliders)")
    print(f"load average at end: {_load()}")
    if args.json:
        args.json.write_text(json.dumps({"load_end": _load(), "rows": rows,
                                         "rows_without_numba": plain}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
