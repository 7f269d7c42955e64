r"""Lesson 9 — the Kalman filter, the optimal predictor, beside spectral filtering: the
checks and the slider.

The stream (``docs/lessons/09_kalman_vs_spectral_filtering.py``): a Region A system driven by
white noise u_t, with process noise ``w_t ~ N(0, σ_w² I)`` and measurement noise
``v_t ~ N(0, σ_v²)`` (:func:`lds_toolkit.simulate`, ``output="lengen"``).

Exercises:

1. :func:`check_predictor_gain` — the stationary predictor gain L of (A, C, Q, R), against
   :func:`lds_toolkit.stationary_kalman` (scipy's DARE of the dual system; python-control's
   ``dlqe`` gives the same gain, ``tests/learning/test_kalman.py``).
2. :func:`check_kalman_predictions` — the predictor run over a stream, against
   :func:`lds_toolkit.learning.kalman_predict` (the predictor as an LTI system simulated by the
   toolkit).
3. :func:`check_catch_up_time` — from when on a learner's average regret against the best
   predictor stays below a tolerance, against a vectorised count on the average regret.

The interpretation question (:data:`INTERPRETATION`, multiple choice): the least loss of a
predictor that starts from y_{t-1}, on measurement noise alone. The expected values come from
the toolkit's library, each taking the *case* (no function here has an exercise's
signature); the answer key with the solutions is instructor-only
(``docs/lessons/instructor/lds_key09.py``).

The slider ``lesson09.regret`` moves σ_w, σ_v and the horizon read, and shows the average
regret of Algorithm 1 against the Kalman predictor. Its spectral-filtering run is computed
once: with no projection (radius ∞) and a step size set by the inputs alone, every prediction
of online gradient descent is linear in the targets y for fixed inputs (M_1 = 0 and each step
is linear in (M_t, y)), so the predictions on ``y0 + σ_w y_w + σ_v v`` are the same
combination of the predictions on the three parts (checked in ``tests/teaching``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import lru_cache
from typing import Any

import numpy as np

from ._figures import no_minor
from .calling import DEFAULT_TIME_LIMIT, given_cases
from .check import CheckResult, check_equal, check_function, run_checks
from .questions import ChoiceQuestion
from .sliders import Param, slider

__all__ = ["CHECKS", "INTERPRETATION", "summary", "check_predictor_gain",
           "check_kalman_predictions", "check_catch_up_time", "check_interpretation",
           "noisy_stream", "stream_parts", "spectral_run", "CATCH_UP_SHARE"]


# ------------------------------------------------------------------------ the stream
def stream_parts(T: int, n: int = 2, seed: int = 9):
    """The parts of the lesson's stream: ``(system, u, y0, y_w, v)`` with ``y0`` the
    noiseless output, ``y_w`` the output of the unit process noise (``u = 0``) and ``v`` unit
    measurement noise; ``y0 + σ_w y_w + σ_v v`` is the stream at noise levels (σ_w, σ_v).
    The system: ``n`` real eigenvalues in Region A of ``(T, 7/8)``, one input and output."""
    from ..systems import eigenvalue_regions, random_lds, simulate

    rng = np.random.default_rng(seed)
    system = random_lds(n, eigenvalue_regions(T, 7 / 8).region_a, rng=rng)
    u = rng.standard_normal((T, 1))
    w = rng.standard_normal((T, n))
    v = rng.standard_normal((T, 1))
    y0 = simulate(system, u, output="lengen", return_states=False).y
    y_w = simulate(system, np.zeros_like(u), process_noise=w, output="lengen",
                   return_states=False).y
    return system, u, y0, y_w, v


def noisy_stream(T: int, sigma_w: float, sigma_v: float, n: int = 2, seed: int = 9):
    """``(system, u, y)``: the lesson's stream at process noise ``sigma_w`` and measurement
    noise ``sigma_v`` (standard deviations), built from :func:`stream_parts`."""
    from .._validation import check_real

    sigma_w = check_real("sigma_w", sigma_w, low=0.0)
    sigma_v = check_real("sigma_v", sigma_v, low=0.0)
    system, u, y0, y_w, v = stream_parts(T, n, seed)
    return system, u, y0 + sigma_w * y_w + sigma_v * v


def spectral_learner(T: int, k: int = 8):
    """Algorithm 1 as the lesson runs it: ``k`` filters of H_T, no projection, the constant
    step ``1 / max_t ||x_t||²`` of the stream's features (lesson 5's safe step)."""
    from ..learning import SpectralFiltering

    return SpectralFiltering(horizon=T, k=k, radius=np.inf, lr_schedule="constant")


def spectral_run(u, y, k: int = 8):
    """Algorithm 1 on ``(u, y)`` at the lesson's settings; returns its predictions."""
    learner = spectral_learner(u.shape[0], k)
    X, base = learner.design(u, y)
    learner = learner.clone(lr=1.0 / float(np.max(np.sum(X * X, axis=(1, 2)))))
    return learner.fit_predict(u, y, design=(X, base))


