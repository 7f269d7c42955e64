r"""Event-triggered control (ETC) of ``dx/dt = A x + B u`` with ``u(t) = K x(t_i)`` held.

The loop of the S4++ paper, Sec. 2.2 (the paper writes the gain as ``T``; here it is ``K``
because ``T`` is a horizon everywhere else in the toolkit)::

    dx/dt = A x(t) + B K x(t_i),          t in [t_i, t_{i+1})              (eq. 7 sampled)
    e(t)  = x(t_i) - x(t)                                                   (eq. 9)
    dx/dt = (A + B K) x(t) + B K e(t)                                       (eq. 10)
    dV/dt = -xᵀ M x + 2 xᵀ P B K e,       V = xᵀ P x                        (eq. 11)

with ``(A + BK)ᵀ P + P (A + BK) = -M`` (eq. 8). A triggering rule decides the sampling
instants: ``t_0 = 0`` is always a sample (the loop starts with ``u = K x(0)``) and

    t_{i+1} = inf { t > t_i : g(t) <= 0 }

for the rule's function ``g`` (for the paper's rule, eq. 12, ``g = κ xᵀMx - 2 xᵀPBKe``).

Two monitoring modes:

``"exact"`` (continuous monitoring)
    The flow between events is exact (matrix exponential of the loop generator, see
    :mod:`lds_toolkit.control._flow`); ``g`` is scanned on steps of ``bracket_step`` after each
    event and the first sign change is located by Brent's method to ``tol`` (1e-10 by
    default). A crossing and re-crossing of zero within one bracket step would be missed:
    keep ``bracket_step`` well below the shortest inter-event time (the result reports it).
``"grid"`` (periodic monitoring, the paper's ``h = 0.01``)
    ``g`` is checked only at ``t = k h``; an event happens at the first grid point where
    ``g <= 0`` (using ``e(t⁻)``, the error before the update). Event times are multiples of
    ``h``, and the first grid event lies within one grid step after the exact one.

Counting convention: ``ETCResult.sample_times`` starts with ``t_0 = 0``; ``n_events`` and
``event_times`` count only the triggered updates at ``t > 0``.
"""

from __future__ import annotations

import math
import warnings
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from numbers import Integral
from typing import Any

import numpy as np
import scipy.optimize

from .._random import RngLike, as_generator
from .._repr import compact_repr
from .._threads import single_blas_thread
from .._typing import ArrayLike, SystemLike
from .._validation import (
    as_float_array,
    as_matrix,
    check_choice,
    check_fits_in_memory,
    check_positive_int,
    check_real,
)
from ..systems.lds import is_system, require_continuous
from ._checks import (
    gain_matrices,
    is_positive_definite,
    min_eig_sym,
    plant_matrices,
    symmetric_positive_definite,
    symmetric_positive_semidefinite,
)
from ._flow import Flow, FlowTable, flow_on_grid, loop_generator
from .lyapunov import continuous_lyapunov, verify

__all__ = [
    "DynamicRule",
    "ETCResult",
    "ETCSystem",
    "InterEventStatistics",
    "LyapunovRule",
    "PAPER_PRINTED",
    "PeriodicRule",
    "RelativeErrorRule",
    "TriggerRule",
    "inter_event_statistics",
    "paper_system",
    "printed_matrices_check",
    "simulate_etc",
]

_EPS = np.finfo(float).eps


# --------------------------------------------------------------------------- the loop
_SIGN_HINT = ("ETCSystem uses u = K x (closed loop A + B K), while control.lqr and "
              "control.place return K for u = -K x: pass K = -K_lqr, or build the loop with "
              "ETCSystem.from_lqr(A, B, Q, R)")


