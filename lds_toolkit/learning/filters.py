"""Spectral filters: top-k eigenpairs of the Hankel matrices H_T (eq. 3) and N_T (eq. 5).

Paper: *Provable length generalization in sequence prediction via spectral filtering*, Sec. 2.2
and Algorithm 2.  With mu_alpha = (1 - alpha)[1, alpha, alpha^2, ...] (first T entries)::

    H_T = int_0^1 mu_alpha mu_alpha^T d alpha,   (H_T)_{ij} = 2 / ((n+1)(n+2)(n+3)),  n = i + j
    N_T = int_0^1 mu~_alpha mu~_alpha^T d alpha, mu~_alpha = (1 - alpha)^2 [1, alpha, ...],
                                                 (N_T)_{ij} = 24 / ((n+1)(n+2)(n+3)(n+4)(n+5))

with i, j = 0 .. T-1 (the (H_T) form equals Hazan et al.'s Z_ij = 2/((i+j)^3 - (i+j)) counted
from 1).  The filters phi_1 .. phi_k are the eigenvectors of the k largest eigenvalues
sigma_1 >= ... >= sigma_k.

Index convention (used by :mod:`lds_toolkit.learning.learners`): tap ``phi[j, i]`` of filter i
multiplies the input j + 1 steps back, u_{t-1-j}, when predicting y_t (Algorithm 1, eq. 4:
the columns of u_{(t-1):(t-L)} are u_{t-1}, ..., u_{t-L}).

Sign convention: every filter has ``phi[0, i] > 0``.  H_T and N_T are moment matrices of
positive measures on (0, 1), hence strictly totally positive; by the Gantmacher-Krein theorem
the i-th eigenvector has exactly i - 1 sign changes and a non-zero first entry, so the
convention is well defined for every filter above the round-off floor.

Numerical limits: the eigenvalues fall off exponentially.  Computed eigenvalues carry an
absolute error of about eps * sigma_1 and eigenvectors an error of about
eps * sigma_1 / gap_i (Davis-Kahan), for the dense ``eigh`` path and the fast path alike.
Filters with sigma_i / sigma_1 < :data:`RESOLVABLE_FLOOR` (= 100 eps) have fewer than two
correct digits in sigma_i and are dominated by round-off; :func:`spectral_filters` warns
(:class:`FilterPrecisionWarning`) naming them.  :func:`eigenvector_error_bound` gives the
per-filter error estimate.

The limit is the arithmetic, not the matrix (its entries are exact rationals):
``precision="extended"`` refines the float64 eigenpairs with an exact (~2^-96) FFT Hankel
mat-vec (:mod:`lds_toolkit.learning._extended`), after which every filter with
sigma_i / sigma_1 above :data:`RESOLVABLE_FLOOR` is correct to float64 round-off (~1e-16; checked
against 60-digit mpmath), and filters down to :data:`EXTENDED_FLOOR` are still resolved.
"""

from __future__ import annotations

import hashlib
import os
import warnings
from collections import OrderedDict
from pathlib import Path

import numpy as np
import scipy.linalg as sla

from .._threads import one_thread
from .._validation import (
    as_float_array,
    check_bool,
    check_choice,
    check_fits_in_memory,
    check_int,
)
from ._extended import EXTENDED_EPS, refine_eigenpairs
from ._hankel import HankelFFT, dense_matrix
from ._npz_cache import Rejected, read_arrays, write_arrays
from ._quadrature import quadrature_basis

__all__ = [
    "spectral_filters",
    "filter_matrix",
    "eigenvector_error_bound",
    "cache_dir",
    "FilterPrecisionWarning",
    "RESOLVABLE_FLOOR",
    "EXTENDED_EPS",
    "EXTENDED_FLOOR",
    "DENSE_MAX_T",
]

