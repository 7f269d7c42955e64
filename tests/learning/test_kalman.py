"""The stationary Kalman predictor: its gain against python-control's dlqe and the limit of
the time-varying Riccati recursion, its loss against trace(S), batch against streaming, the
noiseless case against LDSOracle, and its refusals."""

from __future__ import annotations

import control
import numpy as np
import pytest

import lds_toolkit as lt
from lds_toolkit.learning import KalmanPredictor, LDSOracle, stationary_kalman

A = np.array([[0.9, 0.2, 0.0], [0.0, 0.8, 0.1], [0.0, 0.0, -0.5]])
B = np.array([[1.0], [0.5], [1.0]])
C = np.array([[1.0, 0.0, 1.0]])


def _system(D=0.0):
    return lt.LDS(A, B, C, [[D]], dt=1)


def test_gain_is_dlqe_and_the_limit_of_the_riccati_recursion():
    Q = np.diag([0.1, 0.2, 0.05])
    R = 0.5
    gain = stationary_kalman(_system(), Q, R)
    L, P, E = control.dlqe(A, np.eye(3), C, Q, [[R]])
    np.testing.assert_allclose(gain.L, L, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(gain.P, P, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(np.sort_complex(gain.poles), np.sort_complex(E), atol=1e-10)
    Pt = np.zeros((3, 3))  # the time-varying filter from a known state: P_0 = 0
    for _ in range(500):
        S = C @ Pt @ C.T + R
        Lt = A @ Pt @ C.T / S
        Pt = A @ Pt @ A.T + Q - Lt @ S @ Lt.T
    np.testing.assert_allclose(gain.P, Pt, rtol=1e-10)
    np.testing.assert_allclose(gain.L, A @ Pt @ C.T / (C @ Pt @ C.T + R), rtol=1e-9)
    assert gain.expected_loss == pytest.approx((C @ gain.P @ C.T).item() + R)


def test_mean_loss_is_trace_S_and_no_worse_than_the_oracle():
    system = _system()
    rng = np.random.default_rng(0)
    T = 40_000
    u = rng.standard_normal((T, 1))
    y = lt.simulate(system, u, process_noise=np.sqrt(0.1), obs_noise=np.sqrt(0.5),
                    output="lengen", rng=1).y
    kp = KalmanPredictor(system, 0.1, 0.5)
    kp.fit_predict(u, y)
    expected = stationary_kalman(system, 0.1, 0.5).expected_loss
    # the losses are S chi^2_1 draws, correlated only through the start: 3 % is > 5 sigma
    assert kp.losses_[100:].mean() == pytest.approx(expected, rel=0.03)
    oracle = LDSOracle(system)
    oracle.fit_predict(u, y)
    assert oracle.losses_[100:].mean() > 1.2 * expected  # the open-loop model loses more
    e = (y - kp.fit_predict(u, y))[100:, 0]  # innovations are white
    assert abs(np.corrcoef(e[1:], e[:-1])[0, 1]) < 0.02


def test_batch_equals_streaming_with_D():
    system = _system(D=0.7)
    rng = np.random.default_rng(3)
    u = rng.standard_normal((300, 1))
    y = lt.simulate(system, u, process_noise=0.3, obs_noise=0.4, output="lengen", rng=4).y
    kp = KalmanPredictor(system, 0.09, 0.16, x0=[0.1, 0.0, -0.2])
    pred = kp.fit_predict(u, y)
    stream = KalmanPredictor(system, 0.09, 0.16, x0=[0.1, 0.0, -0.2])
    got = []
    for t in range(300):
        got.append(stream.predict_one(u[t]))
        stream.learn_one(u[t], y[t])
    np.testing.assert_allclose(got, pred[:, 0], rtol=1e-10, atol=1e-12)
    # and the batch leaves the streaming state at the end of the stream
    np.testing.assert_allclose(kp.predict_one(0.0), stream.predict_one(0.0), rtol=1e-10)


def test_without_process_noise_it_is_the_oracle():
    system = _system(D=0.3)
    rng = np.random.default_rng(5)
    u = rng.standard_normal((200, 1))
    y = lt.simulate(system, u, obs_noise=0.5, output="lengen", rng=6).y
    np.testing.assert_allclose(KalmanPredictor(system, 0.0, 0.25).fit_predict(u, y),
                               LDSOracle(system).fit_predict(u, y), atol=1e-12)


@pytest.mark.parametrize("kwargs, match", [
    ({"process_cov": 0.1, "obs_cov": 0.0}, "obs_cov must be positive definite"),
    ({"process_cov": -0.1, "obs_cov": 1.0}, "process_cov must be positive semi-definite"),
    ({"process_cov": np.eye(2), "obs_cov": 1.0}, r"process_cov must be a number or a \(3, 3\)"),
    ({"process_cov": 0.1, "obs_cov": [[1.0, 2.0], [0.0, 1.0]]}, r"obs_cov must be a number or"),
    ({"process_cov": np.triu(np.ones((3, 3))), "obs_cov": 1.0}, "process_cov must be symmetric"),
    ({"process_cov": 0.1, "obs_cov": float("nan")}, "obs_cov must be finite"),
])
def test_bad_covariances_are_refused(kwargs, match):
    with pytest.raises(ValueError, match=match):
        stationary_kalman(_system(), **kwargs)


def test_undetectable_unstable_mode_is_refused():
    system = lt.LDS([[1.5, 0.0], [0.0, 0.5]], [[1.0], [1.0]], [[0.0, 1.0]], dt=1)
    with pytest.raises(ValueError, match="detectable"):
        stationary_kalman(system, 1.0, 1.0)


def test_kalman_predict_with_a_gain_of_ones_own():
    """Any gain: against the predictor's recursion written out step by step."""
    system = _system(D=0.4)
    rng = np.random.default_rng(8)
    u, y = rng.standard_normal((50, 1)), rng.standard_normal((50, 1))
    L = np.array([[0.3], [-0.1], [0.2]])
    s, u_prev, want = np.array([0.5, 0.0, 0.1]), np.zeros(1), []
    for t in range(50):
        yhat = C @ s + 0.4 * u_prev
        want.append(yhat)
        s = A @ s + B @ u[t] + L @ (y[t] - yhat)
        u_prev = u[t]
    got = lt.learning.kalman_predict(system, L, u, y, x0=[0.5, 0.0, 0.1])
    np.testing.assert_allclose(got, np.array(want), rtol=1e-12, atol=1e-12)
    with pytest.raises(ValueError, match=r"L must be a finite \(3, 1\) gain"):
        lt.learning.kalman_predict(system, L.T, u, y)
