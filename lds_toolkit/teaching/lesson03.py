r"""Lesson 3 — Lyapunov certificates: the checks and the slider.

Exercises (``docs/lessons/03_lyapunov.py``):

1. :func:`check_lyapunov_kron` — solve ``AᵀP + PA = -M`` by Kronecker products:
   ``(I ⊗ Aᵀ + Aᵀ ⊗ I) vec(P) = -vec(M)`` (column-stacking ``vec``;
   :func:`lds_toolkit.continuous_lyapunov`).
2. :func:`check_decay_rate` — the rate a certificate proves, ``ι = λ_min(M) / λ_max(P)``:
   ``V(x(t)) ≤ V(x(0)) e^{-ι t}`` (:func:`lds_toolkit.verify`).
3. :func:`check_discrete_lyapunov_kron` — the discrete equation ``AᵀPA - P = -M``:
   ``(Aᵀ ⊗ Aᵀ - I) vec(P) = -vec(M)`` (:func:`lds_toolkit.discrete_lyapunov`).

The slider ``lesson03.gain`` scales the feedback ``K = g [1, -4]`` of the S4++ paper's ETC
plant (Tabuada 2007) and shows the certificate, its level sets and its decay bound, or that
none exists when the closed loop is unstable.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .calling import DEFAULT_TIME_LIMIT, by_case, given_cases
from .check import CheckResult, check_function, check_scalar, run_checks
from .questions import ChoiceQuestion
from .sliders import Param, slider

__all__ = ["CHECKS", "INTERPRETATION", "check_interpretation",
           "check_decay_rate", "check_discrete_lyapunov_kron",
           "check_lyapunov_kron", "closed_loop", "summary"]


def _toolkit_lyapunov(case: dict[str, Any]) -> np.ndarray:
    """P of ``AᵀP + PA = -M`` (:func:`lds_toolkit.continuous_lyapunov`)."""
    A, M = (case[k] for k in ('A', 'M'))
    from ..control import continuous_lyapunov

    return continuous_lyapunov(np.asarray(A, float), np.asarray(M, float))


def _toolkit_discrete_lyapunov(case: dict[str, Any]) -> np.ndarray:
    """P of ``AᵀPA - P = -M`` (:func:`lds_toolkit.discrete_lyapunov`)."""
    A, M = (case[k] for k in ('A', 'M'))
    from ..control import discrete_lyapunov

    return discrete_lyapunov(np.asarray(A, float), np.asarray(M, float))


def _toolkit_decay_rate(case: dict[str, Any]) -> float:
    """``λ_min(M) / λ_max(P)``, as :func:`lds_toolkit.verify` reports it (``decay_rate``)."""
    P, M = (case[k] for k in ('P', 'M'))
    from ..control import verify

    P, M = np.asarray(P, float), np.asarray(M, float)
    # verify needs the closed loop only for its other checks; any A whose equation P, M
    # satisfy will do: A = -P^{-1} M / 2 gives AᵀP + PA = -M exactly
    A = -0.5 * np.linalg.solve(P, M)
    return float(verify(A, P, M).decay_rate)


def _stable(n: int, rng, discrete: bool) -> np.ndarray:
    A = rng.standard_normal((n, n))
    if discrete:
        return 0.9 * A / max(abs(np.linalg.eigvals(A)))
    return A - (max(np.linalg.eigvals(A).real) + 0.5) * np.eye(n)


def _cases(discrete: bool) -> list[dict[str, Any]]:
    from ..control import paper_system

    rng = np.random.default_rng(5 + discrete)
    system = paper_system()
    A_cl = closed_loop(1.0)
    first = {"A": 0.5 * A_cl if discrete else A_cl, "M": np.asarray(system.M)}
    R = rng.standard_normal((4, 4))
    return [first, {"A": _stable(4, rng, discrete), "M": R @ R.T + np.eye(4)}]


def _kron_solve(L: np.ndarray, M) -> np.ndarray:
    """``P`` with ``L vec(P) = -vec(M)`` (column-stacking ``vec``): a wrong operator's answer,
    for the hints."""
    M = np.asarray(M, dtype=float)
    rhs = -M.ravel(order="F")  # column-stacking vec
    return np.linalg.solve(L, rhs).reshape(M.shape, order="F")


def check_lyapunov_kron(lyapunov_kron, *, verbose: bool = True,
                        cases: list[dict[str, Any]] | None = None,
                        time_limit: float | None = DEFAULT_TIME_LIMIT) -> CheckResult:
    """Check ``lyapunov_kron(A, M) -> P`` (exercise 1) on the paper's closed loop and a
    random stable 4x4 system. Recognises python-control's and scipy's equations, and the
    row-stacked vec with a non-symmetric answer."""
    def causes(A, M):
        from scipy.linalg import solve_continuous_lyapunov

        return [("this solves python-control's A P + P Aᵀ + M = 0 (lyap(A, M)); ours has "
                 "Aᵀ on the left", solve_continuous_lyapunov(A, -M)),
                ("the sign: this solves AᵀP + PA = +M (scipy's convention, no minus)",
                 solve_continuous_lyapunov(A.T, M)),
                ("AᵀP + PA has two terms, each with its own Kronecker factor",
                 _kron_solve(np.kron(np.eye(len(A)), A.T), M)),
                ("this solves A P + P A: vec(AᵀP) = (I ⊗ Aᵀ) vec(P), with the transpose",
                 _kron_solve(np.kron(np.eye(len(A)), A) + np.kron(A.T, np.eye(len(A))), M)),
                ("this solves AᵀP + PAᵀ: vec(PA) = (Aᵀ ⊗ I) vec(P) (vec(XYZ) = (Zᵀ ⊗ X) "
                 "vec(Y) with Z = A)",
                 _kron_solve(np.kron(np.eye(len(A)), A.T) + np.kron(A, np.eye(len(A))), M)),
                ("Aᵀ ⊗ Aᵀ is the discrete equation's operator (AᵀPA); the continuous one is "
                 "I ⊗ Aᵀ + Aᵀ ⊗ I", _kron_solve(np.kron(A.T, A.T), M))]

    return check_function("Lyapunov equation by Kronecker products", lyapunov_kron,
                          by_case(_toolkit_lyapunov), given_cases(cases) or _cases(False),
                          causes=causes,
                          rtol=1e-8, atol=1e-10, time_limit=time_limit, verbose=verbose)


def check_discrete_lyapunov_kron(discrete_lyapunov_kron, *, verbose: bool = True,
                                 cases: list[dict[str, Any]] | None = None,
                                 time_limit: float | None = DEFAULT_TIME_LIMIT) -> CheckResult:
    """Check ``discrete_lyapunov_kron(A, M) -> P`` (exercise 3)."""
    def causes(A, M):
        from scipy.linalg import solve_discrete_lyapunov

        return [("this solves A P Aᵀ - P + M = 0 (python-control's dlyap(A, M)); ours is "
                 "AᵀPA - P = -M", solve_discrete_lyapunov(A, M)),
                ("the sign of M is flipped", -solve_discrete_lyapunov(A.T, M)),
                ("I ⊗ Aᵀ + Aᵀ ⊗ I is the continuous equation's operator; the discrete one is "
                 "Aᵀ ⊗ Aᵀ - I", _kron_solve(np.kron(np.eye(len(A)), A.T)
                                             + np.kron(A.T, np.eye(len(A))), M)),
                ("this solves AᵀPA + P = -M: the equation has −P, subtract the identity",
                 _kron_solve(np.kron(A.T, A.T) + np.eye(len(A) ** 2), M)),
                ("the −P term is missing: Aᵀ ⊗ Aᵀ - I", _kron_solve(np.kron(A.T, A.T), M)),
                ("this solves AᵀPAᵀ: vec(XYZ) = (Zᵀ ⊗ X) vec(Y), with X = Aᵀ and Z = A both "
                 "factors are Aᵀ", _kron_solve(np.kron(A, A.T) - np.eye(len(A) ** 2), M))]

    return check_function("discrete Lyapunov equation by Kronecker products",
                          discrete_lyapunov_kron, by_case(_toolkit_discrete_lyapunov),
                          given_cases(cases) or _cases(True), causes=causes, rtol=1e-8, atol=1e-10,
                          time_limit=time_limit, verbose=verbose)


def check_decay_rate(decay_rate, *, verbose: bool = True,
                     cases: list[dict[str, Any]] | None = None,
                     time_limit: float | None = DEFAULT_TIME_LIMIT) -> CheckResult:
    """Check ``decay_rate(P, M) -> ι`` (exercise 2) on the paper's P, M (ι = 0.4410/1.25)
    and a random pair."""
    from ..control import paper_system

    system = paper_system()
    rng = np.random.default_rng(7)
    R, S = rng.standard_normal((2, 3, 3))
    cases = given_cases(cases)  # [] or a non-list: refused, naming cases
    cases = cases or [{"P": np.asarray(system.P), "M": np.asarray(system.M)},
                      {"P": R @ R.T + np.eye(3), "M": S @ S.T + 0.5 * np.eye(3)}]

    def causes(P, M):
        lp, lm = np.linalg.eigvalsh(P), np.linalg.eigvalsh(M)
        return [("upside down: the guaranteed rate is λ_min(M) / λ_max(P)", lp[-1] / lm[0]),
                ("λ_min(P) in the denominator gives a rate the certificate does not prove: "
                 "V ≤ λ_max(P) |x|² is the bound to use", lm[0] / lp[0]),
                ("λ_max(M) is too optimistic: ẋᵀMx ≥ λ_min(M) |x|²", lm[-1] / lp[-1]),
                ("that is the rate of ‖x‖ (half of V's): ι is the rate of V(x(t)) ≤ V(x(0)) "
                 "e^{-ιt}", lm[0] / (2 * lp[-1])),
                ("diagonal entries are not eigenvalues: use np.linalg.eigvalsh",
                 float(np.min(np.diag(M)) / np.max(np.diag(P)))),
                ("eigvalsh sorts in ascending order: [0] is the smallest, [-1] the largest",
                 lm[-1] / lp[0])]

    return check_function("guaranteed decay rate", decay_rate, by_case(_toolkit_decay_rate), cases,
                          compare=check_scalar, causes=causes, rtol=1e-9, atol=1e-12,
                          time_limit=time_limit, verbose=verbose)


# The interpretation question: multiple choice, the right choice kept as a digest (the
# package holds no answer in the clear); each wrong choice has its own hint.
INTERPRETATION = ChoiceQuestion(
    key="lesson03.interpretation",
    question=("At g = 1.9 the closed loop is still Hurwitz, but the slider shows ι ≈ 0.037 "
              "(against 0.35 at g = 1) and max Re λ ≈ -0.022. What does the small ι say?"),
    choices={
        "a": "the certificate has failed: V(x(t)) may now grow",
        "b": "the loop is barely stable: an eigenvalue approaches the imaginary axis as g → 2,"
             " so V itself decays slowly (at most like e^{2 max Re λ · t}) and any certified "
             "rate must be small; the bound V ≤ V(0) e^{-ιt} still holds",
        "c": "ι is the exact decay rate of |x(t)|, so |x| halves every ln 2 / 0.037 time units",
        "d": "a larger gain always makes a loop faster; ι is small only because M was chosen "
             "badly",
    },
    digest="2647ee15d5dea3c54690de9252385d20d5388a2a9d676a071fd7ede478a81257",
    hints={
        "a": "the slider says 'V respects the bound': P ≻ 0 exists for every Hurwitz A, and V "
             "≤ V(0) e^{-ιt} holds at g = 1.9 too",
        "c": "ι is a guaranteed lower bound on V's decay rate, not the exact rate of |x|",
        "d": "above g = 2 the loop is not Hurwitz at all: more gain is not more speed here; "
             "and no M can certify faster than the slowest mode decays",
    },
    minutes=5)


def check_interpretation(interpretation, *, verbose: bool = True) -> CheckResult:
    """Check the interpretation question's answer (a letter, :data:`INTERPRETATION`)."""
    return INTERPRETATION.check(interpretation, verbose=verbose)


