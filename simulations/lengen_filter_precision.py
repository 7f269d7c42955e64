"""Teaching figure for docs/learning/spectral_filtering.md: what float64 can resolve.

Left: per-filter error of the float64 filters (dense eigh and fast path) and of
``precision="extended"`` against 60-digit mpmath ``eigsy`` (T = 48, k = 24, H_T and N_T),
with the Davis-Kahan bounds eps sigma_1 / gap_i and 2^-96 sigma_1 / gap_i.
Right: at paper scale (T = 2^14, k = 24) the distance of the float64 fast-path filters from
the extended ones, next to the float64 bound.

Run: ``python simulations/lengen_filter_precision.py [--out docs/img]`` (needs mpmath).
"""

from __future__ import annotations

import argparse
import warnings
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import mpmath as mp  # noqa: E402
import numpy as np  # noqa: E402

from lds_toolkit.learning import (  # noqa: E402
    RESOLVABLE_FLOOR,
    FilterPrecisionWarning,
    eigenvector_error_bound,
    spectral_filters,
)


def _reference(T: int, k: int, kind: str):
    """Top-k eigenpairs of H_T / N_T from 60-digit mpmath, phi[0] > 0."""
    mp.mp.dps = 60
    num, width = (2, 3) if kind == "H" else (24, 5)

    def h(n):
        den = 1
        for m in range(1, width + 1):
            den *= n + m
        return mp.mpf(num) / den

    ev, Q = mp.eigsy(mp.matrix([[h(i + j) for j in range(T)] for i in range(T)]))
    order = [int(i) for i in np.argsort([-float(v) for v in ev])[:k]]
    sigma = np.array([float(ev[i]) for i in order])
    phi = np.array([[float(Q[r, i]) for i in order] for r in range(T)])
    return sigma, phi * np.sign(phi[0])


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", default="docs/img")
    args = p.parse_args(argv)
    warnings.simplefilter("ignore", FilterPrecisionWarning)
    k = 24
    idx = np.arange(1, k + 1)
    fig, axes = plt.subplots(1, 3, figsize=(13, 3.6), sharey=True)
    for ax, kind in zip(axes[:2], ("H", "N")):
        T = 48
        s_ref, p_ref = _reference(T, k + 1, kind)
        for label, kw, style in (
            ("float64, dense eigh", dict(method="dense"), "o-"),
            ("float64, fast path", dict(method="fast"), "x--"),
            ("extended", dict(method="fast", precision="extended"), "s-"),
        ):
            _, phi = spectral_filters(T, k, kind, cache=False, **kw)
            err = np.abs(phi - p_ref[:, :k]).max(axis=0)
            ax.semilogy(idx, np.maximum(err, 1e-17), style, ms=3, label=label)
        ax.semilogy(idx, eigenvector_error_bound(s_ref)[:k], "k:", lw=1,
                    label=r"bound eps $\sigma_1$/gap")
        ax.semilogy(idx, eigenvector_error_bound(s_ref, precision="extended")[:k], "k-.",
                    lw=1, label=r"bound eps + $2^{-96}\sigma_1$/gap")
        floor = np.flatnonzero(s_ref[:k] / s_ref[0] < RESOLVABLE_FLOOR)
        if floor.size:
            ax.axvline(floor[0] + 0.5, color="r", lw=0.8, ls=":",
                       label=r"$\sigma_i/\sigma_1$ < 100 eps")
        ax.set_title(f"{kind}_T, T = {T}: error against 60-digit mpmath")
        ax.set_xlabel("filter index i")
        ax.set_ylim(1e-17, 3)
        ax.legend(fontsize=6)
    axes[0].set_ylabel(r"max$_j$ |$\phi_i[j]$ - reference|")
    ax = axes[2]
    T = 2**14
    for kind, c in (("H", "C0"), ("N", "C1")):
        s_dbl, p_dbl = spectral_filters(T, k + 1, kind, method="fast", cache=False)
        _, p_ext = spectral_filters(T, k, kind, method="fast", cache=False,
                                    precision="extended")
        err = np.abs(p_dbl[:, :k] - p_ext).max(axis=0)
        ax.semilogy(idx, np.maximum(err, 1e-17), "o-", ms=3, color=c,
                    label=f"{kind}_T: |float64 - extended|")
        ax.semilogy(idx, eigenvector_error_bound(s_dbl)[:k], ":", color=c,
                    label=rf"{kind}_T: eps $\sigma_1$/gap")
    ax.set_title(f"paper scale, T = 2^{int(np.log2(T))}, k = {k}")
    ax.set_xlabel("filter index i")
    ax.legend(fontsize=6)
    fig.tight_layout()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    fig.savefig(out / "lengen_filter_precision.png", dpi=130)
    print(f"wrote {out / 'lengen_filter_precision.png'}")


if __name__ == "__main__":
    main()
