"""Why context T^{7/8} can still lose on a Region A seed at T = 2^14: the truncation floor.

For the systems of ``lengen-region-a`` (same draw: seed s is ``task_rng(seed, s)``), this
computes, from the true system alone, what Algorithm 1's predictor with context L misses
even with the true coefficients. With D = 0 and ``output="lengen"``, y_t - y_{t-1} has
coefficient h_j = C A^{j-1}(A - I) B on u_{t-1-j} (j >= 1); a context L drops j >= L, whose
variance for white unit inputs is, per pair of eigenvalues of the symmetric A,

    F_L = sum_{i,k} b_i b_k (1 - a_i)(1 - a_k) (a_i a_k)^{L-1} / (1 - a_i a_k),

with b_i = (C v_i)(v_i^T B). Only Region A's *left* part contributes (the right part's
1 - a <= 1/(2 T^{5/4}) is handled by the filters over the whole horizon). Theorem 5 calls that
part safe because an eigenvalue 1 - delta is forgotten after ~1/delta steps and T^q >>
8 T^q / log T; at T = 2^14 the factor log T / 8 is only 1.2, so the slowest left-part mode
keeps e^{-delta L} of its weight beyond the context. Pass ``--summary`` to print the
experiment's per-seed best-in-hindsight loss of the class Pi_{T^q} next to it.

Run: ``python simulations/lengen_truncation_floor.py [--seeds 8]
[--summary figures-full/lengen-region-a/summary.json]``
"""

import argparse
import json

import numpy as np

import lds_toolkit as lt
from lds_toolkit.experiments import task_rng


def floor_table(T=2**14, n=512, seeds=8, qs=(0.75, 0.875), seed=0):
    regions = lt.eigenvalue_regions(T, 7 / 8)
    rows = []
    for s in range(seeds):
        system = lt.random_lds(n, list(regions.region_a), symmetric=True,
                               rng=task_rng(seed, s))
        a, V = np.linalg.eigh(system.A)
        b = (system.C @ V)[0] * (V.T @ system.B)[:, 0]
        left = a < regions.region_a[1].low
        w, al = b[left] * (1 - a[left]), a[left]
        P = np.outer(al, al)
        row = {"seed": s, "slowest_left_1_minus_a": float(1 - al.max())}
        for q in qs:
            L = int(min(T, np.ceil(T**q - 1e-9)))
            row[f"floor_{q:g}"] = float(np.sum(np.outer(w, w) * P ** (L - 1) / (1 - P)))
            row[f"kept_{q:g}"] = float(al.max() ** L)
        rows.append(row)
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=8)
    parser.add_argument("--summary", default=None, help="lengen-region-a summary.json")
    args = parser.parse_args()
    hind = None
    if args.summary:
        with open(args.summary) as fh:
            per_q = json.load(fh)["per_q"]
        hind = {q: per_q[q]["hindsight_final_loss_per_seed"] for q in ("0.75", "0.875")}
    print("seed  1-a (slowest left)  e^{-dL} at 7/8  floor 3/4   floor 7/8"
          + ("   hindsight 3/4  hindsight 7/8" if hind else ""))
    for r in floor_table(seeds=args.seeds):
        line = (f"{r['seed']:4d}  {r['slowest_left_1_minus_a']:.2e}            "
                f"{r['kept_0.875']:.2f}            {r['floor_0.75']:.1e}     "
                f"{r['floor_0.875']:.1e}")
        if hind:
            line += f"     {hind['0.75'][r['seed']]:.1e}        {hind['0.875'][r['seed']]:.1e}"
        print(line)


if __name__ == "__main__":
    main()
