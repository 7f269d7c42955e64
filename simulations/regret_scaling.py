"""Asymmetric-Regret at T against T for Algorithms 1 and 2 on Regions A and B, contexts T^q
(Theorems 5 and 6: O~(sqrt T)), and the class-level context gap.

Run: ``python simulations/regret_scaling.py [--quick] [--out figures] [--jobs 2]``.
"""

import lds_toolkit

SETUPS = ("alg1-regionA", "alg1-regionB", "alg2-regionA", "alg2-regionB")


def describe(res):
    s = res.summary
    print(f"T = {s['T_values']}; slope of sqrt(T) log T over them: {s['bound_slope']:.2f}")
    for setup in SETUPS:
        for q, e in s[setup].items():
            slope = "n/a" if e.get("slope") is None else \
                f"{e['slope']:.2f} ± {e['slope_stderr']:.2f}"
            print(f"  {setup}, context T^{q}: regret at T = {e['regret_at_T']:.3g}, "
                  f"log-log slope {slope}, context gap at T = {e['context_gap_at_T']:.3g}")


if __name__ == "__main__":
    lds_toolkit.run_script("regret-scaling", describe, description=__doc__.splitlines()[0])
