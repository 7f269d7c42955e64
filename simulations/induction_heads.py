"""STU on induction heads trained at length n, evaluated at 1x-16x n (length gen., Fig. 5).

    python simulations/induction_heads.py --quick      # CPU scale (part of the 15-minute quick set)
    python simulations/induction_heads.py --scale medium # every model trained to a plateau
    python simulations/induction_heads.py              # paper scale (a GPU helps)

Prints the summary numbers and the wall time; figures and summary.json go to OUT/induction-heads/.
"""

import lds_toolkit

if __name__ == "__main__":
    lds_toolkit.run_script("induction-heads", description=__doc__.splitlines()[0])
