"""Private hot paths of the online learners: FFT feature maps and the numba OGD loop."""

from __future__ import annotations

import math

import numpy as np
import scipy.fft as sfft

from .._jit import njit

__all__ = ["lagged_features", "ar_part", "ogd_loop", "ogd_loop_plain"]


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


def ogd_loop_plain(X, base, y, lr, radius, M, pred, loss):
    """:func:`ogd_loop` for the interpreter (numba missing or disabled): the same arithmetic
    in the same order on Python floats in lists, so the same numbers bit for bit (tested),
    ~10x faster than the loop on numpy scalars. Writes ``M``, ``pred[:t+1]`` and
    ``loss[:t+1]`` back; returns as :func:`ogd_loop`."""
    n, m, d_in = X.shape
    d_out = y.shape[1]
    radius = float(radius)
    if d_in == d_out == 1:
        return _ogd_loop_scalar(X, base, y, lr, radius, M, pred, loss)
    r2 = radius * radius
    Xl = X.reshape(n, m * d_in).tolist()  # row t: X[t, i, a] at i * d_in + a
    Bl = base.tolist()
    Yl = y.tolist()
    Ml = M.reshape(m, d_out * d_in).tolist()  # row i: M[i, o, a] at o * d_in + a
    Pl: list[list[float]] = []
    Ll: list[float] = []
    lrl = lr.tolist()
    bad = -1
    for t in range(n):
        xt = Xl[t]
        bt = Bl[t]
        yt = Yl[t]
        lt = 0.0
        err = []
        prow = []
        for o in range(d_out):
            s = bt[o]
            off = o * d_in
            for i in range(m):
                mi = Ml[i]
                xi = i * d_in
                for a in range(d_in):
                    s += mi[off + a] * xt[xi + a]
            prow.append(s)
            e = s - yt[o]
            err.append(e)
            lt += e * e
        Pl.append(prow)
        Ll.append(lt)
        if not math.isfinite(lt):
            bad = t
            break
        g = 2.0 * lrl[t]
        for i in range(m):
            mi = Ml[i]
            xi = i * d_in
            nrm = 0.0
            for o in range(d_out):
                ge = g * err[o]
                off = o * d_in
                for a in range(d_in):
                    v = mi[off + a] - ge * xt[xi + a]
                    mi[off + a] = v
                    nrm += v * v
            if nrm > r2:
                sc = radius / math.sqrt(nrm)
                for j in range(d_out * d_in):
                    mi[j] *= sc
    done = len(Pl)
    pred[:done] = np.array(Pl, dtype=np.float64).reshape(done, d_out)
    loss[:done] = Ll
    M[...] = np.array(Ml, dtype=np.float64).reshape(M.shape)
    return bad


def _ogd_loop_scalar(X, base, y, lr, radius, M, pred, loss):
    """:func:`ogd_loop_plain` for one input and one output (the lessons' streams): the same
    operations in the same order, without the index arithmetic. ``nrm = 0.0 + v * v`` and
    ``lt = 0.0 + e * e`` as the loop accumulates them; with ``radius = inf`` no block is ever
    rescaled (``nrm > inf`` is never true), so the test is skipped."""
    n, m = X.shape[0], X.shape[1]
    r2 = radius * radius
    project = math.isfinite(r2)
    Xl = X.reshape(n, m).tolist()
    Bl = base.reshape(n).tolist()
    Yl = y.reshape(n).tolist()
    Ml = M.reshape(m).tolist()
    lrl = lr.tolist()
    Pl: list[float] = []
    Ll: list[float] = []
    bad = -1
    for t in range(n):
        xt = Xl[t]
        s = Bl[t]
        for mi, xi in zip(Ml, xt):
            s += mi * xi
        e = s - Yl[t]
        lt = 0.0 + e * e
        Pl.append(s)
        Ll.append(lt)
        if not math.isfinite(lt):
            bad = t
            break
        ge = (2.0 * lrl[t]) * e
        Ml = [mi - ge * xi for mi, xi in zip(Ml, xt)]
        if project:
            for i, v in enumerate(Ml):
                nrm = 0.0 + v * v
                if nrm > r2:
                    Ml[i] = v * (radius / math.sqrt(nrm))
    done = len(Pl)
    pred[:done, 0] = Pl
    loss[:done] = Ll
    M[...] = np.array(Ml, dtype=np.float64).reshape(M.shape)
    return bad


@njit(cache=True, plain=ogd_loop_plain)
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
