r"""Private: outputs of a discrete LDS by blocks of L steps with matrix-matrix products (BLAS-3).

With the state at the start of block k, ζ_k = s_{kL} (in the eigenbasis: z_{kL}), the outputs
of the block and the next block-start state are linear in (ζ_k, u_{kL}, ..., u_{kL+L-1})::

    y_{kL+j} = Re(O_j ζ_k) + Σ_{p <= j-1+q} g_{j-1+q-p} u_{kL+p} + D u_{kL+j}     (j < L)
    ζ_{k+1}  = Φ ζ_k + Σ_{p<L} K_p u_{kL+p}

where q = 0 for the standard convention (y_t = C s_t + D u_t) and q = 1 for the S4 one
(y_t = C s_{t+1} + D u_t), and

    modal:  O_j = C V_w Λ^{j+q},  g_s = Re(C V_w Λ^s W B),  Φ = Λ^L (diagonal),  K_p = Λ^{L-1-p} W B
    dense:  O_j = C A^{j+q},      g_s = C A^s B,            Φ = A^L,              K_p = A^{L-1-p} B

So for the whole batch and every block at once: F = U K (one GEMM), the scan ζ_{k+1} = Φ ζ_k +
F_k over the T/L blocks (elementwise for the modal form, one (batch x n) @ (n x n) product per
block for the dense one), then Y = U Toe + Re(Z O) (two GEMMs). The cost per step and stream is
O(L d_in d_out + n (d_in + d_out)) in BLAS-3 plus n^2 / L for the dense scan, instead of the
recursion's O(n^2) (dense) or O(n (d_in + d_out)) scalar operations (modal). The powers are
built by repeated multiplication, as the recursion would apply them.

Complex products run as real GEMMs on interleaved (re, im) columns: a complex (r, m) array
viewed as float is (r, 2m) with columns re_0, im_0, re_1, ..., so Re(Z O) = Z_f O_f with
O_f[2i] = Re O_i, O_f[2i+1] = -Im O_i, and U K = (U K_f).view(complex) with K_f[:, 2i] = Re K_i,
K_f[:, 2i+1] = Im K_i.

Divergence is checked at the block starts; inside a block the state norm is bounded by
``intra_bound`` (modal: Σ_i ||V_w e_i|| max(1, |λ_i|^L) (|z_i| + |WB|_i Σ_p |u_p|); dense: the
products of ||A^{2^b}||_F over the binary digits of L). When a bound reaches the limit the caller
reruns the per-step recursion, which locates the step exactly.
"""

from __future__ import annotations

import numpy as np
from numba import njit

#: The largest Toeplitz block (L d_in x L d_out entries) the blocked route builds.
_MAX_TOEPLITZ = 2**21


def block_length(n: int, d_in: int, d_out: int, T: int, diagonal: bool) -> int:
    """A power of two balancing the Toeplitz cost L d_in d_out against the per-block cost
    (modal: the O(n (d_in + d_out)) products; dense: the n^2 / L scan), in [16, 256]."""
    if diagonal:
        target = 2.0 * n * (d_in + d_out) / (d_in * d_out)
    else:
        target = n / np.sqrt(d_in * d_out)
    L = int(2 ** np.clip(np.round(np.log2(max(target, 1.0))), 4, 8))
    return max(1, min(L, 1 << int(np.ceil(np.log2(max(T, 1))))))


def worthwhile(n: int, d_in: int, d_out: int, T: int, diagonal: bool) -> bool:
    """Whether the blocked route pays for these sizes: its Toeplitz block fits in
    ``_MAX_TOEPLITZ`` entries, T spans at least two blocks, and its per-step Toeplitz product
    (L d_in d_out, BLAS-3) costs at most ~4x the recursion's per-step arithmetic (which runs
    at a fraction of BLAS-3 speed and pays a per-step overhead)."""
    L = block_length(n, d_in, d_out, T, diagonal)
    if L * d_in * L * d_out > _MAX_TOEPLITZ or T < 2 * L:
        return False
    recursion = (2 * n * (d_in + d_out) + 64) if diagonal else (n * n + n * (d_in + d_out) + 256)
    return L * d_in * d_out <= 4 * recursion


