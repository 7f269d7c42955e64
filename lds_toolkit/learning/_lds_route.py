r"""Private: which route a spectral learner's features take (``filters="exact" | "lds" |
"auto"``) and the diagonal-LDS bank of the ``"lds"`` route.

``"exact"``: the features are the L taps of the filters, an FFT convolution in the batch path
and a window of the last L inputs in the streaming steps, O(L m d) per step.

``"lds"``: the filters are the impulse responses of the diagonal LDS of
:func:`~lds_toolkit.learning.filters_lds.filters_as_lds` (tolerance :data:`LDS_TOL`, relative
L2 per filter over the T taps); every step costs O(n m d) for n states, whatever t, T and
the context L (:mod:`~lds_toolkit.learning._stream`: the window is exact, by the recursion of
x_t - A^c x_{t-c}).  The batch path runs the same recursion (the streaming numbers).  With
``filter_precision="extended"`` the decays are the double-precision fit's and C, D are
refit by least squares on the extended-precision filters (checked to the same tolerance).

``"auto"``: the batch path is exact (its FFT features are exact and cost O(log n) per step);
the streaming steps take the LDS route when it pays: the context is at least
:data:`AUTO_MIN_CONTEXT` taps, the realization reaches :data:`LDS_TOL`, and one step's
multiply-adds through the LDS, n (m + 2) d, are at most half those of the window, L m d.
Otherwise, or when no realization reaches the tolerance, the steps are exact.  Streamed and
batch numbers then agree to the realization's tolerance, not to round-off.
"""

from __future__ import annotations

import warnings

import numpy as np

from ._stream import DiagonalBank

__all__ = ["FILTER_ROUTES", "LDS_TOL", "AUTO_MIN_CONTEXT", "choose_route", "lds_bank"]

FILTER_ROUTES = ("auto", "exact", "lds")
#: relative L2 error per filter asked of the realization (the learners' filters="lds").
LDS_TOL = 1e-6
#: below this context the exact window is cheaper than any realization worth building.
AUTO_MIN_CONTEXT = 512


def _refit(decays: np.ndarray, phi: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """C (k, n), D (k,) with h(0) = D, h(j) = C a^{j-1} closest to phi (T, k) in least
    squares over the T taps, and each filter's relative L2 error."""
    T = phi.shape[0]
    V = decays[None, :] ** np.arange(T - 1, dtype=np.float64)[:, None]  # (T-1, n)
    scale = np.linalg.norm(V, axis=0)
    coef = np.linalg.lstsq(V / scale, phi[1:], rcond=1e-15)[0] / scale[:, None]  # (n, k)
    fit = np.vstack([phi[:1], V @ coef])
    err = np.linalg.norm(fit - phi, axis=0) / np.linalg.norm(phi, axis=0)
    return coef.T, phi[0].copy(), err


def lds_bank(T: int, k: int, kind: str, delays: int, L: int, precision: str,
             tol: float = LDS_TOL) -> DiagonalBank:
    """The bank of a learner's filters (top k of ``kind`` at length T, scaled by
    sigma^{1/4}) behind ``delays`` pure delays, windowed to context L.

    Raises ValueError when no realization reaches ``tol`` (naming what it reached)."""
    from .filters import FilterPrecisionWarning, spectral_filters
    from .filters_lds import filters_as_lds

    with warnings.catch_warnings():  # the learner's own _setup warns about these filters
        warnings.simplefilter("ignore", FilterPrecisionWarning)
        try:
            lds = filters_as_lds(T, k, kind, tol=tol)
        except ValueError as exc:
            raise ValueError(f"filters='lds': {exc} (the learners ask for tol={tol:g}); use "
                             "filters='exact', or 'auto', which streams exactly where no "
                             "realization reaches it") from None
        sigma, phi = spectral_filters(T, k, kind, precision=precision)
    decays = np.diag(lds.A).copy()
    C = lds.C * lds.B[:, 0][None, :]
    D = lds.D[:, 0].copy()
    if precision != "double":
        C, D, err = _refit(decays, phi)
        if err.max() > tol:
            raise ValueError(f"filters='lds': the LDS of the {kind}_T filters (T={T}, k={k}, "
                             f"{decays.size} states) refit on the {precision}-precision "
                             f"filters reaches {err.max():.2g}, above tol={tol:g}")
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
