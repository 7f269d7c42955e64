"""python-control interop of the systems module: timebase conventions, StateSpace accepted
wherever an LDS is, "tustin", and TimeResponseData round trips against python-control's own
simulations (discrete: forced_response; continuous: a ZOH-consistent reference, since
forced_response interpolates continuous-time inputs linearly)."""

from __future__ import annotations

import control
import numpy as np
import pytest
import scipy.signal

from lds_toolkit.systems import (
    LDS,
    as_lds,
    discretize,
    s4_bilinear,
    simulate,
    simulate_continuous,
)


def _mats(seed, n=3, d_in=2, d_out=2, scale=0.4):
    rng = np.random.default_rng(seed)
    return (scale * rng.standard_normal((n, n)), rng.standard_normal((n, d_in)),
            rng.standard_normal((d_out, n)), rng.standard_normal((d_out, d_in)))


# ---------------------------------------------------------------------------- timebase
@pytest.mark.parametrize("dt", [0, 0.0, False, None, True, np.True_, 0.1, 2])
def test_timebase_reads_as_python_control_does(dt):
    """Continuous/discrete as control.isctime/isdtime(strict=True) say for the same dt
    (python-control's dt=None is 'unspecified'; ours is continuous, the toolkit's default)."""
    A, B, C, D = _mats(0)
    sys = LDS(A, B, C, D, dt=dt)
    if dt is None:
        assert sys.is_continuous and sys.dt == 0 and sys.dt is not False
        return
    ref = control.ss(A, B, C, D, bool(dt) if isinstance(dt, np.bool_) else dt)
    assert sys.is_continuous == control.isctime(ref, strict=True)
    assert sys.is_discrete == control.isdtime(ref, strict=True)
    back = sys.to_statespace()
    assert back.dt == ref.dt and (back.dt is True) == (ref.dt is True)
    assert LDS.from_statespace(ref).equals(sys)


def test_dt_true_is_kept_as_unspecified_step():
    sys = LDS([[0.5]], [[1.0]], [[1.0]], dt=True)
    assert sys.dt is True and sys.is_discrete and sys.sample_time == 1.0
    assert repr(sys) == "LDS(n=1, d_in=1, d_out=1, discrete, dt=True (unspecified))"
    ss = control.ss([[0.5]], [[1.0]], [[1.0]], [[0.0]], True)
    assert LDS.from_statespace(ss).dt is True
    assert sys.to_statespace().dt is True
    # a specified step of 1 is a different timebase (python-control keeps them apart too)
    assert not sys.equals(sys.with_matrices(dt=1.0))
    assert sys.equals(sys.with_matrices())
    with pytest.raises(ValueError, match="has no sample time"):
        _ = LDS([[-1.0]], [[1.0]], [[1.0]]).sample_time


def test_dt_zero_and_false_mean_continuous():
    for dt in (0, 0.0, False, np.float64(0.0)):
        sys = LDS([[-1.0]], [[1.0]], [[1.0]], dt=dt)
        assert sys.dt == 0 and sys.is_continuous
        assert sys.to_statespace().dt == 0


def test_ambiguous_or_invalid_timebases_are_refused():
    ss_none = control.ss([[-1.0]], [[1.0]], [[1.0]], [[0.0]], None)
    with pytest.raises(ValueError, match=r"dt=None \('not specified'.*ambiguous.*"
                                         r"control.ss\(sys, dt=0\)"):
        LDS.from_statespace(ss_none)
    with pytest.raises(ValueError, match=r"ambiguous"):
        simulate(ss_none, np.ones((3, 1)))
    # the fix the message proposes works
    assert LDS.from_statespace(control.ss(ss_none, dt=0)).is_continuous
    with pytest.raises(ValueError, match=r"dt must be None or 0 .* got -0.5"):
        LDS([[1.0]], [[1.0]], [[1.0]], dt=-0.5)
    with pytest.raises(TypeError, match=r"dt must be None or 0 .* got str 'discrete'"):
        LDS([[1.0]], [[1.0]], [[1.0]], dt="discrete")