def _interleave_cols(M: np.ndarray) -> np.ndarray:
    """(r, m) complex -> (r, 2m) float with columns Re M_0, Im M_0, Re M_1, ..."""
    return np.ascontiguousarray(M).view(np.float64).copy()


def _conj_rows_for_real_part(O: np.ndarray) -> np.ndarray:
    """(m, c) complex -> (2m, c) float with rows Re O_0, -Im O_0, ...: Z_f @ it = Re(Z O)."""
    out = np.empty((2 * O.shape[0], O.shape[1]))
    out[0::2] = O.real
    out[1::2] = -O.imag
    return out


def _toeplitz(g: np.ndarray, L: int, q: int, D: np.ndarray) -> np.ndarray:
    """Toe[(p, a), (j, c)] = g[j-1+q-p][c, a] for p <= j-1+q, plus D[c, a] on p = j."""
    _, d_out, d_in = g.shape
    lag = np.arange(L)[None, :] - 1 + q - np.arange(L)[:, None]  # lag[p, j]
    valid = lag >= 0
    Toe = np.where(valid[:, :, None, None], g[np.where(valid, lag, 0)], 0.0)  # (p, j, c, a)
    Toe[np.arange(L), np.arange(L)] += D
    return np.ascontiguousarray(Toe.transpose(0, 3, 1, 2)).reshape(L * d_in, L * d_out)


