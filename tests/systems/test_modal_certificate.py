"""The modal path and its a-posteriori certificate (issue 28).

* modal = dense to round-off on random general (non-normal) systems, discrete and continuous,
  with states, initial states, noise and batches; the certificate passes there and its
  estimate lies above the observed modal-vs-dense difference (it is an over-estimate, not a
  bound: checked with a margin on every system drawn);
* nearly defective A (a perturbed Jordan block): where ``method="auto"`` tries the modal path
  (process noise, or a run too short for the blocked dense route), the certificate fails and
  the run is redone on the dense path (``path == "dense"``, the failed certificate kept in
  the result), equal to ``method="dense"`` exactly;
* the path is reported and can be forced either way;
* the time-blocked dense route equals the per-step recursion to round-off on non-normal and
  marginally stable systems.

No timing assertions: speed is the benchmarks' business (benchmarks/simulate.py).
"""

from __future__ import annotations

import numpy as np
import pytest

from lds_toolkit.systems import LDS, ModalCertificate, simulate, simulate_continuous
from lds_toolkit.systems._modal import geometric_sums, integral_sums

from ._ref import assert_rel, dlsim_reference


def _random_general(n, d_in, d_out, rng, radius=0.95):
    A = rng.standard_normal((n, n)) / np.sqrt(n)
    A *= radius / np.max(np.abs(np.linalg.eigvals(A)))
    return LDS(A, rng.standard_normal((n, d_in)), rng.standard_normal((d_out, n)),
               rng.standard_normal((d_out, d_in)), dt=1.0)


def _nearly_defective(n, eps, rng, lam=0.6, coupling=0.3):
    """A Jordan block lam I + coupling N perturbed by eps: diagonalisable, but its
    eigenvector matrix has condition number ~ eps^{-(n-1)/n}."""
    A = lam * np.eye(n) + coupling * np.eye(n, k=1) + eps * rng.standard_normal((n, n))
    return LDS(A, rng.standard_normal((n, 1)), rng.standard_normal((1, n)), dt=1.0)


def _rel(a, b):
    return float(np.max(np.abs(a - b)) / np.max(np.abs(b)))


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("output", ["standard", "s4"])
def test_modal_equals_dense_on_random_general_systems(seed, output):
    rng = np.random.default_rng(seed)
    n = [4, 9, 16, 33, 64, 96][seed]
    radius = [0.5, 0.9, 0.99, 0.999, 0.95, 0.9999][seed]
    sys = _random_general(n, 2, 3, rng, radius)
    u = rng.standard_normal((3, 700, 2))
    x0 = rng.standard_normal((3, n))
    dense = simulate(sys, u, x0, output=output, method="dense")
    modal = simulate(sys, u, x0, output=output, method="modal")
    assert modal.path == "modal"
    cert = modal.certificate
    assert isinstance(cert, ModalCertificate) and cert.passed
    err = max(_rel(modal.y, dense.y), _rel(modal.x, dense.x))
    assert err <= 1e-10
    # the estimate is an over-estimate of what was observed (the dense result has its own
    # round-off, so allow the floor of a few eps)
    assert cert.error_estimate >= 0.5 * err or err <= 1e-14
    assert_rel(modal.final_state, dense.final_state, 1e-10)
    # "auto" with states: 3 x 700 steps take the blocked dense route (no decomposition)
    auto = simulate(sys, u, x0, output=output)
    assert auto.path == "dense" and auto.certificate is None
    np.testing.assert_array_equal(auto.x, dense.x)
    # outputs only: the blocked routes of both paths agree with the recursion
    for method in ("modal", "dense", "auto"):
        res = simulate(sys, u, x0, output=output, method=method, return_states=False)
        assert _rel(res.y, dense.y) <= 1e-10, method


@pytest.mark.parametrize("seed", range(4))
def test_modal_with_process_noise_equals_dense(seed):
    rng = np.random.default_rng(100 + seed)
    sys = _random_general(12, 1, 2, rng, 0.97)
    u = rng.standard_normal((2, 300, 1))
    w = 0.1 * rng.standard_normal((2, 300, 12))
    dense = simulate(sys, u, process_noise=w, method="dense")
    modal = simulate(sys, u, process_noise=w)
    assert modal.path == "modal" and modal.certificate.passed
    assert _rel(modal.y, dense.y) <= 1e-10 and _rel(modal.x, dense.x) <= 1e-10


