r"""Private: a low-rank factor H_T ≈ F F^T (and N_T) from a quadrature of their integral form,
and the top eigenpairs it gives without ever touching a T-long FFT more than once.

Both matrices are integrals of rank-one terms (paper eqs. 3 and 5)::

    H_T = ∫_0^1 μ_α μ_α^T dα,  μ_α = (1 - α) [α^j]_j;     N_T: (1 - α)^2 instead of (1 - α)

so (M)_{ij} = h[i + j] = ∫_0^1 (1 - α)^{2p} α^{i+j} dα with p = 1 (H) or 2 (N). Substituting
α = e^{-x}, x = e^t turns the symbol into an integral over the whole line whose integrand decays
like e^{3t} (t → -∞) and double-exponentially (t → +∞)::

    h[n] = ∫ (1 - e^{-x})^{2p} e^{-(n+1) x} x dt,     x = e^t,

which the trapezoidal rule integrates with geometric accuracy in the step τ (the integrand is
analytic in |Im t| < π/2, but grows like e^{(n+1) e^{Re t}} towards that edge, so the usable
strip is about half as wide: the error falls like e^{-π^2 / (2τ)}). With τ = 1/8 on
t ∈ [t_min, 4.5], t_min = min(-log(2T) - 6, log(eps / 8T) / (2p + 1), -17) (about 180 nodes
at T = 4096, 200 at T = 2^20) the symbol error
Σ_{n < 2T} |h~[n] - h[n]|, which bounds the operator-norm error of the Hankel matrix, is
1-2 eps h[0], the float64 rounding level of the symbol itself, and the error of every entry
with n < 200 is within a few eps of it (tests/learning/test_filters_quadrature.py, against
the exact rationals). τ = 1/4 leaves errors up to ~5000 eps at small n (N_T), and a
non-dyadic τ a bias of ~eps |t| / τ from unequal float64 spacings.
The quadrature gives M ≈ F F^T with

    F[j, q] = c_q e^{-j x_q},   c_q = (τ x_q e^{-x_q})^{1/2} (1 - e^{-x_q})^p,

a T x Q matrix with positive weights, so M~ is positive semidefinite of rank Q. Its Gram matrix
has a closed form, G = F^T F, G_{pq} = c_p c_q (1 - e^{-T s}) / (1 - e^{-s}), s = x_p + x_q,
and the nonzero eigenpairs of M~ are (σ_i, F v_i / √σ_i) with (σ_i, v_i) those of G (Q x Q).
Those vectors carry eigenvector errors ~eps σ_1 / gap_i, like a dense ``eigh``, but they lose
orthogonality by up to eps σ_1 / √(σ_i σ_j): their span is orthonormalised (Cholesky QR
twice) and the caller's Rayleigh-Ritz step with the exact operator rotates within it. Cost: O(Q^3)
plus O(T Q m) BLAS-3 products (m filters), against O(T log T) per column and iteration for the
FFT subspace iteration. :func:`lds_toolkit.learning.filters.spectral_filters` then checks the
result against the exact FFT mat-vec (one product) and falls back to the subspace iteration if
a residual is above tolerance.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg as sla

__all__ = ["quadrature_nodes", "quadrature_symbol", "quadrature_basis", "quadrature_eigs"]

_TAU = 0.125  # dyadic: the nodes t_min + i tau are exactly equispaced in float64
_T_MAX = 4.5
_CHUNK = 8192
_UNDERFLOW = 700.0  # e^{-700} ~ 1e-304: columns beyond it are zero in a chunk


def quadrature_nodes(T: int, kind: str) -> tuple[np.ndarray, np.ndarray]:
    """Nodes x_q and factor weights c_q of M ≈ F F^T, F[j, q] = c_q e^{-j x_q} (module doc)."""
    p = {"H": 1, "N": 2}[kind]
    eps = np.finfo(np.float64).eps
    # below t_min the integrand is ~e^{(2p+1) t} for every n < 2T: the cut-off mass, summed
    # over the 2T entries of the symbol, stays below eps h[0] / 4, and below a few eps of
    # each entry with n < 200 (t <= -17); t_min also sits well below -log(2T), where the
    # largest n put their mass
    t_min = min(-np.log(2.0 * T) - 6.0, np.log(eps / (8.0 * T)) / (2 * p + 1), -17.0)
    t = np.arange(t_min, _T_MAX + _TAU / 2, _TAU)
    x = np.exp(t)
    c = np.sqrt(_TAU * x * np.exp(-x)) * (-np.expm1(-x)) ** p
    return x, c


def quadrature_symbol(n: np.ndarray, T: int, kind: str) -> np.ndarray:
    """The quadrature's symbol h~[n] = Σ_q c_q^2 e^{-n x_q} (to compare with the exact one)."""
    x, c = quadrature_nodes(T, kind)
    n = np.asarray(n, dtype=np.float64)
    return np.exp(-np.multiply.outer(n, x)) @ (c * c)


