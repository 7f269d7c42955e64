"""The eleven mismatches of issue 25, as a control engineer met them, one test each (every one
failed on the commit before the issue's work, af540d5, and passes now), plus the two findings
that came with them (python-control's own test_signal_names, river's learn_one contract).

Each test uses python-control as the reference: what it computes for the equivalent
``StateSpace`` is what the toolkit must give.
"""

from __future__ import annotations

import control as ct
import matplotlib
import numpy as np
import pytest

import lds_toolkit as lt
from lds_toolkit.control import continuous_lyapunov, discrete_lyapunov
from lds_toolkit.learning import SpectralFiltering

G = ct.ss([[0.0, 1.0], [-2.0, -0.8]], [[0.0], [1.0]], [[1.0, 0.0]], [[0.0]],
          inputs="force", outputs="position", states=["pos", "vel"], name="G")


def _u(T=80, seed=0):
    return np.random.default_rng(seed).standard_normal(T)


# 1 ------------------------------------------------------------------------------------------
def test_m01_time_response_plots_with_labels():
    """``simulate(c2d(G, .05), u[:, None]).to_time_response().plot()`` raised ``TypeError:
    'NoneType' object is not subscriptable`` (no labels)."""
    resp = lt.simulate(ct.c2d(G, 0.05), _u()[:, None]).to_time_response()
    assert resp.output_labels == ["position"] and resp.input_labels == ["force"]
    cplt = resp.plot()
    try:
        assert isinstance(cplt, ct.ControlPlot)
        titles = [ax.get_ylabel() for ax in np.ravel(cplt.axes)]
        assert "position" in titles and "force" in titles
    finally:
        matplotlib.pyplot.close(cplt.figure)


# 2 ------------------------------------------------------------------------------------------
def test_m02_simulate_keeps_signal_names():
    res = lt.simulate(ct.c2d(G, 0.05), _u()[:, None])
    assert (res.input_labels, res.output_labels, res.state_labels) == (
        ["force"], ["position"], ["pos", "vel"])
    resp = res.to_time_response(return_x=True)
    ref = ct.forced_response(ct.c2d(G, 0.05), np.arange(80) * 0.05, _u(), return_x=True)
    assert resp.state_labels == ref.state_labels
    np.testing.assert_allclose(resp.y, ref.y, rtol=1e-12, atol=1e-14)


# 3 ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("method", ["zoh", "tustin", "foh"])
def test_m03_discretize_keeps_signal_names(method):
    ours = lt.discretize(G, 0.05, method)
    ref = ct.sample_system(G, 0.05, method)
    assert ours.input_labels == ref.input_labels == ["force"]
    assert ours.output_labels == ref.output_labels == ["position"]
    assert ours.state_labels == ref.state_labels == ["pos", "vel"]
    assert ours.name == ref.name == "G$sampled"


# 4 ------------------------------------------------------------------------------------------
def test_m04_discretize_gives_back_a_statespace_for_a_statespace():
    ours = lt.discretize(G, 0.05)
    assert type(ours) is ct.StateSpace
    assert type(lt.discretize(lt.LDS.from_statespace(G), 0.05)) is lt.LDS
    assert isinstance(lt.LDS.from_statespace(G), ct.StateSpace)


# 5 ------------------------------------------------------------------------------------------
def test_m05_python_control_functions_take_an_lds():
    """``ct.poles(lds)`` raised ``'LDS' object has no attribute 'poles'``; so did bode,
    feedback and forced_response."""
    sysd = lt.discretize(lt.LDS.from_statespace(G), 0.05)
    ref = ct.sample_system(G, 0.05)
    np.testing.assert_allclose(np.sort_complex(ct.poles(sysd)), np.sort_complex(ct.poles(ref)),
                               rtol=1e-12)
    w = np.logspace(-1, 1.5, 20)
    np.testing.assert_allclose(ct.frequency_response(sysd, w).complex,
                               ct.frequency_response(ref, w).complex, rtol=1e-12)
    np.testing.assert_allclose(ct.feedback(sysd, 2.0).A, ct.feedback(ref, 2.0).A, rtol=1e-12)
    T = np.arange(80) * 0.05
    np.testing.assert_allclose(ct.forced_response(sysd, T, _u()).y,
                               ct.forced_response(ref, T, _u()).y, rtol=1e-12, atol=1e-14)
    cplt = ct.bode_plot(sysd, w)
    matplotlib.pyplot.close(cplt.figure)


# 6 ------------------------------------------------------------------------------------------
def test_m06_first_order_hold():
    ours = lt.discretize(G, 0.05, "foh")
    ref = ct.sample_system(G, 0.05, "foh")
    for m in "ABCD":
        np.testing.assert_allclose(getattr(ours, m), getattr(ref, m), rtol=1e-12, atol=1e-15)
    # foh is exact for inputs linear between samples: a ramp u(t) = t against the continuous
    # response to the same input (python-control's forced_response interpolates linearly)
    T = np.arange(41) * 0.05
    exact = ct.forced_response(G, T, T)               # python-control interpolates linearly
    np.testing.assert_allclose(lt.simulate(ours, T).y[:, 0], exact.y[0], rtol=0, atol=1e-12)


