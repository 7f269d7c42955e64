r"""Online learners of the length-generalization paper and their baselines.

Time-index convention (the paper's eq. 4 and the sentence below its eq. 1).  Arrays ``u[t]``,
``y[t]``, t = 0..n-1, are the paper's u_t, y_t.  At step t the learner receives u_t, predicts
y_t, then sees y_t; the prediction of y_t uses inputs strictly before t.  The data the
algorithms are built for (``simulate(..., output="lengen")``) have
y_{t+1} = sum_{l>=0} C A^l B u_{t-l} + D u_t: u_{t-1} reaches y_t with coefficient C B + D.

* Algorithm 1 (eq. 4), :class:`SpectralFiltering`::

      yhat_t = y_{t-1} + sum_{i=1}^{k} M_i sum_{j=0}^{L-1} sigma_i^{1/4} phi_i[j] u_{t-1-j}

  i.e. tap ``phi_i[0]`` multiplies u_{t-1} (the columns of u_{(t-1):(t-L)} are
  u_{t-1}, ..., u_{t-L}); (sigma_i, phi_i) are the top-k eigenpairs of H_T and only the first
  L taps of the length-T filters are used (zero-padded history before t = 0).  With D = 0,
  y_t - y_{t-1} has coefficient C B on u_{t-1} and C A^{j-1}(A - I) B on u_{t-1-j} (j >= 1):
  per eigenvalue a of A, the impulse (1, -(1-a), -(1-a)a, -(1-a)a^2, ...), a spike at tap 0
  minus a shifted mu_a of eq. 3.

* Algorithm 2, :class:`SpectralFilteringAR2`::

      yhat_t = 2 y_{t-1} - y_{t-2} + M_1 u_{t-1} + M_2 u_{t-2}
               + sum_{i=3}^{k} M_i sum_{j=0}^{L-3} sigma~_{i-2}^{1/4} phi~_{i-2}[j] u_{t-3-j}

  with (sigma~, phi~) the top k-2 eigenpairs of N_{T-2}.  The paper writes sigma~_i, phi~_i
  for i = 3..k; read literally that would drop the two leading eigenvectors of N_{T-2} (the
  ones that carry the long memory), so we pair M_3..M_k with phi~_1..phi~_{k-2}: k parameter
  matrices in total, as in Algorithm 1.  With a noiseless LDS and D = 0, the second
  difference y_t - 2y_{t-1} + y_{t-2} has coefficient C B on u_{t-1} (M_1), C (A - 2I) B on
  u_{t-2} (M_2) and C A^j (A - I)^2 B on u_{t-3-j}: per eigenvalue a, (1-a)^2 a^j, exactly
  the vector mu~_a that N_T is built from (eq. 5), tap for tap.  (Under eq. 1 read
  literally, y_{t+1} = C x_t, every coefficient moves one tap later: M_1's true value is 0
  and the filters must represent a shifted mu~_a; see ``docs/index.md``, errata.)

Values before t = 0 (y_{-1}, y_{-2}, u_{-1}, ...) are 0.  The loss is
l_t(M) = ||yhat_t - y_t||^2; online gradient descent (OGD) updates::

    M_i <- Pi_r( M_i - eta_t * 2 (yhat_t - y_t) x_{t,i}^T ),   Pi_r(M) = M min(1, r / ||M||_F)

where x_{t,i} in R^{d_in} is the filtered input of block i and eta_t is the t-th step size
(t counted from 1): ``"constant"`` eta_t = lr, ``"inv_sqrt"`` eta_t = lr / sqrt(t),
``"normalized"`` eta_t = lr / (sqrt(t) max_{s<=t} ||x_s||_F^2) (scale-free, stable on unscaled
streams; :mod:`lds_toolkit.learning._online`).

Two interfaces give the same numbers (to round-off): streaming with river's contract,
``predict_one(u_t)`` (the prediction of y_t; it changes nothing) then ``learn_one(u_t, y_t)``
(the update), which works on a cold learner (the first ``learn_one`` sizes d_in and d_out;
values may be numbers, 1-D arrays or river's dicts, read by name), and batch ``fit_predict(u, y)``
(features by FFT convolution, the OGD loop in numba), which also leaves the streaming state
at the end of the stream.  Data from :func:`lds_toolkit.systems.simulate` with
``output="lengen"`` follow this convention (with D = 0 it is the same as ``"standard"``).

The machinery shared by every learner (streaming, batch, step sizes) is in
:mod:`lds_toolkit.learning._online`; river's own estimators (``river.base.Regressor``) with
the same numbers are in :mod:`lds_toolkit.learning.river`.
"""