EPS = float(np.finfo(np.float64).eps)
#: sigma_i / sigma_1 below this: sigma_i has < 2 correct digits, the filter is round-off.
RESOLVABLE_FLOOR = 100.0 * EPS
#: the same floor for ``precision="extended"`` (mat-vec exact to EXTENDED_EPS = 2^-96).
EXTENDED_FLOOR = 100.0 * EXTENDED_EPS
#: block columns beyond k carried by the extended refinement (damping and Ritz buffer).
_EXTENDED_BUFFER = 10
#: ``method="auto"`` uses the dense eigh path up to this T, the fast path above it.
DENSE_MAX_T = 512
_CACHE_VERSION = 1
_KINDS = ("H", "N")
_BRANCHES = ("positive", "negative", "both")
_METHODS = ("auto", "dense", "fast")
_PRECISIONS = ("double", "extended")


class FilterPrecisionWarning(UserWarning):
    """Some requested filters lie below the float64 resolvable floor (they are round-off)."""


def _check_kind(kind) -> str:
    if kind not in _KINDS:
        raise ValueError(f"kind must be 'H' (eq. 3) or 'N' (eq. 5), got {kind!r}")
    return kind


def cache_dir() -> Path:
    """Directory of the on-disk filter cache: ``$LDS_TOOLKIT_CACHE`` or ``~/.cache/lds_toolkit``."""
    env = os.environ.get("LDS_TOOLKIT_CACHE")
    return Path(env) if env else Path.home() / ".cache" / "lds_toolkit"


def filter_matrix(T: int, kind: str = "H") -> np.ndarray:
    """Dense T x T matrix H_T (``kind="H"``, eq. 3) or N_T (``kind="N"``, eq. 5).

    O(T^2) memory: meant for small T, teaching and cross-checks (a T whose matrix cannot fit
    in memory is refused before allocating).
    """
    T = check_int("T", T)
    kind = _check_kind(kind)
    _check_dense_fits(T)
    return dense_matrix(T, kind)


def _check_dense_fits(T: int) -> None:
    check_fits_in_memory("T", T, 8.0 * T * T, "the float64 entries of the dense (T, T) matrix")


def eigenvector_error_bound(sigma: np.ndarray, precision: str = "double") -> np.ndarray:
    """Expected round-off error eps * sigma_1 / gap_i of each computed filter (Davis-Kahan).

    ``gap_i`` is the distance from sigma_i to its nearest neighbour in ``sigma``; for the last
    entry only the left neighbour is known, so pass one more eigenvalue than the filters you
    want to bound.  Returns an array of the shape of ``sigma`` (inf where the gap is 0).
    With ``precision="extended"`` the mat-vec error is EXTENDED_EPS * sigma_1 and the
    result is stored in float64, so the bound is eps + EXTENDED_EPS * sigma_1 / gap_i.
    """
    check_choice("precision", precision, _PRECISIONS)
    s = as_float_array("sigma", sigma, ndim=1)  # an inf or NaN would give a gap of 0 or NaN
    if s.size < 2:
        raise ValueError(f"sigma must be 1-D with at least 2 entries, got shape {s.shape}")
    d = np.abs(np.diff(s))
    gap = np.minimum(np.r_[np.inf, d], np.r_[d, np.inf])
    with np.errstate(divide="ignore"):
        if precision == "extended":
            return EPS + EXTENDED_EPS * abs(s[0]) / gap
        return EPS * abs(s[0]) / gap


def _dense_eigs(T: int, k: int, kind: str) -> tuple[np.ndarray, np.ndarray]:
    w, v = sla.eigh(dense_matrix(T, kind), subset_by_index=[T - k, T - 1], driver="evr")
    return w[::-1].copy(), v[:, ::-1].copy()


