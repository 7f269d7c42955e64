"""The S4 + cross-attention layer of the ``cloze`` experiment (S4++ paper, Sec. 3.2, eq. 16).

Kept apart from :mod:`.cloze` because it subclasses ``torch.nn.Module``: the experiment
module itself imports without torch (``lds-toolkit list`` and ``report`` need no torch) and
imports this one when a model is built.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from ...neural import S4


class S4WithCrossAttention(nn.Module):
    r"""f_{φ,θ}(u) = f_θ(u) + f_φ(u, f_θ(u)) of the S4++ paper, Sec. 3.2.

    f_θ is a causal S4 layer, y = f_θ(u); f_φ is the bidirectional cross attention of eq. 16,
    ``softmax((u W_q)(y W_k)ᵀ / sqrt(d)) (u W_v)`` (queries and values from the input, keys
    from the SSM output). Maps (batch, length, d) -> (batch, length, d).
    """

    def __init__(self, d_model: int, d_state: int = 64):
        super().__init__()
        self.ssm = S4(d_model, d_state)
        self.q = nn.Linear(d_model, d_model)
        self.k = nn.Linear(d_model, d_model)
        self.v = nn.Linear(d_model, d_model)

    def forward(self, u: torch.Tensor) -> torch.Tensor:
        y = self.ssm(u)
        q, k, v = self.q(u), self.k(y), self.v(u)
        # non-causal: position 63 must see position 94
        return y + F.scaled_dot_product_attention(q[:, None], k[:, None], v[:, None])[:, 0]
