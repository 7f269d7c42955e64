"""Blocks and models that stack any sequence layer (S4, S4+, S4++, STU, Focus, LaS, attention).

A *sequence layer* is an ``nn.Module`` built as ``Layer(d_model, **kwargs)`` that maps
(batch, length, d_model) -> (batch, length, d_model). Optionally it has a recurrent mode:
``initial_state(batch, dtype=None, device=None)`` and ``step(x_t, state) -> (y_t, state)``.

:class:`Block` is the usual residual block around such a layer::

    prenorm (default):  x <- x + drop(layer(norm(x)));   x <- x + drop(mlp(norm(x)))
    postnorm:           x <- norm(x + drop(layer(x)));   x <- norm(x + drop(mlp(x)))

with ``mlp = Linear(d, r d) -> activation -> Linear(r d, d)``. :class:`SequenceModel` adds an
input encoder (token embedding or linear), ``n_layers`` blocks, a final norm, optional pooling
and an output head. Norms, MLPs and heads act position-wise, so a model is causal when its
layers are (and ``pool`` is None), and has a step mode when its layers do.

``norm="batch"`` (:class:`SequenceBatchNorm`, the LaS paper's Table 4 "batch norm", as
state-spaces/s4's ``norm: batch``) normalises each channel with statistics over the batch
and the positions. In training mode those statistics mix positions and sequences, so an
output at t depends, through the mean and variance, on later positions of the batch: the
model is causal in evaluation mode (running statistics, a fixed affine map per channel)
only.
"""

from __future__ import annotations

import importlib
import math
from collections.abc import Callable

import torch
from torch import nn
from torch.nn import functional as F

from .._cast import AUTOCAST_DEVICES, cast_call
from .._validation import (
    check_choice,
    check_divisible,
    check_flag,
    check_int,
    check_same_device,
    check_sequence,
    check_step_input,
    make_dropout,
    values_checked,
    watch_outputs,
)
from ._init import Seed, seeded

# name -> (module, relative to this package, class); a layer module is imported only when its
# name is first used, so building a model imports just the layers it needs; an unknown name
# fails clearly.
LAYER_REGISTRY: dict[str, tuple[str, str]] = {
    "s4": (".s4", "S4"),
    "s4d": (".s4", "S4"),
    "s4plus": (".s4plus", "S4Plus"),
    "s4+": (".s4plus", "S4Plus"),
    "s4plusplus": (".s4plus", "S4PlusPlus"),
    "s4++": (".s4plus", "S4PlusPlus"),
    "stu": (".stu", "STU"),
    "focus": (".focus", "Focus"),
    "las": (".las", "LaSAttention"),
    "attention": (".blocks", "SelfAttention"),
}

LayerSpec = str | type | Callable[..., nn.Module]


def resolve_layer(layer: LayerSpec) -> Callable[..., nn.Module]:
    """Return a factory ``f(d_model, **kwargs) -> nn.Module`` for a layer name, class or callable.

    Names (case-insensitive): ``s4``/``s4d``, ``s4plus``/``s4+``, ``s4plusplus``/``s4++``,
    ``stu``, ``focus``, ``las``, ``attention``.
    """
    if isinstance(layer, str):
        key = layer.lower()
        if key not in LAYER_REGISTRY:
            raise ValueError(
                f"resolve_layer: unknown layer {layer!r}; known: {sorted(LAYER_REGISTRY)}"
            )
        module_name, cls_name = LAYER_REGISTRY[key]
        try:
            module = importlib.import_module(module_name, __package__)
        except ModuleNotFoundError as exc:
            raise ValueError(
                f"resolve_layer: layer {layer!r} needs {__package__}{module_name}, "
                f"which is not available ({exc})"
            ) from exc
        return getattr(module, cls_name)
    if callable(layer):
        return layer
    raise TypeError(
        f"resolve_layer: layer must be a name, an nn.Module class or a callable, "
        f"got {type(layer).__name__}"
    )