@dataclass(frozen=True, eq=False, repr=False)
class ETCSystem:
    """Plant ``(A, B)``, gain ``K`` (u = K x), and a Lyapunov certificate ``(P, M)``.

    Parameters
    ----------
    A : array_like, shape (n, n), or a continuous-time LDS / control.StateSpace
        State matrix, or the whole plant: ``ETCSystem(plant, K=K)`` takes A and B from it
        (converted by :meth:`LDS.from_statespace`; C and D play no part in state feedback).
    B : array_like, shape (n, m)
        Input matrix; omit it when ``A`` is a system.
    K : array_like, shape (m, n)
        State-feedback gain of ``u = K x``; the paper's ``T``. Note the sign: python-control's
        ``lqr``/``place`` return K for ``u = -K x`` (use :meth:`from_lqr`, or pass ``-K``).
        A column vector of shape (n, m) is refused with a hint (the paper prints its ``T``
        as a column).
    P, M : array_like, shape (n, n), optional
        Eq. 8 certificate. Neither given: ``M = I`` and P solved. Only ``M``: P solved. Only
        ``P``: ``M = -((A+BK)ᵀP + P(A+BK))``, which must be positive definite. Both: they must
        satisfy eq. 8 to a relative residual of ``1e-9``.

    Raises
    ------
    ValueError
        Shapes, a non-Hurwitz closed loop (the message names the sign convention when
        ``A - B K`` would be Hurwitz), P or M not symmetric positive definite, a (P, M) pair
        that does not satisfy eq. 8, or a discrete-time plant.
    TypeError
        B or K missing, or B given together with a system.
    """

    A: np.ndarray
    B: np.ndarray | None = None
    K: np.ndarray | None = None
    P: np.ndarray | None = None
    M: np.ndarray | None = None

    def __post_init__(self):
        A, B = self.A, self.B
        if is_system(A):
            if B is not None:
                raise TypeError("B must be omitted when A is a system (the plant's B is used), "
                                f"got B as well: {type(B).__name__}")
            plant = require_continuous(A, "plant")
            A, B = plant.A, plant.B
        elif B is None:
            raise TypeError("B is required when A is a matrix (or pass the plant as a system: "
                            "ETCSystem(plant, K=K))")
        if self.K is None:
            raise TypeError("K, the gain of u = K x, is required; " + _SIGN_HINT)
        A, B, K = gain_matrices(A, B, self.K)
        n = A.shape[0]
        Acl = A + B @ K
        what = f"A {A.shape}"
        lam = np.linalg.eigvals(Acl)
        if not np.all(lam.real < 0):
            k = int(np.argmax(lam.real))
            flipped = np.linalg.eigvals(A - B @ K)
            likely = (" A - B K is Hurwitz, so K looks like a gain for u = -K x."
                      if np.all(flipped.real < 0) else "")
            raise ValueError(f"the closed loop A + B K must be Hurwitz for event-triggered "
                             f"control; it has the eigenvalue {lam[k]:.6g}.{likely} "
                             f"{_SIGN_HINT}")
        P, M = self.P, self.M
        if P is None:
            M = np.eye(n) if M is None else symmetric_positive_definite("M", M, n, what)
            P = continuous_lyapunov(Acl, M)
        else:
            P = symmetric_positive_definite("P", P, n, what)
            if M is None:
                M = -(Acl.T @ P + P @ Acl)
                M = 0.5 * (M + M.T)
                if not is_positive_definite(M):
                    raise ValueError(
                        "P is not a Lyapunov matrix of A + B K: M = -((A+BK)ᵀP + P(A+BK)) "
                        f"has the eigenvalue {min_eig_sym(M):g} <= 0")
            else:
                M = symmetric_positive_definite("M", M, n, what)
                chk = verify(Acl, P, M)
                if chk.relative_residual > 1e-9:
                    raise ValueError(
                        "P and M do not satisfy (A+BK)ᵀP + P(A+BK) = -M (eq. 8): relative "
                        f"residual {chk.relative_residual:.3g}; omit M to derive it from P")
        for name, arr in (("A", A), ("B", B), ("K", K), ("P", P), ("M", M)):
            arr = np.array(arr, dtype=float)
            arr.setflags(write=False)
            object.__setattr__(self, name, arr)

    @classmethod
    def from_lqr(cls, *args, certificate: str = "lyapunov", M=None) -> ETCSystem:
        r"""The loop with python-control's LQR gain, sign converted: ``K = -K_lqr``.

        Called like ``control.lqr``: ``from_lqr(A, B, Q, R[, N])`` or
        ``from_lqr(sys, Q, R[, N])`` with a continuous-time plant ``sys`` (LDS or
        ``control.StateSpace``). ``control.lqr`` minimises
        ``∫ xᵀQx + uᵀRu + 2xᵀNu dt`` over ``u = -K_lqr x``; ETC here uses ``u = K x``, so
        the loop gets ``K = -K_lqr`` and its closed loop ``A + B K = A - B K_lqr`` is
        Hurwitz whenever (A, B) is stabilisable (and the LQR problem well posed).

        Parameters
        ----------
        *args
            ``(A, B, Q, R)``, ``(A, B, Q, R, N)``, ``(sys, Q, R)`` or ``(sys, Q, R, N)``.
            Q (n, n) symmetric positive semidefinite, R (m, m) symmetric positive definite,
            N (n, m), with ``[[Q, N], [Nᵀ, R]]`` positive semidefinite.
        certificate : {"lyapunov", "riccati"}
            ``"lyapunov"`` (default): as the constructor, ``P`` solves eq. 8 for ``M``
            (identity unless given), so the result equals ``ETCSystem(A, B, -K_lqr, M=M)``.
            ``"riccati"``: ``P = S``, the Riccati solution (the LQR cost-to-go
            ``V(x) = xᵀSx``), and ``M = -((A+BK)ᵀS + S(A+BK)) = Q + K_lqrᵀRK_lqr -
            N K_lqr - K_lqrᵀNᵀ``, which must be positive definite (e.g. Q ≻ 0, N = 0).
        M : array_like, optional
            Only with ``certificate="lyapunov"``.

        Returns
        -------
        ETCSystem
        """
        import control

        check_choice("certificate", certificate, ("lyapunov", "riccati"))
        if args and is_system(args[0]):
            plant = require_continuous(args[0], "sys")
            A, B, rest = plant.A, plant.B, args[1:]
        else:
            A, B, rest = (args[0], args[1], args[2:]) if len(args) >= 2 else (None, None, ())
        if len(rest) not in (2, 3):
            raise TypeError("from_lqr takes (A, B, Q, R[, N]) or (sys, Q, R[, N]) like "
                            f"control.lqr, got {len(args)} positional arguments")
        A, B = plant_matrices(A, B)
        n, m = B.shape
        Q = symmetric_positive_semidefinite("Q", rest[0], n, f"A {A.shape}")
        R = symmetric_positive_definite("R", rest[1], m, f"B {B.shape}")
        lqr_args = [A, B, Q, R]
        if len(rest) == 3:
            N = as_matrix("N", rest[2], shape=(n, m))
            symmetric_positive_semidefinite("[[Q, N], [N^T, R]]", np.block([[Q, N], [N.T, R]]),
                                            n + m, "the LQR cost")
            lqr_args.append(N)
        K_lqr, S, _ = control.lqr(*lqr_args)
        K = -np.asarray(K_lqr, dtype=float)
        if certificate == "riccati":
            if M is not None:
                raise ValueError("M must be omitted with certificate='riccati' (it is derived "
                                 "from the Riccati solution)")
            return cls(A, B, K, P=np.asarray(S, dtype=float))
        return cls(A, B, K, M=M)

    @property
    def n(self) -> int:
        """State dimension."""
        return self.A.shape[0]

    @property
    def m(self) -> int:
        """Input dimension."""
        return self.B.shape[1]

    @property
    def closed_loop(self) -> np.ndarray:
        """``A + B K``."""
        return self.A + self.B @ self.K

    @property
    def decay_rate(self) -> float:
        """``ι = λ_min(M) / λ_max(P)``: ``V(t) <= V(0) e^{-ι t}`` under continuous feedback."""
        return float(np.linalg.eigvalsh(self.M)[0] / np.linalg.eigvalsh(self.P)[-1])

    def as_dict(self) -> dict:
        """The matrices A, B, K, P, M as nested lists."""
        return {k: getattr(self, k).tolist() for k in ("A", "B", "K", "P", "M")}

    def __repr__(self) -> str:
        return compact_repr(self, n=self.n, m=self.m, decay_rate=self.decay_rate)


#: The matrices as printed in the S4++ paper, Sec. 2.2 (T printed as a 2x1 column).
PAPER_PRINTED = {
    "A": [[0.0, 1.0], [2.0, -3.0]],
    "B": [[0.0], [1.0]],
    "T": [[1.0], [-4.0]],
    "P": [[1.0, 0.25], [0.25, 1.0]],
    "M": [[0.5, 0.25], [0.25, 1.5]],
}