#: The graded checks of the lesson: the name of each answer in the notebook -> its check.
CHECKS: dict[str, Callable[..., CheckResult]]
CHECKS = {"lyapunov_kron": check_lyapunov_kron, "decay_rate": check_decay_rate,
          "discrete_lyapunov_kron": check_discrete_lyapunov_kron,
          "interpretation": check_interpretation}


def summary(*, verbose: bool = True, **answers: Any) -> dict[str, Any]:
    """Run every graded check of the lesson on ``answers`` (:func:`run_checks`)."""
    return run_checks(CHECKS, answers, verbose=verbose)


# --------------------------------------------------------------------------- slider

_T_END = 10.0
_STEPS = 400


def closed_loop(gain: float) -> np.ndarray:
    """``A + B K`` of the paper's plant with ``K = gain · [1, -4]`` (``gain = 1``: Tabuada's
    loop, eigenvalues ``-1/2 ± i√3/2``). Hurwitz for ``0.75 < gain < 2``."""
    from .._validation import check_real
    from ..control import paper_system

    gain = check_real("gain", gain)
    system = paper_system()
    A, B, K = (np.asarray(m, dtype=float) for m in (system.A, system.B, system.K))
    return A + gain * B @ K


def _gain_axes(fig) -> dict[str, Any]:
    ax1, ax2 = fig.subplots(1, 2)
    levels = [ax1.plot([], [], color="C0", lw=0.8, alpha=0.6)[0] for _ in range(4)]
    (traj,) = ax1.plot([], [], color="k", lw=1.2, label="x(t) from (1, 0)")
    ax1.set_xlim(-2, 2)
    ax1.set_ylim(-2, 2)
    ax1.set_aspect("equal")
    ax1.set_xlabel("$x_1$")
    ax1.set_ylabel("$x_2$")
    ax1.legend(fontsize=7, loc="lower left")
    t = np.linspace(0, _T_END, _STEPS + 1)
    (v_line,) = ax2.plot(t, np.ones_like(t), color="k", label="V(x(t)) / V(x(0))")
    (bound,) = ax2.plot(t, np.ones_like(t), color="C3", ls="--", label="$e^{-ιt}$ (certified)")
    ax2.set_yscale("log")
    ax2.set_ylim(1e-8, 1e4)
    ax2.set_xlabel("t")
    ax2.legend(fontsize=7, loc="upper right")
    fig.subplots_adjust(left=0.06, right=0.98, bottom=0.17, top=0.88, wspace=0.2)
    return {"ax1": ax1, "ax2": ax2, "levels": levels, "traj": traj, "v": v_line,
            "bound": bound, "t": t,
            "moving": [*levels, traj, v_line, bound, ax1.title, ax2.title]}


