"""Independent reference computations for the systems tests.

Nothing here imports lds_toolkit's simulator: references are scipy's ``dlsim``/``lsim``,
python-control, or plain numpy loops written from the equations.
"""

from __future__ import annotations

import math
import zlib

import numpy as np
import scipy.linalg
import scipy.signal

from lds_toolkit.systems import LDS


def seed_of(*parts) -> int:
    """A stable seed from test parameters (``hash`` of str is salted per process)."""
    return zlib.crc32(repr(parts).encode())


# ------------------------------------------------------------------ comparisons
def rel_err(a, b) -> float:
    """max |a - b| / max |b| (absolute error when b is all zeros)."""
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape, (a.shape, b.shape)
    scale = float(np.max(np.abs(b))) if b.size else 0.0
    diff = float(np.max(np.abs(a - b))) if b.size else 0.0
    return diff / scale if scale > 0 else diff


def assert_rel(a, b, tol, what=""):
    err = rel_err(a, b)
    assert err <= tol, f"{what}: relative error {err:.3e} > {tol:.1e}"


# ------------------------------------------------------------------ systems
def symmetric_system(n, d_in, d_out, rng, radius=0.95, feedthrough=True) -> LDS:
    """Exactly symmetric A = Q diag(λ) Q^T, λ uniform in (-radius, radius)."""
    Q, _ = np.linalg.qr(rng.standard_normal((n, n)))
    A = (Q * rng.uniform(-radius, radius, n)) @ Q.T
    A = 0.5 * (A + A.T)
    D = rng.standard_normal((d_out, d_in)) if feedthrough else np.zeros((d_out, d_in))
    return LDS(A, rng.standard_normal((n, d_in)), rng.standard_normal((d_out, n)), D, dt=1.0)


def nonsymmetric_system(n, d_in, d_out, rng, radius=0.9) -> LDS:
    """Gaussian A rescaled to spectral radius ``radius``: generically complex eigenvalues and a
    well-conditioned (but not orthogonal) eigenvector matrix."""
    G = rng.standard_normal((n, n))
    A = G * (radius / np.max(np.abs(np.linalg.eigvals(G))))
    return LDS(A, rng.standard_normal((n, d_in)), rng.standard_normal((d_out, n)),
               rng.standard_normal((d_out, d_in)), dt=1.0)


def jordan_system(d_in, d_out, rng, lam=(0.7, -0.5)) -> LDS:
    """Defective A: a 2x2 Jordan block at lam[0] and a 3x3 one at lam[1] (n = 5)."""
    A = np.zeros((5, 5))
    A[:2, :2] = [[lam[0], 1.0], [0.0, lam[0]]]
    A[2:, 2:] = [[lam[1], 1.0, 0.0], [0.0, lam[1], 1.0], [0.0, 0.0, lam[1]]]
    return LDS(A, rng.standard_normal((5, d_in)), rng.standard_normal((d_out, 5)),
               rng.standard_normal((d_out, d_in)), dt=1.0)


def make_system(kind, n, d_in, d_out, rng) -> LDS:
    if kind == "symmetric":
        return symmetric_system(n, d_in, d_out, rng)
    if kind == "nonsymmetric":
        return nonsymmetric_system(n, d_in, d_out, rng)
    if kind == "jordan":
        return jordan_system(d_in, d_out, rng)
    raise KeyError(kind)


# ------------------------------------------------------------------ references
def dlsim_reference(sys: LDS, u, x0, output):
    """(y, states, final_state) of one stream in the given output convention, from
    ``scipy.signal.dlsim`` and index shifts only.

    * standard: dlsim as is (y_t = C x_t + D u_t, states[t] = x_t).
    * eq1-literal: y_0 = 0, y_t = y^std_{t-1}; states as standard.
    * lengen: dlsim of (A, B, C, 0) plus D u_{t-1}; states as standard.
    * s4: the standard-convention system (A, B, C A, D + C B), since
      y_t = C x_{t+1} + D u_t = C A x_t + (D + C B) u_t; states[t] = x_{t+1}.
    """
    A, B, C, D = (np.array(m) for m in (sys.A, sys.B, sys.C, sys.D))
    T = u.shape[0]
    u_ext = np.vstack([u, np.zeros((1, u.shape[1]))])  # one more step to read x_T
    _, y_std, x_all = scipy.signal.dlsim((A, B, C, D, 1.0), u_ext, x0=x0)
    y_std, x_std, final = y_std[:T], x_all[:T], x_all[T]
    if output == "standard":
        return y_std, x_std, final
    if output == "eq1-literal":
        y = np.zeros_like(y_std)
        y[1:] = y_std[:-1]
        return y, x_std, final
    if output == "lengen":
        _, y0, _ = scipy.signal.dlsim((A, B, C, np.zeros_like(D), 1.0), u_ext, x0=x0)
        y = y0[:T].reshape(T, -1).copy()
        y[1:] += u[:-1] @ D.T
        return y, x_std, final
    if output == "s4":
        _, y_s4, _ = scipy.signal.dlsim((A, B, C @ A, D + C @ B, 1.0), u, x0=x0)
        return y_s4.reshape(T, -1), x_all[1:], final
    raise KeyError(output)


