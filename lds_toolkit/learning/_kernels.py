"""Private hot paths of the online learners: FFT feature maps and the numba OGD loop."""

from __future__ import annotations

import numpy as np
import scipy.fft as sfft

from .._jit import njit

__all__ = ["lagged_features", "ar_part", "ogd_loop"]


def lagged_features(u: np.ndarray, taps: np.ndarray, lag: int) -> np.ndarray:
    """X[t, i, a] = sum_j taps[j, i] * u[t - lag - j, a]  (zero for negative time indices).

    Causal FFT convolution of every input channel with every column of ``taps``.

    Parameters
    ----------
    u : ndarray, shape (n, d_in)
    taps : ndarray, shape (L, m)
    lag : int >= 0
        Delay of tap 0: ``lag = 1`` makes tap 0 multiply u[t - 1].

    Returns
    -------
    ndarray, shape (n, m, d_in)
    """
    n, d_in = u.shape
    L, m = taps.shape
    X = np.zeros((n, m, d_in))
    if m == 0 or n <= lag:
        return X
    n_eff = n - lag  # outputs t = lag .. n-1 use u[0 .. n-1-lag]
    nfft = sfft.next_fast_len(n_eff + L - 1, real=True)
    uf = sfft.rfft(u[:n_eff], n=nfft, axis=0)  # (F, d_in)
    wf = sfft.rfft(taps, n=nfft, axis=0)  # (F, m)
    X[lag:] = sfft.irfft(wf[:, :, None] * uf[:, None, :], n=nfft, axis=0)[:n_eff]
    return X


def ar_part(y: np.ndarray, coefs: tuple[float, ...]) -> np.ndarray:
    """base[t] = sum_j coefs[j] * y[t - 1 - j]  (zero for negative time indices)."""
    base = np.zeros_like(y)
    for j, c in enumerate(coefs):
        if j + 1 < y.shape[0]:
            base[j + 1 :] += c * y[: y.shape[0] - j - 1]
    return base


@njit(cache=True)
def ogd_loop(X, base, y, lr, radius, M, pred, loss):  # pragma: no cover - compiled
    """Online gradient descent with per-block Frobenius projection, in place.

    For t = 0 .. n-1:  pred[t] = base[t] + sum_i M_i X[t, i];  loss[t] = ||pred[t] - y[t]||^2;
    M_i <- M_i - lr[t] * 2 (pred[t] - y[t]) X[t, i]^T;  M_i <- M_i * min(1, radius / ||M_i||_F).

    Returns -1, or the first step whose loss is not finite (M then holds the state before it).
    """
    n, m, d_in = X.shape
    d_out = y.shape[1]
    r2 = radius * radius
    err = np.empty(d_out)
    for t in range(n):
        lt = 0.0
        for o in range(d_out):
            s = base[t, o]
            for i in range(m):
                for a in range(d_in):
                    s += M[i, o, a] * X[t, i, a]
            pred[t, o] = s
            e = s - y[t, o]
            err[o] = e
            lt += e * e
        loss[t] = lt
        if not np.isfinite(lt):
            return t
        g = 2.0 * lr[t]
        for i in range(m):
            nrm = 0.0
            for o in range(d_out):
                ge = g * err[o]
                for a in range(d_in):
                    v = M[i, o, a] - ge * X[t, i, a]
                    M[i, o, a] = v
                    nrm += v * v
            if nrm > r2:
                sc = radius / np.sqrt(nrm)
                for o in range(d_out):
                    for a in range(d_in):
                        M[i, o, a] *= sc
    return -1
