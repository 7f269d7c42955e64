"""simulate() against scipy.signal.dlsim / control.forced_response and a naive loop.

Every output convention is checked against a reference built from the *standard* one by the
index shifts written in ``_ref.dlsim_reference`` (eq1-literal: delay by one step with y_0 = 0;
lengen: D u_{t-1} instead of D u_t; s4: the system (A, B, CA, D + CB)), for every batch
layout and both simulation paths.
"""

from __future__ import annotations

import importlib

import numpy as np
import pytest

from lds_toolkit.systems import LDS, SimulationDivergedError, modal_form, simulate
from lds_toolkit.systems._blocked import state_block_length
from lds_toolkit.systems.simulate import DEFAULT_RTOL

from ._ref import (
    assert_rel,
    broadcast_streams,
    dlsim_reference,
    first_divergence_step,
    forced_response_reference,
    loop_reference,
    make_system,
    seed_of,
)

TOL = 1e-10
CONVENTIONS = ("standard", "lengen", "eq1-literal", "s4")
T = 48

# name -> (batch shape of u, batch shape of x0 or None for x0=None)
BATCHES = {
    "none": ((), ()),
    "b3": ((3,), (3,)),
    "b2x3": ((2, 3), (2, 3)),
    "x0_broadcast": ((2, 3), (3,)),
    "both_broadcast": ((2, 1), (1, 3)),
    "x0_only_batch": ((), (4,)),
    "x0_none": ((3,), None),
}


def _inputs(sys, batch_u, batch_x0, rng):
    u = rng.standard_normal(batch_u + (T, sys.n_inputs))
    x0 = None if batch_x0 is None else rng.standard_normal(batch_x0 + (sys.n_states,))
    return u, x0


# ----------------------------------------------------------------- path selection
def test_auto_path_selection_and_modal_form():
    rng = np.random.default_rng(0)
    sym = make_system("symmetric", 6, 2, 3, rng)
    mf = modal_form(sym.A)
    assert mf.orthogonal and mf.lam.dtype == np.float64
    np.testing.assert_allclose(mf.V @ mf.V.T, np.eye(6), atol=1e-13)
    np.testing.assert_allclose((mf.V * mf.lam) @ mf.Vinv, sym.A, atol=1e-13)

    non = make_system("nonsymmetric", 6, 2, 3, rng)
    mf = modal_form(non.A)
    assert not mf.orthogonal and np.iscomplexobj(mf.lam) and np.any(mf.lam.imag != 0)
    assert mf.cond * np.finfo(float).eps <= DEFAULT_RTOL  # premise: auto tries modal
    np.testing.assert_allclose((mf.V * mf.lam) @ mf.Vinv, non.A, atol=1e-12)

    jor = make_system("jordan", 5, 2, 3, rng)
    u = rng.standard_normal((10, 2))
    assert simulate(sym, u).method == "modal"
    assert simulate(non, u).method == "modal"
    assert simulate(jor, u).method == "dense"
    assert simulate(sym, u, method="dense").method == "dense"
    with pytest.raises(ValueError, match=r"method='modal'.*diagonalisable"):
        simulate(jor, u, method="modal")


def test_nonsymmetric_with_real_spectrum_uses_real_modal_path():
    rng = np.random.default_rng(1)
    V = rng.standard_normal((4, 4))
    A = V @ np.diag([0.9, 0.5, -0.3, 0.1]) @ np.linalg.inv(V)
    sys = LDS(A, rng.standard_normal((4, 1)), rng.standard_normal((1, 4)), dt=1.0)
    mf = modal_form(sys.A)
    assert not mf.orthogonal and mf.lam.dtype == np.float64
    u = rng.standard_normal((T, 1))
    res = simulate(sys, u, method="modal")
    y_ref, x_ref, _ = dlsim_reference(sys, u, np.zeros(4), "standard")
    assert_rel(res.y, y_ref, TOL)
    assert_rel(res.x, x_ref, TOL)