def _fast_eigs(
    T: int, k: int, kind: str, oversample: int = 4, max_iter: int = 60
) -> tuple[np.ndarray, np.ndarray]:
    """Rayleigh-Ritz on the FFT Hankel operator, started from the quadrature eigenpairs.

    The start is the top ``k + oversample`` eigenpairs of the quadrature factor M ≈ F F^T
    (:mod:`lds_toolkit.learning._quadrature`: O(T Q m) BLAS-3 work, Q ~ 100 nodes), already
    within the round-off bound eps sigma_1 / gap_i of the exact ones. One product with the
    exact O(T log T) FFT mat-vec then gives the Ritz pairs of H_T (N_T) on that subspace and
    their residuals ||M v_i - theta_i v_i||; they are accepted when every residual is below
    32 eps theta_1 (the FFT mat-vec's own noise is ~4 eps theta_1), which is the usual
    outcome. Otherwise (or when the quadrature is not available) block subspace iteration
    continues (eigenvalues decay geometrically, ratio ~0.3-0.4 per index, so each iteration
    gains a factor sigma_{m+1} / sigma_k) until the same criterion holds, followed by one
    more iteration to polish the small ones.
    """
    op = HankelFFT(T, kind)
    m = min(k + oversample, T)
    Qt = quadrature_basis(T, m, kind) if T > m + 8 else None  # rows: the basis, (m, T)
    polished = Qt is not None  # a quadrature start needs no extra polishing step
    if Qt is None:
        m = min(k + 12, T)
        rng = np.random.default_rng(20240607)  # fixed start: deterministic filters
        Qt = np.ascontiguousarray(np.linalg.qr(rng.standard_normal((T, m)))[0].T)
    tol = 32.0 * EPS
    res = np.array([np.inf])
    for _ in range(max_iter):
        Yt = op.matmat_rows(Qt)
        S = Qt @ Yt.T
        theta, W = np.linalg.eigh(0.5 * (S + S.T))
        theta, W = theta[::-1], W[:, ::-1]
        res = _ritz_residuals(Qt, Yt, W[:, :k], theta[:k]) / abs(theta[0])
        if res.max() <= tol:
            if polished:
                return theta[:k].copy(), Qt.T @ W[:, :k]
            polished = True
        Qt = np.ascontiguousarray(np.linalg.qr(Yt.T @ W)[0].T)
    raise RuntimeError(
        f"spectral_filters fast path did not converge for kind={kind!r}, T={T}, k={k}: "
        f"max relative residual {res.max():.3e} > {tol:.1e} after {max_iter} iterations"
    )


def _ritz_residuals(Qt, Yt, W, theta, cols: int = 1 << 15):
    """||Y w_i - theta_i Q w_i|| for the columns w_i of W (Q, Y given transposed, (m, T)), by
    blocks (no T x m temporaries: at T = 2^20 each would be a fresh 200 MB allocation)."""
    acc = np.zeros(W.shape[1])
    Wt = np.ascontiguousarray(W.T)
    for c0 in range(0, Qt.shape[1], cols):
        R = Wt @ Yt[:, c0 : c0 + cols]
        R -= theta[:, None] * (Wt @ Qt[:, c0 : c0 + cols])
        acc += np.einsum("ij,ij->i", R, R)
    return np.sqrt(acc)


def _fix_signs(phi: np.ndarray) -> np.ndarray:
    s = np.sign(phi[0])
    s[s == 0] = 1.0
    return phi * s


_MEMORY: OrderedDict = OrderedDict()  # (kind, T, k) -> (sigma, phi), read-only
_MEMORY_MAX_BYTES = 256 * 2**20


def _memory_get(key):
    hit = _MEMORY.get(key)
    if hit is not None:
        _MEMORY.move_to_end(key)
    return hit


def _memory_put(key, sigma, phi):
    sigma, phi = sigma.copy(), phi.copy()
    sigma.setflags(write=False)
    phi.setflags(write=False)
    _MEMORY[key] = (sigma, phi)
    while len(_MEMORY) > 1 and sum(v[1].nbytes for v in _MEMORY.values()) > _MEMORY_MAX_BYTES:
        _MEMORY.popitem(last=False)


def _cache_path(kind: str, T: int, k: int, precision: str = "double") -> Path:
    tag = "" if precision == "double" else "_ext"
    return cache_dir() / f"spectral_filters_v{_CACHE_VERSION}_{kind}_T{T}_k{k}{tag}.npz"


def _cache_checksum(kind: str, T: int, k: int, precision: str, sigma, phi) -> str:
    """SHA-256 over the cache key and the arrays (dtype, shape and bytes)."""
    h = hashlib.sha256(f"spectral_filters v{_CACHE_VERSION} {kind} T={T} k={k} "
                       f"{precision}".encode())
    for a in (sigma, phi):
        h.update(f"{a.dtype.str}{a.shape}".encode())
        h.update(np.ascontiguousarray(a).tobytes())
    return h.hexdigest()


