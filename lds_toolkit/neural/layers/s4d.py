"""S4D: H independent diagonal state space models, the SSM of ``S4(mode="diag")``.

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

This module holds :class:`DiagonalSSM`, its initialisations (:func:`s4d_init`,
:func:`s4d_init_imag`) and its kernel (:func:`vandermonde_real`); the layer around it is
:class:`~lds_toolkit.neural.layers.s4.S4`.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from .._validation import check_choice, check_int, check_step_input
from ._bridge import diagonal_modes, real_realisation, remember_names
from ._fftconv import causal_conv, compute_dtype
from ._hippo import legs_nplr
from ._init import Seed
from ._powers import linear_scan
from ._ssm_base import COMPLEX, DISCS, SSMBase, check_positive_finite, check_rate

INITS = ("lin", "inv", "legs")
__all__ = ["DiagonalSSM", "s4d_init", "s4d_init_imag", "vandermonde_real"]


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