def _gram(x: np.ndarray, c: np.ndarray, T: int) -> np.ndarray:
    s = np.add.outer(x, x)
    return np.outer(c, c) * (np.expm1(-T * s) / np.expm1(-s))


def _chunk_scales(x: np.ndarray, T: int):
    """(E0, [(j0, j1, scale_j0)]) with E0[d, q] = e^{-d x_q} for d < chunk: every chunk of F is
    E0[:j1-j0] diag(e^{-j0 x}), so F is applied by matrix products only. Scales below
    e^{-700} are set to 0 (no subnormal operands in the products)."""
    E0 = np.exp(-np.multiply.outer(np.arange(min(T, _CHUNK), dtype=np.float64), x))
    chunks = []
    for j0 in range(0, T, _CHUNK):
        z = x * j0
        chunks.append((j0, min(T, j0 + _CHUNK), np.where(z < _UNDERFLOW, np.exp(-z), 0.0)))
    return E0, chunks


def _apply_F_rows(x: np.ndarray, c: np.ndarray, T: int, V: np.ndarray) -> np.ndarray:
    """(F @ V)^T, shape (m, T), for F[j, q] = c_q e^{-j x_q} and V (Q, m), chunk by chunk (F
    is never stored)."""
    out = np.empty((V.shape[1], T))
    cVt = (c[:, None] * V).T
    E0, chunks = _chunk_scales(x, T)
    for j0, j1, scale in chunks:
        out[:, j0:j1] = (cVt * scale) @ E0[: j1 - j0].T
    return out


def _apply_FT_rows(x: np.ndarray, c: np.ndarray, T: int, Xt: np.ndarray) -> np.ndarray:
    """F^T @ Xt.T for Xt (m, T): shape (Q, m)."""
    out = np.zeros((x.size, Xt.shape[0]))
    E0, chunks = _chunk_scales(x, T)
    for j0, j1, scale in chunks:
        out += scale[:, None] * (E0[: j1 - j0].T @ Xt[:, j0:j1].T)
    return c[:, None] * out


def _orthonormalize_rows(Xt: np.ndarray) -> np.ndarray:
    """Orthonormal rows spanning the rows of Xt (m, T), by Cholesky QR twice (BLAS-3 only; the
    rows here are orthonormal up to ~1e-2 at worst), in place. If Xt is too ill-conditioned
    for that (the first Cholesky fails), a shifted Cholesky QR pass goes first (Fukaya et al.,
    SIAM J. Sci. Comput. 42, 2020): the shift keeps it positive definite however
    ill-conditioned Xt is."""
    m, T = Xt.shape
    eps = np.finfo(np.float64).eps
    G = Xt @ Xt.T
    try:
        np.linalg.cholesky(G)
        shifts: tuple[float, ...] = (0.0, 0.0)
    except np.linalg.LinAlgError:
        shifts = (11.0 * (T * m + m * (m + 1)) * eps * np.trace(G), 0.0, 0.0)
    for s in shifts:
        L = np.linalg.cholesky(G + s * np.eye(m))  # G = L L^T, rows of L^{-1} Xt orthonormal
        Linv = sla.solve_triangular(L, np.eye(m), lower=True)
        for c0 in range(0, T, 1 << 15):  # Xt <- L^{-1} Xt in place, by column blocks
            Xt[:, c0 : c0 + (1 << 15)] = Linv @ Xt[:, c0 : c0 + (1 << 15)]
        G = Xt @ Xt.T
    return Xt


def quadrature_basis(T: int, m: int, kind: str) -> np.ndarray | None:
    """Orthonormal basis of the span of the top-m eigenvectors of the quadrature approximation
    M~ = F F^T of H_T / N_T, as the rows of an (m, T) array ordered like those eigenvectors
    (descending), or None when the quadrature has fewer than m + 4 nodes (then the caller uses
    another method).

    The caller finishes with a Rayleigh-Ritz step on the exact operator, which also rotates
    within this span; that is why no Rayleigh-Ritz step with M~ is done here.
    """
    x, c = quadrature_nodes(T, kind)
    if x.size < m + 4:
        return None
    w, V = np.linalg.eigh(_gram(x, c, T))
    w, V = w[::-1][:m], V[:, ::-1][:, :m]
    return _orthonormalize_rows(
        _apply_F_rows(x, c, T, V / np.sqrt(np.maximum(w, w[0] * 1e-300))))


def quadrature_eigs(T: int, m: int, kind: str) -> tuple[np.ndarray, np.ndarray] | None:
    """Top-m eigenpairs (descending; phi of shape (T, m)) of M~ itself: Rayleigh-Ritz of M~ on
    :func:`quadrature_basis`. For checks of the quadrature alone."""
    x, c = quadrature_nodes(T, kind)
    Qt = quadrature_basis(T, m, kind)
    if Qt is None:
        return None
    Bq = _apply_FT_rows(x, c, T, Qt)  # Q^T F F^T Q = Bq^T Bq
    theta, W = np.linalg.eigh(Bq.T @ Bq)
    return theta[::-1].copy(), Qt.T @ W[:, ::-1]