from __future__ import annotations

import math

import numpy as np

from .._pickle_systems import pickled_system, unpickled_system
from .._validation import check_choice, check_fits_in_memory, check_int
from ._lds_route import FILTER_ROUTES, choose_route
from ._online import (
    LR_SCHEDULES,
    LearnerDivergedError,
    OnlineLearner,
    as_streams,
    as_vector,
    check_positive,
    checked_design,
)
from ._signals import SignalCodec
from .filters import spectral_filters

__all__ = [
    "OnlineLearner",
    "SpectralFiltering",
    "SpectralFilteringAR2",
    "LastValue",
    "LDSOracle",
    "BestInHindsight",
    "LearnerDivergedError",
    "LR_SCHEDULES",
]


class _SpectralBase(OnlineLearner):
    _param_names = ("horizon", "k", "context", "radius", "lr", "lr_schedule",
                    "filter_precision", "filters")
    _min_context = 1
    _min_k = 1
    _kind = "H"
    _delays = 0  # leading pure-delay columns (Algorithm 2: M_1 u_{t-1}, M_2 u_{t-2})

    def __init__(self, horizon: int = 2**14, k: int = 24, context: int | None = None,
                 radius: float = math.inf, lr: float = 1e-2, lr_schedule: str = "inv_sqrt",
                 filter_precision: str = "double", filters: str = "auto"):
        self.horizon = horizon
        self.k = k
        self.context = context
        self.radius = radius
        self.lr = lr
        self.lr_schedule = lr_schedule
        self.filter_precision = filter_precision
        self.filters = filters

    def _streaming_bank(self):
        """The LDS route for the steps: ``filters="lds"``, or ``"auto"`` where it pays
        (:func:`~lds_toolkit.learning._lds_route.choose_route`)."""
        return self._route_bank(batch=False)

    def _batch_bank(self):
        """The LDS route for the batch path: ``filters="lds"`` only (``"auto"`` batches
        exactly: the FFT features are both exact and cheap there)."""
        return self._route_bank(batch=True)

    def _route_bank(self, batch: bool):
        T, k, L = self._check_common()
        filters = check_choice("filters", self.filters, FILTER_ROUTES)
        if filters == "exact" or (batch and filters == "auto"):
            return None
        return choose_route(self, T, k, L, filters)

    def _lazy_bank(self) -> bool:
        # "auto": the streaming bank is chosen at the first step, not in reset (fit_predict
        # batches exactly and should not pay for it); "lds" builds it at once (errors early)
        return self.filters == "auto"

    @property
    def context_length(self) -> int:
        """L (the horizon T when ``context`` is None)."""
        return self.horizon if self.context is None else self.context

    def _check_common(self):
        T = check_int("horizon", self.horizon, max(self._min_context, 1))
        check_int("k", self.k, self._min_k)
        if self.k > T:
            raise ValueError(f"k must be <= {T} for horizon={T} "
                             f"({type(self).__name__}), got {self.k}")
        L = self.context_length
        check_int("context", L, self._min_context, T)
        check_choice("filter_precision", self.filter_precision, ("double", "extended"))
        check_choice("filters", self.filters, FILTER_ROUTES)
        check_fits_in_memory("horizon", T, 8.0 * T * self.k,
                             f"the (horizon, k={self.k}) float64 spectral filters alone")
        return T, int(self.k), L

    def _check_params(self) -> tuple[int, int]:
        _, k, L = self._check_common()
        self._radius()
        self._lr()
        return L, k  # taps (L, k): Algorithm 2's k counts its two delay columns

    def _radius(self):
        return check_positive("radius", self.radius, allow_inf=True)

    def _lr(self):
        lr = check_positive("lr", self.lr)
        return lr, check_choice("lr_schedule", self.lr_schedule, LR_SCHEDULES)