# ----------------------------------------------------------------- against dlsim
@pytest.mark.parametrize("batch", list(BATCHES))
@pytest.mark.parametrize("output", CONVENTIONS)
@pytest.mark.parametrize("kind,method", [
    ("symmetric", "auto"), ("symmetric", "dense"), ("symmetric", "modal"),
    ("nonsymmetric", "auto"), ("nonsymmetric", "dense"), ("nonsymmetric", "modal"),
    ("jordan", "auto"),
])
def test_simulate_matches_dlsim(kind, method, output, batch):
    rng = np.random.default_rng(seed_of(kind, method, output, batch))
    sys = make_system(kind, 5, 2, 3, rng)
    batch_u, batch_x0 = BATCHES[batch]
    u, x0 = _inputs(sys, batch_u, batch_x0, rng)
    res = simulate(sys, u, x0, output=output, method=method)
    expected_path = "dense" if (method == "dense" or kind == "jordan") else "modal"
    assert res.method == expected_path

    bshape = np.broadcast_shapes(batch_u, () if batch_x0 is None else batch_x0)
    assert res.y.shape == bshape + (T, 3)
    assert res.x.shape == bshape + (T, 5)
    assert res.final_state.shape == bshape + (5,)
    for idx, u_i, x0_i in broadcast_streams(u, x0, bshape):
        x0_i = np.zeros(5) if x0_i is None else x0_i
        y_ref, x_ref, fin_ref = dlsim_reference(sys, u_i, x0_i, output)
        assert_rel(res.y[idx], y_ref, TOL, f"y{idx}")
        assert_rel(res.x[idx], x_ref, TOL, f"x{idx}")
        assert_rel(res.final_state[idx], fin_ref, TOL, f"final{idx}")


@pytest.mark.parametrize("output", CONVENTIONS)
@pytest.mark.parametrize("kind", ["symmetric", "nonsymmetric", "jordan"])
def test_simulate_matches_control_forced_response(kind, output):
    rng = np.random.default_rng({"symmetric": 1, "nonsymmetric": 2, "jordan": 3}[kind])
    sys = make_system(kind, 5, 2, 2, rng)
    u = rng.standard_normal((3, T, 2))
    x0 = rng.standard_normal((3, 5))
    y = simulate(sys, u, x0, output=output).y
    for b in range(3):
        assert_rel(y[b], forced_response_reference(sys, u[b], x0[b], output), TOL)


@pytest.mark.parametrize("D_kind", ["zero", "identity", "random"])
@pytest.mark.parametrize("method", ["dense", "modal"])
def test_lengen_convention_markov_parameters(D_kind, method):
    """The length-generalization paper's sentence below eq. 1: C A^l B is the coefficient of
    u_{t-l} in y_{t+1} (l >= 0), and D multiplies u_t in y_{t+1}. Checked by impulses at every
    input channel against matrix powers computed independently (no simulation code)."""
    rng = np.random.default_rng(11)
    n, d, T, tau = 5, 2, 12, 3
    A = rng.standard_normal((n, n))
    A = 0.9 * A / max(abs(np.linalg.eigvals(A)))
    B, C = rng.standard_normal((n, d)), rng.standard_normal((d, n))
    D = {"zero": np.zeros((d, d)), "identity": np.eye(d),
         "random": rng.standard_normal((d, d))}[D_kind]
    sys = LDS(A, B, C, D, dt=1.0)
    for j in range(d):
        u = np.zeros((T, d))
        u[tau, j] = 1.0  # impulse u_tau = e_j
        y = simulate(sys, u, output="lengen", method=method).y
        assert np.all(y[: tau + 1] == 0), "y_t for t <= tau must not see u_tau"
        for ell in range(T - tau - 1):
            # y_{t+1} with t = tau + ell holds u_{t-ell} = u_tau with coefficient C A^ell B
            want = C @ np.linalg.matrix_power(A, ell) @ B[:, j] + (D[:, j] if ell == 0 else 0)
            np.testing.assert_allclose(y[tau + ell + 1], want, rtol=1e-12, atol=1e-14)