# ----------------------------------------------------------- exercise 1: the gain
def _toolkit_gain(case: dict[str, Any]) -> np.ndarray:
    """``stationary_kalman(LDS(A, 0, C), Q, R).L`` of a case."""
    from ..learning import stationary_kalman
    from ..systems import LDS

    A, C = np.asarray(case["A"], float), np.asarray(case["C"], float)
    system = LDS(A, np.zeros((A.shape[0], 1)), C, dt=1)
    return stationary_kalman(system, case["Q"], case["R"]).L


def _unstable_gain_case(seed: int) -> dict[str, Any]:
    """A random four-state, two-output case whose A has spectral radius 1.2."""
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((4, 4))
    A *= 1.2 / max(abs(np.linalg.eigvals(A)))
    G, H = rng.standard_normal((4, 4)), rng.standard_normal((2, 2))
    return {"A": A, "C": rng.standard_normal((2, 4)), "Q": 0.1 * G @ G.T,
            "R": 0.2 * H @ H.T + 0.1 * np.eye(2)}


def _gain_cases() -> list[dict[str, Any]]:
    rng = np.random.default_rng(91)
    system, *_ = stream_parts(256)
    A3 = np.array([[0.9, 0.3, 0.0], [0.0, 0.7, 0.2], [0.1, 0.0, -0.5]])
    G = rng.standard_normal((3, 3))
    # the two-output case first: there transposed or swapped arguments still have valid
    # shapes, so those slips reach their hint instead of a shape error
    return [{"A": np.array([[0.95, 0.1], [-0.1, 0.8]]), "C": np.array([[1.0, 0.5], [0.0, 1.0]]),
             "Q": np.array([[0.2, 0.05], [0.05, 0.1]]), "R": np.array([[0.5, 0.1], [0.1, 0.3]])},
            {"A": system.A, "C": system.C, "Q": 0.04 * np.eye(2), "R": np.array([[0.25]])},
            {"A": A3, "C": np.array([[1.0, 0.0, 1.0]]), "Q": 0.1 * G @ G.T,
             "R": np.array([[0.2]])},
            # an unstable (detectable) A, spectral radius 1.2: the stationary predictor still
            # exists, and a covariance recursion that lets P drift from symmetric blows up here
            _unstable_gain_case(97)]


