r"""Lesson 5 — online gradient descent and regret: the checks and the slider.

Exercises (``docs/lessons/05_online_gradient_descent.py``), in the notation of
:mod:`lds_toolkit.learning.learners`: a linear predictor ``yhat_t = base_t + sum_i M_i x_{t,i}``
with blocks ``M_i`` of shape ``(d_out, d_in)``, features ``x_{t,i}`` of shape ``(d_in,)`` and
the loss ``l_t(M) = ||yhat_t - y_t||^2``.

1. :func:`check_projected_step` — one step of projected online gradient descent::

       M_i <- Pi_r(M_i - eta * 2 e x_i^T),   e = yhat_t - y_t,   Pi_r(M) = M min(1, r / ||M||_F)

   (each block projected on its own Frobenius ball), against the toolkit's OGD kernel
   (``lds_toolkit.learning._kernels.ogd_loop``, the loop every learner runs).
2. :func:`check_best_in_hindsight` — the best fixed ``M`` for a whole stream, chosen knowing
   it (unconstrained least squares), against :class:`lds_toolkit.learning.BestInHindsight`.
3. :func:`check_safe_step` — the largest constant step that never increases the error on the
   sample it learns from, ``eta_safe = 1 / max_t sum_i ||x_{t,i}||^2``.

The slider ``lesson05.step_size`` runs Algorithm 1 on one Region A stream at a constant step
``eta = factor * eta_safe`` with and without the projection and shows the online loss, the
regret against the best fixed predictor and where a run diverges.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from typing import Any

import numpy as np

from ._figures import no_minor
from .calling import DEFAULT_TIME_LIMIT, by_case, given_cases
from .check import CheckResult, check_function, check_scalar, run_checks
from .questions import ChoiceQuestion
from .sliders import Param, slider

__all__ = ["CHECKS", "INTERPRETATION", "check_interpretation",
           "summary", "check_projected_step", "check_best_in_hindsight",
           "check_safe_step",
           "eta_safe", "lesson_stream"]


def lesson_stream(T: int = 1024, n: int = 16, seed: int = 5, d_in: int = 1, d_out: int = 1):
    """The lesson's data: a symmetric LDS with eigenvalues in Region A of ``T`` (q = 7/8),
    white-noise input, the stream in the length-generalization convention
    (``simulate(..., output="lengen")``) and the radius ``r = ||B|| ||C||``.

    Returns ``(system, u, y, r)`` with ``u`` of shape ``(T, d_in)`` and ``y`` ``(T, d_out)``.
    """
    from ..systems import eigenvalue_regions, random_lds, simulate

    rng = np.random.default_rng(seed)
    system = random_lds(n, eigenvalue_regions(T, 7 / 8).region_a, d_in=d_in, d_out=d_out,
                        rng=rng)
    u = rng.standard_normal((T, d_in))
    y = simulate(system, u, output="lengen", return_states=False).y
    r = float(np.linalg.norm(system.B, 2) * np.linalg.norm(system.C, 2))
    return system, u, y, r


# ------------------------------------------------------------------ exercise 1: the step
def _toolkit_projected_step(case: dict[str, Any]) -> np.ndarray:
    """The toolkit's answer to exercise 1: the OGD kernel of the learners run for one step.

    ``ogd_loop`` predicts ``base + sum_i M_i x_i`` and steps on its error against the target;
    with ``base = 0`` and the target ``sum_i M_i x_i - err`` its error is ``err``.
    """
    M, x, err, eta, r = (case[k] for k in ('M', 'x', 'err', 'eta', 'r'))
    from ..learning._kernels import ogd_loop

    M = np.array(M, dtype=np.float64)  # a copy: the kernel updates in place
    x = np.asarray(x, dtype=np.float64)
    err = np.asarray(err, dtype=np.float64)
    target = np.einsum("ioa,ia->o", M, x) - err
    pred, loss = np.empty((1, err.size)), np.empty(1)
    ogd_loop(x[None], np.zeros((1, err.size)), target[None], np.array([float(eta)]),
             float(r), M, pred, loss)
    return M


def _step_cases() -> list[dict[str, Any]]:
    rng = np.random.default_rng(51)
    M1 = rng.standard_normal((4, 1, 1))
    M3 = rng.standard_normal((3, 2, 3))
    return [
        {"M": M1, "x": rng.standard_normal((4, 1)), "err": np.array([0.7]), "eta": 0.1,
         "r": np.inf},
        {"M": M3, "x": rng.standard_normal((3, 3)), "err": np.array([0.5, -1.5]),
         "eta": 0.05, "r": np.inf},
        # a radius that the step crosses for some blocks but not for others
        {"M": M3, "x": rng.standard_normal((3, 3)), "err": np.array([2.0, 1.0]), "eta": 0.3,
         "r": 0.6 * float(np.median(np.linalg.norm(M3, axis=(1, 2))))},
    ]


def _always_rescaled(raw: np.ndarray, r: float) -> np.ndarray:
    """Every block scaled onto the sphere of radius ``r`` (a common slip; ``r = inf`` gives
    the infinities and NaNs the slip gives)."""
    with np.errstate(invalid="ignore", over="ignore"):
        return raw * (r / np.linalg.norm(raw, axis=(1, 2)))[:, None, None]


def _step_causes(M, x, err, eta, r):
    M = np.asarray(M, dtype=float)
    grad = 2.0 * np.asarray(err)[None, :, None] * np.asarray(x)[:, None, :]
    raw = M - eta * grad

    def per_block(A):
        nrm = np.linalg.norm(A, axis=(1, 2))
        return A * np.minimum(1.0, r / np.maximum(nrm, 1e-300))[:, None, None]

    whole = raw * min(1.0, r / max(float(np.linalg.norm(raw)), 1e-300))
    return [
        ("the projection is missing: after the step, scale each block M_i back to "
         "||M_i||_F <= r", raw),
        ("the whole M was projected on one ball; K_r bounds each block: ||M_i||_F <= r "
         "for every i", whole),
        ("the gradient of ||e||^2 is 2 e x^T: the factor 2 is missing",
         per_block(M - eta * grad / 2)),
        ("the step goes uphill: subtract eta times the gradient", per_block(M + eta * grad)),
        ("projected before the step instead of after it", per_block(M) - eta * grad),
        ("clipping the entries to [-r, r] is the box, not the ball: scale the whole block by "
         "min(1, r / ||M_i||_F)", np.clip(raw, -r, r)),
        ("only blocks outside the ball move: the factor is min(1, r / ||M_i||_F), not "
         "r / ||M_i||_F", _always_rescaled(raw, r)),
    ]


def check_projected_step(projected_step, *, verbose: bool = True,
                         cases: list[dict[str, Any]] | None = None,
                         time_limit: float | None = DEFAULT_TIME_LIMIT) -> CheckResult:
    """Check ``projected_step(M, x, err, eta, r)`` (exercise 1) on three cases: scalar
    blocks, 2 x 3 blocks, and a radius that only some blocks exceed after the step."""
    return check_function("projected OGD step", projected_step, by_case(_toolkit_projected_step),
                          given_cases(cases) or _step_cases(), causes=_step_causes, rtol=1e-9,
                          atol=1e-12,
                          time_limit=time_limit, verbose=verbose)


# --------------------------------------------------------- exercise 2: best in hindsight
def _toolkit_best_in_hindsight(case: dict[str, Any]) -> np.ndarray:
    """The toolkit's answer to exercise 2: ``BestInHindsight(..., radius=inf).coef_`` on the
    features ``X`` (n, m, d_in), autoregressive part ``base`` (n, d_out) and targets ``y``."""
    X, base, y = (case[k] for k in ('X', 'base', 'y'))
    from ..learning import BestInHindsight, SpectralFiltering

    X = np.ascontiguousarray(X, dtype=np.float64)
    base = np.ascontiguousarray(base, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    n, m, d_in = X.shape
    template = SpectralFiltering(horizon=n, k=m)  # only the shape of the class matters here
    best = BestInHindsight(template, radius=np.inf)
    best.fit_predict(np.zeros((n, d_in)), y, design=(X, base))
    return best.coef_.copy()


@lru_cache(maxsize=1)
def _hindsight_cases() -> tuple[dict[str, Any], ...]:
    from ..learning import SpectralFiltering

    out = []
    for T, k, d_in, d_out, seed in ((256, 6, 1, 1, 52), (192, 4, 2, 2, 53)):
        _, u, y, _ = lesson_stream(T, n=8, seed=seed, d_in=d_in, d_out=d_out)
        X, base = SpectralFiltering(horizon=T, k=k).design(u, y)
        out.append({"X": X, "base": base, "y": y})
    return tuple(out)


def _hindsight_causes(X, base, y):
    n, m, d_in = X.shape
    D = X.reshape(n, m * d_in)
    W = np.linalg.lstsq(D, y, rcond=None)[0]  # base forgotten
    M = _toolkit_best_in_hindsight({"X": X, "base": base, "y": y})
    return [("the autoregressive part is missing: fit y_t - base_t, not y_t",
             W.reshape(m, d_in, -1).transpose(0, 2, 1)),
            ("each block is transposed: M_i has shape (d_out, d_in); reshape the least-squares "
             "solution W (m d_in, d_out) to (m, d_in, d_out), then swap the last two axes",
             M.transpose(0, 2, 1)),
            ("the target is y_t - b_t (what the AR part leaves), not y_t + b_t",
             np.linalg.lstsq(D, y + base, rcond=None)[0].reshape(m, d_in, -1)
             .transpose(0, 2, 1)),
            ("the rows are misaligned: the features of round t predict y_t, not y_{t+1}",
             np.linalg.lstsq(D[:-1], (y - base)[1:], rcond=None)[0].reshape(m, d_in, -1)
             .transpose(0, 2, 1)),
            ("that is W itself, shape (m d_in, d_out): rearrange it into m blocks M_i of shape "
             "(d_out, d_in)", np.linalg.lstsq(D, y - base, rcond=None)[0]),
            ("a ridge term (D^T D + I): the best fixed M in hindsight is the plain least-"
             "squares fit, r = inf, no regularisation",
             np.linalg.solve(D.T @ D + np.eye(D.shape[1]), D.T @ (y - base))
             .reshape(m, d_in, -1).transpose(0, 2, 1))]


def check_best_in_hindsight(best_in_hindsight, *, verbose: bool = True,
                            cases: list[dict[str, Any]] | None = None,
                            time_limit: float | None = DEFAULT_TIME_LIMIT) -> CheckResult:
    """Check ``best_in_hindsight(X, base, y)`` (exercise 2) on two streams (scalar, and two
    inputs and outputs); the solution is unique, so ``M`` itself is compared."""
    return check_function("best fixed M in hindsight", best_in_hindsight,
                          by_case(_toolkit_best_in_hindsight),
                          given_cases(cases) or _hindsight_cases(),
                          causes=_hindsight_causes, rtol=1e-6, atol=1e-8,
                          time_limit=time_limit, verbose=verbose)


# ---------------------------------------------------------------- exercise 3: safe step
def eta_safe(features) -> float:
    """The safe step of exercise 3 for the features of a design, ``1 / max_t sum_{i,a}
    features[t, i, a]^2``: for the lesson's later cells and the sliders of lessons 5-7 (a
    different signature from the exercise's, so it cannot be handed to the check)."""
    from .._validation import as_float_array

    X = as_float_array("features", features, ndim=3)  # (steps, m, d_in), as design() gives
    peak = float(np.max(np.sum(X * X, axis=(1, 2)), initial=0.0))
    if peak <= 0.0:
        raise ValueError(f"features must not be zero at every step (shape {X.shape}): "
                         "1 / max_t ||x_t||^2 would be 1/0")
    return 1.0 / peak


