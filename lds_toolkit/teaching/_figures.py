"""A drawing helper shared by the sliders of lessons 5-8.

A slider callback must redraw and render in <= 100 ms warm, and most of a small figure's cost
is matplotlib's: log axes lay out minor ticks by the dozen on every render (each a tick line
and often a label). The sliders build their axes once (``setup=``, see
:mod:`lds_toolkit.teaching.sliders`) and keep a few major ticks only.
"""

from __future__ import annotations

__all__ = ["no_minor"]


def no_minor(*axes, numticks: int = 5) -> None:
    """Drop the minor ticks of ``axes`` and keep at most about ``numticks`` major ones (call
    after setting the scales)."""
    from matplotlib.ticker import LogLocator, MaxNLocator, NullLocator

    for ax in axes:
        for axis, scale in ((ax.xaxis, ax.get_xscale()), (ax.yaxis, ax.get_yscale())):
            axis.set_minor_locator(NullLocator())
            if scale == "log":
                axis.set_major_locator(LogLocator(numticks=numticks))
            elif scale == "linear":
                axis.set_major_locator(MaxNLocator(numticks))