def _gain_causes(**case: Any) -> list[tuple[str, Any]]:
    """The slips of exercise 1 on a case (keyword arguments: no exercise's signature)."""
    import scipy.linalg as sla

    from ..learning import stationary_kalman
    from ..systems import LDS

    A, C, Q, R = (np.asarray(case[k], float) for k in "ACQR")
    # the covariance by the toolkit's route (the package holds no line of a solution)
    P = stationary_kalman(LDS(A, np.zeros((A.shape[0], 1)), C, dt=1), Q, R).P
    S = C @ P @ C.T + R
    out = [("that is the filter gain P Cᵀ S⁻¹, which corrects the estimate of s_t; the "
            "predictor of s_{t+1} applies A to the correction as well",
            np.linalg.solve(S, C @ P).T),
           ("the innovation y_t − C ŝ_t has covariance S = C P Cᵀ + R, not R: invert S",
            A @ P @ C.T @ np.linalg.inv(R)),
           ("S⁻¹ is missing: the gain is A P Cᵀ (C P Cᵀ + R)⁻¹", A @ P @ C.T),
           ("that is the gain after one step of the covariance recursion from P = Q; the "
            "stationary gain comes from its fixed point (iterate to convergence, or solve "
            "the Riccati equation)", A @ Q @ C.T @ np.linalg.inv(C @ Q @ C.T + R))]
    if max(abs(np.linalg.eigvals(A))) > 1:  # an answer that is all NaN here blew up
        out.append(("the covariance recursion blew up on this unstable A: round-off makes P "
                    "slightly non-symmetric, and A amplifies that part at every step; keep P "
                    "symmetric ((P + Pᵀ)/2 after each step) or solve the Riccati equation",
                    np.full((A.shape[0], C.shape[0]), np.nan)))
    if C.shape[0] == C.shape[1]:  # shapes that let the slips through
        for label, args in (
                ("solve_discrete_are(a, b, q, r) solves the control (LQR) equation; the "
                 "filter's is its dual: pass a = Aᵀ and b = Cᵀ", (A, C, Q, R)),
                ("Q (the process noise, on the state) and R (the measurement noise) are "
                 "swapped", (A.T, C.T, R, Q))):
            try:
                P2 = sla.solve_discrete_are(*args)
                out.append((label, A @ P2 @ C.T @ np.linalg.inv(C @ P2 @ C.T + R)))
            except (ValueError, np.linalg.LinAlgError):
                pass
        out.append(("that is Lᵀ, the dual LQR gain S⁻¹ C P Aᵀ: the predictor's gain is its "
                    "transpose, shape (n, d_out)", np.linalg.solve(S, C @ P @ A.T)))
    return out


def check_predictor_gain(predictor_gain, *, verbose: bool = True,
                         cases: list[dict[str, Any]] | None = None,
                         time_limit: float | None = DEFAULT_TIME_LIMIT) -> CheckResult:
    """Check ``predictor_gain(A, C, Q, R)`` (exercise 1) on a two-output system (where
    transposed and swapped arguments have valid shapes), the lesson's system, a
    non-normal three-state one with a full Q and an unstable (detectable) one. Recognises the
    filter gain, R or nothing in place of S⁻¹, one step of the recursion, the LQR equation
    unconverted, Q and R swapped, the transpose and a recursion that blew up. ``cases``
    replaces the public cases (the autograder's hidden ones); ``time_limit``: seconds per
    call."""
    return check_function("stationary predictor gain", predictor_gain,
                          lambda **case: _toolkit_gain(case), given_cases(cases) or _gain_cases(),
                          causes=_gain_causes, rtol=1e-7, atol=1e-10, time_limit=time_limit,
                          verbose=verbose)


# -------------------------------------------------------- exercise 2: the predictions
def _toolkit_predictions(case: dict[str, Any]) -> np.ndarray:
    """``kalman_predict(LDS(A, B, C), L, u, y)`` of a case."""
    from ..learning import kalman_predict
    from ..systems import LDS

    system = LDS(np.asarray(case["A"], float), np.asarray(case["B"], float),
                 np.asarray(case["C"], float), dt=1)
    return kalman_predict(system, case["L"], case["u"], case["y"])


def _prediction_cases() -> list[dict[str, Any]]:
    from ..learning import stationary_kalman

    out = []
    for T, sw, sv in ((64, 0.3, 0.5), (300, 1.0, 0.1)):
        system, u, y = noisy_stream(T, sw, sv)
        L = stationary_kalman(system, sw**2, sv**2).L
        out.append({"A": system.A, "B": system.B, "C": system.C, "L": L, "u": u, "y": y})
    A3 = np.array([[0.9, 0.3, 0.0], [0.0, 0.7, 0.2], [0.1, 0.0, -0.5]])
    rng = np.random.default_rng(92)
    out.append({"A": A3, "B": rng.standard_normal((3, 2)), "C": rng.standard_normal((2, 3)),
                "L": 0.2 * rng.standard_normal((3, 2)), "u": rng.standard_normal((40, 2)),
                "y": rng.standard_normal((40, 2))})
    return out


