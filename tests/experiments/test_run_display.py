"""What ``reproduce`` returns shows itself: a short text in a terminal (its ``repr``), and in a
notebook its figures, claim verdicts and files (``_repr_html_``, ``_repr_png_``), read back
from the run's files without following links or blocking."""

from __future__ import annotations

import base64
import html
import os
import re

import pytest

from lds_toolkit.experiments import reproduce
from lds_toolkit.experiments.claims import Claim
from lds_toolkit.experiments.report import build_report

from ._slow_experiment import TinyPlot


class TinyClaims(TinyPlot):
    """TinyPlot with two claims on its summary: one holds, one fails, one needs escaping."""

    name = "tiny-claims"
    claims = (
        Claim(id="mean-small", paper="a paper", where="Fig. <1>", statement="the mean is small",
              quantity="mean", op="<=", threshold=1.0),
        Claim(id="mean-large", paper="a paper", where="Fig. 2", statement="the mean & more",
              quantity="mean", op=">=", threshold=10.0),
    )


@pytest.fixture
def run(tmp_path):
    return reproduce(TinyClaims(), scale="quick", out=tmp_path, progress=False)


def test_terminal_summary_names_the_run_its_verdicts_and_files(run):
    text = repr(run)
    lines = text.splitlines()
    assert lines[0].startswith("tiny-claims at quick scale: 2 tasks (2 computed, 0 loaded), ")
    assert lines[1] == f"  written to {run.outdir}"
    assert "  claims: 1 hold, 1 fail" in lines
    mean = f"{run.summary['mean']:.3g}"
    assert re.search(rf"^    holds  mean-small: {re.escape(mean)} \(<= 1\)$", text, re.M)
    assert re.search(r"^    fails  mean-large: ", text, re.M)
    assert "summary.json, arrays.npz, tiny.png, tiny.pdf, run.json" in text
    assert max(len(line) for line in lines) <= 100 and len(lines) <= 8


def test_the_verdicts_are_the_reports(run):
    """The same rows as ``lds-toolkit report`` gives for the run on disk (the report reads only
    registered experiments, so the run's own claims are judged on the summary it wrote)."""
    assert [(r.result.claim.id, r.verdict) for r in run.claims] == [
        ("mean-small", "holds"), ("mean-large", "fails")]
    assert build_report(run.outdir.parent, ["lds-impulse"]) == []  # no run there: no rows


def test_notebook_view_has_the_figure_verdicts_and_files(run):
    page = run._repr_html_()
    png = (run.outdir / "tiny.png").read_bytes()
    assert run._repr_png_() == png
    assert f'src="data:image/png;base64,{base64.b64encode(png).decode()}"' in page
    assert ">holds</td>" in page and ">fails</td>" in page
    assert html.escape("a paper, Fig. <1>") in page and "Fig. <1>" not in page  # escaped
    assert html.escape("the mean & more", quote=True) in page
    assert f"<code>{html.escape(str(run.outdir))}</code>" in page
    for name in ("summary.json", "arrays.npz", "tiny.pdf", "run.json"):
        assert f"<code>{name}</code>" in page


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="POSIX FIFOs")
def test_a_figure_replaced_by_a_fifo_or_link_is_named_not_read(run, tmp_path):
    png = run.outdir / "tiny.png"
    png.unlink()
    os.mkfifo(png)                    # open() would block here forever
    assert run._repr_png_() is None
    assert "tiny.png: not shown (figure is a FIFO, not a regular file)" in run._repr_html_()
    png.unlink()
    secret = tmp_path / "secret.png"
    secret.write_bytes(b"\x89PNG\r\n\x1a\nnot yours")
    png.symlink_to(secret)
    assert run._repr_png_() is None and "tiny.png: not shown (figure is a symbolic link" in \
        run._repr_html_()
    png.unlink()
    assert "tiny.png: not shown (No such file" in run._repr_html_()
