"""Neural layers vs Algorithms 1 and 2 on the same LDS streams (Regions A and B).

    python simulations/lds_streams.py --quick      # CPU scale (part of the 15-minute quick set)
    python simulations/lds_streams.py --scale medium # every model trained to a plateau
    python simulations/lds_streams.py              # paper scale (a GPU helps)

Prints the summary numbers and the wall time; figures and summary.json go to OUT/lds-streams/.
"""

import lds_toolkit

if __name__ == "__main__":
    lds_toolkit.run_script("lds-streams", description=__doc__.splitlines()[0])
