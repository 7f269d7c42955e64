"""Figures of docs/systems.md, computed with the public API (run from the repository root):

    python docs/img/systems_figures.py

writes docs/img/systems_conventions.png and docs/img/systems_s4_vs_tustin.png.
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from lds_toolkit.systems import LDS, discretize, s4_bilinear, simulate, simulate_continuous  # noqa: E402

HERE = Path(__file__).parent
plt.rcParams.update({"font.size": 9, "axes.grid": True, "grid.alpha": 0.3,
                     "axes.spines.top": False, "axes.spines.right": False,
                     "legend.frameon": False, "legend.fontsize": 8})


def conventions():
    """x_{t+1} = 0.7 x_t + u_t, y = x, an impulse u_3 = 1, in the four conventions."""
    sys = LDS([[0.7]], [[1.0]], [[1.0]], dt=1.0)
    T = 10
    u = np.zeros((T, 1))
    u[3] = 1.0
    t = np.arange(T)
    fig, axes = plt.subplots(1, 4, figsize=(10.5, 2.5), sharey=True)
    for ax, output, rule in zip(axes, ["standard", "lengen", "eq1-literal", "s4"],
                                [r"$y_t = C x_t + D u_t$",
                                 r"$y_{t+1} = \sum_{\ell\geq 0} CA^\ell B u_{t-\ell} + D u_t$",
                                 r"$y_{t+1} = C x_t + D u_t$",
                                 r"$x_k = \bar A x_{k-1} + \bar B u_k,\ y_k = C x_k$"]):
        y = simulate(sys, u, output=output).y[:, 0]
        ax.stem(t, y, basefmt=" ")
        ax.axvline(3, color="0.6", ls=":", lw=1)
        first = int(np.argmax(y != 0))
        ax.set_title(f'output="{output}"\n{rule}', fontsize=9)
        ax.annotate(f"first response at t={first}", (first, y[first]),
                    xytext=(first + 1.2, 0.9), fontsize=8,
                    arrowprops=dict(arrowstyle="->", lw=0.7))
        ax.set_xlabel("t  (impulse u_3 = 1, dotted)")
        ax.set_xticks(t)
    axes[0].set_ylabel("y_t")
    axes[0].set_ylim(-0.05, 1.15)
    fig.tight_layout()
    fig.savefig(HERE / "systems_conventions.png", dpi=150)


def s4_vs_tustin():
    """A lightly damped oscillator, step input from rest, coarse dt = 0.25."""
    sysc = LDS([[0.0, 1.0], [-4.0, -0.4]], [[0.0], [1.0]], [[1.0, 0.0]])
    dt, K = 0.25, 40
    u = np.ones((K, 1))
    # exact response on a fine grid (the input is constant, so any grid is exact)
    tf = np.linspace(0, K * dt, 801)
    y_exact = simulate_continuous(sysc, tf, np.ones((tf.size, 1))).y[:, 0]
    y_zoh = simulate(discretize(sysc, dt, "zoh"), u).y[:, 0]            # = y(k dt) exactly
    y_tustin = simulate(discretize(sysc, dt, "bilinear"), u).y[:, 0]    # scipy's Tustin
    y_s4 = simulate(s4_bilinear(sysc, dt), u, output="s4").y[:, 0]      # S4 recursion
    k = np.arange(K)
    avg = 0.5 * (y_s4 + np.concatenate([[0.0], y_s4[:-1]]))

    fig, axes = plt.subplots(1, 2, figsize=(8.0, 2.8))
    ax = axes[0]
    ax.plot(tf, y_exact, color="0.3", lw=1, label="exact y(t)")
    ax.plot(k * dt, y_zoh, "o", ms=3.5, mfc="none", color="C0", label="zoh: y_k at k·dt")
    ax.plot((k + 1) * dt, y_s4, "s", ms=3, color="C2", label="S4: y_k at (k+1)·dt")
    ax.plot(k * dt, y_tustin, "^", ms=3.5, color="C3", label="Tustin (scipy): y_k at k·dt")
    ax.set_xlabel("time")
    gap = np.abs(y_tustin - avg).max()
    ax.set_title(f"step response, dt = {dt}\n"
                 f"max |Tustin_k − (S4_k + S4_(k−1))/2| = {gap:.1e}", fontsize=9)
    ax.legend(loc="lower right")

    # convergence as dt -> 0 on [0, 8], against the exact step response at the right times
    ax = axes[1]
    dts = 0.4 / 2.0 ** np.arange(6)
    errs = {"S4_k vs y((k+1)·dt)": [], "Tustin_k vs y(k·dt)": [],
            "Tustin_k vs y((k+½)·dt)": []}
    for h in dts:
        n = int(round(8.0 / h))
        kk = np.arange(n)
        s4 = simulate(s4_bilinear(sysc, h), np.ones((n, 1)), output="s4").y[:, 0]
        tu = simulate(discretize(sysc, h, "bilinear"), np.ones((n, 1))).y[:, 0]
        for key, y, times in [("S4_k vs y((k+1)·dt)", s4, (kk + 1) * h),
                              ("Tustin_k vs y(k·dt)", tu, kk * h),
                              ("Tustin_k vs y((k+½)·dt)", tu, (kk + 0.5) * h)]:
            grid = np.concatenate([[0.0], times]) if times[0] > 0 else times
            ex = simulate_continuous(sysc, grid, np.ones((grid.size, 1))).y[-times.size:, 0]
            errs[key].append(np.abs(y - ex).max())
    for (key, e), color, style in zip(errs.items(), ["C2", "C3", "C1"], ["s--", "^-", "o:"]):
        ax.loglog(dts, e, style, ms=4, mfc="none", color=color, label=key)
    ax.loglog(dts, 0.5 * dts**2, "k:", lw=1, label="∝ dt²")
    ax.loglog(dts, 0.2 * dts, "k--", lw=0.8, label="∝ dt")
    ax.set_xticks(dts, [f"{h:g}" for h in dts], minor=False)
    ax.set_xticks([], minor=True)
    ax.set_xlabel("dt")
    ax.set_ylabel("max error on [0, 8]")
    ax.set_title("which time each discrete output approximates", fontsize=9)
    ax.legend(loc="lower right", fontsize=7)
    fig.tight_layout()
    fig.savefig(HERE / "systems_s4_vs_tustin.png", dpi=150)


if __name__ == "__main__":
    conventions()
    s4_vs_tustin()
