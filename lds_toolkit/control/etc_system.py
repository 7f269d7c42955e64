r"""The event-triggered loop: plant, gain and Lyapunov certificate, and the paper's example.

The loop of the S4++ paper, Sec. 2.2 (the paper writes the gain as ``T``; here it is ``K``
because ``T`` is a horizon everywhere else in the toolkit)::

    dx/dt = A x(t) + B K x(t_i),          t in [t_i, t_{i+1})              (eq. 7 sampled)
    e(t)  = x(t_i) - x(t)                                                   (eq. 9)
    dx/dt = (A + B K) x(t) + B K e(t)                                       (eq. 10)
    dV/dt = -xᵀ M x + 2 xᵀ P B K e,       V = xᵀ P x                        (eq. 11)

with ``(A + BK)ᵀ P + P (A + BK) = -M`` (eq. 8).

This module holds :class:`ETCSystem` (the matrices ``A, B, K, P, M`` with their checks, and
:meth:`ETCSystem.from_lqr` for python-control's LQR gain), the paper's example
(:func:`paper_system`), the matrices as printed (:data:`PAPER_PRINTED`) and the eq. 8 check
of both (:func:`printed_matrices_check`). The triggering rules live in
:mod:`~lds_toolkit.control.etc_triggers`, the sampler in
:mod:`~lds_toolkit.control.etc_simulation`, inter-event statistics in
:mod:`~lds_toolkit.control.etc_statistics`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._repr import compact_repr
from .._signal_names import check_loop_names
from .._validation import as_matrix, check_choice
from ..systems.lds import is_system, require_continuous
from ._checks import (
    gain_matrices,
    is_positive_definite,
    min_eig_sym,
    plant_matrices,
    symmetric_positive_definite,
    symmetric_positive_semidefinite,
    uncontrollable_unstable_modes,
)
from .lyapunov import continuous_lyapunov, verify

__all__ = ["PAPER_PRINTED", "ETCSystem", "paper_system", "printed_matrices_check"]


def _plant_names(plant) -> dict:
    """The names a state-feedback loop keeps of its plant (an LDS): inputs, states, name."""
    return {"inputs": list(plant.input_labels), "states": list(plant.state_labels),
            "name": plant.name}


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
    names : dict, optional
        The plant's signal names (``inputs``, ``states``, ``name``), taken from the plant when
        ``A`` is a system (a ``control.StateSpace`` keeps its names); they label
        :meth:`ETCResult.to_time_response <lds_toolkit.control.ETCResult.to_time_response>`.

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
    names: dict | None = None

    def __post_init__(self):
        A, B = self.A, self.B
        if is_system(A):
            if B is not None:
                raise TypeError("B must be omitted when A is a system (the plant's B is used), "
                                f"got B as well: {type(B).__name__}")
            plant = require_continuous(A, "plant")
            A, B = plant.A, plant.B
            if self.names is None:
                object.__setattr__(self, "names", _plant_names(plant))
        elif B is None:
            raise TypeError("B is required when A is a matrix (or pass the plant as a system: "
                            "ETCSystem(plant, K=K))")
        if self.K is None:
            raise TypeError("K, the gain of u = K x, is required; " + _SIGN_HINT)
        A, B, K = gain_matrices(A, B, self.K)
        n = A.shape[0]
        object.__setattr__(self, "names", check_loop_names(self.names, B.shape[1], n))
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
        names = None
        if args and is_system(args[0]):
            plant = require_continuous(args[0], "sys")
            A, B, rest, names = plant.A, plant.B, args[1:], _plant_names(plant)
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
        unreached = uncontrollable_unstable_modes(A, B)
        if unreached:
            modes = ", ".join(sorted({f"{lam.real:.4g}" if lam.imag == 0 else f"{lam:.4g}"
                                      for lam in unreached}))
            raise ValueError(f"(A, B) not stabilisable: the eigenvalue(s) {modes} of A with "
                             "Re >= 0 cannot be moved by any feedback (rank [A - λI, B] < n), "
                             "so no LQR gain exists")
        try:
            K_lqr, S, _ = control.lqr(*lqr_args)
        except Exception as exc:  # noqa: BLE001 - slycot/scipy raise several kinds
            raise ValueError(f"the LQR problem has no stabilising solution for these (A, B, "
                             f"Q, R): {str(exc).strip().splitlines()[0][:200]} (typically (Q, "
                             "A) has an unobservable mode on the imaginary axis)") from None
        K = -np.asarray(K_lqr, dtype=float)
        if certificate == "riccati":
            if M is not None:
                raise ValueError("M must be omitted with certificate='riccati' (it is derived "
                                 "from the Riccati solution)")
            return cls(A, B, K, P=np.asarray(S, dtype=float), names=names)
        return cls(A, B, K, M=M, names=names)

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