def paper_system() -> ETCSystem:
    """The consistent version of the paper's example (Tabuada 2007, also Girard 2015).

    ``A = [[0, 1], [-2, 3]]`` (open-loop eigenvalues 1 and 2), ``B = [[0], [1]]``,
    ``K = [[1, -4]]`` (closed loop ``[[0, 1], [-1, -1]]``, eigenvalues ``-1/2 ± i√3/2``),
    ``P = [[1, 1/4], [1/4, 1]]``, ``M = [[1/2, 1/4], [1/4, 3/2]]``: eq. 8 holds exactly.
    The paper prints the same P and M with the signs of A's second row flipped and T as a
    column; see :func:`printed_matrices_check`.
    """
    return ETCSystem(A=[[0.0, 1.0], [-2.0, 3.0]], B=[[0.0], [1.0]], K=[[1.0, -4.0]],
                     P=[[1.0, 0.25], [0.25, 1.0]], M=[[0.5, 0.25], [0.25, 1.5]])


def printed_matrices_check() -> dict:
    """Evaluate eq. 8 with the matrices printed in the S4++ paper and with the fixed ones.

    Returns a JSON-friendly dict: ``printed`` (the matrices as printed), ``T_as_row``
    (the printed T is 2x1, so ``B T`` is undefined; the check reads it as the row
    ``[1, -4]``), ``printed_check`` (:func:`verify` of ``(A + B T_row, P, M)``),
    ``used`` (the toolkit's system, :func:`paper_system`) and ``used_check``.
    """
    A = np.array(PAPER_PRINTED["A"])
    B = np.array(PAPER_PRINTED["B"])
    T = np.array(PAPER_PRINTED["T"])
    P = np.array(PAPER_PRINTED["P"])
    M = np.array(PAPER_PRINTED["M"])
    product_defined = B.shape[1] == T.shape[0]
    T_row = T.T
    printed = verify(A + B @ T_row, P, M)
    sys = paper_system()
    used = verify(sys.closed_loop, sys.P, sys.M)
    return {
        "printed": dict(PAPER_PRINTED),
        "printed_BT_defined": bool(product_defined),
        "T_as_row": T_row.tolist(),
        "printed_closed_loop": (A + B @ T_row).tolist(),
        "printed_open_loop_eigenvalues": [[float(z.real), float(z.imag)]
                                          for z in np.linalg.eigvals(A)],
        "printed_check": printed.as_dict(),
        "printed_satisfies_eq8": printed.satisfied,
        "used": sys.as_dict(),
        "used_check": used.as_dict(),
        "used_satisfies_eq8": used.satisfied,
        "source": "Tabuada (2007), IEEE TAC 52(9), Sec. VI example; reused by Girard (2015)",
    }


# ---------------------------------------------------------------------- trigger rules
class TriggerRule(ABC):
    """Base class of a triggering rule: the next event is the first ``t > t_i`` with g <= 0.

    Subclass and implement :meth:`function`; optionally :meth:`internal` (an internal
    variable ``dη/dt = -λ η + zᵀ W z`` with ``z = (x, x_i)``, flowed exactly),
    :meth:`decay_bound` (a guaranteed bound on V(t)) and :meth:`params`. ``g`` must be
    positive right after an event (``e = 0``), or the rule fires again at once (reported
    as Zeno behaviour).
    """

    name = "custom"

    @abstractmethod
    def function(self, system: ETCSystem, tau: np.ndarray, x: np.ndarray, e: np.ndarray,
                 eta: np.ndarray | None) -> np.ndarray:
        """``g`` at k points: ``tau`` (k,) time since the last event, ``x`` and ``e`` (k, n),
        ``eta`` (k,) or None. Returns shape (k,)."""

    def internal(self, system: ETCSystem) -> tuple[float, np.ndarray, float] | None:
        """``(λ, W, η0)`` of ``dη/dt = -λη + zᵀWz`` (W is 2n x 2n), or None."""
        return None

    def decay_bound(self, system: ETCSystem, t: np.ndarray, V0: float,
                    eta0: float | None) -> np.ndarray | None:
        """A guaranteed upper bound on V(t) under continuous monitoring, or None."""
        return None

    def params(self) -> dict:
        """The rule's name and parameters (JSON-friendly; ``ETCResult.rule`` holds them)."""
        return {"rule": self.name}

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.params().items() if k != "rule")
        return f"{type(self).__name__}({args})"


def _quad(x, Q, y):
    return np.einsum("ki,ij,kj->k", x, Q, y)


def _eq12(system: ETCSystem, kappa: float, x: np.ndarray, e: np.ndarray) -> np.ndarray:
    """Eq. 12's function ``κ xᵀMx - 2 xᵀPBKe`` at k points (x, e of shape (k, n))."""
    PBK = system.P @ system.B @ system.K
    return kappa * _quad(x, system.M, x) - 2.0 * _quad(x, PBK, e)


def _z_forms(system: ETCSystem, kappa: float) -> np.ndarray:
    """W with zᵀWz = κ xᵀMx - 2 xᵀPBKe for z = (x, x_i), e = x_i - x."""
    n = system.n
    Jx = np.hstack([np.eye(n), np.zeros((n, n))])
    Je = np.hstack([-np.eye(n), np.eye(n)])
    cross = Jx.T @ (system.P @ system.B @ system.K) @ Je
    return kappa * Jx.T @ system.M @ Jx - (cross + cross.T)


class LyapunovRule(TriggerRule):
    r"""The paper's rule (eq. 12): trigger when ``κ xᵀMx - 2 xᵀPBK e(t⁻) <= 0``.

    Between events ``dV/dt <= -(1-κ) xᵀMx``, hence (eq. 13, continuous monitoring)
    ``V(t) <= V(0) e^{-(1-κ) ι t}`` with ``ι = λ_min(M)/λ_max(P)``.

    Parameters
    ----------
    kappa : float in (0, 1)
    """

    name = "lyapunov"

    def __init__(self, kappa: float = 0.5):
        self.kappa = check_real("kappa", kappa, low=0.0, high=1.0, low_inclusive=False,
                                high_inclusive=False)

    def function(self, system, tau, x, e, eta):
        return _eq12(system, self.kappa, x, e)

    def decay_bound(self, system, t, V0, eta0):
        return V0 * np.exp(-(1.0 - self.kappa) * system.decay_rate * np.asarray(t))

    def params(self):
        return {"rule": self.name, "kappa": self.kappa}