@pytest.mark.parametrize("eps", [1e-6, 1e-8, 1e-10])
@pytest.mark.parametrize("run", ["noise", "short", "states", "outputs"])
def test_nearly_defective_is_sent_to_the_dense_path(eps, run):
    rng = np.random.default_rng(7)
    sys = _nearly_defective(6, eps, rng)
    T = 200 if run == "short" else 2000
    u = rng.standard_normal((T, 1))
    # process noise (exactly zero, so that the outputs compare with the noiseless run)
    kw = {"process_noise": np.zeros((T, 6))} if run == "noise" else {}
    return_states = run != "outputs"
    forced = simulate(sys, u, method="modal", **kw)  # premise: modal is possible, but inexact
    cert = forced.certificate
    assert not cert.passed and cert.cond > 1e4
    dense = simulate(sys, u, method="dense", return_states=return_states, **kw)
    # auto: a run with noise, or too short for the blocked route, tries modal, the certificate
    # fails and the run is redone densely; long noiseless runs (states or outputs only) take
    # the blocked dense route directly
    auto = simulate(sys, u, return_states=return_states, **kw)
    assert auto.path == "dense"
    if run in ("noise", "short"):
        if cert.cond * np.finfo(float).eps <= 1e-10:
            # a-posteriori: modal was run, its certificate failed, the dense rerun keeps it
            assert auto.certificate is not None and not auto.certificate.passed
        else:  # a-priori: cond(V) eps alone exceeds rtol, the modal run is not even tried
            assert auto.certificate is None
    else:
        assert auto.certificate is None
    np.testing.assert_array_equal(auto.y, dense.y)
    # and the forced modal run really is worse than the tolerance it failed (the
    # certificate did not send a good run away for nothing); at eps = 1e-6 the observed
    # error is below rtol while the estimate is not: a conservative refusal
    ref = simulate(sys, u, method="dense")
    if eps <= 1e-8:
        assert _rel(forced.y, ref.y) > 1e-12


def test_path_is_reported_and_overridable():
    rng = np.random.default_rng(3)
    sys = _random_general(8, 1, 1, rng)
    u = rng.standard_normal((100, 1))
    assert simulate(sys, u).path == "modal"
    res = simulate(sys, u, method="dense")
    assert res.path == "dense" and res.method == "dense" and res.certificate is None
    # cond(V) eps is below 1e-14 but the estimate is not: auto redoes the run densely
    strict = simulate(sys, u, rtol=1e-14)
    assert strict.path == "dense" and not strict.certificate.passed
    assert strict.certificate.cond * np.finfo(float).eps <= 1e-14
    assert simulate(sys, u, method="modal", rtol=1e-14).path == "modal"  # forced stays
    assert simulate(sys, u, rtol=1e-30).certificate is None  # a-priori refusal: not tried
    with pytest.raises(ValueError, match="rtol"):
        simulate(sys, u, rtol=0.0)


def test_certificate_tracks_the_error_of_an_inexact_basis():
    """Perturbing the eigenbasis used by the modal path by delta makes its error grow like
    delta, and the estimate with it (the certificate measures the basis actually used)."""
    from lds_toolkit.systems import _paths

    rng = np.random.default_rng(11)
    sys = _random_general(10, 1, 1, rng, 0.9)
    u = rng.standard_normal((400, 1))
    ref = simulate(sys, u, method="dense")
    original = _paths.modal_form
    errors, estimates = [], []
    for delta in (1e-12, 1e-9, 1e-6):
        def spoiled(A, delta=delta):
            mf = original(A)
            noise = delta * np.random.default_rng(0).standard_normal(mf.V.shape)
            V = mf.V + noise * np.abs(mf.V).max()
            V[:, np.imag(mf.lam) < 0] = np.conj(V[:, np.imag(mf.lam) > 0])  # keep pairs
            return type(mf)(mf.lam, V, np.linalg.inv(V), mf.cond, False)

        _paths.modal_form = spoiled
        try:
            res = simulate(sys, u, method="modal")
        finally:
            _paths.modal_form = original
        errors.append(_rel(res.y, ref.y))
        estimates.append(res.certificate.error_estimate)
    assert errors[0] < errors[1] < errors[2] and estimates[0] < estimates[1] < estimates[2]
    assert all(est >= err for est, err in zip(estimates, errors))
    assert estimates[2] > 1e-10  # such a run fails the default tolerance