def _cache_load(path: Path, kind: str, T: int, k: int, precision: str):
    """The cached (sigma, phi), or None (with one warning naming the reason) when the file is
    unreadable, truncated, foreign or altered: it is then recomputed and rewritten."""
    # a regular file of about the expected size, links not followed, never blocking on a FIFO
    read = read_arrays(path, ("sigma", "phi"), 8 * (T * k + k) + 2**16, "filter cache file")
    if read is None:
        return None
    if isinstance(read, Rejected):
        return _cache_reject(path, read)
    (sigma, phi), stored = read
    if stored is None:
        return _cache_reject(path, "no checksum (an older cache format, or not written by "
                                   "lds_toolkit)")
    if sigma.shape != (k,) or phi.shape != (T, k):
        return _cache_reject(path, f"shapes {sigma.shape}, {phi.shape} instead of ({k},), "
                                   f"({T}, {k})")
    if stored != _cache_checksum(kind, T, k, precision, sigma, phi):
        return _cache_reject(path, "checksum mismatch (altered or corrupted)")
    return sigma, phi


def _cache_reject(path: Path, reason: str) -> None:
    warnings.warn(f"filter cache file {path} failed its integrity check ({reason}); the "
                  "filters are recomputed and the file rewritten", RuntimeWarning, stacklevel=4)
    return None


def _cache_store(path: Path, kind: str, T: int, k: int, precision: str,
                 sigma: np.ndarray, phi: np.ndarray) -> None:
    """Write atomically (temporary file in the same directory, then rename), with the
    checksum :func:`_cache_load` verifies."""
    write_arrays(path, {"sigma": sigma, "phi": phi},
                 _cache_checksum(kind, T, k, precision, sigma, phi), "filter cache")