class SpectralFiltering(_SpectralBase):
    """Algorithm 1: spectral filtering with limited context (eq. 4), trained by projected OGD.

    Parameters
    ----------
    horizon : int
        T, the length of the filters (top-k eigenvectors of H_T).
    k : int
        Number of filters (1 <= k <= T).
    context : int or None
        Context length L (1 <= L <= T): the first L taps of the length-T filters; None = T
        (the full-context learner).
    radius : float
        r of K_r = {M : ||M_i||_F <= r for all i}; ``np.inf`` disables the projection.
    lr : float
        Base step size.
    lr_schedule : {"inv_sqrt", "constant", "normalized"}
        eta_t = lr / sqrt(t), eta_t = lr, or eta_t = lr / (sqrt(t) max_{s<=t} ||x_s||_F^2),
        scale-free and stable on unscaled streams with lr <= 1 (t = 1, 2, ... counts updates).
    filter_precision : {"double", "extended"}
        Arithmetic of the filters (:func:`~lds_toolkit.learning.spectral_filters`):
        ``"extended"`` resolves filters below the float64 floor (paid once per (T, k), cached).
    filters : {"auto", "exact", "lds"}
        The route of the features.  ``"exact"``: the L taps (FFT in ``fit_predict``, a window
        of the last L inputs per streaming step, O(L k d)).  ``"lds"``: the filters as the
        impulse responses of a small diagonal LDS (:func:`~lds_toolkit.filters_as_lds`,
        relative error <= 1e-6 per filter), the window of L taps kept exactly by the
        recursion w_{t+1} = A w_t + B u_{t-1} - A^{L-1} B u_{t-L} (w_t = x_t - A^{L-1}
        x_{t-L+1}), O(n k d) per step whatever t, T and L, in both paths.  ``"auto"``:
        ``fit_predict`` exact; the streaming steps through the LDS when the context is at
        least 256 and the LDS step costs at most half the window's multiply-adds
        (:mod:`lds_toolkit.learning._lds_route`); streamed and batch numbers then agree to
        the realization's tolerance (measured within 1e-6 relative RMS), not to round-off.

    Notes
    -----
    See the module docstring for the exact prediction and index convention.
    """

    def _setup(self):
        T, k, L = self._check_common()
        sigma, phi = spectral_filters(T, k, "H", precision=self.filter_precision)
        taps = phi[:L] * np.sqrt(np.sqrt(np.abs(sigma)))[None, :]
        return np.ascontiguousarray(taps), (1.0,)


class SpectralFilteringAR2(_SpectralBase):
    """Algorithm 2: two autoregressive terms, M_1 u_{t-1} + M_2 u_{t-2}, filters of N_{T-2}.

    Parameters are those of :class:`SpectralFiltering`; ``k >= 3`` counts all parameter
    matrices (M_1, M_2 and k - 2 filters of N_{T-2}), context ``L >= 3`` (the filters see
    u_{t-3}, ..., u_{t-L}: L - 2 taps), horizon ``T >= k``.
    """

    _min_context = 3
    _min_k = 3
    _kind = "N"
    _delays = 2

    def _setup(self):
        T, k, L = self._check_common()
        sigma, phi = spectral_filters(T - 2, k - 2, "N", precision=self.filter_precision)
        taps = np.zeros((L, k))
        taps[0, 0] = 1.0  # M_1 u_{t-1}
        taps[1, 1] = 1.0  # M_2 u_{t-2}
        taps[2:, 2:] = phi[: L - 2] * np.sqrt(np.sqrt(np.abs(sigma)))[None, :]
        return taps, (2.0, -1.0)


