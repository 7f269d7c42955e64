r"""Private: which route a spectral learner's features take (``filters="exact" | "lds" |
"auto"``) and the diagonal-LDS bank of the ``"lds"`` route.

``"exact"``: the features are the L taps of the filters, an FFT convolution in the batch path
and a window of the last L inputs in the streaming steps, O(L m d) per step.

``"lds"``: the filters are the impulse responses of the diagonal LDS of
:func:`~lds_toolkit.learning.filters_lds.filters_as_lds` (tolerance :data:`LDS_TOL`, relative
L2 per filter over the T taps); every step costs O(n m d) for n states, whatever t, T and
the context L (:mod:`~lds_toolkit.learning._stream`: the window is exact, by the recursion of
x_t - A^c x_{t-c}).  The batch path runs the same recursion (the streaming numbers).  The
realization is of the learner's filters, ``filter_precision`` included.

``"auto"``: the batch path is exact (its FFT features are exact and cost O(log n) per step);
the streaming steps take the LDS route when it pays: the context is at least
:data:`AUTO_MIN_CONTEXT` taps, the realization reaches :data:`LDS_TOL`, and one step's
multiply-adds through the LDS, n (m + 2) d, are at most half those of the window, L m d.
Otherwise, or when no realization reaches the tolerance, the steps are exact.  Streamed and
batch numbers then agree to the realization's tolerance, not to round-off.
"""

from __future__ import annotations

import warnings
from collections import OrderedDict

import numpy as np

from ._stream import DiagonalBank

__all__ = ["FILTER_ROUTES", "LDS_TOL", "AUTO_MIN_CONTEXT", "choose_route", "lds_bank"]

FILTER_ROUTES = ("auto", "exact", "lds")
#: relative L2 error per filter asked of the realization (the learners' filters="lds").
LDS_TOL = 1e-6
#: below this context the exact window is cheaper than any realization worth building.
AUTO_MIN_CONTEXT = 512


_MEMO: OrderedDict = OrderedDict()  # (T, k, kind, delays, L, precision, tol) -> bank or error
_MEMO_SIZE = 32


def lds_bank(T: int, k: int, kind: str, delays: int, L: int, precision: str,
             tol: float = LDS_TOL) -> DiagonalBank:
    """The bank of a learner's filters (top k of ``kind`` at length T, scaled by
    sigma^{1/4}) behind ``delays`` pure delays, windowed to context L; the same object for
    the same arguments (the last few kept in memory, failures included: a learner's copies
    and a step-size search share one build).

    Raises ValueError when no realization reaches ``tol`` (naming what it reached)."""
    key = (T, k, kind, delays, L, precision, tol)
    if key not in _MEMO:
        try:
            _MEMO[key] = _build_bank(T, k, kind, delays, L, precision, tol)
        except ValueError as exc:
            _MEMO[key] = exc
        while len(_MEMO) > _MEMO_SIZE:
            _MEMO.popitem(last=False)
    _MEMO.move_to_end(key)
    found = _MEMO[key]
    if isinstance(found, ValueError):
        raise ValueError(str(found))
    return found


def _build_bank(T, k, kind, delays, L, precision, tol) -> DiagonalBank:
    from .filters import FilterPrecisionWarning, spectral_filters
    from .filters_lds import filters_as_lds

    with warnings.catch_warnings():  # the learner's own _setup warns about these filters
        warnings.simplefilter("ignore", FilterPrecisionWarning)
        try:
            lds = filters_as_lds(T, k, kind, tol=tol, precision=precision)
        except ValueError as exc:
            raise ValueError(f"filters='lds': {exc} (the learners ask for tol={tol:g}); use "
                             "filters='exact', or 'auto', which streams exactly where no "
                             "realization reaches it") from None
        sigma = spectral_filters(T, k, kind, precision=precision)[0]
    decays = np.diag(lds.A).copy()
    C = lds.C * lds.B[:, 0][None, :]
    D = lds.D[:, 0].copy()
    scale = np.sqrt(np.sqrt(np.abs(sigma)))
    return DiagonalBank(decays, scale[:, None] * C, scale * D, delays, L)


def choose_route(learner, T: int, k: int, L: int, filters: str) -> DiagonalBank | None:
    """The bank of a spectral learner's streaming or batch route (module docstring), or None
    for the exact route."""
    kind, delays = learner._kind, learner._delays
    Tf, kf = T - delays, k - delays  # Algorithm 2's filters are those of N_{T-2}
    if filters == "lds":
        return lds_bank(Tf, kf, kind, delays, L, learner.filter_precision)
    if L < AUTO_MIN_CONTEXT or kf < 1:
        return None
    try:
        bank = lds_bank(Tf, kf, kind, delays, L, learner.filter_precision)
    except ValueError:
        return None  # no realization reaches the tolerance: the exact window
    return bank if 2 * bank.cost(1) <= L * k else None
