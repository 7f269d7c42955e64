r"""The stationary Kalman predictor: the optimal one-step predictor of a noisy LDS.

The stream (the ``"lengen"`` convention of :func:`lds_toolkit.systems.simulate`, with its
noise)::

    s_{t+1} = A s_t + B u_t + w_t,        w_t ~ N(0, Q)
    y_t     = C s_t + D u_{t-1} + v_t,    v_t ~ N(0, R)      (u_{-1} = 0)

with independent white Gaussian w_t, v_t. Among all predictors of y_t from u_{<t}, y_{<t}
the one with the least expected squared error is ``E[y_t | u_{<t}, y_{<t}]``, computed by the
Kalman filter. Its error covariance tends to the stabilising solution P of the discrete
algebraic Riccati equation (the filter's DARE, the dual of LQR's)::

    P = A P Aᵀ + Q - A P Cᵀ (C P Cᵀ + R)^{-1} C P Aᵀ

and the *stationary* predictor uses its limit gain ``L = A P Cᵀ S^{-1}``,
``S = C P Cᵀ + R``::

    yhat_t      = C shat_t + D u_{t-1}
    shat_{t+1}  = A shat_t + B u_t + L (y_t - yhat_t)

(python-control's ``dlqe(A, I, C, Q, R)`` returns this L and P). In steady state the
innovation ``y_t - yhat_t`` is white with covariance S, so the expected loss per step is
``trace(S)``: no predictor, learnt or not, does better on average, which makes it the
comparator of the regret in lesson 9. The predictor starts from ``shat_0 = x0`` with the
stationary gain; the exact filter from a known ``s_0`` (P_0 = 0) would use smaller gains for
the first few steps (P_t grows to P), so early on the stationary predictor can lose slightly
more than the optimum.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._typing import ArrayLike, SystemLike
from ._online import as_streams
from .learners import LDSOracle

__all__ = ["KalmanGain", "KalmanPredictor", "kalman_predict", "stationary_kalman"]


@dataclass(frozen=True)
class KalmanGain:
    """The stationary Kalman predictor of a system (:func:`stationary_kalman`).

    Attributes
    ----------
    L : ndarray (n, d_out)
        Predictor gain ``A P Cᵀ S^{-1}``.
    P : ndarray (n, n)
        Stationary covariance of the state prediction error ``s_t - shat_t`` (the DARE's
        stabilising solution).
    S : ndarray (d_out, d_out)
        Innovation covariance ``C P Cᵀ + R``; ``trace(S)`` is the expected loss per step.
    poles : ndarray (n,)
        Eigenvalues of ``A - L C``, the predictor's own dynamics (inside the unit disc).
    """

    L: np.ndarray
    P: np.ndarray
    S: np.ndarray
    poles: np.ndarray

    @property
    def expected_loss(self) -> float:
        """``trace(S)``: the stationary expected squared prediction error per step."""
        return float(np.trace(self.S))


def _covariance(name: str, value, size: int, definite: bool) -> np.ndarray:
    """A symmetric (size, size) covariance; a number q means q I. Positive definite when
    ``definite``, else semi-definite."""
    if isinstance(value, (int, float, np.integer, np.floating)):
        arr = float(value) * np.eye(size)
    else:
        arr = np.asarray(value, dtype=np.float64)
    if arr.ndim != 2 or arr.shape != (size, size):
        raise ValueError(f"{name} must be a number or a ({size}, {size}) covariance matrix, "
                         f"got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite, got {arr.tolist()}")
    if not np.allclose(arr, arr.T, rtol=1e-12, atol=1e-14 * max(1.0, np.abs(arr).max())):
        raise ValueError(f"{name} must be symmetric, got {arr.tolist()}")
    low = float(np.linalg.eigvalsh(arr)[0])
    scale = max(1.0, float(np.abs(arr).max()))
    if low <= 0 if definite else low < -1e-12 * scale:
        kind = "positive definite" if definite else "positive semi-definite"
        raise ValueError(f"{name} must be {kind}, got smallest eigenvalue {low:.3g}")
    return 0.5 * (arr + arr.T)


def stationary_kalman(system: SystemLike, process_cov: ArrayLike,
                      obs_cov: ArrayLike) -> KalmanGain:
    r"""The stationary Kalman predictor of ``system`` under noise covariances Q and R.

    Solves the filter's Riccati equation (module docstring) with
    ``scipy.linalg.solve_discrete_are(Aᵀ, Cᵀ, Q, R)`` (the LQR equation of the dual system)
    and returns ``L = A P Cᵀ (C P Cᵀ + R)^{-1}``.

    Parameters
    ----------
    system : lds_toolkit.systems.LDS or control.StateSpace
        Discrete-time system (A, C are used).
    process_cov : float or array_like (n, n)
        Q, the covariance of w_t (a number q means q I; ``simulate(..., process_noise=σ)``
        draws Q = σ² I). Positive semi-definite.
    obs_cov : float or array_like (d_out, d_out)
        R, the covariance of v_t; positive definite.

    Returns
    -------
    KalmanGain

    Raises
    ------
    ValueError
        A bad covariance, or a Riccati equation without a stabilising solution (the noise
        does not reach an unstable mode that C does not see: (A, C) not detectable).
    """
    import scipy.linalg as sla

    from ..systems.lds import require_discrete

    system = require_discrete(system, "system")
    A, C = np.asarray(system.A, float), np.asarray(system.C, float)
    Q = _covariance("process_cov", process_cov, A.shape[0], definite=False)
    R = _covariance("obs_cov", obs_cov, C.shape[0], definite=True)
    try:
        P = sla.solve_discrete_are(A.T, C.T, Q, R)
    except (np.linalg.LinAlgError, ValueError) as exc:
        raise ValueError("the filter's Riccati equation has no stabilising solution for "
                         f"this system and noise (is (A, C) detectable?): {exc}") from None
    P = 0.5 * (P + P.T)
    S = C @ P @ C.T + R
    L = np.linalg.solve(S, C @ P @ A.T).T  # A P Cᵀ S^{-1} (S symmetric)
    return KalmanGain(L=L, P=P, S=S, poles=np.linalg.eigvals(A - L @ C))


class KalmanPredictor(LDSOracle):
    """The stationary Kalman predictor as an online learner (nothing is learnt).

    ``yhat_t = C shat_t + D u_{t-1}``, then ``shat_{t+1} = A shat_t + B u_t + L (y_t -
    yhat_t)`` (module docstring), ``shat_0 = x0``. With ``process_cov = 0`` the gain is 0
    and it is :class:`LDSOracle`. Same interfaces as the other learners: ``fit_predict(u, y)``
    (``losses_`` per step) and river's ``predict_one``/``learn_one``.

    Parameters
    ----------
    system : lds_toolkit.systems.LDS or control.StateSpace
        The true discrete-time system.
    process_cov, obs_cov : float or array_like
        Q and R (:func:`stationary_kalman`).
    x0 : array_like (n,), optional
        The predictor's initial state estimate (zeros by default).
    """

    _param_names = ("system", "process_cov", "obs_cov", "x0")

    def __init__(self, system, process_cov, obs_cov, x0=None):
        super().__init__(system, x0)
        self.process_cov = process_cov
        self.obs_cov = obs_cov

    @property
    def gain(self) -> KalmanGain:
        """The stationary predictor of the current parameters (:func:`stationary_kalman`)."""
        return stationary_kalman(self.system, self.process_cov, self.obs_cov)

    def reset(self, d_in, d_out):
        super().reset(d_in, d_out)
        self._L = self.gain.L
        return self

    def _advance(self, u_t, y_t, x, pred):
        s = self.system
        self._state = s.A @ self._state + s.B @ u_t + self._L @ (y_t - pred)  # shat_{t+1}
        self._u_prev = u_t
        self.n_updates_ += 1

    def fit_predict(self, u, y, *, design=None):
        """The predictions yhat_t of a whole stream (``losses_`` per step), by
        :func:`kalman_predict` with the stationary gain."""
        if design is not None:
            raise ValueError("KalmanPredictor has no features: design must be None")
        system, x0 = self._check_system()
        u, y = as_streams(u, y, system.n_inputs, system.n_outputs)
        self.reset(u.shape[1], y.shape[1])
        pred, final = _predict(system, self._L, u, y, x0)
        self.losses_ = np.sum((pred - y) ** 2, axis=1)
        self.n_updates_ = u.shape[0]
        self._state = final
        self._u_prev = u[-1].copy()
        self._codecs[0].kind = self._codecs[1].kind = "array"
        return pred


def _predict(system, L, u, y, x0):
    """``(yhat, shat_T)``: the predictor as the LTI system ``shat_{t+1} = (A - L C) shat_t +
    B u_t + L z_t``, ``yhat_t = C shat_t + D u_{t-1}``, ``z_t = y_t - D u_{t-1}``, run by
    :func:`lds_toolkit.systems.simulate`."""
    from ..systems import LDS, simulate

    A, B, C, D = (np.asarray(m, float) for m in (system.A, system.B, system.C, system.D))
    u_prev = np.vstack([np.zeros((1, u.shape[1])), u[:-1]])
    z = y - u_prev @ D.T
    loop = LDS(A - L @ C, np.hstack([B, L]), C,
               np.zeros((C.shape[0], B.shape[1] + L.shape[1])), dt=1)
    res = simulate(loop, np.hstack([u, z]), x0=x0, output="standard", return_states=False)
    return res.y + u_prev @ D.T, res.final_state.copy()


def kalman_predict(system, L, u, y, x0=None) -> np.ndarray:
    """The one-step predictions ``yhat_t`` of the predictor with gain ``L`` on a stream.

    ``yhat_t = C shat_t + D u_{t-1}``, ``shat_{t+1} = A shat_t + B u_t + L (y_t - yhat_t)``,
    ``shat_0 = x0`` (zeros by default): :class:`KalmanPredictor` with a gain of one's own
    (``stationary_kalman(...).L`` gives the optimal one).

    Parameters
    ----------
    system : lds_toolkit.systems.LDS or control.StateSpace
        Discrete-time system.
    L : array_like (n, d_out)
        Predictor gain.
    u : array_like (T, d_in) or (T,)
    y : array_like (T, d_out) or (T,)
    x0 : array_like (n,), optional

    Returns
    -------
    ndarray (T, d_out)
    """
    from .._validation import as_float_array
    from ..systems.lds import require_discrete
    from ._online import as_vector

    system = require_discrete(system, "system")
    n, d_out = system.n_states, system.n_outputs
    L = as_float_array("L", L)
    if L.shape != (n, d_out) or not np.all(np.isfinite(L)):
        raise ValueError(f"L must be a finite ({n}, {d_out}) gain, got shape {L.shape}")
    u, y = as_streams(u, y, system.n_inputs, d_out)
    x0 = np.zeros(n) if x0 is None else as_vector("x0", x0, n)
    return _predict(system, L, u, y, x0)[0]