class BlockPlan:
    """Matrices of the blocked route for one system and block length (see module docstring).

    Build with :meth:`modal` or :meth:`dense`; :meth:`run` simulates a batch.
    """

    def __init__(self, L, q, toe, obs_f, ctr_f, phi, diagonal, complex_, n_state,
                 bound_coef, ctr_abs):
        self.L, self.q = L, q
        self.toe, self.obs_f, self.ctr_f, self.phi = toe, obs_f, ctr_f, phi
        self.diagonal, self.complex = diagonal, complex_
        self.n_state = n_state
        self.bound_coef = bound_coef  # modal: (m,) weights; dense: scalar max ||A^j||
        self.ctr_abs = ctr_abs  # modal: (m,) Σ_a |WB|_{ia}; dense: ||B||_2 sqrt(d_in)

    @classmethod
    def modal(cls, lam, Bm, Cm, D, L, q, vcol):
        """lam (m,), Bm = W B (m, d_in), Cm = C V_w (d_out, m), vcol = ||V_w e_i||_2."""
        m, d_in = Bm.shape
        d_out = Cm.shape[0]
        dtype = np.result_type(lam, Bm, Cm)
        powers = np.empty((L + 1, m), dtype=dtype)  # powers[j] = lam^j
        powers[0] = 1.0
        for j in range(1, L + 1):
            powers[j] = powers[j - 1] * lam
        g = np.einsum("km,sm,ma->ska", Cm, powers[:L], Bm).real  # g_s = Re(C V_w Λ^s W B)
        obs = (Cm.T[:, None, :] * powers[q:L + q].T[:, :, None]).reshape(m, L * d_out)
        ctr = (powers[L - 1::-1][:, None, :] * Bm.T[None, :, :]).reshape(L * d_in, m)
        complex_ = np.iscomplexobj(dtype.type(0))
        obs_f = _conj_rows_for_real_part(obs) if complex_ else np.ascontiguousarray(obs.real)
        ctr_f = _interleave_cols(ctr) if complex_ else np.ascontiguousarray(ctr.real)
        amp = vcol * np.maximum(1.0, np.abs(powers).max(axis=0))
        return cls(L, q, _toeplitz(g, L, q, D), obs_f, ctr_f, np.ascontiguousarray(powers[L]),
                   True, complex_, m, amp, np.abs(Bm).sum(axis=1))

    @classmethod
    def dense(cls, A, B, C, D, L, q):
        n, d_in = B.shape
        d_out = C.shape[0]
        CA = np.empty((L + 1, d_out, n))  # C A^j
        CA[0] = C
        for j in range(1, L + 1):
            CA[j] = CA[j - 1] @ A
        AB = np.empty((L, n, d_in))  # A^j B
        AB[0] = B
        for j in range(1, L):
            AB[j] = A @ AB[j - 1]
        g = np.einsum("skn,na->ska", CA[:L], B)
        obs = CA[q:L + q].transpose(2, 0, 1).reshape(n, L * d_out)
        ctr = AB[::-1].transpose(0, 2, 1).reshape(L * d_in, n)
        # A^L by squaring, and a bound on max_{j<=L} ||A^j||_2 from the squares' norms
        P, sq, bound = np.eye(n), A.copy(), 1.0
        e = L
        while e:
            if e & 1:
                P = P @ sq
            bound *= max(1.0, float(np.linalg.norm(sq)))
            e >>= 1
            if e:
                sq = sq @ sq
        return cls(L, q, _toeplitz(g, L, q, D), np.ascontiguousarray(obs),
                   np.ascontiguousarray(ctr), np.ascontiguousarray(P.T), False, False, n,
                   bound, float(np.linalg.norm(B, 2) * np.sqrt(d_in)))

    def run(self, ub, z0, limit):
        """Outputs (nb, T, d_out) and block-start states for inputs ub (nb, T, d_in) and initial
        states z0 (nb, n_state), or ``None`` when the intra-block bound reaches ``limit``
        (modal: on ||z||-weighted norms of s; dense: on ||s||)."""
        nb, T, d_in = ub.shape
        L = self.L
        K = -(-T // L)
        d_out = self.toe.shape[1] // L
        U = np.zeros((K, nb, L * d_in))
        Up = np.zeros((nb, K * L, d_in))
        Up[:, :T] = ub
        U[:] = Up.reshape(nb, K, L * d_in).transpose(1, 0, 2)
        U2 = U.reshape(K * nb, L * d_in)
        F = U2 @ self.ctr_f
        if self.complex:
            F = F.view(np.complex128)
        F = F.reshape(K, nb, self.n_state)
        z0 = np.ascontiguousarray(z0, dtype=F.dtype)
        if self.diagonal:
            Z = _diag_scan(self.phi.astype(F.dtype), F, z0)
        else:
            Z = _dense_scan(self.phi, F, z0)
        # divergence: bound the state norm inside each block from its start and inputs
        usum = np.abs(U).reshape(K, nb, L, d_in).max(axis=3).sum(axis=2)  # (K, nb)
        if self.diagonal:
            inner = np.abs(Z[:K]) @ self.bound_coef + usum * (self.bound_coef @ self.ctr_abs)
        else:
            inner = self.bound_coef * (np.linalg.norm(Z[:K], axis=2) + self.ctr_abs * usum)
        if not (np.all(np.isfinite(inner)) and inner.max(initial=0.0) <= limit):
            return None
        Zs = Z[:K].reshape(K * nb, self.n_state)
        if self.complex:
            Zs = Zs.view(np.float64)
        Y = U2 @ self.toe + Zs @ self.obs_f
        Y = Y.reshape(K, nb, L, d_out).transpose(1, 0, 2, 3).reshape(nb, K * L, d_out)
        return np.ascontiguousarray(Y[:, :T]), Z


@njit(cache=True)
def _diag_scan(phi, F, z0):
    """Z[0] = z0, Z[k+1] = phi * Z[k] + F[k] (elementwise over modes)."""
    K, nb, m = F.shape
    Z = np.empty((K + 1, nb, m), dtype=F.dtype)
    Z[0] = z0
    for k in range(K):
        for b in range(nb):
            for i in range(m):
                Z[k + 1, b, i] = phi[i] * Z[k, b, i] + F[k, b, i]
    return Z


@njit(cache=True)
def _dense_scan(phiT, F, z0):
    """Z[0] = z0, Z[k+1] = Z[k] @ phiT + F[k] (one (nb, n) x (n, n) product per block)."""
    K, nb, n = F.shape
    Z = np.empty((K + 1, nb, n))
    Z[0] = z0
    for k in range(K):
        Z[k + 1] = Z[k] @ phiT + F[k]
    return Z