def check_safe_step(safe_step, *, verbose: bool = True,
                    cases: list[dict[str, Any]] | None = None,
                    time_limit: float | None = DEFAULT_TIME_LIMIT) -> CheckResult:
    """Check ``safe_step(X)`` (exercise 3) on the features of two streams."""
    def causes(X):
        s = np.sum(np.asarray(X) ** 2, axis=(1, 2))
        return [("the mean of ||x_t||^2 was used; the bound must hold at every step: take "
                 "the max", 1.0 / s.mean()),
                ("the factor 2 of the gradient is missing: e' = (1 - 2 eta ||x||^2) e",
                 2.0 / s.max()),
                ("that is the step that zeroes the error, 1 / (2 ||x||^2); the error stops "
                 "shrinking only at twice it", 0.5 / s.max()),
                ("||x_t|| must be squared", 1.0 / np.sqrt(s).max()),
                ("the smallest s_t gives the step for the easiest round; the largest s_t "
                 "limits the step at every round", 1.0 / s.min() if s.min() > 0 else np.inf),
                ("s_t is one round's sum: take the max over the rounds, not the sum over "
                 "them", 1.0 / s.sum()),
                ("s_t sums the squares of all features of round t, not the largest single "
                 "entry", 1.0 / float(np.max(np.asarray(X) ** 2)))]

    cases = given_cases(cases)  # [] or a non-list: refused, naming cases
    cases = cases or [{"X": c["X"]} for c in _hindsight_cases()]
    return check_function("largest safe step size", safe_step,
                          by_case(lambda case: eta_safe(case["X"])), cases,
                          compare=check_scalar, causes=causes, rtol=1e-9,
                          time_limit=time_limit, verbose=verbose)


