r"""State-space realisation from an impulse response: the Ho-Kalman / eigensystem realisation
algorithm (ERA).

Convention (the standard one, ``simulate(..., output="standard")``)::

    x_{t+1} = A x_t + B u_t,    y_t = C x_t + D u_t,    h_0 = D,    h_t = C A^{t-1} B  (t >= 1)

Given ``h_0 .. h_{T-1}`` (shape (T, d_out, d_in)), the block Hankel matrix
``H[i, j] = h_{i+j+1}`` (``i < r``, ``j < c``, ``r + c <= T - 1``) factors as ``O R`` with the
observability matrix ``O = [C; CA; ...]`` and the reachability matrix ``R = [B, AB, ...]``.
With the SVD ``H = U S Vᵀ`` truncated to ``n`` singular values::

    O = U_n S_n^{1/2},  R = S_n^{1/2} V_nᵀ,  C = O[:d_out],  B = R[:, :d_in],
    A = O↑⁺ O↓   (O↑: O without its last block row, O↓: without its first),  D = h_0.

**What is exact and what is a fit.** If ``h`` is the response of an LDS of order ``n`` and
``r, c >= n``, the Hankel matrix has rank ``n`` and ERA returns a realisation of that system
(up to a change of basis) to round-off. Otherwise the result is a fit: a balanced-truncation-like
order-``n`` system whose first ``r + c`` Markov parameters approximate ``h``, with the discarded
Hankel singular values ``S_{n+1}, ...`` as the usual measure of what was dropped; nothing
guarantees the fit error over the whole response, so callers should measure it
(:func:`impulse_fit_error`).
"""

from __future__ import annotations

import numpy as np

from .._validation import as_float_array, check_int
from .lds import LDS, as_lds


def _as_markov(h, name: str = "h") -> np.ndarray:
    """The Markov parameters ``h`` (argument ``name``) as a (T, d_out, d_in) array."""
    arr = as_float_array(name, h)
    if arr.ndim == 1:
        arr = arr[:, None, None]
    if arr.ndim != 3 or arr.shape[0] < 3:
        raise ValueError(
            f"{name} must have shape (T, d_out, d_in) (or (T,) for one channel) with T >= 3, "
            f"got shape {arr.shape}"
        )
    return arr


def hankel_matrix(h, rows: int | None = None, cols: int | None = None) -> np.ndarray:
    """The block Hankel matrix ``H[i, j] = h_{i+j+1}``, shape (rows d_out, cols d_in);
    default ``rows = cols = (T - 1) // 2``."""
    h = _as_markov(h)
    T, p, m = h.shape
    half = (T - 1) // 2
    rows = half if rows is None else check_int("rows", rows, 1)
    cols = half if cols is None else check_int("cols", cols, 1)
    if rows + cols > T - 1:
        raise ValueError(f"rows + cols must be <= T - 1 = {T - 1}, got {rows} + {cols}")
    idx = np.arange(rows)[:, None] + np.arange(cols)[None, :] + 1  # (rows, cols)
    blocks = h[idx]  # (rows, cols, p, m)
    return blocks.transpose(0, 2, 1, 3).reshape(rows * p, cols * m)


def era(h, order: int, *, rows: int | None = None, cols: int | None = None,
        dt: float | bool = True) -> tuple[LDS, np.ndarray]:
    """Realise an order-``order`` discrete LDS from its impulse response (module docstring).

    Parameters
    ----------
    h : array_like, shape (T, d_out, d_in) or (T,)
        Markov parameters in the standard convention: ``h_0 = D``, ``h_t = C A^{t-1} B``.
    order : int
        State dimension n of the realisation (at most ``min(rows d_out, cols d_in)``).
    rows, cols : int, optional
        Block rows and columns of the Hankel matrix (default ``(T - 1) // 2`` each).
    dt : float or True
        Sample time of the returned system.

    Returns
    -------
    (LDS, ndarray)
        The realisation, and every Hankel singular value (descending); those beyond ``order``
        were discarded.
    """
    h = _as_markov(h)
    _, p, m = h.shape
    Hk = hankel_matrix(h, rows, cols)
    order = check_int("order", order, 1, min(Hk.shape))
    U, s, Vt = np.linalg.svd(Hk, full_matrices=False)
    if s[order - 1] <= s[0] * np.finfo(float).eps * max(Hk.shape):
        raise ValueError(
            f"order={order} exceeds the numerical rank of the Hankel matrix (singular value "
            f"{order}: {s[order - 1]:.3g}, largest {s[0]:.3g}); choose a smaller order"
        )
    sq = np.sqrt(s[:order])
    O = U[:, :order] * sq
    R = sq[:, None] * Vt[:order]
    A = np.linalg.lstsq(O[:-p], O[p:], rcond=None)[0]
    return LDS(A, R[:, :m], O[:p], h[0], dt=dt), s


def impulse_fit_error(system: LDS, h) -> float:
    """Relative error ``‖ĥ - h‖_F / ‖h‖_F`` of ``system``'s impulse response (standard
    convention, :meth:`LDS.impulse_response`) against ``h`` (T, d_out, d_in) over all T taps."""
    h = _as_markov(h)
    system = as_lds(system)
    if (system.n_outputs, system.n_inputs) != h.shape[1:]:
        raise ValueError(f"system has {system.n_outputs} outputs and {system.n_inputs} inputs, "
                         f"h has shape {h.shape}")
    fit = system.impulse_response(h.shape[0])
    return float(np.linalg.norm(fit - h) / np.linalg.norm(h))