class RelativeErrorRule(TriggerRule):
    r"""Relative-error rule (Tabuada 2007): trigger when ``|e| >= σ |x|``.

    Evaluated as ``g = σ²|x|² - |e|²`` (same zero set, smooth). With
    ``σ < σ* = λ_min(M) / (2 ||PBK||_2)`` it guarantees
    ``V(t) <= V(0) e^{-r t}``, ``r = (λ_min(M) - 2σ||PBK||_2) / λ_max(P)``; for larger σ no
    bound is reported.

    Parameters
    ----------
    sigma : float in (0, 1)
    """

    name = "relative"

    def __init__(self, sigma: float = 0.1):
        self.sigma = check_real("sigma", sigma, low=0.0, high=1.0, low_inclusive=False,
                                high_inclusive=False)

    @staticmethod
    def sigma_star(system: ETCSystem) -> float:
        """Largest σ covered by the Lyapunov argument."""
        PBK = system.P @ system.B @ system.K
        return float(np.linalg.eigvalsh(system.M)[0] / (2.0 * np.linalg.norm(PBK, 2)))

    def function(self, system, tau, x, e, eta):
        return self.sigma**2 * np.einsum("ki,ki->k", x, x) - np.einsum("ki,ki->k", e, e)

    def decay_bound(self, system, t, V0, eta0):
        PBK = system.P @ system.B @ system.K
        lm = np.linalg.eigvalsh(system.M)[0]
        rate = (lm - 2 * self.sigma * np.linalg.norm(PBK, 2)) / np.linalg.eigvalsh(system.P)[-1]
        if rate <= 0:
            return None
        return V0 * np.exp(-rate * np.asarray(t))

    def params(self):
        return {"rule": self.name, "sigma": self.sigma}


class PeriodicRule(TriggerRule):
    """Periodic sampling: an event every ``period`` (time-triggered control, for reference).

    ``g = period (1 - 8 eps) - τ``: the tiny margin makes a period that is a multiple of
    the grid step fire on that grid point despite rounding of ``k h``.
    """

    name = "periodic"

    def __init__(self, period: float = 0.1):
        self.period = check_real("period", period, low=0.0, low_inclusive=False)

    def function(self, system, tau, x, e, eta):
        return self.period * (1.0 - 8 * _EPS) - np.asarray(tau, dtype=float)

    def params(self):
        return {"rule": self.name, "period": self.period}


class DynamicRule(TriggerRule):
    r"""Dynamic triggering after Girard (2015), built on the paper's static function.

    With ``S(x, e) = κ xᵀMx - 2 xᵀPBKe`` (eq. 12's function) and an internal variable
    ``dη/dt = -λ η + S``, ``η(0) = η0 >= 0`` (continuous across events), trigger when
    ``η + θ S <= 0``. Then ``η(t) >= 0`` and ``W = V + η`` obeys
    ``dW/dt = -(1-κ) xᵀMx - λη``, so ``V(t) <= (V(0) + η0) e^{-min((1-κ)ι, λ) t}``.
    As ``θ -> ∞`` the rule becomes the static one; finite θ gives fewer events.

    Parameters
    ----------
    kappa : float in (0, 1)
    theta : float > 0
    lam : float > 0
        Decay rate of η (Girard's β(η) = λη).
    eta0 : float >= 0
    """

    name = "dynamic"

    def __init__(self, kappa: float = 0.5, theta: float = 1.0, lam: float = 1.0,
                 eta0: float = 0.0):
        self.kappa = check_real("kappa", kappa, low=0.0, high=1.0, low_inclusive=False,
                                high_inclusive=False)
        self.theta = check_real("theta", theta, low=0.0, low_inclusive=False)
        self.lam = check_real("lam", lam, low=0.0, low_inclusive=False)
        self.eta0 = check_real("eta0", eta0, low=0.0)

    def function(self, system, tau, x, e, eta):
        return eta + self.theta * _eq12(system, self.kappa, x, e)

    def internal(self, system):
        return self.lam, _z_forms(system, self.kappa), self.eta0

    def decay_bound(self, system, t, V0, eta0):
        rate = min((1.0 - self.kappa) * system.decay_rate, self.lam)
        return (V0 + self.eta0) * np.exp(-rate * np.asarray(t))

    def params(self):
        return {"rule": self.name, "kappa": self.kappa, "theta": self.theta,
                "lam": self.lam, "eta0": self.eta0}


# ----------------------------------------------------------------------------- result
@dataclass(repr=False)
class ETCResult:
    """Output of :func:`simulate_etc`.

    Attributes
    ----------
    sample_times : ndarray (S,)
        Instants where the input is updated; ``sample_times[0] = 0`` (the initial sample).
    sampled_states : ndarray (S, n)
        ``x(t_i)``.
    inputs : ndarray (S, m)
        ``u_i = K x(t_i)``, held on ``[t_i, t_{i+1})``.
    t : ndarray (N,)
        Output grid on ``[0, horizon]`` (uniform, ``output_step``).
    x, u : ndarray (N, n), (N, m)
        State and (right-continuous) input on ``t``.
    V : ndarray (N,)
        ``xᵀ P x`` on ``t``.
    V_bound : ndarray (N,) or None
        The rule's guaranteed bound (eq. 13 for :class:`LyapunovRule`); only guaranteed in
        exact mode.
    eta : ndarray (N,) or None
        Internal variable of a dynamic rule.
    mode, rule, horizon, step : str, dict, float, float
        ``step`` is the grid step (grid mode) or the bracket step (exact mode).
    tol : float or None
        Root-finding tolerance of exact mode.
    zeno : bool
        The rule fired again immediately after an event (g <= 0 with e = 0); the run stopped.
    truncated : bool
        ``max_events`` was reached before the horizon; the run stopped.
    system, trigger : ETCSystem, TriggerRule
        The loop and the rule object that produced the run.
    """

    sample_times: np.ndarray
    sampled_states: np.ndarray
    inputs: np.ndarray
    t: np.ndarray
    x: np.ndarray
    u: np.ndarray
    V: np.ndarray
    V_bound: np.ndarray | None
    eta: np.ndarray | None
    mode: str
    rule: dict
    horizon: float
    step: float
    tol: float | None
    zeno: bool = False
    truncated: bool = False
    system: ETCSystem | None = field(default=None, repr=False)
    trigger: TriggerRule | None = field(default=None, repr=False)

    @property
    def event_times(self) -> np.ndarray:
        """Triggered events, ``t > 0`` (``t_0 = 0`` excluded)."""
        return self.sample_times[1:]

    @property
    def n_events(self) -> int:
        """Number of triggered events in ``(0, horizon]`` (``t_0 = 0`` not counted)."""
        return int(self.sample_times.size - 1)

    @property
    def inter_event_times(self) -> np.ndarray:
        """``t_{i+1} - t_i`` for consecutive samples (the first is measured from t_0 = 0)."""
        return np.diff(self.sample_times)

    @property
    def min_inter_event(self) -> float:
        """Shortest inter-event time (``inf`` without events); tends to 0 under Zeno."""
        d = self.inter_event_times
        return float(d.min()) if d.size else math.inf

    @property
    def bound_satisfied(self) -> bool | None:
        """Whether ``V <= V_bound`` (relative slack 1e-9) on the output grid."""
        if self.V_bound is None:
            return None
        return bool(np.all(self.V <= self.V_bound * (1 + 1e-9) + 1e-300))

    def summary(self) -> dict:
        """The run's numbers in a JSON-friendly dict (events counted as in the module
        docstring: ``t_0 = 0`` excluded)."""
        return {"mode": self.mode, "rule": self.rule, "events": self.n_events,
                "min_inter_event": self.min_inter_event,
                "mean_inter_event": float(np.mean(self.inter_event_times))
                if self.n_events else math.inf,
                "final_norm": float(np.linalg.norm(self.x[-1])),
                "bound_satisfied": self.bound_satisfied,
                "zeno": self.zeno, "truncated": self.truncated}

    def __repr__(self) -> str:
        return compact_repr(self, mode=self.mode, rule=self.rule, events=self.n_events,
                            horizon=self.horizon, t=self.t, x=self.x, zeno=self.zeno,
                            truncated=self.truncated)


