r"""Private: the modal path of :func:`lds_toolkit.systems.simulate_continuous` on a grid with
varying steps.

In the eigenbasis A = V Λ V^{-1} (kept modes, :mod:`._modal`) the exact update for an input
held at u_k on [t_k, t_k + h_k) is elementwise::

    z_{k+1} = e^{λ h_k} z_k + φ(λ, h_k) (W B u_k),    φ(λ, h) = ∫_0^h e^{λ s} ds = expm1(λ h) / λ

(φ = h for λ = 0), so a step costs O(m (d_in + d_out)) and the grid's distinct steps cost one
exponential per mode each, instead of one (n + d_in)-square matrix exponential per distinct step
and an O(n^2) product per step. The certificate is the discrete one with the accumulation
factors of continuous time, S_i = ∫_0^{t_end - t_0} |e^{λ_i s}| ds (:func:`._modal.integral_sums`).
"""

from __future__ import annotations

import numpy as np

from .._jit import njit
from ._cores import norm_exceeds, squared_limit
from ._modal import (
    certify,
    geometric_sums,
    integral_sums,
    modal_form,
    recursion_rounding,
    reduce_modes,
)
from ._paths import Diverged

_EPS = float(np.finfo(np.float64).eps)


@njit(cache=True)
def _varying_modal_core(er, ei, fr, fi, idx, Br, Bi, Cr, Ci, D, u, z0, store, bound, vnorm):
    """z_{k+1} = e_k z_k + f_k (Bm u_k) with (e_k, f_k) = rows idx[k] of (e, f); split
    real/imaginary storage as in ``_cores.modal_core``. y_k = Re(Cm z_k) + D u_k for k < K.

    Returns (y (b, K, d_out), states (b, K or 0, 2m), bad_b, bad_k, zmax (m,)); bad_k is the
    interval whose end state exceeded ``bound / vnorm`` in ||z|| (-1 when none).
    """
    nb, K, d_in = u.shape
    m = Br.shape[0]
    d_out = Cr.shape[0]
    y = np.empty((nb, K, d_out))
    states = np.empty((nb, K if store else 0, 2 * m))
    bound2 = squared_limit(bound / vnorm)
    zr = np.empty(m)
    zi = np.empty(m)
    br = np.empty(m)
    bi = np.empty(m)
    zmax2 = np.zeros(m)
    bad_b, bad_k = -1, K
    for b in range(nb):
        for i in range(m):
            zr[i] = z0[b, i]
            zi[i] = z0[b, m + i]
            zmax2[i] = max(zmax2[i], zr[i] * zr[i] + zi[i] * zi[i])
        for k in range(min(K, bad_k + 1)):
            if store:
                states[b, k, :m] = zr
                states[b, k, m:] = zi
            for c in range(d_out):
                acc = 0.0
                for i in range(m):
                    acc += Cr[c, i] * zr[i] - Ci[c, i] * zi[i]
                for j in range(d_in):
                    acc += D[c, j] * u[b, k, j]
                y[b, k, c] = acc
            if k >= min(K - 1, bad_k):
                break
            r = idx[k]
            for i in range(m):
                br[i] = 0.0
                bi[i] = 0.0
            for j in range(d_in):
                uj = u[b, k, j]
                for i in range(m):
                    br[i] += Br[i, j] * uj
                    bi[i] += Bi[i, j] * uj
            nrm = 0.0
            for i in range(m):
                a, c2 = zr[i], zi[i]
                nr = er[r, i] * a - ei[r, i] * c2 + fr[r, i] * br[i] - fi[r, i] * bi[i]
                ni = er[r, i] * c2 + ei[r, i] * a + fr[r, i] * bi[i] + fi[r, i] * br[i]
                zr[i] = nr
                zi[i] = ni
                a2 = nr * nr + ni * ni
                nrm += a2
                zmax2[i] = max(zmax2[i], a2)
            if not (nrm <= bound2) and norm_exceeds(np.concatenate((zr, zi)), bound / vnorm):
                bad_b, bad_k = b, k
                break
    return y, states, bad_b, (bad_k if bad_b >= 0 else -1), np.sqrt(zmax2)