def _prediction_causes(**case: Any) -> list[tuple[str, Any]]:
    """The slips of exercise 2 on a case."""
    A, B, C, L, u, y = (np.asarray(case[k], float) for k in ("A", "B", "C", "L", "u", "y"))

    def run(A, B, C, L, u, y):
        return _toolkit_predictions({"A": A, "B": B, "C": C, "L": L, "u": u, "y": y})

    u_prev = np.vstack([np.zeros((1, u.shape[1])), u[:-1]])
    ext = run(A, B, C, L, np.vstack([u, u[-1:]]), np.vstack([y, y[-1:]]))
    out = [("the correction L (y_t − ŷ_t) is missing: that is the model run open loop (the "
            "oracle of lesson 5), which ignores the measurements", run(A, B, C, 0 * L, u, y)),
           ("the input term B u_t is missing from the state update",
            run(A, 0 * B, C, L, u, y)),
           ("the state update takes u_t, the input of the step just seen, not u_{t-1}",
            run(A, B, C, L, u_prev, y)),
           ("ŷ_t must be made before y_t is seen: predict from ŝ_t, then correct; these are "
            "the predictions of the next step", ext[1:])]
    from ..systems import SimulationDivergedError

    try:  # A + L C is often unstable: the run grows, and may leave the simulator's bound
        with np.errstate(all="ignore"):
            out.append(("the correction is + L (y_t − ŷ_t): the sign is flipped",
                        run(A, B, C, -L, u, y)))
    except SimulationDivergedError:
        pass
    return out


def check_kalman_predictions(kalman_predictions, *, verbose: bool = True,
                             cases: list[dict[str, Any]] | None = None,
                             time_limit: float | None = DEFAULT_TIME_LIMIT) -> CheckResult:
    """Check ``kalman_predictions(A, B, C, L, u, y)`` (exercise 2) on the lesson's stream at
    two noise levels and on a two-input, two-output system with an arbitrary gain.
    Recognises the correction or the input left out, u_{t-1} in the update, predictions made
    after the correction, and the correction's sign."""
    return check_function("Kalman predictions", kalman_predictions,
                          lambda **case: _toolkit_predictions(case),
                          given_cases(cases) or _prediction_cases(), causes=_prediction_causes,
                          rtol=1e-7,
                          atol=1e-9, time_limit=time_limit, verbose=verbose)


# ----------------------------------------------------------- exercise 3: catching up
def average_regret(losses, best_losses) -> np.ndarray:
    """``R_t / t`` for t = 1 .. T: the running mean of ``losses - best_losses``."""
    losses = np.asarray(losses, float)  # inf allowed: a diverged learner's losses
    best_losses = np.asarray(best_losses, float)
    if losses.ndim != 1 or losses.shape != best_losses.shape:
        raise ValueError(f"best_losses must have the shape of losses {losses.shape} (one loss "
                         f"per step), got {best_losses.shape}")
    d = losses - best_losses
    return np.cumsum(d) / np.arange(1, d.size + 1)


def _stays_below(avg: np.ndarray, tol: float):
    """The step after the last t whose average exceeds ``tol`` (``math.inf`` when the last
    one does, 1 when none does): a vectorised count on the average regret."""
    above = np.flatnonzero(avg > tol)
    if above.size == 0:
        return 1
    return math.inf if above[-1] == avg.size - 1 else int(above[-1]) + 2


def _toolkit_catch_up(case: dict[str, Any]):
    return _stays_below(average_regret(case["losses"], case["best_losses"]), case["tol"])


