"""What the SSM kernels :class:`~lds_toolkit.neural.DiagonalSSM` and
:class:`~lds_toolkit.neural.DPLRSSM` share: the step size, ``C``, ``D``, the real part of ``A``,
the complex state, convolution mode, the ``rate`` argument, the LDS export and the optimizer
parameter groups.

Every SSM here is, per channel ``h``, the S4 recursion (S4++ paper eqs. 3-4)::

    x_k = Ā x_{k-1} + B̄ u_k,    y_k = C x_k + D u_k,    x_{-1} = 0,

with ``Ā, B̄`` the discretisation of ``(A, B)`` at step ``Δ_h · rate``. The state is stored as
``N/2`` complex entries ``z`` standing for the ``N`` states ``[z; z̄]`` of a real system, so
``y_k = 2 Re(C z_k) + D u_k``.
"""

from __future__ import annotations

import math
from numbers import Real

import numpy as np
import torch
from torch import nn

from .._validation import (
    check_choice,
    check_int,
    check_positive_float,
    check_sequence,
    watch_outputs,
)
from ._bridge import NAMES_KEY, ChannelBlocks, export_names, names_from_tensor, names_tensor
from ._fftconv import causal_conv, compute_dtype
from ._init import Seed, on_default_device, seeded
from ._recompute import active, rowwise

COMPLEX = {torch.float32: torch.complex64, torch.float64: torch.complex128}
DISCS = ("bilinear", "zoh")
REAL_TRANSFORMS = ("exp", "none")


def check_positive_finite(value, name: str, owner: str) -> float:
    """``value`` must be a finite float > 0."""
    value = check_positive_float(value, name, owner)
    if not math.isfinite(value):
        raise ValueError(f"{owner}: {name} must be a finite float > 0, got {value!r}")
    return value


def check_rate(rate, owner: str) -> float:
    """``rate`` (it multiplies the step ``Δ``) must be a finite float > 0."""
    return check_positive_finite(rate, "rate", owner)


