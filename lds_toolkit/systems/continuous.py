r"""Exact simulation of continuous-time systems driven by piecewise-constant inputs.

For ``dx/dt = A x + B u`` with ``u(t) = u_k`` on ``[t_k, t_{k+1})`` the state at the grid
points is exact (no integration error)::

    x(t_{k+1}) = e^{A h_k} x(t_k) + (∫_0^{h_k} e^{A s} ds) B u_k,     h_k = t_{k+1} - t_k
    y(t_k) = C x(t_k) + D u_k

Both matrices come from one matrix exponential of [[A, B], [0, 0]] h_k
(:func:`lds_toolkit.systems.discretize.zoh_matrices`). This is ``scipy.signal.lsim`` with
``interp=False``; python-control's ``forced_response`` instead interpolates the input linearly.

Paths (``method``, reported as the result's ``path``), as for :func:`simulate`: on a uniform grid
the system is discretised once and :func:`simulate` runs (its modal or dense path). On a grid
with varying steps, ``"dense"`` forms (e^{A h}, ∫ e^{A s} ds B) for every distinct step (one
matrix exponential each) and multiplies by them, O(n^2) per step; ``"modal"`` runs in the
eigenbasis, where both are elementwise (e^{λ h}, expm1(λ h)/λ): O(n (d_in + d_out)) per step
and no matrix exponential (``lds_toolkit/systems/_modal_continuous.py``), with the same
a-posteriori certificate as :func:`simulate` (continuous-time accumulation factors).
``"auto"`` takes the modal path when A is symmetric or its certificate passes ``rtol``.
"""

from __future__ import annotations

import numpy as np

from .._jit import njit
from .._threads import one_thread
from .._typing import ArrayLike
from .._validation import as_float_array, check_choice, check_real
from ._cores import norm_exceeds, squared_limit
from ._discretization import zoh_checked
from ._modal_continuous import run_varying
from ._paths import MODAL_FORCED_MAX_COND, Diverged
from .lds import LDS, as_state_vector, require_continuous
from .simulate import (
    DEFAULT_MAX_STATE_NORM,
    DEFAULT_RTOL,
    METHODS,
    SimulationDivergedError,
    SimulationResult,
    huge_input_cause,
    simulate,
)


@njit(cache=True)
def _varying_core(Phi, Gam, C, D, u, x0, bound):
    nb, K, d_in = u.shape
    n = Phi.shape[1]
    bound2 = squared_limit(bound)
    states = np.empty((nb, K, n))
    y = np.empty((nb, K, C.shape[0]))
    bad_b, bad_k = -1, K  # earliest divergence over the batch (lowest b among ties)
    for b in range(nb):
        x = x0[b].copy()
        for k in range(min(K, bad_k + 1)):
            states[b, k] = x
            y[b, k] = C @ x + D @ u[b, k]
            if k < min(K - 1, bad_k):
                x = Phi[k] @ x + Gam[k] @ u[b, k]
                if not (np.sum(x * x) <= bound2) and norm_exceeds(x, bound):
                    bad_b, bad_k = b, k
                    break
    return states, y, bad_b, bad_k