def _catch_up_cases() -> list[dict[str, Any]]:
    T = 400
    t = np.arange(1, T + 1)
    best = np.full(T, 0.5)
    dip = best + 1.0 / np.sqrt(t) + 0.05 * (np.abs(t - 120) < 30)  # below, above, below
    system, u, y = noisy_stream(512, 0.2, 0.0)
    from ..learning import KalmanPredictor

    kalman = KalmanPredictor(system, 0.04, 1e-12)
    kalman.fit_predict(u, y)
    sf = np.sum((spectral_run(u, y) - y) ** 2, axis=1)
    return [{"losses": dip, "best_losses": best.copy(), "tol": 0.06},
            {"losses": best + 0.5, "best_losses": best.copy(), "tol": 0.1},   # never
            {"losses": best - 0.01, "best_losses": best.copy(), "tol": 0.0},  # from the start
            {"losses": sf, "best_losses": kalman.losses_.copy(), "tol": 0.05}]


def _catch_up_causes(**case: Any) -> list[tuple[str, Any]]:
    """The slips of exercise 3 on a case."""
    tol = case["tol"]
    d = np.asarray(case["losses"], float) - np.asarray(case["best_losses"], float)
    n = d.size
    t = np.arange(1, n + 1)
    avg = np.cumsum(d) / t
    expected = _stays_below(avg, tol)

    def stays(ok):  # first t from which ok holds to the end, inf if it fails at the end
        bad = np.flatnonzero(~ok)
        return 1 if bad.size == 0 else (math.inf if bad[-1] == n - 1 else int(bad[-1]) + 2)

    below = np.flatnonzero(avg <= tol)
    out = [("that is the first time the average regret dips below tol; it must stay below "
            "from then on", int(below[0]) + 1 if below.size else math.inf),
           ("compare the average regret R_t / t with tol, not the cumulative R_t",
            stays(np.cumsum(d) <= tol)),
           ("that compares single steps ℓ_t − ℓ*_t; the catch-up is about the running "
            "average R_t / t", stays(d <= tol)),
           ("regret is the learner's loss minus the best predictor's: the sign is flipped",
            stays(-avg <= tol))]
    if expected != math.inf:
        out.append(("steps count from 1: the t-th step's losses are losses[t - 1]",
                    expected - 1))
    else:
        out += [("when the average is still above tol at the end there is no catch-up time "
                 "in the stream: return math.inf", n), ("return math.inf, not -1", -1),
                ("return math.inf when it never catches up", n + 1)]
    return out


def check_catch_up_time(catch_up_time, *, verbose: bool = True,
                        cases: list[dict[str, Any]] | None = None,
                        time_limit: float | None = DEFAULT_TIME_LIMIT) -> CheckResult:
    """Check ``catch_up_time(losses, best_losses, tol)`` (exercise 3) on a regret that dips
    below the tolerance and rises again, one that never catches up, one below from the
    start, and Algorithm 1 against the Kalman predictor on the lesson's stream. Recognises
    the first dip, the cumulative regret, single steps, the sign, a 0-based count and a
    number other than ``math.inf`` for "never"."""
    return check_function("catch-up time", catch_up_time,
                          lambda **case: _toolkit_catch_up(case),
                          given_cases(cases) or _catch_up_cases(),
                          compare=check_equal, causes=_catch_up_causes,
                          time_limit=time_limit, verbose=verbose)


