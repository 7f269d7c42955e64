"""Benchmark: the online learners at stream speed (issue 44), in one run.

1. Per-step time (``predict_one`` + ``learn_one``, river's dicts, 6 features) against t, for
   t = 10^2 .. 10^5: ``SpectralFiltering`` (the river twin, default horizon T = 2^14 and
   k = 24) with ``filters="exact"`` and ``filters="lds"``, river's ``LinearRegression`` and
   ``SNARIMAX(1, 1, 1)`` (``learn_one`` + ``forecast(1)``).  Every model streams from t = 0
   to 10^5 and a block of steps is timed at each t; the exact route, at about 2 ms a step,
   is fast-forwarded to each t by ``fit_predict`` over the first t steps (the batch path
   leaves the streaming state; its per-step cost does not depend on t, the window is L).
   Ratios to ``LinearRegression`` are per-step times of the same run.
2. The LDS route against the exact one: per-filter relative RMS of the features and the
   relative RMS of the predictions and of the prediction errors (``fit_predict``, 10^4 steps).
3. Error against state dimension: ``filters_as_lds(2^14, 24, kind)`` at several tolerances,
   cold (``cache=False``): states, worst per-filter error, construction seconds.
4. MAE on river's shipped real streams, TrumpApproval, AirlinePassengers (its date dropped:
   ``x = {}``, a feature-less stream) and ChickWeights: ``progressive_val_score`` (river's
   regressors; SNARIMAX is a forecaster and takes the same predict-then-learn loop by hand),
   and the same loop scored from t >= 1 (our twins predict 0.0 before any target; river's
   ``Shift`` and ``SNARIMAX`` return None there, which the metric skips).
5. Per-step time of the exact window and the LDS route against the context L: where
   ``filters="auto"`` switches (and which route it takes at each L).

Prints the machine and its load; ``--json PATH`` writes every number (the committed run is
``docs/results/cpu-evidence/streaming.json``, quoted by ``docs/learning/streaming.md``).
Run: ``python benchmarks/streaming.py [--quick] [--json PATH]`` (a few minutes; ``--quick``:
t up to 10^4, fewer tolerances); ``--plot JSON PNG`` draws the page's figure from a run;
``--compare-runs EXACT LDS --json PATH`` judges the claims of two ``lds-toolkit reproduce``
output roots (``--set filters=exact`` and ``--set filters=lds``) and compares their numbers
(the committed comparison is ``docs/results/cpu-evidence/streaming_filters_lds_quick.json``).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # this checkout's package, not an installed one

from lds_toolkit.learning import FilterPrecisionWarning  # noqa: E402
from lds_toolkit.learning.filters_lds import filters_as_lds  # noqa: E402

warnings.simplefilter("ignore", FilterPrecisionWarning)
FEATURES = [f"f{i}" for i in range(6)]


def _machine() -> dict:
    import numba
    import river

    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as fh:
            cpu = next(line.split(":", 1)[1].strip() for line in fh
                       if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return {"cpu": cpu, "cores": os.cpu_count(), "python": platform.python_version(),
            "numpy": np.__version__, "numba": numba.__version__, "river": river.__version__}


def _load() -> list[float]:
    return [round(v, 2) for v in os.getloadavg()]


def synthetic_stream(n: int, seed: int = 0):
    """6 input features (standard normal) and a target from a random stable LDS (lengen
    convention) plus noise: the dicts river passes, and the arrays."""
    from lds_toolkit.systems import random_lds, simulate

    rng = np.random.default_rng(seed)
    u = rng.standard_normal((n, 6))
    system = random_lds(8, [(0.5, 0.999)], d_in=6, rng=seed)
    y = simulate(system, u, output="lengen").y[:, 0] + 0.1 * rng.standard_normal(n)
    xs = [dict(zip(FEATURES, map(float, row))) for row in u]
    return xs, [float(v) for v in y], u, y


class _Snarimax:
    """SNARIMAX(1, 1, 1) in the predict-then-learn loop (a forecaster: no features)."""

    def __init__(self):
        from river import time_series

        self.model = time_series.SNARIMAX(p=1, d=1, q=1)

    def predict_one(self, x):
        try:
            return self.model.forecast(horizon=1)[0]
        except (ValueError, IndexError, ZeroDivisionError):
            return None

    def learn_one(self, x, y):
        self.model.learn_one(y)


def _models():
    from river import linear_model

    from lds_toolkit.learning import river as rl

    return {"lds": lambda: rl.SpectralFiltering(filters="lds"),
            "exact": lambda: rl.SpectralFiltering(filters="exact"),
            "linear_regression": linear_model.LinearRegression,  # river's
            "snarimax": _Snarimax}  # river's SNARIMAX(1, 1, 1)


def _time_block(model, xs, ys, start: int, steps: int) -> float:
    t0 = time.perf_counter()
    for i in range(start, start + steps):
        model.predict_one(xs[i])
        model.learn_one(xs[i], ys[i])
    return (time.perf_counter() - t0) / steps


def per_step_times(checkpoints, block: int, exact_block: int) -> dict:
    n = checkpoints[-1] + block + 1
    xs, ys, u, y = synthetic_stream(n)
    out: dict = {}
    for name, make in _models().items():
        times = {}
        if name == "exact":
            for t in checkpoints:
                model = make()
                if t:
                    model.fit_predict(u[:t], y[:t])  # fast-forward: the state after t steps
                    codec = model._codecs[0]  # read the dicts as the stream's names again
                    codec.kind, codec.keys, codec.dim = "dict", sorted(FEATURES), 6
                    model._codecs[1].kind = "scalar"
                _time_block(model, xs, ys, t, 3)  # compile, caches
                times[str(t)] = _time_block(model, xs, ys, t + 3, exact_block)
        else:
            model, pos = make(), 0
            _time_block(model, xs, ys, 0, 3)
            pos = 3
            for t in checkpoints:
                _time_block(model, xs, ys, pos, t - pos)  # stream up to t (not timed)
                times[str(t)] = min(_time_block(model, xs, ys, t + i * block // 4, block // 4)
                                    for i in range(4))
                pos = t + block
        out[name] = times
        print(f"  {name:24s} " + "  ".join(f"t={t}: {1e6 * s:8.1f} us"
                                              for t, s in times.items()), flush=True)
    lr = out["linear_regression"]
    out["ratio_lds_to_linear_regression"] = {t: out["lds"][t] / lr[t] for t in lr}
    out["ratio_exact_to_linear_regression"] = {t: out["exact"][t] / lr[t] for t in lr}
    return out


def crossover(block: int = 300) -> dict:
    """Per-step time of the exact window and the LDS route against the context L (k = 8 up
    to L = 1024, then 16 and 24), in the same loop: where ``filters="auto"`` should switch;
    and which route ``auto`` takes there."""
    from lds_toolkit.learning import river as rl

    xs, ys, _, _ = synthetic_stream(1200 + 3 * block, seed=2)
    out: dict = {}
    for L, k in ((64, 8), (128, 8), (256, 8), (512, 8), (1024, 8), (2048, 16), (4096, 24)):
        row: dict = {"k": k}
        for route in ("exact", "lds"):
            model = rl.SpectralFiltering(horizon=L, k=k, filters=route)
            try:
                _time_block(model, xs, ys, 0, 1200)
            except ValueError:  # no realization within the tolerance
                row[route] = None
                continue
            row[route] = min(_time_block(model, xs, ys, 1200 + i * block, block)
                             for i in range(3))
            if route == "lds":
                row["states"] = int(model._bank.n)
        auto = rl.SpectralFiltering(horizon=L, k=k)
        row["auto"] = "exact" if auto._streaming_bank() is None else "lds"
        out[str(L)] = row
        print(f"  L={L:5d}, k={k:2d}: exact {1e6 * row['exact']:7.1f} us, lds "
              + (f"{1e6 * row['lds']:6.1f} us ({row['states']} states)" if row["lds"]
                 else "no realization") + f"; auto takes {row['auto']}", flush=True)
    return out


def _rel_rms(a, b) -> float:
    return float(np.sqrt(np.mean((a - b) ** 2)) / np.sqrt(np.mean(b ** 2)))


def route_errors(n: int) -> dict:
    from lds_toolkit.learning import SpectralFiltering, SpectralFilteringAR2

    _, _, u, y = synthetic_stream(n, seed=1)
    out = {}
    for cls in (SpectralFiltering, SpectralFilteringAR2):
        for context in (None, 1000):
            kw = dict(context=context, lr=0.5, lr_schedule="normalized")
            exact, lds = cls(filters="exact", **kw), cls(filters="lds", **kw)
            Xe, Xl = exact.design(u, y)[0], lds.design(u, y)[0]
            per = np.sqrt(np.mean((Xl - Xe) ** 2, axis=(0, 2)) / np.mean(Xe ** 2, axis=(0, 2)))
            pe, pl = exact.fit_predict(u, y)[:, 0], lds.fit_predict(u, y)[:, 0]
            key = f"{'sf' if cls is SpectralFiltering else 'ar2'}_{context or 'T'}"
            out[key] = {"features_worst_filter": float(per.max()),
                        "predictions": _rel_rms(pl, pe), "errors": _rel_rms(pl - y, pe - y),
                        "states": int(lds._bank.n)}
            print(f"  {cls.__name__}, context {context or 'T'}: features (worst filter) "
                  f"{per.max():.2e}, predictions "
                  f"{out[key]['predictions']:.2e}, errors {out[key]['errors']:.2e}, "
                  f"{lds._bank.n} states", flush=True)
    return out


def error_vs_states(tols) -> dict:
    out: dict = {}
    for kind in ("H", "N"):
        rows = []
        for tol in tols:
            t0 = time.perf_counter()
            try:
                lds = filters_as_lds(2**14, 24, kind, tol=tol, cache=False)
            except ValueError as exc:  # no realization reaches tol: say so in the results
                rows.append({"tol": tol, "failed": str(exc)})
                print(f"  {kind}: tol {tol:.0e}: {exc}", flush=True)
                continue
            rep = lds.fit_report
            rows.append({"tol": tol, "states": int(rep.n_states),
                         "max_error": float(rep.max_error),
                         "median_error": float(np.median(rep.errors)),
                         "seconds": time.perf_counter() - t0})
            print(f"  {kind}: tol {tol:.0e}: {rep.n_states} states, worst {rep.max_error:.2e}, "
                  f"{rows[-1]['seconds']:.2f} s", flush=True)
        out[kind] = rows
    return out


def _stream_of(name: str):
    from river import datasets

    data = {"TrumpApproval": datasets.TrumpApproval, "ChickWeights": datasets.ChickWeights,
            "AirlinePassengers": datasets.AirlinePassengers}[name]()
    if name == "AirlinePassengers":  # the date dropped: a feature-less stream
        return [({}, float(y)) for _, y in data]
    return [(x, float(y)) for x, y in data]


def real_streams() -> dict:
    from river import dummy, evaluate, linear_model, metrics, preprocessing, stats

    from lds_toolkit.learning import river as rl

    makers = {  # keys without spaces: the docs quote them as paths
        "sf_exact": lambda: rl.SpectralFiltering(filters="exact"),
        "sf_lds": lambda: rl.SpectralFiltering(filters="lds"),
        "ar2_exact": lambda: rl.SpectralFilteringAR2(filters="exact"),
        "ar2_lds": lambda: rl.SpectralFilteringAR2(filters="lds"),
        "last_value": rl.LastValue,  # ours
        "river_shift0": lambda: dummy.StatisticRegressor(stats.Shift(0)),  # the last value
        "river_mean": lambda: dummy.StatisticRegressor(stats.Mean()),
        "river_linear_regression": lambda: (preprocessing.StandardScaler()
                                            | linear_model.LinearRegression()),
        "river_snarimax": _Snarimax,  # SNARIMAX(1, 1, 1)
    }
    out: dict = {}
    for stream in ("TrumpApproval", "AirlinePassengers", "ChickWeights"):
        data = _stream_of(stream)
        res = {}
        for name, make in makers.items():
            row = {}
            if name != "river_snarimax":
                metric = evaluate.progressive_val_score(data, make(), metrics.MAE())
                row["progressive_val_score"] = float(metric.get())
            model, metric, t0 = make(), metrics.MAE(), time.perf_counter()
            for t, (x, y) in enumerate(data):
                p = model.predict_one(x)
                if t >= 1 and p is not None:
                    metric.update(y, p)
                model.learn_one(x, y)
            row["from_t1"] = float(metric.get())
            row["seconds"] = time.perf_counter() - t0
            res[name] = row
        out[stream] = res
        best = min(res, key=lambda k: res[k]["from_t1"])
        print(f"  {stream} ({len(data)} steps): " + "; ".join(
            f"{k} {v['from_t1']:.4g}" for k, v in res.items()) + f"  -> best: {best}",
            flush=True)
    return out


def _numbers(node, prefix=""):
    """Every finite number of a summary, by its path."""
    if isinstance(node, dict):
        for k, v in node.items():
            if k != "config":
                yield from _numbers(v, f"{prefix}{k}/")
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _numbers(v, f"{prefix}{i}/")
    elif isinstance(node, (int, float)) and not isinstance(node, bool) and np.isfinite(node):
        yield prefix.rstrip("/"), float(node)


def compare_runs(exact_root: Path, lds_root: Path) -> dict:
    """Each experiment's claims judged on the run with ``filters=exact`` and the run with
    ``--set filters=lds`` (the report marks an overridden run's verdicts "modified config";
    here both are judged as the claims read them), and the largest relative difference of
    the summaries' numbers."""
    from lds_toolkit.experiments.base import get_experiment
    from lds_toolkit.experiments.claims import evaluate_claim

    out: dict = {}
    names_a = {p.parent.name for p in exact_root.glob("*/summary.json")}
    names_b = {p.parent.name for p in lds_root.glob("*/summary.json")}
    for root, only in ((exact_root, names_a - names_b), (lds_root, names_b - names_a)):
        if only:
            print(f"  only in {root} (not compared): {', '.join(sorted(only))}")
    if not names_a & names_b:
        raise SystemExit(f"--compare-runs: no experiment has a summary.json in both {exact_root} "
                         f"and {lds_root}")
    for name in sorted(names_a & names_b):
        a = json.loads((exact_root / name / "summary.json").read_text())
        b = json.loads((lds_root / name / "summary.json").read_text())
        claims = {}
        for claim in get_experiment(name).claims:
            ra, rb = evaluate_claim(claim, a), evaluate_claim(claim, b)
            claims[claim.id] = {"exact": ra.verdict, "lds": rb.verdict,
                                "expected_at_quick": ra.expected}
        na, nb = dict(_numbers(a)), dict(_numbers(b))
        diffs = {k: abs(nb[k] - v) / max(abs(v), abs(nb[k])) for k, v in na.items()
                 if k in nb and max(abs(v), abs(nb[k])) > 0}
        worst = max(diffs, key=diffs.get)
        changed = [c for c, v in claims.items() if v["exact"] != v["lds"]]
        out[name] = {"claims": claims, "verdicts_changed": len(changed),
                     "n_claims": len(claims), "n_numbers": len(diffs),
                     "largest_relative_difference": diffs[worst], "largest_at": worst,
                     "median_relative_difference": float(np.median(list(diffs.values())))}
        print(f"  {name}: {len(claims)} claims, {len(changed)} verdicts changed "
              f"{changed or ''}; largest relative difference {diffs[worst]:.2g} at {worst}")
    return out


