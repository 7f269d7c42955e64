"""Regenerate the figures of docs/layers/*.md from the layers themselves.

    PYTHONPATH=. python docs/img/make_layer_figures.py

Every curve is computed by lds_toolkit.neural with fixed seeds (nothing is drawn by hand):

* s4_kernel.png        S4D kernels K̄_l of eq. 6 at initialisation (S4D-Lin / S4D-Inv,
                        bilinear / ZOH) and the eigenvalues Ā on the unit disc.
* s4_legs.png          S4 with HiPPO-LegS (DPLR) against S4D-LegS (its diagonal part, B/2) at
                        initialisation with the same C and step: kernels, the spectra of Δ A,
                        and the DPLR kernel's distance to dense powers of the LegS matrix.
* s4plus_smr.png       State Memory Replay (eq. 15) on the sin(5 pi t) input of the paper's
                        Sec. 2.3: the factor sigma(K_tau * lpad(u)) and the adjusted input.
* s4plusplus_attention.png  S4++ attention matrices (eq. 23) at initialisation, causal and
                        bidirectional, and the relative-position bucket map behind b_pos.
* stu_filters.png      The spectral filters sigma^{1/4} phi_k of H_T (T = 256), the
                        negative branch (-1)^j phi_k, and the eigenvalue decay.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import torch  # noqa: E402

from lds_toolkit.neural import S4, S4PlusPlus, StateMemoryReplay  # noqa: E402
from lds_toolkit.neural.layers.s4plus import relative_position_bucket  # noqa: E402

OUT = Path(__file__).resolve().parent


def _hankel_filters(T: int, k: int):
    """Shared filters when lds_toolkit.learning.filters exists, else a dense eigh of H_T."""
    try:
        from lds_toolkit.neural.layers.stu import shared_filters

        with warnings.catch_warnings():  # k = 24 > the ~20 resolvable at T = 256: shown below
            warnings.simplefilter("ignore")
            sigma, phi = shared_filters(T, k, "H")
        return np.asarray(sigma), np.asarray(phi), "lds_toolkit.learning.filters"
    except ImportError:
        i = np.arange(T)
        n = i[:, None] + i[None, :]
        w, v = np.linalg.eigh(2.0 / ((n + 1) * (n + 2) * (n + 3)))
        phi = v[:, ::-1][:, :k]
        return w[::-1][:k], phi * np.sign(phi[0]), "dense eigh of H_T"


def s4_kernel() -> None:
    L = 256
    fig, axes = plt.subplots(1, 3, figsize=(13, 3.6))
    for ax, (init, disc) in zip(axes[:2], [("lin", "bilinear"), ("inv", "zoh")]):
        layer = S4(4, d_state=64, init=init, disc=disc, seed=0).double()
        with torch.no_grad():
            K = layer.kernel(L, torch.float64).numpy()
            dt = layer.ssm.continuous(torch.float64)[0].numpy()
        for h in range(4):
            ax.plot(K[h], lw=1, label=f"channel {h}, dt={dt[h]:.3g}")
        ax.set_title(f"S4D-{init.capitalize()}, {disc}: kernel $\\bar K_l = C\\bar A^l\\bar B$")
        ax.set_xlabel("lag l (K_0 multiplies the current input)")
        ax.legend(fontsize=7)
    ax = axes[2]
    th = np.linspace(0, 2 * np.pi, 400)
    ax.plot(np.cos(th), np.sin(th), "k", lw=0.5)
    for init, marker in (("lin", "o"), ("inv", "x")):
        layer = S4(2, d_state=64, init=init, seed=1).double()
        with torch.no_grad():
            dA = layer.ssm.discrete(torch.float64)[0].numpy()
        for h in range(2):
            z = np.concatenate([dA[h], dA[h].conj()])
            ax.plot(z.real, z.imag, marker, ms=3, label=f"S4D-{init}, channel {h}")
    ax.set_aspect("equal")
    ax.set_title("eigenvalues of $\\bar A$ (bilinear), inside |z| < 1")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(OUT / "s4_kernel.png", dpi=120)
    plt.close(fig)


def s4_legs() -> None:
    from lds_toolkit.neural.layers._hippo import legs_matrices, legs_nplr

    L, N, dt = 400, 64, 0.05
    old = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)  # the LegS initialisation without float32 rounding
    try:
        dplr = S4(1, N, mode="dplr", dt_min=dt, dt_max=dt, seed=0)
        diag = S4(1, N, init="legs", dt_min=dt, dt_max=dt, seed=0)
    finally:
        torch.set_default_dtype(old)
    with torch.no_grad():
        diag.ssm.C.copy_(dplr.ssm.C)  # the same read-out in the same (NPLR) basis
        K_dplr = dplr.kernel(L, torch.float64)[0].numpy()
        K_diag = diag.kernel(L, torch.float64)[0].numpy()
    # the dense route: powers of the bilinear discretisation of the LegS matrix itself
    A, B = legs_matrices(N)
    nplr = legs_nplr(N)
    V = np.concatenate([nplr.V, nplr.V.conj()], axis=1)
    C = torch.view_as_complex(dplr.ssm.C.detach())[0].numpy()
    c = (np.concatenate([C, C.conj()]) @ V.conj().T).real
    M = np.eye(N) - dt / 2 * A
    Ab, x = np.linalg.solve(M, np.eye(N) + dt / 2 * A), np.linalg.solve(M, dt * B)
    dense = np.empty(L)
    for l in range(L):
        dense[l] = c @ x
        x = Ab @ x
    fig, axes = plt.subplots(1, 3, figsize=(13, 3.6))
    axes[0].plot(K_diag[:150], color="tab:orange", lw=1.5, label="S4D-LegS (diagonal part, B/2)")
    axes[0].plot(K_dplr[:150], "k", lw=0.8, label="S4 (DPLR HiPPO-LegS)")
    axes[0].set_title(f"kernels, N={N}, dt={dt}, same C")
    axes[0].set_xlabel("lag l")
    axes[0].legend(fontsize=7)
    ev_dplr = np.linalg.eigvals(dplr.to_lds(0, continuous=True).A)
    ev_diag = np.linalg.eigvals(diag.to_lds(0, continuous=True).A)
    exact = -dt * np.arange(1, N + 1)
    axes[1].plot(exact, 0 * exact, "k|", ms=8, label="LegS, exact: -dt (1..N)")
    axes[1].plot(ev_dplr.real, ev_dplr.imag, "o", ms=2.5,
                 label="DPLR, eigvals (cond(V) ~ 1e14: inexact)")
    axes[1].plot(ev_diag.real, ev_diag.imag, "x", ms=3, label="S4D-LegS: dt (-1/2 ± i w_n)")
    axes[1].set_xscale("symlog", linthresh=0.1)
    axes[1].set_title("eigenvalues of dt A (to_lds(continuous=True))")
    axes[1].legend(fontsize=7)
    axes[2].semilogy(np.abs(K_dplr - dense) + 1e-18, lw=1)
    axes[2].set_title("|Woodbury/Cauchy kernel - dense LegS powers|")
    axes[2].set_xlabel("lag l (float64; the test pins <= 1e-8)")
    fig.tight_layout()
    fig.savefig(OUT / "s4_legs.png", dpi=120)
    plt.close(fig)


def s4plus_smr() -> None:
    t = np.linspace(0, 1, 100)
    u = torch.tensor(np.sin(5 * np.pi * t), dtype=torch.float64).view(1, 100, 1)
    fig, axes = plt.subplots(1, 2, figsize=(11, 3.4))
    for seed in range(3):
        with torch.random.fork_rng():
            torch.manual_seed(seed)
            smr = StateMemoryReplay(1, tau=4, pad="replicate").double()
        with torch.no_grad():
            fac = smr.factor(u)[0, :, 0].numpy()
            adj = smr(u)[0, :, 0].numpy()
        w = smr.conv.weight.detach().numpy().ravel()
        axes[0].plot(t, fac, lw=1, label=f"init seed {seed}: w={np.round(w, 2)}")
        axes[1].plot(t, adj, lw=1, label=f"seed {seed}")
    axes[0].set_title("SMR factor $\\sigma(K_\\tau * \\mathrm{lpad}(u))_k$, $\\tau=4$ (eq. 15)")
    axes[0].set_ylim(0, 1)
    axes[0].legend(fontsize=7)
    axes[1].plot(t, u[0, :, 0].numpy(), "k--", lw=1, label="u = sin(5 pi t)")
    axes[1].set_title("adjusted input $u_k\\,\\sigma(\\cdot)_k$ fed to the SSM")
    axes[1].legend(fontsize=7)
    for ax in axes:
        ax.set_xlabel("t (100 samples, as the paper's Sec. 2.3 example)")
    fig.tight_layout()
    fig.savefig(OUT / "s4plus_smr.png", dpi=120)
    plt.close(fig)


def s4plusplus_attention() -> None:
    L = 96
    g = torch.Generator().manual_seed(0)
    x = torch.randn(1, L, 16, generator=g, dtype=torch.float64)
    fig, axes = plt.subplots(1, 3, figsize=(13, 4))
    for ax, causal in zip(axes[:2], (True, False)):
        layer = S4PlusPlus(16, causal=causal, seed=0).double()
        P = layer.attention_weights(x)[0, 0].numpy()
        im = ax.imshow(P, cmap="viridis", vmin=0, vmax=np.quantile(P, 0.995))
        ax.set_title(f"S4++ softmax(QK^T/sqrt(d)+b_pos), {'causal' if causal else 'bidirectional'}")
        ax.set_xlabel("key position j (from U_S4+)")
        ax.set_ylabel("query position i (from U)")
        fig.colorbar(im, ax=ax, fraction=0.046)
    pos = torch.arange(L)
    bucket = relative_position_bucket(pos[None, :] - pos[:, None], False, 32, 128).numpy()
    im = axes[2].imshow(bucket, cmap="magma")
    axes[2].set_title("b_pos bucket of (i, j), causal: 16 exact + log-spaced")
    axes[2].set_xlabel("key position j")
    fig.colorbar(im, ax=axes[2], fraction=0.046)
    fig.tight_layout()
    fig.savefig(OUT / "s4plusplus_attention.png", dpi=120)
    plt.close(fig)


def stu_filters() -> None:
    T, k = 256, 24
    sigma, phi, source = _hankel_filters(T, k)
    f = phi * sigma**0.25
    fig, axes = plt.subplots(1, 3, figsize=(13, 3.6))
    for i in range(5):
        axes[0].plot(f[:, i], lw=1, label=f"k={i + 1}")
        axes[1].plot(f[:, i] * (-1.0) ** np.arange(T), lw=0.6)
    axes[0].set_title(f"$\\sigma_k^{{1/4}}\\phi_k$ of $H_{{{T}}}$ ({source})")
    axes[0].set_xlabel("tap j (phi[0] multiplies u_t with lag=0)")
    axes[0].legend(fontsize=7)
    axes[1].set_title("negative branch $(-1)^j\\sigma_k^{1/4}\\phi_k[j]$")
    axes[1].set_xlabel("tap j")
    for ax in axes[:2]:
        ax.set_xscale("symlog", linthresh=10)  # the filters live at short lags
    axes[2].semilogy(np.arange(1, k + 1), sigma / sigma[0], "o-", ms=3)
    axes[2].axhline(100 * np.finfo(float).eps, color="r", lw=0.8, label="100 eps floor")
    axes[2].set_title("eigenvalues $\\sigma_k/\\sigma_1$")
    axes[2].set_xlabel("k")
    axes[2].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(OUT / "stu_filters.png", dpi=120)
    plt.close(fig)


def main() -> None:
    torch.set_num_threads(1)
    s4_kernel()
    s4_legs()
    s4plus_smr()
    s4plusplus_attention()
    stu_filters()
    print(f"wrote figures to {OUT}")


if __name__ == "__main__":
    main()
