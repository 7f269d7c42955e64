"""The pieces of python-control interop beyond the eleven mismatches: an LDS as a StateSpace
(immutability, pickling, copies, names, equality), discretize's options and refusals,
S4Recursion, labelled responses and pandas, and river-style values of the learners."""

from __future__ import annotations

import copy
import pickle

import control as ct
import matplotlib
import numpy as np
import pytest

import lds_toolkit as lt
from lds_toolkit.learning import LastValue, LDSOracle, SpectralFiltering
from lds_toolkit.systems import LDS, S4Recursion

NAMED = dict(inputs=["f", "g"], outputs=["p"], states=["a", "b", "c"], name="plant")


def _named(dt=0.1, seed=0):
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((3, 3))
    A = 0.8 * A / np.max(np.abs(np.linalg.eigvals(A))) if dt else A - 3 * np.eye(3)
    return LDS(A, rng.standard_normal((3, 2)), rng.standard_normal((1, 3)), dt=dt, **NAMED)


# ----------------------------------------------------------------- an LDS as a StateSpace
def test_lds_is_immutable_but_names_are_python_controls():
    sys = _named()
    with pytest.raises(AttributeError, match=r"immutable.*with_matrices\(A=...\)"):
        sys.A = np.eye(3)
    with pytest.raises(AttributeError, match="dt cannot be reassigned"):
        sys.dt = 0.2
    sys.dt = 0.1                       # python-control re-assigns an equal timebase: allowed
    with pytest.raises(ValueError, match="read-only"):
        sys.B[0, 0] = 1.0
    sys.set_inputs(["x", "y"])         # names are python-control's business
    assert sys.input_labels == ["x", "y"]


def test_pickle_copy_and_deepcopy_keep_matrices_timebase_and_names():
    sys = _named(dt=True)
    for other in (pickle.loads(pickle.dumps(sys)), copy.copy(sys), copy.deepcopy(sys)):
        assert type(other) is LDS and other is not sys and other.equals(sys)
        assert other.dt is True and other.names() == sys.names()
    assert sys.copy().name == "plant$copy"            # python-control's copy() naming


def test_with_matrices_keeps_the_names_that_still_fit():
    sys = _named()
    assert sys.with_matrices(D=np.ones((1, 2))).names()["inputs"] == ["f", "g"]
    grown = sys.with_matrices(B=np.ones((3, 1)), D=np.zeros((1, 1)))
    assert grown.input_labels == ["u[0]"] and grown.state_labels == ["a", "b", "c"]
    assert sys.with_matrices(outputs=["q"]).output_labels == ["q"]


@pytest.mark.filterwarnings("ignore:Unused input")
def test_equality_is_identity_as_in_python_control():
    a, b = _named(), _named()
    assert a != b and a.equals(b) and hash(a) != hash(b)
    b.name = "other"
    ic = ct.interconnect([a, b], inplist=["plant.f"], outlist=["other.p"],
                         connections=[["other.f", "plant.p"]])
    assert ic.nstates == 6            # two systems, although equal in value
    assert not a.equals(a.with_matrices(dt=0.2)) and not a.equals("plant")


def test_names_must_match_the_signals():
    with pytest.raises(ValueError, match=r"inputs must name the 2 inputs \(columns of B\), "
                                         r"got 1: \['a'\]"):
        LDS(np.eye(3), np.ones((3, 2)), np.ones((1, 3)), inputs=["a"])
    with pytest.raises(ValueError, match=r"states must name the 3 states"):
        LDS(np.eye(3), np.ones((3, 2)), np.ones((1, 3)), states="s")
    with pytest.raises(ValueError, match="'.' not allowed"):       # python-control's check
        LDS(np.eye(3), np.ones((3, 2)), np.ones((1, 3)), name="a.b")
    assert LDS(np.eye(3), np.ones((3, 2)), np.ones((1, 3)), outputs="y").output_labels == ["y"]


def test_from_statespace_keeps_names_and_refuses_unspecified_timebase():
    ss = ct.ss(np.eye(2) * -1, np.ones((2, 1)), np.ones((1, 2)), 0, **{
        "inputs": "u", "outputs": "y", "states": ["s", "t"], "name": "G"})
    sys = LDS.from_statespace(ss)
    assert sys.names() == {"inputs": ["u"], "outputs": ["y"], "states": ["s", "t"], "name": "G"}
    back = sys.to_statespace()
    assert type(back) is ct.StateSpace and back.state_labels == ["s", "t"] and back.name == "G"
    assert LDS.from_statespace(sys) is sys
    with pytest.raises(ValueError, match="ambiguous"):
        LDS.from_statespace(ct.ss(-1, 1, 1, 0, dt=None))