@slider("lesson03.gain", title="Feedback gain g: the Lyapunov certificate of A + g B K",
        setup=_gain_axes, gain=Param(0.5, 2.5, 1.0, step=0.01, label="g"))
def gain_slider(state, gain: float) -> dict[str, Any]:
    """For ``A_cl = closed_loop(gain)`` and the paper's ``M``: ``P`` from
    :func:`lds_toolkit.continuous_lyapunov` (refused when ``A_cl`` is not Hurwitz), four
    level sets of ``V = xᵀPx``, the trajectory ``x(t) = e^{A_cl t} x_0`` and ``V(t)/V(0)``
    against the certified ``e^{-ιt}``, ``ι = λ_min(M)/λ_max(P)``."""
    from scipy.linalg import expm

    from ..control import continuous_lyapunov, level_set, paper_system

    A = closed_loop(gain)
    M = np.asarray(paper_system().M)
    step = expm(A * (_T_END / _STEPS))
    x = np.empty((_STEPS + 1, 2))
    x[0] = (1.0, 0.0)
    for k in range(_STEPS):
        x[k + 1] = step @ x[k]
    state["traj"].set_data(x[:, 0], x[:, 1])
    lam = np.linalg.eigvals(A)
    stable = bool(lam.real.max() < 0)
    if stable:
        P = continuous_lyapunov(A, M)
        rate = float(np.linalg.eigvalsh(M)[0] / np.linalg.eigvalsh(P)[-1])
        v = np.einsum("ti,ij,tj->t", x, P, x)
        v0 = v[0]
        unit = level_set(P, v0, n_points=120)  # {V = c V0} is the same ellipse scaled by √c
        for line, c in zip(state["levels"], (0.25, 0.5, 1.0, 2.0)):
            line.set_data(np.sqrt(c) * unit[:, 0], np.sqrt(c) * unit[:, 1])
        state["v"].set_ydata(np.maximum(v / v0, 1e-300))
        state["bound"].set_ydata(np.exp(-rate * state["t"]))
        title = f"g = {gain:.2f}: certified, ι = {rate:.3f}, cond P = {np.linalg.cond(P):.3g}"
        numbers: dict[str, Any] = {"decay rate ι": rate, "max Re λ": float(lam.real.max()),
                   "V respects the bound": bool(np.all(v / v0 <= np.exp(-rate * state["t"])
                                                       * (1 + 1e-9)))}
    else:
        for line in state["levels"]:
            line.set_data([], [])
        norm2 = (x * x).sum(axis=1)
        state["v"].set_ydata(np.maximum(norm2 / norm2[0], 1e-300))
        state["bound"].set_ydata(np.full(state["t"].size, np.nan))
        title = f"g = {gain:.2f}: NOT Hurwitz (max Re λ = {lam.real.max():.3f}): no P ≻ 0"
        numbers = {"decay rate ι": None, "max Re λ": float(lam.real.max()),
                   "V respects the bound": None}
    state["ax1"].set_title(title, fontsize=9)
    state["ax2"].set_title("V(t)/V(0)" if stable else "|x(t)|² / |x(0)|²", fontsize=9)
    return numbers
