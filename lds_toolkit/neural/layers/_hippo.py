"""HiPPO-LegS and its normal-plus-low-rank (NPLR) form, in float64 numpy.

LegS (Gu et al. 2020; state-spaces/s4 ``src/models/hippo/hippo.py``, ``transition("legs")``)::

    A_nk = -sqrt(2n+1) sqrt(2k+1)   (n > k),     A_nn = -(n+1),     A_nk = 0   (n < k)
    B_n  =  sqrt(2n+1),                                              n, k = 0..N-1

With ``p_n = sqrt(n + 1/2)`` the matrix ``A + p pᵀ = -I/2 + S`` has a skew-symmetric ``S``, so it
is normal and diagonalised by a unitary ``V``: ``A + p pᵀ = V Λ V*`` with ``Re Λ = -1/2``. Hence
the NPLR (equivalently diagonal-plus-low-rank, DPLR, in the basis of ``V``) form::

    A = V (Λ - p̃ p̃*) V*,    B = V B̃,    p̃ = V* p,    B̃ = V* B.

The eigenvalues of the real ``S`` come in conjugate pairs ``±iω`` (none is zero for even N), and
their eigenvectors can be taken as conjugates of each other, so only the ``N/2`` modes with
``ω > 0`` are stored: ``V = [V₊, conj(V₊)]``, ``Λ = [Λ₊, conj(Λ₊)]``, and likewise for
``p̃`` and ``B̃``. (state-spaces/s4 keeps the ``ω < 0`` half; the two choices are conjugates.)
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np


def legs_matrices(N: int) -> tuple[np.ndarray, np.ndarray]:
    """The HiPPO-LegS ``(A (N, N), B (N,))`` of the module docstring (float64)."""
    q = np.arange(N, dtype=np.float64)
    r = np.sqrt(2 * q + 1)
    A = -np.tril(np.outer(r, r), -1) - np.diag(q + 1)
    return A, r.copy()


class NPLR(NamedTuple):
    """The half (``Im Λ > 0``) of the NPLR form of LegS: ``A = V (Λ - p̃ p̃*) V*``, ``B = V B̃``
    with the conjugate halves appended (module docstring). Shapes ``(N/2,)`` and ``V (N, N/2)``."""

    Lambda: np.ndarray
    P: np.ndarray
    B: np.ndarray
    V: np.ndarray


def legs_nplr(N: int) -> NPLR:
    """NPLR form of the ``N x N`` LegS matrix (``N`` even), computed by ``eigh`` in float64.

    ``Λ`` is sorted by increasing ``Im Λ > 0``. The reconstruction
    ``[V, V̄] (diag(Λ, Λ̄) - [p̃; p̃̄][p̃; p̃̄]*) [V, V̄]* = A`` holds to ~1e-12 (tests).
    """
    if N < 2 or N % 2:
        raise ValueError(f"legs_nplr: N must be an even int >= 2, got {N}")
    A, B = legs_matrices(N)
    p = np.sqrt(np.arange(N, dtype=np.float64) + 0.5)
    S = A + np.outer(p, p) + 0.5 * np.eye(N)  # skew-symmetric
    # S = i H with H = -i S Hermitian: eigh gives real ω and orthonormal eigenvectors
    omega, V = np.linalg.eigh(-1j * S)
    pos = np.argsort(omega)[N // 2 :]
    if omega[pos[0]] <= 1e-8:  # pragma: no cover - LegS has no zero mode for even N
        raise ValueError(f"legs_nplr: the skew part of LegS has a zero eigenvalue for N={N}")
    Vp = V[:, pos]
    Lam = -0.5 + 1j * omega[pos]
    return NPLR(Lam, Vp.conj().T @ p, Vp.conj().T @ B, Vp)
