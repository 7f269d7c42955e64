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
(t counted from 1): ``"constant"`` eta_t = lr, ``"inv_sqrt"`` eta_t = lr / sqrt(t).

Two interfaces give the same numbers (to round-off): streaming with river's contract,
``predict_one(u_t)`` (the prediction of y_t; it changes nothing) then ``learn_one(u_t, y_t)``
(the update), which works on a cold learner (the first ``learn_one`` sizes d_in and d_out;
values may be numbers, 1-D arrays or river's dicts), and batch ``fit_predict(u, y)``
(features by FFT convolution, the OGD loop in numba), which also leaves the streaming state
at the end of the stream.  Data from :func:`lds_toolkit.systems.simulate` with
``output="lengen"`` follow this convention (with D = 0 it is the same as ``"standard"``).
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from numbers import Real

import numpy as np

from .._validation import as_float_array, check_choice, check_fits_in_memory, check_int
from ._kernels import ar_part, lagged_features, ogd_loop
from ._river import SignalCodec
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

LR_SCHEDULES = ("constant", "inv_sqrt")


class LearnerDivergedError(FloatingPointError):
    """Raised when a prediction becomes non-finite; ``step`` is the time index t."""

    def __init__(self, step: int, what: str, cause: str | None = None):
        self.step = int(step)
        self.cause = cause
        super().__init__(f"{what}: the loss became non-finite at step t={step}; "
                         + (cause or "lower lr or use a finite radius"))


#: Entries beyond this make squared errors overflow float64 (its largest value is 1.8e308).
_HUGE = 1e150


def huge_stream_cause(t: int, **streams: np.ndarray) -> str | None:
    """Why a loss became non-finite at step ``t`` when the data are to blame: an entry of a
    stream (``u=..., y=...``, the steps up to t) beyond 1e150, whose square overflows float64
    whatever the step size; ``None`` when the data are moderate."""
    for name, arr in streams.items():
        big = float(np.max(np.abs(arr), initial=0.0))
        if big > _HUGE:
            return (f"the data are too large: max |{name}| up to t={t} is {big:.3g}, beyond "
                    f"{_HUGE:.0e}, where squared errors overflow float64 whatever the step "
                    f"size; scale u and y down (e.g. divide each by its standard deviation)")
    return None


def _as_stream(name: str, value, d_expected: int | None = None) -> np.ndarray:
    arr = as_float_array(name, value)
    if arr.ndim == 1:
        arr = arr[:, None]
    if arr.ndim != 2:
        raise ValueError(f"{name} must have shape (n, d) or (n,), got {arr.shape}")
    if arr.shape[0] < 1:
        raise ValueError(f"{name} must contain at least one time step, got shape {arr.shape}")
    if d_expected is not None and arr.shape[1] != d_expected:
        raise ValueError(f"{name} must have {d_expected} columns, got shape {arr.shape}")
    return arr


def _as_streams(u, y, d_in: int | None = None, d_out: int | None = None):
    """Validated streams ``u`` (n, d_in) and ``y`` (n, d_out) of the same length."""
    u = _as_stream("u", u, d_in)
    y = _as_stream("y", y, d_out)
    if u.shape[0] != y.shape[0]:
        raise ValueError(f"u and y must have the same number of time steps, got "
                         f"{u.shape[0]} and {y.shape[0]}")
    return u, y


def _as_vector(name: str, value, d: int) -> np.ndarray:
    arr = as_float_array(name, value)
    if arr.ndim == 0:
        arr = arr.reshape(1)
    if arr.shape != (d,):
        raise ValueError(f"{name} must have shape ({d},), got {arr.shape}")
    return arr


def _checked_design(design, n: int, m: int, d_in: int, d_out: int):
    """``(X, base)`` of a ``design=`` argument as float arrays of shapes (n, m, d_in) and
    (n, d_out), else an error naming what was expected."""
    if not isinstance(design, tuple) or len(design) != 2:
        raise TypeError(f"design must be the pair (X, base) that design(u, y) returns, got "
                        f"{type(design).__name__}")
    X, base = design
    if not (isinstance(X, np.ndarray) and X.dtype == np.float64 and X.shape == (n, m, d_in)):
        raise ValueError(f"design's X must be a float64 array of shape ({n}, {m}, {d_in}) "
                         f"(steps, filters, d_in), got {getattr(X, 'dtype', type(X))} "
                         f"{getattr(X, 'shape', '')}")
    if not (isinstance(base, np.ndarray) and base.dtype == np.float64
            and base.shape == (n, d_out)):
        raise ValueError(f"design's base must be a float64 array of shape ({n}, {d_out}), "
                         f"got {getattr(base, 'dtype', type(base))} {getattr(base, 'shape', '')}")
    return np.ascontiguousarray(X), np.ascontiguousarray(base)


def _check_positive(name, value, allow_inf=False):
    if isinstance(value, bool) or not isinstance(value, Real):
        raise TypeError(f"{name} must be a real number > 0, got {type(value).__name__} {value!r}")
    value = float(value)
    if not (value > 0) or (math.isinf(value) and not allow_inf) or math.isnan(value):
        extra = " (np.inf allowed)" if allow_inf else ""
        raise ValueError(f"{name} must be > 0{extra}, got {value}")
    return value


class OnlineLearner(ABC):
    """Shared machinery: a linear-in-M predictor yhat_t = base_t + sum_i M_i x_{t,i}.

    Subclasses define ``_setup()`` returning (taps (L, m), ar_coefs) where
    x_{t,i}[a] = sum_j taps[j, i] u_{t-1-j, a} and base_t = sum_j ar_coefs[j] y_{t-1-j}.

    Attributes (after ``reset``/``fit_predict``)
    ------------------------------------------
    coef_ : ndarray, shape (m, d_out, d_in)
        Current M (M^{t+1} after t updates).
    n_updates_ : int
        Number of ``learn_one`` updates made (t).
    losses_ : ndarray, shape (n,)
        Per-step losses of the last ``fit_predict``.
    """

    _param_names: tuple[str, ...] = ()
    _learns = True

    # ------------------------------------------------------------------ params
    def get_params(self) -> dict:
        """The constructor's hyper-parameters (as scikit-learn's ``get_params``)."""
        return {name: getattr(self, name) for name in self._param_names}

    def set_params(self, **params):
        """Change hyper-parameters in place; they are validated when the learner next starts."""
        for key, val in params.items():
            if key not in self._param_names:
                raise ValueError(f"unknown parameter {key!r} for {type(self).__name__}; "
                                 f"valid: {self._param_names}")
            setattr(self, key, val)
        return self

    def clone(self, **overrides):
        """A fresh, unfitted copy with the same hyper-parameters (some overridden)."""
        params = self.get_params()
        params.update(overrides)
        return type(self)(**params)

    def __repr__(self):
        args = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"{type(self).__name__}({args})"

    # ----------------------------------------------------------------- design
    @abstractmethod
    def _setup(self) -> tuple[np.ndarray, tuple[float, ...]]:
        """Return (taps, autoregressive coefficients) of this learner's feature map."""

    def _validated(self):
        """Validate hyper-parameters; return (taps, ar_coefs, radius, (lr, schedule))."""
        taps, coefs = self._setup()
        return taps, coefs, self._radius(), self._lr()

    def _radius(self) -> float:
        return math.inf

    def _lr(self) -> tuple[float, str]:
        return 0.0, "constant"

    def step_sizes(self, n: int, start: int = 0) -> np.ndarray:
        """eta_t for updates t = start+1 .. start+n."""
        lr, schedule = self._lr()
        t = np.arange(start + 1, start + n + 1, dtype=np.float64)
        if schedule == "constant":
            return np.full(n, lr)
        return lr / np.sqrt(t)

    def design(self, u, y):
        """Features and autoregressive part of the whole stream.

        Returns
        -------
        X : ndarray, shape (n, m, d_in)
            x_{t,i} for every t (FFT convolution of u with the taps, lag 1).
        base : ndarray, shape (n, d_out)
            The autoregressive part (y_{t-1} or 2 y_{t-1} - y_{t-2}).
        """
        u, y = _as_streams(u, y)
        taps, coefs = self._setup()
        return lagged_features(u, taps, lag=1), ar_part(y, coefs)

    # -------------------------------------------------------------- streaming
    def reset(self, d_in: int, d_out: int):
        """Start a fresh stream with input/output dimensions ``d_in``, ``d_out`` (optional:
        the first ``learn_one`` sizes a cold learner)."""
        d_in = check_int("d_in", d_in)
        d_out = check_int("d_out", d_out)
        taps, coefs, radius, _ = self._validated()
        self._taps, self._coefs, self._r = taps, coefs, radius
        self._taps_rev = np.ascontiguousarray(taps[::-1])
        L = taps.shape[0]
        self.d_in_, self.d_out_ = d_in, d_out
        self.coef_ = np.zeros((taps.shape[1], d_out, d_in))
        self.n_updates_ = 0
        self._buf = np.zeros((2 * L, d_in))  # ring buffer, each input stored twice
        self._pos = 0
        self._yhist = np.zeros((max(len(coefs), 1), d_out))  # y_{t-1}, y_{t-2}, ...
        self._codecs = (SignalCodec("x", "u_t"), SignalCodec("y", "y_t"))
        self._codecs[0].clear(d_in)
        self._codecs[1].clear(d_out)
        return self

    def _started(self) -> bool:
        return hasattr(self, "coef_")

    def _cold_dims(self) -> tuple[int, int] | None:
        """``(d_in, d_out)`` a cold learner can size itself with before any data (none for
        learners that learn both from the stream)."""
        return None

    def _push_input(self, u_t: np.ndarray):
        L = self._taps.shape[0]
        self._buf[self._pos] = u_t
        self._buf[self._pos + L] = u_t
        self._pos = (self._pos + 1) % L

    def _features_now(self) -> np.ndarray:
        """x_{t,i} from the last L inputs u_{t-1}, ..., u_{t-L} (before u_t is stored)."""
        L = self._taps.shape[0]
        window = self._buf[self._pos : self._pos + L]  # u_{t-L} .. u_{t-1}, oldest first
        return self._taps_rev.T @ window  # (m, d_in)

    def _predict_now(self) -> tuple[np.ndarray, np.ndarray]:
        """``(features x_t, prediction yhat_t)`` from the history u_{<t}, y_{<t}."""
        x = self._features_now()
        base = sum((c * self._yhist[j] for j, c in enumerate(self._coefs)),
                   np.zeros(self.d_out_))
        return x, base + np.einsum("ioa,ia->o", self.coef_, x)

    def _advance(self, u_t: np.ndarray, y_t: np.ndarray, x: np.ndarray, pred: np.ndarray):
        """Suffer the loss of ``pred`` on ``y_t``, take the OGD step, store u_t and y_t."""
        err = pred - y_t
        with np.errstate(over="ignore", invalid="ignore"):
            loss = float(err @ err)  # the loss, as the batch path checks it: ||err||^2 may
        if not np.isfinite(loss):    # overflow while err itself is finite
            raise LearnerDivergedError(self.n_updates_, type(self).__name__,
                                       huge_stream_cause(self.n_updates_,
                                                         **{"u's features": x, "y": y_t}))
        if self._learns and x.shape[0]:
            eta = self.step_sizes(1, self.n_updates_)[0]
            M = self.coef_ - 2.0 * eta * err[None, :, None] * x[:, None, :]
            nrm = np.sqrt(np.sum(M * M, axis=(1, 2)))
            over = nrm > self._r
            M[over] *= (self._r / nrm[over])[:, None, None]
            self.coef_ = M
        self._push_input(u_t)
        self.n_updates_ += 1
        self._yhist = np.roll(self._yhist, 1, axis=0)
        self._yhist[0] = y_t

    def predict_one(self, x):
        """river's ``predict_one``: the prediction of y_t, given the input ``x`` = u_t.

        The prediction uses the history u_{<t}, y_{<t} only (module docstring), so ``x`` is
        validated but does not enter it, and nothing changes: calling it twice gives the same
        value. ``x`` is a number, a 1-D array or a dict of numbers (as river passes features).
        The prediction comes back in the form the targets came in (a float for scalar
        targets, a dict for dict targets, else an array of shape (d_out,)); a cold learner
        (no target seen yet) predicts ``0.0``, as every learner here predicts yhat_0 = 0.
        """
        if not self._started():
            dims = self._cold_dims()
            if dims is None:
                SignalCodec("x", "u_t").encode(x)  # the value is checked even when cold
                return 0.0
            self.reset(*dims)
        self._codecs[0].encode(x)
        return self._codecs[1].decode(self._predict_now()[1])

    def learn_one(self, x, y=None):
        """river's ``learn_one``: reveal the pair (u_t, y_t) = (``x``, ``y``) of step t.

        Predicts y_t from the history (as :meth:`predict_one`), suffers
        ||yhat_t - y_t||^2, takes one projected OGD step and appends u_t, y_t to the
        history. A cold learner sizes itself (d_in, d_out) from the first pair. ``x`` and
        ``y`` are numbers, 1-D arrays or dicts of numbers. Streaming ``predict_one(u_t)``
        then ``learn_one(u_t, y_t)`` over a stream gives the numbers of :meth:`fit_predict`.
        Returns None, as river's learners do.
        """
        if y is None:
            raise TypeError("learn_one(x, y) takes the input u_t and the target y_t of one "
                            "step, as river's learners do (the former learn_one(y_t) after "
                            "predict_one(u_t) is now learn_one(u_t, y_t))")
        if not self._started():
            self.reset(*(self._cold_dims() or (SignalCodec("x", "u_t").encode(x).size,
                                               SignalCodec("y", "y_t").encode(y).size)))
        codec_x, codec_y = self._codecs
        u_t, y_t = codec_x.encode(x), codec_y.encode(y)
        feats, pred = self._predict_now()
        self._advance(u_t, y_t, feats, pred)

    # ------------------------------------------------------------------ batch
    def fit_predict(self, u, y, *, design=None) -> np.ndarray:
        """Run the online protocol over a whole stream from a fresh start.

        Parameters
        ----------
        u : array_like, shape (n, d_in) or (n,)
        y : array_like, shape (n, d_out) or (n,)
        design : tuple (X, base), optional
            This learner's :meth:`design` of the same ``(u, y)``, when the caller has it
            already: a search over step sizes (which do not enter the features) builds it
            once instead of once per step size (the FFT convolution is most of a fit at
            T = 2^10). Its shapes are checked; that it comes from this feature map (horizon,
            k, context, filter precision) and this stream is the caller's promise.

        Returns
        -------
        ndarray, shape (n, d_out)
            yhat_t made before y_t was revealed.  Per-step losses are in ``losses_``; the
            learner is left in the state after step n-1, so streaming can continue.
        """
        u, y = _as_streams(u, y)
        self.reset(u.shape[1], y.shape[1])
        if design is None:
            X = lagged_features(u, self._taps, lag=1)
            base = ar_part(y, self._coefs)
        else:
            X, base = _checked_design(design, u.shape[0], self._taps.shape[1], u.shape[1],
                                      y.shape[1])
        return self._run_stream(u, y, X, base)

    def _run_stream(self, u, y, X, base) -> np.ndarray:
        """The batch path after ``reset``: OGD over precomputed features ``X`` and AR part
        ``base`` (as :meth:`design` returns them), leaving the streaming state at the end."""
        n = u.shape[0]
        lr = self.step_sizes(n) if self._learns else np.zeros(n)
        M = self.coef_
        pred = np.empty_like(y)
        loss = np.empty(n)
        bad = ogd_loop(X, base, y, lr, self._r, M, pred, loss)
        if bad >= 0:
            raise LearnerDivergedError(bad, type(self).__name__,
                                       huge_stream_cause(bad, u=u[:bad + 1], y=y[:bad + 1]))
        self.coef_ = M
        self.losses_ = loss
        # leave the streaming state at the end of the stream
        self.n_updates_ = n
        self._codecs[0].kind = self._codecs[1].kind = "array"
        L = self._taps.shape[0]
        idx = np.arange(max(0, n - L), n)  # the last L inputs, as L pushes would store them
        self._buf[idx % L] = u[idx]
        self._buf[idx % L + L] = u[idx]
        self._pos = n % L
        h = self._yhist.shape[0]
        last = y[::-1][:h]
        self._yhist[: last.shape[0]] = last
        return pred


class _SpectralBase(OnlineLearner):
    _param_names = ("horizon", "k", "context", "radius", "lr", "lr_schedule",
                    "filter_precision")
    _min_context = 1
    _min_k = 1

    def __init__(self, horizon: int = 2**14, k: int = 24, context: int | None = None,
                 radius: float = math.inf, lr: float = 1e-2, lr_schedule: str = "inv_sqrt",
                 filter_precision: str = "double"):
        self.horizon = horizon
        self.k = k
        self.context = context
        self.radius = radius
        self.lr = lr
        self.lr_schedule = lr_schedule
        self.filter_precision = filter_precision

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
        check_fits_in_memory("horizon", T, 8.0 * T * self.k,
                             f"the (horizon, k={self.k}) float64 spectral filters alone")
        return T, int(self.k), L

    def _radius(self):
        return _check_positive("radius", self.radius, allow_inf=True)

    def _lr(self):
        lr = _check_positive("lr", self.lr)
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
    lr_schedule : {"inv_sqrt", "constant"}
        eta_t = lr / sqrt(t) or eta_t = lr (t = 1, 2, ... counts updates).
    filter_precision : {"double", "extended"}
        Arithmetic of the filters (:func:`~lds_toolkit.learning.spectral_filters`):
        ``"extended"`` resolves filters below the float64 floor (paid once per (T, k), cached).

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

    Parameters
    ----------
    system : lds_toolkit.systems.LDS or control.StateSpace
        Discrete-time system.
    x0 : array_like, shape (n,), optional
        Initial state x_0.
    """

    _param_names = ("system", "x0")
    _learns = False

    def __init__(self, system, x0=None):
        self.system = system
        self.x0 = x0

    def _check_system(self):
        from ..systems.lds import require_discrete

        system = require_discrete(self.system, "system")  # an LDS or a control.StateSpace
        n = system.n_states
        x0 = np.zeros(n) if self.x0 is None else _as_vector("x0", self.x0, n)
        return system, x0

    def _setup(self):
        return np.zeros((1, 0)), ()

    def reset(self, d_in, d_out):
        system, x0 = self._check_system()
        if (d_in, d_out) != (system.n_inputs, system.n_outputs):
            raise ValueError(f"the system has d_in={system.n_inputs}, d_out={system.n_outputs}; "
                             f"got d_in={d_in}, d_out={d_out}")
        super().reset(d_in, d_out)
        self._state = x0.copy()  # x_t at step t (before u_t arrives)
        self._u_prev = np.zeros(d_in)  # u_{t-1}
        return self

    def _cold_dims(self):
        system, _ = self._check_system()
        return system.n_inputs, system.n_outputs

    def _predict_now(self):
        s = self.system
        return np.zeros((0, self.d_in_)), s.C @ self._state + s.D @ self._u_prev

    def _advance(self, u_t, y_t, x, pred):
        s = self.system
        self._state = s.A @ self._state + s.B @ u_t  # x_{t+1}
        self._u_prev = u_t
        self.n_updates_ += 1

    def fit_predict(self, u, y, *, design=None):
        from ..systems import simulate

        if design is not None:
            raise ValueError("LDSOracle has no features: design must be None")
        system, x0 = self._check_system()
        u, y = _as_streams(u, y, system.n_inputs, system.n_outputs)
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
            return self.template.clone(context=self.context)
        return self.template.clone()

    def _setup(self):
        return self._class()._setup()

    def _radius(self):
        if self.radius is None:
            return self._class()._radius()
        return _check_positive("radius", self.radius, allow_inf=True)

    def design(self, u, y):
        return self._class().design(u, y)

    def reset(self, d_in, d_out):
        fitted = getattr(self, "_solved", None)
        super().reset(d_in, d_out)
        if fitted is not None and fitted.shape == self.coef_.shape:
            self.coef_ = fitted.copy()
        return self

    def fit_predict(self, u, y, *, design=None):
        from ._hindsight import AugmentedQR, solve_block_ball_lsq

        u, y = _as_streams(u, y)
        if design is None:
            X, base = self.design(u, y)
        else:
            X, base = _checked_design(design, u.shape[0], self._setup()[0].shape[1],
                                      u.shape[1], y.shape[1])
        n, m, d_in = X.shape
        d_out = y.shape[1]
        radius = self._radius()
        tol = _check_positive("tol", self.tol)
        qr = AugmentedQR(m * d_in, d_out).update(X.reshape(n, m * d_in), y - base)
        sol = solve_block_ball_lsq(*qr.parts(), m, d_in, radius, tol=tol)
        self.solution_ = sol
        self._solved = np.ascontiguousarray(
            sol.W.reshape(m, d_in, d_out).transpose(0, 2, 1))  # M_i = W_i^T
        self.reset(d_in, d_out)
        return self._run_stream(u, y, X, base)  # the fixed M on the features already built