def forced_response_reference(sys: LDS, u, x0, output):
    """Outputs of one stream from ``control.forced_response`` (same index shifts)."""
    import control

    A, B, C, D = (np.array(m) for m in (sys.A, sys.B, sys.C, sys.D))
    T = u.shape[0]
    D_out = D
    if output == "s4":
        C, D = C @ A, D + C @ B
    if output == "lengen":
        D = np.zeros_like(D)
    resp = control.forced_response(control.ss(A, B, C, D, 1.0), timepts=np.arange(T),
                                   inputs=u.T, initial_state=x0, squeeze=False)
    y = np.asarray(resp.outputs).reshape(C.shape[0], T).T
    if output == "eq1-literal":
        y = np.vstack([np.zeros((1, y.shape[1])), y[:-1]])
    if output == "lengen":
        y = y.copy()
        y[1:] += u[:-1] @ D_out.T
    return y


def loop_reference(sys: LDS, u, x0, w, v, output):
    """Plain per-step loop of the documented equations, for one stream.

    s_{t+1} = A s_t + B u_t + w_t;  standard y_t = C s_t + D u_t + v_t;
    eq1-literal y_0 = v_0, y_t = C s_{t-1} + D u_{t-1} + v_t;  s4 y_t = C s_{t+1} + D u_t + v_t;
    lengen y_t = C s_t + D u_{t-1} + v_t (u_{-1} = 0).
    """
    A, B, C, D = sys.A, sys.B, sys.C, sys.D
    T = u.shape[0]
    s = [np.array(x0, dtype=float)]
    for t in range(T):
        s.append(A @ s[t] + B @ u[t] + (0 if w is None else w[t]))
    y = np.zeros((T, C.shape[0]))
    for t in range(T):
        if output == "standard":
            y[t] = C @ s[t] + D @ u[t]
        elif output == "s4":
            y[t] = C @ s[t + 1] + D @ u[t]
        elif output == "lengen":
            y[t] = C @ s[t] + (D @ u[t - 1] if t >= 1 else 0)
        elif t >= 1:
            y[t] = C @ s[t - 1] + D @ u[t - 1]
    if v is not None:
        y = y + v
    states = np.array(s[1:] if output == "s4" else s[:-1])
    return y, states, s[T]


def first_divergence_step(A, B, u, x0, bound, w=None):
    """First t with ||A s_t + B u_t + w_t||_2 > bound (overflow-safe norm), or None."""
    s = np.array(x0, dtype=float)
    for t in range(u.shape[0]):
        with np.errstate(over="ignore", invalid="ignore"):
            s = A @ s + B @ u[t] + (0 if w is None else w[t])
        nrm = math.hypot(*s)
        if not nrm <= bound:
            return t
    return None


def broadcast_streams(u, x0, batch_shape):
    """Iterate (index, u_stream, x0_stream) over a broadcast batch."""
    n_in = u.shape[-1]
    ub = np.broadcast_to(u, tuple(batch_shape) + u.shape[-2:])
    x0b = None if x0 is None else np.broadcast_to(x0, tuple(batch_shape) + x0.shape[-1:])
    for idx in np.ndindex(*batch_shape):
        yield idx, ub[idx].reshape(-1, n_in), (None if x0b is None else x0b[idx])


def zoh_by_quadrature(A, B, dt, nodes=40):
    """ZOH (A_d, B_d) independently: expm for A_d, Gauss–Legendre quadrature of
    ∫_0^dt e^{A s} ds for B_d (a smooth integrand: converges to round-off)."""
    xg, wg = np.polynomial.legendre.leggauss(nodes)
    s = 0.5 * dt * (xg + 1.0)
    integral = sum(wi * scipy.linalg.expm(A * si) for si, wi in zip(s, wg)) * (0.5 * dt)
    return scipy.linalg.expm(A * dt), integral @ B
