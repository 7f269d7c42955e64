r"""S4 with HiPPO-LegS in diagonal-plus-low-rank (DPLR) form: the SSM of the S4++ paper's S4.

Per channel ``h``, in the basis of the NPLR form of HiPPO-LegS
(:mod:`lds_toolkit.neural.layers._hippo`), the continuous system has the state matrix

    A = Λ - P P*,     Λ = diag(λ_1..λ_N),  P in C^N (rank 1),

stored as its ``N/2`` modes with ``Im λ > 0`` and their conjugates: ``λ = [λ₊, λ̄₊]``,
``P = [P₊; P̄₊]``, ``B = [B₊; B̄₊]``, ``C = [C₊, C̄₊]``, so the system is real. At initialisation
``(Λ, P, B) = (Λ, p̃, B̃)`` of LegS: ``V A V* = A_LegS`` and ``V B = B_LegS`` with the unitary
``V`` of the NPLR form. ``Re λ = -exp(.)`` (``real_transform="exp"``, default) makes every
eigenvalue of ``A`` have a negative real part (``Re x*Ax = Re x*Λx - |P*x|^2 < 0``), so the
discrete system is stable for any ``Δ > 0``; ``"none"`` leaves ``Re λ`` free.

Discretisation and recursion as :class:`~lds_toolkit.neural.DiagonalSSM` (S4++ eqs. 3-6)::

    x_k = Ā x_{k-1} + B̄ u_k,    y_k = C x_k + D u_k,    x_{-1} = 0
    bilinear:  Ā = (I - Δ/2 A)^{-1} (I + Δ/2 A),     B̄ = (I - Δ/2 A)^{-1} Δ B
    zoh:       Ā = exp(Δ A),                         B̄ = ∫_0^Δ exp(s A) ds B

with ``y_k`` seeing ``u_k``: ``K̄_l = C Ā^l B̄``, ``y = K̄ * u + D u``.

**Kernel, bilinear: truncated generating function + Woodbury + Cauchy (exact).** At the
``L``-th roots of unity ``ω_j = exp(-2πi j/L)``, ``Σ_{l<L} K̄_l ω^l = C̃ (I - Ā ω)^{-1} B̄``
with ``C̃ = C (I - Ā^L)`` (because ``ω^L = 1``), and

    (I - Ā ω)^{-1} B̄ = [(1-ω) I - (Δ/2)(1+ω) A]^{-1} Δ B = M(ω)^{-1} Δ B,
    M(ω) = D(ω) + s P P*,   D(ω) = diag((1-ω) - s λ_n),   s = (Δ/2)(1+ω),
    C̃ M^{-1} Δ B = Δ [ k_{C̃B} - s k_{C̃P} k_{P*B} / (1 + s k_{P*P}) ]     (Woodbury),

where ``k_{xy}(ω) = Σ_n x_n y_n / ((1-ω) - s λ_n)`` are Cauchy-type sums over all ``N`` modes.
This form has no division by ``1 + ω`` (state-spaces/s4 writes ``2/(1+ω)``, singular at
``ω = -1``). ``K̄`` is the inverse real FFT of the ``L/2 + 1`` values. Cost per channel:
O(N L) for the Cauchy sums (memory O(N L), as state-spaces/s4's pure-torch Cauchy),
O(L log L) for the FFT, and O(N^3 log L) for ``C Ā^L`` (repeated squaring of the dense
real ``N x N`` matrix ``Ā``, see below). state-spaces/s4 avoids the last term by learning ``C̃``
itself for one fixed length; here ``C`` is the parameter, so the kernel of every length, the
recurrent mode and :meth:`to_lds` use the same system.

**Kernel, zoh:** ``exp(Δ A)`` has no diagonal-plus-low-rank structure, so ``K̄_l = C Ā^l B̄`` is
computed from the dense ``Ā`` (``torch.linalg.matrix_exp``) by doubling
(:func:`lds_toolkit.neural.layers._powers.power_kernel`): O(N^3 log L + N^2 L), exact up to
round-off.

**Precision.** The small dense parts (``Ā``, ``B̄``, ``C Ā^L``, the zoh kernel: O(N^2) numbers
per channel, but sensitive: ``‖Δ P P*‖`` reaches ``Δ N^2/2``, and float32 ``matrix_exp`` of it
was measured 3e-5 off) are computed in float64 and cast to the input's precision; the O(N L)
Cauchy sums and the FFT run in the input's precision.

**Real arithmetic for the dense parts.** In the coordinates ``ξ = (Re z_0, Im z_0, Re z_1, ...)``
of :mod:`lds_toolkit.neural.layers._bridge`, ``A`` is the real matrix of the 2x2 blocks
``[[Re λ, -Im λ], [Im λ, Re λ]]`` minus ``2 p_r p_rᵀ`` with ``p_r = (Re P_n, Im P_n)_n`` (still
diagonal plus rank one), ``B_r = (Re B_n, Im B_n)_n``, ``C_r = (2 Re C_n, -2 Im C_n)_n``. The
discretisation, ``C Ā^L``, the zoh kernel, the recurrent mode and :meth:`to_lds` use these real
``N x N`` matrices (a quarter of the work of complex ones).

**Recurrent mode and states**: ``ξ_k = Ā ξ_{k-1} + B̄ u_k``, ``y_k = C_r ξ_k + D u_k`` with the
dense ``Ā`` (O(N^2) per step), evaluated in float64 with the state stored in the input's
precision (as the diagonal layer's step); the stored state is the complex ``z`` (B, H, N/2) with
``ξ = (Re z, Im z)`` interleaved, as for the diagonal layer (``y_k = 2 Re(C z_k) + D u_k``).
"""

