"""S4 / S4D: diagonal state space layer with convolution and recurrent (step) modes.

Continuous model (S4++ paper eqs. 1-2), one single-input single-output system per channel
``h = 0..H-1`` with a diagonal complex state matrix::

    x'(t) = A x(t) + B u(t),     y(t) = C x(t) + D u(t)

Discretisation with step ``dt`` (S4++ paper eqs. 3-4, bilinear; ZOH as an option)::

    x_k = Ā x_{k-1} + B̄ u_k,      y_k = C x_k + D u_k,       x_{-1} = 0
    bilinear:  Ā = (I - dt/2 A)^{-1} (I + dt/2 A),   B̄ = (I - dt/2 A)^{-1} dt B
    zoh:       Ā = exp(dt A),                         B̄ = A^{-1} (exp(dt A) - I) B

Time-index convention: ``y_k`` sees ``u_k`` (through ``C B̄`` and ``D``), so unrolling (eq. 5)
gives the causal convolution ``y = K̄ * u + D u`` with the kernel of eq. 6,
``K̄_l = C Ā^l B̄`` for ``l = 0..L-1``; ``K̄_0`` multiplies the current input. This is the index
convention of the S4 papers; scipy's ``cont2discrete(..., method="bilinear")`` gives the same
``Ā`` and ``B̄`` but writes ``x_{k+1} = Ā x_k + B̄ u_k`` and also transforms C and D.

The state is stored as ``d_state // 2`` complex modes per channel; the other half are their
complex conjugates, so ``y_k = 2 Re(C x_k) + D u_k`` and the system is real.

:class:`S4` wraps either this diagonal SSM (``mode="diag"``, S4D) or the diagonal-plus-low-rank
HiPPO-LegS SSM of :mod:`lds_toolkit.neural.layers.dplr` (``mode="dplr"``, the S4 of the S4++ paper).
"""

from __future__ import annotations

import math

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from .._cast import linear
from .._validation import (
    channels_last,
    check_choice,
    check_flag,
    check_int,
    check_same_device,
    check_sequence,
    check_step_input,
    make_dropout,
    watch_outputs,
)
from ._bridge import diagonal_modes, real_realisation, remember_names
from ._fftconv import causal_conv, compute_dtype
from ._hippo import legs_nplr
from ._init import Seed, seeded
from ._powers import linear_scan
from ._ssm_base import (
    COMPLEX,
    DISCS,
    SSMBase,
    check_positive_finite,
    check_rate,
)
from .dplr import DPLRSSM

INITS = ("lin", "inv", "legs")
MODES = ("diag", "dplr")
__all__ = ["S4", "DiagonalSSM", "DPLRSSM", "make_ssm", "s4d_init", "s4d_init_imag"]


