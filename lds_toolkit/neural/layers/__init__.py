"""The layers' room: every sequence layer of :mod:`lds_toolkit.neural`, its private cores and
the blocks that stack layers into models.

Each layer maps (batch, length, d_model) -> (batch, length, d_model), is built as
``Layer(d_model)`` with its paper's defaults, and each SSM layer exports itself as an
:class:`~lds_toolkit.systems.LDS` (``to_lds()``). What lives where:

* :mod:`~lds_toolkit.neural.layers.s4`: :class:`S4` (S4D with ``mode="diag"``, S4-LegS with
  ``mode="dplr"``); its SSMs :mod:`~lds_toolkit.neural.layers.s4d` (:class:`DiagonalSSM`)
  and :mod:`~lds_toolkit.neural.layers.dplr` (:class:`DPLRSSM`);
* :mod:`~lds_toolkit.neural.layers.s4plus`: :class:`S4Plus` (State Memory Replay) and
  :class:`S4PlusPlus`;
* :mod:`~lds_toolkit.neural.layers.stu`: :class:`STU`, on the spectral filters of
  :mod:`lds_toolkit.learning.filters`;
* :mod:`~lds_toolkit.neural.layers.focus`: :class:`Focus`;
* :mod:`~lds_toolkit.neural.layers.las`: :class:`LaSAttention`;
* :mod:`~lds_toolkit.neural.layers.blocks`: :class:`Block`, :class:`MLP`,
  :class:`SelfAttention`, :class:`SequenceModel` and the layer names of
  :func:`resolve_layer`;
* private cores: ``_ssm_base`` (what the SSMs share), ``_bridge`` (layer <-> LDS),
  ``_hippo``, ``_powers``, ``_fftconv`` (causal FFT convolution), ``_focus_hyper`` and
  ``_focus_iir`` (Focus), ``_las_core``, ``_las_reference``, ``_decayed_sdpa``,
  ``_scored_attention`` and ``_streamed_attention`` (LaS and S4++'s attention), ``_init``
  (seeded initialisation) and ``_recompute`` (activation recomputation; the user's switch is
  :func:`~lds_toolkit.neural.training.recompute.set_recompute`).

The layers import the neural helpers (``lds_toolkit.neural._validation``, ``_cast``),
``systems`` and ``learning``; never the training room.
"""

from __future__ import annotations

from ._ssm_base import ssm_parameter_groups
from .blocks import LAYER_REGISTRY, MLP, Block, SelfAttention, SequenceModel, resolve_layer
from .dplr import DPLRSSM
from .focus import Focus
from .las import LaSAttention
from .s4 import S4
from .s4d import DiagonalSSM
from .s4plus import S4Plus, S4PlusPlus, StateMemoryReplay
from .stu import STU, LDSFit

__all__ = [
    "S4", "DiagonalSSM", "DPLRSSM", "S4Plus", "S4PlusPlus", "StateMemoryReplay", "STU",
    "LDSFit", "Focus", "LaSAttention", "Block", "MLP", "SelfAttention", "SequenceModel",
    "LAYER_REGISTRY", "resolve_layer", "ssm_parameter_groups",
]