# 7 ------------------------------------------------------------------------------------------
def test_m07_matched_pole_zero():
    plant = ct.ss(ct.tf([1.0, 3.0], [1.0, 3.0, 2.0]))
    ours = lt.discretize(plant, 0.1, "matched")
    ref = ct.sample_system(ct.tf([1.0, 3.0], [1.0, 3.0, 2.0]), 0.1, "matched")
    np.testing.assert_allclose(np.sort(ct.poles(ours).real), np.exp([-0.2, -0.1]), rtol=1e-12)
    np.testing.assert_allclose(ct.zeros(ours).real, np.exp(-3.0 * 0.1), rtol=1e-12)
    np.testing.assert_allclose(ct.dcgain(ours), ct.dcgain(plant), rtol=1e-12)
    z = np.exp(1j * np.array([0.1, 0.7, 2.0]))
    np.testing.assert_allclose(ours(z).ravel(), ref(z).ravel(), rtol=1e-12)


# 8 ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dt", [0.05, True])
def test_m08_impulse_response_unit_area_convention(dt):
    """Our Markov parameters and python-control's impulse response differed by exactly dt
    (its pulse has area 1); ``convention="control"`` gives python-control's numbers."""
    sysd = lt.LDS([[0.9, 0.1], [0.0, 0.5]], [[1.0], [0.5]], [[1.0, -1.0]], [[0.3]], dt=dt)
    step = 1.0 if dt is True else dt
    ref = ct.impulse_response(sysd, np.arange(20) * step)
    ours = sysd.impulse_response(20, convention="control")
    np.testing.assert_allclose(ours[:, 0, 0], ref.outputs, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(sysd.impulse_response(20) / step, ours, rtol=1e-15)


# 9 ------------------------------------------------------------------------------------------
def test_m09_one_dimensional_input_for_a_single_input_system():
    sysd = ct.c2d(G, 0.05)
    np.testing.assert_array_equal(lt.simulate(sysd, _u()).y, lt.simulate(sysd, _u()[:, None]).y)
    mimo = lt.LDS(np.eye(2) * 0.5, np.eye(2), np.eye(2), dt=1.0)
    with pytest.raises(ValueError, match="single-input systems only"):
        lt.simulate(mimo, _u())


# 10 -----------------------------------------------------------------------------------------
def test_m10_lyapunov_with_a_non_symmetric_right_hand_side():
    """Refused before (``M must be symmetric``). scipy solves it; python-control 0.10.2 refuses
    it too (the issue's report that it accepts one was checked and is wrong)."""
    import scipy.linalg

    A = np.array([[-1.0, 2.0], [0.0, -3.0]])
    Q = np.array([[1.0, 4.0], [0.0, 2.0]])
    X = continuous_lyapunov(A, Q, convention="control")          # A X + X Aᵀ + Q = 0
    np.testing.assert_allclose(A @ X + X @ A.T + Q, 0, atol=1e-13)
    np.testing.assert_allclose(X, scipy.linalg.solve_continuous_lyapunov(A, -Q), rtol=1e-12)
    Xd = discrete_lyapunov(0.3 * A, Q, convention="control")     # A X Aᵀ - X + Q = 0
    np.testing.assert_allclose(0.09 * A @ Xd @ A.T - Xd + Q, 0, atol=1e-13)
    with pytest.raises(ct.ControlArgument, match="symmetric"):
        ct.lyap(A, Q)


# 11 -----------------------------------------------------------------------------------------
def test_m11_layer_export_runs_in_python_control():
    """``ct.forced_response(layer.to_lds(), ...)`` gave 23.5 % error (the S4 recursion's
    matrices read with the standard one)."""
    torch = pytest.importorskip("torch")
    from lds_toolkit.neural import S4

    layer = S4(2, 8, dt_min=0.05, dt_max=0.5, seed=0).double()
    u = np.random.default_rng(1).standard_normal((100, 2))
    with torch.no_grad():
        ref = layer.ssm(torch.from_numpy(u)[None]).numpy()[0]
    resp = ct.forced_response(layer.to_lds(), np.arange(100.0), u.T)
    np.testing.assert_allclose(resp.y.T, ref, rtol=0, atol=1e-8 * np.abs(ref).max())
    with pytest.raises(TypeError, match="StateSpace"):
        ct.forced_response(layer.s4_recursion(), np.arange(100.0), u.T)


# findings that came with them ---------------------------------------------------------------
def test_python_control_test_signal_names_passes():
    """python-control's own timeresp_test::test_signal_names failed with the toolkit
    substituted; the peer suite (tests/interop/peer) runs it, here it is directly."""
    sysd = ct.c2d(G, 0.05)
    resp = lt.simulate(sysd, _u()[:, None]).to_time_response()
    ref = ct.forced_response(sysd, np.arange(80) * 0.05, _u())
    assert resp.input_labels == ref.input_labels and resp.output_labels == ref.output_labels


def test_learners_follow_rivers_contract_cold():
    rng = np.random.default_rng(0)
    u, y = rng.standard_normal((50, 1)), rng.standard_normal((50, 1))
    cold = SpectralFiltering(horizon=50, k=4, lr=0.05)
    assert cold.predict_one(u[0]) == 0.0
    preds = []
    for u_t, y_t in zip(u, y):
        preds.append(cold.predict_one(float(u_t[0])))
        cold.learn_one(float(u_t[0]), float(y_t[0]))
    batch = SpectralFiltering(horizon=50, k=4, lr=0.05).fit_predict(u, y)
    np.testing.assert_allclose(preds, batch[:, 0], rtol=0, atol=1e-12)
