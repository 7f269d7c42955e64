r"""The spectral filters as a small LDS: :func:`filters_as_lds`.

The filters phi_1 .. phi_k of H_T (eq. 3) and N_T (eq. 5) are eigenvectors of integrals of
rank-one terms mu_alpha mu_alpha^T over decays alpha in (0, 1), so each is, to a small error, a
sum of a few real exponentials alpha^t: the impulse response of a diagonal LDS

    x_{t+1} = A x_t + B u_t,   y_t = C x_t + D u_t,   A = diag(alpha_1 .. alpha_n), B = 1,

whose Markov parameters are h_0 = D = phi[0] and h_t = C A^{t-1} B = sum_i C[:, i]
alpha_i^{t-1} (t >= 1). A state update then costs O(n) per input channel whatever T is, where
the filters themselves cost O(T k). How the decays are found:
:mod:`lds_toolkit.learning._filters_lds_fit` (log-spaced dictionary, least squares on a
row-compressed problem, greedy pruning, check on all T taps).

SpectraLDS (Shah, Fortgang, Druchyna, Hazan; NeurIPS 2025, arXiv 2505.17868) distils the same
filters into an LDS by orthogonal matching pursuit over 10,000 random decays;
``benchmarks/filters_lds.py`` compares the two constructions.
"""

from __future__ import annotations

import hashlib
import time
import warnings
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .._threads import one_thread
from .._validation import check_bool, check_choice, check_int, check_real
from ..systems.lds import LDS
from ._filters_lds_fit import FitFailed, fit_exponentials
from ._npz_cache import Rejected, read_arrays, write_arrays
from .filters import cache_dir, spectral_filters

__all__ = ["filters_as_lds", "FiltersLDSReport"]

_CACHE_VERSION = 2  # 2: optimised nodes (version 1 files hold the greedy-only fits)
_BRANCHES = ("positive", "negative", "both")
_MAX_STATES = 256  # the largest dictionary of the fit: a cache file with more is foreign


@dataclass(frozen=True)
class FiltersLDSReport:
    """What :func:`filters_as_lds` reached (``lds.fit_report``).

    Attributes
    ----------
    T, k, kind, branch, tol : the arguments.
    n_states : int
        State dimension of the returned system (2 n for ``branch="both"``).
    errors : ndarray, shape (k,) or (2k,)
        Relative L2 error ||h_l - phi_l|| / ||phi_l|| of each output's impulse response over
        all T taps (the negative branch's equal the positive ones': the same fit).
    max_error : float
        ``errors.max()``, at most ``tol``.
    seconds : float
        Wall time of this call (the fit, or the cache read).
    from_cache : bool
        The fit was read from the memory or disk cache.
    precision : str
        The filters' precision (``"double"`` or ``"extended"``).
    """

    T: int
    k: int
    kind: str
    branch: str
    tol: float
    n_states: int
    errors: np.ndarray
    max_error: float
    seconds: float
    from_cache: bool
    precision: str = "double"


_MEMORY: OrderedDict = OrderedDict()  # cache file -> (alpha, C, D, errors), read-only
_MEMORY_MAX = 32


def _key(kind: str, T: int, k: int, tol: float, precision: str) -> str:
    return f"filters_as_lds v{_CACHE_VERSION} {kind} T={T} k={k} tol={tol!r} {precision}"


def _cache_path(kind: str, T: int, k: int, tol: float, precision: str) -> Path:
    tag = "" if precision == "double" else "_ext"
    return cache_dir() / f"filters_lds_v{_CACHE_VERSION}_{kind}_T{T}_k{k}_tol{tol!r}{tag}.npz"


def _checksum(key: str, arrays) -> str:
    """SHA-256 over the cache key and the arrays (dtype, shape and bytes), as the filters'."""
    h = hashlib.sha256(key.encode())
    for a in arrays:
        h.update(f"{a.dtype.str}{a.shape}".encode())
        h.update(np.ascontiguousarray(a).tobytes())
    return h.hexdigest()


def _reject(path: Path, reason: str) -> None:
    warnings.warn(f"filters_as_lds cache file {path} failed its integrity check ({reason}); "
                  "the fit is recomputed and the file rewritten", RuntimeWarning, stacklevel=4)
    return None


