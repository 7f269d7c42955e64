"""Sliders for the lessons: a figure redrawn from parameter values, with or without widgets.

A lesson's slider is a *draw function* ``draw(fig, **values) -> dict`` registered with
:func:`slider`: it draws into an empty ``matplotlib.figure.Figure`` for the given parameter
values and returns the numbers it shows (``{"memory": 142, "region": "A-left"}``), which the
widget prints under the figure and the tests read. The module of the lesson
(``lds_toolkit/teaching/lessonNN.py``) registers it on import::

    @slider("lesson01.memory", title="Memory of a pair of eigenvalues",
            modulus=Param(0.5, 0.9999, 0.99, step=1e-4), angle=Param(0.0, 3.14, 0.3))
    def memory(fig, modulus, angle):
        ...
        return {"memory length": m}

and the lesson's slider cell shows it: ``show_slider("lesson01.memory")``.

Clearing and rebuilding the axes on every move costs ~30-40 ms of the 100 ms budget (2-core
machine under load). A slider that needs the time passes ``setup=``: ``setup(fig)`` is called
once, builds the axes and artists and returns a state object (a dict, a namespace), and the
draw function then receives that state instead of the figure and updates the artists
(``line.set_ydata``); the figure is not cleared between moves. Lay the figure out with
``fig.subplots_adjust`` rather than ``tight_layout`` (which measures every label: ~90 ms).

Rendering the whole figure to PNG is then most of a move (~50-90 ms: every tick label, every
title is rasterised again). A state that is a dict with a ``"moving"`` entry (the artists
the draw function changes: lines, markers, titles, a legend whose labels change, or a
whole axes whose view moves) is rendered by blitting: the figure without them is rasterised
once (the *background*), and a move restores that background, draws only the moving
artists over it and encodes the pixels (:meth:`SliderApp.png`). Everything the draw
function changes must be among them, and an axes that is not itself moving keeps its
limits (``set_xlim``/``set_ylim`` in setup); tests/teaching/test_sliders.py checks that the
background never changes and compares every blitted frame with a full redraw.

:class:`SliderApp` runs it: :meth:`SliderApp.render` is the callback a widget calls on every
move (clear the figure, draw, render a PNG: what the notebook receives; timed by
``benchmarks/bench_sliders.py``, which finds every registered slider with
:func:`registered_sliders`). :meth:`SliderApp.widget` builds the ipywidgets view (optional
dependency, the ``teach`` extra; imported only there). Without ipywidgets
:func:`show_slider` shows the figure at the default values and says how to get the sliders.

The figures are ``Figure`` objects rendered with the Agg canvas: nothing of matplotlib's
global state (backend, rcParams, pyplot's figure list) is touched.
"""

from __future__ import annotations

import importlib
import io
import math
import pkgutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = [
    "Param",
    "Slider",
    "SliderApp",
    "registered_sliders",
    "show_slider",
    "slider",
    "sparse_log_ticks",
]


@dataclass(frozen=True)
class Param:
    """One slider: a real value in ``[low, high]``.

    ``log=True`` moves on a logarithmic scale (``low > 0``); ``integer=True`` takes whole
    numbers; ``step`` is the slider's increment (default: 1/200 of the range, or a factor on a
    log scale).
    """

    low: float
    high: float
    default: float
    step: float | None = None
    label: str = ""
    log: bool = False
    integer: bool = False

    def __post_init__(self) -> None:
        if not (math.isfinite(self.low) and math.isfinite(self.high) and self.low < self.high):
            raise ValueError(f"Param needs finite low < high, got low={self.low}, "
                             f"high={self.high}")
        if not self.low <= self.default <= self.high:
            raise ValueError(f"Param default must lie in [{self.low}, {self.high}], got "
                             f"{self.default}")
        if self.log and self.low <= 0:
            raise ValueError(f"a log-scale Param needs low > 0, got low={self.low}")

    def values(self, n: int = 3) -> list[float]:
        """``n`` values spread over the range, ends included (the headless tests use 3)."""
        if n < 2:
            raise ValueError(f"n must be >= 2, got {n}")
        out = []
        for i in range(n):
            s = i / (n - 1)
            v = (self.low * (self.high / self.low) ** s) if self.log else \
                self.low + s * (self.high - self.low)
            out.append(float(round(v)) if self.integer else float(v))
        return out


