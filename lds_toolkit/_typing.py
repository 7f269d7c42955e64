"""Type aliases of the public signatures (private module; the names are documented where used).

``ArrayLike`` is numpy's: anything ``np.asarray`` accepts. ``SystemLike`` stands for an
:class:`~lds_toolkit.systems.LDS`, a ``control.StateSpace`` or a ``control.TransferFunction``;
python-control ships no type
information, so it is ``Any`` to a type checker.
"""

from __future__ import annotations

from typing import Any

from numpy.typing import ArrayLike

SystemLike = Any

__all__ = ["ArrayLike", "SystemLike"]
