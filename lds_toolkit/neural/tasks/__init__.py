"""Task generators for the neural experiments: numpy arrays in, numpy arrays out.

Every generator takes ``rng`` (Generator, int or None), writes nothing to disk, and returns a
:class:`SequenceTask` (inputs, per-position targets, training and evaluation masks). The
training loop in :mod:`lds_toolkit.neural.training` turns them into tensors
(:func:`~lds_toolkit.neural.training.batching.as_tensors`).

=====================  ==========================================================  ========
generator              task                                                          paper
=====================  ==========================================================  ========
``induction_heads``    recall the token after a flag (blank filler)                  LG §4.2
``associative_recall`` key-value pairs, then a query key                            Focus §5.1
``cloze``              y_63 = u_12² + u_94² (needs both directions)                  S4++ §3.2
``sine_fit``           next sample of sin(5πt), optionally with jittered instants    S4++ §2.3
``lds_next_output``    y_{t+1} from (u_≤t, y_≤t) on an LDS stream                    LG §4.1
``listops``            value of a nested MIN/MAX/MED/SM expression                   LaS §5
=====================  ==========================================================  ========
"""

from ._data import IGNORE_INDEX, SequenceTask
from .cloze import cloze
from .induction import induction_heads
from .lds_stream import lds_next_output
from .listops import listops
from .recall import associative_recall
from .sine import sine_fit

__all__ = [
    "IGNORE_INDEX",
    "SequenceTask",
    "associative_recall",
    "cloze",
    "induction_heads",
    "lds_next_output",
    "listops",
    "sine_fit",
]
