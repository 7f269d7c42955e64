"""The S4++ cloze toy: attention, S4 and their sum (S4++ paper Sec. 3.2, Table 1).

    python simulations/cloze.py --quick      # CPU scale (part of the 15-minute quick set)
    python simulations/cloze.py --scale medium # every model trained to a plateau
    python simulations/cloze.py              # paper scale (a GPU helps)

Prints the summary numbers and the wall time; figures and summary.json go to OUT/cloze/.
"""

import lds_toolkit

if __name__ == "__main__":
    lds_toolkit.run_script("cloze", description=__doc__.splitlines()[0])