class LastValue(OnlineLearner):
    """Trivial baseline yhat_t = y_{t-1} (y_{-1} = 0); nothing is learned."""

    _param_names = ()
    _learns = False

    def _setup(self):
        return np.zeros((1, 0)), (1.0,)


class LDSOracle(OnlineLearner):
    """The true system's prediction: yhat_t = C x_t + D u_{t-1}, x_t = A x_{t-1} + B u_{t-1}.

    The length-generalization paper's reading (``simulate(..., output="lengen")``): the
    coefficient of u_{t-1-l} in y_t is C A^l B (l >= 0) and D multiplies u_{t-1}.  ``x_0 = x0``
    (zeros by default), u_{-1} = 0, so yhat_0 = C x_0.  On noiseless data from
    ``simulate(system, u, x0, output="lengen")`` its loss is 0 up to round-off.  Nothing is
    learned.

    Streaming values that are dicts are read by the system's signal names: the keys of ``x``
    are its ``input_labels`` (a missing input counts as 0, any other key is refused), those of
    dict targets its ``output_labels``.

    Parameters
    ----------
    system : lds_toolkit.systems.LDS or control.StateSpace
        Discrete-time system.
    x0 : array_like, shape (n,), optional
        Initial state x_0.
    """

    _param_names: tuple[str, ...] = ("system", "x0")
    _learns = False

    def __init__(self, system, x0=None):
        self.system = system
        self.x0 = x0

    def _check_system(self):
        from ..systems.lds import require_discrete

        system = require_discrete(self.system, "system")  # an LDS or a control.StateSpace
        n = system.n_states
        x0 = np.zeros(n) if self.x0 is None else as_vector("x0", self.x0, n)
        return system, x0

    def _setup(self):
        return np.zeros((1, 0)), ()

    def reset(self, d_in, d_out):
        system, x0 = self._check_system()
        if (d_in, d_out) != (system.n_inputs, system.n_outputs):
            raise ValueError(f"the system has d_in={system.n_inputs}, d_out={system.n_outputs}; "
                             f"got d_in={d_in}, d_out={d_out}")
        super().reset(d_in, d_out)
        self._lds = system  # the checked LDS (a TransferFunction realised once)
        self._state = x0.copy()  # x_t at step t (before u_t arrives)
        self._u_prev = np.zeros(d_in)  # u_{t-1}
        return self

    def _cold_dims(self):
        system, _ = self._check_system()
        return system.n_inputs, system.n_outputs

    def _make_codecs(self):
        # dict values by the system's signal names: u_t's keys are its input_labels (a missing
        # input counts as 0, another key is refused), y_t's its output_labels
        system, _ = self._check_system()
        return (SignalCodec("x", "u_t", names=system.input_labels),
                SignalCodec("y", "y_t", names=system.output_labels, missing="refuse"))

    def _predict_now(self):
        s = self._lds
        return np.zeros((0, self.d_in_)), s.C @ self._state + s.D @ self._u_prev

    def _learn_step(self, u_t, y_t):
        x, pred = self._predict_now()
        self._advance(u_t, y_t, x, pred)

    def _advance(self, u_t, y_t, x, pred):
        s = self._lds
        self._state = s.A @ self._state + s.B @ u_t  # x_{t+1}
        self._u_prev = u_t
        self.n_updates_ += 1

    def __getstate__(self):
        # python-control's StateSpace holds closures and does not pickle (river's model
        # saving pickles the learner): a plain one travels as its matrices and names
        state = self.__dict__.copy()
        state["system"] = pickled_system(state.get("system"))
        return state

    def __setstate__(self, state):
        state = dict(state)
        state["system"] = unpickled_system(state.get("system"))
        self.__dict__.update(state)

    def fit_predict(self, u, y, *, design=None):
        from ..systems import simulate

        if design is not None:
            raise ValueError("LDSOracle has no features: design must be None")
        system, x0 = self._check_system()
        u, y = as_streams(u, y, system.n_inputs, system.n_outputs)
        self.reset(u.shape[1], y.shape[1])
        res = simulate(system, u, x0=x0, output="lengen", return_states=False)
        pred = res.y
        self.losses_ = np.sum((pred - y) ** 2, axis=1)
        self.n_updates_ = u.shape[0]
        # continue after the stream: x_n and u_{n-1}
        self._state = res.final_state.copy()
        self._u_prev = u[-1].copy()
        self._codecs[0].kind = self._codecs[1].kind = "array"
        return pred