# --------------------------------------------------------------------------- the slider
SLIDER_T = 1024
SLIDER_K = 12


@lru_cache(maxsize=1)
def _slider_data():
    """The slider's stream, its design, the safe step and the best fixed predictor's losses
    (computed once per process)."""
    from ..learning import BestInHindsight, SpectralFiltering

    _, u, y, r = lesson_stream(SLIDER_T)
    learner = SpectralFiltering(horizon=SLIDER_T, k=SLIDER_K, radius=r,
                                lr_schedule="constant")
    design = learner.design(u, y)
    best = BestInHindsight(learner, radius=np.inf)
    best.fit_predict(u, y, design=design)
    return u, y, r, learner, design, eta_safe(design[0]), best.losses_.copy()


def run_constant_step(learner, u, y, design, lr: float, radius: float):
    """Losses of ``learner`` at the constant step ``lr`` and ``radius``, and the step at
    which it diverged (None if it did not): the losses up to that step, ``inf`` after."""
    from ..learning import LearnerDivergedError

    run = learner.clone(lr=lr, radius=radius, lr_schedule="constant")
    try:
        run.fit_predict(u, y, design=design)
    except LearnerDivergedError as exc:
        losses = np.full(u.shape[0], np.inf)
        if exc.step > 0:  # the steps before it, run again up to the divergence
            X, base = design
            run.fit_predict(u[:exc.step], y[:exc.step], design=(X[:exc.step], base[:exc.step]))
            losses[:exc.step] = run.losses_
        return losses, exc.step
    return run.losses_, None


