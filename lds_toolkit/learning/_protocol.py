r"""river's streaming contract for every online learner: ``reset``, ``predict_one``,
``learn_one`` (the machinery of :class:`~lds_toolkit.learning._online.OnlineLearner`, which
adds the parameters, the design and the batch path).

A step is one compiled call (:func:`~lds_toolkit.learning._stream.stream_step`): the features
of the history, the prediction, the loss, the projected OGD step and the storing of u_t and
y_t.  The features come from a ring buffer of the last L inputs (the exact window,
O(L m d) per step) or, when the learner streams its filters through a diagonal LDS
(``filters="lds"``, :mod:`~lds_toolkit.learning._stream`), from that LDS's state, O(n m d)
whatever t and L.  The commonest values (a dict of the first call's keys with float or int
values, a float target) are read without the general codec
(:meth:`~lds_toolkit.learning._signals.SignalCodec.fast_encode`); any other value takes the
general path, with the same numbers.

**Feature-less streams.**  river hands over a plain time series as ``x = {}`` (a stream with
no features: AirlinePassengers without its date).  A learner whose first ``x`` is an empty
dict reads its input as the target's own past: the input of step t is the target revealed at
step t, u_t := y_t, so the prediction of y_t, which reads the inputs u_{t-1}, u_{t-2}, ...
(never u_t), reads y_{t-1}, y_{t-2}, ...  Algorithm 1 then predicts
yhat_t = y_{t-1} + sum_i M_i sum_j sigma_i^{1/4} phi_i[j] y_{t-1-j}, and Algorithm 2
yhat_t = 2 y_{t-1} - y_{t-2} + M_1 y_{t-1} + M_2 y_{t-2} + (filters over y_{t-3}, ...), which
holds any AR(2) model exactly (M_1 = a_1 - 2, M_2 = a_2 + 1).  (Read in a convention where
y_t's prediction would see u_t, this is u_t = y_{t-1}, the previous target as the input.)
``fit_predict(y, y)`` gives the same numbers.  Every later ``x`` must be ``{}`` too.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from .._validation import _human, available_memory_bytes, check_int
from ._signals import SignalCodec
from ._stream import SCHEDULE_CODES, bank_state, stream_features, stream_predict, stream_step

__all__ = ["StreamingProtocol", "LearnerDivergedError", "huge_stream_cause"]


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


_CORES: tuple = ()


def _compiled() -> tuple:
    """(stream_predict, stream_step) as numba compiled them (or plain Python without numba),
    fetched once: a step calls the dispatcher, not the lazy wrapper."""
    global _CORES
    if not _CORES:
        _CORES = (stream_predict.compiled(), stream_step.compiled())
    return _CORES


def _is_featureless(x, codec: SignalCodec) -> bool:
    """``x = {}`` on a cold learner whose inputs are its own (no fixed input names)."""
    return isinstance(x, Mapping) and not x and codec.fixed_names is None


class StreamingProtocol:
    """``reset``/``predict_one``/``learn_one`` over the feature map of ``_validated()``."""

    _learns = True

    # hooks of OnlineLearner (declared for the type checker)
    def _validated(self):  # pragma: no cover - defined by OnlineLearner
        raise NotImplementedError

    def _streaming_bank(self):
        """The diagonal-LDS bank the steps stream through, or None (the exact window)."""
        return None

    def _check_params(self) -> tuple[int, int] | None:
        """Validate the hyper-parameters without building anything: a cold ``predict_one``
        answers 0.0 before any filter is made, and must refuse what ``learn_one`` would.
        Returns the (L, m) of the window and features the learner will keep, when its
        parameters tell (for the memory check before the filters are made), else None."""
        return None

    def _make_codecs(self) -> tuple[SignalCodec, SignalCodec]:
        """The readers of ``x`` (u_t) and ``y`` (y_t): dict features by name, a missing one is
        0, a new one a new input column; dict targets keep their first names."""
        return (SignalCodec("x", "u_t", grow=True),
                SignalCodec("y", "y_t", missing="refuse"))

    def _check_memory(self, d_in: int, d_out: int, m: int, L: int, n: int) -> None:
        """Refuse, before allocating, a stream whose window and weights do not fit: the ring
        buffer holds 2 L inputs of d_in features, M has m d_out d_in entries."""
        need = 8.0 * d_in * (2 * L + m * d_out + n + m + 1)
        avail = available_memory_bytes()
        if avail is not None and need > avail:
            raise ValueError(
                f"x (u_t) has {d_in} features: {type(self).__name__} with context L={L} keeps "
                f"2 L x d_in = {2 * L} x {d_in} past inputs and m x d_out x d_in = {m} x "
                f"{d_out} x {d_in} weights (float64), {_human(need)}, more than the "
                f"{_human(avail)} of memory available; use fewer features, a shorter "
                f"context or horizon")

    def reset(self, d_in: int, d_out: int):
        """Start a fresh stream with input/output dimensions ``d_in``, ``d_out`` (optional:
        the first ``learn_one`` sizes a cold learner)."""
        d_in = check_int("d_in", d_in)
        d_out = check_int("d_out", d_out)
        window = self._check_params()
        if window is not None:  # refused before the filters (minutes at a large horizon)
            self._check_memory(d_in, d_out, window[1], window[0], 0)
        taps, coefs, radius, (lr, schedule) = self._validated()
        lazy = self._lazy_bank()
        bank = None if lazy else self._streaming_bank()
        L, m = taps.shape
        self._check_memory(d_in, d_out, m, L, 0 if bank is None else bank.n)
        self._taps, self._coefs, self._r = taps, coefs, radius
        self._taps_rev = np.ascontiguousarray(taps[::-1])
        self._bank = bank
        self._route_pending = lazy  # the bank is chosen at the first step (_resolve_route)
        self._lr_code = (float(lr), SCHEDULE_CODES[schedule])
        self._coef_arr = np.asarray(coefs, dtype=np.float64)
        self.d_in_, self.d_out_ = d_in, d_out
        try:
            self.coef_ = np.zeros((m, d_out, d_in))
            self._buf = np.zeros((2 * L, d_in))  # ring buffer, each input stored twice
            self._w = np.zeros((0 if bank is None else bank.n, d_in))  # the bank's state
        except MemoryError:
            del self.coef_
            raise MemoryError(f"{type(self).__name__}: allocating the window (2 L x d_in = "
                              f"{2 * L} x {d_in}) and weights ({m} x {d_out} x {d_in}) "
                              "failed; use fewer features, a shorter context or horizon"
                              ) from None
        self.n_updates_ = 0
        self._peak = 0.0  # max_{s<t} ||u_s||^2, for lr_schedule="normalized"
        self._gain = float(np.sum(np.sum(np.abs(taps), axis=0) ** 2))  # input_gain()
        self._pos = 0
        self._yhist = np.zeros((max(len(coefs), 1), d_out))  # y_{t-1}, y_{t-2}, ...
        self._x = np.zeros((m, d_in))
        self._pred, self._err = np.zeros(d_out), np.zeros(d_out)
        self._own_past = False
        self._fresh = None  # (t, id(coef_)) when self._x, self._pred hold step t's prediction
        self._codecs = self._make_codecs()
        self._codecs[0].clear(d_in)
        self._codecs[1].clear(d_out)
        return self

    @property
    def input_names_(self) -> list:
        if not self._started():
            return []
        if self._own_past:  # the target's own past is the input
            return list(self._codecs[1].keys) or ["y"]
        return list(self._codecs[0].keys)

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
        L, m = self._taps.shape
        self._check_memory(d_in, self.d_out_, m, L, self._w.shape[0])
        self.coef_ = np.concatenate([self.coef_, np.zeros(self.coef_.shape[:2] + (extra,))],
                                    axis=2)
        self._buf = np.concatenate([self._buf, np.zeros((self._buf.shape[0], extra))], axis=1)
        self._w = np.concatenate([self._w, np.zeros((self._w.shape[0], extra))], axis=1)
        self._x = np.zeros((m, d_in))
        self._fresh = None
        self.d_in_ = d_in

    def _lazy_bank(self) -> bool:
        """Whether ``reset`` leaves the choice of the streaming bank to the first step."""
        return False

    def _resolve_route(self) -> None:
        """Choose the streaming route now; an LDS bank starts from the state the last L
        inputs (the ring buffer: zeros before t = 0) give it, w = sum_j a^{j-1} u_{t-1-m0-j}."""
        bank = self._streaming_bank()  # an error leaves the choice pending
        self._route_pending = False
        if bank is None:
            return
        L = self._taps.shape[0]
        window = np.ascontiguousarray(self._buf[self._pos:self._pos + L])  # u_{t-L}..u_{t-1}
        self._w = bank_state(window, bank.decays, bank.m0, bank.L)
        self._bank = bank
        self._fresh = None

    def _route(self):
        """The compiled calls' description of the feature map."""
        if self._route_pending:
            self._resolve_route()
        b = self._bank
        if b is None:
            e = np.zeros(0)
            return False, self._taps_rev, e, np.zeros((0, 0)), e, e, 0
        return True, self._taps_rev, b.decays, b.C, b.D, b.tail, b.m0

    def _features_now(self) -> np.ndarray:
        """x_{t,i} from the last L inputs u_{t-1}, ..., u_{t-L} (before u_t is stored)."""
        lds, taps_rev, decays, C, D, _, m0 = self._route()
        x = np.empty_like(self._x)
        stream_features(lds, taps_rev, decays, C, D, m0, self._w, self._buf, self._pos, x)
        return x

    def _predict_now(self) -> tuple[np.ndarray, np.ndarray]:
        """``(features x_t, prediction yhat_t)`` from the history u_{<t}, y_{<t}."""
        lds, taps_rev, decays, C, D, _, m0 = self._route()
        x, pred = np.empty_like(self._x), np.empty(self.d_out_)
        _compiled()[0](lds, taps_rev, decays, C, D, m0, self._w, self._buf, self._pos,
                       self.coef_, self._coef_arr, self._yhist, x, pred)
        return x, pred

    def _learn_step(self, u_t: np.ndarray, y_t: np.ndarray) -> None:
        """Predict y_t, suffer ||yhat_t - y_t||^2, take the OGD step, store u_t and y_t."""
        lds, taps_rev, decays, C, D, tail, m0 = self._route()
        lr, code = self._lr_code
        # this step's predict_one left x_t and yhat_t in self._x, self._pred (the same M)
        fresh = self._fresh == (self.n_updates_, id(self.coef_))
        self._fresh = None
        loss, sq = _compiled()[1](
            lds, taps_rev, decays, C, D, tail, m0, self._w, self._buf, self._pos, self.coef_,
            self._coef_arr, self._yhist, u_t, y_t, self._learns, lr, code, self.n_updates_,
            self._peak, self._gain, self._r, self._x, self._pred, self._err, fresh)
        if not np.isfinite(loss):
            raise LearnerDivergedError(self.n_updates_, type(self).__name__,
                                       huge_stream_cause(self.n_updates_,
                                                         **{"u's features": self._x,
                                                            "y": y_t}))
        self._pos = (self._pos + 1) % self._taps.shape[0]
        if sq > self._peak:
            self._peak = sq
        self.n_updates_ += 1

    def predict_one(self, x):
        """river's ``predict_one``: the prediction of y_t, given the input ``x`` = u_t.

        The prediction uses the history u_{<t}, y_{<t} only (module docstring), so ``x`` is
        validated but does not enter it, and nothing changes: calling it twice gives the same
        value. ``x`` is a number, a 1-D array or a dict of numbers (as river passes features;
        keys are matched by name, a feature never learned is ignored); ``{}`` on a
        feature-less stream (module docstring of :mod:`~lds_toolkit.learning._protocol`).

        Returns one form per target stream, cold or warm: a ``dict`` for dict targets, a
        ``float`` when there is one output, else an array of shape (d_out,). A cold learner (no
        target seen yet) predicts ``0.0``, as every learner here predicts yhat_0 = 0 (an
        :class:`LDSOracle` predicts C x_0 in its system's output form).
        """
        if not self._started():
            dims = self._cold_dims()
            if dims is None:
                self._check_params()
                codec = self._make_codecs()[0]
                if not _is_featureless(x, codec):
                    codec.encode(x)  # the value is checked even when cold
                return 0.0
            self.reset(*dims)
        codec_x, codec_y = self._codecs
        if self._own_past:
            self._check_featureless(x)
        elif codec_x.fast_encode(x) is None:
            codec_x.encode(x, register=False)
        if type(self)._predict_now is not StreamingProtocol._predict_now:
            return codec_y.decode(self._predict_now()[1])
        lds, taps_rev, decays, C, D, _, m0 = self._route()
        _compiled()[0](lds, taps_rev, decays, C, D, m0, self._w, self._buf, self._pos,
                       self.coef_, self._coef_arr, self._yhist, self._x, self._pred)
        self._fresh = (self.n_updates_, id(self.coef_))  # learn_one of this step reuses them
        return codec_y.decode(self._pred)

    def _check_featureless(self, x) -> None:
        if not (isinstance(x, Mapping) and not x):
            raise ValueError(f"x (u_t) must be an empty dict, as in the first call: a "
                             f"feature-less stream's input is its own past target "
                             f"(u_t = y_t), got {type(x).__name__} {x!r:.80}")

    def learn_one(self, x, y=None):
        """river's ``learn_one``: reveal the pair (u_t, y_t) = (``x``, ``y``) of step t.

        Predicts y_t from the history (as :meth:`predict_one`), suffers
        ||yhat_t - y_t||^2, takes one projected OGD step and appends u_t, y_t to the
        history. A cold learner sizes itself (d_in, d_out) from the first pair. ``x`` and
        ``y`` are numbers, 1-D arrays or dicts of numbers (dict features by name: a missing
        one counts as 0, a new one becomes an input column whose past values were 0); a
        first ``x = {}`` makes a feature-less stream, whose input is the target's own past
        (u_t = y_t; module docstring of :mod:`~lds_toolkit.learning._protocol`).
        Streaming ``predict_one(u_t)`` then ``learn_one(u_t, y_t)`` over a stream gives the
        numbers of :meth:`fit_predict`. Returns None, as river's learners do; a bad value
        changes nothing.
        """
        if y is None:
            raise TypeError("learn_one(x, y) takes the input u_t and the target y_t of one "
                            "step, as river's learners do (the former learn_one(y_t) after "
                            "predict_one(u_t) is now learn_one(u_t, y_t))")
        if self._started():
            codec_x, codec_y = self._codecs
            y_t = codec_y.fast_encode(y)
            u_t = y_t if self._own_past else codec_x.fast_encode(x)
            if u_t is not None and y_t is not None and (
                    not self._own_past or (isinstance(x, Mapping) and not x)):
                self._learn_step(u_t, y_t)
                return
        else:
            dims = self._cold_dims()
            own_past = False
            if dims is None:
                probe_x, probe_y = self._make_codecs()
                d_out = probe_y.encode(y).size
                own_past = _is_featureless(x, probe_x)
                dims = (d_out if own_past else probe_x.encode(x).size), d_out
            self.reset(*dims)
            self._own_past = own_past
        codec_x, codec_y = self._codecs
        if self._own_past:
            self._check_featureless(x)
            y_t = codec_y.encode(y)
            self._learn_step(y_t.copy(), y_t)
            return
        codec_x.encode(x, register=False)  # both checked before either is registered
        codec_y.encode(y, register=False)
        u_t, y_t = codec_x.encode(x), codec_y.encode(y)
        if u_t.size > self.d_in_:
            self._grow_inputs(u_t.size)
        self._learn_step(u_t, y_t)
