r"""The machinery every online learner shares (:class:`OnlineLearner`): parameters, the
batch path that gives the streaming numbers, step-size schedules and the checks of their
arguments; river's streaming contract itself is in :mod:`lds_toolkit.learning._protocol`.
The learners, with their equations and the time-index convention, are in
:mod:`lds_toolkit.learning.learners`.

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

from .._validation import as_float_array
from ._kernels import ar_part, lagged_features, ogd_loop
from ._protocol import LearnerDivergedError, StreamingProtocol, huge_stream_cause
from ._stream import bank_design

__all__ = ["OnlineLearner", "LearnerDivergedError", "LR_SCHEDULES", "huge_stream_cause"]

LR_SCHEDULES = ("constant", "inv_sqrt", "normalized")


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


class OnlineLearner(StreamingProtocol, ABC):
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
        return self._features(u, taps, self._batch_bank())[0], ar_part(y, coefs)

    def _batch_bank(self):
        """The diagonal-LDS bank the batch path computes its features through, or None (the
        exact FFT convolution)."""
        return None

    @staticmethod
    def _features(u, taps, bank):
        """``(X, w)``: the features of the stream, exact (FFT) or through ``bank`` (the
        streaming recursion, :func:`~lds_toolkit.learning._stream.bank_design`), and the
        bank's state after the stream (None when exact)."""
        if bank is None:
            return lagged_features(u, taps, lag=1), None
        X = np.empty((u.shape[0], bank.m, u.shape[1]))
        w = bank_design(np.ascontiguousarray(u), bank.decays, bank.C, bank.D, bank.m0,
                        bank.L, X)
        return X, w

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
        bank = w = None
        if design is None:
            bank = self._batch_bank()
            X, w = self._features(u, self._taps, bank)
            base = ar_part(y, self._coefs)
        else:
            X, base = checked_design(design, u.shape[0], self._taps.shape[1], u.shape[1],
                                     y.shape[1])
        pred = self._run_stream(u, y, X, base)
        if bank is not None and bank is self._streaming_bank():
            # filters="lds": the batch recursion's state is where the steps continue from
            self._bank, self._w, self._route_pending = bank, w, False
        return pred

    def _run_stream(self, u, y, X, base) -> np.ndarray:
        """The batch path after ``reset``: OGD over precomputed features ``X`` and AR part
        ``base`` (as :meth:`design` returns them), leaving the streaming state at the end
        (a streaming LDS bank takes its state from the inputs at the next step)."""
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
        if self._bank is not None:  # resolved before the stream (a subclass): start over
            self._route_pending = True
        h = self._yhist.shape[0]
        last = y[::-1][:h]
        self._yhist[: last.shape[0]] = last
        return pred