def test_impulse_response_refusals():
    sys = _named()
    with pytest.raises(ValueError, match=r"convention must be one of \['control', 'toolkit'\]"):
        sys.impulse_response(5, convention="scipy")
    with pytest.raises(ValueError, match="needs a discrete system"):
        _named(dt=0).impulse_response(5)
    with pytest.raises(TypeError, match=r"needs `length`; .* control.impulse_response\(sys\)"):
        sys.impulse_response()


# ------------------------------------------------------------------------------ discretize
@pytest.mark.parametrize("method,kw,match", [
    ("zoh", {"alpha": 0.5}, "alpha is only used by method='gbt'"),
    ("gbt", {}, "method='gbt' needs alpha"),
    ("gbt", {"alpha": 1.5}, r"alpha must lie in \[0, 1\]"),
    ("zoh", {"prewarp_frequency": 1.0}, "prewarp_frequency needs method='bilinear'"),
    ("gbt", {"alpha": 0.3, "prewarp_frequency": 1.0}, "with alpha=0.3"),
    ("tustin", {"prewarp_frequency": 40.0}, r"below the Nyquist frequency pi/dt = 31.4"),
    ("tustin", {"prewarp_frequency": -1.0}, "prewarp_frequency must lie in"),
    ("impulse-invariant", {}, "method must be one of"),
    ("impulse", {"alpha": 0.5}, "alpha is only used by method=.gbt."),
])
def test_discretize_refuses_options_the_method_does_not_use(method, kw, match):
    with pytest.raises(ValueError, match=match):
        lt.discretize(_named(dt=0), 0.1, method, **kw)


def test_matched_refusals_and_names():
    with pytest.raises(ValueError, match="single-input single-output"):
        lt.discretize(_named(dt=0), 0.1, "matched")
    integrator = LDS([[0.0]], [[1.0]], [[1.0]])
    with pytest.raises(ValueError, match="pole or a zero at s = 0"):
        lt.discretize(integrator, 0.1, "matched")
    siso = LDS([[-1.0, 0.0], [1.0, -2.0]], [[1.0], [0.0]], [[0.0, 1.0]], inputs="u",
               outputs="y", states=["q", "r"])
    d = lt.discretize(siso, 0.1, "matched")
    assert d.input_labels == ["u"] and d.state_labels == ["x[0]", "x[1]"]  # new coordinates


def test_gbt_singular_and_methods_as_gbt():
    A = np.diag([-1.0, 5.0])
    with pytest.raises(ValueError, match="generalised bilinear map with alpha=0.4 is undefined"):
        lt.discretize(LDS(A, np.ones((2, 1)), np.ones((1, 2))), 0.5, "gbt", alpha=0.4)
    sys = _named(dt=0)
    for name, alpha in (("euler", 0.0), ("tustin", 0.5), ("backward_diff", 1.0)):
        a, b = lt.discretize(sys, 0.1, name), lt.discretize(sys, 0.1, "gbt", alpha=alpha)
        for m in "ABCD":
            np.testing.assert_allclose(getattr(a, m), getattr(b, m), rtol=1e-13, atol=1e-15)


def test_s4_bilinear_method_is_the_s4_recursion_realised():
    sys = _named(dt=0)
    held = lt.s4_bilinear(sys, 0.2)                       # S4 matrices, read with "s4"
    std = lt.discretize(sys, 0.2, "s4-bilinear")
    assert std.equals(S4Recursion(held.A, held.B, held.C, held.D, dt=0.2).to_lds())
    u = np.random.default_rng(0).standard_normal((30, 2))
    np.testing.assert_allclose(lt.simulate(std, u).y, lt.simulate(held, u, output="s4").y,
                               rtol=0, atol=1e-13)
    assert held.names()["inputs"] == ["f", "g"]


