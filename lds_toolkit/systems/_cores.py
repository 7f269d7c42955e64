"""numba cores of the discrete-time simulator.

All cores run the *standard* state recursion on a flattened batch::

    s_0 = x0,   s_{t+1} = A s_t + B u_t + w_t

and emit ``y_t = C s_{t+use_next} + D u_t`` where ``use_next`` is 0 (standard convention) or
1 (S4 convention, the input enters the state in the same step). Stored states are the ones
the output reads: s_t, or s_{t+1} when ``use_next``. The paper's lagged
convention is a shift of the standard one and is done by the caller.

Each core detects the earliest step t at which the Euclidean norm of some batch element's
state s_{t+1} exceeds ``bound`` (or becomes non-finite) and returns (batch, step), the lowest
batch index among elements diverging at that step; callers turn this into
:class:`~lds_toolkit.systems.SimulationDivergedError`.
"""

from __future__ import annotations

import numpy as np

from .._jit import njit

_FASTMATH = {"contract", "reassoc"}  # lets LLVM vectorise the reductions; no NaN/inf shortcuts
_DBL_MAX = np.finfo(np.float64).max


@njit(cache=True)
def squared_limit(limit):
    """``limit**2`` capped at the largest float, so that an overflowed sum of squares (inf)
    never compares as ``<=`` and always reaches :func:`norm_exceeds`."""
    return min(limit * limit, _DBL_MAX)


@njit(cache=True)
def norm_exceeds(v, limit):
    """Exact test ``||v||_2 > limit`` (or a non-finite entry), robust to overflow.

    The cores accumulate ``sum |v_i|^2`` on the fly and call this only when that sum is not
    ``<= squared_limit(limit)``: the sum overflows to inf once ||v|| > ~1.3e154 even though
    v is finite, so the decision is re-made here with the vector scaled by its largest entry.
    """
    scale = 0.0
    for i in range(v.shape[0]):
        a = max(abs(v[i].real), abs(v[i].imag))
        if not (a <= _DBL_MAX):  # inf or NaN
            return True
        scale = max(scale, a)
    if scale == 0.0:
        return False
    acc = 0.0
    for i in range(v.shape[0]):
        re = v[i].real / scale
        im = v[i].imag / scale
        acc += re * re + im * im
    return scale * np.sqrt(acc) > limit


@njit(cache=True)
def dense_core(A, B, C, D, u, x0, w, has_noise, use_next, store_states, bound):
    """Dense path: one BLAS matrix product per step for the whole batch, O(b n^2).

    Shapes: u (b, T, d_in), x0 (b, n), w (b, T, n) or a dummy when ``has_noise`` is False.
    Returns (y (b, T, d_out), states (b, T, n) or (b, 0, n), final (b, n), bad_batch,
    bad_step).
    """
    nb, T, d_in = u.shape
    n = A.shape[0]
    d_out = C.shape[0]
    AT, BT, CT, DT = A.T.copy(), B.T.copy(), C.T.copy(), D.T.copy()
    y = np.empty((nb, T, d_out))
    states = np.empty((nb, T if store_states else 0, n))
    bound2 = squared_limit(bound)
    S = x0.copy()
    for t in range(T):
        Ut = u[:, t, :].copy()
        if store_states and not use_next:
            states[:, t, :] = S
        S_next = S @ AT + Ut @ BT
        if has_noise:
            S_next += w[:, t, :]
        for b in range(nb):
            nrm = 0.0
            for i in range(n):
                nrm += S_next[b, i] * S_next[b, i]
            if not (nrm <= bound2) and norm_exceeds(S_next[b], bound):  # also catches NaN
                return y, states, S, b, t
        if store_states and use_next:
            states[:, t, :] = S_next
        y[:, t, :] = (S_next if use_next else S) @ CT + Ut @ DT
        S = S_next
    return y, states, S, -1, -1


