"""No toolkit import or call changes matplotlib's global state (backend, rcParams).

In a notebook, a library that calls ``matplotlib.use`` or writes ``rcParams`` switches off the
inline plots of everything that follows. The check runs in a fresh interpreter (the backend
is process-wide): it picks a non-default backend and sets an rcParam the toolkit style also
sets, then imports the toolkit, lists the experiments, reproduces one (its figures are
written), uses every plotting helper, and compares.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

CODE = textwrap.dedent("""
    import json, sys
    import matplotlib
    matplotlib.use("svg")
    matplotlib.rcParams["font.size"] = 13.5          # the toolkit style sets 9
    matplotlib.rcParams["axes.spines.top"] = True   # ... and False
    matplotlib.rcParams["lines.linewidth"] = 3.25
    before = {k: repr(v) for k, v in matplotlib.rcParams.items()}

    import numpy as np
    import lds_toolkit as lt
    from lds_toolkit.experiments import plotting

    names = list(lt.list_experiments())
    res = lt.reproduce("lds-impulse", quick=True, out=sys.argv[1], progress=False)
    fig, axes = plotting.figure(1, 2, width=5.0)
    inside = matplotlib.rcParams["font.size"]
    with plotting.style():
        styled = matplotlib.rcParams["font.size"]
        plotting.band(axes[0], np.arange(4), np.ones((2, 4)), label="x")
        axes[0].legend()
    paths = plotting.save_figure(fig, sys.argv[1], "helper")
    plotting.smooth(np.arange(5.0), 2)
    after = {k: repr(v) for k, v in matplotlib.rcParams.items()}
    print(json.dumps({
        "backend": matplotlib.get_backend(),
        "changed": sorted(k for k in before if before[k] != after.get(k)),
        # python-control (imported by lds_toolkit since LDS subclasses its StateSpace)
        # imports pyplot; the toolkit's figures must still never be pyplot's
        "pyplot_figures": (sys.modules["matplotlib.pyplot"].get_fignums()
                           if "matplotlib.pyplot" in sys.modules else []),
        "figures": [str(p) for p in res.figures + paths],
        "n": len(names), "inside": inside, "styled": styled,
    }))
""")


def test_backend_and_rcparams_are_untouched(tmp_path):
    done = subprocess.run([sys.executable, "-c", CODE, str(tmp_path)], capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    got = json.loads(done.stdout.strip().splitlines()[-1])
    assert got["backend"] == "svg"
    assert got["changed"] == []
    assert got["pyplot_figures"] == []  # Figure objects: pyplot's state is never involved
    assert got["n"] >= 13 and got["inside"] == 13.5 and got["styled"] == 9
    figures = [p for p in got["figures"] if p.endswith(".png")]
    assert len(figures) >= 2
    for p in got["figures"]:  # written by the format's own canvas, whatever the backend
        data = open(p, "rb").read(8)
        assert data.startswith(b"\x89PNG" if p.endswith(".png") else b"%PDF"), p


def test_a_notebook_keeps_its_inline_plots_after_toolkit_calls():
    """In a Jupyter kernel (the inline backend, as a reader of the tutorials has it), a plot
    made after listing the experiments and using the plotting helpers still shows inline."""
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell(
            "import matplotlib, numpy as np\n"
            "import lds_toolkit as lt\n"
            "from lds_toolkit.experiments import plotting\n"
            "names = lt.list_experiments()\n"
            "fig, ax = plotting.figure(1, 1)\n"
            "plotting.band(ax, np.arange(3), np.ones((2, 3)))\n"
            "print(matplotlib.get_backend())"),
        nbformat.v4.new_code_cell(
            "import matplotlib.pyplot as plt\n"
            "plt.plot([1, 2, 3])\n"
            "plt.show()"),
    ]
    env_backend = os.environ.pop("MPLBACKEND", None)  # the kernel picks Jupyter's inline one
    try:
        nbclient.NotebookClient(nb, timeout=300, kernel_name="python3").execute()
    finally:
        if env_backend is not None:
            os.environ["MPLBACKEND"] = env_backend
    backend = "".join(o.get("text", "") for o in nb.cells[0].outputs)
    assert "inline" in backend, nb.cells[0].outputs
    images = [o for o in nb.cells[1].outputs if "image/png" in o.get("data", {})]
    assert len(images) == 1, nb.cells[1].outputs
