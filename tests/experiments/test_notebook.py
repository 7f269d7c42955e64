"""The toolkit in a Jupyter kernel (executed with nbclient, as a reader runs a notebook):

* inline plots keep working after toolkit calls (no ``matplotlib.use``, no ``rcParams``
  writes: a library that makes them switches a notebook's inline plots off);
* what ``reproduce(...)`` returns displays itself: its figures inline, the verdict of every
  claim and where the files are (``_repr_html_``), the first figure as ``image/png``, the
  terminal summary as ``text/plain``.

One kernel runs every cell (starting one costs seconds).
"""

from __future__ import annotations

import base64
import os

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

RUN = "nss-etc"  # a registered experiment with claims at the quick scale, ~2 s of sweep


@pytest.fixture(scope="module")
def notebook(tmp_path_factory):
    out = tmp_path_factory.mktemp("notebook-runs")
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
            f"res = lt.reproduce({RUN!r}, quick=True, out={str(out)!r}, progress=False)\n"
            "res"),
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
    return nb, out / RUN


def test_a_notebook_keeps_its_inline_plots_after_toolkit_calls(notebook):
    nb, _ = notebook
    backend = "".join(o.get("text", "") for o in nb.cells[0].outputs)
    assert "inline" in backend, nb.cells[0].outputs
    images = [o for o in nb.cells[2].outputs if "image/png" in o.get("data", {})]
    assert len(images) == 1, nb.cells[2].outputs


def test_reproduce_displays_its_figures_and_verdicts_in_a_notebook(notebook):
    from lds_toolkit.experiments import get_experiment
    from lds_toolkit.experiments.config.build import build_config

    nb, outdir = notebook
    shown = [o for o in nb.cells[1].outputs if o["output_type"] == "execute_result"]
    assert len(shown) == 1, nb.cells[1].outputs
    data = shown[0]["data"]
    page = data["text/html"]
    pngs = sorted(p for p in outdir.iterdir() if p.suffix == ".png")
    assert len(pngs) == 3
    for png in pngs:                       # every figure inline, the bytes the run wrote
        encoded = base64.b64encode(png.read_bytes()).decode()
        assert f'src="data:image/png;base64,{encoded}"' in page, png.name
    claims = get_experiment(RUN).claims
    assert page.count("<tr><td") == len(claims)
    for claim in claims:                   # the verdict of every claim
        assert f">{claim.id}</td>" in page
    assert "4 claims" not in page and ">holds</td>" in page
    assert ">paper error confirmed</td>" in page  # the S4++ example that fails its eq. 8
    assert f"<code>{outdir}</code>" in page
    assert base64.b64decode(data["image/png"]) in [p.read_bytes() for p in pngs]
    text = data["text/plain"]
    n = build_config(get_experiment(RUN), scale="quick")["seeds"]  # one task per seed
    assert text.startswith(f"{RUN} at quick scale: {n} tasks ({n} computed, 0 loaded)")
    assert "claims: 3 hold, 1 paper error confirmed" in text