def _moving_average(x: np.ndarray, w: int) -> np.ndarray:
    c = np.cumsum(np.insert(x, 0, 0.0))
    t = np.arange(1, x.size + 1)
    return (c[t] - c[np.maximum(t - w, 0)]) / np.minimum(t, w)


#: A run whose loss exceeds this multiple of mean(y^2) is marked as blown up in the slider
#: (predicting 0 costs mean(y^2); the learner raises only when a number overflows).
BLOWUP = 1e4


def _step_size_axes(fig) -> dict[str, Any]:
    """The slider's axes and artists, made once (see :func:`step_size_slider`)."""
    u, y, r0, learner, design, eta_safe, best_losses = _slider_data()
    ax1, ax2 = fig.subplots(1, 2)
    fig.subplots_adjust(left=0.09, right=0.98, bottom=0.16, top=0.88, wspace=0.28)
    t = np.arange(1, SLIDER_T + 1)
    state: dict[str, Any] = {"ax1": ax1, "t": t}
    best_cum = np.cumsum(best_losses)
    for key, color, label in (("projected", "C0", "projected on K_r"),
                              ("free", "C1", "no projection (r = ∞)")):
        (state[f"loss {key}"],) = ax1.plot(t, np.full(t.size, np.nan), color=color, lw=1,
                                           label=label)
        state[f"blowup {key}"] = ax1.axvline(1, color=color, ls="--", lw=1, visible=False)
        (state[f"cum {key}"],) = ax2.plot(t, np.full(t.size, np.nan), color=color, lw=1.2)
    ax2.plot(t, best_cum, "k", lw=1, label="best fixed M")
    ax2.plot(t, best_cum[-1] + np.sqrt(t), "k:", lw=1, label="+ √t")
    ax1.set(yscale="log", xlabel="t", ylabel="loss / mean y²", ylim=(1e-8, 2 * BLOWUP),
            xlim=(0, SLIDER_T))
    ax1.legend(fontsize=7, loc="lower left")
    ax2.set(xscale="log", yscale="log", xlabel="t", ylabel="cumulative loss",
            ylim=(max(best_cum[0], 1e-12), 1e9), xlim=(1, SLIDER_T))
    ax2.set_title("cumulative loss; regret = gap to the best fixed M", fontsize=9)
    ax2.legend(fontsize=7, loc="lower right")
    no_minor(ax1, ax2)
    state["moving"] = [state[f"{what} {key}"] for key in ("projected", "free")
                       for what in ("loss", "blowup", "cum")] + [ax1.title]
    return state


