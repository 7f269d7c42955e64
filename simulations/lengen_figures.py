"""Figures 1-4 of the length-generalization paper (eigenvalue regions, Algorithm 1 on
Regions A and B, Algorithm 2 on Region B) through the experiment runner.

Run: ``python simulations/lengen_figures.py [--quick] [--out figures] [--jobs 2]``; each
experiment writes ``OUT/NAME/summary.json``, ``arrays.npz`` and PNG/PDF figures.
"""

import lds_toolkit

NAMES = ("lengen-regions", "lengen-region-a", "lengen-region-b", "lengen-alg2")


def describe(res):
    for q, e in res.summary.get("per_q", {}).items():
        if "final_loss" in e:
            ratio = e.get("final_loss_ratio_to_full", float("nan"))
            print(f"  q = {q:>5}: final loss {e['final_loss']:.3e} ({ratio:.3g}x full), best "
                  f"in hindsight {e['hindsight_final_loss']:.3e}, asym. regret "
                  f"{e['asymmetric_regret']:.3g}")
    if "step_sizes" in res.summary and "per_q" in res.summary:
        print(f"  step sizes per seed: {res.summary['step_sizes']}")


if __name__ == "__main__":
    lds_toolkit.run_script(NAMES, describe, description=__doc__.splitlines()[0])