_NORMS = ("layer", "rms", "batch", "none")
_MLP_ACTIVATIONS = {"gelu": F.gelu, "relu": F.relu, "silu": F.silu}


class SequenceBatchNorm(nn.BatchNorm1d):
    r"""Batch normalisation of each channel over the batch and the positions.

    For x of shape (batch, length, d) (or (batch, d) in step mode), channel c becomes

    .. math::

        y_{b,t,c} = \gamma_c \frac{x_{b,t,c} - \mu_c}{\sqrt{\sigma_c^2 + \epsilon}} + \beta_c,

    with :math:`\mu_c, \sigma_c^2` the mean and (biased) variance over every (b, t) of the
    batch in training mode (and the running averages updated with ``momentum``), the running
    averages in evaluation mode: ``nn.BatchNorm1d`` on the (batch * length, d) view, which is
    state-spaces/s4's ``norm: batch`` (it transposes to (batch, d, length)). Computed in the
    input's dtype.
    """

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        shape = x.shape
        flat = x.reshape(-1, shape[-1])
        if self.training:
            mean = flat.mean(dim=0)
            var = flat.var(dim=0, unbiased=False)
            with torch.no_grad():  # running statistics as nn.BatchNorm1d keeps them
                self.num_batches_tracked.add_(1)
                f = (1.0 / float(self.num_batches_tracked) if self.momentum is None
                     else self.momentum)
                n = flat.shape[0]
                unbiased = var.detach() * (n / max(n - 1, 1))
                self.running_mean.mul_(1 - f).add_(f * mean.detach().to(self.running_mean))
                self.running_var.mul_(1 - f).add_(f * unbiased.to(self.running_var))
        else:
            mean, var = self.running_mean.to(x.dtype), self.running_var.to(x.dtype)
        y = (flat - mean) * torch.rsqrt(var + self.eps)
        if self.affine:
            y = y * self.weight.to(x.dtype) + self.bias.to(x.dtype)
        return y.reshape(shape)


def _norm(kind: str, d: int) -> nn.Module:
    if kind == "layer":
        return nn.LayerNorm(d)
    if kind == "rms":
        return nn.RMSNorm(d)
    if kind == "batch":
        return SequenceBatchNorm(d)
    return nn.Identity()


class MLP(nn.Module):
    """Position-wise ``Linear(d, h) -> activation -> Linear(h, d)``."""

    def __init__(self, d_model: int, hidden: int, activation: str = "gelu"):
        super().__init__()
        watch_outputs(self)  # NaN/inf outputs of finite inputs raise
        self.fc1, self.fc2 = nn.Linear(d_model, hidden), nn.Linear(hidden, d_model)
        self.act = _MLP_ACTIVATIONS[activation]

    def forward(self, x):
        return cast_call(self.fc2, self.act(cast_call(self.fc1, x)))


