r"""Private: the eigenbasis (modal) form of a state matrix and the modal path's a-posteriori
error estimate (its *certificate*).

Reduced modal form.  For a real A = V Λ V^{-1} the complex eigenvalues come in conjugate pairs
with conjugate eigenvectors, and for a real trajectory the modal coordinates z = V^{-1} s are
conjugate-symmetric too.  Only one mode of each pair is kept (``m = n_real + n_pairs`` modes)::

    s = Re(V_w z),   z = W s,   z_{t+1} = Λ z_t + W B u_t,   y_t = Re(C V_w z_t) + D u_t

with ``V_w`` the kept eigenvectors, the paired ones doubled (weight 2), and ``W`` the kept
rows of V^{-1}.  A symmetric A keeps everything real (``V`` orthogonal).

Certificate.  The modal path simulates, up to the rounding of its own recursion, the system
whose eigen-decomposition is *exactly* the computed one.  With the residuals

    R_A = A V_w - V_w Λ,      R_B = Re(V_w W B) - B,

the trajectory s~_t = Re(V_w z_t) satisfies s~_{t+1} = A s~_t + B u_t + r_t with
r_t = -Re(R_A z_t) + R_B u_t, so its error e_t = s~_t - s_t obeys e_{t+1} = A e_t + r_t.  To
first order (A^k ≈ V Λ^k V^{-1} on a term that is already of size eps) the error of mode i,
ξ_i = (W e)_i, obeys ξ_{t+1,i} = λ_i ξ_{t,i} + (W r_t)_i, so::

    |ξ_{t,i}| <= |ξ_{0,i}| max(1, |λ_i|^T) + S_i q_i,   S_i = Σ_{k<T} |λ_i|^k,
    q_i = ½ (||E_i ∘ ẑ|| + ||E'_i ∘ ẑ||) + ||F_i ∘ û|| + c eps (|λ_i| ẑ_i + |WB|_i û)

with E = W R_A, E' = W conj(R_A), F = W R_B, ẑ_i = max_t |z_{t,i}| (tracked by the
simulation), û the largest input per channel.  The sums over j use the root-sum-square
(independent rounding errors) and the accumulation over time is the coherent one (S_i, exact
for a constant drive), so the estimate is first-order and *not* a rigorous bound; the output
error estimate is Σ_i |C V_w|_{ki} |ξ_i| plus the rounding of the output product, the state
error estimate |V_w| |ξ|.  Both are divided by the largest output (state) to give relative
errors.  On random systems (n <= 128, ρ(A) up to 0.9999) the estimate exceeds the observed
modal-vs-dense difference by 4-200x; on nearly defective ones (cond(V) >= 1e6) by far more,
which is the point: such runs go to the dense path (tests/systems/test_modal_certificate.py).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg

from .._repr import compact_repr
from .._validation import as_square

_EPS = float(np.finfo(np.float64).eps)


@dataclass(frozen=True, repr=False)
class ModalForm:
    """Eigen-decomposition A = V diag(lam) V^{-1} used by the modal path."""

    lam: np.ndarray
    V: np.ndarray
    Vinv: np.ndarray
    cond: float
    orthogonal: bool

    def __repr__(self) -> str:
        return compact_repr(self, n=self.lam.size, cond=self.cond, orthogonal=self.orthogonal,
                            complex=bool(np.iscomplexobj(self.lam)))


def modal_form(A: np.ndarray) -> ModalForm:
    """Eigen-decomposition of A for the modal path (eigh for symmetric A).

    Symmetry is tested exactly (``A == A.T``) so that a nearly symmetric A is not silently
    symmetrised. ``A`` must be a finite real square matrix (``ValueError``/``TypeError``
    naming ``A`` otherwise).
    """
    A = as_square("A", A)
    if np.array_equal(A, A.T):
        lam, V = scipy.linalg.eigh(A)
        return ModalForm(lam, V, V.T, 1.0, True)
    lam, V = scipy.linalg.eig(A)
    with np.errstate(all="ignore"):
        cond = float(np.linalg.cond(V))
    if not np.isfinite(cond):
        return ModalForm(lam, V, V, np.inf, False)
    try:  # a finite cond can still be an exactly singular V (a Jordan block at 0: a delay line)
        Vinv = np.linalg.inv(V)
    except np.linalg.LinAlgError:
        return ModalForm(lam, V, V, np.inf, False)
    if np.all(lam.imag == 0):
        lam, V, Vinv = lam.real.copy(), V.real.copy(), Vinv.real.copy()
    return ModalForm(lam, V, Vinv, cond, False)


@dataclass(frozen=True, repr=False)
class ReducedModal:
    """Kept modes of A = V Λ V^{-1} (one of each conjugate pair, see the module docstring).

    Attributes
    ----------
    lam : ndarray (m,)
        Kept eigenvalues (float64 when all eigenvalues are real, else complex128).
    Vw : ndarray (n, m)
        Kept eigenvectors, those of a conjugate pair doubled: s = Re(Vw z).
    W : ndarray (m, n)
        Kept rows of V^{-1}: z = W s.
    orthogonal : bool
        V orthogonal (A symmetric).
    """

    lam: np.ndarray
    Vw: np.ndarray
    W: np.ndarray
    orthogonal: bool

    @property
    def complex(self) -> bool:
        return bool(np.iscomplexobj(self.lam))

    def __repr__(self) -> str:
        return compact_repr(self, m=self.lam.size, n=self.Vw.shape[0], complex=self.complex,
                            orthogonal=self.orthogonal)


def reduce_modes(lam: np.ndarray, V: np.ndarray, Vinv: np.ndarray,
                 orthogonal: bool) -> ReducedModal:
    """Keep the real eigenvalues and the member with Im λ > 0 of each conjugate pair.

    LAPACK's ``geev`` returns the pairs as exact conjugates with conjugate eigenvectors; if the
    spectrum is not conjugate-symmetric (it always is for a real A) every mode is kept with
    weight 1, which is still exact (s = Re(V z) with z = V^{-1} s).
    """
    if not np.iscomplexobj(lam):
        return ReducedModal(lam, V, Vinv, orthogonal)
    pos, neg = lam.imag > 0, lam.imag < 0
    paired = np.array_equal(np.sort_complex(lam[pos]), np.sort_complex(np.conj(lam[neg])))
    if not paired:
        return ReducedModal(lam, V, Vinv, orthogonal)
    keep = ~neg
    weight = np.where(pos[keep], 2.0, 1.0)
    return ReducedModal(np.ascontiguousarray(lam[keep]),
                        np.ascontiguousarray(V[:, keep] * weight),
                        np.ascontiguousarray(Vinv[keep]), orthogonal)


@dataclass(frozen=True)
class ModalCertificate:
    """A-posteriori first-order error estimate of one modal simulation.

    Attributes
    ----------
    error_estimate : float
        Estimated largest error of the outputs (and of the states when they were returned)
        relative to the largest output (state) magnitude: the module docstring of
        ``lds_toolkit.systems._modal`` derives it.
    rtol : float
        The tolerance it was compared with.
    cond : float
        2-norm condition number of the eigenvector matrix V.
    passed : bool
        ``error_estimate <= rtol``. A run with ``method="auto"`` that fails is redone on the
        dense path.
    """

    error_estimate: float
    rtol: float
    cond: float
    passed: bool


def geometric_sums(lam: np.ndarray, T: int) -> tuple[np.ndarray, np.ndarray]:
    """S_i = Σ_{k<T} |λ_i|^k and G_i = max(1, |λ_i|^T) (discrete time)."""
    a = np.abs(lam).astype(np.float64)
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        aT = a ** T
        S = np.where(a == 1.0, float(T), (1.0 - aT) / (1.0 - a))
    S = np.where(np.isfinite(S), S, np.inf)
    return S, np.maximum(1.0, aT)


def integral_sums(lam: np.ndarray, duration: float) -> tuple[np.ndarray, np.ndarray]:
    """S_i = ∫_0^duration |e^{λ_i s}| ds and G_i = max(1, |e^{λ_i duration}|) (continuous)."""
    re = np.real(lam).astype(np.float64)
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        S = np.where(np.abs(re * duration) < 1e-12, duration, np.expm1(re * duration) / re)
        G = np.maximum(1.0, np.exp(re * duration))
    return np.where(np.isfinite(S), S, np.inf), np.where(np.isfinite(G), G, np.inf)


def _rss(M: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Row-wise root-sum-square of |M_ij| v_j."""
    return np.sqrt(np.square(np.abs(M)) @ np.square(v))