def test_as_lds_accepts_lds_statespace_and_transfer_function_only():
    A, B, C, D = _mats(1)
    sys = LDS(A, B, C, D, dt=0.2)
    assert as_lds(sys) is sys
    assert as_lds(sys.to_statespace()).equals(sys)
    tf = control.tf([1.0], [1.0, 1.0], inputs="u", outputs="y", name="G")
    got = as_lds(tf, "plant")  # python-control's realisation, the names kept
    assert got.equals(LDS.from_statespace(control.ss(tf, name="G")))
    assert (got.input_labels, got.output_labels, got.name) == (["u"], ["y"], "G")
    with pytest.raises(TypeError, match=r"plant must be an LDS, a control.StateSpace or a "
                                        r"control.TransferFunction, got "
                                        r"FrequencyResponseData"):
        as_lds(control.frd([1.0, 2.0], [0.1, 1.0]), "plant")
    with pytest.raises(TypeError, match=r"system must be an LDS, a control.StateSpace or a "
                                        r"control.TransferFunction, got "
                                        r"dict"):
        as_lds({"A": A})


# -------------------------------------------------------- StateSpace == equivalent LDS
@pytest.mark.parametrize("output", ["standard", "s4"])
@pytest.mark.parametrize("dt", [0.1, True])
def test_simulate_statespace_equals_lds(dt, output):
    A, B, C, D = _mats(2)
    sys = LDS(A, B, C, D, dt=dt)
    rng = np.random.default_rng(0)
    u, x0 = rng.standard_normal((4, 30, 2)), rng.standard_normal(3)
    ours = simulate(sys, u, x0, output=output)
    theirs = simulate(sys.to_statespace(), u, x0, output=output)
    np.testing.assert_array_equal(theirs.y, ours.y)
    np.testing.assert_array_equal(theirs.x, ours.x)
    np.testing.assert_array_equal(theirs.t, ours.t)


def test_simulate_continuous_statespace_equals_lds():
    A, B, C, D = _mats(3)
    sysc = LDS(A - np.eye(3), B, C, D)
    rng = np.random.default_rng(1)
    for t in (np.arange(20) * 0.05, np.cumsum(rng.uniform(0.01, 0.1, 20))):
        u = rng.standard_normal((20, 2))
        ours = simulate_continuous(sysc, t, u)
        theirs = simulate_continuous(sysc.to_statespace(), t, u)
        np.testing.assert_array_equal(theirs.y, ours.y)
        np.testing.assert_array_equal(theirs.x, ours.x)


@pytest.mark.parametrize("method", ["zoh", "bilinear", "tustin"])
def test_discretize_statespace_equals_lds_and_matches_sample_system(method):
    A, B, C, D = _mats(4)
    sysc = LDS(A, B, C, D)
    ss = sysc.to_statespace()
    ours = discretize(sysc, 0.1, method)
    back = discretize(ss, 0.1, method)
    assert type(back) is control.StateSpace and type(ours) is LDS  # the type that came in
    assert ours.equals(back)
    assert sysc.discretize(0.1, method).equals(ours)
    ref = control.sample_system(ss, 0.1, method=method)
    for name in "ABCD":
        np.testing.assert_allclose(getattr(ours, name), getattr(ref, name), rtol=1e-12,
                                   atol=1e-13)
    held = s4_bilinear(ss, 0.1)                      # the same rule: a StateSpace back
    assert type(held) is control.StateSpace and s4_bilinear(sysc, 0.1).equals(held)


def test_tustin_is_bilinear():
    A, B, C, D = _mats(5)
    sysc = LDS(A, B, C, D)
    assert discretize(sysc, 0.3, "tustin").equals(discretize(sysc, 0.3, "bilinear"))
    d = scipy.signal.cont2discrete((A, B, C, D), 0.3, method="tustin")
    np.testing.assert_allclose(discretize(sysc, 0.3, "tustin").A, d[0], rtol=1e-12)


# ------------------------------------------------------------------- TimeResponseData
def _assert_response_equal(ours, ref, atol=1e-12):
    np.testing.assert_allclose(ours.t, ref.t, rtol=0, atol=1e-15)
    for name in ("y", "x", "u"):
        np.testing.assert_allclose(getattr(ours, name), getattr(ref, name), rtol=0,
                                   atol=atol * max(1.0, np.abs(getattr(ref, name)).max()))
    assert (ours.ninputs, ours.noutputs, ours.nstates) == (ref.ninputs, ref.noutputs,
                                                           ref.nstates)
    assert ours.issiso == ref.issiso
    np.testing.assert_allclose(ours.outputs, ref.outputs, atol=atol * 100)


