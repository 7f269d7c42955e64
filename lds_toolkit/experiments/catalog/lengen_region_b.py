"""``lengen-region-b``: Figure 3 of the length-generalization paper.

Algorithm 1 (spectral filtering) on random symmetric LDSs with every eigenvalue in Region B,
with contexts T^q; the protocol is in :mod:`._lengen_common`, the experiment shared with
Figures 2 and 4 in :mod:`._lengen_learning`.
"""

from __future__ import annotations

from ..base import register
from ..claims import Claim
from ._lengen_learning import LENGEN, RATIO_SPREAD, _LengenLearning, class_level_claim


@register
class LengenRegionB(_LengenLearning):
    name = "lengen-region-b"
    description = "Algorithm 1 on Region B systems, contexts T^q (Figure 3)"
    paper = "length generalization, Fig. 3"
    region, algorithm = "B", 1
    claims = (
        Claim("short-fails", LENGEN, "Fig. 3",
              "Region B: context T^{1/2} is at least 5x worse than full context",
              "ratio_to_full_short", ">=", 5.0, scales=("quick", "paper"),
              spread=RATIO_SPREAD, note="ratio of the seed means of the final loss"),
        Claim("monotone", LENGEN, "Fig. 3",
              "Region B: the loss ratio to full context does not increase with q",
              "ratio_to_full_by_q", "nonincreasing", 0.05, scales=("quick", "paper")),
        class_level_claim("Fig. 3"),
    )