@pytest.mark.parametrize("kind", ["nonnormal", "marginal", "jordan"])
def test_blocked_dense_route_equals_recursion(kind):
    rng = np.random.default_rng(5)
    n = 20
    if kind == "nonnormal":
        A = np.diag(rng.uniform(-0.9, 0.9, n)) + 0.5 * np.triu(rng.standard_normal((n, n)), 1)
    elif kind == "marginal":
        A = _random_general(n, 1, 1, rng, 0.99999).A
    else:
        A = 0.9 * np.eye(n) + 0.3 * np.eye(n, k=1)
    sys = LDS(A, rng.standard_normal((n, 2)), rng.standard_normal((3, n)),
              rng.standard_normal((3, 2)), dt=1.0)
    u = rng.standard_normal((4, 3333, 2))
    x0 = rng.standard_normal(n)
    for output in ("standard", "s4"):
        step = simulate(sys, u, x0, method="dense", output=output)
        blocked = simulate(sys, u, x0, method="dense", output=output, return_states=False)
        assert _rel(blocked.y, step.y) <= 1e-12
        assert_rel(blocked.final_state, step.final_state, 1e-12)


def test_modal_matches_dlsim_long_horizon_general():
    rng = np.random.default_rng(21)
    sys = _random_general(24, 1, 1, rng, 0.995)
    u = rng.standard_normal((5000, 1))
    y_ref, x_ref, _ = dlsim_reference(sys, u, np.zeros(24), "standard")
    for method, path in (("modal", "modal"), ("auto", "dense")):  # auto: blocked, states
        res = simulate(sys, u, method=method)
        assert res.path == path
        assert_rel(res.y, y_ref, 1e-10)
        assert_rel(res.x, x_ref, 1e-10)


# ----------------------------------------------------------------- continuous time
def _continuous(n, rng, shift=0.3):
    A = rng.standard_normal((n, n))
    A -= (np.max(np.linalg.eigvals(A).real) + shift) * np.eye(n)
    return LDS(A, rng.standard_normal((n, 2)), rng.standard_normal((3, n)),
               rng.standard_normal((3, 2)))


@pytest.mark.parametrize("seed", range(3))
def test_continuous_nonuniform_modal_equals_dense(seed):
    rng = np.random.default_rng(200 + seed)
    sys = _continuous(7 + 3 * seed, rng)
    t = np.sort(rng.uniform(0.0, 6.0, 400))
    t[0] = 0.0
    u = rng.standard_normal((2, 400, 2))
    x0 = rng.standard_normal(sys.n_states)
    dense = simulate_continuous(sys, t, u, x0, method="dense")
    auto = simulate_continuous(sys, t, u, x0)
    assert dense.path == "dense" and auto.path == "modal" and auto.certificate.passed
    assert _rel(auto.y, dense.y) <= 1e-10 and _rel(auto.x, dense.x) <= 1e-10


def test_continuous_nearly_defective_goes_dense():
    rng = np.random.default_rng(9)
    n = 6
    A = -0.5 * np.eye(n) + np.eye(n, k=1) + 1e-9 * rng.standard_normal((n, n))
    sys = LDS(A, rng.standard_normal((n, 2)), rng.standard_normal((3, n)), np.zeros((3, 2)))
    t = np.cumsum(rng.uniform(0.01, 0.05, 300))
    u = rng.standard_normal((300, 2))
    auto = simulate_continuous(sys, t, u)
    dense = simulate_continuous(sys, t, u, method="dense")
    assert auto.path == "dense"
    np.testing.assert_array_equal(auto.y, dense.y)
    forced = simulate_continuous(sys, t, u, method="modal")
    assert forced.path == "modal" and not forced.certificate.passed


