"""No toolkit import or call changes matplotlib's global state (backend, rcParams).

In a notebook, a library that calls ``matplotlib.use`` or writes ``rcParams`` switches off the
inline plots of everything that follows. The check runs in a fresh interpreter (the backend
is process-wide): it picks a non-default backend and sets an rcParam the toolkit style also
sets, then imports the toolkit, lists the experiments, reproduces one (its figures are
written), uses every plotting helper, and compares. The same in a Jupyter kernel:
``tests/experiments/test_notebook.py``.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

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