def simulate_continuous(system: LDS, t: ArrayLike, u: ArrayLike, x0: ArrayLike | None = None, *,
                        max_state_norm: float = DEFAULT_MAX_STATE_NORM, method: str = "auto",
                        rtol: float = DEFAULT_RTOL) -> SimulationResult:
    """Simulate a continuous-time LDS exactly for inputs held constant between grid points.

    Parameters
    ----------
    system : LDS or control.StateSpace
        Continuous-time system (``dt`` None, or 0 for a ``StateSpace``, converted by
        :meth:`LDS.from_statespace`).
    t : array_like, shape (K,)
        Strictly increasing time grid (need not be uniform).
    u : array_like, shape (..., K, d_in)
        ``u[..., k, :]`` is held on ``[t_k, t_{k+1})`` (the last value only enters y(t_{K-1})).
    x0 : array_like, shape (..., n), optional
        State at ``t[0]``; zeros by default.
    max_state_norm : float
        Bound on ||x||_2; exceeding it raises :class:`SimulationDivergedError` naming the
        grid index.
    method : {"auto", "dense", "modal"}
        Simulation path (module docstring).
    rtol : float
        Tolerance of the modal path's certificate (as in :func:`simulate`).

    Returns
    -------
    SimulationResult
        ``x[..., k, :] = x(t_k)``, ``y[..., k, :] = C x(t_k) + D u_k``, ``final_state`` =
        x(t_{K-1}); ``.to_time_response()`` gives python-control's ``TimeResponseData``.
    """
    system = require_continuous(system)
    bound = check_real("max_state_norm", max_state_norm, low=0.0, low_inclusive=False)
    check_choice("method", method, METHODS)
    rtol = check_real("rtol", rtol, low=0.0, low_inclusive=False)
    t = as_float_array("t", t, ndim=1)
    if t.size < 1:
        raise ValueError("t must contain at least one time point")
    h = np.diff(t)
    if np.any(h <= 0):
        k = int(np.argmax(h <= 0))
        raise ValueError(f"t must be strictly increasing; t[{k + 1}]={t[k + 1]} <= t[{k}]={t[k]}")
    n, d_in = system.n_states, system.n_inputs
    u = as_float_array("u", u)
    if u.ndim < 2 or u.shape[-1] != d_in or u.shape[-2] != t.size:
        raise ValueError(f"u must have shape (..., {t.size}, {d_in}) to match t and d_in, "
                         f"got {u.shape}")
    if x0 is not None:
        x0 = as_state_vector("x0", x0, n)

    if h.size and np.allclose(h, h[0], rtol=1e-13, atol=0.0):
        # uniform grid: one ZOH discretisation and the (modal when possible) discrete core,
        # over the K-1 transitions t_0 -> t_{K-1}
        Ad, Bd = zoh_checked(system.A, system.B, float(h[0]))
        disc = LDS(Ad, Bd, system.C, system.D, dt=float(h[0]))
        res = simulate(disc, u[..., :-1, :], x0, max_state_norm=bound, method=method,
                       rtol=rtol)
        x_last = res.final_state
        y_last = x_last @ system.C.T + u[..., -1, :] @ system.D.T
        states = np.concatenate([res.x, x_last[..., None, :]], axis=-2)
        y = np.concatenate([res.y, y_last[..., None, :]], axis=-2)
        return SimulationResult(y=y, x=states, final_state=x_last, method=res.method, t=t, u=u,
                                certificate=res.certificate, names=system.names())

    try:
        batch_shape = np.broadcast_shapes(u.shape[:-2], () if x0 is None else x0.shape[:-1])
    except ValueError:
        raise ValueError(f"batch (leading) axes do not broadcast: u {u.shape[:-2]}, "
                         f"x0 {x0.shape[:-1]}") from None
    ub = np.ascontiguousarray(np.broadcast_to(u, batch_shape + u.shape[-2:])
                              .reshape((-1,) + u.shape[-2:]))
    x0b = (np.zeros((ub.shape[0], n)) if x0 is None else
           np.ascontiguousarray(np.broadcast_to(x0, batch_shape + (n,)).reshape(-1, n)))
    cert = None
    if method != "dense" and h.size:
        try:
            with one_thread("blas"):  # small products (see _paths.run)
                got, cert = run_varying(system, h, ub, x0b, bound, method, rtol,
                                        MODAL_FORCED_MAX_COND)
        except Diverged as exc:
            _raise_diverged(exc.b, exc.t, batch_shape, bound)
        if got is not None:
            y, states = got
            states = states.reshape(batch_shape + states.shape[1:])
            return SimulationResult(y=y.reshape(batch_shape + y.shape[1:]), x=states,
                                    final_state=states[..., -1, :], method="modal", t=t, u=u,
                                    certificate=cert, names=system.names())

    Phi = np.empty((h.size, n, n))
    Gam = np.empty((h.size, n, d_in))
    unique, inverse = np.unique(h, return_inverse=True)
    for j, hj in enumerate(unique):
        P, G = zoh_checked(system.A, system.B, float(hj))
        Phi[inverse == j] = P
        Gam[inverse == j] = G
    states, y, bad_b, bad_k = _varying_core(Phi, Gam, system.C, system.D, ub, x0b, bound)
    if bad_b >= 0:
        step = min(bad_k, Gam.shape[0] - 1)  # the input held over the step that overflowed
        cause = huge_input_cause(Gam[step], ub[bad_b, step], bound, step)
        _raise_diverged(bad_b, bad_k, batch_shape, bound, cause)
    states = states.reshape(batch_shape + states.shape[1:])
    return SimulationResult(y=y.reshape(batch_shape + y.shape[1:]), x=states,
                            final_state=states[..., -1, :], method="dense", t=t, u=u,
                            certificate=cert, names=system.names())


def _raise_diverged(bad_b, bad_k, batch_shape, bound, cause=None):
    idx = np.unravel_index(bad_b, batch_shape) if batch_shape else ()
    raise SimulationDivergedError(bad_k, idx, bound, cause)