@pytest.mark.parametrize("dt", [0.1, True])
@pytest.mark.parametrize("shape", [(3, 2, 2), (1, 1, 1), (2, 1, 3)])
def test_time_response_round_trip_against_forced_response(shape, dt):
    """Discrete time: forced_response is the exact recursion, so every field must agree."""
    n, d_in, d_out = shape
    A, B, C, D = _mats(6, n, d_in, d_out)
    ss = control.ss(A, B, C, D, dt)
    rng = np.random.default_rng(2)
    u, x0 = rng.standard_normal((40, d_in)), rng.standard_normal(n)
    resp = simulate(ss, u, x0).to_time_response(return_x=True)
    assert isinstance(resp, control.TimeResponseData)
    assert resp.y.shape == (d_out, 40) and resp.x.shape == (n, 40) and resp.u.shape == (d_in, 40)
    step = 1.0 if dt is True else dt
    ref = control.forced_response(ss, np.arange(40) * step, u.T, x0, return_x=True)
    _assert_response_equal(resp, ref)
    t, y, x = resp  # legacy tuple access, as with return_x=True
    np.testing.assert_array_equal(y, resp.outputs)
    t, y = simulate(ss, u, x0).to_time_response()
    assert y.shape == ref.outputs.shape


def test_time_response_batch_is_multi_trace():
    A, B, C, D = _mats(7)
    ss = control.ss(A, B, C, D, 0.05)
    rng = np.random.default_rng(3)
    u, x0 = rng.standard_normal((5, 25, 2)), rng.standard_normal(3)
    resp = simulate(ss, u, x0).to_time_response()
    assert resp.ntraces == 5 and resp.y.shape == (2, 5, 25) and resp.u.shape == (2, 5, 25)
    for k in range(5):
        ref = control.forced_response(ss, np.arange(25) * 0.05, u[k].T, x0, return_x=True)
        np.testing.assert_allclose(resp.y[:, k], ref.y, atol=1e-12)
        np.testing.assert_allclose(resp.x[:, k], ref.x, atol=1e-12)
    # an input shared by a batch of initial states is broadcast into every trace
    resp = simulate(ss, u[0], rng.standard_normal((4, 3))).to_time_response()
    assert resp.u.shape == (2, 4, 25)
    np.testing.assert_array_equal(resp.u[:, 2], u[0].T)
    with pytest.raises(ValueError, match=r"at most one batch axis .* got batch shape \(2, 5\)"):
        simulate(ss, np.stack([u, u]), x0).to_time_response()


def test_time_response_of_continuous_simulation_against_zoh_references():
    """Continuous time with inputs held between samples: equal to python-control's
    forced_response of the ZOH-sampled system and to scipy's lsim(interp=False); plain
    forced_response of the continuous system interpolates the inputs and differs."""
    A, B, C, D = _mats(8)
    sysc = LDS(A - np.eye(3), B, C, D)
    ss = sysc.to_statespace()
    h, K = 0.1, 30
    t = np.arange(K) * h
    rng = np.random.default_rng(4)
    u, x0 = rng.standard_normal((K, 2)), rng.standard_normal(3)
    resp = simulate_continuous(ss, t, u, x0).to_time_response(return_x=True)
    ref = control.forced_response(control.sample_system(ss, h, "zoh"), t, u.T, x0,
                                  return_x=True)
    _assert_response_equal(resp, ref, atol=1e-11)
    _, y_lsim, x_lsim = scipy.signal.lsim((A - np.eye(3), B, C, D), u, t, X0=x0, interp=False)
    np.testing.assert_allclose(resp.y, y_lsim.T, atol=1e-11)
    np.testing.assert_allclose(resp.x, x_lsim.T, atol=1e-11)
    interpolated = control.forced_response(ss, t, u.T, x0)
    assert np.abs(interpolated.y - resp.y).max() > 1e-3


def test_time_response_names_a_non_standard_convention():
    sys = LDS([[0.5]], [[1.0]], [[1.0]], dt=1.0)
    assert "s4" in simulate(sys, np.ones((4, 1)), output="s4").to_time_response().title
    assert "convention" not in simulate(sys, np.ones((4, 1))).to_time_response().title
