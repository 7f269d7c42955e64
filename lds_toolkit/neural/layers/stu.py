"""STU: spectral transform unit on the shared spectral filters of H_T.

Filters: ``sigma, phi = lds_toolkit.learning.filters.spectral_filters(T, k, kind)`` (top-k
eigenpairs of H_T, eq. 3 of the length-generalisation paper, or N_T, eq. 5), computed once per
``(T, k, kind)`` and cached; the layer never runs an eigendecomposition itself. Each filter is
scaled as in Algorithm 1, ``f_i = sigma_i^{1/4} phi_i``, and the negative-eigenvalue branch
uses ``f_i^-[j] = (-1)^j f_i[j]`` (eigenvalues alpha in [-1, 0]).

Exact form (per output, ``M_i^± in R^{d_in x d_out}``)::

    z_t = sum_i sum_{j=0}^{t} ( f_i[j] u_{t-j} M_i^+  +  f_i^-[j] u_{t-j} M_i^- )

Tensordot (approximate) form (Flash STU ``use_approx``): ``M_i^± ≈ M_in diag(m_i^±)``, so each
output channel c has one combined filter ``g_c = sum_i f_i m_i^+[c] + f_i^- m_i^-[c]``::

    z_t[c] = sum_{j=0}^{t} g_c[j] (u_{t-j} M_in)[c]

We keep separate ``m^+`` and ``m^-``: with a single shared vector (as in Flash STU's
approximate path) ``f_i + f_i^- = 2 f_i`` on even taps and 0 on odd taps, i.e. every odd tap of
the combined filter vanishes.

Optional autoregressive terms (STU paper, AR-STU), off by default as in the length-generalisation
paper's STU experiments::

    y_t = sum_{i=1}^{k_y} a_i ⊙ y_{t-i} + sum_{i=0}^{k_u-1} u_{t-i} M^u_i + z_t

with per-channel output coefficients ``a_i in R^d`` (a full-matrix M^y would need an O(L (k_y d)^2)
or sequential pass; per channel the recurrence is an IIR filter whose impulse response is
computed exactly by doubling companion-matrix powers and applied by FFT).

Time-index convention (pinned by tests): with ``lag=0`` (default) tap ``phi[0]`` multiplies
the current input ``u_t``, as S4's ``K̄_0`` and Flash STU; ``y_t`` sees ``u_t``. With ``lag=1``
the layer runs on the input delayed by one step, so ``phi[0]`` multiplies ``u_{t-1}``: the
convention of Algorithm 1 (and of ``lds_toolkit.learning``), where ``y_t`` is predicted from
``u_{t-1}, u_{t-2}, ...``. For inputs shorter than T only the first L taps of the length-T
filters act (zero history), never filters recomputed for length L.
"""

from __future__ import annotations

import copy
import functools
import math
from typing import NamedTuple

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from .._cast import full_precision
from .._validation import (
    check_choice,
    check_finite,
    check_int,
    check_same_device,
    check_sequence,
    check_step_input,
    watch_outputs,
)
from ._fftconv import causal_conv, compute_dtype, fft_len, irfft, rfft
from ._init import Seed, on_default_device, seeded
from ._recompute import active, blockwise
from ._stu_lds import STULDSState, check_tol, layer_lds, lds_step, step_matrices

FORMS = ("exact", "tensordot")
BRANCHES = ("both", "positive")
KINDS = ("H", "N")


@functools.lru_cache(maxsize=16)
def shared_filters(seq_len: int, num_filters: int, kind: str = "H"):
    """``(sigma, phi)`` from ``lds_toolkit.learning.filters.spectral_filters``, cached per key."""
    from lds_toolkit.learning.filters import spectral_filters

    sigma, phi = spectral_filters(seq_len, num_filters, kind)
    sigma, phi = np.asarray(sigma, dtype=np.float64), np.asarray(phi, dtype=np.float64)
    sigma.setflags(write=False)
    phi.setflags(write=False)
    return sigma, phi


def _transfer_product(start: int, stop: int, Uri, Fh, M) -> torch.Tensor:
    """``Y(w) = U(w) W(w)`` at frequencies ``[start, stop)``, (F, B, d_out) complex, with the
    transfer matrix ``W(w) = sum_i F_i(w) M_i`` as two real GEMMs and the products as real
    batched matmuls (complex bmm's backward is far slower); ``Uri`` stacks ``Re U`` over
    ``Im U`` (F, 2B, d_in)."""
    Uri, Fh = Uri[start:stop], Fh[start:stop]
    d = Uri.shape[-1]
    B = Uri.shape[1] // 2
    Wr = (Fh.real @ M).view(-1, d, d)
    Wi = (Fh.imag @ M).view(-1, d, d)
    P, Q = torch.bmm(Uri, Wr), torch.bmm(Uri, Wi)
    return torch.complex(P[:, :B] - Q[:, B:], Q[:, :B] + P[:, B:])


