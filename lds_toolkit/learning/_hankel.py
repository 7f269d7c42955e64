"""Private helpers: the Hankel symbols of H_T and N_T and their FFT mat-vec.

Both matrices are moment (Hankel) matrices: entry (i, j) depends only on n = i + j.

* ``H_T`` (paper eq. 3), mu_alpha = (1 - alpha) [1, alpha, alpha^2, ...]::

      (H_T)_{ij} = int_0^1 (1 - a)^2 a^(i+j) da = B(n + 1, 3) = 2 / ((n+1)(n+2)(n+3))

* ``N_T`` (paper eq. 5), mu~_alpha = (1 - alpha)^2 [1, alpha, alpha^2, ...]::

      (N_T)_{ij} = int_0^1 (1 - a)^4 a^(i+j) da = B(n + 1, 5)
                 = 24 / ((n+1)(n+2)(n+3)(n+4)(n+5))

Indices i, j run over 0 .. T-1 (a T x T matrix; the paper's vector [1, alpha, ..., alpha^T]
has T + 1 entries, we keep the T that a length-T filter can use).
"""

from __future__ import annotations

import os

import numpy as np
import scipy.fft as sfft

__all__ = ["hankel_symbol", "dense_matrix", "HankelFFT", "FFT_WORKERS"]

#: Threads of one batch of FFTs (pocketfft's pool, which sleeps rather than spins when idle).
FFT_WORKERS = max(1, min(2, os.cpu_count() or 1))


def hankel_symbol(n_terms: int, kind: str) -> np.ndarray:
    """Return h[n] for n = 0 .. n_terms-1 (the value of every entry with i + j = n)."""
    n = np.arange(n_terms, dtype=np.float64)
    if kind == "H":
        return 2.0 / ((n + 1.0) * (n + 2.0) * (n + 3.0))
    if kind == "N":
        return 24.0 / ((n + 1.0) * (n + 2.0) * (n + 3.0) * (n + 4.0) * (n + 5.0))
    raise ValueError(f"kind must be 'H' or 'N', got {kind!r}")


def dense_matrix(T: int, kind: str) -> np.ndarray:
    """The full T x T matrix (only for small T: O(T^2) memory)."""
    h = hankel_symbol(2 * T - 1, kind)
    idx = np.add.outer(np.arange(T), np.arange(T))
    return h[idx]


class HankelFFT:
    """Mat-vec with the T x T Hankel matrix M_ij = h[i + j] in O(T log T), never forming M.

    (M x)_i = sum_j h[i + j] x_j is a correlation of h with x.  With an FFT length
    N >= 2T - 1, a circular correlation of the zero-padded sequences has no wrap-around for
    0 <= i, j <= T-1 (i + j <= 2T - 2 < N), so (M x)_i = irfft(rfft(h) * conj(rfft(x)))[i].
    """

    def __init__(self, T: int, kind: str):
        self.T = int(T)
        self.n_fft = sfft.next_fast_len(2 * self.T - 1, real=True)
        h = np.zeros(self.n_fft)
        h[: 2 * self.T - 1] = hankel_symbol(2 * self.T - 1, kind)
        self._hf = sfft.rfft(h)

    def matmat(self, X: np.ndarray) -> np.ndarray:
        """Return M @ X for X of shape (T, m)."""
        return self.matmat_rows(np.ascontiguousarray(X.T)).T

    def matmat_rows(self, Xt: np.ndarray) -> np.ndarray:
        """Return (M @ Xt.T).T for Xt of shape (m, T): every row transformed along contiguous
        memory, :data:`FFT_WORKERS` rows at a time (one per thread; small batches keep each
        FFT buffer under glibc's mmap threshold, so it is reused instead of page-faulted in
        afresh: on this project's VM a fresh large buffer costs several times the arithmetic
        on it)."""
        m, T = Xt.shape
        out = np.empty((m, T))
        block = FFT_WORKERS
        for s in range(0, m, block):
            xf = sfft.rfft(Xt[s : s + block], n=self.n_fft, axis=1, workers=FFT_WORKERS)
            np.conjugate(xf, out=xf)
            xf *= self._hf
            out[s : s + block] = sfft.irfft(xf, n=self.n_fft, axis=1, workers=FFT_WORKERS)[:, :T]
        return out
