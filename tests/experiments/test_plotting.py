"""The plotting helpers' numerics."""

import numpy as np
import pytest

from lds_toolkit.experiments.plotting import smooth


@pytest.mark.parametrize("n, window", [(10, 1), (10, 3), (10, 10), (5, 8), (1, 4)])
def test_smooth_is_a_trailing_mean_shorter_at_the_start(n, window):
    values = np.random.default_rng(0).standard_normal((3, n))
    naive = np.array([[row[max(0, t - window + 1):t + 1].mean() for t in range(n)]
                      for row in values])
    np.testing.assert_allclose(smooth(values, window), naive, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(smooth(values[0], window), naive[0], rtol=1e-12, atol=1e-12)


def _example_figure():
    from lds_toolkit.experiments.plotting import figure

    fig, axes = figure(1, 2, width=5.0)
    x = np.logspace(0, 3, 20)
    axes[0].loglog(x, x ** 0.5, label=r"$\sqrt{T}$")
    axes[0].legend()
    axes[1].plot(x, np.sin(x))
    axes[1].set_title("title")
    return fig


def test_save_figure_draws_each_file_once_and_writes_the_laid_out_figure(tmp_path, monkeypatch):
    import io

    from matplotlib.figure import Figure

    from lds_toolkit.experiments.plotting import STYLE, save_figure, style

    # reference: the figure laid out by tight_layout and saved the plain matplotlib way (with
    # the layout engine tight_layout leaves, so savefig lays it out again before drawing)
    ref = _example_figure()
    expected = {}
    with style():
        ref.tight_layout()
        for fmt in ("png", "pdf"):
            buf = io.BytesIO()
            ref.savefig(buf, format=fmt, dpi=STYLE["savefig.dpi"],
                        metadata={"CreationDate": None} if fmt == "pdf" else None)
            expected[fmt] = buf.getvalue()

    draws = []
    original = Figure.draw

    def counting(self, renderer):
        draws.append(renderer)
        return original(self, renderer)

    monkeypatch.setattr(Figure, "draw", counting)
    paths = save_figure(_example_figure(), tmp_path, "example")
    assert len(draws) == 2  # one per file, no second layout pass
    for p in paths:
        assert p.read_bytes() == expected[p.suffix[1:]]