def ar_impulse_response(a: torch.Tensor, length: int) -> torch.Tensor:
    """Impulse response ``h`` (length, d) of ``y_t = sum_{i=1}^{k} a[i-1] ⊙ y_{t-i} + z_t``.

    ``h_j = e_1ᵀ C^j e_1`` with the companion matrix C of each channel; the powers C^0..C^{L-1}
    are built by doubling (``C^{m+j} = C^m C^j``), O(log L) batched matmuls.
    """
    k, d = a.shape
    first = a.t().unsqueeze(1)  # (d, 1, k)
    shift = torch.eye(k - 1, k, dtype=a.dtype, device=a.device).expand(d, k - 1, k)
    C = torch.cat([first, shift], dim=1)  # (d, k, k)
    P = torch.eye(k, dtype=a.dtype, device=a.device).expand(1, d, k, k)
    while P.shape[0] < length:
        Cm = P[-1] @ C  # C^m, m = P.shape[0]
        P = torch.cat([P, Cm @ P], dim=0)
    return P[:length, :, 0, 0]


class LDSFit(NamedTuple):
    """Result of :meth:`STU.fit_lds`.

    ``system``: the fitted discrete LDS (standard convention ``y_t = C x_t + D u_t``,
    ``x_{t+1} = A x_t + B u_t``, ``D = h_0``); ``impulse``: the layer's exact response
    (T, d_out, d_in) it is compared with; ``fitted``: the system's response over the same taps;
    ``rel_error``: ``‖fitted - impulse‖_F / ‖impulse‖_F``; ``hankel_singular_values``: all of
    them (those beyond the order were discarded).
    """

    system: object
    impulse: np.ndarray
    fitted: np.ndarray
    rel_error: float
    hankel_singular_values: np.ndarray


class STUState(NamedTuple):
    """Recurrent state: the last T inputs (B, T, d), oldest first, and the last k_y outputs."""

    inputs: torch.Tensor
    outputs: torch.Tensor


