"""``lengen-region-b``: Figure 3 of the length-generalization paper.

Algorithm 1 (spectral filtering) on random symmetric LDSs with every eigenvalue in Region B,
with contexts T^q; the protocol is in :mod:`._lengen_common`, the experiment shared with
Figures 2 and 4 in :mod:`._lengen_learning`.
"""

from __future__ import annotations

from ..base import register
from ._lengen_learning import (
    HALF_THE_SEEDS,
    _LengenLearning,
    class_level_claim,
    monotone_claim,
    safe_step_claims,
    short_fails_claims,
)


@register
class LengenRegionB(_LengenLearning):
    name = "lengen-region-b"
    description = "Algorithm 1 on Region B systems, contexts T^q (Figure 3)"
    paper = "length generalization, Fig. 3"
    region, algorithm = "B", 1
    claims = (
        *short_fails_claims("Fig. 3", "B", paper=2.0, quick=1.2, quick_share=0.5,
                            quick_note=HALF_THE_SEEDS.format(
                                rate="84 %", p75="9 %", seen="11 of 16 for base seed 4",
                                p50="0.02 %")),
        *safe_step_claims("Fig. 3", "B", paper=1.5, quick=1.1, quick_share=0.5,
                          quick_note=HALF_THE_SEEDS.format(
                              rate="86 %", p75="6 %", seen="12 of 16 for base seeds 4 and 8",
                              p50="0.01 %")),
        monotone_claim("Fig. 3", "B"),
        class_level_claim("Fig. 3"),
    )