# --------------------------------------------------------------------------- the sampler
def _table_steps(dim: int, wanted: int) -> int:
    # about 32 MB of tabulated propagators at most
    cap = max(16, int(4e6 // (dim * dim)))
    return max(1, min(wanted, cap, 2048))


@single_blas_thread
def simulate_etc(system: ETCSystem, rule: TriggerRule, x0: ArrayLike, *, horizon: float = 10.0,
                 mode: str = "exact", grid_step: float = 0.01, bracket_step: float = 1e-3,
                 tol: float = 1e-10, output_step: float | None = None,
                 max_events: int = 100_000,
                 check_times: ArrayLike | None = None) -> ETCResult:
    r"""Run the event-triggered loop on ``[0, horizon]``.

    Parameters
    ----------
    system : ETCSystem
    rule : TriggerRule
        :class:`LyapunovRule` (eq. 12), :class:`RelativeErrorRule`, :class:`PeriodicRule`,
        :class:`DynamicRule`, or your own subclass.
    x0 : array_like, shape (n,)
        Initial state, not zero (every state-dependent rule is degenerate at the origin).
    horizon : float > 0
    mode : {"exact", "grid"}
        Continuous monitoring with root finding, or checks at ``t = k grid_step`` only
        (see the module docstring).
    grid_step : float > 0
        Monitoring step of grid mode (the paper's 0.01).
    bracket_step : float > 0
        Scan step of exact mode: sign changes of g are bracketed on this step, then
        located with ``scipy.optimize.brentq``.
    tol : float > 0
        Absolute tolerance of the event times in exact mode.
    output_step : float > 0, optional
        Step of the output grid (default ``horizon / 10_000``).
    max_events : int
        Stop (``truncated=True``) after this many events.
    check_times : array_like, optional
        Grid mode only: monitor at these strictly increasing instants in ``(0, horizon]``
        instead of ``k grid_step`` (e.g. a jittered grid); ``grid_step`` is then only
        reported.

    Returns
    -------
    ETCResult
    """
    if not isinstance(system, ETCSystem):
        raise TypeError(f"system must be an ETCSystem, got {type(system).__name__}")
    if not isinstance(rule, TriggerRule):
        raise TypeError(f"rule must be a TriggerRule (e.g. LyapunovRule(kappa)), got "
                        f"{type(rule).__name__}")
    n = system.n
    x0 = as_float_array("x0", x0)
    if x0.shape != (n,):
        raise ValueError(f"x0 must have shape ({n},) to match A, got {x0.shape}")
    if not np.any(x0):
        raise ValueError("x0 must be nonzero: the origin is the equilibrium, where every "
                         "state-dependent triggering rule is degenerate")
    horizon = check_real("horizon", horizon, low=0.0, low_inclusive=False)
    check_choice("mode", mode, ("exact", "grid"))
    max_events = check_positive_int("max_events", max_events)
    if check_times is not None:
        if mode != "grid":
            raise ValueError(f"check_times needs mode='grid', got mode={mode!r}")
        check_times = as_float_array("check_times", check_times, ndim=1)
        if check_times.size == 0 or np.any(np.diff(check_times) <= 0) or \
                check_times[0] <= 0 or check_times[-1] > horizon:
            raise ValueError(f"check_times must be strictly increasing instants in "
                             f"(0, horizon={horizon:g}], got {check_times.size} values in "
                             f"[{check_times.min(initial=np.nan):g}, "
                             f"{check_times.max(initial=np.nan):g}]")
    if mode == "grid":
        step = check_real("grid_step", grid_step, low=0.0, low_inclusive=False)
        if step > horizon:
            raise ValueError(f"grid_step must be <= horizon ({horizon:g}), got {step:g}")
        tol_used = None
    else:
        step = check_real("bracket_step", bracket_step, low=0.0, low_inclusive=False)
        tol_used = check_real("tol", tol, low=0.0, low_inclusive=False)
        if tol_used >= step:
            raise ValueError(f"tol must be smaller than bracket_step ({step:g}), got "
                             f"{tol_used:g}")
    if output_step is None:
        output_step = horizon / 10_000
    output_step = check_real("output_step", output_step, low=0.0, low_inclusive=False)
    if output_step > horizon:
        raise ValueError(f"output_step must be <= horizon ({horizon:g}), got {output_step:g}")
    check_fits_in_memory("horizon / output_step", f"{horizon:g} / {output_step:g}",
                         8.0 * (horizon / output_step + 1) * (2 * n + 4),
                         f"the {horizon / output_step + 1:.3g} points of the output grid")

    internal = rule.internal(system)
    if internal is not None:
        lam, W, eta0 = internal
        W = np.asarray(W, dtype=float)
        if W.shape != (2 * n, 2 * n):
            raise ValueError(f"{type(rule).__name__}.internal() must return W of shape "
                             f"({2 * n}, {2 * n}), got {W.shape}")
        flow = Flow(loop_generator(system.A, system.B, system.K), (float(lam), 0.5 * (W + W.T)))
        eta0 = float(eta0)
    else:
        flow = Flow(loop_generator(system.A, system.B, system.K))
        eta0 = None

    if mode == "grid" and check_times is not None:
        times, states, etas, zeno, truncated = _run_checks(system, rule, flow, x0, eta0,
                                                           check_times, max_events)
    elif mode == "grid":
        times, states, etas, zeno, truncated = _run_grid(system, rule, flow, x0, eta0,
                                                         horizon, step, max_events)
    else:
        times, states, etas, zeno, truncated = _run_exact(system, rule, flow, x0, eta0,
                                                          horizon, step, tol_used, max_events)
    if zeno:
        warnings.warn(f"{rule!r} fired again immediately after the event at t={times[-1]:.6g} "
                      "(Zeno behaviour); the run stopped there", RuntimeWarning, stacklevel=2)
    if truncated:
        warnings.warn(f"max_events={max_events} reached at t={times[-1]:.6g} before the "
                      f"horizon {horizon:g}; the run stopped there", RuntimeWarning, stacklevel=2)

    sample_times = np.asarray(times)
    sampled = np.asarray(states)
    inputs = sampled @ system.K.T
    t, X, eta_t, idx = _trajectory(flow, sample_times, sampled, etas, horizon, output_step, n)
    U = inputs[idx]
    V = np.einsum("ki,ij,kj->k", X, system.P, X)
    bound = rule.decay_bound(system, t, float(V[0]), eta0)
    if bound is not None:
        bound = np.asarray(bound, dtype=float)
    return ETCResult(sample_times=sample_times, sampled_states=sampled, inputs=inputs, t=t,
                     x=X, u=U, V=V, V_bound=bound, eta=eta_t, mode=mode, rule=rule.params(),
                     horizon=horizon, step=step, tol=tol_used, zeno=zeno,
                     truncated=truncated, system=system, trigger=rule)


def _g(system, rule, tau, Z, eta, n, t_last=0.0):
    """The rule's g at offsets ``tau`` after the last event (at time ``t_last``)."""
    x = Z[:, :n]
    e = Z[:, n:] - x
    g = np.asarray(rule.function(system, np.asarray(tau, dtype=float), x, e, eta), dtype=float)
    if g.shape != (Z.shape[0],):
        raise ValueError(f"{type(rule).__name__}.function must return shape ({Z.shape[0]},), "
                         f"got {g.shape}")
    if not np.all(np.isfinite(g)):
        i = int(np.flatnonzero(~np.isfinite(g))[0])
        t = t_last + float(np.asarray(tau, dtype=float).reshape(-1)[i])
        raise FloatingPointError(
            f"{type(rule).__name__}.function returned a non-finite value at t = {t:.6g} "
            f"(max |x_j| = {np.max(np.abs(x[i])):.3g}, max |e_j| = {np.max(np.abs(e[i])):.3g}):"
            " the state overflows float64 arithmetic there; the run stopped")
    return g


def _fires_at_once(system, rule, x, eta, n, t) -> bool:
    z = np.concatenate([x, x])[None, :]
    return bool(_g(system, rule, [0.0], z, None if eta is None else np.array([eta]), n,
                   t)[0] <= 0)


def _run_grid(system, rule, flow, x0, eta0, horizon, h, max_events):
    """Checks at k h, k = 1..N; integer grid indices keep event times exact multiples."""
    n = system.n
    N = int(math.floor(horizon / h * (1 + 1e-12)))
    table = FlowTable(flow, h, _table_steps(flow.dim, N))
    times, states, etas = [0.0], [x0.copy()], [eta0]
    k_a, k_i = 0, 0                         # anchor and last-event grid indices
    z_a = np.concatenate([x0, x0])
    eta_a = eta0
    if _fires_at_once(system, rule, x0, eta0, n, 0.0):
        return times, states, etas, True, False
    while k_a < N:
        count = min(N - k_a, table.n_steps)
        Z, eta = table.scan(z_a, eta_a, count)
        ks = np.arange(k_a + 1, k_a + count + 1)
        g = _g(system, rule, (ks - k_i) * h, Z, eta, n, k_i * h)
        hits = np.flatnonzero(g <= 0)
        if hits.size == 0:
            k_a += count
            z_a = Z[-1]
            eta_a = None if eta is None else float(eta[-1])
            continue
        j = int(hits[0])
        k_a = k_i = int(ks[j])
        x_e = Z[j, :n].copy()
        eta_a = None if eta is None else float(eta[j])
        times.append(k_a * h)
        states.append(x_e)
        etas.append(eta_a)
        z_a = np.concatenate([x_e, x_e])
        if _fires_at_once(system, rule, x_e, eta_a, n, k_a * h):
            return times, states, etas, True, False
        if len(times) - 1 >= max_events and k_a < N:
            return times, states, etas, False, True
    return times, states, etas, False, False


def _run_checks(system, rule, flow, x0, eta0, checks, max_events, chunk=128):
    """Checks at arbitrary increasing instants (a jittered grid).

    The per-step propagators are computed in one batch; states are propagated step by step
    over chunks of ``chunk`` checks and ``g`` is evaluated per chunk.
    """
    n = system.n
    steps = np.diff(np.r_[0.0, checks])
    E, G = flow.propagators(steps)
    decay = None if G is None else np.exp(-flow.lam * steps)
    times, states, etas = [0.0], [x0.copy()], [eta0]
    z = np.concatenate([x0, x0])
    eta = eta0
    t_i = 0.0
    if _fires_at_once(system, rule, x0, eta0, n, 0.0):
        return times, states, etas, True, False
    k, N = 0, checks.size
    while k < N:
        m = min(chunk, N - k)
        Z = np.empty((m, z.size))
        ETA = None if G is None else np.empty(m)
        zz, ee = z, eta
        for j in range(m):
            if G is not None:
                ee = decay[k + j] * ee + zz @ G[k + j] @ zz
                ETA[j] = ee
            zz = E[k + j] @ zz
            Z[j] = zz
        g = _g(system, rule, checks[k:k + m] - t_i, Z, ETA, n, t_i)
        hits = np.flatnonzero(g <= 0)
        if hits.size == 0:
            z, eta = Z[-1], (None if G is None else float(ETA[-1]))
            k += m
            continue
        j = int(hits[0])
        x_e = Z[j, :n].copy()
        eta = None if G is None else float(ETA[j])
        t_i = float(checks[k + j])
        times.append(t_i)
        states.append(x_e)
        etas.append(eta)
        z = np.concatenate([x_e, x_e])
        k += j + 1
        if _fires_at_once(system, rule, x_e, eta, n, t_i):
            return times, states, etas, True, False
        if len(times) - 1 >= max_events and k < N:
            return times, states, etas, False, True
    return times, states, etas, False, False


def _run_exact(system, rule, flow, x0, eta0, horizon, delta, tol, max_events):
    """Scan g on steps of delta after each event; locate the first sign change by brentq.

    Inside a bracket [lo, hi] the state is flowed from the tabulated z(lo) over at most one
    step, so every evaluation of g costs one small matrix exponential.
    """
    n = system.n
    table = FlowTable(flow, delta, _table_steps(flow.dim, int(math.ceil(horizon / delta))))
    times, states, etas = [0.0], [x0.copy()], [eta0]
    t_i = 0.0                                # last event
    s_a = 0.0                                # anchor offset from t_i
    z_a = np.concatenate([x0, x0])           # state at the anchor
    eta_a = eta0
    if _fires_at_once(system, rule, x0, eta0, n, 0.0):
        return times, states, etas, True, False

    def g_from(lo, z_lo, eta_lo):            # exact g at offset s from t_i, flowed from lo
        def g(s):
            z, eta = flow.evaluate(s - lo, z_lo, eta_lo)
            return _g(system, rule, [s], z[None, :],
                      None if eta is None else np.array([eta]), n, t_i)[0]
        return g

    while True:
        remaining = horizon - (t_i + s_a)
        if remaining <= 1e-14 * max(1.0, horizon):
            break
        full = int(math.floor(remaining / delta * (1 + 1e-12)))
        count = min(full, table.n_steps)
        bracket = None
        last = (s_a, z_a, eta_a)             # last scanned point with g > 0
        if count > 0:
            Z, eta = table.scan(z_a, eta_a, count)
            offs = s_a + delta * np.arange(1, count + 1)
            g = _g(system, rule, offs, Z, eta, n, t_i)
            hits = np.flatnonzero(g <= 0)
            if hits.size:
                j = int(hits[0])
                if j > 0:
                    last = (offs[j - 1], Z[j - 1], None if eta is None else float(eta[j - 1]))
                bracket = (last, offs[j])
            else:
                last = (offs[-1], Z[-1], None if eta is None else float(eta[-1]))
        if bracket is None and count == full:
            # the partial last step up to the horizon
            s_end = horizon - t_i
            if s_end - last[0] > 1e-14 * max(1.0, horizon) and g_from(*last)(s_end) <= 0:
                bracket = (last, s_end)
        if bracket is None:
            if count == full:
                break
            s_a, z_a, eta_a = last
            continue
        (lo, z_lo, eta_lo), hi = bracket
        g_at = g_from(lo, z_lo, eta_lo)
        if g_at(lo) <= 0:                    # rounding put the crossing on the bracket end
            s_star = lo
        else:
            s_star = scipy.optimize.brentq(g_at, lo, hi, xtol=tol, rtol=4 * _EPS, maxiter=200)
        z_e, eta_e = flow.evaluate(s_star - lo, z_lo, eta_lo)
        x_e = z_e[:n].copy()
        t_i = t_i + s_star
        times.append(t_i)
        states.append(x_e)
        etas.append(eta_e)
        s_a, z_a, eta_a = 0.0, np.concatenate([x_e, x_e]), eta_e
        if _fires_at_once(system, rule, x_e, eta_e, n, t_i):
            return times, states, etas, True, False
        if len(times) - 1 >= max_events and t_i < horizon:
            return times, states, etas, False, True
    return times, states, etas, False, False


def _trajectory(flow: Flow, sample_times, sampled, etas, horizon, dt_out, n):
    """State (and η) on a uniform output grid, each point flowed from its interval's sample.

    The grid step is ``horizon / ceil(horizon / dt_out)`` (at most ``dt_out``). Uses the
    closed-loop flow from x(t_i) (no open-loop error growth). Points within 1e-9 output
    steps of an event are assigned to the new interval (right-continuous u).
    """
    N = max(1, int(math.ceil(horizon / dt_out * (1 - 1e-12))))
    dt_out = horizon / N                  # uniform grid ending exactly at the horizon
    t = np.arange(N + 1) * dt_out
    t[-1] = horizon
    idx = np.searchsorted(sample_times, t + 1e-9 * dt_out, side="right") - 1
    idx = np.clip(idx, 0, sample_times.size - 1)
    z_samples = np.concatenate([sampled, sampled], axis=1)
    Z, eta_t = flow_on_grid(flow, sample_times, z_samples, etas, t, idx,
                            chunk=_table_steps(flow.dim, 1024))
    return t, Z[:, :n], eta_t, idx


# ------------------------------------------------------------- inter-event statistics
def _pooled(f, times: np.ndarray) -> float:
    return float(f(times)) if times.size else math.inf


@dataclass(frozen=True, repr=False)
class InterEventStatistics:
    r"""Inter-event times of an event-triggered loop, pooled over runs from several x0.

    Each run r starts at ``x0[r]`` and :func:`simulate_etc` returns its sample instants
    ``0 = t_0 < t_1 < ... <= horizon`` with ``t_{i+1} = inf {t > t_i : g(t) <= 0}``. The
    inter-event times are the completed gaps

        τ_i = t_{i+1} - t_i,      i = 0 .. (events of the run) - 1,

    the first measured from ``t_0 = 0``; the open gap from the last event to the horizon is
    censored and not counted. Statistics are over the pooled τ_i of all runs.

    Attributes
    ----------
    times : ndarray, shape (N,)
        The pooled τ_i, run after run, in time order within a run.
    run : ndarray of int, shape (N,)
        The run each τ_i comes from.
    events : ndarray of int, shape (runs,)
        Triggered events per run (``t_0 = 0`` not counted), so ``N = events.sum()``.
    x0 : ndarray, shape (runs, n)
    horizon : float
    mode : str
        ``"exact"`` or ``"grid"`` monitoring (see :func:`simulate_etc`).
    rule : dict
        The rule's parameters.
    system : ETCSystem
        The loop (its ``K`` is the gain that was used, e.g. ``-K_lqr``).
    zeno, truncated : ndarray of bool, shape (runs,)
        Runs stopped by Zeno behaviour or by ``max_events``.
    """

    times: np.ndarray
    run: np.ndarray
    events: np.ndarray
    x0: np.ndarray
    horizon: float
    mode: str
    rule: dict
    system: ETCSystem
    zeno: np.ndarray
    truncated: np.ndarray

    @property
    def n_events(self) -> int:
        """Triggered events over all runs."""
        return int(self.events.sum())

    min = property(lambda self: _pooled(np.min, self.times),
                   doc="Shortest τ (``inf`` without events).")
    max = property(lambda self: _pooled(np.max, self.times),
                   doc="Longest completed τ (``inf`` without events).")
    mean = property(lambda self: _pooled(np.mean, self.times),
                    doc="Mean τ (``inf`` without events).")
    median = property(lambda self: _pooled(np.median, self.times),
                      doc="Median τ (``inf`` without events).")

    @property
    def std(self) -> float:
        """Standard deviation of τ (``nan`` with fewer than two)."""
        return float(np.std(self.times)) if self.times.size > 1 else math.nan

    def quantile(self, q) -> np.ndarray:
        """Quantiles of τ (``numpy.quantile``, linear interpolation)."""
        if not self.times.size:
            return np.full(np.shape(q), math.inf)
        return np.quantile(self.times, q)

    @property
    def event_rate(self) -> float:
        """Events per unit time, ``events.sum() / (runs · horizon)``."""
        return self.n_events / (self.events.size * self.horizon)

    def as_dict(self) -> dict:
        """The statistics in a JSON-friendly dict."""
        q05, q95 = (float(v) for v in self.quantile([0.05, 0.95]))
        return {"runs": int(self.events.size), "events": self.n_events,
                "events_per_run": self.events.tolist(), "event_rate": self.event_rate,
                "min": self.min, "q05": q05, "median": self.median, "mean": self.mean,
                "q95": q95, "max": self.max, "std": self.std, "horizon": self.horizon,
                "mode": self.mode, "rule": self.rule, "K": self.system.K.tolist(),
                "zeno_runs": int(self.zeno.sum()), "truncated_runs": int(self.truncated.sum())}

    def __repr__(self) -> str:
        return compact_repr(self, runs=self.events.size, events=self.n_events, min=self.min,
                            median=self.median, mean=self.mean, max=self.max,
                            rule=self.rule, mode=self.mode)


def inter_event_statistics(system: ETCSystem | SystemLike, rule: TriggerRule, x0: ArrayLike, *,
                           K: ArrayLike | None = None, rng: RngLike = None,
                           horizon: float = 10.0, mode: str = "exact",
                           **options: Any) -> InterEventStatistics:
    r"""Inter-event-time statistics of a triggering rule, over one or more initial states.

    Runs :func:`simulate_etc` once per initial state and pools the completed inter-event
    times ``τ_i = t_{i+1} - t_i`` (see :class:`InterEventStatistics`).

    Parameters
    ----------
    system : ETCSystem, or a continuous-time LDS / control.StateSpace
        The loop, or a plant ``(A, B)`` to close with ``K`` (C and D play no part: the
        feedback is on the state).
    rule : TriggerRule
        E.g. :class:`LyapunovRule` (eq. 12).
    x0 : array_like, shape (n,) or (runs, n), or int
        Initial states (nonzero), or a number of runs whose initial states are drawn
        uniformly on the unit sphere from ``rng``.
    K : array_like (m, n) or "lqr", optional
        Only with a plant, and then required: the gain of ``u = K x``, or ``"lqr"`` for
        ``ETCSystem.from_lqr(plant, I_n, I_m)`` (``K = -K_lqr`` with identity weights).
    rng : numpy Generator, int or None
        Source of the random initial states when ``x0`` is an int.
    horizon, mode : float, str
        As in :func:`simulate_etc`.
    **options
        Further :func:`simulate_etc` options (``grid_step``, ``bracket_step``, ``tol``,
        ``max_events``, ``output_step``; the output grid defaults to the two end points,
        since only the event times are used).

    Returns
    -------
    InterEventStatistics
        Zeno or truncated runs are counted there (one warning for all of them).
    """
    if isinstance(system, ETCSystem):
        if K is not None:
            raise ValueError("K must be omitted when system is an ETCSystem (it has its own "
                             "gain)")
        loop = system
    elif is_system(system):
        if K is None:
            raise TypeError("K is required when system is a plant: the gain of u = K x, or "
                            "K='lqr' for ETCSystem.from_lqr(plant, I, I)")
        plant = require_continuous(system, "system")
        if isinstance(K, str):
            check_choice("K", K, ("lqr",))
            loop = ETCSystem.from_lqr(plant, np.eye(plant.n_states),
                                      np.eye(plant.n_inputs))
        else:
            loop = ETCSystem(plant, K=K)
    else:
        raise TypeError(f"system must be an ETCSystem, an LDS or a control.StateSpace, got "
                        f"{type(system).__name__}")
    n = loop.n
    if isinstance(x0, Integral | np.integer) and not isinstance(x0, bool):
        runs = check_positive_int("x0", x0)
        z = as_generator(rng).standard_normal((runs, n))
        x0s = z / np.linalg.norm(z, axis=1, keepdims=True)
    else:
        x0s = as_float_array("x0", x0)
        if x0s.ndim == 1:
            x0s = x0s[None, :]
        if x0s.ndim != 2 or x0s.shape[1] != n or x0s.shape[0] == 0:
            raise ValueError(f"x0 must have shape ({n},) or (runs, {n}), or be a number of "
                             f"runs, got shape {x0s.shape}")
    horizon = check_real("horizon", horizon, low=0.0, low_inclusive=False)
    options.setdefault("output_step", horizon)
    times, run, events, zeno, truncated = [], [], [], [], []
    for r, x in enumerate(x0s):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            res = simulate_etc(loop, rule, x, horizon=horizon, mode=mode, **options)
        for w in caught:  # Zeno/truncation are counted below; anything else passes on
            text = str(w.message)
            if not ("(Zeno behaviour)" in text or text.startswith("max_events=")):
                warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
        tau = res.inter_event_times
        times.append(tau)
        run.append(np.full(tau.size, r))
        events.append(res.n_events)
        zeno.append(res.zeno)
        truncated.append(res.truncated)
    zeno, truncated = np.array(zeno), np.array(truncated)
    if zeno.any() or truncated.any():
        warnings.warn(f"{int(zeno.sum())} run(s) stopped by Zeno behaviour and "
                      f"{int(truncated.sum())} by max_events, out of {len(x0s)}; their "
                      "inter-event times up to the stop are included", RuntimeWarning,
                      stacklevel=2)
    return InterEventStatistics(times=np.concatenate(times), run=np.concatenate(run),
                                events=np.array(events), x0=x0s, horizon=horizon, mode=mode,
                                rule=rule.params(), system=loop, zeno=zeno,
                                truncated=truncated)