def plot(results: dict, path: Path) -> None:
    """Three panels from a run's JSON: per-step time against t, error against state
    dimension, and the filters beside their LDS impulse responses (recomputed: tol 1e-6)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from lds_toolkit.learning import spectral_filters
    from lds_toolkit.systems import simulate

    fig, ax = plt.subplots(1, 3, figsize=(15, 4.2))
    steps = results["per_step_s"]
    labels = {"exact": "SpectralFiltering (exact)", "lds": "SpectralFiltering (lds)",
              "linear_regression": "river LinearRegression",
              "snarimax": "river SNARIMAX(1,1,1)"}
    for name, label in labels.items():
        ts = sorted(steps[name], key=int)
        ax[0].loglog([int(t) for t in ts], [1e6 * steps[name][t] for t in ts], "o-",
                     label=label)
    ax[0].set(xlabel="t (steps seen)", ylabel="µs per predict_one + learn_one",
              title="per-step time, 6 features, T = 2^14, k = 24")
    ax[0].legend(fontsize=8)
    for kind, marker in (("H", "o-"), ("N", "s--")):
        rows = [r for r in results["error_vs_states"][kind] if "states" in r]
        ax[1].semilogy([r["states"] for r in rows], [r["max_error"] for r in rows], marker,
                       label=f"{kind}_T, worst of 24 filters")
    ax[1].set(xlabel="states of the LDS", ylabel="relative L2 error per filter",
              title="filters_as_lds(2^14, 24): error against state dimension")
    ax[1].legend(fontsize=8)
    T = 2**14
    phi = spectral_filters(T, 24, "H")[1]
    lds = filters_as_lds(T, 24, "H", tol=1e-6)
    impulse = np.zeros(T)
    impulse[0] = 1.0
    h = simulate(lds, impulse).y
    j = np.arange(T)
    for i, color in zip((0, 5, 23), ("C0", "C1", "C2")):
        ax[2].semilogx(j + 1, phi[:, i], color=color, lw=3, alpha=0.35,
                       label=f"phi_{i + 1} (eigenvector)")
        ax[2].semilogx(j + 1, h[:, i], color=color, lw=1, ls="--",
                       label=f"LDS impulse response, output {i + 1}")
    ax[2].set(xlabel="tap j + 1", ylabel="value",
              title=f"filters and their LDS ({lds.fit_report.n_states} states, tol 1e-6)")
    ax[2].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    print(f"wrote {path}")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="t up to 10^4, fewer tolerances")
    p.add_argument("--json", type=Path, help="write the results here")
    p.add_argument("--plot", type=Path, nargs=2, metavar=("JSON", "PNG"),
                   help="only draw the figure of a run's JSON")
    p.add_argument("--compare-runs", type=Path, nargs=2, metavar=("EXACT", "LDS"),
                   help="only compare two output roots of `lds-toolkit reproduce` (the "
                        "same experiments with --set filters=exact and filters=lds)")
    args = p.parse_args(argv)
    if args.compare_runs:
        print(f"load average (1, 5, 15 min): {_load()}")
        res = {"date": time.strftime("%Y-%m-%d"),
               "experiments": compare_runs(*args.compare_runs)}
        if args.json:
            args.json.write_text(json.dumps(res, indent=1) + "\n")
            print(f"wrote {args.json}")
        return 0
    if args.plot:
        plot(json.loads(args.plot[0].read_text()), args.plot[1])
        return 0
    machine, load_start = _machine(), _load()
    print(f"machine: {machine}\nload average at start (1, 5, 15 min): {load_start}")
    checkpoints = [100, 1000, 10_000] + ([] if args.quick else [100_000])
    print("1. per-step time (predict_one + learn_one, 6 features, T = 2^14, k = 24)")
    steps = per_step_times(checkpoints, block=400, exact_block=20)
    for t, r in steps["ratio_lds_to_linear_regression"].items():
        print(f"  t={t}: lds / LinearRegression = {r:.2f}x (target <= 10x); exact / "
              f"LinearRegression = {steps['ratio_exact_to_linear_regression'][t]:.0f}x")
    print("2. the LDS route against the exact route (fit_predict, 6 features)")
    errors = route_errors(3000 if args.quick else 10_000)
    print("3. error against state dimension (filters_as_lds(2^14, 24), cold)")
    tols = [1e-3, 1e-5, 1e-6] if args.quick else [1e-2, 1e-3, 1e-4, 1e-5, 1e-6, 1e-7]
    states = error_vs_states(tols)
    print("4. MAE on river's shipped real streams")
    mae = real_streams()
    print("5. per-step time against the context: exact window and LDS route")
    cross = crossover()
    load_end = _load()
    print(f"load average at end (1, 5, 15 min): {load_end}")
    if args.json:
        args.json.write_text(json.dumps({
            "args": {"quick": args.quick}, "machine": machine, "load_start": load_start,
            "load_end": load_end, "date": time.strftime("%Y-%m-%d"), "per_step_s": steps,
            "route_errors": errors, "error_vs_states": states, "mae": mae,
            "crossover": cross}, indent=1) + "\n")
        print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