# ------------------------------------------------------------------------------ S4Recursion
def test_s4_recursion_round_trip_and_refusals():
    rng = np.random.default_rng(3)
    rec = S4Recursion(0.5 * np.eye(2) + 0.1 * rng.standard_normal((2, 2)),
                      rng.standard_normal((2, 1)), rng.standard_normal((1, 2)), [[0.3]])
    back = S4Recursion.from_lds(rec.to_lds())
    for mine, theirs in zip((back.A_bar, back.B_bar, back.C, back.D),
                            (rec.A_bar, rec.B_bar, rec.C, rec.D)):
        np.testing.assert_allclose(mine, theirs, rtol=0, atol=1e-14)
    assert "x_k = A_bar x_(k-1) + B_bar u_k" in repr(rec)
    with pytest.raises(ValueError, match="singular A"):
        S4Recursion.from_lds(LDS([[0.0]], [[1.0]], [[1.0]], dt=1.0))
    with pytest.raises(ValueError, match="discrete-time"):
        S4Recursion.from_lds(LDS([[-1.0]], [[1.0]], [[1.0]]))
    with pytest.raises(ValueError, match="dt must be a sample time"):
        S4Recursion([[0.5]], [[1.0]], [[1.0]], dt=0)
    with pytest.raises(ValueError, match="x_prev must have shape"):
        rec.simulate(np.zeros((4, 1)), x_prev=np.zeros(3))
    x_prev = np.array([1.0, -1.0])   # x_{-1}: the first output reads C (Ā x_{-1} + B̄ u_0)
    y0 = rec.simulate(np.zeros((1, 1)), x_prev).y[0, 0]
    assert y0 == pytest.approx((rec.C @ rec.A_bar @ x_prev).item(), rel=1e-14)


# --------------------------------------------------------------------------- responses
def test_batch_response_is_multi_trace_with_labels_and_plots():
    sys = _named()
    u = np.random.default_rng(1).standard_normal((3, 20, 2))
    resp = lt.simulate(sys, u).to_time_response()
    assert resp.ntraces == 3 and resp.trace_labels == ["trace[0]", "trace[1]", "trace[2]"]
    assert resp.state_labels == ["a", "b", "c"] and "of plant" in resp.title
    cplt = resp.plot()
    matplotlib.pyplot.close(cplt.figure)


def test_unnamed_results_get_python_controls_default_labels():
    sysc = LDS(-np.eye(2), np.ones((2, 1)), np.ones((1, 2)))
    res = lt.simulate_continuous(sysc, np.arange(5) * 0.1, np.ones((5, 1)))
    resp = res.to_time_response()
    assert resp.input_labels == ["u[0]"] and resp.state_labels == ["x[0]", "x[1]"]
    res = lt.simulate(_named(), np.ones((4, 2)), return_states=False)
    assert res.to_time_response().x is None and res.state_labels == ["a", "b", "c"]


def test_to_pandas_matches_python_controls_layout():
    pandas = pytest.importorskip("pandas")
    sys = _named()
    u = np.random.default_rng(2).standard_normal((12, 2))
    res = lt.simulate(sys, u)
    frame = res.to_pandas()
    assert isinstance(frame, pandas.DataFrame)
    assert list(frame.columns) == ["time", "f", "g", "p", "a", "b", "c"]
    theirs = ct.forced_response(sys, np.arange(12) * 0.1, u.T, return_x=True).to_pandas()
    for col in frame.columns:
        np.testing.assert_allclose(frame[col].to_numpy(), theirs[col].to_numpy(), atol=1e-14)
    batch = lt.simulate(sys, np.stack([u, 2 * u])).to_pandas()
    assert len(batch) == 24 and list(batch["trace"][:2]) == ["trace[0]"] * 2
    np.testing.assert_allclose(batch["p"].to_numpy()[12:], 2 * frame["p"].to_numpy())


def test_to_pandas_without_pandas_names_it(monkeypatch):
    import builtins
    real_import = builtins.__import__

    def no_pandas(name, *args, **kwargs):
        if name == "pandas":
            raise ImportError("No module named 'pandas'")
        return real_import(name, *args, **kwargs)
    monkeypatch.setattr(builtins, "__import__", no_pandas)
    with pytest.raises(ImportError, match=r"to_pandas needs pandas.*pip install pandas"):
        lt.simulate(_named(), np.ones((3, 2))).to_pandas()


# ------------------------------------------------------------------ learners, river values
def test_learner_values_come_back_in_the_targets_form():
    rng = np.random.default_rng(4)
    u, y = rng.standard_normal((40, 2)), rng.standard_normal((40, 2))
    ref = SpectralFiltering(horizon=40, k=3, lr=0.05).fit_predict(u, y)
    dicts = SpectralFiltering(horizon=40, k=3, lr=0.05)
    preds = []
    for u_t, y_t in zip(u, y):
        preds.append(dicts.predict_one({"b": u_t[1], "a": u_t[0]}))
        dicts.learn_one({"a": u_t[0], "b": u_t[1]}, {"p": y_t[0], "q": y_t[1]})
    assert preds[0] == 0.0 and isinstance(preds[1], dict) and list(preds[1]) == ["p", "q"]
    np.testing.assert_allclose([[p["p"], p["q"]] for p in preds[1:]], ref[1:], atol=1e-12)
    with pytest.raises(ValueError, match=r"y \(y_t\) must be a dict as in the first call"):
        dicts.learn_one({"a": 0.0, "b": 0.0}, np.zeros(2))
    with pytest.raises(ValueError, match=r"y \(y_t\) lacks the key 'q'; every call needs the "
                                         r"keys \['p', 'q'\]"):
        dicts.learn_one({"a": 0.0, "b": 0.0}, {"p": 0.0})


