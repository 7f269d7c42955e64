r"""The machinery every online learner shares (:class:`OnlineLearner`): river's streaming
contract, the batch path that gives the same numbers, step-size schedules and the checks of
their arguments. The learners themselves, with their equations and the time-index convention,
are in :mod:`lds_toolkit.learning.learners`.

A learner is linear in its parameters M = (M_1, ..., M_m)::

    yhat_t = base_t + sum_i M_i x_{t,i},   x_{t,i}[a] = sum_j taps[j, i] u_{t-1-j, a},
    base_t = sum_j ar_coefs[j] y_{t-1-j}

and online gradient descent (OGD) on l_t(M) = ||yhat_t - y_t||^2 updates::

    M_i <- Pi_r( M_i - eta_t * 2 (yhat_t - y_t) x_{t,i}^T ),   Pi_r(M) = M min(1, r / ||M||_F)

with eta_t the t-th step size (t counted from 1)::

    "constant"    eta_t = lr
    "inv_sqrt"    eta_t = lr / sqrt(t)
    "normalized"  eta_t = lr / (sqrt(t) G_t),   G_t = K max_{s<t} ||u_s||^2,
                  K = sum_i (sum_j |taps[j, i]|)^2   (no step while G_t = 0)

K is a constant of the feature map with ||x_t||_F^2 <= G_t (the triangle inequality filter by
filter; equality for a constant input and taps of one sign), so eta_t ||x_t||_F^2 <=
lr / sqrt(t): with lr <= 1 no step overshoots the loss of its own sample (each step
multiplies that sample's error by 1 - 2 eta_t ||x_t||_F^2, in [-1, 1]). It is scale-free:
multiplying u by c > 0 scales M by 1/c and leaves every prediction unchanged (with r = inf),
so a stream in any unit (river's TrumpApproval has a date of ~7e5 beside ratings of ~40)
learns without diverging. G_t reads the raw inputs, not the features: the batch path's FFT
features carry round-off (~1e-15 where a feature is 0), and a step divided by such a norm
would be ~1e29; the inputs are the same numbers on both paths, so both take the same steps.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from numbers import Real

import numpy as np

from .._validation import as_float_array, check_int
from ._kernels import ar_part, lagged_features, ogd_loop
from ._signals import SignalCodec

__all__ = ["OnlineLearner", "LearnerDivergedError", "LR_SCHEDULES"]

LR_SCHEDULES = ("constant", "inv_sqrt", "normalized")


class LearnerDivergedError(FloatingPointError):
    """Raised when a prediction becomes non-finite; ``step`` is the time index t."""

    def __init__(self, step: int, what: str, cause: str | None = None):
        self.step = int(step)
        self.cause = cause
        super().__init__(f"{what}: the loss became non-finite at step t={step}; "
                         + (cause or "lower lr, use lr_schedule='normalized' or a finite "
                            "radius"))


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


def as_stream(name: str, value, d_expected: int | None = None) -> np.ndarray:
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


def as_streams(u, y, d_in: int | None = None, d_out: int | None = None):
    """Validated streams ``u`` (n, d_in) and ``y`` (n, d_out) of the same length."""
    u = as_stream("u", u, d_in)
    y = as_stream("y", y, d_out)
    if u.shape[0] != y.shape[0]:
        raise ValueError(f"u and y must have the same number of time steps, got "
                         f"{u.shape[0]} and {y.shape[0]}")
    return u, y


def as_vector(name: str, value, d: int) -> np.ndarray:
    arr = as_float_array(name, value)
    if arr.ndim == 0:
        arr = arr.reshape(1)
    if arr.shape != (d,):
        raise ValueError(f"{name} must have shape ({d},), got {arr.shape}")
    return arr


def checked_design(design, n: int, m: int, d_in: int, d_out: int):
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


def check_positive(name, value, allow_inf=False):
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

    Attributes (after ``reset``/``fit_predict``/the first ``learn_one``)
    -----------------------------------------------------------------
    coef_ : ndarray, shape (m, d_out, d_in)
        Current M (M^{t+1} after t updates).
    n_updates_ : int
        Number of ``learn_one`` updates made (t).
    losses_ : ndarray, shape (n,)
        Per-step losses of the last ``fit_predict``.
    input_names_ : list
        The dict keys of the input columns (dict streams; empty otherwise).
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
        return self._copy_with(**overrides)

    def _copy_with(self, **overrides):
        # the toolkit's own calls use this: a river twin's clone() has river's signature
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

    def step_sizes(self, n: int, start: int = 0, *, scale=None) -> np.ndarray:
        """eta_t for updates t = start+1 .. start+n (module docstring).

        ``lr_schedule="normalized"`` also needs ``scale``, G_t = K max_{s<t} ||u_s||^2 of those
        updates (shape (n,); :meth:`input_gain` is K).
        """
        lr, schedule = self._lr()
        t = np.arange(start + 1, start + n + 1, dtype=np.float64)
        if schedule == "constant":
            return np.full(n, lr)
        eta = lr / np.sqrt(t)
        if schedule == "inv_sqrt":
            return eta
        if scale is None:
            raise ValueError("lr_schedule='normalized' divides each step by G_t = K max_{s<t} "
                             "||u_s||^2: pass scale (shape (n,))")
        G = np.asarray(scale, dtype=np.float64)
        return np.divide(eta, G, out=np.zeros(n), where=G > 0)

    def input_gain(self) -> float:
        """K = sum_i (sum_j |taps[j, i]|)^2, with ||x_t||_F^2 <= K max_{s<t} ||u_s||^2 (module
        docstring); the constant of ``lr_schedule="normalized"``."""
        taps = self._taps if self._started() else self._setup()[0]
        return float(np.sum(np.sum(np.abs(taps), axis=0) ** 2))

    def design(self, u, y):
        """Features and autoregressive part of the whole stream.

        Returns
        -------
        X : ndarray, shape (n, m, d_in)
            x_{t,i} for every t (FFT convolution of u with the taps, lag 1).
        base : ndarray, shape (n, d_out)
            The autoregressive part (y_{t-1} or 2 y_{t-1} - y_{t-2}).
        """
        u, y = as_streams(u, y)
        taps, coefs = self._setup()
        return lagged_features(u, taps, lag=1), ar_part(y, coefs)

    # -------------------------------------------------------------- streaming
    def _make_codecs(self) -> tuple[SignalCodec, SignalCodec]:
        """The readers of ``x`` (u_t) and ``y`` (y_t): dict features by name, a missing one is
        0, a new one a new input column; dict targets keep their first names."""
        return (SignalCodec("x", "u_t", grow=True),
                SignalCodec("y", "y_t", missing="refuse"))

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
        self._peak = 0.0  # max_{s<t} ||u_s||^2, for lr_schedule="normalized"
        self._gain = float(np.sum(np.sum(np.abs(taps), axis=0) ** 2))  # input_gain()
        self._buf = np.zeros((2 * L, d_in))  # ring buffer, each input stored twice
        self._pos = 0
        self._yhist = np.zeros((max(len(coefs), 1), d_out))  # y_{t-1}, y_{t-2}, ...
        self._codecs = self._make_codecs()
        self._codecs[0].clear(d_in)
        self._codecs[1].clear(d_out)
        return self

    @property
    def input_names_(self) -> list:
        return list(self._codecs[0].keys) if self._started() else []

    def _started(self) -> bool:
        return hasattr(self, "coef_")

    def _cold_dims(self) -> tuple[int, int] | None:
        """``(d_in, d_out)`` a cold learner can size itself with before any data (none for
        learners that learn both from the stream)."""
        return None

    def _grow_inputs(self, d_in: int) -> None:
        """New input columns (a dict feature seen for the first time): weight 0 and past
        values 0, river's convention for a feature that was missing."""
        extra = d_in - self.d_in_
        self.coef_ = np.concatenate([self.coef_, np.zeros(self.coef_.shape[:2] + (extra,))],
                                    axis=2)
        self._buf = np.concatenate([self._buf, np.zeros((self._buf.shape[0], extra))], axis=1)
        self.d_in_ = d_in

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
            eta = self.step_sizes(1, self.n_updates_, scale=[self._gain * self._peak])[0]
            M = self.coef_ - 2.0 * eta * err[None, :, None] * x[:, None, :]
            nrm = np.sqrt(np.sum(M * M, axis=(1, 2)))
            over = nrm > self._r
            M[over] *= (self._r / nrm[over])[:, None, None]
            self.coef_ = M
        self._push_input(u_t)
        self._peak = max(self._peak, float(np.sum(u_t * u_t)))
        self.n_updates_ += 1
        self._yhist = np.roll(self._yhist, 1, axis=0)
        self._yhist[0] = y_t

    def predict_one(self, x):
        """river's ``predict_one``: the prediction of y_t, given the input ``x`` = u_t.

        The prediction uses the history u_{<t}, y_{<t} only (module docstring), so ``x`` is
        validated but does not enter it, and nothing changes: calling it twice gives the same
        value. ``x`` is a number, a 1-D array or a dict of numbers (as river passes features;
        keys are matched by name, a feature never learned is ignored).

        Returns one form per target stream, cold or warm: a ``dict`` for dict targets, a
        ``float`` when there is one output, else an array of shape (d_out,). A cold learner (no
        target seen yet) predicts ``0.0``, as every learner here predicts yhat_0 = 0 (an
        :class:`LDSOracle` predicts C x_0 in its system's output form).
        """
        if not self._started():
            dims = self._cold_dims()
            if dims is None:
                self._make_codecs()[0].encode(x)  # the value is checked even when cold
                return 0.0
            self.reset(*dims)
        self._codecs[0].encode(x, register=False)
        return self._codecs[1].decode(self._predict_now()[1])

    def learn_one(self, x, y=None):
        """river's ``learn_one``: reveal the pair (u_t, y_t) = (``x``, ``y``) of step t.

        Predicts y_t from the history (as :meth:`predict_one`), suffers
        ||yhat_t - y_t||^2, takes one projected OGD step and appends u_t, y_t to the
        history. A cold learner sizes itself (d_in, d_out) from the first pair. ``x`` and
        ``y`` are numbers, 1-D arrays or dicts of numbers (dict features by name: a missing
        one counts as 0, a new one becomes an input column whose past values were 0).
        Streaming ``predict_one(u_t)`` then ``learn_one(u_t, y_t)`` over a stream gives the
        numbers of :meth:`fit_predict`. Returns None, as river's learners do; a bad value
        changes nothing.
        """
        if y is None:
            raise TypeError("learn_one(x, y) takes the input u_t and the target y_t of one "
                            "step, as river's learners do (the former learn_one(y_t) after "
                            "predict_one(u_t) is now learn_one(u_t, y_t))")
        if not self._started():
            dims = self._cold_dims()
            if dims is None:
                probe_x, probe_y = self._make_codecs()
                dims = probe_x.encode(x).size, probe_y.encode(y).size
            self.reset(*dims)
        codec_x, codec_y = self._codecs
        codec_x.encode(x, register=False)  # both checked before either is registered
        codec_y.encode(y, register=False)
        u_t, y_t = codec_x.encode(x), codec_y.encode(y)
        if u_t.size > self.d_in_:
            self._grow_inputs(u_t.size)
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
        u, y = as_streams(u, y)
        self.reset(u.shape[1], y.shape[1])
        if design is None:
            X = lagged_features(u, self._taps, lag=1)
            base = ar_part(y, self._coefs)
        else:
            X, base = checked_design(design, u.shape[0], self._taps.shape[1], u.shape[1],
                                     y.shape[1])
        return self._run_stream(u, y, X, base)

    def _run_stream(self, u, y, X, base) -> np.ndarray:
        """The batch path after ``reset``: OGD over precomputed features ``X`` and AR part
        ``base`` (as :meth:`design` returns them), leaving the streaming state at the end."""
        n = u.shape[0]
        sq = np.sum(u * u, axis=1)  # row by row, as _advance sums one step's u_t
        peaks = np.maximum.accumulate(sq)
        if self._learns and self._lr()[1] == "normalized":
            before = np.concatenate([[0.0], peaks[:-1]])  # max_{s<t} ||u_s||^2
            lr = self.step_sizes(n, scale=self._gain * before)
        else:
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
        self._peak = float(peaks[-1])
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
