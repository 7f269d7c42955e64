r"""Private: the STU layer as a linear dynamical system, and its constant-time step.

Every STU filter is, to a relative L2 error ``tol``, a sum of real exponentials
(:func:`lds_toolkit.learning.filters_as_lds`): with the scaled filters f_i = sigma_i^{1/4}
phi_i (and f_i^-[j] = (-1)^j f_i[j]),

    f_i[0] = Df_i,   f_i[j] = sum_s Cf[s, i] lambda_s^{j-1}  (j >= 1),

lambda_s = alpha_s (positive branch) or -alpha_s (negative branch). One *bank* of these
n_f states, x_{t+1} = diag(lambda) x_t + 1 v_t, turns a scalar signal v into all the filter
outputs sum_j f_i[j] v_{t-j} = Cf^T x_t + Df v_t. The layer is then one LDS:

* **exact form**, ``z_t = sum_i sum_j f_i[j] u'_{t-j} M_i``: one bank per input channel a
  (driven by u'_a), output map C[o, (a, s)] = sum_i M_i[a, o] Cf[s, i],
  D[o, a] = sum_i M_i[a, o] Df_i;
* **tensordot form**, ``z_t[c] = sum_j g_c[j] (u'_{t-j} M_in)[c]`` with
  g_c = sum_i f_i M_filters[i, c]: one bank per output channel c driven by
  v_c = sum_a u'_a M_in[a, c], C[c, (c, s)] = sum_i M_filters[i, c] Cf[s, i];
* **lag** (u'_t = u_{t-lag}) and **k_u** (sum_{i<k_u} u'_{t-i} M^u_i): a delay line of
  lag + k_u - 1 states per input channel, w_{j, t} = u_{t-j};
* **k_y** (y_t = z_t + sum_{i<=k_y} a_i ⊙ y_{t-i}): k_y states per output channel,
  r_{i, t} = y_{t-i}, fed back through diag(a_i).

For t < seq_len the system's output equals ``forward`` up to the filter fit (the LDS is the
filters' exponential-sum approximation); beyond seq_len the exponentials continue where the
layer's window would stop (``forward`` refuses such inputs).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import torch

__all__ = ["STULDSState", "check_tol", "filter_bank", "layer_lds", "step_matrices", "lds_step"]


def check_tol(tol, owner: str) -> float:
    """The filter fit's tolerance: a real number in (0, 1)."""
    if isinstance(tol, bool) or not isinstance(tol, int | float) or not 0.0 < tol < 1.0:
        raise ValueError(f"{owner}: tol must be a number in (0, 1), got {tol!r}")
    return float(tol)


class STULDSState(NamedTuple):
    """Constant-size recurrent state of :meth:`STU.step` on the LDS route (float64):
    ``banks`` (B, d, n_f) the filter-bank states (per input channel for the exact form, per
    output channel for the tensordot form), ``inputs`` (B, lag + k_u - 1, d) the delay line,
    most recent first (``inputs[:, j-1] = x_{t-j}``), ``outputs`` (B, k_y, d) the last
    outputs, most recent first."""

    banks: torch.Tensor
    inputs: torch.Tensor
    outputs: torch.Tensor


