"""The progress bar class of the toolkit: ``tqdm.auto.tqdm``, imported quietly.

In Jupyter, ``tqdm.auto`` gives a widget bar when ipywidgets is installed and otherwise falls
back to a text bar with a ``TqdmWarning`` ("IProgress not found") that names the file of the
installed tqdm: noise in a notebook (and the building machine's path in a published tutorial)
about a fallback that works. The warning of that one import is ignored here (inside
:func:`warnings.catch_warnings`, which restores the filters); every other warning is kept.
"""

from __future__ import annotations

import warnings

from tqdm import TqdmWarning

with warnings.catch_warnings():
    warnings.simplefilter("ignore", TqdmWarning)
    from tqdm.auto import tqdm

__all__ = ["tqdm"]