def certify(A: np.ndarray, B: np.ndarray, C: np.ndarray, red: ReducedModal, cond: float, *,
            S: np.ndarray, G: np.ndarray, rounding: np.ndarray, zmax: np.ndarray,
            umax: np.ndarray, ymax: float, xi0: np.ndarray | None = None,
            wmax: np.ndarray | None = None, xmax: float | None = None,
            rtol: float) -> ModalCertificate:
    """The first-order error estimate of the module docstring, compared with ``rtol``.

    Parameters
    ----------
    S, G : ndarray (m,)
        Accumulation factors of each mode (:func:`geometric_sums` / :func:`integral_sums`).
    rounding : ndarray (m,)
        The accumulated rounding of the recursion itself in each mode (c eps (|λ_i| ẑ_i +
        |WB|_i û) times its accumulation factor; see :func:`recursion_rounding`).
    zmax : ndarray (m,)
        max over batch and time of |z_{t,i}|.
    umax : ndarray (d_in,)
        max |u| per input channel.
    ymax : float
        max |y| over every output entry.
    xi0 : ndarray (m,), optional
        max over the batch of |W (Re(V_w z_0) - x_0)|: the initial-state conversion error.
    wmax : ndarray (n,), optional
        max |w| per state coordinate when process noise entered in modal coordinates.
    xmax : float, optional
        max |x| over every returned state entry (only when states were returned).
    """
    with np.errstate(all="ignore"):  # inf/NaN inputs give an infinite estimate
        return _certify(A, B, C, red, cond, S, G, rounding, zmax, umax, ymax, xi0, wmax,
                        xmax, rtol)