@dataclass(frozen=True)
class Slider:
    """A registered slider: a name, a title, its parameters and its draw function."""

    name: str
    title: str
    params: Mapping[str, Param]
    draw: Callable[..., Mapping[str, Any]]
    figsize: tuple[float, float] = (9.0, 3.2)
    dpi: int = 72
    module: str = field(default="", compare=False)
    setup: Callable[[Any], Any] | None = None

    def defaults(self) -> dict[str, float]:
        return {k: p.default for k, p in self.params.items()}


_REGISTRY: dict[str, Slider] = {}


def slider(name: str, *, title: str, figsize: tuple[float, float] = (9.0, 3.2),
           dpi: int = 72, setup: Callable[[Any], Any] | None = None,
           **params: Param) -> Callable[[Callable[..., Mapping[str, Any]]], Slider]:
    """Register a draw function ``draw(fig, **values) -> dict`` as the slider ``name``.

    Parameters
    ----------
    name : str
        ``"lessonNN.what"``; unique.
    title : str
        Shown above the widget.
    figsize, dpi
        The figure's size; a small dpi keeps the PNG rendering under the 100 ms budget.
    setup : callable, optional
        ``setup(fig) -> state``, called once per figure; ``draw(state, **values)`` then
        updates the artists it made, and the figure is not cleared between moves.
    **params : Param
        One per keyword argument of ``draw`` after ``fig``.
    """
    if not params:
        raise ValueError("a slider needs at least one Param")
    for key, p in params.items():
        if not isinstance(p, Param):
            raise TypeError(f"slider parameter {key!r} must be a Param, got "
                            f"{type(p).__name__}")

    def register(draw: Callable[..., Mapping[str, Any]]) -> Slider:
        spec = Slider(name, title, dict(params), draw, figsize, dpi,
                      module=getattr(draw, "__module__", ""), setup=setup)
        old = _REGISTRY.get(name)
        if old is not None and old.module != spec.module:
            raise ValueError(f"slider {name!r} is registered twice ({old.module} and "
                             f"{spec.module})")
        _REGISTRY[name] = spec
        return spec

    return register


def registered_sliders() -> dict[str, Slider]:
    """Every slider of the teaching package, by name (imports each ``lessonNN`` module).

    Lessons that need an optional dependency (torch) are skipped when it is missing.
    """
    from pathlib import Path

    for info in pkgutil.iter_modules([str(Path(__file__).parent)]):
        if info.name.startswith("lesson"):
            try:
                importlib.import_module(f"{__package__}.{info.name}")
            except ModuleNotFoundError as exc:
                if exc.name not in ("torch", "ipywidgets"):
                    raise
    return dict(sorted(_REGISTRY.items()))


def _lookup(name: str | Slider) -> Slider:
    if isinstance(name, Slider):
        return name
    if name not in _REGISTRY:
        registered_sliders()
    if name not in _REGISTRY:
        raise ValueError(f"no slider named {name!r}; registered: "
                         f"{', '.join(_REGISTRY) or 'none'}")
    return _REGISTRY[name]


