r"""Private: the two simulation paths of :func:`lds_toolkit.systems.simulate` and the choice
between them.

``"modal"`` runs in the eigenbasis (:mod:`._modal`): O(n (d_in + d_out)) per step and stream
plus one O(n^3) decomposition, followed by an a-posteriori error estimate (the certificate).
``"dense"`` runs with A itself: O(n^2) per step. Each path has two routes:

* blocked (:mod:`._blocked`): no process noise, inputs long enough; every block of L steps of
  the whole batch goes through matrix-matrix products. Outputs only on both paths; with the
  states on the dense path only (``states_worthwhile``: nb T >= 512 steps and T >= 2n);
* recursion (:mod:`._cores`): one step at a time, states and noise included; the dense core
  multiplies the whole batch by A in one product per step.

``method="auto"``: a run without process noise takes the blocked dense route when it pays (it
needs no decomposition: an O(n^3 log L) set-up (plus O(L n^2 (d_in + d_out)) for outputs
only), which beats the modal set-up, an O(n^3) eigen-decomposition with a larger constant, at
every size measured; with the states, the blocked route makes the same T n^2 multiply-adds as
the recursion but in matrix-matrix products, and the modal path also pays T n^2 to map its
states back, so the blocked route was faster at every size measured, n = 4 to 256). Otherwise
(process noise, or a run too short for blocks) the modal path when A is symmetric (orthogonal
eigenbasis: the modal recursion is backward stable like the dense one), or when cond(V) eps
<= rtol and the certificate's estimate is <= rtol after the run; otherwise (a
non-diagonalisable or nearly defective A, or a run whose estimate fails) the dense path.
``"modal"`` / ``"dense"`` force a path (``"modal"`` still refuses cond(V) >
``MODAL_FORCED_MAX_COND``); the path is reported, not the route.

:func:`run` returns ``(y, states, final, path, certificate)`` with ``y`` of shape (nb, T,
d_out) in the core convention (standard or S4, see :mod:`._cores`), ``states`` (nb, T, n) or
None, ``final`` (nb, n), and ``certificate`` a :class:`ModalCertificate` (None when the modal
path was not tried). A divergence raises :class:`Diverged` with the flat batch index and the
step, which the caller turns into ``SimulationDivergedError``.
"""

from __future__ import annotations

import numpy as np

from .._threads import one_thread
from . import _cores
from ._blocked import (
    BlockPlan,
    block_length,
    state_block_length,
    states_worthwhile,
    worthwhile,
)
from ._modal import certify, geometric_sums, modal_form, recursion_rounding, reduce_modes

#: Largest condition number accepted by an explicit method="modal" (relative error up to
#: about cond(V)·eps ≈ 2e-8); beyond it A is treated as defective and refused.
MODAL_FORCED_MAX_COND = 1e8
_EPS = float(np.finfo(np.float64).eps)


def run(system, D, ub, x0b, wb, use_next, return_states, bound, method, rtol):
    """Choose the path (module docstring) and simulate the flattened batch.

    BLAS runs on one thread: the products here are small (n x n, or tall with n columns),
    and on a shared 2-core machine a second OpenBLAS thread made them up to 8x slower
    (n = 64: 99 ms instead of 12 ms under load 5, measured). Large blocked runs with states
    split their blocks over threads instead (:mod:`._blocked`), each with one BLAS thread."""
    with one_thread("blas"):
        return _run(system, D, ub, x0b, wb, use_next, return_states, bound, method, rtol)