# ------------------------------------------------- the interpretation question
# Multiple choice, the right choice kept as a digest; each wrong choice has its own hint.
# The answer: with Q = 0 the state is a function of the inputs, the error of
# y_{t-1} + f(u_{<t}) is (C s_t - C s_{t-1} - f) + v_t - v_{t-1}, and v_{t-1} is independent
# of the inputs (tests/teaching/test_lesson09.py measures it).
INTERPRETATION = ChoiceQuestion(
    key="lesson09.interpretation",
    question=("A stream has measurement noise only (Q = 0, R = σ_v²); the Kalman predictor "
              "then loses σ_v² per step. What is the least expected loss per step of any "
              "predictor of the form y_{t-1} + f(u_{<t}), even one that knows the model?"),
    choices={
        "a": "σ_v²: knowing the model, it can match the Kalman predictor",
        "b": "2 σ_v²: y_{t-1} brings v_{t-1} along, and v_t comes on top",
        "c": "√2 σ_v²: the two noises partly cancel",
        "d": "0: with enough data any predictor learns the noise away",
    },
    digest="069c8ccb961f26db4268bfea394f0dae3985a4eefb1e33a41bf869e04b0d94fe",
    hints={
        "a": "knowing the model fixes f, not y_{t-1}: the prediction starts from "
             "y_{t-1} = C s_{t-1} + v_{t-1}, and no function of the inputs can cancel "
             "v_{t-1}; the Kalman predictor does not start from y_{t-1}",
        "c": "v_t and v_{t-1} are independent: the variance of v_t - v_{t-1} is the sum of "
             "theirs; √2 σ_v is its standard deviation, not the loss",
        "d": "v_t is fresh at every step: no predictor foresees it, so the loss is at least "
             "σ_v², and a predictor that starts from y_{t-1} carries v_{t-1} as well",
    },
    minutes=5)
# --------------------------------------------------------------------------- the slider
SLIDER_T = 2048
#: The lesson's tolerance for "caught up": average regret within this share of trace(S).
CATCH_UP_SHARE = 0.2


@lru_cache(maxsize=1)
def _slider_parts():
    """The stream's parts and the errors of Algorithm 1 and of y_{t-1} on each part (the
    predictions are linear in y: module docstring), computed once per process."""
    system, u, y0, y_w, v = stream_parts(SLIDER_T)
    parts = {"y0": y0, "w": y_w, "v": v}
    sf = {k: spectral_run(u, y) - y for k, y in parts.items()}
    last = {k: np.vstack([np.zeros((1, 1)), y[:-1]]) - y for k, y in parts.items()}
    return system, u, parts, sf, last