def spectral_filters(
    T: int,
    k: int,
    kind: str = "H",
    *,
    method: str = "auto",
    branch: str = "positive",
    cache: bool = True,
    precision: str = "double",
) -> tuple[np.ndarray, np.ndarray]:
    """Top-k eigenpairs (sigma_i, phi_i) of H_T (eq. 3) or N_T (eq. 5).

    Parameters
    ----------
    T : int
        Filter length (matrix size), T >= 1.
    k : int
        Number of filters, 1 <= k <= T.
    kind : {"H", "N"}
        ``"H"``: H_T of eq. 3, entries 2/((n+1)(n+2)(n+3)) (Algorithm 1).
        ``"N"``: N_T of eq. 5, entries 24/((n+1)...(n+5)) (Algorithm 2 uses N_{T-2}).
    method : {"auto", "dense", "fast"}
        ``"dense"``: LAPACK ``eigh`` (MRRR, top-k subset) of the formed T x T matrix, O(T^3).
        Both paths run BLAS on one thread.
        ``"fast"``: never forms the matrix; the top eigenpairs of a quadrature factor
        M ≈ F F^T of the integral form (O(T Q k) matrix products, Q ~ 100 nodes), checked and
        Rayleigh-Ritz-refined with one O(k T log T) product with the exact FFT Hankel mat-vec
        (block subspace iteration continues only if a residual is above tolerance).
        ``"auto"``: dense for T <= :data:`DENSE_MAX_T`, fast above; only ``"auto"`` reads and
        writes the on-disk cache.
    branch : {"positive", "negative", "both"}
        ``"negative"`` returns phi_i[j] (-1)^j, the filters for eigenvalues alpha in [-1, 0]
        (they are the eigenvectors of D H_T D, D = diag((-1)^j), with the same sigma);
        ``"both"`` concatenates the positive and negative filters: sigma has shape (2k,)
        (each half descending) and phi shape (T, 2k).
    cache : bool
        With ``method="auto"``, load/store the result in :func:`cache_dir` under the key
        (kind, T, k); writes are atomic (temporary file + ``os.replace``) and carry a SHA-256
        of key and arrays; a file that fails it (truncated, altered, foreign) is reported
        once (RuntimeWarning), recomputed and rewritten.  Results read or
        written are also kept in memory (at most 256 MB, least recently used first out),
        keyed by the cache file, so repeated calls do not touch the disk.
    precision : {"double", "extended"}
        ``"double"``: float64 throughout; filter i carries an error ~eps sigma_1 / gap_i
        (:func:`eigenvector_error_bound`): about 1e-5 (H) and 1e-1 (N) for the 24th filter
        at T = 2^14.  ``"extended"``: the float64 result of ``method`` (with 10 extra
        columns) is refined with an exact FFT Hankel mat-vec and compensated inner products
        (see :mod:`lds_toolkit.learning._extended`); every filter above
        :data:`RESOLVABLE_FLOOR` is then correct to ~1e-16, whichever ``method`` started it.
        About 12-20x the cost of the fast path (T = 2^14, k = 24: ~1.5 s), paid once per cache
        key (the cache keeps the two precisions apart).

    Returns
    -------
    sigma : ndarray, shape (k,)
        Eigenvalues, descending.
    phi : ndarray, shape (T, k)
        Orthonormal filters in the columns; ``phi[j, i]`` multiplies u_{t-1-j} in Algorithm 1
        (see module docstring); sign fixed by ``phi[0, i] > 0``.

    Warns
    -----
    FilterPrecisionWarning
        Naming the (0-based) indices with sigma_i / sigma_1 < :data:`RESOLVABLE_FLOOR`
        (:data:`EXTENDED_FLOOR` with ``precision="extended"``).
    """
    T = check_int("T", T)
    k = check_int("k", k)
    if k > T:
        raise ValueError(f"k must be <= T (a T x T matrix has T eigenpairs), got k={k}, T={T}")
    check_fits_in_memory("T", T, 8.0 * T * k, f"the (T, k={k}) float64 filters alone")
    kind = _check_kind(kind)
    check_choice("method", method, _METHODS)
    check_choice("branch", branch, _BRANCHES)
    check_choice("precision", precision, _PRECISIONS)
    cache = check_bool("cache", cache)
    if method == "dense" or (method == "auto" and T <= DENSE_MAX_T):
        _check_dense_fits(T)

    result = None
    use_cache = cache and method == "auto"
    if use_cache:
        path = _cache_path(kind, T, k, precision)
        result = _memory_get((str(path), kind, T, k))
        if result is None and path.exists():
            result = _cache_load(path, kind, T, k, precision)
            if result is not None:
                _memory_put((str(path), kind, T, k), *result)
    if result is None:
        # one BLAS thread on both paths: on a shared machine OpenBLAS's spinning threads
        # cost 3x (eigh) to 30x (tall-skinny QR of the fast path)
        p = k if precision == "double" else min(T, k + _EXTENDED_BUFFER)
        with one_thread():
            if method == "dense" or (method == "auto" and T <= DENSE_MAX_T):
                sigma, phi = _dense_eigs(T, p, kind)
            else:
                sigma, phi = _fast_eigs(T, p, kind)
            if precision == "extended":
                sigma, phi = refine_eigenpairs(phi, k, kind)
        result = (sigma, _fix_signs(phi))
        if use_cache:
            _cache_store(path, kind, T, k, precision, *result)
            _memory_put((str(path), kind, T, k), *result)
    sigma, phi = result[0].copy(), result[1].copy()

    rel = sigma / sigma[0]
    floor = RESOLVABLE_FLOOR if precision == "double" else EXTENDED_FLOOR
    bad = np.flatnonzero(rel < floor)
    if bad.size:
        warnings.warn(
            f"spectral_filters(T={T}, k={k}, kind={kind!r}): filters at 0-based indices "
            f"{bad.tolist()} have sigma_i/sigma_1 = "
            f"{np.array2string(rel[bad], precision=1, separator=', ')} below the "
            f"{precision}-precision resolvable floor {floor:.1e}; they are round-off, not "
            f"signal" + (" (precision='extended' resolves them)" if precision == "double"
                         and rel[bad].min() >= EXTENDED_FLOOR else ""),
            FilterPrecisionWarning,
            stacklevel=2,
        )

    if branch == "positive":
        return sigma, phi
    alt = phi * np.where(np.arange(T) % 2 == 0, 1.0, -1.0)[:, None]
    if branch == "negative":
        return sigma, alt
    return np.concatenate([sigma, sigma]), np.concatenate([phi, alt], axis=1)
