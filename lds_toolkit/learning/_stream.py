r"""Private: the streaming step of the online learners, one compiled call per step, and the
features of the spectral filters through a diagonal LDS (``filters="lds"``).

**Features through a diagonal LDS.**  A learner's feature map (:mod:`._online`) is
x_{t,i} = sum_{j=0}^{L-1} taps[j, i] u_{t-1-j}.  Its first ``m0`` columns may be pure delays
(Algorithm 2's M_1 u_{t-1}, M_2 u_{t-2}: m0 = 2; Algorithm 1: m0 = 0); the others are a bank
of filters delayed by l = m0 taps, taps[l + j, m0 + b] = h_b(j), j = 0 .. c with c = L - 1 - l.
When h_b is the impulse response of a diagonal LDS, h_b(0) = D_b, h_b(j) = sum_s C_bs a_s^{j-1}
(B folded into C: C_bs = C_bs B_s), the bank needs no window of inputs::

    x_{t, m0+b} = D_b u_{t-1-l} + sum_s C_bs w_t[s],
    w_t[s]      = sum_{j=1}^{c} a_s^{j-1} u_{t-1-l-j}                       (the last c inputs)
    w_{t+1}[s]  = a_s w_t[s] + u_{t-1-l} - a_s^c u_{t-L}

The last line is the ring buffer of states, x_t - A^c x_{t-c} for x_{t+1} = A x_t + B v_t
(v_t = u_{t-1-l}): that difference obeys its own recursion, whose only extra input is the one
that leaves the window, u_{t-L}, read from the ring buffer of inputs the learner keeps anyway;
so it costs O(L d) memory instead of O(L n d) for L stored states, and O(n d) per step
(n states, d inputs), O(n m d) for the features, whatever t, T and L.  With |a_s| < 1 the
recursion's round-off does not grow: an error is damped by a_s each step.

**One step, one call.**  :func:`stream_step` predicts y_t from the history, suffers the loss,
takes the projected OGD step of :mod:`._online` (same step sizes, same projection) and
stores u_t and y_t, in one compiled call; :func:`stream_predict` is ``predict_one``.
"""

from __future__ import annotations

import math

import numpy as np

from .._jit import njit

__all__ = ["DiagonalBank", "stream_features", "stream_predict", "stream_step",
           "bank_design", "bank_state", "SCHEDULE_CODES"]

#: lr_schedule -> the code the compiled step reads.
SCHEDULE_CODES = {"constant": 0, "inv_sqrt": 1, "normalized": 2}


class DiagonalBank:
    r"""A learner's filter bank realized by a diagonal LDS (module docstring).

    Parameters
    ----------
    decays : ndarray, shape (n,)
        The diagonal of A, real, |a_s| < 1.
    C : ndarray, shape (m_b, n)
        Output matrix with B folded in (C diag(B)) and each filter's scale applied.
    D : ndarray, shape (m_b,)
        Direct term (tap 0 of each filter).
    m0 : int
        Leading pure-delay columns (x_{t,i} = u_{t-1-i}, i < m0); the bank is delayed by m0.
    L : int
        The context length: the bank sees u_{t-1-m0}, ..., u_{t-L}.
    """

    def __init__(self, decays, C, D, m0: int, L: int):
        self.decays = np.ascontiguousarray(decays, dtype=np.float64)
        self.C = np.ascontiguousarray(C, dtype=np.float64)
        self.D = np.ascontiguousarray(D, dtype=np.float64)
        self.m0, self.L = int(m0), int(L)
        if self.L < self.m0 + 1:
            raise ValueError(f"context L={self.L} must be >= {self.m0 + 1} (m0={self.m0})")
        c = self.L - 1 - self.m0
        self.tail = self.decays ** c  # a^c: the weight of the input leaving the window
        self.n = self.decays.shape[0]
        self.m = self.m0 + self.C.shape[0]

    def taps(self) -> np.ndarray:
        """The taps (L, m) this bank realizes: the exact route's feature map (for checks)."""
        L, m0 = self.L, self.m0
        out = np.zeros((L, self.m))
        out[np.arange(m0), np.arange(m0)] = 1.0
        c = L - 1 - m0
        out[m0, m0:] = self.D
        if c > 0:
            j = np.arange(1, c + 1)
            powers = self.decays[None, :] ** (j[:, None] - 1)  # (c, n)
            out[m0 + 1:, m0:] = powers @ self.C.T
        return out

    def cost(self, d: int) -> int:
        """Multiply-adds of one step's features and state, per input column (the O(n m d))."""
        return (self.n * (self.m - self.m0 + 2) + self.m0) * d


@njit(cache=True)
def stream_features(lds, taps_rev, decays, C, D, m0, w, buf, pos, out):  # pragma: no cover
    """x_t (m, d) from the history: the exact window ``taps_rev`` (L, m) over the ring buffer
    ``buf`` (2L, d), or (``lds``) the delays and the diagonal bank's state ``w`` (n, d)."""
    L = buf.shape[0] // 2
    d = buf.shape[1]
    m = out.shape[0]
    if not lds:
        for i in range(m):
            for a in range(d):
                out[i, a] = 0.0
        for j in range(L):  # buf[pos + j] is u_{t-L+j}; taps_rev[j] its taps
            row = pos + j
            for i in range(m):
                tw = taps_rev[j, i]
                if tw != 0.0:
                    for a in range(d):
                        out[i, a] += tw * buf[row, a]
        return
    for i in range(m0):  # pure delays: u_{t-1-i}
        for a in range(d):
            out[i, a] = buf[pos + L - 1 - i, a]
    lagged = pos + L - 1 - m0  # u_{t-1-m0}
    n = decays.shape[0]
    for b in range(m - m0):
        for a in range(d):
            s = D[b] * buf[lagged, a]
            for k in range(n):
                s += C[b, k] * w[k, a]
            out[m0 + b, a] = s