def recursion_rounding(step_gain: np.ndarray, zmax: np.ndarray, drive: np.ndarray,
                       steps: np.ndarray) -> np.ndarray:
    """4 eps (step_gain_i ẑ_i + drive_i) steps_i: the rounding of z <- λ z + (W B u) per
    step (a complex multiply-add: a few eps of its operands), accumulated over ``steps``."""
    return 4.0 * _EPS * (step_gain * zmax + drive) * steps


def _certify(A, B, C, red, cond, S, G, rounding, zmax, umax, ymax, xi0, wmax, xmax, rtol):
    lam, Vw, W = red.lam, red.Vw, red.W
    RA = A @ Vw - Vw * lam
    q = _rss(W @ RA, zmax)
    if red.complex:
        q = 0.5 * (q + _rss(W @ np.conj(RA), zmax))
    Bm = W @ B
    q = q + _rss(W @ (np.real(Vw @ Bm) - B), umax)
    if wmax is not None:
        n = A.shape[0]
        q = q + _rss(W @ (np.real(Vw @ W) - np.eye(n)), wmax)
    xi = S * q + rounding
    if xi0 is not None:
        xi = xi + G * xi0
    Cw = np.abs(C @ Vw)
    m = lam.size
    err_y = float(np.max(Cw @ xi + np.sqrt(m) * _EPS * (Cw @ zmax), initial=0.0))
    est = _relative(err_y, ymax)
    if xmax is not None:
        aV = np.abs(Vw)
        err_x = float(np.max(aV @ xi + np.sqrt(m) * _EPS * (aV @ zmax), initial=0.0))
        est = max(est, _relative(err_x, xmax))
    if not np.isfinite(est):
        est = float("inf")
    return ModalCertificate(error_estimate=est, rtol=float(rtol), cond=float(cond),
                            passed=bool(est <= rtol))


def _relative(err: float, scale: float) -> float:
    if not np.isfinite(err):
        return float("inf")
    if scale > 0 and np.isfinite(scale):
        return err / scale
    return 0.0 if err == 0 else float("inf")