class BestInHindsight(OnlineLearner):
    """The best fixed predictor of a learner's class over K_r, chosen knowing the whole stream.

    ``fit_predict(u, y)`` solves, exactly (certified duality gap, see ``solution_``)::

        min_{M in K_r}  sum_t || base_t + sum_i M_i x_{t,i} - y_t ||^2

    with the features x and autoregressive part ``base`` of ``template`` (e.g. Algorithm 1
    with context L: the class Pi_L of eq. 4 predictors), and returns that fixed predictor's
    predictions.  Afterwards ``predict_one``/``learn_one`` continue with the same fixed M.

    Parameters
    ----------
    template : SpectralFiltering, SpectralFilteringAR2 or LastValue
        Defines the predictor class (features, AR terms, horizon).
    context : int or None
        Context length L of the class; None keeps the template's.
    radius : float or None
        r of K_r; None keeps the template's ``radius``.
    tol : float
        Certified relative optimality gap required of the solver.
    """

    _param_names = ("template", "context", "radius", "tol")
    _learns = False

    def __init__(self, template, context=None, radius=None, tol=1e-10):
        self.template = template
        self.context = context
        self.radius = radius
        self.tol = tol

    def _class(self):
        if not isinstance(self.template, OnlineLearner) or isinstance(
                self.template, (LDSOracle, BestInHindsight)):
            raise TypeError("template must be a SpectralFiltering, SpectralFilteringAR2 or "
                            f"LastValue instance, got {self.template!r}")
        if self.context is not None and "context" in self.template._param_names:
            return self.template._copy_with(context=self.context)
        return self.template._copy_with()

    def _setup(self):
        return self._class()._setup()

    def _radius(self):
        if self.radius is None:
            return self._class()._radius()
        return check_positive("radius", self.radius, allow_inf=True)

    def design(self, u, y):
        return self._class().design(u, y)

    def _streaming_bank(self):
        return self._class()._streaming_bank()  # the template's route, in the steps too

    def _lazy_bank(self) -> bool:
        return self._class()._lazy_bank()

    def reset(self, d_in, d_out):
        fitted = getattr(self, "_solved", None)
        super().reset(d_in, d_out)
        if fitted is not None and fitted.shape == self.coef_.shape:
            self.coef_ = fitted.copy()
        return self

    def fit_predict(self, u, y, *, design=None):
        from ._hindsight import AugmentedQR, solve_block_ball_lsq

        u, y = as_streams(u, y)
        if design is None:
            X, base = self.design(u, y)
        else:
            X, base = checked_design(design, u.shape[0], self._setup()[0].shape[1],
                                      u.shape[1], y.shape[1])
        n, m, d_in = X.shape
        d_out = y.shape[1]
        radius = self._radius()
        tol = check_positive("tol", self.tol)
        qr = AugmentedQR(m * d_in, d_out).update(X.reshape(n, m * d_in), y - base)
        sol = solve_block_ball_lsq(*qr.parts(), m, d_in, radius, tol=tol)
        self.solution_ = sol
        self._solved = np.ascontiguousarray(
            sol.W.reshape(m, d_in, d_out).transpose(0, 2, 1))  # M_i = W_i^T
        self.reset(d_in, d_out)
        return self._run_stream(u, y, X, base)  # the fixed M on the features already built