def test_cold_oracle_and_last_value():
    sys = lt.random_stable_lds(3, d_in=1, d_out=1, rng=0)
    u = np.random.default_rng(5).standard_normal((10, 1))
    y = lt.simulate(sys, u, output="lengen").y
    oracle, ref = LDSOracle(sys), LDSOracle(sys).fit_predict(u, y)
    got = []
    for u_t, y_t in zip(u, y):
        got.append(oracle.predict_one(u_t))   # one output: a float, cold or warm
        oracle.learn_one(u_t, y_t)
    assert all(type(g) is float for g in got)
    np.testing.assert_allclose(np.array(got), ref[:, 0], atol=1e-12)
    last = LastValue()
    last.learn_one(1.0, 3.0)
    assert last.predict_one(0.0) == 3.0


# --------------------------------------------------------------- control tools' results
def test_etc_run_as_time_response_with_the_plants_names():
    from lds_toolkit.control import ETCSystem, LyapunovRule

    G = ct.ss([[0.0, 1.0], [-2.0, -0.5]], [[0.0], [1.0]], [[1.0, 0.0]], 0,
              inputs="force", states=["pos", "vel"], name="msd")
    for loop in (ETCSystem.from_lqr(G, np.eye(2), np.eye(1)),
                 ETCSystem(G, K=-ct.lqr(G, np.eye(2), np.eye(1))[0])):
        assert loop.names == {"inputs": ["force"], "states": ["pos", "vel"], "name": "msd"}
    etc = lt.simulate_etc(loop, LyapunovRule(0.5), [1.0, 0.0], horizon=3.0, output_step=0.01)
    resp = etc.to_time_response()
    assert resp.state_labels == ["pos", "vel"] and resp.input_labels == ["force"]
    np.testing.assert_array_equal(resp.x, etc.x.T)
    np.testing.assert_array_equal(resp.u, etc.u.T)
    np.testing.assert_array_equal(resp.time, etc.t)
    # between events the input is K x(t_i): on the grid it equals K x at the last event
    idx = np.searchsorted(etc.sample_times, etc.t, side="right") - 1
    np.testing.assert_allclose(resp.u[0], (etc.sampled_states[idx] @ loop.K.T)[:, 0],
                               atol=1e-12)
    cplt = resp.plot()
    matplotlib.pyplot.close(cplt.figure)
    bare = ETCSystem(loop.A, loop.B, loop.K)
    assert bare.names is None
    resp = lt.simulate_etc(bare, LyapunovRule(0.5), [1.0, 0.0], horizon=1.0).to_time_response()
    assert resp.state_labels == ["x[0]", "x[1]"] and resp.input_labels == ["u[0]"]


@pytest.mark.parametrize("t", [np.linspace(0.0, 1.0, 11), np.array([0.0, 0.1, 0.3, 0.35, 1.0])],
                         ids=["uniform", "varying"])
@pytest.mark.parametrize("method", ["dense", "modal"])
def test_simulate_continuous_keeps_the_signal_names_and_matches_forced_response(t, method):
    """Names survive on every route of simulate_continuous (uniform and varying grids, dense
    and modal), and on the uniform grid the response equals python-control's forced_response
    of the same system (which takes equally spaced times only)."""
    G = ct.ss([[-1.0, 0.5], [0.0, -2.0]], [[1.0], [1.0]], [[1.0, 1.0]], [[0.0]],
              inputs=["force"], outputs=["pos"], states=["a", "b"])
    u = np.ones((t.size, 1))
    res = lt.simulate_continuous(G, t, u, method=method)
    tr = res.to_time_response()
    assert (tr.input_labels, tr.output_labels, tr.state_labels) == (["force"], ["pos"],
                                                                     ["a", "b"])
    if np.allclose(np.diff(t), t[1] - t[0]):
        ref = ct.forced_response(G, t, np.ones(t.size), X0=[0.0, 0.0])
        np.testing.assert_allclose(res.y[:, 0], ref.outputs, rtol=1e-9, atol=1e-12)