class SliderApp:
    """One slider's figure and the callback that redraws it.

    ``SliderApp("lesson01.memory").render(modulus=0.9)`` returns the PNG bytes and the
    numbers; :meth:`widget` wraps it in ipywidgets.
    """

    def __init__(self, name: str | Slider):
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure

        self.spec = _lookup(name)
        self.figure = Figure(figsize=self.spec.figsize, dpi=self.spec.dpi)
        FigureCanvasAgg(self.figure)
        self.values = self.spec.defaults()
        self.numbers: dict[str, Any] = {}
        self.state = None if self.spec.setup is None else self.spec.setup(self.figure)
        moving = self.state.get("moving") if isinstance(self.state, Mapping) else None
        self.moving: tuple[Any, ...] = tuple(moving or ())
        for artist in self.moving:  # skipped by canvas.draw(), drawn by png() over the rest
            artist.set_animated(True)
        self._background: Any = None

    def _checked(self, values: Mapping[str, float]) -> dict[str, float]:
        out = dict(self.values)
        for key, v in values.items():
            if key not in self.spec.params:
                raise ValueError(f"slider {self.spec.name!r} has no parameter {key!r}; it has "
                                 f"{', '.join(self.spec.params)}")
            p = self.spec.params[key]
            # numpy scalars are numbers; bools are not (True would move a slider to 1)
            if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, float, np.integer,
                                                                     np.floating)):
                raise TypeError(f"{key} must be a number in [{p.low}, {p.high}], got "
                                f"{type(v).__name__} {v!r}")
            if not (np.isfinite(v) and p.low <= v <= p.high):
                raise ValueError(f"{key} must be a number in [{p.low}, {p.high}], got {v!r}")
            if p.integer and float(v) != round(float(v)):
                raise ValueError(f"{key} is an integer parameter: it must be a whole number "
                                 f"in [{p.low:g}, {p.high:g}], got {v!r}")
            out[key] = float(v)
        return out

    def update(self, **values: float) -> dict[str, Any]:
        """Redraw the figure for ``values`` (others keep their current value)."""
        from .._threads import one_thread

        self.values = self._checked(values)
        with one_thread("blas"):  # tiny matrices: a second BLAS thread only spins
            return self._draw()

    def _draw(self) -> dict[str, Any]:
        if self.spec.setup is None:
            self.figure.clear()
            self.numbers = dict(self.spec.draw(self.figure, **self.values))
        else:
            self.numbers = dict(self.spec.draw(self.state, **self.values))
        return self.numbers

    def png(self) -> bytes:
        """The current figure as PNG bytes (what the widget displays).

        With moving artists (see the module docstring): the cached background, the moving
        artists drawn over it, the pixels encoded by Pillow (compression level 1: a few ms
        instead of ~10 for a smaller file nobody stores). Otherwise ``savefig``.
        """
        if not self.moving:
            buf = io.BytesIO()
            self.figure.savefig(buf, format="png", dpi=self.spec.dpi)
            return buf.getvalue()
        return _encode_png(self.frame())

    def frame(self):
        """The current figure's pixels, ``(height, width, 4)`` uint8 RGBA, by blitting the
        moving artists over the cached background (a full draw when there are none)."""
        canvas = self.figure.canvas
        if self._background is None or not self.moving:
            canvas.draw()  # the static figure: animated artists are left out
            self._background = canvas.copy_from_bbox(self.figure.bbox)
        else:
            canvas.restore_region(self._background)
        for artist in self.moving:
            self.figure.draw_artist(artist)
        return np.asarray(canvas.buffer_rgba()).copy()

    def render(self, **values: float) -> tuple[bytes, dict[str, Any]]:
        """The callback of a slider move: redraw for ``values`` and render the PNG."""
        numbers = self.update(**values)
        return self.png(), numbers

    def numbers_line(self) -> str:
        return "   ".join(f"{k}: {_fmt(v)}" for k, v in self.numbers.items())

    def widget(self):  # pragma: no cover - exercised by the browser test and notebooks
        """An ipywidgets box: one slider per parameter, the figure, the numbers."""
        import ipywidgets as w

        sliders = {}
        for key, p in self.spec.params.items():
            desc = p.label or key
            common = dict(description=desc, continuous_update=False,
                          style={"description_width": "initial"},
                          layout=w.Layout(width="420px"))
            if p.log:
                step = p.step or (math.log10(p.high / p.low) / 200)
                sliders[key] = w.FloatLogSlider(value=p.default, base=10,
                                                min=math.log10(p.low), max=math.log10(p.high),
                                                step=step, **common)
            elif p.integer:
                sliders[key] = w.IntSlider(value=int(p.default), min=int(p.low),
                                           max=int(p.high), step=int(p.step or 1), **common)
            else:
                step = p.step or (p.high - p.low) / 200
                sliders[key] = w.FloatSlider(value=p.default, min=p.low, max=p.high,
                                             step=step, readout_format=".6g", **common)
        png, _ = self.render(**self.values)
        image = w.Image(value=png, format="png")
        line = w.HTML(value=f"<code>{self.numbers_line()}</code>")

        def on_change(change):
            key = change["owner"]._lds_key
            png, _ = self.render(**{key: float(change["new"])})
            image.value = png
            line.value = f"<code>{self.numbers_line()}</code>"

        for key, s in sliders.items():
            s._lds_key = key
            s.observe(on_change, names="value")
        title = w.HTML(value=f"<b>{self.spec.title}</b>")
        box = w.VBox([title, *sliders.values(), image, line])
        box.add_class("lds-slider")
        return box