class STU(nn.Module):
    """Spectral transform unit (module docstring: equations and conventions).

    Parameters
    ----------
    d_model : channels (d_in = d_out = d_model).
    seq_len : filter length T (default 2048); inputs may be at most T long. 2048 is the
        smallest power of two at which all 24 default filters lie above the float64 round-off
        floor (at T = 1024 the 24th has sigma_24/sigma_1 = 1.1e-14 < 100 eps).
    num_filters : k, filters per branch (default 24, as the paper's LDS experiments).
    form : ``"tensordot"`` (default; the form of the paper's induction-heads STU) or ``"exact"``.
    branches : ``"both"`` (default: ± branches) or ``"positive"``.
    k_u : number of input autoregressive terms ``u_t .. u_{t-k_u+1}`` (default 0).
    k_y : number of per-channel output autoregressive terms (default 0).
    lag : input delay (default 0: ``phi[0]`` multiplies ``u_t``; 1: Algorithm 1's ``u_{t-1}``).
    filter_kind : ``"H"`` (H_T, default) or ``"N"`` (N_T of Algorithm 2).
    filters : optional ``(sigma (k,), phi (T, k))`` to use instead of the shared filters.
    seed : int, torch.Generator or None.

    Notes
    -----
    ``forward`` runs the convolutions by FFT: the exact form as one ``d_in x d_out`` transfer
    matrix per frequency, ``W(w) = sum_i F_i(w) M_i``, so its cost does not grow with batch × k;
    ``step`` is the streaming mode: by default through :meth:`to_lds`'s system, a constant
    O(d n_f d) (exact) or O(d n_f + d^2) (tensordot) per step with n_f ~ 40-100 states per
    bank; ``initial_state(..., mode="window")`` keeps the sliding window of the last T
    inputs, exact, O(T k d) per step for the exact form, O(T d) tensordot.
    """

    #: Exact form: recompute the per-frequency transfer matrices in the backward pass, in
    #: blocks of frequencies (:func:`~lds_toolkit.neural.training.recompute.set_recompute`).
    recompute = False

    def __init__(
        self,
        d_model: int,
        seq_len: int = 2048,
        num_filters: int = 24,
        *,
        form: str = "tensordot",
        branches: str = "both",
        k_u: int = 0,
        k_y: int = 0,
        lag: int = 0,
        filter_kind: str = "H",
        filters: tuple | None = None,
        seed: Seed = None,
    ):
        super().__init__()
        watch_outputs(self)  # NaN/inf outputs of finite inputs raise
        name = type(self).__name__
        self.d_model = d = check_int(d_model, "d_model", name)
        self.seq_len = check_int(seq_len, "seq_len", name)
        self.num_filters = check_int(num_filters, "num_filters", name)
        if self.num_filters > self.seq_len:
            raise ValueError(
                f"{name}: num_filters={num_filters} must be <= seq_len={seq_len} "
                "(H_T has T eigenpairs)"
            )
        self.form = check_choice(form, "form", name, FORMS)
        self.branches = check_choice(branches, "branches", name, BRANCHES)
        self.k_u = check_int(k_u, "k_u", name, minimum=0)
        self.k_y = check_int(k_y, "k_y", name, minimum=0)
        self.lag = check_int(lag, "lag", name, minimum=0)
        if self.k_u > self.seq_len:
            raise ValueError(f"{name}: k_u={k_u} must be <= seq_len={seq_len}")
        self.filter_kind = check_choice(filter_kind, "filter_kind", name, KINDS)

        sigma, phi = self._get_filters(filters)
        self._source_filters = (sigma, phi, filters is not None)  # float64, for to_lds
        # (T, k): sigma^{1/4} phi. An eigenvalue of the positive semi-definite H_T below the
        # float64 floor can come out slightly negative; its fourth root would be NaN and make
        # every output NaN, so it is clipped to 0 (its true value is ~0 to round-off; the
        # FilterPrecisionWarning already says such filters carry no signal)
        f = phi * np.maximum(sigma, 0.0)[None, :] ** 0.25
        if self.branches == "both":
            sign = np.where(np.arange(self.seq_len) % 2 == 0, 1.0, -1.0)
            f = np.concatenate([f, f * sign[:, None]], axis=1)  # (T, 2k): f^+ then f^-
        self.register_buffer("filters", on_default_device(torch.from_numpy(f)), persistent=False)
        n_f = f.shape[1]

        with seeded(seed, name):
            if self.form == "exact":
                # M[i] in R^{d_in x d_out}; rows 0..k-1 act on f^+, k..2k-1 on f^-
                self.M = nn.Parameter(torch.randn(n_f, d, d) / math.sqrt(d * n_f))
            else:
                self.M_in = nn.Parameter(torch.randn(d, d) / math.sqrt(d))
                self.M_filters = nn.Parameter(torch.randn(n_f, d) / math.sqrt(n_f))
            self.M_u = nn.Parameter(torch.zeros(self.k_u, d, d)) if self.k_u else None
            self.a_y = nn.Parameter(torch.zeros(self.k_y, d)) if self.k_y else None

    def _get_filters(self, filters):
        name = type(self).__name__
        if filters is None:
            return shared_filters(self.seq_len, self.num_filters, self.filter_kind)
        try:
            sigma, phi = (np.asarray(f) for f in filters)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"{name}: filters must be a pair (sigma, phi) of arrays") from exc
        for label, arr in (("sigma", sigma), ("phi", phi)):
            if arr.dtype.kind != "f":  # integers would be eigenpairs rounded to nothing
                raise TypeError(f"{name}: filters must be float arrays (sigma, phi) as "
                                f"spectral_filters returns them, got {label} of dtype "
                                f"{arr.dtype}")
        sigma, phi = sigma.astype(np.float64), phi.astype(np.float64)
        if sigma.shape != (self.num_filters,) or phi.shape != (self.seq_len, self.num_filters):
            raise ValueError(
                f"{name}: filters must have shapes sigma ({self.num_filters},) and phi "
                f"({self.seq_len}, {self.num_filters}), got {sigma.shape} and {phi.shape}"
            )
        if not (np.all(np.isfinite(phi)) and np.all(sigma >= 0)):
            raise ValueError(f"{name}: filters must be finite with sigma >= 0")
        return sigma, phi

    # --- pieces ------------------------------------------------------------------------------
    def channel_filters(self, dtype=torch.float64) -> torch.Tensor:
        """Tensordot form: the combined per-channel filters ``g`` (T, d)."""
        if self.form != "tensordot":
            raise ValueError("STU.channel_filters: only the tensordot form has per-channel filters")
        return self.filters.to(dtype) @ self.M_filters.to(dtype)

    def transfer_matrices(self, dtype=torch.float64) -> torch.Tensor:
        """Exact form: time-domain filter matrices ``W_j = sum_i F_i[j] M_i``, (T, d_in, d_out)."""
        if self.form != "exact":
            raise ValueError("STU.transfer_matrices: only the exact form has matrix filters")
        return torch.einsum("ti,iab->tab", self.filters.to(dtype), self.M.to(dtype))

    def _delay(self, u: torch.Tensor) -> torch.Tensor:
        if not self.lag:
            return u
        return F.pad(u, (0, 0, self.lag, 0))[:, : u.shape[1]]

    def _spectral(self, u: torch.Tensor) -> torch.Tensor:
        """z (B, L, d) from the (delayed) input u (B, L, d), by FFT, in u's dtype (float32 or
        float64). The filters, their products with the learned vectors or matrices and the
        FFTs run with autocast off (bf16 would round the filters and their spectra); only the
        tensordot form's input projection ``u M_in`` follows autocast."""
        L = u.shape[1]
        f = self.filters[:L].to(u.dtype)  # first L taps of the length-T filters
        n = fft_len(L, L)
        if self.form == "tensordot":
            v = (u @ self.M_in.to(u.dtype)).transpose(1, 2).to(u.dtype)  # (B, d, L)
            with full_precision(u.device):
                g = f @ self.M_filters.to(u.dtype)  # (L, d)
                return causal_conv(v, g.t()).transpose(1, 2)
        d = self.d_model
        with full_precision(u.device):
            U = rfft(u, n=n, dim=1).transpose(0, 1)  # (n/2+1, B, d_in)
            Fh = rfft(f, n=n, dim=0)  # (n/2+1, K)
            M = self.M.to(u.dtype).reshape(-1, d * d)
            Uri = torch.cat([U.real, U.imag], dim=1)  # (n/2+1, 2B, d_in)
            if active(self):  # the (F, d, d) transfer matrices block by block, recomputed
                Y = blockwise(_transfer_product, Uri.shape[0], 0, Uri, Fh, M)
            else:
                Y = _transfer_product(0, Uri.shape[0], Uri, Fh, M)
            return irfft(Y.transpose(0, 1), n=n, dim=1)[:, :L]

    # --- modes -------------------------------------------------------------------------------
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        name = type(self).__name__
        check_sequence(x, self.d_model, name)
        check_same_device(self, x, name)
        L = x.shape[1]
        if L > self.seq_len:
            raise ValueError(
                f"{name}: input length {L} exceeds the filter length seq_len={self.seq_len}; "
                f"build the layer with seq_len >= {L}"
            )
        cd = compute_dtype(x.dtype)
        u = self._delay(x.to(cd))
        z = self._spectral(u)
        if self.k_u:
            Mu = self.M_u.to(cd)
            for i in range(self.k_u):  # k_u is small (the STU paper uses 3)
                z = z + F.pad(u, (0, 0, i, 0))[:, :L] @ Mu[i]
        if self.k_y:
            with full_precision(x.device):  # the IIR's impulse response and its convolution
                h = ar_impulse_response(self.a_y.to(cd), L)  # (L, d)
                check_finite(h, "output-autoregressive impulse response (a_y unstable)", name, 0)
                z = causal_conv(z.to(cd).transpose(1, 2), h.t()).transpose(1, 2)
            check_finite(z, "output", name, 1)
        return z.to(x.dtype)

    # --- the layer as (an approximation by) a linear dynamical system ------------------------
    @torch.no_grad()
    def impulse_response(self, length: int | None = None) -> np.ndarray:
        """The layer's exact impulse response ``h[t, o, i]`` (float64 numpy, (length, d, d)):
        output ``o`` at time ``t`` for a unit impulse on input ``i`` at time 0, so that
        ``y_t = sum_{j<=t} h[j] u_{t-j}`` (``h[j]`` as a (d_out, d_in) matrix). Computed by
        running ``forward`` in float64 on the d impulses: exact (to round-off) because the layer
        is linear and time-invariant over its filter length; default ``length = seq_len``.

        STU is not one LDS: its filters span the responses of a whole class of systems.
        ``h`` has finite support (``seq_len + lag`` taps, longer with ``k_y``); see
        :meth:`fit_lds` for an LDS approximation.
        """
        name = type(self).__name__
        length = self.seq_len if length is None else check_int(length, "length", name)
        if length > self.seq_len:
            raise ValueError(f"{name}: length must be <= seq_len={self.seq_len}, got {length}")
        layer = copy.deepcopy(self).double().cpu()
        d = self.d_model
        x = torch.zeros(d, length, d, dtype=torch.float64)
        x[torch.arange(d), 0, torch.arange(d)] = 1.0
        y = layer(x)  # (d_in, length, d_out)
        return y.permute(1, 2, 0).numpy()

    def fit_lds(self, order: int, *, length: int | None = None,
                pair: tuple[int, int] | None = None) -> LDSFit:
        """Fit a discrete LDS of state dimension ``order`` to the layer's impulse response.

        Ho-Kalman / ERA (:func:`lds_toolkit.systems.era`) on the first ``length`` taps
        (default ``min(seq_len, 256)``), compared with the exact response over all ``seq_len``
        taps. The impulse response is exact; the LDS is a fit (exact only when the response is
        that of an LDS of at most ``order`` states, which STU's generally is not).

        Parameters
        ----------
        order : state dimension of the fit.
        length : taps used by the fit (the Hankel matrix has ``(length-1)//2`` block rows).
        pair : ``(output, input)`` to fit one single-input single-output response; default
            the full ``d x d`` system.
        """
        from lds_toolkit.systems.realization import era

        name = type(self).__name__
        length = min(self.seq_len, 256) if length is None else check_int(length, "length", name)
        h = self.impulse_response()
        if pair is not None:
            try:
                o, i = (int(v) for v in pair)
            except (TypeError, ValueError) as exc:
                raise TypeError(f"{name}: pair must be (output, input) ints, got {pair!r}") from exc
            if not (0 <= o < self.d_model and 0 <= i < self.d_model):
                raise ValueError(f"{name}: pair entries must be in [0, {self.d_model - 1}], "
                                 f"got {pair!r}")
            h = h[:, o : o + 1, i : i + 1]
        if length > h.shape[0]:
            raise ValueError(f"{name}: length must be <= seq_len={self.seq_len}, got {length}")
        system, sv = era(h[:length], order)
        fitted = system.impulse_response(h.shape[0])
        err = float(np.linalg.norm(fitted - h) / np.linalg.norm(h))
        return LDSFit(system, h, fitted, err, sv)

    def to_lds(self, channel: int | None = None, *, tol: float = 1e-6):
        """The layer as one discrete :class:`lds_toolkit.systems.LDS` (float64, dt = 1).

        Each filter is replaced by its exponential-sum fit (:func:`lds_toolkit.filters_as_lds`,
        relative L2 error <= ``tol`` per filter): one bank of n_f diagonal states per input
        channel (exact form) or per output channel (tensordot form), a delay line for ``lag``
        and ``k_u``, ``k_y`` fed-back output states; equations in
        :mod:`lds_toolkit.neural.layers._stu_lds`. ``simulate(layer.to_lds(), u)`` (standard
        convention) is ``forward`` to about ``tol`` for inputs up to ``seq_len`` long. The
        system names its inputs ``u[h]`` and outputs ``y[h]``, itself ``"STU"``.

        Parameters
        ----------
        channel : int or None
            ``None`` (default): all ``d_model`` inputs and outputs. ``i``: the single-input
            system from input ``i`` to all outputs (STU mixes channels, so one input reaches
            every output): ``simulate(layer.to_lds(i), u[:, i])`` is ``forward`` of an input
            that is zero on every other channel.
        tol : float
            Relative L2 error of the filter fit (a ValueError names the best error reached
            when no fit meets it).
        """
        name = type(self).__name__
        if channel is not None:
            channel = check_int(channel, "channel", name, minimum=0)
            if channel >= self.d_model:
                raise ValueError(f"{name}: channel must be in [0, {self.d_model - 1}], "
                                 f"got {channel}")
        with torch.no_grad():
            return layer_lds(self, channel, check_tol(tol, name))

    def initial_state(self, batch: int, dtype=None, device=None, *, mode: str = "lds",
                      tol: float = 1e-6):
        """Zero history for :meth:`step`.

        ``mode="lds"`` (default): an :class:`STULDSState` (float64 whatever ``dtype``: the
        exponential-sum coefficients cancel, see :meth:`to_lds`), constant size; ``tol`` is
        the filter fit's. ``mode="window"``: an :class:`STUState` holding the last
        ``seq_len + lag`` inputs and ``k_y`` outputs, all zero (``tol`` unused).
        """
        name = type(self).__name__
        batch = check_int(batch, "batch", name, minimum=0)
        check_choice(mode, "mode", name, ("lds", "window"))
        device = device if device is not None else self.filters.device
        if mode == "lds":
            tol = check_tol(tol, name)
            self.__dict__["_step_tol"] = tol
            d, f64 = self.d_model, torch.float64
            nw = max(self.lag + self.k_u - 1, self.lag)
            n_f = self._lds_step_matrices(tol, device).lam.numel()
            return STULDSState(torch.zeros(batch, d, n_f, dtype=f64, device=device),
                               torch.zeros(batch, nw, d, dtype=f64, device=device),
                               torch.zeros(batch, self.k_y, d, dtype=f64, device=device))
        dtype = dtype or next(self.parameters()).dtype
        return STUState(
            torch.zeros(batch, self.seq_len + self.lag, self.d_model, dtype=dtype, device=device),
            torch.zeros(batch, self.k_y, self.d_model, dtype=dtype, device=device),
        )

    def _lds_step_matrices(self, tol: float, device):
        """The step's matrices, recomputed when a parameter, the device or tol changed."""
        key = (tol, str(device)) + tuple((p.data_ptr(), p._version, p.dtype, p.device)
                                         for p in self.parameters())
        memo = self.__dict__.get("_lds_step_memo")
        if memo is None or memo[0] != key:
            with torch.no_grad():
                memo = (key, step_matrices(self, tol, device))
            self.__dict__["_lds_step_memo"] = memo
        return memo[1]

    def step(self, x_t: torch.Tensor, state):
        """One step: x_t (B, d) -> (y_t, state).

        With an :class:`STULDSState` (``initial_state``'s default): the state update of
        :meth:`to_lds`'s system, constant cost per step; equal to ``forward`` to about the
        filter fit's tol for the first seq_len steps, after which the filters' exponential
        sums continue. With an :class:`STUState` (``mode="window"``): exact for the first
        seq_len steps (the filters' support); later steps use the last seq_len inputs, a
        sliding window."""
        name = type(self).__name__
        check_step_input(x_t, self.d_model, name)
        if isinstance(state, STULDSState | STUState) and state[0].shape[0] != x_t.shape[0]:
            # the LDS route would broadcast a batch-1 state silently, the window raise raw
            raise ValueError(f"{name}: state holds a batch of {state[0].shape[0]} but x_t has "
                             f"batch {x_t.shape[0]}; make the state with "
                             f"initial_state({x_t.shape[0]})")
        if isinstance(state, STULDSState):
            tol = self.__dict__.get("_step_tol", 1e-6)
            with torch.no_grad():
                return lds_step(self, self._lds_step_matrices(tol, x_t.device), x_t, state)
        if not isinstance(state, STUState):
            raise TypeError(f"{name}: state must be an STULDSState or STUState from "
                            "initial_state(batch)")
        cd = compute_dtype(x_t.dtype)
        inputs = torch.cat([state.inputs[:, 1:].to(cd), x_t.to(cd).unsqueeze(1)], dim=1)
        T = self.seq_len
        # window of delayed inputs, most recent first: u'_{t-j} = x_{t-lag-j}, j = 0..T-1
        window = inputs.flip(1)[:, self.lag : self.lag + T]
        f = self.filters.to(cd)
        if self.form == "tensordot":
            v = (window @ self.M_in.to(cd)).to(cd)  # (B, T, d)
            with full_precision(x_t.device):
                g = f @ self.M_filters.to(cd)  # (T, d)
                z = (g.unsqueeze(0) * v).sum(1)
        else:
            with full_precision(x_t.device):
                feats = torch.einsum("btd,ti->bid", window, f)  # (B, K, d_in)
                z = torch.einsum("bia,iao->bo", feats, self.M.to(cd))
        if self.k_u:
            z = z + torch.einsum("bia,iao->bo", window[:, : self.k_u], self.M_u.to(cd))
        outputs = state.outputs.to(cd)
        if self.k_y:
            # outputs holds y_{t-k_y} .. y_{t-1} (oldest first)
            z = z + (self.a_y.to(cd) * outputs.flip(1)).sum(1)
            outputs = torch.cat([outputs[:, 1:], z.unsqueeze(1)], dim=1)
        return z.to(x_t.dtype), STUState(inputs, outputs)