#: A run whose loss exceeds this multiple of mean(y^2) is marked as blown up in the slider
#: (predicting 0 costs mean(y^2); the learner raises only when a number overflows).
BLOWUP = 1e4


@slider("lesson05.step_size", title="Online gradient descent: step size, projection, regret",
        setup=_step_size_axes,
        factor=Param(0.1, 20.0, 2.0, log=True, label="η / η_safe"),
        radius=Param(0.1, 10.0, 1.0, log=True, label="r / (‖B‖ ‖C‖)"))
def step_size_slider(state, factor: float, radius: float) -> dict[str, Any]:
    """Algorithm 1 (T = 1024, k = 12, full context) at the constant step ``factor * eta_safe``:
    left, the online loss (moving average over 32 steps) with the projection on K_r and
    without it; right, the cumulative losses against the best fixed predictor's (the regret
    is the gap)."""
    u, y, r0, learner, design, eta_safe, best_losses = _slider_data()
    lr = factor * eta_safe
    power = float(np.mean(y**2))
    numbers: dict[str, Any] = {"η": lr}
    for key, r in (("projected", radius * r0), ("free", np.inf)):
        losses, div = run_constant_step(learner, u, y, design, lr, r)
        blown = np.flatnonzero(~(losses <= BLOWUP * power))
        n_ok = SLIDER_T if blown.size == 0 else int(blown[0])
        avg = np.full(SLIDER_T, np.nan)
        cum = np.full(SLIDER_T, np.nan)
        avg[:n_ok] = _moving_average(losses[:n_ok], 32) / power
        cum[:n_ok] = np.cumsum(losses[:n_ok])
        state[f"loss {key}"].set_ydata(avg)
        state[f"cum {key}"].set_ydata(cum)
        state[f"blowup {key}"].set_visible(n_ok < SLIDER_T)
        state[f"blowup {key}"].set_xdata([n_ok + 1] * 2)
        if n_ok < SLIDER_T:
            numbers[f"regret ({key})"] = f"blew up at t={n_ok}" + (
                f", overflow at t={div}" if div is not None else "")
        else:
            numbers[f"regret ({key})"] = float(np.sum(losses) - np.sum(best_losses))
    state["ax1"].set_title(f"η = {lr:.3g} = {factor:.3g} η_safe (dashed: blew up)",
                           fontsize=9)
    return numbers


# The interpretation question: multiple choice, the right choice kept as a digest (the
# package holds no answer in the clear); each wrong choice has its own hint.
INTERPRETATION = ChoiceQuestion(
    key="lesson05.interpretation",
    question=("At η = 2 η_safe with r = ‖B‖‖C‖ the regret is about 4.4; shrink r to 0.1 ‖B‖‖C‖"
              " and it jumps to about 656. Why?"),
    choices={
        "a": "the smaller radius makes the step diverge",
        "b": "projection adds noise to every step",
        "c": "the comparator (the best fixed M in hindsight, unconstrained) lies outside the "
             "small ball K_r: the projected learner can never reach it, so its regret grows "
             "linearly in T",
        "d": "regret is always larger with a projection, whatever the radius",
    },
    digest="3a65b60d11275e0af4f0a3fa3b282276c2ae7158535ce70eb4a668ebe7ac0026",
    hints={
        "a": "nothing blew up: a projection keeps ||M_i|| ≤ r, it bounds the iterates",
        "b": "the projection is deterministic: it rescales blocks that leave the ball",
        "d": "at r = ‖B‖‖C‖ (or 10 ‖B‖‖C‖) the projected and free runs have the same regret: "
             "the projection then never acts",
    },
    minutes=5)


def check_interpretation(interpretation, *, verbose: bool = True) -> CheckResult:
    """Check the interpretation question's answer (a letter, :data:`INTERPRETATION`)."""
    return INTERPRETATION.check(interpretation, verbose=verbose)


#: The graded checks of the lesson: the name of each answer in the notebook -> its check.
CHECKS: dict[str, Callable[..., CheckResult]]
CHECKS = {"projected_step": check_projected_step, "best_in_hindsight": check_best_in_hindsight,
          "safe_step": check_safe_step,
          "interpretation": check_interpretation}


def summary(*, verbose: bool = True, **answers: Any) -> dict[str, Any]:
    """Run every graded check of the lesson on ``answers`` (:func:`run_checks`)."""
    return run_checks(CHECKS, answers, verbose=verbose)