class SelfAttention(nn.Module):
    """Multi-head softmax self-attention with ``scaled_dot_product_attention`` (baseline layer).

    ``y = W_o softmax(Q Kᵀ / sqrt(d_head) + mask) V`` with Q, K, V linear maps of x; causal by
    default (position t attends to 0..t). No positional encoding of its own.
    """

    def __init__(self, d_model: int, n_heads: int = 1, *, causal: bool = True, seed: Seed = None):
        super().__init__()
        watch_outputs(self)  # NaN/inf outputs of finite inputs raise
        name = type(self).__name__
        self.d_model = check_int(d_model, "d_model", name)
        self.n_heads = check_int(n_heads, "n_heads", name)
        check_divisible(d_model, n_heads, "d_model", "n_heads", name)
        self.causal = check_flag(causal, "causal", name)
        with seeded(seed, name):
            self.qkv = nn.Linear(d_model, 3 * d_model)
            self.out = nn.Linear(d_model, d_model)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        name = type(self).__name__
        check_sequence(x, self.d_model, name)
        check_same_device(self, x, name)
        B, L, d = x.shape
        h = self.n_heads
        q, k, v = cast_call(self.qkv, x).view(B, L, 3, h, d // h).permute(2, 0, 3, 1, 4)
        o = F.scaled_dot_product_attention(q, k, v, is_causal=self.causal)
        return cast_call(self.out, o.transpose(1, 2).reshape(B, L, d))


class Block(nn.Module):
    """Residual block: norm, sequence layer, residual; norm, MLP, residual.

    Parameters
    ----------
    d_model : channels.
    layer : layer name (see :func:`resolve_layer`), class, or callable ``f(d_model, **kw)``.
    layer_kwargs : keyword arguments for the layer.
    norm : ``"layer"`` (LayerNorm, default), ``"rms"`` (RMSNorm), ``"batch"``
        (:class:`SequenceBatchNorm`: causal in evaluation mode only) or ``"none"``.
    prenorm : normalise before the layer (default) or after the residual sum.
    mlp_ratio : MLP hidden width / d_model; 0 drops the MLP sub-block (default 4).
    activation : MLP activation ``"gelu"`` (default), ``"relu"`` or ``"silu"``.
    dropout : dropout on both residual branches (default 0).
    seed : int, torch.Generator or None; seeds the block's parameters (layer included).
    """

    def __init__(
        self,
        d_model: int,
        layer: LayerSpec = "s4",
        *,
        layer_kwargs: dict | None = None,
        norm: str = "layer",
        prenorm: bool = True,
        mlp_ratio: float = 4.0,
        activation: str = "gelu",
        dropout: float = 0.0,
        seed: Seed = None,
    ):
        super().__init__()
        name = type(self).__name__
        self.d_model = check_int(d_model, "d_model", name)
        check_choice(norm, "norm", name, _NORMS)
        check_choice(activation, "activation", name, tuple(_MLP_ACTIVATIONS))
        if not mlp_ratio >= 0:
            raise ValueError(f"{name}: mlp_ratio must be >= 0, got {mlp_ratio}")
        self.prenorm = check_flag(prenorm, "prenorm", name)
        factory = resolve_layer(layer)
        with seeded(seed, name):
            self.layer = factory(d_model, **(layer_kwargs or {}))
            self.norm1 = _norm(norm, d_model)
            hidden = int(math.ceil(mlp_ratio * d_model))
            self.mlp = MLP(d_model, hidden, activation) if hidden > 0 else None
            self.norm2 = _norm(norm, d_model) if self.mlp is not None else None
        self.drop = make_dropout(dropout, type(self).__name__)

    def _sub(self, x, fn, norm):
        if self.prenorm:
            return x + self.drop(fn(cast_call(norm, x)))
        return cast_call(norm, x + self.drop(fn(x)))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # compiled (train(compile=True), whose data are checked once): no check here, whose
        # context-variable read would break the graph
        if not torch.compiler.is_compiling():
            check_sequence(x, self.d_model, type(self).__name__)
        x = self._sub(x, self.layer, self.norm1)
        if self.mlp is not None:
            x = self._sub(x, self.mlp, self.norm2)
        return x

    def initial_state(self, batch: int, dtype=None, device=None):
        """The layer's recurrent state at the start of a sequence (needs a step mode)."""
        if not hasattr(self.layer, "step"):
            raise TypeError(f"Block: layer {type(self.layer).__name__} has no step mode")
        return self.layer.initial_state(batch, dtype=dtype, device=device)

    def step(self, x_t: torch.Tensor, state):
        """One step: x_t (batch, d_model) -> (y_t, state); needs a layer with a step mode."""
        check_step_input(x_t, self.d_model, type(self).__name__)
        out = {}

        def layer_step(z):
            y, out["state"] = self.layer.step(z, state)
            return y

        x_t = self._sub(x_t, layer_step, self.norm1)
        if self.mlp is not None:
            x_t = self._sub(x_t, self.mlp, self.norm2)
        return x_t, out["state"]


_POOLS = ("none", "mean", "last", "cummean")


def _float32_stream(z: torch.Tensor) -> torch.Tensor:
    """The residual stream in float32 under autocast: a linear encoder gives bf16 there, and
    a bf16 stream would round every block's sum and norm (measured: 1.2 % max-relative for a
    two-block S4 model, d_model 16, against float32; 0.7 % with this float32 stream). The
    layers and MLPs still run their projections in bf16; an embedding's output is float32
    already."""
    kind = z.device.type
    if (z.dtype in (torch.bfloat16, torch.float16) and kind in AUTOCAST_DEVICES
            and torch.is_autocast_enabled(kind)):
        return z.float()
    return z


class SequenceModel(nn.Module):
    """Encoder -> ``n_layers`` :class:`Block` s -> final norm -> pooling -> head.

    Parameters
    ----------
    d_model : width of the blocks.
    n_layers : number of blocks.
    layer : layer name, class or callable (as :class:`Block`); ``layer_kwargs`` go to it.
    vocab_size : if given, inputs are token ids (batch, length) embedded with ``nn.Embedding``
        and the head defaults to ``vocab_size`` logits.
    d_input : if given (and no vocab), inputs (batch, length, d_input) pass a linear encoder;
        with neither, inputs must already be (batch, length, d_model).
    d_output : output width of the linear head (default: vocab_size, else no head).
    pool : ``"none"`` (default, one output per position), ``"mean"`` (over positions; not
        causal), ``"last"`` (the last position), for sequence classification, or
        ``"cummean"``: one output per position ``t``, from the mean of the blocks' outputs at
        positions ``0..t`` (causal; at the last position it equals ``"mean"``; read at the
        last real token of an end-padded sequence it is the mean over that sequence,
        state-spaces/s4's ``decoder.mode=pool`` with lengths).
    tie_embeddings : share the embedding matrix with the head (needs d_output == vocab_size).
    norm, prenorm, mlp_ratio, activation, dropout : as :class:`Block`.
    seed : int, torch.Generator or None; seeds every parameter of the model.

    Notes
    -----
    Token ids outside ``[0, vocab_size)`` are refused with a ``ValueError`` naming the range
    found, at the cost of one device-to-host read per call. The check follows
    :func:`~lds_toolkit.neural.input_checks` and is skipped inside ``torch.compile``:
    :func:`~lds_toolkit.neural.training.train` checks its data's ids once, on the host, and
    trains with the per-call checks off.
    """

    def __init__(
        self,
        d_model: int,
        n_layers: int,
        layer: LayerSpec = "s4",
        *,
        layer_kwargs: dict | None = None,
        vocab_size: int | None = None,
        d_input: int | None = None,
        d_output: int | None = None,
        pool: str = "none",
        tie_embeddings: bool = False,
        norm: str = "layer",
        prenorm: bool = True,
        mlp_ratio: float = 4.0,
        activation: str = "gelu",
        dropout: float = 0.0,
        seed: Seed = None,
    ):
        super().__init__()
        name = type(self).__name__
        self.d_model = check_int(d_model, "d_model", name)
        check_int(n_layers, "n_layers", name, minimum=0)
        self.pool = check_choice(pool, "pool", name, _POOLS)
        self.vocab_size = None if vocab_size is None else check_int(vocab_size, "vocab_size", name)
        self.d_input = None if d_input is None else check_int(d_input, "d_input", name)
        if self.vocab_size is not None and self.d_input is not None:
            raise ValueError(f"{name}: give vocab_size (tokens) or d_input (vectors), not both")
        if d_output is None and self.vocab_size is not None:
            d_output = self.vocab_size
        self.d_output = None if d_output is None else check_int(d_output, "d_output", name)
        with seeded(seed, name):
            if self.vocab_size is not None:
                self.encoder = nn.Embedding(self.vocab_size, d_model)
            elif self.d_input is not None:
                self.encoder = nn.Linear(self.d_input, d_model)
            else:
                self.encoder = None
            self.blocks = nn.ModuleList(
                Block(
                    d_model, layer, layer_kwargs=layer_kwargs, norm=norm, prenorm=prenorm,
                    mlp_ratio=mlp_ratio, activation=activation, dropout=dropout,
                )
                for _ in range(n_layers)
            )
            self.norm = _norm(norm, d_model)
            self.head = nn.Linear(d_model, self.d_output) if self.d_output is not None else None
        check_flag(tie_embeddings, "tie_embeddings", name)
        if tie_embeddings:
            if self.vocab_size is None or self.d_output != self.vocab_size:
                raise ValueError(
                    f"{name}: tie_embeddings needs vocab_size and d_output == vocab_size"
                )
            self.head.weight = self.encoder.weight

    def _encode(self, x: torch.Tensor, step: bool) -> torch.Tensor:
        name = type(self).__name__
        if self.vocab_size is not None:
            shape = "(batch,)" if step else "(batch, length)"
            if not isinstance(x, torch.Tensor) or x.dtype not in (torch.int32, torch.int64):
                raise TypeError(f"{name}: token input must be an integer (int64) tensor {shape}")
            if x.ndim != (1 if step else 2):
                raise ValueError(
                    f"{name}: token input must have shape {shape}, got {tuple(x.shape)}"
                )
            if values_checked(x):  # not while compiling, on meta or with the checks off
                # one device-to-host read; train() checks its data once and switches this off
                lo, hi = torch.stack(torch.aminmax(x)).tolist()
                if lo < 0 or hi >= self.vocab_size:
                    raise ValueError(
                        f"{name}: token ids must lie in [0, {self.vocab_size}), got "
                        f"[{lo}, {hi}]"
                    )
            return self.encoder(x)
        d_in = self.d_input if self.d_input is not None else self.d_model
        if torch.compiler.is_compiling():
            pass  # compiled: shapes are guarded by the graph, values checked by train()
        elif step:
            check_step_input(x, d_in, name)
        else:
            check_sequence(x, d_in, name)
        return x if self.encoder is None else cast_call(self.encoder, x)

    def _head(self, z):
        z = cast_call(self.norm, z)
        return z if self.head is None else cast_call(self.head, z)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        z = _float32_stream(self._encode(x, step=False))
        for block in self.blocks:
            z = block(z)
        if self.pool == "mean":
            z = z.mean(dim=1)
        elif self.pool == "cummean":
            count = torch.arange(1, z.shape[1] + 1, device=z.device, dtype=z.dtype)
            z = torch.cumsum(z, dim=1) / count[:, None]
        elif self.pool == "last":
            z = z[:, -1]
        return self._head(z)

    def initial_state(self, batch: int, dtype=None, device=None) -> list:
        """One start-of-sequence state per block, in block order (for :meth:`step`)."""
        return [b.initial_state(batch, dtype=dtype, device=device) for b in self.blocks]

    def step(self, x_t: torch.Tensor, states: list):
        """One step (tokens (batch,) or vectors (batch, d)) -> (output (batch, d_out), states)."""
        if self.pool != "none":
            raise ValueError(f"{type(self).__name__}: step mode needs pool='none'")
        if not isinstance(states, list | tuple) or len(states) != len(self.blocks):
            got = f"{len(states)} states" if isinstance(states, list | tuple) else type(states)
            raise ValueError(f"{type(self).__name__}: states must be the list of "
                             f"{len(self.blocks)} block states from initial_state(batch), "
                             f"got {got}")
        z = _float32_stream(self._encode(x_t, step=True))
        new_states = []
        for block, s in zip(self.blocks, states):
            z, s = block.step(z, s)
            new_states.append(s)
        return self._head(z), new_states
