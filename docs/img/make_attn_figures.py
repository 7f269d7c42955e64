"""Generate the figures of docs/layers/focus.md and docs/layers/las.md from the layers' code.

Usage: ``python docs/img/make_attn_figures.py`` (writes PNGs next to this file; CPU, a few s).
Every curve is computed here from lds_toolkit.neural; nothing is typed in by hand.
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import torch  # noqa: E402

from lds_toolkit.neural.layers._focus_iir import (  # noqa: E402
    filter_bins,
    iir2_frequency_response,
    iir2_impulse,
    map_coefficients,
    paper_printed_bin_filter,
)
from lds_toolkit.neural.layers._las_reference import las_attention_matrix  # noqa: E402
from lds_toolkit.neural.layers.focus import Focus  # noqa: E402
from lds_toolkit.neural.layers.las import LaSAttention  # noqa: E402

OUT = Path(__file__).resolve().parent
F64 = torch.float64


def focus_iir() -> None:
    """Impulse and frequency responses of order-2 filters with coefficients in (0, 1)^2."""
    coeffs = [(0.05, 0.02), (0.5, 0.5), (0.2, 0.9), (0.9, 0.2), (0.1, 0.99)]
    n = 120
    fig, ax = plt.subplots(1, 2, figsize=(10, 3.6))
    freqs = torch.linspace(0, 0.5, 501, dtype=F64)
    for a1, a2 in coeffs:
        a = torch.tensor([a1, a2], dtype=F64)
        h = iir2_impulse(a, n).numpy()
        lbl = f"Θ = ({a1}, {a2})"
        ax[0].plot(np.arange(n), h, lw=1.2, label=lbl)
        mag = iir2_frequency_response(a, freqs).abs().numpy()
        ax[1].semilogy(freqs.numpy(), mag, lw=1.2, label=lbl)
    # the "stable_triangle" map reaches low-pass filters that Theta in (0, 1)^2 cannot give
    for th in ((0.1, 0.5), (0.2, 0.95)):
        a = map_coefficients(torch.tensor(th, dtype=F64), "stable_triangle")
        lbl = f"triangle Θ = {th} -> a = ({a[0]:.2f}, {a[1]:.2f})"
        ax[0].plot(np.arange(n), iir2_impulse(a, n).numpy(), "--", lw=1.2, label=lbl)
        ax[1].semilogy(freqs.numpy(), iir2_frequency_response(a, freqs).abs().numpy(), "--",
                       lw=1.2, label=lbl)  # fmt: skip
    ax[0].set(xlabel="tap n", ylabel="h[n]", title="impulse response (recursion, exact taps)")
    ax[1].set(xlabel="f (cycles / sample)", ylabel="|H(f)|", title="eq. 5 magnitude response")
    ax[1].legend(fontsize=6)
    fig.tight_layout()
    fig.savefig(OUT / "focus_iir_response.png", dpi=130)
    plt.close(fig)


def focus_causality() -> None:
    """An impulse in the middle of a bin through our filter and through eq. 6 read literally."""
    r, t0 = 64, 24
    x = torch.zeros(1, 1, r, 1, dtype=F64)
    x[0, 0, t0, 0] = 1.0
    a = torch.tensor([0.6, 0.8], dtype=F64).reshape(1, 1, 1, 2)
    ours = filter_bins(x, iir2_impulse(a, r))[0, 0, :, 0].numpy()
    printed = paper_printed_bin_filter(x, a)[0, 0, :, 0].numpy()
    fig, ax = plt.subplots(figsize=(8, 3.4))
    t = np.arange(r)
    ax.axvline(t0, color="0.6", ls=":", lw=1)
    ax.plot(t, ours, "o-", ms=3, lw=1, label="ours: 2R-padded FFT × H (= recursion)")
    ax.plot(t, printed, "s-", ms=3, lw=1, label="eq. 6 literally: R-point FFT × conj(H)")
    ax.set(
        xlabel="position inside the bin",
        ylabel="output",
        title=f"unit impulse at t = {t0}, Θ = (0.6, 0.8): the printed form answers before it",
    )
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(OUT / "focus_causality.png", dpi=130)
    plt.close(fig)


def focus_bins() -> None:
    """Per-bin |H(f)| of an untrained Focus layer on a sequence with a burst in bin 4."""
    torch.manual_seed(0)
    layer = Focus(8, bin_size=64, hyper_kernel_size=256).to(F64)
    g = torch.Generator().manual_seed(1)
    x = 0.1 * torch.randn(1, 512, 8, generator=g, dtype=F64)
    x[:, 4 * 64 : 4 * 64 + 8] += 3.0  # burst in bin 4 -> changes the filter of bin 5
    with torch.no_grad():
        theta = layer.iir_coefficients(x)[0, :, 0, 0]  # (n_bins, 2), channel 0
    freqs = torch.linspace(0, 0.5, 301, dtype=F64)
    fig, ax = plt.subplots(figsize=(7, 3.6))
    for b in range(theta.shape[0]):
        mag = iir2_frequency_response(theta[b], freqs).abs().numpy()
        ax.semilogy(freqs.numpy(), mag, lw=2 if b == 5 else 1, label=f"bin {b}")
    ax.set(
        xlabel="f (cycles / sample)",
        ylabel="|H(f)|",
        title="untrained Focus, channel 0: burst in bin 4 changes bin 5's filter",
    )
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    fig.savefig(OUT / "focus_bins.png", dpi=130)
    plt.close(fig)


def las_eld() -> None:
    """ELD factors exp(-alpha_c d) of the 8 heads over one 128-token chunk (LaS-chunk), B =
    1e-3 (Table 4, ListOps), under the three readings of the alpha initialisation, computed
    by LaSAttention.eld_factors."""
    schedules = ("exp_uniform", "linear", "log")
    fig, ax = plt.subplots(1, 3, figsize=(13, 3.6), sharey=True)
    for k, sched in enumerate(schedules):
        layer = LaSAttention(64, chunk_size=128, decay_bound=1e-3, alpha_schedule=sched)
        f = layer.eld_factors().numpy()
        for c, a in enumerate(layer.alpha.tolist()):
            ax[k].plot(np.arange(128), f[c], lw=1.2, label=f"head {c}: α = {a:.3g}")
        ax[k].set(xlabel="distance i - j inside the chunk",
                  title=f"'{sched}': smallest factor {f[:, -1].min():.3g}")
        ax[k].legend(fontsize=6)
    ax[0].set_ylabel("ELD factor exp(-α_c (i - j))")
    fig.suptitle("LaS-chunk (chunk 128), B = 1e-3: what ELD can do inside a chunk", fontsize=10)
    fig.tight_layout()
    fig.savefig(OUT / "las_eld.png", dpi=130)
    plt.close(fig)


def las_attention_pattern() -> None:
    """Pooled attention matrices of an untrained layer, and one row: causal vs centred pool."""
    torch.manual_seed(0)
    length = 48
    layer = LaSAttention(32, n_heads=4, pool_size=5, decay_bound=0.5).to(F64)
    g = torch.Generator().manual_seed(2)
    x = torch.randn(1, length, 32, generator=g, dtype=F64)
    with torch.no_grad():
        a = layer.attention_matrix(x)[0].numpy()
        q = layer.q_proj(x).reshape(1, length, 4, 8).transpose(1, 2)
        k = layer.k_proj(x).reshape(1, length, 4, 8).transpose(1, 2)
        causal = las_attention_matrix(q, k, layer.alpha, 5)[0, 3].numpy()
        centred = las_attention_matrix(q, k, layer.alpha, 5, pool_window="centred")[0, 3].numpy()
    fig, ax = plt.subplots(1, 3, figsize=(12, 3.8))
    for k_, c in enumerate((0, 3)):
        im = ax[k_].imshow(a[c], cmap="viridis")
        ax[k_].set(
            title=f"head {c}, α = {layer.alpha[c].item():.3g}", xlabel="key j", ylabel="query i"
        )
        fig.colorbar(im, ax=ax[k_], fraction=0.046)
    i = 30
    ax[2].axvline(i, color="0.6", ls=":", lw=1)
    ax[2].plot(causal[i], "o-", ms=3, lw=1, label="causal pool (ours): keys [j, j+P-1]")
    ax[2].plot(centred[i], "s-", ms=3, lw=1, label="centred pool (paper's padding)")
    ax[2].set(xlabel="key j", ylabel=f"weight in row i = {i}", title="head 3, one row")
    ax[2].legend(fontsize=7)
    fig.suptitle("untrained LaS layer, P = 5, B = 0.5 (large B to make the decay visible)")
    fig.tight_layout()
    fig.savefig(OUT / "las_attention.png", dpi=130)
    plt.close(fig)


if __name__ == "__main__":
    focus_iir()
    focus_causality()
    focus_bins()
    las_eld()
    las_attention_pattern()
    print("figures written to", OUT)