def step_factors(lam: np.ndarray, h: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """e = exp(λ h) and φ = expm1(λ h) / λ (= h where λ h = 0), shape (len(h), m)."""
    x = np.multiply.outer(h, lam)
    e = np.exp(x)
    with np.errstate(divide="ignore", invalid="ignore"):
        phi = np.where(x == 0, h[:, None] + 0 * x, np.expm1(x) / np.where(lam == 0, 1, lam))
    return e, phi


def run_varying(system, h, ub, x0b, bound, method, rtol, forced_max_cond):
    """The modal path on steps ``h`` (K - 1 of them) for inputs ub (nb, K, d_in).

    Returns ``(result, certificate)``: ``result = (y, states)`` with states (nb, K, n), or
    ``None`` when the dense path should run instead (``method == "auto"``: not diagonalisable
    well enough, a failed certificate, or a divergence the conservative modal check cannot
    place); ``certificate`` is None when the modal run was not tried. Raises ``ValueError``
    for ``method == "modal"`` on a defective A, and :class:`._paths.Diverged` for a
    divergence located exactly (orthogonal V).
    """
    A, B, C, D = system.A, system.B, system.C, system.D
    mf = modal_form(A)
    if method == "modal" and not mf.cond <= forced_max_cond:
        raise ValueError(
            "method='modal' needs a diagonalisable A; its eigenvector matrix has condition "
            f"number {mf.cond:.3g} > {forced_max_cond:g} (A is defective or nearly so), so the "
            "eigenbasis would not be exact. Use method='dense' or 'auto'.")
    if method == "auto" and not (mf.orthogonal or mf.cond * _EPS <= rtol):
        return None, None
    red = reduce_modes(mf.lam, mf.V, mf.Vinv, mf.orthogonal)
    m = red.lam.size
    uniq, inv = np.unique(h, return_inverse=True)
    e, phi = step_factors(red.lam.astype(np.complex128), uniq)
    Bm, Cm = red.W @ B, C @ red.Vw
    c = np.ascontiguousarray
    z0 = x0b @ red.W.T
    z0p = c(np.concatenate([z0.real, np.imag(z0)], axis=-1))
    vnorm = 1.0 if red.orthogonal else float(np.linalg.norm(red.Vw))
    y, zs, bad_b, bad_k, zmax = _varying_modal_core(
        c(e.real), c(e.imag), c(phi.real), c(phi.imag), c(inv.astype(np.int64)),
        c(Bm.real), c(np.imag(Bm)), c(Cm.real), c(np.imag(Cm)), D, ub, z0p, True, bound,
        vnorm)
    if bad_b >= 0:
        if red.orthogonal:  # ||V z|| = ||z||: the interval is the true one
            raise Diverged(bad_b, bad_k)
        return None, None
    back = np.concatenate([red.Vw.T.real, -np.imag(red.Vw.T)])
    states = zs[..., :m] @ back[:m] if not red.complex else zs @ back
    umax = np.abs(ub).max(axis=(0, 1), initial=0.0)
    zmax = np.maximum(zmax, np.abs(Bm) @ umax * uniq.max(initial=0.0))
    S, G = integral_sums(red.lam, float(h.sum()))
    gain = np.abs(e).max(axis=0, initial=0.0)
    # a rounding error made at step j reaches the end multiplied by up to gain^(K-1-j): the
    # geometric sum, not K, for an unstable mode (an open-loop-unstable A under feedback
    # inputs amplifies each step's rounding by e^(Re lam (t_end - t_j)))
    steps = geometric_sums(gain, h.size)[0]
    drive = np.abs(phi).max(axis=0, initial=0.0) * (np.abs(Bm) @ umax)
    xi0 = None
    if np.any(x0b):
        back0 = np.real(z0 @ red.Vw.T)
        xi0 = np.abs((back0 - x0b) @ red.W.T).max(axis=0, initial=0.0)
    cert = certify(A, B, C, red, mf.cond, S=S, G=G,
                   rounding=recursion_rounding(gain, zmax, drive, steps), zmax=zmax,
                   umax=umax, ymax=float(np.abs(y).max(initial=0.0)), xi0=xi0,
                   xmax=float(np.abs(states).max(initial=0.0)), rtol=rtol)
    if method == "auto" and not (cert.passed or mf.orthogonal):
        return None, cert
    return (y, states), cert