def s4d_init_imag(d_state: int, init: str) -> torch.Tensor:
    """Imaginary parts of the S4D initialisation of A (real parts are all -1/2).

    ``"lin"`` (S4D-Lin): ``Im A_n = pi n``;
    ``"inv"`` (S4D-Inv): ``Im A_n = (N/pi) (N/(2n+1) - 1)``, ``n = 0..N/2-1``, ``N = d_state``
    (as ``dplr(init="lin"|"inv")`` in state-spaces/s4);
    ``"legs"`` (S4D-LegS): ``Im A_n = ω_n > 0``, the eigenvalues ``±iω_n`` of the skew part of
    the NPLR form of HiPPO-LegS (:mod:`lds_toolkit.neural.layers._hippo`), in increasing order.
    """
    n = torch.arange(d_state // 2, dtype=torch.float64, device="cpu")
    if init == "lin":
        return math.pi * n
    if init == "inv":
        return d_state / math.pi * (d_state / (2 * n + 1) - 1)
    if init == "legs":
        return torch.from_numpy(legs_nplr(d_state).Lambda.imag.copy())
    raise ValueError(f"s4d_init_imag: init must be one of {INITS}, got {init!r}")


def s4d_init(d_state: int, init: str) -> tuple[torch.Tensor, torch.Tensor]:
    """``(A, B)`` (complex128, (N/2,)) of the S4D initialisations: ``A_n = -1/2 + i Im A_n``
    (:func:`s4d_init_imag`) and ``B_n = 1`` for ``"lin"``/``"inv"``; for ``"legs"`` the
    diagonal part of the NPLR form ``A = V (Λ - p̃ p̃*) V*``, ``B = V B̃`` of HiPPO-LegS:
    ``A = Λ`` and ``B = B̃ / 2``.

    The factor 1/2 is the S4D paper's (its diagonal approximation of LegS halves B);
    state-spaces/s4 drops it and clips ``Im B̃`` to [-2, 2]. Measured against the LegS basis
    functions ``e^{tA} B`` (t in [0.01, 3], N = 256): relative sup-error 0.61 with the 1/2,
    1.9 without it. The factor only rescales the initial output, which ``C`` can absorb.
    """
    imag = s4d_init_imag(d_state, init)
    A = torch.complex(torch.full_like(imag, -0.5), imag)
    if init == "legs":
        B = torch.from_numpy(legs_nplr(d_state).B / 2)
    else:
        B = torch.ones(d_state // 2, dtype=torch.complex128, device="cpu")
    return A, B


def vandermonde_real(w: torch.Tensor, log_z: torch.Tensor, length: int) -> torch.Tensor:
    """``K[h, l] = 2 Re(sum_n w[h, n] z[h, n]^l)`` for l < length, with ``z = exp(log_z)``.

    Factorised as ``l = c q + r`` (``c ~ sqrt(length)``): ``z^l = z^{cq} z^r``, so only
    H N (c + length/c) complex exponentials are evaluated and the sum over n is a real batched
    matmul, instead of an (H, N, length) Vandermonde matrix (memory O(H N sqrt(L)), not O(H N L)).
    """
    c = max(1, math.isqrt(length - 1) + 1) if length > 1 else 1
    q = -(-length // c)
    rd = log_z.real.dtype
    r_pos = torch.arange(c, device=log_z.device, dtype=rd)
    q_pos = torch.arange(q, device=log_z.device, dtype=rd) * c
    zr = torch.exp(log_z.unsqueeze(-1) * r_pos)  # (H, N, c):  z^r
    zq = w.unsqueeze(-1) * torch.exp(log_z.unsqueeze(-1) * q_pos)  # (H, N, q): w z^{cq}
    zq = zq.transpose(1, 2)  # (H, q, N)
    # Re(P R) = Re P Re R - Im P Im R
    k = torch.bmm(zq.real, zr.real) - torch.bmm(zq.imag, zr.imag)  # (H, q, c)
    return 2 * k.reshape(k.shape[0], q * c)[:, :length]


class DiagonalSSM(SSMBase):
    """H independent diagonal SSMs (the S4D kernel) with D skip: (B, L, H) -> (B, L, H).

    Parameters
    ----------
    d_model : number of channels H.
    d_state : state size N per channel (even; stored as N/2 complex conjugate pairs).
    init : ``"lin"`` (S4D-Lin, default), ``"inv"`` (S4D-Inv) or ``"legs"`` (S4D-LegS: the
        diagonal part of the NPLR form of HiPPO-LegS, see :func:`s4d_init`).
    disc : ``"bilinear"`` (default, S4++ eqs. 3-6) or ``"zoh"``.
    real_transform : ``"exp"`` (default): ``Re A = -exp(log_A_real) < 0``, so ``|Ā| < 1`` for
        any ``dt > 0``; ``"none"``: ``Re A = A_real`` unconstrained (growing modes allowed).
    dt_min, dt_max : log-uniform range of the initial step ``dt`` (one per channel); ``dt`` is
        parameterised as ``exp(log_dt)`` so it stays positive.
    seed : int, torch.Generator or None; seeds the parameter initialisation.

    Notes
    -----
    Parameters (learned): ``log_dt (H,)``, ``log_A_real`` or ``A_real (H, N/2)``,
    ``A_imag (H, N/2)``, ``B`` and ``C`` complex ``(H, N/2)`` stored as real views
    ``(H, N/2, 2)``, ``D (H,)``.
    """

    ssm_parameter_names = ("log_dt", "A_imag", "B")

    def __init__(
        self,
        d_model: int,
        d_state: int = 64,
        *,
        init: str = "lin",
        disc: str = "bilinear",
        real_transform: str = "exp",
        dt_min: float = 1e-3,
        dt_max: float = 1e-1,
        seed: Seed = None,
    ):
        super().__init__(
            d_model, d_state, init=init, inits=INITS, disc=disc, real_transform=real_transform,
            dt_min=dt_min, dt_max=dt_max, seed=seed,
        )
        A, B = s4d_init(self.d_state, self.init)
        H = self.d_model
        self._register_A(A.repeat(H, 1))
        self.B = self._complex_parameter(B.repeat(H, 1))

    # --- discretised parameters -------------------------------------------------------------
    def continuous(self, dtype: torch.dtype = torch.float64):
        """Return (dt (H,), A (H, N/2), B (H, N/2), C (H, N/2)) in the real ``dtype`` / complex."""
        rd = compute_dtype(dtype)
        B = torch.view_as_complex(self.B.to(rd))
        return self._step_size(rd), self._A_diag(rd), B, self._C(rd)

    def discrete(self, dtype: torch.dtype = torch.float32, *, rate: float = 1.0):
        """Return (Ā, B̄, C) as complex (H, N/2) tensors, plus log Ā (for Vandermonde powers),
        for the step ``dt · rate``."""
        dt, A, B, C = self.continuous(dtype)
        dt = dt * rate
        dtA = dt[:, None] * A
        if self.disc == "bilinear":
            denom = 1 - dtA / 2
            dA = (1 + dtA / 2) / denom
            dB = dt[:, None] * B / denom
            log_dA = torch.log(dA)  # any branch: exp(l log Ā) = Ā^l for integer l
        else:
            dA = torch.exp(dtA)
            dB = B * torch.expm1(dtA) / A
            log_dA = dtA
        return dA, dB, C, log_dA

    def kernel(self, length: int, dtype: torch.dtype = torch.float32, *, rate: float = 1.0):
        """Convolution kernel ``K̄_l = 2 Re(sum_n C_n Ā_n^l B̄_n)``, shape (H, length) (eq. 6).

        Computed in float64 and returned in ``dtype``'s precision: the powers ``Ā^l`` carry
        phases ``l arg Ā`` of thousands of radians (S4D-LegS has ``Im A`` up to ~1300 at
        N = 64), which float32 rounds to ~1e-4; the cost is O(H N sqrt(L)) exponentials.
        """
        dA, dB, C, log_dA = self.discrete(torch.float64, rate=rate)
        return vandermonde_real(C * dB, log_dA, length).to(compute_dtype(dtype))

    # --- chunked convolution mode ------------------------------------------------------------
    def _forward_with_state(self, u, state, return_state, rate):
        """``forward`` with an initial state and/or returning the final one: the free response
        ``2 Re(C Ā^{k+1} x_{-1})`` is added, using the full Vandermonde matrix ``Ā^l``
        (O(H N L) memory; powers in float64 as in :meth:`kernel`)."""
        L = u.shape[1]
        rd = compute_dtype(u.dtype)
        cd = COMPLEX[rd]
        dA, dB, C, log_dA = self.discrete(torch.float64, rate=rate)
        k = vandermonde_real(C * dB, log_dA, L).to(rd)  # (H, L)
        ut = u.transpose(1, 2).to(rd)  # (B, H, L)
        y = causal_conv(ut, k) + self.D.to(rd)[:, None] * ut
        pos = torch.arange(L, device=u.device, dtype=torch.float64)
        vander = torch.exp(log_dA.unsqueeze(-1) * pos).to(cd)  # (H, N/2, L)
        dA, dB, C = dA.to(cd), dB.to(cd), C.to(cd)
        if state is not None:
            state = self._check_state(state, u.shape[0], rd)
            # x_k gets Ā^{k+1} x_{-1}: C Ā^{k+1} = (C Ā) Ā^k
            y = y + 2 * torch.einsum("hn,bhn,hnl->bhl", C, dA * state, vander).real
        y = y.transpose(1, 2).to(u.dtype)
        if not return_state:
            return y
        # x_{L-1} = sum_l Ā^{L-1-l} B̄ u_l (+ Ā^L x_{-1})
        new_state = torch.einsum("hnl,bhl->bhn", vander.flip(-1), ut.to(cd)) * dB
        if state is not None:
            new_state = new_state + (torch.exp(log_dA * L)).to(cd) * state
        return y, new_state

    def _states(self, u, x0, rate):
        dA, dB, _, _ = self.discrete(torch.float64, rate=rate)
        v = dB.unsqueeze(-2) * u.to(torch.float64).transpose(1, 2).unsqueeze(-1)  # (B,H,L,N/2)
        x0 = None if x0 is None else x0.to(torch.complex128)
        return linear_scan(dA, v, x0).transpose(1, 2).to(COMPLEX[u.dtype])

    # --- recurrent mode ----------------------------------------------------------------------
    def step(self, u_t: torch.Tensor, state: torch.Tensor, *, rate: float = 1.0):
        """One recurrent step: ``x_k = Ā x_{k-1} + B̄ u_k``, ``y_k = 2 Re(C x_k) + D u_k``.

        ``u_t`` (B, H), ``state`` = ``x_{k-1}`` (B, H, N/2) complex -> (``y_k`` (B, H), ``x_k``).
        The step is evaluated in float64 and ``x_k`` stored in the input's precision: a float32
        ``Ā`` would be off by ~6e-8 in phase, an error that every step repeats (measured
        1.2e-4 against the convolution at L = 1024 for S4D-LegS; now ~1e-6).
        """
        name = type(self).__name__
        check_step_input(u_t, self.d_model, name, "u_t")
        rate = check_rate(rate, name)
        rd = compute_dtype(u_t.dtype)
        state = self._check_state(state, u_t.shape[0], rd)
        dA, dB, C, _ = self._step_matrices(torch.float64, rate)
        u = u_t.to(torch.float64)
        x = dA * state + dB * u.unsqueeze(-1)
        y = 2 * (C * x).sum(-1).real + self.D.to(torch.float64) * u
        return y.to(u_t.dtype), x.to(COMPLEX[rd])

    # --- LDS bridge ---------------------------------------------------------------------------
    def _real_blocks(self, continuous, rate):
        if continuous:
            dt, A, B, C = self.continuous(torch.float64)
            a, b = (dt * rate)[:, None] * A, (dt * rate)[:, None] * B
        else:
            a, b, C, _ = self.discrete(torch.float64, rate=rate)
        return real_realisation(a, b, C)

    @classmethod
    def from_lds(
        cls,
        system,
        *,
        disc: str = "bilinear",
        dt: float = 1.0,
        d_state: int | None = None,
        real_transform: str = "exp",
        dtype: torch.dtype = torch.float64,
    ) -> DiagonalSSM:
        """A diagonal SSM whose channels are the given linear system(s).

        Parameters
        ----------
        system : LDS, S4Recursion or a sequence of them (``control.StateSpace`` accepted)
            A diagonalisable :class:`lds_toolkit.systems.LDS` with one input and output per
            channel, realised so that each channel is separate (``A`` block-diagonal up to a
            permutation, each block driven by one input and read by the same output, ``D``
            diagonal — what :meth:`to_lds` returns); or a list of single-input single-output
            systems, one per channel. A **continuous** system is taken in the layer's time
            unit (``A`` becomes the layer's ``A``, discretised at step ``dt``); a **discrete**
            one is read with the standard recursion (python-control's, what :meth:`to_lds`
            exports; ``A`` must be invertible) and an :class:`lds_toolkit.systems.S4Recursion`
            (what :meth:`s4_recursion` exports) with the S4 recursion; discrete eigenvalues
            are mapped back through ``disc`` at step ``dt`` (bilinear:
            ``λ = (2/Δ)(λ_d - 1)/(λ_d + 1)``; zoh: ``λ = log(λ_d)/Δ``, principal branch).
        disc : ``"bilinear"`` or ``"zoh"``, the layer's discretisation.
        dt : the layer's step ``Δ`` (default 1: time measured in samples, as :meth:`to_lds`).
        d_state : state size (default: twice the largest number of modes of a channel);
            channels with fewer modes get padding modes with ``B = C = 0``.
        real_transform : as the constructor; ``"exp"`` needs every ``Re λ < 0``.
        dtype : parameter dtype of the returned module (default float64, the system's
            precision: float32 parameters would round the modes to ~1e-7).

        Notes
        -----
        Eigenvalues with ``Im λ > 0`` stand for a conjugate pair (one stored mode), real ones
        take one stored mode each; modes not driven or not read (``B̃ = 0`` or ``C̃ = 0``
        exactly) are dropped. Raises ValueError for a system that is not channel-separable,
        not diagonalisable (eigenvector condition number > 1e8), or whose discrete eigenvalue
        has no preimage under ``disc`` (-1 bilinear, 0 zoh).
        """
        name = f"{cls.__name__}.from_lds"
        disc = check_choice(disc, "disc", name, DISCS)
        dt = check_positive_finite(dt, "dt", name)
        lam, b, c, d = diagonal_modes(system, disc=disc, dt=dt, owner=name)
        n_modes = max(len(x) for x in lam)
        if d_state is None:
            d_state = max(2, 2 * n_modes)
        d_state = check_int(d_state, "d_state", name, minimum=2)
        if d_state < 2 * n_modes:
            raise ValueError(
                f"{name}: d_state={d_state} is too small for {n_modes} modes in one channel "
                f"(need d_state >= {2 * n_modes})"
            )
        ssm = cls(len(lam), d_state, disc=disc, real_transform=real_transform, seed=0)
        ssm.to(dtype).set_modes(lam, b, c, d, dt)
        ssm.init = "from_lds"
        remember_names(ssm, system)  # the exports give the system's signal names back
        return ssm

    @torch.no_grad()
    def set_modes(self, lam, b, c, d, dt) -> None:
        """Set the continuous modes: per channel ``h`` lists/arrays ``lam[h], b[h], c[h]`` (at
        most N/2 complex values each; missing slots become ``λ = -1/2``, ``B = C = 0``), the
        feed-through ``d (H,)`` and the step ``dt`` (float or (H,))."""
        name = f"{type(self).__name__}.set_modes"
        H, N2 = self.d_model, self.d_state // 2
        if not (len(lam) == len(b) == len(c) == H):
            raise ValueError(f"{name}: need one entry per channel ({H}) in lam, b and c")
        Lm = np.full((H, N2), -0.5 + 0j)
        Bm = np.zeros((H, N2), dtype=np.complex128)
        Cm = np.zeros((H, N2), dtype=np.complex128)
        for h in range(H):
            m = len(lam[h])
            if m > N2 or len(b[h]) != m or len(c[h]) != m:
                raise ValueError(
                    f"{name}: channel {h} needs as many values in lam, b, c and at most "
                    f"{N2} of them, got {m}, {len(b[h])}, {len(c[h])}"
                )
            Lm[h, :m], Bm[h, :m], Cm[h, :m] = lam[h], b[h], c[h]
        if self.real_transform == "exp" and not np.all(Lm.real < 0):
            raise ValueError(
                f"{name}: real_transform='exp' needs Re λ < 0 for every mode, got max Re λ = "
                f"{Lm.real.max():g}; use real_transform='none'"
            )
        dev, dtp = self.log_dt.device, self.log_dt.dtype
        dt = np.broadcast_to(np.asarray(dt, dtype=np.float64), (H,))

        def put(p, value):
            p.copy_(torch.as_tensor(np.ascontiguousarray(value)).to(device=dev, dtype=dtp))

        put(self.log_dt, np.log(dt))
        if self.real_transform == "exp":
            put(self.log_A_real, np.log(-Lm.real))
        else:
            put(self.A_real, Lm.real)
        put(self.A_imag, Lm.imag)
        put(self.B, np.stack([Bm.real, Bm.imag], -1))
        put(self.C, np.stack([Cm.real, Cm.imag], -1))
        put(self.D, np.asarray(d, dtype=np.float64))


def make_ssm(
    d_model: int,
    d_state: int = 64,
    *,
    mode: str = "diag",
    init: str | None = None,
    disc: str = "bilinear",
    real_transform: str = "exp",
    dt_min: float = 1e-3,
    dt_max: float = 1e-1,
    owner: str = "S4",
) -> DiagonalSSM | DPLRSSM:
    """The SSM kernel of an S4-family layer: :class:`DiagonalSSM` for ``mode="diag"`` (default
    ``init="lin"``) or :class:`DPLRSSM` for ``mode="dplr"`` (``init="legs"``, the only one)."""
    mode = check_choice(mode, "mode", owner, MODES)
    kwargs = dict(disc=disc, real_transform=real_transform, dt_min=dt_min, dt_max=dt_max)
    if mode == "dplr":
        return DPLRSSM(d_model, d_state, init="legs" if init is None else init, **kwargs)
    return DiagonalSSM(d_model, d_state, init="lin" if init is None else init, **kwargs)


_ACTIVATIONS = ("gelu", "silu", "relu", "tanh", "identity")


def activation(name: str):
    return {
        "gelu": F.gelu,
        "silu": F.silu,
        "relu": F.relu,
        "tanh": torch.tanh,
        "identity": lambda x: x,
    }[name]


class S4(nn.Module):
    """S4 / S4D layer: SSM, D skip, activation and position-wise output map.

    ``y = W_out(act(K̄ * u + D u))`` with ``W_out`` a linear map ``d -> 2d`` followed by a GLU
    (the output stage of state-spaces/s4 ``S4D``); the SSM part is :class:`DiagonalSSM`
    (``mode="diag"``, S4D) or :class:`DPLRSSM` (``mode="dplr"``, S4 with HiPPO-LegS in
    diagonal-plus-low-rank form) — module docstrings: equations, discretisation and
    time-index convention. Causal: ``y_k`` depends on ``u_0..u_k`` only.

    Parameters
    ----------
    d_model : channels; input and output have shape (batch, length, d_model).
    d_state : SSM state size N per channel (default 64, as state-spaces/s4).
    mode : ``"diag"`` (S4D, default) or ``"dplr"`` (S4-LegS, as the S4++ paper's baseline).
    init : diag: ``"lin"`` (S4D-Lin, default), ``"inv"`` (S4D-Inv) or ``"legs"`` (S4D-LegS);
        dplr: ``"legs"`` (default and only choice).
    disc : ``"bilinear"`` (default, as the S4++ paper eqs. 3-6) or ``"zoh"``.
    real_transform : ``"exp"`` (default, ``Re A < 0`` forced) or ``"none"`` (unconstrained).
    dt_min, dt_max : range of the log-uniform initial step (default 1e-3, 1e-1).
    activation : ``"gelu"`` (default), ``"silu"``, ``"relu"``, ``"tanh"`` or ``"identity"``.
    output_linear : apply the ``d -> 2d`` linear + GLU output map (default True).
    dropout : dropout after the activation (default 0).
    transposed : inputs and outputs of ``forward`` are (batch, d_model, length) (default
        False: (batch, length, d_model)); ``step`` always takes (batch, d_model).
    seed : int, torch.Generator or None; seeds all parameter draws.

    Modes
    -----
    ``forward(x)`` convolution mode (FFT, O(L log L)); ``step(x_t, state)`` recurrent mode with
    ``initial_state(batch)``; ``forward(x, state, return_state=True)`` chains chunks;
    ``states(x)`` returns every SSM state. ``rate`` (keyword of ``forward``, ``step``,
    ``states``, ``kernel``, ``to_lds``) multiplies the step ``Δ``, as in state-spaces/s4. The
    computation follows the input's dtype (parameters are cast; half precision runs the FFT in
    float32) and must be on the parameters' device.

    Bridge: ``to_lds()`` exports the SSM part as an :class:`lds_toolkit.systems.LDS` (a
    ``control.StateSpace`` that python-control simulates to the SSM output), ``s4_recursion()``
    as the S4 matrices (:class:`lds_toolkit.systems.S4Recursion`), and ``S4.from_lds(system)``
    builds a layer whose SSM is a given system.
    """

    def __init__(
        self,
        d_model: int,
        d_state: int = 64,
        *,
        mode: str = "diag",
        init: str | None = None,
        disc: str = "bilinear",
        real_transform: str = "exp",
        dt_min: float = 1e-3,
        dt_max: float = 1e-1,
        activation: str = "gelu",
        output_linear: bool = True,
        dropout: float = 0.0,
        transposed: bool = False,
        seed: Seed = None,
    ):
        super().__init__()
        watch_outputs(self)  # NaN/inf outputs of finite inputs raise
        name = type(self).__name__
        self.d_model = check_int(d_model, "d_model", name)
        self.activation = check_choice(activation, "activation", name, _ACTIVATIONS)
        if not isinstance(transposed, bool):
            raise TypeError(f"{name}: transposed must be a bool, got {type(transposed).__name__}")
        self.transposed = transposed
        check_flag(output_linear, "output_linear", name)
        with seeded(seed, name):
            self._build_pre(d_model)
            self.ssm = make_ssm(
                d_model, d_state, mode=mode, init=init, disc=disc, real_transform=real_transform,
                dt_min=dt_min, dt_max=dt_max, owner=name,
            )
            self.out = nn.Linear(d_model, 2 * d_model) if output_linear else None
        self.mode = mode
        self.dropout = make_dropout(dropout, type(self).__name__)

    def _build_pre(self, d_model: int) -> None:
        """Hook for subclasses that transform the SSM input (S4+'s state memory replay)."""

    def _post(self, y: torch.Tensor) -> torch.Tensor:
        y = self.dropout(activation(self.activation)(y))
        if self.out is not None:
            y = F.glu(linear(self.out, y), dim=-1)
        return y

    def _input(self, x: torch.Tensor) -> torch.Tensor:
        """Checked input in the (batch, length, d_model) layout."""
        name = type(self).__name__
        if self.transposed:
            x = channels_last(x, self.d_model, name)
        else:
            check_sequence(x, self.d_model, name)
        check_same_device(self, x, name)
        return x

    def _output(self, y: torch.Tensor) -> torch.Tensor:
        return y.transpose(1, 2) if self.transposed else y

    def forward(self, x: torch.Tensor, state=None, return_state: bool = False, *, rate=1.0):
        x = self._input(x)
        if not return_state and state is None:
            return self._output(self._post(self.ssm(x, rate=rate)))
        y, new_state = self.ssm(x, state, return_state=True, rate=rate)
        y = self._output(self._post(y))
        return (y, new_state) if return_state else y

    def initial_state(self, batch: int, dtype: torch.dtype | None = None, device=None):
        """Zero SSM state ``x_{-1}``, complex (batch, d_model, d_state/2) (see
        :meth:`DiagonalSSM.initial_state`)."""
        return self.ssm.initial_state(batch, dtype, device)

    def step(self, x_t: torch.Tensor, state, *, rate: float = 1.0):
        """One step of the recurrence: ``x_t`` (batch, d_model) -> (``y_t``, new state)."""
        check_step_input(x_t, self.d_model, type(self).__name__)
        y, state = self.ssm.step(x_t, state, rate=rate)
        return self._post(y), state

    def states(self, x: torch.Tensor, state=None, *, rate: float = 1.0) -> torch.Tensor:
        """Every SSM state ``x_k`` after input ``k``: complex (batch, length, d_model,
        d_state/2) (for either layout of ``x``); see :meth:`DiagonalSSM.states`."""
        return self.ssm.states(self._input(x), state, rate=rate)

    def kernel(self, length: int, dtype: torch.dtype = torch.float32, *, rate: float = 1.0):
        """The SSM convolution kernel K̄ (d_model, length) of eq. 6 (without D)."""
        return self.ssm.kernel(length, dtype, rate=rate)

    def to_lds(self, channel: int | None = None, *, continuous: bool = False, rate: float = 1.0):
        """The SSM part ``u -> K̄ * u + D u`` (before activation and output map) as an
        :class:`lds_toolkit.systems.LDS` that python-control simulates to the layer's SSM
        output; see :meth:`DiagonalSSM.to_lds <lds_toolkit.neural.DiagonalSSM.to_lds>` for the
        conventions."""
        return self.ssm.to_lds(channel, continuous=continuous, rate=rate)

    def s4_recursion(self, channel: int | None = None, *, rate: float = 1.0):
        """The SSM part's S4 recursion ``x_k = Ā x_{k-1} + B̄ u_k``, ``y_k = C x_k + D u_k`` as
        an :class:`lds_toolkit.systems.S4Recursion` (not a system python-control would read
        correctly); see :meth:`DiagonalSSM.s4_recursion
        <lds_toolkit.neural.DiagonalSSM.s4_recursion>`."""
        return self.ssm.s4_recursion(channel, rate=rate)

    @classmethod
    def from_lds(
        cls,
        system,
        *,
        disc: str = "bilinear",
        dt: float = 1.0,
        d_state: int | None = None,
        real_transform: str = "exp",
        dtype: torch.dtype = torch.float64,
        **layer_kwargs,
    ):
        """A layer (``mode="diag"``) whose SSM is the given system; the other parameters
        (output map, ...) are initialised as the constructor does with ``layer_kwargs``, and the
        whole layer is cast to ``dtype`` (default float64). See :meth:`DiagonalSSM.from_lds`
        for ``system``, ``disc``, ``dt``, ``d_state``."""
        name = f"{cls.__name__}.from_lds"
        if layer_kwargs.get("mode", "diag") != "diag":
            raise ValueError(
                f"{name}: builds diagonal layers only (mode='diag'); a DPLR layer's low-rank "
                "term cannot be recovered from a system, and P = 0 would get no gradient"
            )
        layer_kwargs.pop("mode", None)
        ssm = DiagonalSSM.from_lds(
            system, disc=disc, dt=dt, d_state=d_state, real_transform=real_transform, dtype=dtype
        )
        layer = cls(ssm.d_model, ssm.d_state, disc=disc, real_transform=real_transform,
                    **layer_kwargs).to(dtype)
        layer.ssm.load_state_dict(ssm.state_dict())
        layer.ssm.init = ssm.init
        remember_names(layer.ssm, system)
        return layer