def filter_bank(layer, tol: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(lambda (n_f,), Cf (n_f, K), Df (K,)) of the layer's K scaled filters (module doc),
    columns in the layer's order (f^+ then f^- for ``branches="both"``). Kept on the layer
    per tol (its filters never change)."""
    memo = layer.__dict__.setdefault("_filter_bank_memo", {})
    if tol not in memo:
        memo[tol] = _filter_bank(layer, tol)
    return memo[tol]


def _filter_bank(layer, tol: float):
    from lds_toolkit._threads import one_thread
    from lds_toolkit.learning._filters_lds_fit import FitFailed, fit_exponentials
    from lds_toolkit.learning.filters_lds import filters_as_lds

    name = type(layer).__name__
    sigma, phi, custom = layer._source_filters  # float64 whatever the layer's dtype
    k, T = layer.num_filters, layer.seq_len
    s4 = np.maximum(sigma, 0.0) ** 0.25  # the layer's scaling f_i = sigma_i^{1/4} phi_i
    branch = "both" if layer.branches == "both" else "positive"
    if custom:
        try:
            with one_thread():  # small dense factorisations: a second BLAS thread only spins
                alpha, C, _ = fit_exponentials(phi, tol)
        except FitFailed as exc:
            raise ValueError(f"{name}: the layer's filters are no sum of real exponentials "
                             f"within tol={tol:.3g} (best worst-filter error {exc.best:.3e});"
                             " pass a larger tol, or initial_state(batch, mode='window') for "
                             "the exact sliding-window step") from None
        C, D = C * s4, phi[0] * s4
    else:
        try:
            lds = filters_as_lds(T, k, layer.filter_kind, branch="positive", tol=tol)
        except ValueError as exc:  # name the layer's own ways out
            raise ValueError(f"{name}: {exc} (to_lds(tol=...) / initial_state(batch, "
                             "tol=...), or initial_state(batch, mode='window') for the exact "
                             "sliding-window step)") from None
        alpha = np.diag(np.asarray(lds.A)).copy()
        C, D = np.asarray(lds.C).T * s4, np.asarray(lds.D)[:, 0] * s4
    if branch == "positive":
        return alpha, C, D
    n = alpha.size
    Cf = np.zeros((2 * n, 2 * k))
    Cf[:n, :k], Cf[n:, k:] = C, -C  # (-alpha)^{j-1} (-C) = (-1)^j alpha^{j-1} C
    return np.r_[alpha, -alpha], Cf, np.r_[D, D]


def _params(layer) -> dict:
    return {n: p.detach().to("cpu", torch.float64).numpy() for n, p in layer.named_parameters()}


def _z_system(layer, lam, Cf, Df, inputs: list[int]):
    """(A, B, C, D) of z from the delayed input u' restricted to ``inputs``."""
    p, d, nf = _params(layer), layer.d_model, lam.size
    m = len(inputs)
    if layer.form == "exact":
        M = p["M"][:, inputs, :]  # (K, m, d_out)
        A = np.kron(np.eye(m), np.diag(lam))
        B = np.kron(np.eye(m), np.ones((nf, 1)))
        C = np.einsum("si,iao->oas", Cf, M).reshape(d, m * nf)
        D = np.einsum("i,iao->oa", Df, M)
        return A, B, C, D
    Mf, Min = p["M_filters"], p["M_in"][inputs, :]  # (K, d), (m, d)
    A = np.kron(np.eye(d), np.diag(lam))
    B = np.kron(Min.T, np.ones((nf, 1)))  # bank c driven by sum_a u'_a M_in[a, c]
    Cg = Cf @ Mf  # (n_f, d): Cg[s, c]
    C = np.zeros((d, d * nf))
    for c in range(d):
        C[c, c * nf : (c + 1) * nf] = Cg[:, c]
    D = (Df @ Mf)[:, None] * Min.T
    return A, B, C, D


def layer_lds(layer, channel: int | None, tol: float):
    """The :class:`LDS` of :meth:`STU.to_lds` (module docstring)."""
    from lds_toolkit.systems import LDS

    from ._bridge import export_names

    d, lag, k_u, k_y = layer.d_model, layer.lag, layer.k_u, layer.k_y
    inputs = list(range(d)) if channel is None else [channel]
    m = len(inputs)
    lam, Cf, Df = filter_bank(layer, tol)
    Az, Bz, Cz, Dz = _z_system(layer, lam, Cf, Df, inputs)
    nz = Az.shape[0]
    nw = max(lag + k_u - 1, lag)  # delay line: w_j = u_{t-j}, j = 1 .. nw
    n = nz + nw * m
    A, B = np.zeros((n, n)), np.zeros((n, m))
    C, D = np.zeros((d, n)), np.zeros((d, m))
    A[:nz, :nz] = Az
    if nw:
        B[nz : nz + m] = np.eye(m)
        for j in range(1, nw):
            A[nz + j * m : nz + (j + 1) * m, nz + (j - 1) * m : nz + j * m] = np.eye(m)

    def add_input(j: int, G_state: np.ndarray | None, G_out: np.ndarray) -> None:
        """u_{t-j} enters the z-states through G_state and the output through G_out."""
        if j == 0:
            if G_state is not None:
                B[:nz] += G_state
            D[:] += G_out
        else:
            cols = slice(nz + (j - 1) * m, nz + j * m)
            if G_state is not None:
                A[:nz, cols] += G_state
            C[:, cols] += G_out

    C[:, :nz] = Cz
    add_input(lag, Bz, Dz)
    if k_u:
        Mu = _params(layer)["M_u"][:, inputs, :]  # (k_u, m, d)
        for i in range(k_u):
            add_input(lag + i, None, Mu[i].T)
    if k_y:  # r_i = y_{t-i}: y_t = C x + D u + sum_i a_i r_i;  r_1 <- y_t, r_{i+1} <- r_i
        a = _params(layer)["a_y"]  # (k_y, d)
        ny = n + k_y * d
        A2, B2, C2 = np.zeros((ny, ny)), np.zeros((ny, m)), np.zeros((d, ny))
        A2[:n, :n], B2[:n] = A, B
        C2[:, :n] = C
        for i in range(k_y):
            C2[:, n + i * d : n + (i + 1) * d] = np.diag(a[i])
        A2[n : n + d] = C2  # r_1 at t + 1 is y_t
        B2[n : n + d] = D
        for i in range(1, k_y):
            A2[n + i * d : n + (i + 1) * d, n + (i - 1) * d : n + i * d] = np.eye(d)
        A, B, C = A2, B2, C2
    names = export_names(layer, None)
    return LDS(A, B, C, D, dt=1.0, inputs=[names["inputs"][h] for h in inputs],
               outputs=names["outputs"], name=names.get("name", type(layer).__name__))


class StepMatrices(NamedTuple):
    lam: torch.Tensor   # (n_f,)
    out: torch.Tensor   # exact: (d, n_f, d_out); tensordot: (d, n_f)
    feed: torch.Tensor  # exact: (d_in, d_out); tensordot: (d,) (times v)
    M_in: torch.Tensor | None
    M_u: torch.Tensor | None
    a_y: torch.Tensor | None


def step_matrices(layer, tol: float, device) -> StepMatrices:
    """The structured float64 matrices :func:`lds_step` uses (module docstring)."""
    lam, Cf, Df = filter_bank(layer, tol)
    p = _params(layer)

    def t(x):
        return None if x is None else torch.as_tensor(np.ascontiguousarray(x), device=device)

    if layer.form == "exact":
        out = np.einsum("si,iao->aso", Cf, p["M"])
        feed = np.einsum("i,iao->ao", Df, p["M"])
        M_in = None
    else:
        out, feed, M_in = (Cf @ p["M_filters"]).T, Df @ p["M_filters"], p["M_in"]
    return StepMatrices(t(lam), t(out), t(feed), t(M_in), t(p.get("M_u")), t(p.get("a_y")))


def lds_step(layer, mats: StepMatrices, x_t: torch.Tensor, state: STULDSState):
    """One step on the LDS route: O(d n_f d_out) (exact) or O(d n_f + d^2) (tensordot)
    operations, whatever the position."""
    u = x_t.to(torch.float64)
    lag, k_u = layer.lag, layer.k_u
    w = state.inputs

    def past(j):  # u_{t-j}
        return u if j == 0 else w[:, j - 1]

    up = past(lag)
    X = state.banks
    if layer.form == "exact":
        z = torch.einsum("bas,aso->bo", X, mats.out) + up @ mats.feed
        drive = up
    else:
        drive = up @ mats.M_in
        z = (X * mats.out).sum(-1) + mats.feed * drive
    for i in range(k_u):
        z = z + past(lag + i) @ mats.M_u[i]
    r = state.outputs
    if layer.k_y:
        z = z + (mats.a_y * r).sum(1)
        r = torch.cat([z.unsqueeze(1), r[:, :-1]], dim=1)
    X = mats.lam * X + drive.unsqueeze(-1)
    if w.shape[1]:
        w = torch.cat([u.unsqueeze(1), w[:, :-1]], dim=1)
    return z.to(x_t.dtype), STULDSState(X, w, r)