def _cache_load(path: Path, key: str, k: int, tol: float):
    """(alpha, C, D, errors) from the file, or None (one warning naming the reason) when it is
    unreadable, truncated, foreign or altered. Nothing in it can run code: plain arrays
    (``allow_pickle=False``) whose SHA-256 must match."""
    cap = 8 * (_MAX_STATES * (k + 1) + 2 * k) + 2**16
    read = read_arrays(path, ("alpha", "C", "D", "errors"), cap, "filters_as_lds cache file")
    if read is None:
        return None
    if isinstance(read, Rejected):
        return _reject(path, read)
    arrays, stored = read
    if stored is None:
        return _reject(path, "no checksum (not written by lds_toolkit)")
    alpha, C, D, errors = arrays
    n = alpha.shape[0] if alpha.ndim == 1 else -1
    if not (1 <= n <= _MAX_STATES and C.shape == (n, k) and D.shape == (k,)
            and errors.shape == (k,)):
        return _reject(path, f"shapes {alpha.shape}, {C.shape}, {D.shape}, {errors.shape}")
    if stored != _checksum(key, arrays):
        return _reject(path, "checksum mismatch (altered or corrupted)")
    if not (np.all((alpha > 0) & (alpha < 1)) and np.isfinite(C).all() and np.isfinite(D).all()
            and float(errors.max()) <= tol):
        return _reject(path, "values out of range")
    return arrays


def _cache_store(path: Path, key: str, arrays) -> None:
    alpha, C, D, errors = arrays
    write_arrays(path, {"alpha": alpha, "C": C, "D": D, "errors": errors},
                 _checksum(key, arrays), "filters_as_lds cache")


def _memory_put(key: str, arrays) -> None:  # key: the cache file
    arrays = tuple(np.array(a) for a in arrays)
    for a in arrays:
        a.setflags(write=False)
    _MEMORY[key] = arrays
    _MEMORY.move_to_end(key)
    while len(_MEMORY) > _MEMORY_MAX:
        _MEMORY.popitem(last=False)


def _fit(T: int, k: int, kind: str, tol: float, precision: str):
    _, phi = spectral_filters(T, k, kind, precision=precision)
    try:
        with one_thread():  # small dense factorisations: a second BLAS thread only spins
            alpha, C, err = fit_exponentials(phi, tol)
    except FitFailed as exc:
        raise ValueError(
            f"filters_as_lds(T={T}, k={k}, kind={kind!r}): no sum of real exponentials reached "
            f"tol={tol:.3g}; the best worst-filter relative L2 error was {exc.best:.3e} "
            f"(with {exc.n_states} decays); pass a larger tol"
            + (" (filters below the float64 floor are round-off, not exponential sums: "
               "precision='extended' resolves them)" if precision == "double" else "")) from None
    return alpha, C, phi[0].copy(), err