def test_accumulation_factors_closed_forms():
    lam = np.array([0.5, 1.0, 1.5, 0.0, 0.9j])
    S, G = geometric_sums(lam, 4)
    np.testing.assert_allclose(S, [1 + 0.5 + 0.25 + 0.125, 4, 1 + 1.5 + 2.25 + 3.375, 1,
                                   1 + 0.9 + 0.81 + 0.729])
    np.testing.assert_allclose(G, [1, 1, 1.5**4, 1, 1])
    S, G = integral_sums(np.array([-2.0, 0.0, 1.0 + 3j]), 2.0)
    np.testing.assert_allclose(S, [(1 - np.exp(-4)) / 2, 2.0, np.expm1(2.0)])
    np.testing.assert_allclose(G, [1, 1, np.exp(2.0)])


@pytest.mark.parametrize("kw", [{}, {"return_states": False}, {"method": "modal"},
                                {"method": "modal", "return_states": False}])
def test_empty_batch_on_every_route(kw):
    """A batch of size 0 (the certificate's maxima over no stream) returns empty outputs."""
    rng = np.random.default_rng(4)
    sys = _random_general(4, 1, 1, rng)
    res = simulate(sys, np.zeros((0, 50, 1)), **kw)
    assert res.y.shape == (0, 50, 1) and res.final_state.shape == (0, 4)
    sysc = _continuous(4, rng)
    t = np.cumsum(rng.uniform(0.1, 0.2, 20))
    assert simulate_continuous(sysc, t, np.zeros((0, 20, 2))).y.shape == (0, 20, 3)


def test_varying_grid_certificate_counts_the_amplification_of_an_unstable_mode():
    """Open-loop-unstable A (eigenvalues 1, 2) driven by stabilising event-triggered inputs on
    a 5000-step grid: each step's rounding grows by e^(2 (t_end - t_j)) up to
    e^10. The certificate's estimate must cover the measured modal-vs-dense difference (an
    estimate summing K steps without the growth gave 2.6e-11 against 2.7e-10), and "auto"
    must then take the dense path."""
    from lds_toolkit.control import LyapunovRule, simulate_etc
    from lds_toolkit.control.etc import paper_system
    from lds_toolkit.systems import LDS, simulate_continuous

    etc = paper_system()
    x0 = np.array([1.0, 0.0])
    run = simulate_etc(etc, LyapunovRule(0.5), x0, horizon=5.0, mode="grid", output_step=0.001)
    # steps of 0.001 that differ by round-off (~1e-15): the varying-step path runs
    lds = LDS(etc.A, etc.B, np.eye(2))
    modal = simulate_continuous(lds, run.t, run.u, x0, method="modal")
    dense = simulate_continuous(lds, run.t, run.u, x0, method="dense")
    measured = np.abs(modal.x - dense.x).max() / np.abs(dense.x).max()
    assert measured > 0
    assert modal.certificate.error_estimate >= measured
    auto = simulate_continuous(lds, run.t, run.u, x0)
    assert auto.method == "dense"
    np.testing.assert_array_equal(auto.x, dense.x)


def test_exactly_defective_delay_line_goes_dense():
    """Three-input, three-step delay lines (Jordan blocks at 0) feeding a diagonal block, as
    STU.to_lds builds for lag + k_u: eig returns an exactly singular eigenvector matrix with a
    finite condition estimate; the modal path is refused and the run is the dense one (the
    inverse used to raise LinAlgError)."""
    m, nw = 3, 3
    n = 2 + m * nw
    A = np.zeros((n, n))
    A[0, 0], A[1, 1] = 0.9, -0.5
    for j in range(1, nw):  # w_{j+1, t+1} = w_{j, t}
        A[2 + j * m : 2 + (j + 1) * m, 2 + (j - 1) * m : 2 + j * m] = np.eye(m)
    A[:2, 2 + (nw - 1) * m :] = 1.0  # the oldest input drives the diagonal block
    B = np.zeros((n, m))
    B[2 : 2 + m] = np.eye(m)
    sys = LDS(A, B, np.ones((1, n)), dt=1.0)
    u = np.random.default_rng(0).standard_normal((30, m))
    auto = simulate(sys, u)
    assert auto.path == "dense"
    np.testing.assert_array_equal(auto.y, simulate(sys, u, method="dense").y)
    with pytest.raises(ValueError, match="needs a diagonalisable A"):
        simulate(sys, u, method="modal")