def test_lengen_equals_standard_when_D_is_zero_and_eq1_literal_is_one_step_later():
    rng = np.random.default_rng(12)
    sys = make_system("symmetric", 6, 1, 1, rng)
    sys0 = LDS(sys.A, sys.B, sys.C, np.zeros_like(sys.D), dt=1.0)
    u = rng.standard_normal((2, 40, 1))
    y_len = simulate(sys0, u, output="lengen").y
    np.testing.assert_array_equal(y_len, simulate(sys0, u, output="standard").y)
    lit = simulate(sys0, u, output="eq1-literal").y
    np.testing.assert_allclose(lit[:, 1:], y_len[:, :-1], rtol=1e-13, atol=1e-15)


def test_removed_paper_convention_explains_the_choice():
    sys = LDS([[0.5]], [[1.0]], [[1.0]], dt=1.0)
    with pytest.raises(ValueError, match=r'output="paper" was removed.*"lengen".*"eq1-literal"'):
        simulate(sys, np.ones((3, 1)), output="paper")


def test_docstring_example_values_by_hand():
    """a = 0.5, B = C = 1, u = 1: standard y = (0, 1, 1.5); s4 y = (1, 1.5, 1.75);
    eq1-literal y = (0, 0, 1); with D = 1, lengen y = (0, 2, 2.5)."""
    sys = LDS([[0.5]], [[1.0]], [[1.0]], dt=1.0)
    u = np.ones((3, 1))
    np.testing.assert_allclose(simulate(sys, u).y[:, 0], [0.0, 1.0, 1.5])
    np.testing.assert_allclose(simulate(sys, u, output="s4").y[:, 0], [1.0, 1.5, 1.75])
    np.testing.assert_allclose(simulate(sys, u, output="eq1-literal").y[:, 0], [0.0, 0.0, 1.0])
    sys_d = LDS([[0.5]], [[1.0]], [[1.0]], [[1.0]], dt=1.0)
    np.testing.assert_allclose(simulate(sys_d, u, output="lengen").y[:, 0], [0.0, 2.0, 2.5])
    x, y = simulate(sys, u)  # unpacks as (x, y)
    np.testing.assert_allclose(x[:, 0], [0.0, 1.0, 1.5])


def test_return_states_false_same_outputs():
    """Dropping the states changes the route (blocks of matrix products instead of the
    per-step recursion) but not the outputs beyond round-off."""
    rng = np.random.default_rng(4)
    sys = make_system("nonsymmetric", 4, 1, 2, rng)
    u = rng.standard_normal((2, T, 1))
    x0 = rng.standard_normal(4)
    for output in CONVENTIONS:
        for method in ("dense", "modal", "auto"):
            a = simulate(sys, u, x0, output=output, method=method)
            b = simulate(sys, u, x0, output=output, method=method, return_states=False)
            assert b.x is None
            assert_rel(b.y, a.y, 1e-13)
            assert_rel(b.final_state, a.final_state, 1e-13)


# ----------------------------------------------------------------- blocked (BLAS-3) route
@pytest.fixture
def blocked_runs(monkeypatch):
    """Records ("modal" | "dense") for every time-blocked run that produced the outputs
    (outputs by matrix-matrix products over blocks of L steps), and "dense+states" for every
    blocked run that produced the states."""
    blocked = importlib.import_module("lds_toolkit.systems._blocked")
    calls = []
    original, original_states = blocked.BlockPlan.run, blocked.BlockPlan.run_states

    def spy(self, *args, **kwargs):
        got = original(self, *args, **kwargs)
        if got is not None:
            calls.append("modal" if self.diagonal else "dense")
        return got

    def spy_states(self, *args, **kwargs):
        got = original_states(self, *args, **kwargs)
        if got is not None:
            calls.append("dense+states")
        return got

    monkeypatch.setattr(blocked.BlockPlan, "run", spy)
    monkeypatch.setattr(blocked.BlockPlan, "run_states", spy_states)
    return calls


@pytest.mark.parametrize("batch", ["none", "b3", "b2x3", "x0_broadcast"])
@pytest.mark.parametrize("output", CONVENTIONS)
@pytest.mark.parametrize("kind,method", [("symmetric", "modal"), ("nonsymmetric", "modal"),
                                         ("symmetric", "dense"), ("jordan", "dense"),
                                         ("nonsymmetric", "auto")])