class SSMBase(nn.Module):
    """Base of the SSM kernels (module docstring); not used on its own.

    Subclasses register the parameters of ``A`` and ``B`` (their names, with ``log_dt``, are
    listed in ``ssm_parameter_names`` for :func:`ssm_parameter_groups`) and implement
    ``kernel``, ``step``, ``_states``, ``_forward_with_state`` and ``_real_blocks``.
    """

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        super()._save_to_state_dict(destination, prefix, keep_vars)
        names = names_tensor(self)  # the from_lds system's signal names (_bridge docstring)
        if names is not None:
            destination[prefix + NAMES_KEY] = names

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs):
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict,
                                      missing_keys, unexpected_keys, error_msgs)
        key = prefix + NAMES_KEY
        if key in state_dict:  # absent: written before names travelled, or none given
            if key in unexpected_keys:
                unexpected_keys.remove(key)
            try:
                self.__dict__["_lds_names"] = names_from_tensor(state_dict[key], key)
            except ValueError as exc:
                error_msgs.append(str(exc))

    #: parameters that state-spaces/s4 trains with their own lr and no weight decay
    ssm_parameter_names: tuple[str, ...] = ()
    #: Recompute in the backward pass (:func:`~lds_toolkit.neural.set_recompute`):
    #: the convolution on blocks of rows, and the DPLR kernel's Cauchy sums in blocks of
    #: frequencies.
    recompute = False

    def __init__(
        self,
        d_model: int,
        d_state: int,
        *,
        init: str,
        inits: tuple[str, ...],
        disc: str,
        real_transform: str,
        dt_min: float,
        dt_max: float,
        seed: Seed = None,
    ):
        super().__init__()
        watch_outputs(self)  # NaN/inf outputs of finite inputs raise
        name = type(self).__name__
        self.d_model = check_int(d_model, "d_model", name)
        self.d_state = check_int(d_state, "d_state", name, minimum=2)
        if d_state % 2:
            raise ValueError(
                f"{name}: d_state must be even (complex conjugate pairs), got {d_state}"
            )
        self.init = check_choice(init, "init", name, inits)
        self.disc = check_choice(disc, "disc", name, DISCS)
        self.real_transform = check_choice(
            real_transform, "real_transform", name, REAL_TRANSFORMS
        )
        dt_min = check_positive_float(dt_min, "dt_min", name)
        dt_max = check_positive_float(dt_max, "dt_max", name)
        if dt_min > dt_max:
            raise ValueError(f"{name}: need dt_min <= dt_max, got dt_min={dt_min}, dt_max={dt_max}")
        H, N2 = self.d_model, self.d_state // 2
        with seeded(seed, name):
            log_dt = torch.rand(H) * (math.log(dt_max) - math.log(dt_min)) + math.log(dt_min)
            C = torch.randn(H, N2, dtype=torch.complex64)
            D = torch.randn(H)
        # parameters in torch's default dtype, as nn.Linear: the deterministic inits (A, B, P)
        # are computed in float64, so torch.set_default_dtype(torch.float64) gives them exactly
        pd = torch.get_default_dtype()
        self.log_dt = nn.Parameter(log_dt.to(pd))
        self.C = nn.Parameter(torch.view_as_real(C).to(pd))
        self.D = nn.Parameter(D.to(pd))

    # --- parameters ---------------------------------------------------------------------------
    def _register_A(self, A: torch.Tensor) -> None:
        """Register Re A (as ``log_A_real`` with Re A = -exp(.) or as ``A_real``) and Im A."""
        pd = torch.get_default_dtype()
        A = A.to(device="cpu", dtype=torch.complex128)
        if self.real_transform == "exp":
            if not bool((A.real < 0).all()):
                raise ValueError(
                    f"{type(self).__name__}: real_transform='exp' needs Re A < 0 for every mode, "
                    f"got max Re A = {float(A.real.max()):g}; use real_transform='none'"
                )
            self.log_A_real = nn.Parameter(on_default_device(torch.log(-A.real).to(pd)))
        else:
            self.A_real = nn.Parameter(on_default_device(A.real.to(pd)))
        self.A_imag = nn.Parameter(on_default_device(A.imag.to(pd)))

    @staticmethod
    def _complex_parameter(z: torch.Tensor) -> nn.Parameter:
        """A complex (..., N/2) value as a parameter: its real view (..., N/2, 2)."""
        real = torch.view_as_real(z.to(torch.complex128))
        return nn.Parameter(on_default_device(real.to(torch.get_default_dtype())))

    def _real_param_name(self) -> str:
        return "log_A_real" if self.real_transform == "exp" else "A_real"

    def _A_diag(self, rd: torch.dtype) -> torch.Tensor:
        """The diagonal part of A, complex (H, N/2)."""
        if self.real_transform == "exp":
            re = -torch.exp(self.log_A_real.to(rd))
        else:
            re = self.A_real.to(rd)
        return torch.complex(re, self.A_imag.to(rd))

    def _step_size(self, rd: torch.dtype, rate: float = 1.0) -> torch.Tensor:
        return torch.exp(self.log_dt.to(rd)) * rate

    def _C(self, rd: torch.dtype) -> torch.Tensor:
        return torch.view_as_complex(self.C.to(rd))

    # --- convolution mode ---------------------------------------------------------------------
    def forward(
        self,
        u: torch.Tensor,
        state: torch.Tensor | None = None,
        return_state: bool = False,
        *,
        rate: float = 1.0,
    ):
        """Convolution mode: ``u`` (B, L, H) -> ``y = K̄ * u + D u`` (B, L, H).

        With ``state`` (``x_{-1}``, complex (B, H, N/2)) the free response of that state is
        added, and ``return_state=True`` also returns ``x_{L-1}``, so chunks can be chained.
        ``rate`` multiplies the step: the kernel is that of ``Δ · rate`` (as ``rate`` in
        state-spaces/s4: ``rate = 2`` reads a sequence sampled at half the resolution).
        """
        name = type(self).__name__
        check_sequence(u, self.d_model, name, "u")
        rate = check_rate(rate, name)
        if state is None and not return_state:
            k = self.kernel(u.shape[1], u.dtype, rate=rate)
            if active(self):  # rows in blocks, each recomputed in the backward pass
                return rowwise(lambda rows: self._convolve(rows, k), u)
            return self._convolve(u, k)
        return self._forward_with_state(u, state, return_state, rate)

    def _convolve(self, u: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
        """``y = K̄ * u + D u`` for ``u`` (B, L, H) and the kernel ``k`` (H, L)."""
        rd = compute_dtype(u.dtype)
        ut = u.transpose(1, 2).to(rd)
        y = causal_conv(ut, k) + self.D.to(rd)[:, None] * ut
        return y.transpose(1, 2).to(u.dtype)

    def states(self, u: torch.Tensor, state: torch.Tensor | None = None, *, rate: float = 1.0):
        """Every state of the recursion: ``x_k`` for ``k = 0..L-1``, complex (B, L, H, N/2).

        Runs ``x_k = Ā x_{k-1} + B̄ u_k`` from ``x_{-1} = state`` (zero by default) as a
        doubling scan (O(L log L) work, O(log L) sequential steps); equals ``step`` applied L
        times to round-off. ``x_k`` is the state *after* reading ``u_k``; the layer's SSM output
        is ``y_k = 2 Re(C x_k) + D u_k``.
        """
        name = type(self).__name__
        check_sequence(u, self.d_model, name, "u")
        rate = check_rate(rate, name)
        rd = compute_dtype(u.dtype)
        if state is not None:
            state = self._check_state(state, u.shape[0], rd)
        return self._states(u.to(rd), state, rate)

    # --- recurrent mode -----------------------------------------------------------------------
    def initial_state(self, batch: int, dtype: torch.dtype | None = None, device=None):
        """Zero state ``x_{-1}``: complex tensor (batch, H, N/2)."""
        batch = check_int(batch, "batch", type(self).__name__, minimum=0)
        dtype = compute_dtype(dtype or self.log_dt.dtype)
        device = device if device is not None else self.log_dt.device
        shape = (batch, self.d_model, self.d_state // 2)
        return torch.zeros(shape, dtype=COMPLEX[dtype], device=device)

    def _step_matrices(self, dtype: torch.dtype, rate: float):
        """``self.discrete(dtype, rate=rate)`` for ``step``, memoised while no gradient is
        recorded: the key holds every parameter's storage and version counter (bumped by any
        in-place update: optimizer steps, ``load_state_dict``), so a changed parameter is
        never served from the memo."""
        if torch.is_grad_enabled() and any(p.requires_grad for p in self.parameters()):
            return self.discrete(dtype, rate=rate)
        key = (dtype, rate) + tuple((p.data_ptr(), p._version, p.dtype, p.device)
                                    for p in self.parameters())
        memo = self.__dict__.get("_step_memo")
        if memo is None or memo[0] != key:
            memo = (key, self.discrete(dtype, rate=rate))
            self.__dict__["_step_memo"] = memo
        return memo[1]

    def _check_state(self, state, batch: int, rd) -> torch.Tensor:
        name = type(self).__name__
        shape = (batch, self.d_model, self.d_state // 2)
        if not isinstance(state, torch.Tensor) or not state.is_complex():
            raise TypeError(f"{name}: state must be a complex tensor of shape {shape}")
        if tuple(state.shape) != shape:
            raise ValueError(f"{name}: state must have shape {shape}, got {tuple(state.shape)}")
        return state.to(COMPLEX[rd])

    # --- the layer as a linear dynamical system -----------------------------------------------
    def to_lds(self, channel: int | None = None, *, continuous: bool = False, rate: float = 1.0):
        """The SSM as a real :class:`lds_toolkit.systems.LDS` (float64) that python-control and
        ``lds_toolkit.simulate`` run to the layer's own output.

        Parameters
        ----------
        channel : int or None
            One channel's single-input single-output system (``N`` states), or with ``None``
            (default) the block-diagonal system with ``H`` inputs and outputs (``H N`` states,
            channel ``h`` on states ``h N .. (h+1) N - 1``).
        continuous : bool
            Return the continuous-time system before discretisation instead (``dt = 0``).
        rate : float
            Step multiplier, as in ``forward``.

        Returns
        -------
        LDS
            **Discrete** (``dt = 1``, one sample): the standard realisation
            ``(Ā, B̄, C Ā, D + C B̄)`` of the layer's S4 recursion (state ``s_k = x_{k-1}``),
            so ``control.forced_response(sys, T, U)`` and ``lds_toolkit.simulate(sys, u)``
            (standard convention) give the SSM output ``K̄ * u + D u``. The S4 matrices
            themselves are :meth:`s4_recursion`, a different type on purpose.
            **Continuous**: ``(Δ A, Δ B, C, D)`` with time measured in samples (``Δ = Δ_h ·
            rate``, different per channel), so that the layer's discretisation at step 1
            gives the discrete system back: ``lds_toolkit.discretize(sys, 1.0,
            "s4-bilinear")`` for ``disc="bilinear"``; for ``disc="zoh"``,
            ``S4Recursion(*discretize(sys, 1.0, "zoh") matrices).to_lds()``.
            States are real, interleaving ``(Re z_n, Im z_n)`` of the layer's complex state
            (``lds_toolkit.neural.layers._bridge`` gives the transformation). Signal names: those of
            the system the layer was built from (``from_lds``), else inputs ``u[h]``, outputs
            ``y[h]`` of the channels.
        """
        blocks = self._export(channel, continuous, rate)
        if continuous:
            return blocks.lds(dt=0)
        return blocks.s4_recursion().to_lds(**blocks.names)

    def s4_recursion(self, channel: int | None = None, *, rate: float = 1.0):
        """The layer's S4 recursion ``x_k = Ā x_{k-1} + B̄ u_k``, ``y_k = C x_k + D u_k`` as an
        :class:`lds_toolkit.systems.S4Recursion` (``dt = 1``; ``channel`` and ``rate`` as in
        :meth:`to_lds`). Not an ``LDS``: python-control would read these matrices with its
        standard recursion, a different system. ``.simulate(u)`` runs it; ``.to_lds()`` is
        :meth:`to_lds`. The states ``x_k`` are the layer's states in real coordinates."""
        return self._export(channel, False, rate).s4_recursion()

    def _export_names(self, channel):
        return export_names(self, channel)

    def _export(self, channel, continuous, rate):
        name = type(self).__name__
        if channel is not None:
            channel = check_int(channel, "channel", name, minimum=0)
            if channel >= self.d_model:
                raise ValueError(
                    f"{name}: channel must be in [0, {self.d_model - 1}], got {channel}"
                )
        if not isinstance(continuous, bool):
            raise TypeError(f"{name}: continuous must be a bool, got {type(continuous).__name__}")
        rate = check_rate(rate, name)
        with torch.no_grad():
            Ar, Br, Cr = (to_numpy(t) for t in self._real_blocks(continuous, rate))
            d = to_numpy(self.D.to(torch.float64))
        sl = slice(None) if channel is None else slice(channel, channel + 1)
        return ChannelBlocks(Ar[sl], Br[sl], Cr[sl], d[sl], self._export_names(channel))

    def _real_blocks(self, continuous: bool, rate: float):
        """float64 ``(A (H, N, N), B (H, N), C (H, N))`` of the continuous (times ``Δ rate``)
        or discrete system in the real interleaved coordinates of :mod:`._bridge`."""
        raise NotImplementedError


def to_numpy(t: torch.Tensor) -> np.ndarray:
    return t.detach().to("cpu").resolve_conj().numpy()


def ssm_parameter_groups(
    model: nn.Module,
    *,
    lr: float,
    weight_decay: float = 0.0,
    ssm_lr: float | None = None,
    ssm_weight_decay: float = 0.0,
) -> list[dict]:
    """Optimizer parameter groups with the SSM parameters on their own, as state-spaces/s4 does.

    The SSM parameters (``log_dt``, the real and imaginary parts of ``A``, ``B`` and the
    low-rank ``P`` of every :class:`DiagonalSSM` / :class:`DPLRSSM` inside ``model``) get
    ``lr = ssm_lr`` (``lr`` when None) and ``weight_decay = ssm_weight_decay`` (default 0, as
    state-spaces/s4's ``_optim`` attributes); every other parameter (``C``, ``D``, linear maps,
    norms, ...) gets ``lr`` and ``weight_decay``. Empty groups are left out. Each group has a
    ``"name"`` (``"default"`` / ``"ssm"``)::

        opt = torch.optim.AdamW(ssm_parameter_groups(model, lr=4e-3, weight_decay=0.05,
                                                     ssm_lr=1e-3))
    """
    if not isinstance(model, nn.Module):
        raise TypeError(f"ssm_parameter_groups: model must be an nn.Module, got "
                        f"{type(model).__name__}")
    owner = "ssm_parameter_groups"
    lr = check_positive_float(lr, "lr", owner)
    if ssm_lr is not None:
        ssm_lr = check_positive_float(ssm_lr, "ssm_lr", owner)
    for value, label in ((weight_decay, "weight_decay"), (ssm_weight_decay, "ssm_weight_decay")):
        if isinstance(value, bool) or not isinstance(value, Real) or not value >= 0:
            raise ValueError(f"{owner}: {label} must be a float >= 0, got {value!r}")
    seen: set[int] = set()
    ssm = []
    for module in model.modules():
        if isinstance(module, SSMBase):
            names = module.ssm_parameter_names + (module._real_param_name(),)
            for n in names:
                p = getattr(module, n)
                if id(p) not in seen:
                    seen.add(id(p))
                    ssm.append(p)
    other = [p for p in model.parameters() if id(p) not in seen]
    groups = []
    if other:
        groups.append({"params": other, "lr": lr, "weight_decay": float(weight_decay),
                       "name": "default"})
    if ssm:
        groups.append({"params": ssm, "lr": lr if ssm_lr is None else ssm_lr,
                       "weight_decay": float(ssm_weight_decay), "name": "ssm"})
    return groups
