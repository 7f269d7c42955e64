"""Benchmark: the spectral filters as a small LDS, ours against SpectraLDS's construction.

Both constructions realise the filters of ``spectral_filters(T, k, kind)`` (both branches:
the k filters phi and the k filters phi (-1)^t, as the STU uses them) by one LDS with a
diagonal A of real decays, B = 1 and D = phi[0]; both are judged by the relative L2 error
of every filter over all T taps, computed here from the dense taps.

* **ours**: :func:`lds_toolkit.filters_as_lds` (``branch="both"``, ``cache=False``; the
  filters themselves computed once beforehand and shared);
* **SpectraLDS** (Shah, Fortgang, Druchyna, Hazan; NeurIPS 2025, arXiv 2505.17868),
  re-implemented from its description: a dictionary of 10,000 random decays
  alpha = ±(1 - r^4), r uniform in (0, 1), random signs; simultaneous orthogonal matching
  pursuit (at each step the atom whose normalised column has the largest correlation with
  the 2k residuals, in L2 over the filters), each step followed by the least-squares refit
  on the chosen support; stopped at *our* state dimension. Its correlations are updated with
  the closed-form Gram column sum_t alpha_i^t alpha_j^t = (1 - (alpha_i alpha_j)^L) /
  (1 - alpha_i alpha_j) and an incremental Gram-Schmidt basis of the support, so one step
  costs O(10,000 n + T n) after a single O(T 10,000 k) product: the same selections and fits
  as the textbook loop, far faster.

Also written: the error against the state dimension (ours over a range of ``tol``, theirs
along the pursuit), our targets at T = 2^20 (ours alone: the pursuit's dense product would
be 2^20 x 10,000 x 48), and a figure of filters beside their LDS impulse responses.

Timings are wall times on whatever else the machine is doing (the load is printed and
stored); compare the two constructions within one run.

Run: ``python benchmarks/filters_lds.py [--quick] [--json PATH] [--figure PATH]``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
import warnings
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

from lds_toolkit._threads import one_thread
from lds_toolkit.learning import FilterPrecisionWarning, filters_as_lds, spectral_filters

warnings.simplefilter("ignore", FilterPrecisionWarning)

ROOT = Path(__file__).resolve().parents[1]
N_DICT = 10_000
TOLS = (1e-2, 3e-3, 1e-3, 3e-4, 1e-4, 3e-5, 1e-5, 3e-6, 1e-6)


def load() -> list[float]:
    return [round(v, 2) for v in os.getloadavg()]


def errors_of(phi: np.ndarray, lam: np.ndarray, C: np.ndarray) -> np.ndarray:
    """Relative L2 error per filter of h_0 = phi[0], h_t = sum_i C[i] lam_i^{t-1}."""
    T = phi.shape[0]
    E = np.power.outer(lam, np.arange(T - 1, dtype=np.float64)).T  # (T - 1, n)
    r = phi[1:] - E @ C
    return np.linalg.norm(r, axis=0) / np.linalg.norm(phi, axis=0)


def ours(T: int, k: int, kind: str, tol: float = 1e-6):
    t0 = time.perf_counter()
    lds = filters_as_lds(T, k, kind, branch="both", tol=tol, cache=False)
    seconds = time.perf_counter() - t0
    return lds, seconds


def spectralds_omp(phi2: np.ndarray, n_states: int, rng: np.random.Generator,
                   record: set[int] = frozenset()):
    """SpectraLDS's construction (module docstring) on the (T, 2k) targets ``phi2``: decays
    (n,), coefficients (n, 2k) of h_t = sum_i C[i] lam_i^{t-1} (t >= 1), the worst and median
    residual at every pursuit length in ``record``, and the seconds taken."""
    t0 = time.perf_counter()
    T = phi2.shape[0]
    L = T - 1
    r = rng.uniform(0.0, 1.0, N_DICT)
    lam = (1.0 - r**4) * rng.choice([-1.0, 1.0], N_DICT)
    lam = np.clip(lam, -1 + 1e-12, 1 - 1e-12)
    norms = np.sqrt(-np.expm1(L * np.log(lam * lam)) / (1.0 - lam * lam))
    Y = phi2[1:] / np.linalg.norm(phi2, axis=0)
    # E^T Y for the normalised dictionary, by blocks of atoms (never the whole T x 10,000)
    EtY = np.empty((N_DICT, Y.shape[1]))
    j = np.arange(L, dtype=np.float64)
    for a0 in range(0, N_DICT, 500):
        a1 = min(N_DICT, a0 + 500)
        blk = np.power.outer(lam[a0:a1], j)  # (atoms, L), alternating signs stay exact
        EtY[a0:a1] = (blk @ Y) / norms[a0:a1, None]
    Q = np.zeros((L, 0))
    P = np.zeros((N_DICT, 0))  # E^T Q
    QtY = np.zeros((0, Y.shape[1]))
    support: list[int] = []
    path = {}
    used = np.zeros(N_DICT, dtype=bool)
    while len(support) < n_states:
        corr = EtY - P @ QtY  # E^T (Y - Q Q^T Y)
        score = np.sum(corr * corr, axis=1)
        score[used] = -1.0
        for i in np.argsort(score)[::-1]:  # the best atom not numerically in the span
            used[i] = True
            e = lam[i] ** j / norms[i]
            q = e - Q @ (Q.T @ e)
            q -= Q @ (Q.T @ q)  # twice is enough
            nq = np.linalg.norm(q)
            if nq >= 1e-10:  # else a near-twin of a chosen atom (they are common)
                break
        support.append(int(i))
        q /= nq
        # E^T q = (E^T e - P Q^T e) / |.|, E^T e the closed-form Gram column
        s = lam * lam[i]
        logs = L * np.log(np.abs(s))
        num = np.where(s > 0, -np.expm1(logs), 1.0 - (-1.0) ** L * np.exp(logs))  # 1 - s^L
        g = num / (1.0 - s) / (norms * norms[i])
        Qte = Q.T @ e
        P = np.hstack([P, ((g - P @ Qte) / nq)[:, None]])
        Q = np.hstack([Q, q[:, None]])
        QtY = np.vstack([QtY, q @ Y])
        if len(support) in record and len(support) < n_states:  # refit, exact residual
            E = np.power.outer(lam[support], j).T
            C, *_ = np.linalg.lstsq(E, Y, rcond=None)
            res = np.linalg.norm(Y - E @ C, axis=0)
            path[len(support)] = (float(res.max()), float(np.median(res)))
    # the least-squares refit on the chosen support, in the unnormalised basis
    E = np.power.outer(lam[support], j).T
    C, *_ = np.linalg.lstsq(E, phi2[1:], rcond=None)
    seconds = time.perf_counter() - t0
    res = errors_of(phi2, lam[support], C)
    path[n_states] = (float(res.max()), float(np.median(res)))
    return lam[support], C, path, seconds


def compare(T: int, k: int, kind: str, seed: int, out: dict) -> None:
    t0 = time.perf_counter()
    _, phi2 = spectral_filters(T, k, kind, branch="both")
    t_filters = time.perf_counter() - t0
    with one_thread():
        lds, t_ours = ours(T, k, kind)
        n = lds.n_states
        # the pursuit path at the state dimensions our tol sweep reaches
        sweep = []
        for tol in TOLS:
            fit = filters_as_lds(T, k, kind, branch="both", tol=tol, cache=False).fit_report
            sweep.append({"tol": tol, "n_states": fit.n_states,
                          "worst": fit.max_error, "median": float(np.median(fit.errors))})
        record = {s["n_states"] for s in sweep} | {n}
        lam, C, path, t_theirs = spectralds_omp(phi2, n, np.random.default_rng(seed), record)
    e_ours = errors_of(phi2, np.diag(np.asarray(lds.A)), np.asarray(lds.C).T)
    e_theirs = errors_of(phi2, lam, C)
    row = {
        "T": T, "k": k, "kind": kind, "n_states": n, "filters_seconds": t_filters,
        "ours": {"worst": float(e_ours.max()), "median": float(np.median(e_ours)),
                 "seconds": t_ours},
        "spectralds": {"worst": float(e_theirs.max()), "median": float(np.median(e_theirs)),
                       "seconds": t_theirs, "dictionary": N_DICT, "seed": seed},
        "sweep": {"ours": sweep,
                  "spectralds": [{"n_states": m, "worst": w, "median": md}
                                 for m, (w, md) in sorted(path.items())]},
    }
    out.setdefault(kind, {})[str(T)] = row  # quoted as comparison/KIND/T/...
    print(f"T={T:>7} k={k} {kind}  n={n:>3}  ours: worst {row['ours']['worst']:.2e} "
          f"median {row['ours']['median']:.2e} {t_ours:6.2f} s | SpectraLDS OMP: worst "
          f"{row['spectralds']['worst']:.2e} median {row['spectralds']['median']:.2e} "
          f"{t_theirs:6.2f} s | filters {t_filters:.2f} s", flush=True)
    for s in sweep:
        m = s["n_states"]
        th = path.get(m, (float("nan"),) * 2)
        print(f"    n={m:>3}: ours worst {s['worst']:.2e} | SpectraLDS worst {th[0]:.2e}")


def targets(T: int, k: int, kind: str, out: dict) -> None:
    """Ours alone (per branch and both), errors checked by the fit on all T taps."""
    t0 = time.perf_counter()
    spectral_filters(T, k, kind)
    t_filters = time.perf_counter() - t0
    with one_thread():
        t0 = time.perf_counter()
        lds = filters_as_lds(T, k, kind, cache=False)
        seconds = time.perf_counter() - t0
    rep = lds.fit_report
    out.setdefault(kind, {})[str(T)] = {
        "T": T, "k": k, "kind": kind, "n_states_per_branch": rep.n_states,
        "worst": rep.max_error, "median": float(np.median(rep.errors)),
        "seconds": seconds, "filters_seconds": t_filters}
    print(f"T={T:>7} k={k} {kind}  ours: {rep.n_states} states per branch, worst "
          f"{rep.max_error:.2e}, median {np.median(rep.errors):.2e}, {seconds:.2f} s "
          f"(filters {t_filters:.2f} s)", flush=True)


def figure(T: int, k: int, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    _, phi = spectral_filters(T, k, "H")
    lds = filters_as_lds(T, k, "H")
    h = lds.impulse_response(T)[:, :, 0]
    t = np.arange(T)
    picks = [0, 3, 11, k - 1]
    fig, axes = plt.subplots(2, 1, figsize=(8, 6), sharex=True)
    for i in picks:
        (line,) = axes[0].plot(t[1:], phi[1:, i], lw=2.5, alpha=0.35, label=f"phi_{i + 1}")
        axes[0].plot(t[1:], h[1:, i], lw=0.9, ls="--", color=line.get_color())
        axes[1].plot(t[1:], np.abs(h[1:, i] - phi[1:, i]), lw=0.8, color=line.get_color(),
                     label=f"|h - phi_{i + 1}|")
    axes[0].set_xscale("log")
    axes[0].set_ylabel("tap value")
    axes[0].set_title(f"H_T filters (thick), filters_as_lds impulse response (dashed): "
                      f"T = {T}, {lds.n_states} states", fontsize=10)
    axes[0].legend(fontsize=8, ncol=4)
    axes[1].set_yscale("log")
    axes[1].set_xlabel("tap t (log scale)")
    axes[1].set_ylabel("absolute error")
    axes[1].legend(fontsize=8, ncol=4)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    print(f"figure: {path}")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="T = 4096 only, no 2^20")
    p.add_argument("--json", type=Path, help="write the results here")
    p.add_argument("--figure", type=Path, help="write the figure here")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    start = load()
    print(f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, load "
          f"average (1, 5, 15 min) at start: {start}; numpy {np.__version__}; one BLAS "
          "thread for both constructions")
    k = 24
    comp: dict = {}
    tgt: dict = {}
    sizes = (4096,) if args.quick else (8192, 2**14)
    for T in sizes:
        for kind in ("H", "N"):
            compare(T, k, kind, args.seed, comp)
    if not args.quick:
        for kind in ("H", "N"):
            targets(2**20, k, kind, tgt)
    end = load()
    print(f"load average at end: {end}")
    if args.figure:
        figure(2**14 if not args.quick else 4096, k, args.figure)
    if args.json:
        args.json.write_text(json.dumps({
            "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "machine": f"{platform.machine()}, {os.cpu_count()} cores",
            "load_start": start, "load_end": end, "quick": args.quick,
            "comparison": comp, "targets": tgt}, indent=1) + "\n")
        print(f"json: {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
