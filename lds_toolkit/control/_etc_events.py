"""Private to :mod:`~lds_toolkit.control.etc_simulation`: where the events of an
event-triggered loop happen, for each monitoring mode.

Each monitor starts from ``x0`` (and the dynamic rule's ``eta0``) and returns ``(times,
states, etas, zeno, truncated)``: the sampling instants (``t_0 = 0`` first), the state sampled
at each, the rule's internal variable there, whether the rule fired again at once after an
event (Zeno-like), and whether ``max_events`` stopped the run early.

* :func:`run_grid` — checks at ``t = k h`` (periodic monitoring, the paper's ``h = 0.01``);
* :func:`run_checks` — checks at given increasing instants (a jittered grid);
* :func:`run_exact` — continuous monitoring: ``g`` scanned on steps of ``delta`` after each
  event, the first sign change located by Brent's method.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.optimize

from ._flow import FlowTable

_EPS = np.finfo(float).eps


def table_steps(dim: int, wanted: int) -> int:
    """How many steps of propagators to tabulate at once: ``wanted``, capped so that the
    table of ``dim x dim`` matrices stays within about 32 MB."""
    cap = max(16, int(4e6 // (dim * dim)))
    return max(1, min(wanted, cap, 2048))


def _g(system, rule, tau, Z, eta, n, t_last=0.0):
    """The rule's g at offsets ``tau`` after the last event (at time ``t_last``)."""
    x = Z[:, :n]
    e = Z[:, n:] - x
    g = np.asarray(rule.function(system, np.asarray(tau, dtype=float), x, e, eta), dtype=float)
    if g.shape != (Z.shape[0],):
        raise ValueError(f"{type(rule).__name__}.function must return shape ({Z.shape[0]},), "
                         f"got {g.shape}")
    if not np.all(np.isfinite(g)):
        i = int(np.flatnonzero(~np.isfinite(g))[0])
        t = t_last + float(np.asarray(tau, dtype=float).reshape(-1)[i])
        raise FloatingPointError(
            f"{type(rule).__name__}.function returned a non-finite value at t = {t:.6g} "
            f"(max |x_j| = {np.max(np.abs(x[i])):.3g}, max |e_j| = {np.max(np.abs(e[i])):.3g}):"
            " the state overflows float64 arithmetic there; the run stopped")
    return g


def _fires_at_once(system, rule, x, eta, n, t) -> bool:
    z = np.concatenate([x, x])[None, :]
    return bool(_g(system, rule, [0.0], z, None if eta is None else np.array([eta]), n,
                   t)[0] <= 0)


def run_grid(system, rule, flow, x0, eta0, horizon, h, max_events):
    """Checks at k h, k = 1..N; integer grid indices keep event times exact multiples."""
    n = system.n
    N = int(math.floor(horizon / h * (1 + 1e-12)))
    table = FlowTable(flow, h, table_steps(flow.dim, N))
    times, states, etas = [0.0], [x0.copy()], [eta0]
    k_a, k_i = 0, 0                         # anchor and last-event grid indices
    z_a = np.concatenate([x0, x0])
    eta_a = eta0
    if _fires_at_once(system, rule, x0, eta0, n, 0.0):
        return times, states, etas, True, False
    while k_a < N:
        count = min(N - k_a, table.n_steps)
        Z, eta = table.scan(z_a, eta_a, count)
        ks = np.arange(k_a + 1, k_a + count + 1)
        g = _g(system, rule, (ks - k_i) * h, Z, eta, n, k_i * h)
        hits = np.flatnonzero(g <= 0)
        if hits.size == 0:
            k_a += count
            z_a = Z[-1]
            eta_a = None if eta is None else float(eta[-1])
            continue
        j = int(hits[0])
        k_a = k_i = int(ks[j])
        x_e = Z[j, :n].copy()
        eta_a = None if eta is None else float(eta[j])
        times.append(k_a * h)
        states.append(x_e)
        etas.append(eta_a)
        z_a = np.concatenate([x_e, x_e])
        if _fires_at_once(system, rule, x_e, eta_a, n, k_a * h):
            return times, states, etas, True, False
        if len(times) - 1 >= max_events and k_a < N:
            return times, states, etas, False, True
    return times, states, etas, False, False


