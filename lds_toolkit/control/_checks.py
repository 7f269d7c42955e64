"""Matrix checks shared by the control modules (symmetry, definiteness, shape agreement)."""

from __future__ import annotations

import numpy as np

from .._validation import as_matrix, as_square
from ..systems.lds import as_lds, is_system

#: Relative tolerance for "symmetric": ||X - X^T||_max <= SYM_RTOL * max(1, ||X||_max).
SYM_RTOL = 1e-10


def is_symmetric(X: np.ndarray, rtol: float = SYM_RTOL) -> bool:
    scale = max(1.0, float(np.max(np.abs(X)))) if X.size else 1.0
    return bool(np.max(np.abs(X - X.T), initial=0.0) <= rtol * scale)


def min_eig_sym(X: np.ndarray) -> float:
    """Smallest eigenvalue of the symmetric part of ``X``."""
    return float(np.linalg.eigvalsh(0.5 * (X + X.T))[0])


def is_positive_definite(X: np.ndarray) -> bool:
    """Symmetric (to :data:`SYM_RTOL`) with a positive smallest eigenvalue.

    A matrix whose smallest eigenvalue is positive but below ``n * eps * ||X||`` is not
    numerically distinguishable from a singular one and is reported as not definite.
    """
    if not is_symmetric(X):
        return False
    lam = np.linalg.eigvalsh(0.5 * (X + X.T))
    floor = X.shape[0] * np.finfo(float).eps * max(float(np.max(np.abs(lam))), 1e-300)
    return bool(lam[0] > floor)


def asymmetry(name: str, X: np.ndarray) -> str:
    """``"X[i,j]=a but X[j,i]=b"`` at the largest entry of ``|X - X^T|`` (for messages)."""
    i, j = np.unravel_index(int(np.argmax(np.abs(X - X.T))), X.shape)
    return f"{name}[{i},{j}]={X[i, j]:g} but {name}[{j},{i}]={X[j, i]:g}"


def state_matrix(name, value, *, discrete: bool) -> np.ndarray:
    """A matrix, or the A of a system (an LDS or control.StateSpace of the right timebase)."""
    if not is_system(value):
        return as_square(name, value)
    system = as_lds(value, name)
    if system.is_discrete != discrete:
        want, got = ("discrete", "continuous") if discrete else ("continuous", "discrete")
        raise ValueError(f"{name} must be a {want}-time system (or a matrix) here, got a "
                         f"{got}-time {type(value).__name__}")
    return system.A


def square_like(name: str, value, n: int, what: str) -> np.ndarray:
    """A finite (n, n) matrix; the message says which matrix it must match."""
    arr = as_square(name, value)
    if arr.shape != (n, n):
        raise ValueError(f"{name} must have shape ({n}, {n}) to match {what}, got {arr.shape}")
    return arr


def symmetric_positive_definite(name: str, value, n: int | None = None,
                                what: str = "") -> np.ndarray:
    """A finite symmetric positive-definite matrix, else ``ValueError`` saying what fails."""
    arr = as_square(name, value) if n is None else square_like(name, value, n, what)
    if not is_symmetric(arr):
        raise ValueError(f"{name} must be symmetric positive definite; it is not symmetric: "
                         f"{asymmetry(name, arr)}")
    if not is_positive_definite(arr):
        raise ValueError(f"{name} must be symmetric positive definite; its smallest "
                         f"eigenvalue is {min_eig_sym(arr):g}")
    return 0.5 * (arr + arr.T)


def symmetric_positive_semidefinite(name: str, value, n: int, what: str) -> np.ndarray:
    """A finite symmetric positive-semidefinite (n, n) matrix (smallest eigenvalue >=
    ``-n eps ||X||``), else ``ValueError`` saying what fails."""
    arr = square_like(name, value, n, what)
    if not is_symmetric(arr):
        raise ValueError(f"{name} must be symmetric positive semidefinite; it is not "
                         f"symmetric: {asymmetry(name, arr)}")
    lam = min_eig_sym(arr)
    floor = n * np.finfo(float).eps * max(float(np.max(np.abs(arr), initial=0.0)), 1e-300)
    if lam < -floor:
        raise ValueError(f"{name} must be symmetric positive semidefinite; its smallest "
                         f"eigenvalue is {lam:g}")
    return 0.5 * (arr + arr.T)


def plant_matrices(A, B) -> tuple[np.ndarray, np.ndarray]:
    """Validate the plant ``(A, B)`` of ``dx/dt = A x + B u``."""
    if A is None or B is None:
        raise TypeError(f"A and B must be matrices, got {type(A).__name__} and "
                        f"{type(B).__name__}")
    A = as_square("A", A)
    n = A.shape[0]
    B = as_matrix("B", B)
    if B.shape[0] != n:
        raise ValueError(f"B must have shape ({n}, m) to match A {A.shape}, got {B.shape}")
    return A, B


def gain_matrices(A, B, K) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Validate the plant ``(A, B)`` and the feedback gain ``K`` of u = K x."""
    A, B = plant_matrices(A, B)
    n, m = B.shape
    K = as_matrix("K", K)
    if K.shape != (m, n):
        hint = " (a column vector: pass the gain as a row, K.T)" if K.shape == (n, m) else ""
        raise ValueError(f"K must have shape ({m}, {n}) so that B K matches A "
                         f"(B is {B.shape}), got {K.shape}{hint}")
    return A, B, K


def uncontrollable_unstable_modes(A: np.ndarray, B: np.ndarray) -> list[complex]:
    """Eigenvalues λ of A with Re λ >= 0 for which rank [A - λI, B] < n (the PBH test): the
    unstable modes no input reaches. Empty exactly when (A, B) is stabilisable (continuous
    time), up to a rank tolerance of ``n_cols * eps * ||[A, B]||``."""
    n = A.shape[0]
    scale = max(float(np.linalg.norm(np.hstack([A, B]), 2)), 1.0)
    tol = (n + B.shape[1]) * np.finfo(float).eps * scale * 10
    modes = []
    for lam in np.linalg.eigvals(A):
        if lam.real < 0:
            continue
        s = np.linalg.svd(np.hstack([A - lam * np.eye(n), B.astype(complex)]),
                          compute_uv=False)
        if s[-1] <= tol:
            modes.append(complex(lam))
    return modes

def check_instants(check_times: np.ndarray, horizon: float) -> None:
    """``check_times`` strictly increasing in (0, horizon], else ``ValueError`` naming the
    first entry that breaks it."""
    want = f"check_times must be strictly increasing instants in (0, horizon={horizon:g}]"
    if check_times.size == 0:
        raise ValueError(f"{want}, got none")
    if check_times[0] <= 0:
        raise ValueError(f"{want}; entry 0 is {check_times[0]:g}")
    steps = np.flatnonzero(np.diff(check_times) <= 0)
    if steps.size:
        i = int(steps[0]) + 1
        raise ValueError(f"{want}; entry {i} ({check_times[i]:g}) is not after entry {i - 1} "
                         f"({check_times[i - 1]:g}): sort them (np.sort) and drop repeats")
    if check_times[-1] > horizon:
        raise ValueError(f"{want}; the last entry {check_times[-1]:g} is beyond the horizon")
