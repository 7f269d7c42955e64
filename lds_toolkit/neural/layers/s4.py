"""S4 / S4D: the state space layer (SSM, D skip, activation, output map) with convolution
and recurrent (step) modes.

:class:`S4` wraps either the diagonal SSM of :mod:`lds_toolkit.neural.layers.s4d`
(``mode="diag"``, S4D: the equations, discretisation and time-index convention are there) or
the diagonal-plus-low-rank HiPPO-LegS SSM of :mod:`lds_toolkit.neural.layers.dplr`
(``mode="dplr"``, the S4 of the S4++ paper); :func:`make_ssm` picks one. The SSM classes and
the S4D initialisations are importable from here as well.
"""

from __future__ import annotations

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
from ._bridge import remember_names
from ._init import Seed, seeded
from .dplr import DPLRSSM
from .s4d import DiagonalSSM, s4d_init, s4d_init_imag

MODES = ("diag", "dplr")
__all__ = ["S4", "DiagonalSSM", "DPLRSSM", "make_ssm", "s4d_init", "s4d_init_imag"]


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