def _encode_png(rgba) -> bytes:
    from PIL import Image

    buf = io.BytesIO()
    Image.fromarray(rgba).save(buf, format="png", compress_level=1)
    return buf.getvalue()


def sparse_log_ticks(ax, which: str = "both", numticks: int = 6) -> None:
    """Major ticks only, at most ``numticks`` per log axis of ``ax`` (``"x"``, ``"y"`` or
    ``"both"``): minor ticks on a log axis spanning many decades are a hundred artists, a
    third of a slider's render."""
    from matplotlib.ticker import LogLocator, NullLocator

    axes = {"x": [ax.xaxis], "y": [ax.yaxis], "both": [ax.xaxis, ax.yaxis]}[which]
    for axis in axes:
        if axis.get_scale() == "log":
            axis.set_major_locator(LogLocator(numticks=numticks))
            axis.set_minor_locator(NullLocator())


def _fmt(v: Any) -> str:
    """A number under the figure: 4 significant digits; NaN said in words (a draw whose
    number is undefined must not show it as if it were one)."""
    if isinstance(v, (float, np.floating)):
        if np.isnan(v):
            return "NaN (not a number)"
        return f"{float(v):.4g}"
    return str(v)


class _SliderDisplay:
    """What :func:`show_slider` returns: the live widget where a kernel has ipywidgets, the
    figure at the current values (PNG) everywhere else (static pages, slides)."""

    def __init__(self, app: SliderApp, widget: Any):
        self.app = app
        self.widget = widget

    def _repr_mimebundle_(self, include=None, exclude=None):
        bundle: dict[str, Any] = {"text/plain": f"{self.app.spec.title}: "
                                                f"{self.app.numbers_line()}"}
        bundle["image/png"] = self.app.png()
        if self.widget is not None:
            data = self.widget._repr_mimebundle_(include=include, exclude=exclude)
            data = data[0] if isinstance(data, tuple) else data
            for key, value in (data or {}).items():
                if key != "text/plain":
                    bundle[key] = value
        return bundle


def show_slider(name: str | Slider, **values: float) -> _SliderDisplay:
    """Show a lesson's slider: the widget if ipywidgets is installed, else the figure.

    ``values`` set the starting position. Returns an object that a notebook displays (the
    live widget, with the figure as a PNG fallback for static pages and slides); as a script
    it prints the numbers at the starting position.
    """
    app = SliderApp(name)
    app.update(**values)
    try:
        import ipywidgets  # noqa: F401
    except ImportError:
        widget = None
        note = ("  (ipywidgets is not installed: pip install 'lds_toolkit[teach]' for the "
                "sliders; this is the figure at these values)")
    else:
        widget = app.widget() if _in_ipython() else None
        note = ""
    if note or not _in_ipython():
        print(f"{app.spec.title}: {app.numbers_line()}{note}")
    return _SliderDisplay(app, widget)


def _in_ipython() -> bool:
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    return get_ipython() is not None