def _run(system, D, ub, x0b, wb, use_next, return_states, bound, method, rtol):
    A = system.A
    nb, T, d_in = ub.shape
    if method == "dense" or (method == "auto" and wb is None and
                             _blocked_dense(A.shape[0], d_in, system.C.shape[0], nb, T,
                                            return_states)):
        # the blocked dense route needs no decomposition and is the cheapest
        return _dense(system, D, ub, x0b, wb, use_next, return_states, bound, None)
    mf = modal_form(A)
    if method == "modal" and not mf.cond <= MODAL_FORCED_MAX_COND:
        raise ValueError(
            "method='modal' needs a diagonalisable A; its eigenvector matrix has condition "
            f"number {mf.cond:.3g} > {MODAL_FORCED_MAX_COND:g} (A is defective or nearly "
            "so, e.g. a Jordan block), so the eigenbasis would not be exact. Use "
            "method='dense' or 'auto'.")
    if method == "auto" and not (mf.orthogonal or mf.cond * _EPS <= rtol):
        return _dense(system, D, ub, x0b, wb, use_next, return_states, bound, None)
    out = _modal(system, D, mf, ub, x0b, wb, use_next, return_states, bound, rtol)
    if out is None:  # the modal norm bound is conservative: confirm on the dense path
        return _dense(system, D, ub, x0b, wb, use_next, return_states, bound, None)
    y, states, final, cert = out
    if method == "auto" and not (cert.passed or mf.orthogonal):
        return _dense(system, D, ub, x0b, wb, use_next, return_states, bound, cert)
    return y, states, final, "modal", cert


def _dense(system, D, ub, x0b, wb, use_next, return_states, bound, cert):
    A, B, C = system.A, system.B, system.C
    nb, T, d_in = ub.shape
    n, d_out = A.shape[0], C.shape[0]
    if wb is None and _blocked_dense(n, d_in, d_out, nb, T, return_states):
        L = (state_block_length(T, nb) if return_states else
             block_length(n, d_in, d_out, T, diagonal=False))
        plan = BlockPlan.dense(A, B, C, D, L, int(use_next), states=return_states)
        if return_states:
            got = plan.run_states(ub, x0b, bound)
            if got is not None:
                y, states = got
                # s_T: the last stored state (S4), or one step from s_{T-1} (standard)
                final = (states[:, -1].copy() if use_next else
                         states[:, -1] @ A.T + ub[:, -1] @ B.T)
                return y, states, final, "dense", cert
        else:
            got = plan.run(ub, x0b, bound)
            if got is not None:
                y, Z = got
                final = _finish_dense(system, D, ub, Z, L, use_next, bound)
                if final is not None:
                    return y, None, final, "dense", cert
    has_noise = wb is not None
    w = wb if has_noise else np.zeros((1, 1, 1))
    y, states, final, bad_b, bad_t = _cores.dense_core(
        A, B, C, D, ub, x0b, w, has_noise, use_next, return_states, bound)
    if bad_b >= 0:
        raise Diverged(bad_b, bad_t)
    return y, (states if return_states else None), final, "dense", cert


def _blocked_dense(n, d_in, d_out, nb, T, return_states):
    """Whether the dense path takes its blocked route (states or outputs only)."""
    if return_states:
        return states_worthwhile(n, T, nb)
    return worthwhile(n, d_in, d_out, T, diagonal=False)