def test_blocked_route_matches_dlsim(kind, method, output, batch, blocked_runs):
    """No noise, no states requested: outputs by blocks of matrix-matrix products (T not a
    multiple of the block length), the final state s_T from the last block start. Long
    horizon with an eigenvalue close to 1 (slowly decaying kernel), initial states."""
    rng = np.random.default_rng(seed_of("blocked", kind, method, output, batch))
    sys = make_system(kind, 6 if kind != "jordan" else 5, 2, 3, rng)
    A = np.array(sys.A)
    # push the largest eigenvalue to modulus 0.999 while keeping symmetry / eigenvectors
    sys = sys.with_matrices(A=A * (0.999 / np.max(np.abs(np.linalg.eigvals(A)))))
    Tl = 3001
    batch_u, batch_x0 = BATCHES[batch]
    u = rng.standard_normal(batch_u + (Tl, 2))
    x0 = rng.standard_normal(batch_x0 + (sys.n_states,))
    res = simulate(sys, u, x0, output=output, method=method, return_states=False)
    expected = "dense" if method == "auto" else method
    assert blocked_runs == [expected], "premise: the blocked route produced the outputs"
    assert res.path == expected and res.x is None
    bshape = np.broadcast_shapes(batch_u, batch_x0)
    for idx, u_i, x0_i in broadcast_streams(u, x0, bshape):
        y_ref, _, fin_ref = dlsim_reference(sys, u_i, x0_i, output)
        assert_rel(res.y[idx], y_ref, TOL, f"y{idx}")
        assert_rel(res.final_state[idx], fin_ref, TOL, f"final{idx}")


def test_final_state_does_not_read_caller_buffer_later(blocked_runs):
    """Regression: a former route computed final_state lazily from a view of the caller's u,
    so overwriting u (a reused buffer) before reading final_state changed it."""
    rng = np.random.default_rng(10)
    sys = make_system("symmetric", 3, 2, 1, rng)
    buf = rng.standard_normal((2, 40, 2))
    expected = dlsim_reference(sys, buf[1], np.zeros(3), "standard")[2]
    res = simulate(sys, buf[1], return_states=False)
    assert blocked_runs  # premise: the blocked route
    buf[:] = 1e3
    assert_rel(res.final_state, expected, TOL)


def test_blocked_route_not_taken_when_unsafe(blocked_runs):
    """Noise, states of a run too short for blocks (80 steps), or a state bound that a block
    could reach (ρ(A) > 1, or a bound close to the peak state norm) go through the recursion,
    which checks every step."""
    rng = np.random.default_rng(8)
    sys = make_system("symmetric", 4, 1, 1, rng)
    u = rng.standard_normal((80, 1))
    for method in ("auto", "modal", "dense"):
        simulate(sys, u, process_noise=0.1, rng=0, return_states=False, method=method)
        simulate(sys, u, method=method)
        # a bound twice the true peak state norm: safe, but not provably so per block
        peak = np.linalg.norm(simulate(sys, u).x, axis=-1).max()
        simulate(sys, u, return_states=False, max_state_norm=2 * peak, method=method)
        unstable = sys.with_matrices(A=np.array(sys.A) * 1.5 /
                                     np.abs(np.linalg.eigvalsh(sys.A)).max())
        with pytest.raises(SimulationDivergedError) as err:
            simulate(unstable, np.ones((500, 1)), return_states=False, max_state_norm=1e3,
                     method=method)
        ref = simulate(unstable, np.ones((500, 1)), max_state_norm=1e300, method="dense").x
        first = int(np.argmax(np.linalg.norm(ref, axis=-1) > 1e3)) - 1  # x_{t+1} crossed
        assert err.value.step == first
    assert not blocked_runs
    simulate(sys, u, return_states=False)
    assert blocked_runs == ["dense"]  # and the safe case does take it