def filters_as_lds(T: int, k: int, kind: str = "H", *, branch: str = "positive",
                   tol: float = 1e-6, precision: str = "double", cache: bool = True) -> LDS:
    r"""The spectral filters of :func:`spectral_filters` as the impulse response of a small LDS.

    Returns a discrete system (dt = 1, one input ``u``) with diagonal A of real decays whose
    response to a unit impulse at t = 0 (x_0 = 0, the convention of :func:`simulate`,
    ``y_t = C x_t + D u_t``) is ``spectral_filters(T, k, kind, branch=branch,
    precision=precision)[1]`` to a
    relative L2 error of at most ``tol`` per filter over the T taps:

    .. math::

        h_0 = D = \phi[0], \qquad h_t = C A^{t-1} B = \sum_{i=1}^{n} C_{:,i}\,
        \alpha_i^{t-1} \approx \phi[t] \quad (1 \le t < T),

    with 0 < alpha_i < 1, B = 1. The negative branch (filters phi[t] (-1)^t) is the same fit
    with A = -diag(alpha), C -> -C; ``"both"`` stacks the two (2n states, 2k outputs).

    Construction (:mod:`lds_toolkit.learning._filters_lds_fit`): least squares on n0
    log-spaced decays alpha = e^{-s}, s in [0.3/T, 30], over a row-compressed copy of the T
    taps (every tap below 1024, then a grid growing like j/128 with trapezoid weights); n0
    grows until the worst filter is below tol/10; greedy backward elimination of the decay
    whose removal raises the worst filter error least (closed-form downdates on the QR
    factor) gives a path of node sets; the log-rates of a set are optimised by variable
    projection (Levenberg-Marquardt), and bisection over the path finds the fewest nodes
    whose optimised fit meets tol/2; then the fit is checked on all T taps (a tighter target
    follows if it misses tol). The construction is deterministic; about 1 s at T = 2^14 and
    a few seconds at T = 2^20 on top of the filters themselves.

    Parameters
    ----------
    T, k, kind
        As :func:`spectral_filters`: filter length T >= 1, 1 <= k <= T filters of H_T
        (``"H"``) or N_T (``"N"``).
    branch : {"positive", "negative", "both"}
        As :func:`spectral_filters`' ``branch``.
    tol : float
        Largest relative L2 error per filter, in (0, 1).
    precision : {"double", "extended"}
        The filters fitted, as :func:`spectral_filters`' ``precision`` (the learners'
        ``filter_precision``): float64 filters below the resolvable floor are round-off, which
        no short exponential sum follows; the extended ones are the true filters.
    cache : bool
        Keep the fit (decays, C, D, errors) on disk in :func:`cache_dir` under (kind, T, k,
        tol, precision), checked by SHA-256 like the filters' cache (``allow_pickle=False``: nothing
        read can run code; a file that fails is reported by a RuntimeWarning, refitted and
        rewritten), and in memory.

    Returns
    -------
    LDS
        Outputs ``phi[i]`` (positive branch) and ``phi_neg[i]`` (negative branch).
        ``lds.fit_report`` is a :class:`FiltersLDSReport` (errors reached, state dimension,
        time); it is an attribute of this object only (copies and ``with_matrices`` drop it).

    Raises
    ------
    ValueError
        Bad arguments, or when no fit reaches ``tol`` (naming T, k, kind and the best error).
    """
    start = time.perf_counter()
    T = check_int("T", T)
    k = check_int("k", k)
    if k > T:
        raise ValueError(f"k must be <= T (a T x T matrix has T eigenpairs), got k={k}, T={T}")
    if not isinstance(kind, str) or kind not in ("H", "N"):
        raise ValueError(f"kind must be 'H' (eq. 3) or 'N' (eq. 5), got {kind!r:.80}")
    check_choice("branch", branch, _BRANCHES)
    check_choice("precision", precision, ("double", "extended"))
    tol = check_real("tol", tol, low=0.0, high=1.0, low_inclusive=False, high_inclusive=False)
    cache = check_bool("cache", cache)

    key = _key(kind, T, k, tol, precision)
    arrays, from_cache = None, False
    if cache:  # memory first (keyed by the file, as the filters' cache), then the file
        path = _cache_path(kind, T, k, tol, precision)
        arrays = _MEMORY.get(str(path))
        if arrays is None and path.exists():
            arrays = _cache_load(path, key, k, tol)
        from_cache = arrays is not None
        if arrays is None:
            arrays = _fit(T, k, kind, tol, precision)
            _cache_store(path, key, arrays)
        _memory_put(str(path), arrays)
    else:
        arrays = _fit(T, k, kind, tol, precision)
    return _build(T, k, kind, branch, tol, precision, arrays, start, from_cache)


def _build(T, k, kind, branch, tol, precision, arrays, start, from_cache) -> LDS:
    alpha, C, D, errors = arrays
    n = alpha.size
    pos = [f"phi[{i}]" for i in range(k)]
    neg = [f"phi_neg[{i}]" for i in range(k)]
    if branch == "positive":
        A, Cm, Dm, outputs = np.diag(alpha), C.T, D[:, None], pos
    elif branch == "negative":
        A, Cm, Dm, outputs = -np.diag(alpha), -C.T, D[:, None], neg
    else:
        A = np.diag(np.r_[alpha, -alpha])
        Cm = np.block([[C.T, np.zeros((k, n))], [np.zeros((k, n)), -C.T]])
        Dm, outputs = np.r_[D, D][:, None], pos + neg
        errors = np.r_[errors, errors]
    lds = LDS(A, np.ones((A.shape[0], 1)), Cm, Dm, dt=1.0, inputs=["u"], outputs=outputs,
              name=f"spectral_filters_{kind}_T{T}_k{k}_{branch}")
    errors = np.array(errors)
    errors.setflags(write=False)
    lds.fit_report = FiltersLDSReport(
        T=T, k=k, kind=kind, branch=branch, tol=tol, n_states=A.shape[0], errors=errors,
        max_error=float(errors.max()), seconds=time.perf_counter() - start,
        from_cache=from_cache, precision=precision)
    return lds
