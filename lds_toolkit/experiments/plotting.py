"""Shared figure style and saving (PNG and PDF side by side).

Nothing here touches matplotlib's global state: no backend is selected and ``rcParams`` is
never written, so a notebook's inline plots keep working after any toolkit call. Figures are
:class:`matplotlib.figure.Figure` objects, not pyplot figures (:func:`figure`); they are
rendered by the canvas of the format they are saved in, whatever the backend. The toolkit
style (:data:`STYLE`) is applied per figure inside :func:`style`, a
:func:`matplotlib.rc_context` that restores every parameter on exit; the runner calls an
experiment's ``plot`` inside it.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

import numpy as np
from matplotlib import rc_context
from matplotlib.figure import Figure

from .._atomic import atomic_write

STYLE = {
    "figure.dpi": 110,
    "savefig.dpi": 150,
    "font.size": 9,
    "axes.titlesize": 10,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "legend.fontsize": 8,
    "legend.frameon": False,
    "axes.spines.top": False,
    "axes.spines.right": False,
}

#: Colours by role, so the same object has the same colour across figures.
COLORS = {
    "region_a": "#1f77b4",
    "region_b": "#d62728",
    "A-left": "#1f77b4",
    "A-right": "#17becf",
    "B": "#d62728",
}


@contextlib.contextmanager
def style():
    """Within the block, matplotlib's parameters are the toolkit's :data:`STYLE`; every
    parameter is restored on exit (:func:`matplotlib.rc_context`). Parameters are read when
    an artist is made (axes, titles, legends), so a figure's whole plotting code belongs
    inside it."""
    with rc_context(STYLE):
        yield


def figure(nrows: int = 1, ncols: int = 1, *, width: float = 6.4, height: float | None = None,
           **kwargs):
    """``(fig, axes)`` like ``plt.subplots``, but a free-standing
    :class:`~matplotlib.figure.Figure` (not registered with pyplot, no backend needed) in the
    toolkit style: its axes are made inside :func:`style` (size ``width`` × ``height``
    inches, default height 2.6 per row + 0.4)."""
    height = height if height is not None else 2.6 * nrows + 0.4
    with style():
        fig = Figure(figsize=(width, height), dpi=STYLE["figure.dpi"])
        axes = fig.subplots(nrows, ncols, **kwargs)
    return fig, axes


def save_figure(fig, outdir: str | Path, name: str) -> list[Path]:
    """Save ``fig`` as ``outdir/name.png`` and ``outdir/name.pdf`` (at ``STYLE["savefig.dpi"]``)
    and return the paths.

    Each file is written to a temporary file beside it and renamed into place, so a reader or
    a crash never sees a half-written figure. A pyplot figure passed here is left open (close
    it with ``plt.close``); the toolkit's own are free-standing and need no closing.
    """
    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    paths = [outdir / f"{name}.png", outdir / f"{name}.pdf"]
    with style():
        fig.tight_layout()
        # tight_layout() leaves a placeholder layout engine on the figure, and with any engine
        # set, every savefig first lays the whole figure out once more (a draw without
        # rendering: all tick labels and mathtext measured again) before drawing it. The
        # layout is done; without the engine each file costs one draw, which is the same
        # image, in about half the time.
        fig.set_layout_engine(None)
        for p in paths:
            fmt = p.suffix[1:]
            meta = {"CreationDate": None} if fmt == "pdf" else None
            atomic_write(p, lambda fh, fmt=fmt, meta=meta: fig.savefig(
                fh, format=fmt, metadata=meta, dpi=STYLE["savefig.dpi"]))
    return paths


def band(ax, x, curves, *, color=None, label=None, center="mean", alpha=0.25):
    """Plot the mean (or median) of ``curves`` (seeds × len(x)) with a min–max band."""
    curves = np.asarray(curves)
    mid = np.median(curves, axis=0) if center == "median" else curves.mean(axis=0)
    line, = ax.plot(x, mid, color=color, label=label, lw=1.4)
    if curves.shape[0] > 1:
        ax.fill_between(x, curves.min(axis=0), curves.max(axis=0), color=line.get_color(),
                        alpha=alpha, lw=0)
    return line


def smooth(values, window: int) -> np.ndarray:
    """Trailing moving average over ``window`` points (shorter at the start), last axis.

    ``out[..., t] = mean(values[..., max(0, t - window + 1) : t + 1])``; a window longer than
    the series averages everything up to t.
    """
    values = np.asarray(values, dtype=float)
    window = min(int(window), values.shape[-1])
    if window <= 1:
        return values.copy()
    c = np.cumsum(values, axis=-1)
    out = np.empty_like(values)
    out[..., :window] = c[..., :window] / np.arange(1, window + 1)
    out[..., window:] = (c[..., window:] - c[..., :-window]) / window
    return out