# ------------------------------------------------- blocked route with states (dense)
@pytest.mark.parametrize("output", CONVENTIONS)
@pytest.mark.parametrize("n,d_in,d_out,batch_u,batch_x0,T_len,L", [
    (16, 1, 1, (), (), 1001, 4),          # one stream, T not a multiple of L
    (24, 2, 3, (3,), (3,), 700, 8),       # several inputs and outputs, a batch
    (33, 3, 2, (2, 3), (3,), 301, 4),     # two batch axes, x0 broadcast, short last block
    (64, 1, 2, (4,), (4,), 1024, 16),     # T a multiple of L
    (4, 2, 2, (64,), (64,), 9, 4),        # T = 2L + 1: two blocks and one step
    (4, 2, 2, (80,), (80,), 7, None),     # T = 2L - 1 < 2L: the per-step recursion
])
def test_blocked_states_equal_per_step_recursion(n, d_in, d_out, batch_u, batch_x0, T_len,
                                                 L, output, blocked_runs):
    """States (and outputs, final state) of the blocked dense route against the plain
    per-step loop of the equations, to round-off: non-normal A with ρ(A) = 0.99, nonzero x0,
    feedthrough D, both core conventions (standard, S4) and the shifted ones."""
    rng = np.random.default_rng(seed_of("blocked-states", n, d_in, d_out, T_len, output))
    sys = make_system("nonsymmetric", n, d_in, d_out, rng)
    sys = sys.with_matrices(A=np.array(sys.A) * (0.99 / 0.9))
    u = rng.standard_normal(batch_u + (T_len, d_in))
    x0 = rng.standard_normal(batch_x0 + (n,))
    res = simulate(sys, u, x0, output=output, method="dense")
    nb = int(np.prod(np.broadcast_shapes(batch_u, batch_x0), dtype=int))
    # premise: the route and its block length are the ones the case is about
    assert blocked_runs == ([] if L is None else ["dense+states"])
    assert state_block_length(T_len, nb) == (L or 4)
    assert res.path == "dense"
    bshape = np.broadcast_shapes(batch_u, batch_x0)
    for idx, u_i, x0_i in broadcast_streams(u, x0, bshape):
        y_ref, x_ref, fin_ref = loop_reference(sys, u_i, x0_i, None, None, output)
        assert_rel(res.x[idx], x_ref, 1e-12, f"x{idx}")
        assert_rel(res.y[idx], y_ref, 1e-12, f"y{idx}")
        assert_rel(res.final_state[idx], fin_ref, 1e-12, f"final{idx}")
    if L is not None:  # "auto" takes the same route for the states of a general A
        auto = simulate(sys, u, x0, output=output)
        assert auto.path == "dense" and auto.certificate is None
        np.testing.assert_array_equal(auto.x, res.x)