def run_checks(system, rule, flow, x0, eta0, checks, max_events, chunk=128):
    """Checks at arbitrary increasing instants (a jittered grid).

    The per-step propagators are computed in one batch; states are propagated step by step
    over chunks of ``chunk`` checks and ``g`` is evaluated per chunk.
    """
    n = system.n
    steps = np.diff(np.r_[0.0, checks])
    E, G = flow.propagators(steps)
    decay = None if G is None else np.exp(-flow.lam * steps)
    times, states, etas = [0.0], [x0.copy()], [eta0]
    z = np.concatenate([x0, x0])
    eta = eta0
    t_i = 0.0
    if _fires_at_once(system, rule, x0, eta0, n, 0.0):
        return times, states, etas, True, False
    k, N = 0, checks.size
    while k < N:
        m = min(chunk, N - k)
        Z = np.empty((m, z.size))
        ETA = None if G is None else np.empty(m)
        zz, ee = z, eta
        for j in range(m):
            if G is not None:
                ee = decay[k + j] * ee + zz @ G[k + j] @ zz
                ETA[j] = ee
            zz = E[k + j] @ zz
            Z[j] = zz
        g = _g(system, rule, checks[k:k + m] - t_i, Z, ETA, n, t_i)
        hits = np.flatnonzero(g <= 0)
        if hits.size == 0:
            z, eta = Z[-1], (None if G is None else float(ETA[-1]))
            k += m
            continue
        j = int(hits[0])
        x_e = Z[j, :n].copy()
        eta = None if G is None else float(ETA[j])
        t_i = float(checks[k + j])
        times.append(t_i)
        states.append(x_e)
        etas.append(eta)
        z = np.concatenate([x_e, x_e])
        k += j + 1
        if _fires_at_once(system, rule, x_e, eta, n, t_i):
            return times, states, etas, True, False
        if len(times) - 1 >= max_events and k < N:
            return times, states, etas, False, True
    return times, states, etas, False, False


def run_exact(system, rule, flow, x0, eta0, horizon, delta, tol, max_events):
    """Scan g on steps of delta after each event; locate the first sign change by brentq.

    Inside a bracket [lo, hi] the state is flowed from the tabulated z(lo) over at most one
    step, so every evaluation of g costs one small matrix exponential.
    """
    n = system.n
    table = FlowTable(flow, delta, table_steps(flow.dim, int(math.ceil(horizon / delta))))
    times, states, etas = [0.0], [x0.copy()], [eta0]
    t_i = 0.0                                # last event
    s_a = 0.0                                # anchor offset from t_i
    z_a = np.concatenate([x0, x0])           # state at the anchor
    eta_a = eta0
    if _fires_at_once(system, rule, x0, eta0, n, 0.0):
        return times, states, etas, True, False

    def g_from(lo, z_lo, eta_lo):            # exact g at offset s from t_i, flowed from lo
        def g(s):
            z, eta = flow.evaluate(s - lo, z_lo, eta_lo)
            return _g(system, rule, [s], z[None, :],
                      None if eta is None else np.array([eta]), n, t_i)[0]
        return g

    while True:
        remaining = horizon - (t_i + s_a)
        if remaining <= 1e-14 * max(1.0, horizon):
            break
        full = int(math.floor(remaining / delta * (1 + 1e-12)))
        count = min(full, table.n_steps)
        bracket = None
        last = (s_a, z_a, eta_a)             # last scanned point with g > 0
        if count > 0:
            Z, eta = table.scan(z_a, eta_a, count)
            offs = s_a + delta * np.arange(1, count + 1)
            g = _g(system, rule, offs, Z, eta, n, t_i)
            hits = np.flatnonzero(g <= 0)
            if hits.size:
                j = int(hits[0])
                if j > 0:
                    last = (offs[j - 1], Z[j - 1], None if eta is None else float(eta[j - 1]))
                bracket = (last, offs[j])
            else:
                last = (offs[-1], Z[-1], None if eta is None else float(eta[-1]))
        if bracket is None and count == full:
            # the partial last step up to the horizon
            s_end = horizon - t_i
            if s_end - last[0] > 1e-14 * max(1.0, horizon) and g_from(*last)(s_end) <= 0:
                bracket = (last, s_end)
        if bracket is None:
            if count == full:
                break
            s_a, z_a, eta_a = last
            continue
        (lo, z_lo, eta_lo), hi = bracket
        g_at = g_from(lo, z_lo, eta_lo)
        if g_at(lo) <= 0:                    # rounding put the crossing on the bracket end
            s_star = lo
        else:
            s_star = scipy.optimize.brentq(g_at, lo, hi, xtol=tol, rtol=4 * _EPS, maxiter=200)
        z_e, eta_e = flow.evaluate(s_star - lo, z_lo, eta_lo)
        x_e = z_e[:n].copy()
        t_i = t_i + s_star
        times.append(t_i)
        states.append(x_e)
        etas.append(eta_e)
        s_a, z_a, eta_a = 0.0, np.concatenate([x_e, x_e]), eta_e
        if _fires_at_once(system, rule, x_e, eta_e, n, t_i):
            return times, states, etas, True, False
        if len(times) - 1 >= max_events and t_i < horizon:
            return times, states, etas, False, True
    return times, states, etas, False, False
