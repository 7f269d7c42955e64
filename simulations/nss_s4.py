"""S4-LegS, S4D, S4+ on sin(5 pi t) with perturbed sampling instants (S4++ Sec. 2.3, Figs. 2, 4).

    python simulations/nss_s4.py --quick      # CPU scale (part of the 15-minute quick set)
    python simulations/nss_s4.py --scale medium # every model trained to a plateau
    python simulations/nss_s4.py              # paper scale (a GPU helps)

Prints the summary numbers and the wall time; figures and summary.json go to OUT/nss-s4/.
"""

import lds_toolkit

if __name__ == "__main__":
    lds_toolkit.run_script("nss-s4", description=__doc__.splitlines()[0])