@njit(cache=True)
def stream_predict(lds, taps_rev, decays, C, D, m0, w, buf, pos, M, coefs, yhist,
                   x, pred):  # pragma: no cover - compiled
    """``predict_one``: x_t into ``x`` and yhat_t = sum_j coefs[j] y_{t-1-j} + sum_i M_i x_{t,i}
    into ``pred``."""
    stream_features(lds, taps_rev, decays, C, D, m0, w, buf, pos, x)
    m, d_out, d = M.shape
    for o in range(d_out):
        s = 0.0
        for j in range(coefs.shape[0]):
            s += coefs[j] * yhist[j, o]
        for i in range(m):
            for a in range(d):
                s += M[i, o, a] * x[i, a]
        pred[o] = s


@njit(cache=True)
def stream_step(lds, taps_rev, decays, C, D, tail, m0, w, buf, pos, M, coefs, yhist,
                u_t, y_t, learns, lr, schedule, t, peak, gain, radius, x, pred,
                err, fresh):  # pragma: no cover - compiled
    """One step of the online protocol at time t (``t`` updates made so far), in place.

    Predicts y_t (:func:`stream_predict`; ``fresh``: ``x`` and ``pred`` hold it already,
    from this step's ``predict_one``), suffers loss = ||yhat_t - y_t||^2 and, when it is
    finite, takes the OGD step with eta_{t+1} (``schedule`` 0: lr, 1: lr / sqrt(t+1),
    2: lr / (sqrt(t+1) gain peak), none while gain peak = 0), projects each M_i on the
    Frobenius ball of ``radius``, advances the bank's state (module docstring) and stores
    u_t (ring buffer position ``pos``) and y_t.  Returns ``(loss, ||u_t||^2)``; a non-finite
    loss changes nothing.
    """
    if not fresh:
        stream_predict(lds, taps_rev, decays, C, D, m0, w, buf, pos, M, coefs, yhist, x, pred)
    m, d_out, d = M.shape
    loss = 0.0
    for o in range(d_out):
        e = pred[o] - y_t[o]
        err[o] = e
        loss += e * e
    if not np.isfinite(loss):
        return loss, 0.0
    if learns and m > 0:
        if schedule == 0:
            eta = lr
        else:
            eta = lr / math.sqrt(t + 1.0)
            if schedule == 2:
                g = gain * peak
                eta = eta / g if g > 0.0 else 0.0
        r2 = radius * radius
        for i in range(m):
            nrm = 0.0
            for o in range(d_out):
                ge = 2.0 * eta * err[o]
                for a in range(d):
                    v = M[i, o, a] - ge * x[i, a]
                    M[i, o, a] = v
                    nrm += v * v
            if nrm > r2:
                sc = radius / math.sqrt(nrm)
                for o in range(d_out):
                    for a in range(d):
                        M[i, o, a] *= sc
    L = buf.shape[0] // 2
    if lds:  # w_{t+1} = a w_t + u_{t-1-m0} - a^c u_{t-L}
        lagged = pos + L - 1 - m0
        n = decays.shape[0]
        for k in range(n):
            ak = decays[k]
            tk = tail[k]
            for a in range(d):
                w[k, a] = ak * w[k, a] + buf[lagged, a] - tk * buf[pos, a]
    sq = 0.0
    for a in range(d):  # store u_t twice: the window buf[pos + 1 : pos + 1 + L] stays contiguous
        buf[pos, a] = u_t[a]
        buf[pos + L, a] = u_t[a]
        sq += u_t[a] * u_t[a]
    for j in range(yhist.shape[0] - 1, 0, -1):
        for o in range(d_out):
            yhist[j, o] = yhist[j - 1, o]
    for o in range(d_out):
        yhist[0, o] = y_t[o]
    return loss, sq


@njit(cache=True)
def bank_design(u, decays, C, D, m0, L, X):  # pragma: no cover - compiled
    """The whole stream's features through the bank, X (n, m, d), by the streaming recursion
    (the numbers ``filters="lds"`` streams with); returns the state w after the stream."""
    n_t, d = u.shape
    n = decays.shape[0]
    mb = C.shape[0]
    c = L - 1 - m0
    w = np.zeros((n, d))
    for t in range(n_t):
        for i in range(m0):
            for a in range(d):
                X[t, i, a] = u[t - 1 - i, a] if t - 1 - i >= 0 else 0.0
        lag = t - 1 - m0
        for b in range(mb):
            for a in range(d):
                s = D[b] * u[lag, a] if lag >= 0 else 0.0
                for k in range(n):
                    s += C[b, k] * w[k, a]
                X[t, m0 + b, a] = s
        old = t - L
        for k in range(n):
            ak = decays[k]
            tk = ak ** c
            for a in range(d):
                v = ak * w[k, a]
                if lag >= 0:
                    v += u[lag, a]
                if old >= 0:
                    v -= tk * u[old, a]
                w[k, a] = v
    return w


@njit(cache=True)
def bank_state(u, decays, m0, L):  # pragma: no cover - compiled
    """w_n (n, d) after a stream u (n_t, d) directly: sum_{j=1}^{c} a^{j-1} u_{n-1-m0-j}."""
    n_t, d = u.shape
    n = decays.shape[0]
    c = L - 1 - m0
    w = np.zeros((n, d))
    for k in range(n):
        p = 1.0
        for j in range(1, c + 1):
            t = n_t - 1 - m0 - j
            if t < 0:
                break
            for a in range(d):
                w[k, a] += p * u[t, a]
            p *= decays[k]
    return w
