"""Random-number plumbing: every drawing function takes ``rng``."""

from __future__ import annotations

import numpy as np

RngLike = np.random.Generator | np.random.SeedSequence | int | None


def as_generator(rng: RngLike) -> np.random.Generator:
    """Return a ``numpy.random.Generator`` from a Generator, SeedSequence, int seed or None.

    ``None`` gives fresh OS entropy (not reproducible); pass an int for reproducible results.
    """
    if isinstance(rng, np.random.Generator):
        return rng
    if isinstance(rng, np.random.SeedSequence):
        return np.random.default_rng(rng)
    if rng is None:
        return np.random.default_rng()
    if isinstance(rng, int | np.integer) and not isinstance(rng, bool):
        if rng < 0:
            raise ValueError(f"rng must be a numpy Generator, SeedSequence, an int seed >= 0 "
                             f"or None, got {int(rng)}")
        return np.random.default_rng(int(rng))
    raise TypeError(
        f"rng must be a numpy Generator, SeedSequence, int seed or None, got "
        f"{type(rng).__name__} {rng!r:.80}"
    )