@pytest.mark.parametrize("T_len", [1000, 1003])
def test_blocked_states_threads_split_blocks_exactly(T_len, monkeypatch):
    """The block ranges run by separate threads give the states of the single-threaded run
    (rows of the per-step products are independent; a last partial block included). Blocks
    of L = 8 steps: 3 streams x 1000 steps."""
    from lds_toolkit.systems import _blocked

    rng = np.random.default_rng(seed_of("threads", T_len))
    sys = make_system("nonsymmetric", 20, 2, 2, rng)
    u = rng.standard_normal((3, T_len, 2))
    x0 = rng.standard_normal((3, 20))
    monkeypatch.setattr(_blocked, "STATE_THREADS", 1)
    one = simulate(sys, u, x0, method="dense")
    monkeypatch.setattr(_blocked, "STATE_THREADS", 3)
    monkeypatch.setattr(_blocked, "_THREADED_MACS", 0)
    calls = []
    original = _blocked._dense_stages

    def spy(*args):
        calls.append(args[-4:-2])  # (k0, k1)
        return original(*args)

    monkeypatch.setattr(_blocked, "_dense_stages", spy)
    three = simulate(sys, u, x0, method="dense")
    # premise: several block ranges, together every block once
    assert len(calls) > 3 and sorted(calls)[0][0] == 0 and sorted(calls)[-1][1] == -(-T_len // 8)
    assert all(a[1] == b[0] for a, b in zip(sorted(calls), sorted(calls)[1:]))
    assert_rel(three.x, one.x, 1e-15)
    assert_rel(three.y, one.y, 1e-15)
    assert_rel(three.final_state, one.final_state, 1e-15)


def test_blocked_states_match_forced_response():
    """Against python-control: states and outputs of control.forced_response (standard
    convention), a general A, n = 48, T = 3000, an initial state."""
    import control

    rng = np.random.default_rng(17)
    sys = make_system("nonsymmetric", 48, 2, 3, rng)
    u = rng.standard_normal((3000, 2))
    x0 = rng.standard_normal(48)
    res = simulate(sys, u, x0)
    assert res.path == "dense"
    resp = control.forced_response(control.ss(sys.A, sys.B, sys.C, sys.D, 1.0),
                                   timepts=np.arange(3000), inputs=u.T, initial_state=x0,
                                   return_x=True)
    assert_rel(res.x, np.asarray(resp.states).T, 1e-12)
    assert_rel(res.y, np.asarray(resp.outputs).T, 1e-12)


@pytest.mark.parametrize("output", ["standard", "s4"])
@pytest.mark.parametrize("batch", [1, 3])
def test_blocked_states_divergence_located(output, batch, blocked_runs):
    """An unstable A with states requested on a run long enough for blocks: the intra-block
    bound reaches the limit, the per-step recursion reruns and names the first step whose
    state x_{t+1} crosses it (and the lowest batch index diverging then)."""
    rng = np.random.default_rng(seed_of("diverge-states", output, batch))
    sys = make_system("nonsymmetric", 24, 1, 1, rng)
    sys = sys.with_matrices(A=np.array(sys.A) * (1.02 / 0.9))
    u = rng.standard_normal((batch, 4000, 1))
    x0 = rng.standard_normal((batch, 24))
    x0[0] *= 1e-3  # stream 0 starts small: another stream crosses first when batch > 1
    bound = 1e6
    steps = [first_divergence_step(np.array(sys.A), np.array(sys.B), u[b], x0[b], bound)
             for b in range(batch)]
    assert all(s is not None for s in steps)  # premise: every stream diverges
    for method in ("auto", "dense"):
        with pytest.raises(SimulationDivergedError) as err:
            simulate(sys, u, x0, output=output, method=method, max_state_norm=bound)
        assert err.value.step == min(steps)
        assert err.value.batch_index == (int(np.argmin(steps)),)
    assert not blocked_runs  # the blocked states were refused (the rerun located the step)
    # a bound the run stays below: the blocked route runs
    ok = simulate(sys, u[:, :600], x0, output=output, max_state_norm=1e300)
    assert blocked_runs == ["dense+states"] and np.isfinite(ok.x).all()


# ----------------------------------------------------------------- noise
@pytest.mark.parametrize("output", CONVENTIONS)
@pytest.mark.parametrize("kind,method", [("symmetric", "modal"), ("symmetric", "dense"),
                                         ("nonsymmetric", "modal"), ("jordan", "dense")])
def test_noise_arrays_match_naive_loop(kind, method, output):
    rng = np.random.default_rng(seed_of(kind, method, output))
    sys = make_system(kind, 5, 2, 3, rng)
    u = rng.standard_normal((2, 3, T, 2))
    x0 = rng.standard_normal((3, 5))
    w = 0.3 * rng.standard_normal((2, 3, T, 5))
    v = 0.2 * rng.standard_normal((3, T, 3))  # broadcast over the first batch axis
    res = simulate(sys, u, x0, process_noise=w, obs_noise=v, output=output, method=method)
    assert res.method == method
    for i, j in np.ndindex(2, 3):
        y_ref, x_ref, fin_ref = loop_reference(sys, u[i, j], x0[j], w[i, j], v[j], output)
        assert_rel(res.y[i, j], y_ref, TOL)
        assert_rel(res.x[i, j], x_ref, TOL)
        assert_rel(res.final_state[i, j], fin_ref, TOL)


def test_unbatched_noise_broadcasts_and_noise_batch_extends_batch():
    rng = np.random.default_rng(5)
    sys = make_system("symmetric", 4, 1, 2, rng)
    u = rng.standard_normal((T, 1))
    w = rng.standard_normal((4, T, 4))  # noise alone sets the batch shape (4,)
    v = rng.standard_normal((T, 2))
    res = simulate(sys, u, process_noise=w, obs_noise=v)
    assert res.y.shape == (4, T, 2)
    for b in range(4):
        y_ref, _, _ = loop_reference(sys, u, np.zeros(4), w[b], v, "standard")
        assert_rel(res.y[b], y_ref, TOL)


def _recovered_noise(sys, u, res):
    """w_t = s_{t+1} - A s_t - B u_t and v_t = y_t - C s_t - D u_t (standard convention)."""
    x = res.x
    w = x[..., 1:, :] - x[..., :-1, :] @ sys.A.T - u[..., :-1, :] @ sys.B.T
    v = res.y - x @ sys.C.T - u @ sys.D.T
    return w, v


def test_sigma_noise_reproducible_and_distributed():
    rng = np.random.default_rng(6)
    sys = make_system("symmetric", 4, 2, 3, rng)
    u = rng.standard_normal((2, 1500, 2))
    kw = dict(process_noise=0.3, obs_noise=0.05)
    a = simulate(sys, u, rng=123, **kw)
    b = simulate(sys, u, rng=np.random.default_rng(123), **kw)
    c = simulate(sys, u, rng=124, **kw)
    np.testing.assert_array_equal(a.y, b.y)
    np.testing.assert_array_equal(a.x, b.x)
    assert not np.allclose(a.y, c.y)
    # σ = 0 is the noiseless simulation
    np.testing.assert_allclose(simulate(sys, u, process_noise=0.0, obs_noise=0.0, rng=1).y,
                               simulate(sys, u).y, rtol=0, atol=0)
    # the noise recovered from states and outputs has the requested scale and is white
    w, v = _recovered_noise(sys, u, a)
    assert abs(w.std() / 0.3 - 1) < 0.03 and abs(v.std() / 0.05 - 1) < 0.03
    assert abs(np.mean(w[..., 1:, 0] * w[..., :-1, 0])) / 0.09 < 0.05
    # and the two batch elements get different draws
    assert not np.allclose(w[0], w[1])


def test_sigma_noise_independent_across_batch_set_by_other_noise_array():
    """Regression: σ-noise was drawn before an explicit noise array widened the batch, so all
    batch elements shared one draw."""
    rng = np.random.default_rng(7)
    sys = make_system("symmetric", 3, 1, 1, rng)
    u = np.zeros((200, 1))
    res = simulate(sys, u, process_noise=1.0, obs_noise=np.zeros((3, 200, 1)), rng=0)
    w, _ = _recovered_noise(sys, np.broadcast_to(u, (3, 200, 1)), res)
    for i in range(3):
        for j in range(i):
            assert not np.allclose(w[i], w[j])


@pytest.mark.slow
@pytest.mark.parametrize("region", ["A", "B"])
def test_paper_scale_region_systems_match_dlsim(region):
    """The length-generalization paper's setting: symmetric n = 512, T = 2^14, eigenvalues
    half in each part of Region A, or all in Region B; both simulate routes vs dlsim."""
    from lds_toolkit.systems import eigenvalue_regions, random_lds

    r = eigenvalue_regions(2**14, 7 / 8)
    intervals = r.region_a if region == "A" else [tuple(r.region_b)]
    sys = random_lds(512, intervals, rng=0)
    u = np.random.default_rng(1).standard_normal((2**14, 1))
    y_ref, x_ref, fin_ref = dlsim_reference(sys, u, np.zeros(512), "standard")
    fast = simulate(sys, u, return_states=False)  # blocked dense route
    blocked_modal = simulate(sys, u, return_states=False, method="modal")
    for res in (fast, blocked_modal):
        assert_rel(res.y, y_ref, TOL)
        assert_rel(res.final_state, fin_ref, TOL)
    for method in ("auto", "modal"):  # states: blocked dense route, modal recursion
        rec = simulate(sys, u, method=method)
        assert_rel(rec.y, y_ref, TOL)
        assert_rel(rec.x, x_ref, TOL)