def _finish_dense(system, D, ub, Z, L, use_next, bound):
    """s_T from the start of the last block by the per-step core (at most L steps)."""
    nb, T, _ = ub.shape
    t0 = (-(-T // L) - 1) * L
    _, _, final, bad_b, _ = _cores.dense_core(
        system.A, system.B, system.C, D, np.ascontiguousarray(ub[:, t0:]), Z[t0 // L],
        np.zeros((1, 1, 1)), False, use_next, False, bound)
    return None if bad_b >= 0 else final


def _modal(system, D, mf, ub, x0b, wb, use_next, return_states, bound, rtol):
    """The modal path; None when its conservative divergence check fired (confirm densely)."""
    B, C = system.B, system.C
    red = reduce_modes(mf.lam, mf.V, mf.Vinv, mf.orthogonal)
    nb, T, d_in = ub.shape
    m, d_out = red.lam.size, C.shape[0]
    Bm = red.W @ B
    Cm = C @ red.Vw
    split = _Split(red, Bm, Cm)
    z0 = x0b @ red.W.T
    vcol = np.linalg.norm(red.Vw, axis=0)
    y = states = None
    if wb is None and not return_states and worthwhile(m, d_in, d_out, T, diagonal=True):
        L = block_length(m, d_in, d_out, T, diagonal=True)
        plan = BlockPlan.modal(red.lam, Bm, Cm, D, L, int(use_next), vcol)
        got = plan.run(ub, z0, bound)
        if got is not None:
            y, Z = got
            t0 = (-(-T // L) - 1) * L
            # s_T from the start of the last block (the bound above covers it: no check)
            _, _, zfin, _, _, zlast = split.core(D, np.ascontiguousarray(ub[:, t0:]),
                                                 Z[t0 // L], None, use_next, False, np.inf, 1.0)
            zmax = np.maximum(np.abs(Z).max(axis=(0, 1), initial=0.0), zlast)
    if y is None:
        wm = None if wb is None else wb @ red.W.T
        vnorm = 1.0 if red.orthogonal else float(np.linalg.norm(red.Vw))  # >= ||V_w||_2
        y, zs, zfin, bad_b, bad_t, zmax = split.core(D, ub, z0, wm, use_next, return_states,
                                                     bound, vnorm)
        if bad_b >= 0:
            if red.orthogonal:  # exact: ||V z|| = ||z||, so the reported step is the true one
                raise Diverged(bad_b, bad_t)
            return None
        if return_states:
            states = split.to_states(zs)
    final = split.to_states(zfin)
    cert = _certificate(system, red, mf.cond, ub, x0b, wb, z0, zmax, y, states, T, rtol)
    return y, states, final, cert


class _Split:
    """The modal core's split real/imaginary storage ([Re z | Im z], see ``_cores.modal_core``)."""

    def __init__(self, red, Bm, Cm):
        self.red = red
        self.m = red.lam.size
        c = np.ascontiguousarray
        self.lr, self.li = c(red.lam.real), c(np.imag(red.lam))
        self.Br, self.Bi = c(Bm.real), c(np.imag(Bm))
        self.Cr, self.Ci = c(Cm.real), c(np.imag(Cm))
        V = red.Vw
        self.back = c(np.concatenate([V.T.real, -np.imag(V.T)]))  # (2m, n): s = [zr|zi] @ back

    def pack(self, z):
        """complex (..., m) -> float (..., 2m) = [Re z | Im z]."""
        return np.ascontiguousarray(np.concatenate([z.real, np.imag(z)], axis=-1))

    def core(self, D, ub, z0, wm, use_next, store, bound, vnorm):
        has_noise = wm is not None
        w = self.pack(wm) if has_noise else np.zeros((1, 1, 1))
        return _cores.modal_core(self.lr, self.li, self.Br, self.Bi, self.Cr, self.Ci, D, ub,
                                 self.pack(z0), w, has_noise, use_next, store, bound, vnorm)

    def to_states(self, zs):
        """s = Re(V_w z) from packed modal states (..., 2m): one real GEMM."""
        if not self.red.complex:  # the imaginary half is zero
            return zs[..., :self.m] @ self.back[:self.m]
        return zs @ self.back


def _certificate(system, red, cond, ub, x0b, wb, z0, zmax, y, states, T, rtol):
    S, G = geometric_sums(red.lam, T)
    umax = np.abs(ub).max(axis=(0, 1), initial=0.0)
    Bm = red.W @ system.B
    zmax = np.maximum(zmax, np.abs(Bm) @ umax)
    xi0 = None
    if np.any(x0b):
        back = np.real(z0 @ red.Vw.T) if red.complex else z0 @ red.Vw.T
        xi0 = np.abs((back - x0b) @ red.W.T).max(axis=0, initial=0.0)
    wmax = None if wb is None else np.abs(wb).max(axis=(0, 1), initial=0.0)
    drive = np.abs(Bm) @ umax + (0.0 if wmax is None else np.abs(red.W) @ wmax)
    rounding = recursion_rounding(np.abs(red.lam), zmax, drive, S)
    return certify(system.A, system.B, system.C, red, cond, S=S, G=G, rounding=rounding,
                   zmax=zmax, umax=umax, ymax=_absmax(y), xi0=xi0, wmax=wmax,
                   xmax=None if states is None else _absmax(states), rtol=rtol)


def _absmax(a) -> float:
    """max |a| without an |a| temporary."""
    return float(max(a.max(initial=0.0), -a.min(initial=0.0)))


class Diverged(Exception):
    """Internal: (batch index, step) of the first divergence, raised out of the paths."""

    def __init__(self, b, t):
        super().__init__(b, t)
        self.b, self.t = int(b), int(t)