from __future__ import annotations

import math

import torch

from .._validation import check_step_input
from ._bridge import deinterleave, interleave, real_block_diag
from ._fftconv import compute_dtype
from ._hippo import legs_nplr
from ._init import Seed
from ._powers import linear_scan, power_kernel
from ._recompute import active, blockwise
from ._ssm_base import SSMBase, check_rate

DPLR_INITS = ("legs",)


def conj_extend(z: torch.Tensor) -> torch.Tensor:
    """``[z, z̄]`` along the last axis."""
    return torch.cat([z, z.conj()], dim=-1)


def row_times_power(row: torch.Tensor, A: torch.Tensor, power: int) -> torch.Tensor:
    """``row A^power`` for rows (..., N) and matrices (..., N, N) by binary powering.

    The squarings ``A^(2^b)`` are matrix products; the row is multiplied by those of the
    set bits of ``power`` (vector-matrix products), so the ``popcount(power) - 1`` matrix
    products with which ``torch.linalg.matrix_power`` accumulates ``A^power`` itself are
    saved, forward and backward (L = 100: 6 instead of 8 matrix products).
    """
    out = row.unsqueeze(-2)
    sq = A
    while power:
        if power & 1:
            out = out @ sq
        power >>= 1
        if power:
            sq = sq @ sq
    return out.squeeze(-2)


