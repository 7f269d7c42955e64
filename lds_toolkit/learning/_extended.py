"""Private: extended-precision refinement of the spectral filters (``precision="extended"``).

Why.  In float64 any algorithm that touches H_T (or N_T) through ordinary float64 mat-vecs
sees it only to an absolute error ~eps * sigma_1, which moves filter i by ~eps * sigma_1 /
gap_i (Davis-Kahan): at T = 2^14, k = 24 that is 1e-5 for the 24th filter of H_T and 1e-1 for
N_T.  The matrix itself is known exactly (rational entries), so the limit is the arithmetic,
not the problem.  Here the mat-vec is made exact to ~2^-96 and the eigenpairs are refined
from a float64 start; every filter with sigma_i / sigma_1 >> 2^-96 then comes out correct to
float64 round-off (~1e-16), which is what the float64 result can hold.

Exact Hankel mat-vec (:class:`ExactHankel`).  (M x)_i = sum_j h[i + j] x_j is a correlation.
Write each column of X in fixed point relative to its largest entry, and the symbol h in
fixed point relative to 1, as S digits of b bits::

    x = 2^e sum_a d_a 2^(-b (a+1)),   h = sum_b' g_b' 2^(-b (b'+1)),   |d_a|, g_b' < 2^b,

so M x = 2^e sum_{a, b'} 2^(-b (a+b'+2)) corr(g_b', d_a).  Every digit correlation is a sum
of T products of b-bit integers: an integer below 2^(2b) T, which an FFT computes with an
error far below 1/2 when 2b + log2(2T) <= 42 (b is chosen so); rounding to the nearest
integer makes it exact, and the rounding distance is checked (a RuntimeError, not a silent
loss, if it ever exceeds 1/4).  Digit pairs are grouped by a + b' (one inverse FFT per group)
and summed with error-free transformations (TwoSum) into a hi + lo pair.  Truncating x and h
to b S >= 98 bits and dropping the pairs a + b' > S bounds the error by about
2^-96 ||M|| ||x||: :data:`EXTENDED_EPS`.

Refinement (:func:`refine_eigenpairs`).  Each step (X float64, T x p, p = k + buffer):

1. orthogonal-iteration step: X <- Q of the QR factorisation of Y = M X.  This damps the
   components of x_i along eigenvectors beyond the block by sigma_j / sigma_i;
2. Z = M X exactly; S = X^T Z and R = I - X^T X with compensated (Dot2) sums;
3. Ogita-Aishima correction (Japan J. Indust. Appl. Math. 35, 2018, Alg. 1): lambda_i =
   S_ii / (1 - R_ii), E_ij = (S_ij + lambda_j R_ij) / (lambda_j - lambda_i) (i != j),
   E_ii = R_ii / 2, X <- X + X E.  It converges quadratically within the block.  Pairs whose
   Ritz values are closer than the arithmetic can separate are left alone (E_ij = 0);
4. sort the columns by lambda (the QR step assumes descending order) and reuse
   M X_new = Z (I + E) as the next step's Y, so one exact mat-vec per step.

The float64 errors that remain are ~eps in each column (storage of X) plus
EXTENDED_EPS * sigma_1 / gap_i; the loop stops when every requested column's correction
is at that level.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.fft as sfft

from .._jit import njit

__all__ = ["EXTENDED_EPS", "ExactHankel", "refine_eigenpairs", "gram_dot2"]

#: Relative accuracy of the extended-precision mat-vec (bits kept >= 98, bound 2^-96).
EXTENDED_EPS = 2.0**-96
_BITS = 98
_NUMERATOR = {"H": 2, "N": 24}


def _denominator(n: int, kind: str) -> int:
    if kind == "H":
        return (n + 1) * (n + 2) * (n + 3)
    return (n + 1) * (n + 2) * (n + 3) * (n + 4) * (n + 5)


def _digit_bits(T: int) -> int:
    """Digit width b with 2 b + log2(2T) <= 42: integer correlations stay far below 2^53."""
    return int(min(16, max(8, (42 - math.ceil(math.log2(2 * T))) // 2)))


def symbol_digits(n_terms: int, kind: str, bits: int, n_digits: int) -> np.ndarray:
    """Digits g of round(h[n] 2^(bits n_digits)), most significant first: shape (S, n_terms).

    Exact integer arithmetic (Python ints): h[n] = num / den is rational.
    """
    total = bits * n_digits
    num = _NUMERATOR[kind] << total
    mask = (1 << bits) - 1
    out = np.empty((n_digits, n_terms))
    for n in range(n_terms):
        den = _denominator(n, kind)
        v = (num + den // 2) // den  # round(h[n] 2^total); h[n] < 1 so v < 2^total
        for s in range(n_digits - 1, -1, -1):
            out[s, n] = v & mask
            v >>= bits
    return out


def vector_digits(X: np.ndarray, bits: int, n_digits: int) -> tuple[np.ndarray, np.ndarray]:
    """Fixed-point digits of each column: X[:, c] ~ 2^e_c sum_a d[a, :, c] 2^(-bits (a+1)).

    Sign and magnitude: the digits of |x| carry the sign of x, so every step is exact in
    float64 (power-of-two scalings, floor of a non-negative value, and the subtraction of a
    non-negative value's own integer part; with floor on negative values 1 - tiny would
    round).  The truncation error is < 2^(-bits S) max |X[:, c]|; |digits| < 2^bits.
    """
    mag = np.abs(X)
    sign = np.sign(X)
    peak = mag.max(axis=0)
    e = np.frexp(np.where(peak > 0, peak, 1.0))[1].astype(np.float64)  # peak < 2^e
    r = mag * np.exp2(-e)
    d = np.empty((n_digits,) + X.shape)
    scale = float(2**bits)
    for a in range(n_digits):
        r = r * scale
        q = np.floor(r)
        r = r - q
        d[a] = sign * q
    return d, e


class ExactHankel:
    """Mat-mat with the T x T Hankel matrix H_T or N_T to relative accuracy ~2^-96.

    See the module docstring for the digit scheme.  ``matmat`` returns ``(hi, lo)`` with
    ``hi + lo`` the product and ``|lo| <= ulp(hi) / 2``.
    """

    def __init__(self, T: int, kind: str):
        self.T = int(T)
        self.kind = kind
        self.bits = _digit_bits(self.T)
        self.n_digits = -(-_BITS // self.bits)
        self.n_fft = sfft.next_fast_len(2 * self.T - 1, real=True)
        g = symbol_digits(2 * self.T - 1, kind, self.bits, self.n_digits)
        self._gf = sfft.rfft(g, n=self.n_fft, axis=1)  # (S, n_fft // 2 + 1)

    def matmat(self, X: np.ndarray, block: int = 16) -> tuple[np.ndarray, np.ndarray]:
        T, m = X.shape
        hi, lo = np.empty((T, m)), np.empty((T, m))
        for c in range(0, m, block):
            hi[:, c : c + block], lo[:, c : c + block] = self._block(X[:, c : c + block])
        return hi, lo

    def _block(self, X):
        S, b, T = self.n_digits, self.bits, self.T
        d, e = vector_digits(X, b, S)
        df = np.conjugate(sfft.rfft(d, n=self.n_fft, axis=1))  # (S, nf, m)
        hi = np.zeros(X.shape)
        lo = np.zeros(X.shape)
        worst = 0.0
        for s in range(S + 1):  # group the digit pairs by a + b' = s
            acc = None
            for a in range(max(0, s - S + 1), min(s, S - 1) + 1):
                term = df[a] * self._gf[s - a][:, None]
                acc = term if acc is None else acc + term
            P = sfft.irfft(acc, n=self.n_fft, axis=0)[:T]
            R = np.rint(P)
            worst = max(worst, float(np.abs(P - R).max()))
            R *= 2.0 ** (-b * (s + 2))  # exact
            total = hi + R  # TwoSum(hi, R): hi + R = total + err exactly
            bb = total - hi
            lo += (hi - (total - bb)) + (R - bb)
            hi = total
        if worst > 0.25:
            raise RuntimeError(
                f"extended-precision Hankel mat-vec (kind={self.kind!r}, T={T}) lost "
                f"exactness: FFT round-off {worst:.3f} of an integer correlation exceeds 1/4"
            )
        out_hi = hi + lo
        out_lo = lo - (out_hi - hi)
        scale = np.exp2(e)
        return out_hi * scale, out_lo * scale


@njit(cache=True)
def _two_prod(a, b):
    # Dekker's error-free product (no FMA assumed): a * b = p + err exactly
    p = a * b
    c = 134217729.0 * a
    ah = c - (c - a)
    al = a - ah
    c = 134217729.0 * b
    bh = c - (c - b)
    bl = b - bh
    return p, al * bl - (((p - ah * bh) - al * bh) - ah * bl)


@njit(cache=True)
def gram_dot2(X, Z):
    """X^T Z with Ogita-Rump-Oishi Dot2 sums: as accurate as twice-float64 arithmetic."""
    T, m = X.shape
    n = Z.shape[1]
    out = np.empty((m, n))
    for i in range(m):
        for j in range(n):
            s = 0.0
            c = 0.0
            for t in range(T):
                p, ep = _two_prod(X[t, i], Z[t, j])
                x = s + p
                z = x - s
                c += (s - (x - z)) + (p - z) + ep
                s = x
            out[i, j] = s + c
    return out


def refine_eigenpairs(
    X0: np.ndarray, k: int, kind: str, max_iter: int = 25
) -> tuple[np.ndarray, np.ndarray]:
    """Refine approximate top eigenvectors X0 (T x p, p >= k) of H_T / N_T; return top k.

    Returns ``(sigma, phi)``: sigma descending, shape (k,); phi (T, k) orthonormal to
    float64 round-off.  Raises RuntimeError if the corrections do not settle.
    """
    T, p = X0.shape
    op = ExactHankel(T, kind)
    eps = np.finfo(np.float64).eps
    X = np.ascontiguousarray(X0, dtype=np.float64)
    Y = None
    settled = False
    worst = np.inf
    for _ in range(max_iter):
        if Y is None:
            hi, lo = op.matmat(X)
            Y = hi + lo
        X, Rq = np.linalg.qr(Y)
        X = np.ascontiguousarray(X * np.where(np.diag(Rq) < 0, -1.0, 1.0))
        hi, lo = op.matmat(X)
        S = gram_dot2(X, np.ascontiguousarray(hi)) + X.T @ lo
        R = np.eye(p) - gram_dot2(X, X)
        lam = np.diag(S) / (1.0 - np.diag(R))
        diff = lam[None, :] - lam[:, None]
        resolvable = np.abs(diff) > 64.0 * EXTENDED_EPS * abs(lam[0])
        np.fill_diagonal(resolvable, False)
        E = np.zeros((p, p))
        E[resolvable] = (S + lam[None, :] * R)[resolvable] / diff[resolvable]
        np.fill_diagonal(E, 0.5 * np.diag(R))
        Z = hi + lo
        X = X + X @ E
        Y = Z + Z @ E  # = M X_new, by linearity
        order = np.argsort(-lam, kind="stable")
        lam, X, Y = lam[order], X[:, order], Y[:, order]
        E = E[np.ix_(order, order)]
        # a column is settled when its correction is at the level the arithmetic allows
        gaps = np.abs(np.diff(lam))
        gap = np.minimum(np.r_[np.inf, gaps], np.r_[gaps, np.inf])[:k]
        off = np.abs(E - np.diag(np.diag(E)))[:, :k].max(axis=0)
        with np.errstate(divide="ignore"):
            tol = 256.0 * eps + 256.0 * EXTENDED_EPS * abs(lam[0]) / gap
        worst = float(np.max(off / tol))
        if worst <= 1.0:
            if settled:
                return lam[:k].copy(), X[:, :k].copy()
            settled = True
    raise RuntimeError(
        f"extended-precision refinement of the {kind}_T filters (T={T}, k={k}) did not "
        f"settle in {max_iter} steps: largest correction is {worst:.1e} x its tolerance"
    )
