"""S4+ (State Memory Replay) and S4++ (S4+ with gated cross attention), S4++ paper eqs. 15-28.

State Memory Replay (SMR), eq. 15 / eq. 18: the SSM input is scaled by a factor in (0, 1)
computed from the last ``tau`` inputs::

    U_adj = U ⊙ σ(K_τ * lpad_{τ-1}(U)),     U_adj[k] = U[k] σ(b + Σ_{j=0}^{τ-1} w_j U[k-τ+1+j])

(depthwise: one length-``tau`` kernel per channel; tap ``w_{τ-1}`` multiplies the current input
``U[k]``). Eq. 15 pads on the left with copies of the first input ``u_1``; eq. 18 only says "left
padding". We follow eq. 15 (``smr_pad="replicate"``, default) and offer ``smr_pad="zeros"``.
Both keep the layer causal.

S4+ = SMR followed by the S4 layer (:class:`lds_toolkit.neural.S4`, any variant: S4D-Lin/Inv/LegS
with ``mode="diag"`` or the DPLR HiPPO-LegS S4 with ``mode="dplr"``). S4++ takes the same SSM
options.

S4++ (eqs. 18-28), with ``U`` the layer input (L, d) and ``U_S4+ = K̄ * U_adj + D ⊙ U_adj``::

    Q = SiLU(U W_q + b_q)        K = SiLU(U_S4+ W_k + b_k)        V = SiLU(U W_v + b_v)
    O = softmax(Q Kᵀ / sqrt(d_head) + b_pos + mask) V
    ρ = SiLU(U_S4+ W_ρ + b_ρ)     S = U_S4+ W_s + b_s
    H = SiLU((ρ ⊙ O) W_h + S)     ψ = σ(U_S4+ W_ψ + b_ψ)
    Y = ψ ⊙ H + (1 - ψ) ⊙ U

Choices where the paper is ambiguous or wrong (repeated on docs/layers/s4plusplus.md):

* eq. 22 writes the bias of V as ``b_k``; it is ``b_v`` (its own parameter in R^v).
* eqs. 27-28 write the shapes as ``n × d``; they are ``L × d``.
* eq. 23 scales by ``1/sqrt(d)``; we scale by ``1/sqrt(d_head)`` (``d_head = d_qk / n_heads``),
  the usual softmax temperature. With the defaults (``d_qk = d_model``, one head) both agree.
* ``b_pos`` is not specified. We use a learned T5-style bucketed relative-position bias (one
  scalar per head and bucket, exact for short distances and log-spaced up to
  ``rel_pos_max_distance``), which needs no maximum sequence length; initialised to zero.
* the attention is causal by default (``mask`` = -inf above the diagonal), so S4++ is a causal
  layer; ``causal=False`` gives the bidirectional attention of the cloze task (Sec. 3.2, eq. 16).
  The SSM branch is causal in both cases.
* eq. 19 omits the SSM's D term; Sec. 2.1 omits D from the notation only ("it can be viewed as a
  residual connection"), so we keep ``D ⊙ U_adj`` as in eq. 2 and the S4 code.
* the paper gives no value of ``tau``; we use ``tau = 4`` (a short local window, as in the local
  convolutions of H3/Mamba).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import torch
from torch import nn
from torch.nn import functional as F

from .._cast import linear, work_dtype
from .._validation import (
    check_choice,
    check_divisible,
    check_flag,
    check_int,
    check_same_device,
    check_sequence,
    check_step_input,
    watch_outputs,
)
from ._init import Seed, seeded
from ._scored_attention import scored_attention
from .s4 import S4, make_ssm

SMR_PADS = ("replicate", "zeros")


class StateMemoryReplay(nn.Module):
    """SMR factor of eq. 15 / 18: ``u_adj = u ⊙ σ(K_τ * lpad(u))`` (causal).

    Parameters
    ----------
    d_model : channels.
    tau : kernel width τ (>= 1); the factor at step k sees inputs k-τ+1..k.
    depthwise : one kernel per channel (default) or a full ``d -> d`` convolution.
    pad : ``"replicate"`` (eq. 15: the first input repeated τ-1 times) or ``"zeros"``.

    Notes
    -----
    ``history`` (for chunked / streaming use) holds the previous τ-1 inputs, shape
    (B, τ-1, d); ``None`` means the start of the sequence (padding applies).
    """

    def __init__(self, d_model: int, tau: int = 4, *, depthwise: bool = True, pad="replicate"):
        super().__init__()
        name = type(self).__name__
        self.d_model = check_int(d_model, "d_model", name)
        self.tau = check_int(tau, "tau", name)
        self.pad = check_choice(pad, "pad", name, SMR_PADS)
        self.depthwise = check_flag(depthwise, "depthwise", name)
        self.conv = nn.Conv1d(d_model, d_model, tau, groups=d_model if depthwise else 1)

    def _padded(self, u: torch.Tensor, history: torch.Tensor | None) -> torch.Tensor:
        """(B, τ-1+L, d): the τ-1 inputs before u (history or padding) followed by u."""
        p = self.tau - 1
        if history is None:
            if self.pad == "replicate":
                history = u[:, :1].expand(-1, p, -1)
            else:
                history = u.new_zeros(u.shape[0], p, u.shape[2])
        return torch.cat([history.to(u.dtype), u], dim=1)

    def factor(self, u: torch.Tensor, history: torch.Tensor | None = None) -> torch.Tensor:
        """σ(K_τ * lpad(u)) with shape (B, L, d)."""
        up = self._padded(u, history).transpose(1, 2)
        w, b = self.conv.weight.to(u.dtype), self.conv.bias.to(u.dtype)
        z = F.conv1d(up, w, b, groups=self.conv.groups)
        return torch.sigmoid(z).transpose(1, 2)

    def forward(self, u: torch.Tensor, history: torch.Tensor | None = None) -> torch.Tensor:
        return u * self.factor(u, history)

    def next_history(self, u: torch.Tensor, history: torch.Tensor | None) -> torch.Tensor:
        """The last τ-1 inputs after consuming u (B, L, d)."""
        p = self.tau - 1
        return self._padded(u, history)[:, u.shape[1] :][:, -p:] if p else u[:, :0]

    def step(self, u_t: torch.Tensor, history: torch.Tensor | None):
        """(u_adj_t (B, d), new history) for one input u_t (B, d)."""
        window = self._padded(u_t.unsqueeze(1), history)  # (B, tau, d): u_{t-tau+1} .. u_t
        w, b = self.conv.weight.to(u_t.dtype), self.conv.bias.to(u_t.dtype)
        if self.depthwise:
            z = torch.einsum("btd,dt->bd", window, w[:, 0])
        else:
            z = torch.einsum("btm,dmt->bd", window, w)
        return u_t * torch.sigmoid(z + b), window[:, 1:]


class S4PlusState(NamedTuple):
    """Recurrent state of S4+: SSM state (B, H, N/2) complex and SMR history (B, τ-1, d)."""

    ssm: torch.Tensor
    history: torch.Tensor | None


class S4Plus(S4):
    """S4+ (S4++ paper Sec. 3.1, eq. 15): S4 layer whose input passes State Memory Replay.

    ``x_k = Ā x_{k-1} + B̄ u_k σ(K_τ * lpad(u))_k``, then ``y = W_out(act(C x + D u_adj))``
    exactly as :class:`~lds_toolkit.neural.S4` on the adjusted input ``u_adj``.

    Parameters
    ----------
    d_model, d_state : as :class:`~lds_toolkit.neural.S4`.
    **s4_kwargs : ``mode``, ``init``, ``disc``, ``real_transform``, ``dt_min``, ``dt_max``,
        ``activation``, ``output_linear``, ``dropout``, ``transposed``, ``seed``,
        as :class:`~lds_toolkit.neural.S4` (every SSM variant: ``mode="diag"`` with
        ``init="lin"|"inv"|"legs"``, or ``mode="dplr"``).
    tau : SMR kernel width (default 4; the paper gives no value).
    smr_depthwise : depthwise SMR convolution (default) or full channel mixing.
    smr_pad : ``"replicate"`` (eq. 15, default) or ``"zeros"``.

    Notes
    -----
    Causal; ``step``/``initial_state`` give the recurrent mode (state: :class:`S4PlusState`),
    and ``forward(x, state, return_state=True)`` chains chunks; ``rate``, ``states``,
    ``to_lds`` and ``from_lds`` as :class:`~lds_toolkit.neural.S4` (``to_lds`` describes the SSM
    after the SMR pre-filter; ``from_lds`` sets the SSM and leaves SMR at its initialisation).
    """

    def __init__(
        self,
        d_model: int,
        d_state: int = 64,
        *,
        tau: int = 4,
        smr_depthwise: bool = True,
        smr_pad: str = "replicate",
        **s4_kwargs,
    ):
        self._smr_args = (tau, smr_depthwise, smr_pad)
        super().__init__(d_model, d_state, **s4_kwargs)

    def _build_pre(self, d_model: int) -> None:
        tau, depthwise, pad = self._smr_args
        self.smr = StateMemoryReplay(d_model, tau, depthwise=depthwise, pad=pad)

    def forward(
        self, x: torch.Tensor, state: S4PlusState | None = None, return_state=False, *, rate=1.0
    ):
        x = self._input(x)
        history = None if state is None else state.history
        u_adj = self.smr(x, history)
        if state is None and not return_state:
            return self._output(self._post(self.ssm(u_adj, rate=rate)))
        y, ssm_state = self.ssm(
            u_adj, None if state is None else state.ssm, return_state=True, rate=rate
        )
        y = self._output(self._post(y))
        if not return_state:
            return y
        return y, S4PlusState(ssm_state, self.smr.next_history(x, history))

    def states(self, x: torch.Tensor, state: S4PlusState | None = None, *, rate: float = 1.0):
        """Every SSM state after SMR: ``ssm.states(smr(x))``, complex (batch, length,
        d_model, d_state/2)."""
        x = self._input(x)
        history = None if state is None else state.history
        return self.ssm.states(self.smr(x, history), None if state is None else state.ssm,
                               rate=rate)

    def to_lds(self, channel: int | None = None, *, continuous: bool = False, rate: float = 1.0):
        """The SSM part as an :class:`lds_toolkit.systems.LDS` (see :meth:`S4.to_lds`): the map
        from the *adjusted* input ``u_adj = smr(x)`` to ``K̄ * u_adj + D u_adj``. SMR is a
        nonlinear (input-dependent) pre-filter ``u_adj_k = x_k σ(b + Σ_j w_j x_{k-τ+1+j})``
        and is not part of the system; the layer's SSM output is
        ``simulate(layer.to_lds(), layer.smr(x))`` (or ``control.forced_response`` of it)."""
        return super().to_lds(channel, continuous=continuous, rate=rate)

    def initial_state(self, batch: int, dtype: torch.dtype | None = None, device=None):
        """Zero SSM state and no SMR history (the first step pads as ``smr_pad`` says)."""
        return S4PlusState(self.ssm.initial_state(batch, dtype, device), None)

    def step(self, x_t: torch.Tensor, state: S4PlusState, *, rate: float = 1.0):
        check_step_input(x_t, self.d_model, type(self).__name__)
        if not isinstance(state, S4PlusState):
            raise TypeError("S4Plus: state must be an S4PlusState from initial_state(batch)")
        u_adj, history = self.smr.step(x_t, state.history)
        y, ssm_state = self.ssm.step(u_adj, state.ssm, rate=rate)
        return self._post(y), S4PlusState(ssm_state, history)


def relative_position_bucket(
    rel: torch.Tensor, bidirectional: bool, num_buckets: int, max_distance: int
) -> torch.Tensor:
    """T5 bucketing of ``rel = key position - query position``.

    Causal: distances ``n = max(-rel, 0)`` below ``num_buckets/2`` get their own bucket, larger
    ones share log-spaced buckets up to ``max_distance`` (then the last bucket). Bidirectional:
    half of the buckets for each sign of ``rel``.
    """
    ret = torch.zeros_like(rel)
    n = -rel
    if bidirectional:
        num_buckets //= 2
        ret = ret + (n < 0).long() * num_buckets
        n = n.abs()
    else:
        n = n.clamp(min=0)
    max_exact = max(num_buckets // 2, 1)
    is_small = n < max_exact
    ratio = torch.log(n.clamp(min=1).double() / max_exact) / math.log(
        max(max_distance / max_exact, 1.0 + 1e-9)
    )
    # + 1e-9: offsets that sit exactly on a bucket edge (e.g. n = 64 of 128) land on it
    large = max_exact + (ratio * (num_buckets - max_exact) + 1e-9).long()
    large = large.clamp(max=num_buckets - 1)
    return ret + torch.where(is_small, n, large)


class RelativePositionBias(nn.Module):
    """Learned bucketed relative-position bias ``b_pos[h, i, j] = w[h, bucket(j - i)]``.

    The bias enters the attention scores in float32 whatever the input's dtype (position
    biases are among what bf16 would spoil); positions are Python integers, so building it
    reads nothing from the device.
    """

    def __init__(self, n_heads: int, num_buckets=32, max_distance=128, *, causal=True):
        super().__init__()
        self.num_buckets, self.max_distance, self.causal = num_buckets, max_distance, causal
        self.weight = nn.Parameter(torch.zeros(n_heads, num_buckets))

    def offset_table(self, n_q: int, n_k: int, q_offset: int = 0) -> tuple[torch.Tensor, int]:
        """``(table, lo)``: the bias of every offset ``j - i`` between queries at positions
        ``q_offset .. q_offset + n_q - 1`` and keys at ``0 .. n_k - 1``, as (n_heads,
        n_offsets) in float32 (float64 for float64 weights), with ``table[:, o - lo]`` the
        bias of offset ``o``: each distinct offset is bucketed once, O(n_q + n_k)."""
        lo = -(q_offset + n_q - 1)
        offsets = torch.arange(lo, n_k - q_offset, device=self.weight.device)
        buckets = relative_position_bucket(
            offsets, not self.causal, self.num_buckets, self.max_distance
        )
        return self.weight.to(work_dtype(self.weight.dtype))[:, buckets], lo

    def shift(self, n_q: int, n_k: int, q_offset: int = 0):
        """The bias as a function ``f(head, i, j)`` of absolute query and key positions, for
        :func:`~lds_toolkit.neural.layers._scored_attention.scored_attention`."""
        table, lo = self.offset_table(n_q, n_k, q_offset)

        def bias(h: torch.Tensor, i: torch.Tensor, j: torch.Tensor) -> torch.Tensor:
            return table[h, j - i - lo]

        return bias

    def forward(self, n_q: int, n_k: int, q_offset: int = 0) -> torch.Tensor:
        """The bias (n_heads, n_q, n_k) for queries at ``q_offset ..`` and keys at ``0 ..``."""
        i = torch.arange(q_offset, q_offset + n_q, device=self.weight.device)[:, None]
        j = torch.arange(n_k, device=self.weight.device)[None, :]
        h = torch.arange(self.weight.shape[0], device=self.weight.device)[:, None, None]
        return self.shift(n_q, n_k, q_offset)(h, i, j)


class S4PlusPlusState(NamedTuple):
    """Recurrent state of S4++ (causal only): S4+ part, key/value caches, position."""

    ssm: torch.Tensor
    history: torch.Tensor | None
    keys: torch.Tensor
    values: torch.Tensor


class S4PlusPlus(nn.Module):
    """S4++ layer (S4++ paper Sec. 3.3, eqs. 18-28): S4+ with gated cross attention.

    See the module docstring for the equations and the choices made where the paper is
    ambiguous. Causal by default; ``causal=False`` makes the attention bidirectional.

    Parameters
    ----------
    d_model : channels d; input and output (batch, length, d_model).
    d_state, mode, init, disc, real_transform, dt_min, dt_max : SSM options as
        :class:`~lds_toolkit.neural.S4` (``mode="dplr"``: the DPLR HiPPO-LegS SSM).
    d_qk : query/key width q (default d_model).
    d_v : value width v (default d_model).
    n_heads : attention heads (default 1, as the paper); must divide d_qk and d_v.
    tau, smr_depthwise, smr_pad : SMR options as :class:`S4Plus`.
    causal : causal attention (default True).
    rel_pos_buckets, rel_pos_max_distance : relative-position bias buckets (32, 128).
    attn_block : queries per attention block (default 1024) where the attention is computed
        as explicit float32 scores (CPU, eager CUDA): with gradients and more than one block,
        each block is recomputed in the backward pass (activation checkpointing), so memory
        stays O(attn_block * L) rather than O(L^2). Compiled on CUDA, the attention is one
        fused flex_attention kernel with the position bias as its ``score_mod``
        (:mod:`~lds_toolkit.neural.layers._scored_attention`).
    seed : int, torch.Generator or None.
    """

    def __init__(
        self,
        d_model: int,
        d_state: int = 64,
        *,
        d_qk: int | None = None,
        d_v: int | None = None,
        n_heads: int = 1,
        tau: int = 4,
        smr_depthwise: bool = True,
        smr_pad: str = "replicate",
        causal: bool = True,
        rel_pos_buckets: int = 32,
        rel_pos_max_distance: int = 128,
        attn_block: int = 1024,
        mode: str = "diag",
        init: str | None = None,
        disc: str = "bilinear",
        real_transform: str = "exp",
        dt_min: float = 1e-3,
        dt_max: float = 1e-1,
        seed: Seed = None,
    ):
        super().__init__()
        watch_outputs(self)  # NaN/inf outputs of finite inputs raise
        name = type(self).__name__
        self.d_model = check_int(d_model, "d_model", name)
        self.d_qk = check_int(d_qk if d_qk is not None else d_model, "d_qk", name)
        self.d_v = check_int(d_v if d_v is not None else d_model, "d_v", name)
        self.n_heads = check_int(n_heads, "n_heads", name)
        check_divisible(self.d_qk, self.n_heads, "d_qk", "n_heads", name)
        check_divisible(self.d_v, self.n_heads, "d_v", "n_heads", name)
        self.causal = check_flag(causal, "causal", name)
        self.attn_block = check_int(attn_block, "attn_block", name)
        check_int(rel_pos_buckets, "rel_pos_buckets", name, minimum=2)
        check_int(rel_pos_max_distance, "rel_pos_max_distance", name)
        d, q, v = self.d_model, self.d_qk, self.d_v
        with seeded(seed, name):
            self.smr = StateMemoryReplay(d, tau, depthwise=smr_depthwise, pad=smr_pad)
            self.ssm = make_ssm(
                d, d_state, mode=mode, init=init, disc=disc, real_transform=real_transform,
                dt_min=dt_min, dt_max=dt_max, owner=name,
            )
            self.q_proj = nn.Linear(d, q)  # eq. 20, from U
            self.k_proj = nn.Linear(d, q)  # eq. 21, from U_S4+
            self.v_proj = nn.Linear(d, v)  # eq. 22, from U
            self.rho_proj = nn.Linear(d, v)  # eq. 24
            self.s_proj = nn.Linear(d, d)  # eq. 25
            self.h_proj = nn.Linear(v, d, bias=False)  # eq. 26 (bias carried by S)
            self.psi_proj = nn.Linear(d, d)  # eq. 27
        self.pos_bias = RelativePositionBias(
            self.n_heads, rel_pos_buckets, rel_pos_max_distance, causal=self.causal
        )

    # --- pieces ------------------------------------------------------------------------------
    def _heads(self, t: torch.Tensor) -> torch.Tensor:
        B, L, w = t.shape
        return t.view(B, L, self.n_heads, w // self.n_heads).transpose(1, 2)

    def _attend(self, q, k, v, q_offset: int = 0):
        """Eq. 23 on heads (B, h, n_q, d_head) of queries at positions ``q_offset ..`` over
        keys and values at ``0 ..``: scores, bias and softmax in float32
        (:func:`~lds_toolkit.neural.layers._scored_attention.scored_attention`, in blocks of
        ``attn_block`` queries outside the fused route)."""
        shift = self.pos_bias.shift(q.shape[2], k.shape[2], q_offset)
        return scored_attention(q, k, v, shift=shift, causal=self.causal, q_offset=q_offset,
                                block=self.attn_block)

    def attention(self, Q, K, V) -> torch.Tensor:
        """O of eq. 23 for (B, L, q/k/v) inputs."""
        O = self._attend(self._heads(Q), self._heads(K), self._heads(V))
        B, L = O.shape[0], O.shape[2]
        return O.transpose(1, 2).reshape(B, L, self.d_v)

    @torch.no_grad()
    def attention_weights(self, x: torch.Tensor) -> torch.Tensor:
        """softmax(Q Kᵀ/sqrt(d_head) + b_pos + mask) of eq. 23, (B, n_heads, L, L); O(L^2)
        memory, for inspection and figures."""
        check_sequence(x, self.d_model, type(self).__name__)
        s4 = self.ssm(self.smr(x))
        Q = self._heads(F.silu(linear(self.q_proj, x)))
        K = self._heads(F.silu(linear(self.k_proj, s4)))
        L = x.shape[1]
        pos = torch.arange(L, device=x.device)
        scores = Q @ K.transpose(-1, -2) / math.sqrt(Q.shape[-1])
        scores = scores + self.pos_bias(L, L).to(scores.dtype)
        if self.causal:
            scores = scores.masked_fill(pos[None, :] > pos[:, None], float("-inf"))
        return torch.softmax(scores, dim=-1)

    def _combine(self, x, s4, O):
        rho = F.silu(linear(self.rho_proj, s4))  # eq. 24
        S = linear(self.s_proj, s4)  # eq. 25
        H = F.silu(linear(self.h_proj, rho * O) + S)  # eq. 26
        psi = torch.sigmoid(linear(self.psi_proj, s4))  # eq. 27
        return psi * H + (1 - psi) * x  # eq. 28

    # --- modes -------------------------------------------------------------------------------
    def forward(self, x: torch.Tensor, *, rate: float = 1.0) -> torch.Tensor:
        name = type(self).__name__
        check_sequence(x, self.d_model, name)
        check_same_device(self, x, name)
        s4 = self.ssm(self.smr(x), rate=rate)  # eqs. 18-19
        Q = F.silu(linear(self.q_proj, x))  # eq. 20
        K = F.silu(linear(self.k_proj, s4))  # eq. 21
        V = F.silu(linear(self.v_proj, x))  # eq. 22
        return self._combine(x, s4, self.attention(Q, K, V))

    def initial_state(self, batch: int, dtype: torch.dtype | None = None, device=None):
        """Start-of-sequence state of the causal layer: zero SSM state, no SMR history, empty
        key/value caches (batch, n_heads, 0, d_head)."""
        if not self.causal:
            raise ValueError("S4PlusPlus: step mode needs causal=True (bidirectional attention "
                             "sees future inputs)")
        dtype = dtype or self.q_proj.weight.dtype
        device = device if device is not None else self.q_proj.weight.device
        h = self.n_heads
        empty_k = torch.zeros(batch, h, 0, self.d_qk // h, dtype=dtype, device=device)
        empty_v = torch.zeros(batch, h, 0, self.d_v // h, dtype=dtype, device=device)
        return S4PlusPlusState(self.ssm.initial_state(batch, dtype, device), None, empty_k, empty_v)

    def step(self, x_t: torch.Tensor, state: S4PlusPlusState, *, rate: float = 1.0):
        """One step with key/value caches: O(t) work at step t."""
        name = type(self).__name__
        if not self.causal:
            raise ValueError(f"{name}: step mode needs causal=True")
        check_step_input(x_t, self.d_model, name)
        if not isinstance(state, S4PlusPlusState):
            raise TypeError(f"{name}: state must be an S4PlusPlusState from initial_state(batch)")
        u_adj, history = self.smr.step(x_t, state.history)
        s4, ssm_state = self.ssm.step(u_adj, state.ssm, rate=rate)
        dt = x_t.dtype
        q = self._heads(F.silu(linear(self.q_proj, x_t)).unsqueeze(1))
        k = self._heads(F.silu(linear(self.k_proj, s4)).unsqueeze(1))
        v = self._heads(F.silu(linear(self.v_proj, x_t)).unsqueeze(1))
        keys = torch.cat([state.keys.to(dt), k], dim=2)
        values = torch.cat([state.values.to(dt), v], dim=2)
        O = self._attend(q, keys, values, keys.shape[2] - 1)
        O = O.transpose(1, 2).reshape(x_t.shape[0], self.d_v)
        y = self._combine(x_t, s4, O)
        return y, S4PlusPlusState(ssm_state, history, keys, values)