class DPLRSSM(SSMBase):
    """H independent S4 (DPLR, HiPPO-LegS) SSMs with D skip: (B, L, H) -> (B, L, H).

    Parameters
    ----------
    d_model : number of channels H.
    d_state : state size N per channel (even; stored as N/2 conjugate pairs).
    init : ``"legs"`` (HiPPO-LegS in NPLR form; the only choice).
    disc : ``"bilinear"`` (default, S4++ eqs. 3-6) or ``"zoh"``.
    real_transform : ``"exp"`` (default, ``Re λ < 0``) or ``"none"`` (unconstrained).
    dt_min, dt_max : log-uniform range of the initial step (default 1e-3, 1e-1).
    seed : int, torch.Generator or None.

    Notes
    -----
    Parameters (learned): ``log_dt (H,)``, ``log_A_real``/``A_real`` and ``A_imag (H, N/2)``
    (``Λ₊``), ``P``, ``B``, ``C`` complex ``(H, N/2)`` stored as real views ``(H, N/2, 2)``,
    ``D (H,)``. Module docstring: equations, kernel algorithms and their cost.
    """

    ssm_parameter_names = ("log_dt", "A_imag", "B", "P")

    def __init__(
        self,
        d_model: int,
        d_state: int = 64,
        *,
        init: str = "legs",
        disc: str = "bilinear",
        real_transform: str = "exp",
        dt_min: float = 1e-3,
        dt_max: float = 1e-1,
        seed: Seed = None,
    ):
        super().__init__(
            d_model, d_state, init=init, inits=DPLR_INITS, disc=disc,
            real_transform=real_transform, dt_min=dt_min, dt_max=dt_max, seed=seed,
        )
        nplr = legs_nplr(self.d_state)
        H = self.d_model

        self._register_A(torch.from_numpy(nplr.Lambda).repeat(H, 1))
        self.P = self._complex_parameter(torch.from_numpy(nplr.P).repeat(H, 1))
        self.B = self._complex_parameter(torch.from_numpy(nplr.B).repeat(H, 1))

    # --- continuous and discrete systems -----------------------------------------------------
    def continuous(self, dtype: torch.dtype = torch.float64):
        """``(dt (H,), Λ₊, P₊, B₊, C₊)``, the last four complex (H, N/2)."""
        rd = compute_dtype(dtype)
        P = torch.view_as_complex(self.P.to(rd))
        B = torch.view_as_complex(self.B.to(rd))
        return self._step_size(rd), self._A_diag(rd), P, B, self._C(rd)

    def dense_A(self, dtype: torch.dtype = torch.float64) -> torch.Tensor:
        """The continuous ``A`` as a real (H, N, N) matrix in the interleaved coordinates
        ``ξ = (Re z_0, Im z_0, ...)``: 2x2 blocks of ``Λ₊`` minus ``2 p_r p_rᵀ``,
        ``p_r = (Re P_n, Im P_n)_n`` (the complex ``diag(Λ) - P P*`` on ``[z; z̄]``, made real:
        :mod:`lds_toolkit.neural.layers._bridge`)."""
        _, Lam, P, _, _ = self.continuous(dtype)
        p = interleave(P)
        return real_block_diag(Lam) - 2 * p.unsqueeze(-1) * p.unsqueeze(-2)

    def discrete(self, dtype: torch.dtype = torch.float32, *, rate: float = 1.0):
        """Dense real ``(Ā (H, N, N), B̄ (H, N), C (H, N))`` in the interleaved coordinates
        (``y = C ξ + D u``), in ``dtype``'s precision, computed in float64 (module docstring)."""
        rd = compute_dtype(dtype)
        return tuple(t.to(rd) for t in self._discrete64(rate))

    def _discrete64(self, rate: float):
        dt, _, _, B, C = self.continuous(torch.float64)
        A = self.dense_A(torch.float64)
        dt = dt * rate
        Br = interleave(B)
        N = A.shape[-1]
        eye = torch.eye(N, dtype=A.dtype, device=A.device)
        if self.disc == "bilinear":
            M = eye - dt[:, None, None] / 2 * A
            # one factorisation of M for both right-hand sides [I + Δ/2 A | Δ B]
            sol = torch.linalg.solve(M, torch.cat([eye + dt[:, None, None] / 2 * A,
                                                   (dt[:, None] * Br).unsqueeze(-1)], dim=-1))
            dA, dB = sol[..., :N], sol[..., N]
        else:
            # exp([[ΔA, ΔB], [0, 0]]) = [[Ā, B̄], [0, 1]] (no inverse of A needed)
            H = A.shape[0]
            aug = torch.zeros(H, N + 1, N + 1, dtype=A.dtype, device=A.device)
            aug[:, :N, :N] = dt[:, None, None] * A
            aug[:, :N, N] = dt[:, None] * Br
            E = torch.linalg.matrix_exp(aug)
            dA, dB = E[:, :N, :N], E[:, :N, N]
        return dA, dB, interleave(2 * C.conj())

    # --- kernel ------------------------------------------------------------------------------
    def kernel(self, length: int, dtype: torch.dtype = torch.float32, *, rate: float = 1.0):
        """Convolution kernel ``K̄_l = C Ā^l B̄``, shape (H, length) (eq. 6); bilinear by
        Woodbury + Cauchy, zoh by dense powers (module docstring)."""
        rd = compute_dtype(dtype)
        if self.disc == "zoh":
            dA, dB, Cr = self._discrete64(rate)
            return power_kernel(dA, dB, Cr, length).to(rd)
        dA, _, Cr = self._discrete64(rate)
        # C Ā^L on [z; z̄] from the real row C_r Ā_r^L: its first half is conj(.)/2 (_bridge)
        row = row_times_power(Cr, dA, length)
        dt, Lam, P, B, C = self.continuous(dtype)
        dt = (dt * rate)[:, None]
        Ct = conj_extend(C - deinterleave(row).conj().to(C.dtype) / 2)
        Lf, Pf, Bf = conj_extend(Lam), conj_extend(P), conj_extend(B)
        # the four Cauchy sums' weights, for one batched matmul (H, F, N) @ (H, N, 4)
        w = torch.stack([Ct * Bf, Ct * Pf, Pf.conj() * Bf, Pf.conj() * Pf], dim=-1)
        n_freq = length // 2 + 1
        if active(self):  # the (H, F, N) sums block by block, recomputed in the backward pass
            K_hat = blockwise(self._spectrum, n_freq, -1, length, rd, dt, Lf, w)
        else:
            K_hat = self._spectrum(0, n_freq, length, rd, dt, Lf, w)
        return torch.fft.irfft(K_hat, n=length).to(rd)

    @staticmethod
    def _spectrum(start: int, stop: int, length: int, rd, dt, Lf, w) -> torch.Tensor:
        """``K̂(ω_j)`` for ``j`` in ``[start, stop)`` (H, stop - start): the Cauchy sums and
        Woodbury (module docstring)."""
        j = torch.arange(start, stop, device=Lf.device, dtype=rd)
        omega = torch.polar(torch.ones_like(j), -2 * math.pi * j / length)  # (F,)
        s = dt / 2 * (1 + omega)  # (H, F)
        denom = (1 - omega).unsqueeze(-1) - s.unsqueeze(-1) * Lf.unsqueeze(-2)  # (H, F, N)
        k = (1 / denom) @ w  # (H, F, 4)
        k_cb, k_cp, k_pb, k_pp = k.unbind(-1)
        return dt * (k_cb - s * k_cp * k_pb / (1 + s * k_pp))

    # --- chunked convolution mode and states -------------------------------------------------
    def _real_states(self, u, x0, rate):
        """(B, H, L, N) real float64 states ξ_k of the recursion, from ``u`` (B, L, H) and
        ``x0`` complex (B, H, N/2) or None (computed in float64, as ``step``)."""
        dA, dB, _ = self._discrete64(rate)
        v = dB.unsqueeze(-2) * u.to(torch.float64).transpose(1, 2).unsqueeze(-1)  # (B,H,L,N)
        x0 = None if x0 is None else interleave(x0.to(torch.complex128))
        return linear_scan(dA, v, x0, dense=True)

    def _states(self, u, x0, rate):
        xi = self._real_states(u, x0, rate).to(u.dtype)
        return deinterleave(xi).transpose(1, 2)

    def _forward_with_state(self, u, state, return_state, rate):
        """Chunked use: every state by the doubling scan (O(B H N^2 L log L)), then
        ``y_k = C ξ_k + D u_k``."""
        rd = compute_dtype(u.dtype)
        if state is not None:
            state = self._check_state(state, u.shape[0], rd)
        xi = self._real_states(u, state, rate)  # (B, H, L, N) float64
        Cr = self._discrete64(rate)[2]
        y = (xi @ Cr.unsqueeze(-1)).squeeze(-1).transpose(1, 2)
        y = (y + self.D.to(torch.float64) * u.to(torch.float64)).to(u.dtype)
        return (y, deinterleave(xi[:, :, -1].to(rd))) if return_state else y

    # --- recurrent mode ----------------------------------------------------------------------
    def step(self, u_t: torch.Tensor, state: torch.Tensor, *, rate: float = 1.0):
        """One recurrent step ``ξ_k = Ā ξ_{k-1} + B̄ u_k``, ``y_k = C ξ_k + D u_k`` with the
        dense real ``Ā`` (``ξ`` interleaves the real and imaginary parts of ``z``);
        ``u_t`` (B, H), ``state`` = ``z_{k-1}`` (B, H, N/2) -> (``y_k`` (B, H), ``z_k``)."""
        name = type(self).__name__
        check_step_input(u_t, self.d_model, name, "u_t")
        rate = check_rate(rate, name)
        rd = compute_dtype(u_t.dtype)
        state = self._check_state(state, u_t.shape[0], rd)
        dA, dB, Cr = self._step_matrices(torch.float64, rate)
        u = u_t.to(torch.float64)
        xi = (dA @ interleave(state.to(torch.complex128)).unsqueeze(-1)).squeeze(-1)
        xi = xi + dB * u[..., None]
        y = (Cr * xi).sum(-1) + self.D.to(torch.float64) * u
        return y.to(u_t.dtype), deinterleave(xi.to(rd))

    # --- LDS bridge ---------------------------------------------------------------------------
    def _real_blocks(self, continuous, rate):
        if continuous:
            dt, _, _, B, C = self.continuous(torch.float64)
            A = (dt * rate)[:, None, None] * self.dense_A(torch.float64)
            return A, (dt * rate)[:, None] * interleave(B), interleave(2 * C.conj())
        return self._discrete64(rate)