def _regret_axes(fig) -> dict[str, Any]:
    """The slider's axes and artists, made once (see :func:`regret_slider`)."""
    ax1, ax2 = fig.subplots(1, 2)
    fig.subplots_adjust(left=0.08, right=0.98, bottom=0.16, top=0.88, wspace=0.28)
    # drawn at 256 points per curve: a PNG of 2048-point paths alone costs ~60 ms
    log_t = np.unique(np.geomspace(1, SLIDER_T, 256).round().astype(int))
    lin_t = np.arange(SLIDER_T // 256, SLIDER_T + 1, SLIDER_T // 256)
    t, nan = log_t, np.full(log_t.size, np.nan)
    (sf,) = ax1.plot(t, nan, "C0", lw=1.2, label="Algorithm 1")
    (last,) = ax1.plot(t, nan, "C1--", lw=1, label="ŷ = y_{t-1}")
    ax1.axhline(CATCH_UP_SHARE, color="0.5", lw=0.8, ls=":")
    horizon = ax1.axvline(SLIDER_T, color="0.6", lw=0.8)
    ax1.set(xscale="log", yscale="log", xlim=(1, SLIDER_T), ylim=(1e-3, 1e4), xlabel="t",
            ylabel="(R_t / t) / trace(S)")
    ax1.legend(fontsize=7, loc="upper right")
    nan = np.full(lin_t.size, np.nan)
    (k_line,) = ax2.plot(lin_t, nan, "k", lw=1, label="Kalman")
    (sf_line,) = ax2.plot(lin_t, nan, "C0", lw=1, label="Algorithm 1")
    level = ax2.axhline(1.0, color="k", lw=0.8, ls=":")
    ax2.set(yscale="log", xlim=(0, SLIDER_T), ylim=(1e-7, 1e3), xlabel="t",
            ylabel="loss, moving average of 64")
    ax2.legend(fontsize=7, loc="upper right")
    no_minor(ax1, ax2)
    return {"ax1": ax1, "ax2": ax2, "sf": sf, "last": last, "horizon": horizon,
            "log_t": log_t, "lin_t": lin_t, "k_line": k_line, "sf_line": sf_line,
            "level": level,
            # blitted (sliders.py): everything a move changes; the axes' limits are fixed
            "moving": (sf, last, horizon, k_line, sf_line, level, ax1.title)}


def _moving_average(x: np.ndarray, w: int) -> np.ndarray:
    c = np.cumsum(np.insert(x, 0, 0.0))
    t = np.arange(1, x.size + 1)
    return (c[t] - c[np.maximum(t - w, 0)]) / np.minimum(t, w)


@slider("lesson09.regret", title="Kalman against spectral filtering: who catches up?",
        setup=_regret_axes,
        sigma_w=Param(1e-3, 3.0, 0.3, log=True, label="σ_w (process noise)"),
        sigma_v=Param(1e-3, 3.0, 1e-3, log=True, label="σ_v (measurement noise)"),
        horizon=Param(16, SLIDER_T, SLIDER_T, log=True, integer=True, label="horizon t"))
def regret_slider(state, sigma_w: float, sigma_v: float, horizon: float) -> dict[str, Any]:
    """Left: the average regret R_t / t of Algorithm 1 (and of ŷ = y_{t-1}) against the
    stationary Kalman predictor, in units of its expected loss trace(S); dotted: the
    catch-up tolerance. Right: the losses (moving averages) and trace(S)."""
    from ..learning import kalman_predict, stationary_kalman

    system, u, parts, sf, last = _slider_parts()
    h = int(horizon)
    y = parts["y0"] + sigma_w * parts["w"] + sigma_v * parts["v"]
    gain = stationary_kalman(system, sigma_w**2, sigma_v**2)
    k_loss = np.sum((kalman_predict(system, gain.L, u, y) - y) ** 2, axis=1)
    scale = gain.expected_loss
    t = np.arange(1, SLIDER_T + 1)
    log_i, lin_i = state["log_t"] - 1, state["lin_t"] - 1
    out: dict[str, Any] = {"trace(S)": scale}
    for key, err in (("sf", sf), ("last", last)):
        e = err["y0"] + sigma_w * err["w"] + sigma_v * err["v"]
        loss = np.sum(e * e, axis=1)
        avg = np.cumsum(loss - k_loss) / t
        state[key].set_ydata(np.clip(avg[log_i] / scale, 1e-4, 1e5))
        if key == "sf":
            state["sf_line"].set_ydata(np.maximum(_moving_average(loss, 64)[lin_i], 1e-8))
            out["R_t/t at t (Alg. 1)"] = float(avg[h - 1])
            caught = _stays_below(avg[:h], CATCH_UP_SHARE * scale)
            out["caught up from t"] = "not by t" if caught == math.inf else int(caught)
        else:
            out["R_t/t at t (y_{t-1})"] = float(avg[h - 1])
    state["k_line"].set_ydata(np.maximum(_moving_average(k_loss, 64)[lin_i], 1e-8))
    state["level"].set_ydata([scale] * 2)
    state["horizon"].set_xdata([h] * 2)
    state["ax1"].set_title(f"σ_w = {sigma_w:.3g}, σ_v = {sigma_v:.3g}: average regret "
                           f"(dotted: {CATCH_UP_SHARE:g} trace S)", fontsize=9)
    return out


def check_interpretation(interpretation, *, verbose: bool = True) -> CheckResult:
    """Check the interpretation question's answer (a letter, :data:`INTERPRETATION`)."""
    return INTERPRETATION.check(interpretation, verbose=verbose)


#: The graded checks of the lesson: the name of each answer in the notebook -> its check.
CHECKS: dict[str, Callable[..., CheckResult]] = {
    "predictor_gain": check_predictor_gain,
    "kalman_predictions": check_kalman_predictions,
    "catch_up_time": check_catch_up_time,
    "interpretation": check_interpretation,
}


def summary(*, verbose: bool = True, **answers: Any) -> dict[str, Any]:
    """Run every graded check of the lesson on ``answers`` (:func:`run_checks`)."""
    return run_checks(CHECKS, answers, verbose=verbose)
