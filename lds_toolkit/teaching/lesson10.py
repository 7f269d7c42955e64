r"""Lesson 10 — LQR on a trained layer's LDS: the checks and the slider (torch).

Exercises (``docs/lessons/10_lqr_on_a_trained_layer.py``), for ``x_{k+1} = A x_k + B u_k``
and the cost ``J = Σ_{k≥0} x_kᵀ Q x_k + u_kᵀ R u_k``:

1. :func:`check_lqr_gain` — the gain K of the optimal feedback ``u = -K x`` (infinite
   horizon, discrete time), against python-control's ``dlqr``.
2. :func:`check_feedback_cost` — the cost J of a *given* gain K from ``x_0``, against the
   toolkit's :func:`lds_toolkit.discrete_lyapunov` on the closed loop
   (``J = x_0ᵀ X x_0``, ``A_Kᵀ X A_K - X = -(Q + Kᵀ R K)``, ``A_K = A - B K``).

The interpretation question (:data:`INTERPRETATION`, multiple choice): where the closed-loop
poles of a stable layer go when the input becomes expensive. The expected values come from
library routes taking the *case*; the answer key is instructor-only
(``docs/lessons/instructor/lds_key10.py``).

The slider ``lesson10.weight`` moves the input weight r of the LQR designed on a trained S4D
layer (``Q = Cᵀ C``: the output's energy) and shows the closed-loop poles, the certificate
the Riccati matrix gives and the response to an input impulse. The layer is the one the
lesson hands over with :func:`use_layer`, or (tests, benchmarks) one trained by
:func:`lds_toolkit.teaching.lesson08.train_capstone` at a small size.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from typing import Any

import numpy as np
import torch  # noqa: F401 - lesson 10 trains a layer: without torch the module is skipped

from ._figures import no_minor
from .calling import DEFAULT_TIME_LIMIT, given_cases
from .check import CheckResult, check_function, check_scalar, run_checks
from .questions import ChoiceQuestion
from .sliders import Param, slider

__all__ = ["CHECKS", "INTERPRETATION", "summary", "check_lqr_gain", "check_feedback_cost",
           "check_interpretation", "use_layer", "small_layer", "internal_model_costs",
           "free_response"]


def _floats(*arrays):
    return tuple(np.atleast_2d(np.asarray(m, dtype=float)) for m in arrays)


# ------------------------------------------------------------- exercise 1: the gain
def _toolkit_gain(case: dict[str, Any]) -> np.ndarray:
    """``control.dlqr(A, B, Q, R)[0]`` of a case."""
    import control

    return np.asarray(control.dlqr(*_floats(case["A"], case["B"], case["Q"], case["R"]))[0])


def _layer_like() -> dict[str, np.ndarray]:
    """A system shaped like an exported S4D layer: two 2 x 2 rotation-and-decay blocks near
    the unit circle, one input, one output."""
    blocks = [(0.9995, 0.003), (0.975, 0.015)]
    A = np.zeros((4, 4))
    for i, (m, a) in enumerate(blocks):
        A[2 * i:2 * i + 2, 2 * i:2 * i + 2] = m * np.array([[np.cos(a), -np.sin(a)],
                                                           [np.sin(a), np.cos(a)]])
    return {"A": A, "B": np.array([[0.04], [0.02], [0.04], [0.01]]),
            "C": np.array([[-2.0, -5.4, 4.5, -2.4]])}


def _gain_cases() -> list[dict[str, Any]]:
    rng = np.random.default_rng(101)
    layer = _layer_like()
    G = rng.standard_normal((3, 3))
    return [  # two inputs, two states first: Q and R, B and Bᵀ have exchangeable shapes
        {"A": np.array([[1.1, 0.4], [0.0, 0.9]]), "B": np.array([[1.0, 0.0], [0.5, 1.0]]),
         "Q": np.array([[2.0, 0.3], [0.3, 1.0]]), "R": np.array([[0.5, 0.1], [0.1, 0.8]])},
        {"A": layer["A"], "B": layer["B"], "Q": layer["C"].T @ layer["C"],
         "R": np.array([[0.01]])},
        {"A": np.array([[0.5, 1.0, 0.0], [0.0, 0.8, 1.0], [0.2, 0.0, 1.05]]),
         "B": rng.standard_normal((3, 2)), "Q": G @ G.T + np.eye(3), "R": np.eye(2)}]


def _gain_causes(**case: Any) -> list[tuple[str, Any]]:
    """The slips of exercise 1 on a case (keyword arguments: no exercise's signature)."""
    import control
    import scipy.linalg as sla

    A, B, Q, R = _floats(*(case[k] for k in "ABQR"))
    P = np.asarray(control.dlqr(A, B, Q, R)[1])  # python-control's route: no solution line
    out = [("dlqr's K is for u = −K x: the sign is flipped",
            -np.linalg.solve(R + B.T @ P @ B, B.T @ P @ A)),
           ("A is missing: K = (R + Bᵀ P B)⁻¹ Bᵀ P A",
            np.linalg.solve(R + B.T @ P @ B, B.T @ P)),
           ("that is the continuous-time form R⁻¹ Bᵀ P (A): in discrete time the next "
            "state's cost adds Bᵀ P B to R", np.linalg.solve(R, B.T @ P @ A)),
           ("that is the gain after one step of the Riccati recursion from P = Q; the "
            "infinite-horizon gain comes from its fixed point",
            np.linalg.solve(R + B.T @ Q @ B, B.T @ Q @ A))]
    try:
        Pc = sla.solve_continuous_are(A, B, Q, R)
        out.append(("that is continuous-time LQR (solve_continuous_are, K = R⁻¹ Bᵀ P): "
                    "this system is discrete", np.linalg.solve(R, B.T @ Pc)))
    except (ValueError, np.linalg.LinAlgError):
        pass
    if A.shape == R.shape:
        try:
            Ps = sla.solve_discrete_are(A, B, R, Q)
            out.append(("Q (on the state) and R (on the input) are swapped",
                        np.linalg.solve(R + B.T @ Ps @ B, B.T @ Ps @ A)))
        except (ValueError, np.linalg.LinAlgError):
            pass
    return out


def check_lqr_gain(lqr_gain, *, verbose: bool = True,
                   cases: list[dict[str, Any]] | None = None,
                   time_limit: float | None = DEFAULT_TIME_LIMIT) -> CheckResult:
    """Check ``lqr_gain(A, B, Q, R)`` (exercise 1) on an unstable two-input system (where
    swapped arguments have valid shapes), a layer-shaped system with ``Q = Cᵀ C`` and a
    three-state, two-input one. Recognises the sign of ``u = -K x``, a missing A, the
    continuous-time formula or equation, one step of the recursion and Q, R swapped.
    ``cases`` replaces the public cases (the autograder's hidden ones); ``time_limit``:
    seconds per call."""
    return check_function("LQR gain", lqr_gain, lambda **case: _toolkit_gain(case),
                          given_cases(cases) or _gain_cases(), causes=_gain_causes, rtol=1e-6,
                          atol=1e-9,
                          time_limit=time_limit, verbose=verbose)


# ------------------------------------------------------- exercise 2: a feedback's cost
def _closed_loop_cost(matrices, x0, transpose: bool = True) -> float:
    """``x0ᵀ X x0`` with X from the closed loop of ``matrices = (A, B, K, Q, R)`` (the
    exercise's arguments grouped: no function here has the exercise's signature)."""
    from ..control import discrete_lyapunov

    A, B, K, Q, R = _floats(*matrices)
    Acl = A - B @ K
    M = Q + K.T @ R @ K
    X = discrete_lyapunov(Acl if transpose else Acl.T, 0.5 * (M + M.T))
    x0 = np.asarray(x0, dtype=float).reshape(-1)
    return float(x0 @ X @ x0)


def _toolkit_cost(case: dict[str, Any]) -> float:
    """``x0ᵀ X x0`` with ``discrete_lyapunov(A - B K, Q + Kᵀ R K)`` of a case."""
    return _closed_loop_cost([case[k] for k in "ABKQR"], case["x0"])


def _cost_cases() -> list[dict[str, Any]]:
    layer = _layer_like()
    Q1, R1 = layer["C"].T @ layer["C"], np.array([[0.01]])
    K1 = _toolkit_gain({"A": layer["A"], "B": layer["B"], "Q": Q1, "R": R1})
    A2 = np.array([[1.1, 0.4], [0.0, 0.9]])
    B2 = np.array([[1.0], [0.5]])
    return [  # the optimal gain, then gains of one's own (non-normal closed loops)
        {"A": layer["A"], "B": layer["B"], "K": K1, "Q": Q1, "R": R1, "x0": layer["B"][:, 0]},
        {"A": A2, "B": B2, "K": np.array([[0.6, 0.5]]), "Q": np.eye(2),
         "R": np.array([[2.0]]), "x0": np.array([1.0, -1.0])},
        {"A": np.array([[0.5, 1.0, 0.0], [0.0, 0.8, 1.0], [0.2, 0.0, 1.05]]),
         "B": np.array([[0.0, 1.0], [1.0, 0.0], [0.5, 0.5]]),
         "K": np.array([[0.1, 0.9, 0.3], [0.4, 0.1, 0.6]]), "Q": np.diag([1.0, 2.0, 0.5]),
         "R": np.diag([0.3, 1.0]), "x0": np.array([0.5, 1.0, -2.0])}]


def _cost_causes(**case: Any) -> list[tuple[str, float]]:
    """The slips of exercise 2 on a case."""
    import control

    A, B, K, Q, R = _floats(*(case[k] for k in "ABKQR"))
    x = np.asarray(case["x0"], dtype=float).reshape(-1)
    J = _closed_loop_cost((A, B, K, Q, R), x)
    out = [("the input's cost uᵀ R u = xᵀ Kᵀ R K x is missing",
            _closed_loop_cost((A, B, K, Q, np.zeros_like(R)), x)),
           ("the sum starts at k = 0: x_0ᵀ Q x_0 + u_0ᵀ R u_0 counts too",
            J - float(x @ (Q + K.T @ R @ K) @ x)),
           ("the factor 1/2: J as defined has none", 0.5 * J)]
    try:
        out.append(("scipy's solve_discrete_lyapunov(a, q) solves a X aᵀ - X + q = 0: pass "
                    "a = (A - B K)ᵀ", _closed_loop_cost((A, B, K, Q, R), x, transpose=False)))
    except ValueError:
        pass
    if max(abs(np.linalg.eigvals(A))) < 1:
        out.append(("that is the cost without feedback (A alone): the loop runs with "
                    "A - B K", _closed_loop_cost((A, B, 0 * K, Q, R), x)))
    if max(abs(np.linalg.eigvals(A + B @ K))) < 1:
        out.append(("the closed loop is A - B K for u = −K x: the sign is flipped",
                    _closed_loop_cost((A, -B, K, Q, R), x)))
    try:
        S = np.asarray(control.dlqr(A, B, Q, R)[1])
        optimal = float(x @ S @ x)
        if abs(optimal - J) > 1e-6 * abs(J):
            out.append(("that is the optimal cost x_0ᵀ S x_0 of dlqr; the exercise asks for "
                        "the cost of the given K", optimal))
    except Exception:  # noqa: BLE001 - no stabilising LQR solution: no such slip to name
        pass
    return out


def check_feedback_cost(feedback_cost, *, verbose: bool = True,
                        cases: list[dict[str, Any]] | None = None,
                        time_limit: float | None = DEFAULT_TIME_LIMIT) -> CheckResult:
    """Check ``feedback_cost(A, B, K, Q, R, x0)`` (exercise 2) on the optimal gain of a
    layer-shaped system and on two gains of one's own. Recognises the input's cost left out,
    the first term left out, a factor 1/2, scipy's Lyapunov convention, the loop run without
    feedback or with the sign of K flipped, and the optimal cost of dlqr in place of the
    given K's. A truncated sum passes when its tail is below the tolerance (1e-8 relative)."""
    return check_function("cost of a feedback", feedback_cost,
                          lambda **case: _toolkit_cost(case), given_cases(cases) or _cost_cases(),
                          compare=check_scalar, causes=_cost_causes, rtol=1e-8, atol=1e-12,
                          time_limit=time_limit, verbose=verbose)


# ------------------------------------------------- the interpretation question
# Multiple choice, the right choice kept as a digest; each wrong choice has its own hint.
# Why: as R grows, the Riccati solution tends to the output energy's (Q's) Lyapunov solution
# and K = (R + Bᵀ P B)⁻¹ Bᵀ P A tends to 0: the loop tends to the layer itself, which is
# stable (the slider shows it; tests/teaching/test_lesson10.py measures it).
INTERPRETATION = ChoiceQuestion(
    key="lesson10.interpretation",
    question=("The LQR on the trained layer weighs the output's energy (Q = Cᵀ C) against the "
              "input's (R = r). As r grows without bound, where do the closed-loop poles go?"),
    choices={
        "a": "to the origin: the controller cancels the dynamics",
        "b": "to the layer's own poles: it is stable, and when input is dear the best "
             "control is almost none",
        "c": "onto the unit circle: expensive input leaves the loop marginally stable",
        "d": "outside the unit disc: with too little input the loop becomes unstable",
    },
    digest="9b3cd33a2d09ff5cff68752addc452bbcc648f2b41b8f8923b2bd600dc148222",
    hints={
        "a": "cancelling the dynamics takes large inputs: that is where the poles go as r "
             "becomes small (cheap input), not large",
        "c": "the gain tends to 0, so the poles tend to those of A, and an S4D layer's are "
             "strictly inside the unit disc (lesson 8)",
        "d": "an LQR loop is stable for every r > 0 when the plant is stabilisable: the "
             "Riccati matrix is a Lyapunov function of the closed loop",
    },
    minutes=5)


def check_interpretation(interpretation, *, verbose: bool = True) -> CheckResult:
    """Check the interpretation question's answer (a letter, :data:`INTERPRETATION`)."""
    return INTERPRETATION.check(interpretation, verbose=verbose)


# ------------------------------------------------------------------ the slider's layer
_HANDED_OVER: dict[str, Any] = {}


def use_layer(system, true_system=None) -> None:
    """Hand the lesson's exported layer (``layer.to_lds()``) to the slider, and the system
    that made its training stream (for :func:`internal_model_costs`)."""
    from ..systems.lds import require_discrete

    _HANDED_OVER["system"] = require_discrete(system, "system")
    _HANDED_OVER["true"] = None if true_system is None else \
        require_discrete(true_system, "true_system")


@lru_cache(maxsize=1)
def small_layer():
    """``(layer.to_lds(), true system)`` of an S4D layer trained at a small size
    (``lesson08.train_capstone(T=512, steps=300, d_state=4)``, about a second on a CPU):
    the slider's layer when none was handed over."""
    from .lesson08 import train_capstone

    layer, system, _ = train_capstone(T=512, steps=300, d_state=4)
    return layer.to_lds(), system


def _slider_systems():
    if "system" in _HANDED_OVER:
        return _HANDED_OVER["system"], _HANDED_OVER["true"]
    return small_layer()


def internal_model_costs(learned, true_system, r: float) -> dict[str, Any]:
    r"""The LQR designed on a trained layer, run on the system it imitates.

    The layer (standard form ``x̂_{k+1} = Â x̂_k + B̂ u_k``, ``ŷ_k = Ĉ x̂_k + D̂ u_k``) was
    trained so that ``ŷ_k`` predicts ``y_{k+1}`` of the true system (``x_{k+1} = A x_k +
    B u_k``, ``y_k = C x_k``, the ``"lengen"`` stream). An input impulse ``u_0 = 1`` hits
    both; from step 1 on the input is ``u_k = -K x̂_k``, the LQR of the layer for the cost
    ``Σ_{k≥1} ŷ_k² + r u_k²`` (``Q = ĈᵀĈ``, cross term ``N = ĈᵀD̂``, ``R = D̂ᵀD̂ + r``), with
    the layer run beside the plant as an internal model of its state (fed the same inputs:
    no measurement is needed, the loop is exact when the layer is). Returns ``K``, the cost
    the layer predicts, ``x̂_1ᵀ S x̂_1`` (``x̂_1 = B̂``), and the cost achieved on the true
    system, ``Σ_{k≥1} y_{k+1}² + r u_k²``: ``z_1ᵀ X z_1`` for the joint state
    ``z = (x, x̂)``, ``z_1 = (B, B̂)``, with ``A_zᵀ X A_z - X = -M`` (``A_z = [[A, -B K],
    [0, Â - B̂ K]]``, ``M = hᵀh + r gᵀg``, ``y_{k+1} = h z_k = C A x_k - C B K x̂_k``,
    ``u_k = g z_k``), by :func:`lds_toolkit.discrete_lyapunov`.
    """
    import control

    from .._validation import check_real
    from ..control import discrete_lyapunov

    r = check_real("r", r, low=0.0, low_inclusive=False)  # r = 0: no input weight, no LQR
    Ah, Bh, Ch, Dh = (np.asarray(m, float) for m in (learned.A, learned.B, learned.C,
                                                       learned.D))
    A, B, C = (np.asarray(m, float) for m in (true_system.A, true_system.B, true_system.C))
    K, S, _ = control.dlqr(Ah, Bh, Ch.T @ Ch, Dh.T @ Dh + r, Ch.T @ Dh)
    K = np.asarray(K)
    n, nh = A.shape[0], Ah.shape[0]
    Az = np.block([[A, -B @ K], [np.zeros((nh, n)), Ah - Bh @ K]])
    h = np.hstack([C @ A, -C @ B @ K])
    g = np.hstack([np.zeros((K.shape[0], n)), -K])
    X = discrete_lyapunov(Az, h.T @ h + r * g.T @ g)
    z1 = np.concatenate([B[:, 0], Bh[:, 0]])
    return {"K": K, "predicted": float(Bh[:, 0] @ np.asarray(S) @ Bh[:, 0]),
            "achieved": float(z1 @ X @ z1)}


SLIDER_LAGS = 4096
#: The lags drawn (log-spaced, about 300): the numbers use every lag.
_DRAWN = np.unique(np.geomspace(1, SLIDER_LAGS, 300).round().astype(int)) - 1


def free_response(A, x0, steps: int = SLIDER_LAGS, block: int = 64) -> np.ndarray:
    """``x_k = A^k x0`` for k = 0 .. steps-1 (rows), by blocks: the powers ``A^i``
    (i < block) times ``(A^block)^j x0``: about 2 x block small products instead of
    ``steps`` (a slider move's budget)."""
    from .._validation import as_float_array, check_int

    A = as_float_array("A", A, ndim=2)
    n = A.shape[0]
    if A.shape != (n, n):
        raise ValueError(f"A must be a square matrix, got shape {A.shape}")
    x0 = as_float_array("x0", x0, ndim=1)
    if x0.shape != (n,):
        raise ValueError(f"x0 must have shape ({n},) (one entry per state of A), got "
                         f"{x0.shape}")
    steps = check_int("steps", steps)
    block = check_int("block", block)
    powers = np.empty((block, n, n))
    powers[0] = np.eye(n)
    for i in range(1, block):
        powers[i] = A @ powers[i - 1]
    big = A @ powers[-1]
    starts = np.empty((-(-steps // block), n))
    starts[0] = x0
    for j in range(1, starts.shape[0]):
        starts[j] = big @ starts[j - 1]
    return np.einsum("inm,jm->jin", powers, starts).reshape(-1, n)[:steps]


def _weight_axes(fig) -> dict[str, Any]:
    """The slider's axes and the artists that do not move (the open-loop poles and
    response), made once per figure for the layer handed over at that time."""
    from ..systems import simulate

    system, true_system = _slider_systems()
    A, B, C = (np.asarray(m, float) for m in (system.A, system.B, system.C))
    ax1, ax2 = fig.subplots(1, 2)
    fig.subplots_adjust(left=0.08, right=0.98, bottom=0.16, top=0.88, wspace=0.28)
    lam = np.linalg.eigvals(A)
    lo = 1e-6
    ax1.plot(np.clip(1 - abs(lam), lo, 1), np.abs(np.angle(lam)), "kx", ms=7,
             label="layer (open loop)")
    (closed,) = ax1.plot(np.clip(1 - abs(lam), lo, 1), np.abs(np.angle(lam)), "C0o",
                         mfc="none", ms=7, label="closed loop")
    ax1.set(xscale="log", xlim=(lo, 1), ylim=(-0.1, 3.3), xlabel="1 - |λ|",
            ylabel="|angle λ| (rad)")
    ax1.legend(fontsize=7, loc="upper left")
    x0 = B[:, 0]  # the state an input impulse leaves
    y_open = simulate(system, np.zeros((SLIDER_LAGS, B.shape[1])), x0=x0,
                      return_states=False).y[:, 0]
    lags = _DRAWN + 1
    ax2.plot(lags, y_open[_DRAWN], "k", lw=1, label="y, open loop")
    (y_line,) = ax2.plot(lags, y_open[_DRAWN], "C0", lw=1.2, label="y, closed loop")
    (u_line,) = ax2.plot(lags, np.zeros(lags.size), "C3", lw=1, label="u = −K x")
    span = float(np.max(np.abs(y_open))) or 1.0
    ax2.set(xscale="log", xlim=(1, SLIDER_LAGS), ylim=(-1.5 * span, 1.5 * span),
            xlabel="step k + 1")
    ax2.set_title("response to an input impulse (x_0 = B)", fontsize=9)
    ax2.legend(fontsize=7, loc="lower left")
    no_minor(ax1, ax2)
    return {"A": A, "B": B, "C": C, "x0": x0, "ax1": ax1, "closed": closed, "y": y_line,
            "u": u_line, "lo": lo, "system": system, "true": true_system,
            # blitted (sliders.py): everything a move changes; the axes' limits are fixed
            "moving": (closed, y_line, u_line, ax1.title)}


@slider("lesson10.weight", title="LQR on the trained layer: the input weight r",
        setup=_weight_axes, r=Param(1e-4, 1e4, 1e-2, log=True, label="r (input weight)"))
def weight_slider(state, r: float) -> dict[str, Any]:
    """Left: the poles of the layer and of the LQR loop ``A - B K`` (``Q = Cᵀ C``, ``R = r``)
    by 1 - |λ| and angle. Right: the output and the input after an input impulse, with and
    without the feedback."""
    import control

    from ..control import discrete_certificate

    A, B, C, x0 = state["A"], state["B"], state["C"], state["x0"]
    K, S, E = control.dlqr(A, B, C.T @ C, np.array([[r]]))
    K = np.asarray(K)
    Acl = A - B @ K
    xs = free_response(Acl, x0)
    state["y"].set_ydata((xs @ C[0])[_DRAWN])
    state["u"].set_ydata(-(xs @ K[0])[_DRAWN])
    E = np.asarray(E)
    state["closed"].set_data(np.clip(1 - abs(E), state["lo"], 1), np.abs(np.angle(E)))
    cert = discrete_certificate(Acl)
    y_energy = float(np.sum((xs @ C[0]) ** 2))
    u_energy = float(np.sum((xs @ K[0]) ** 2))
    state["ax1"].set_title(f"r = {r:.3g}: closed-loop spectral radius "
                           f"{max(abs(E)):.6f}", fontsize=9)
    out = {"spectral radius": float(max(abs(E))), "certified ρ": cert.rho,
           "cost x0ᵀ S x0": float(x0 @ np.asarray(S) @ x0), "Σ y²": y_energy,
           "r Σ u²": r * u_energy, "‖K‖": float(np.linalg.norm(K))}
    if state["true"] is not None:
        costs = internal_model_costs(state["system"], state["true"], r)
        out["true system: achieved / predicted"] = costs["achieved"] / costs["predicted"]
    return out


#: The graded checks of the lesson: the name of each answer in the notebook -> its check.
CHECKS: dict[str, Callable[..., CheckResult]] = {
    "lqr_gain": check_lqr_gain,
    "feedback_cost": check_feedback_cost,
    "interpretation": check_interpretation,
}


def summary(*, verbose: bool = True, **answers: Any) -> dict[str, Any]:
    """Run every graded check of the lesson on ``answers`` (:func:`run_checks`)."""
    return run_checks(CHECKS, answers, verbose=verbose)