@njit(cache=True, fastmath=_FASTMATH)
def modal_core(lr, li, Br, Bi, Cr, Ci, D, u, z0, w, has_noise, use_next, store_states,
               bound, vnorm):
    """Eigenbasis path: O(m (d_in + d_out)) per step, complex modes in split real/imaginary
    storage (so that LLVM vectorises the loops over the modes).

    The modal coordinates are z = zr + i zi (``s = Re(V_w z)``), ``lam = lr + i li`` the kept
    eigenvalues, ``Bm = Br + i Bi = W B``, ``Cm = Cr + i Ci = C V_w``, ``w`` the noise in modal
    coordinates; ``z0``, ``w``, the stored states and the final state hold [Re z | Im z]
    (2m columns). A real A passes ``li = Bi = Ci = 0``: the imaginary half stays 0.

    Per step: y_t = Re(Cm z_{t+use_next}) + D u_t, z_{t+1} = lam * z_t + Bm u_t + w_t.
    Divergence is checked on ``||z|| * vnorm >= ||V_w z||`` (``vnorm = 1`` for orthogonal V is
    exact); callers confirm the exact step with the dense path. Also returns
    ``zmax[i] = max_{b,t} |z_{t,i}|`` over the states reached (the modal certificate's input).
    Returns (y (b, T, d_out), states (b, T, 2m) or (b, 0, 2m), final (b, 2m), bad_batch,
    bad_step, zmax (m,)).
    """
    nb, T, d_in = u.shape
    m = lr.shape[0]
    d_out = Cr.shape[0]
    y = np.empty((nb, T, d_out))
    states = np.empty((nb, T if store_states else 0, 2 * m))
    final = np.empty((nb, 2 * m))
    bound2 = squared_limit(bound / vnorm)
    zr = np.empty(m)
    zi = np.empty(m)
    zmax2 = np.zeros(m)
    bad_b, bad_t = -1, T  # earliest divergence over the batch (lowest b among ties)
    for b in range(nb):
        for i in range(m):
            zr[i] = z0[b, i]
            zi[i] = z0[b, m + i]
            zmax2[i] = max(zmax2[i], zr[i] * zr[i] + zi[i] * zi[i])
        for t in range(bad_t):
            if store_states and not use_next:
                states[b, t, :m] = zr
                states[b, t, m:] = zi
            if not use_next:
                for k in range(d_out):
                    acc = 0.0
                    for i in range(m):
                        acc += Cr[k, i] * zr[i] - Ci[k, i] * zi[i]
                    y[b, t, k] = acc
            for i in range(m):
                a, c = zr[i], zi[i]
                zr[i] = lr[i] * a - li[i] * c
                zi[i] = lr[i] * c + li[i] * a
            for j in range(d_in):
                uj = u[b, t, j]
                for i in range(m):
                    zr[i] += Br[i, j] * uj
                    zi[i] += Bi[i, j] * uj
            if has_noise:
                for i in range(m):
                    zr[i] += w[b, t, i]
                    zi[i] += w[b, t, m + i]
            nrm = 0.0
            for i in range(m):
                a2 = zr[i] * zr[i] + zi[i] * zi[i]
                nrm += a2
                zmax2[i] = max(zmax2[i], a2)
            if not (nrm <= bound2):
                both = np.concatenate((zr, zi))
                if norm_exceeds(both, bound / vnorm):
                    bad_b, bad_t = b, t  # later batch elements only need to run up to here
                    break
            if store_states and use_next:
                states[b, t, :m] = zr
                states[b, t, m:] = zi
            if use_next:
                for k in range(d_out):
                    acc = 0.0
                    for i in range(m):
                        acc += Cr[k, i] * zr[i] - Ci[k, i] * zi[i]
                    y[b, t, k] = acc
            for k in range(d_out):
                acc = y[b, t, k]
                for j in range(d_in):
                    acc += D[k, j] * u[b, t, j]
                y[b, t, k] = acc
        final[b, :m] = zr
        final[b, m:] = zi
    zmax = np.sqrt(zmax2)
    if bad_b >= 0:
        return y, states, final, bad_b, bad_t, zmax
    return y, states, final, -1, -1, zmax
