r"""Lesson 7 — Region B and Algorithm 2: the checks and the slider.

Exercises (``docs/lessons/07_region_b_algorithm2.py``), for data in the convention of the
length-generalization paper, ``y_t = sum_{l >= 0} C A^l B u_{t-1-l}``
(``simulate(..., output="lengen")``, D = 0):

1. :func:`check_second_difference` — the coefficients ``g_j`` of ``u_{t-1-j}`` in
   ``y_t - 2 y_{t-1} + y_{t-2}``: ``g_0 = C B``, ``g_1 = C (A - 2I) B``,
   ``g_j = C A^{j-2} (A - I)^2 B`` for ``j >= 2``; against the second difference of the
   simulated impulse response (an independent route).
2. :func:`check_tail_energy` — for one eigenvalue ``a`` (``A = a``, ``B = C = 1``), the energy
   beyond a context ``L`` of what each algorithm must learn: the first difference
   (Algorithm 1, order 1: ``sum_{j >= L} ((1 - a) a^{j-1})^2``) or the second (Algorithm 2,
   order 2: ``sum_{j >= L} ((1 - a)^2 a^{j-2})^2``), in closed form.
3. :func:`check_worst_eigenvalue` — the eigenvalue that maximises Algorithm 1's tail
   energy for a context ``L``, from the derivative: ``(L - 1) a^2 + a - (L - 1) = 0``;
   against a bounded numerical maximisation.

The slider ``lesson07.eigenvalue`` moves the eigenvalue of a one-mode system and shows both
tails and the measured loss ratio (context sqrt(T) over full context) of Algorithms 1 and 2.
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
           "summary", "check_second_difference", "check_tail_energy",
           "check_worst_eigenvalue", "one_mode_losses", "tail_energies", "tail_energy_by_sum",
           "worst_eigenvalue_by_search"]


# --------------------------------------------------- exercise 1: the second difference
def _toolkit_second_difference(case: dict[str, Any]) -> np.ndarray:
    """The coefficients ``g_0 .. g_{n-1}`` (shape ``(n, d_out, d_in)``) of ``u_{t-1-j}`` in
    ``y_t - 2 y_{t-1} + y_{t-2}``, read off the simulated response to a unit impulse at
    ``t = 0`` of each input (``simulate(..., output="lengen")``): ``y_{j+1} - 2 y_j + y_{j-1}``
    with ``y_{-1} = 0``."""
    A, B, C, n = (case[k] for k in ('A', 'B', 'C', 'n'))
    from ..systems import LDS, simulate

    A, B, C = (np.atleast_2d(np.asarray(M, dtype=np.float64)) for M in (A, B, C))
    system = LDS(A, B, C, np.zeros((C.shape[0], B.shape[1])), dt=1.0)
    out = np.empty((n, C.shape[0], B.shape[1]))
    for a in range(B.shape[1]):
        u = np.zeros((n + 1, B.shape[1]))
        u[0, a] = 1.0
        y = simulate(system, u, output="lengen", method="dense",  # the recursion itself
                     return_states=False).y  # y_0 .. y_n
        padded = np.vstack([np.zeros((1, y.shape[1])), y])  # y_{-1} .. y_n
        out[:, :, a] = padded[2:] - 2.0 * padded[1:-1] + padded[:-2]
    return out


def _difference_cases() -> list[dict[str, Any]]:
    rng = np.random.default_rng(71)
    Q = np.linalg.qr(rng.standard_normal((4, 4)))[0]
    A = Q @ np.diag([0.3, 0.9, 0.99, 0.999]) @ Q.T
    return [{"A": np.array([[0.9]]), "B": np.array([[1.0]]), "C": np.array([[1.0]]), "n": 8},
            {"A": A, "B": rng.standard_normal((4, 2)), "C": rng.standard_normal((3, 4)),
             "n": 12}]


def _difference_causes(A, B, C, n):
    A, B, C = (np.atleast_2d(np.asarray(M, dtype=float)) for M in (A, B, C))
    eye = np.eye(A.shape[0])
    powers = [np.linalg.matrix_power(A, j) for j in range(n)]
    first = np.array([C @ B] + [C @ powers[j - 1] @ (A - eye) @ B for j in range(1, n)])
    all_squared = np.array([C @ powers[j] @ (A - eye) @ (A - eye) @ B for j in range(n)])
    sign = np.array([C @ B, C @ (A + 2 * eye) @ B]
                    + [C @ powers[j - 2] @ (A - eye) @ (A - eye) @ B for j in range(2, n)])
    rest = [C @ powers[j - 2] @ (A - eye) @ (A - eye) @ B for j in range(2, n)]
    late_power = np.array([C @ B, C @ (A - 2 * eye) @ B]
                          + [C @ powers[j - 1] @ (A - eye) @ (A - eye) @ B
                             for j in range(2, n)])
    elementwise = np.array([C @ B, C @ (A - 2 * eye) @ B]
                           + [C @ powers[j - 2] @ ((A - eye) ** 2) @ B for j in range(2, n)])
    first_g1 = np.array([C @ B, C @ (A - eye) @ B] + rest)
    return [("those are the first differences y_t - y_{t-1} (Algorithm 1's target): "
             "difference once more", first),
            ("g_0 and g_1 are special: the pattern C A^(j-2) (A - I)^2 B starts at j = 2 "
             "(u_{t-1} and u_{t-2} reach fewer of the three terms)", all_squared),
            ("g_1 = C (A - 2I) B: the -2 y_{t-1} term contributes -2 C B", sign),
            ("the power is j - 2 at lag j: g_2 = C (A - I)^2 B has no A in front", late_power),
            ("(A - I)^2 is the matrix product (A - I) @ (A - I), not ** 2 entry by entry",
             elementwise),
            ("g_1 = C (A - 2I) B: u_{t-2} reaches y_t (C A B) and -2 y_{t-1} (-2 C B), not "
             "y_{t-2}", first_g1)]


def check_second_difference(second_difference, *, verbose: bool = True,
                            cases: list[dict[str, Any]] | None = None,
                            time_limit: float | None = DEFAULT_TIME_LIMIT) -> CheckResult:
    """Check ``second_difference(A, B, C, n)`` (exercise 1) on a scalar system and on a
    symmetric 4-state system with 2 inputs and 3 outputs."""
    return check_function("second-difference coefficients", second_difference,
                          by_case(_toolkit_second_difference),
                          given_cases(cases) or _difference_cases(),
                          causes=_difference_causes, rtol=1e-9, atol=1e-12,
                          time_limit=time_limit, verbose=verbose)


# -------------------------------------------------------------- exercise 2: the tails
def tail_energies(alphas, context: int, order: int) -> np.ndarray:
    """Exercise 2's tail energies for several ``alphas`` at once, in closed form (geometric
    series), for 0 <= alpha < 1 — for the figures after the exercise and the slider (a
    different signature from the exercise's, so it cannot be handed to the check)::

        order 1:  sum_{j >= L} ((1 - a) a^{j-1})^2 = (1 - a)^2 a^{2(L-1)} / (1 - a^2)
        order 2:  sum_{j >= L} ((1 - a)^2 a^{j-2})^2 = (1 - a)^4 a^{2(L-2)} / (1 - a^2)

    with ``L = context`` (``L >= 1`` for order 1, ``L >= 2`` for order 2).
    :func:`tail_energy_by_sum` is the same number by summing the simulated coefficients.
    """
    from .._validation import as_float_array, check_int

    order = check_int("order", order, 1, 2)
    context = check_int("context", context, order)
    a = np.atleast_1d(as_float_array("alphas", alphas))
    if a.size and not ((a >= 0) & (a < 1)).all():
        bad = a[~((a >= 0) & (a < 1))][0]
        raise ValueError(f"alphas must lie in [0, 1) (the closed form sums a geometric series), "
                         f"got alpha={bad:g}")
    p = 2 * order
    return (1 - a) ** p * a ** (2 * (int(context) - order)) / (1 - a * a)


def tail_energy_by_sum(alpha: float, context: int, order: int,
                       terms: int = 200_000) -> float:
    """The tail energy of exercise 2 by direct summation of the toolkit's coefficients
    (first or second difference of the simulated impulse response of ``(alpha, 1, 1)``)
    over ``terms`` lags beyond ``context`` (enough when ``alpha**(2 terms)`` is negligible).
    Its arguments are not the exercise's names: it is an independent route for the cells
    after the exercise, not an answer to hand to the check."""
    from .._validation import check_int, check_real

    alpha = check_real("alpha", alpha, low=0.0, high=1.0, high_inclusive=False)
    order = check_int("order", order, 1, 2)
    context = check_int("context", context, order)
    terms = check_int("terms", terms, context + 1)
    if order == 2:
        g = _toolkit_second_difference({"A": [[alpha]], "B": [[1.0]], "C": [[1.0]],
                                        "n": terms})[:, 0, 0]
    else:
        h = _toolkit_second_difference({"A": [[alpha]], "B": [[1.0]], "C": [[1.0]],
                                        "n": terms})[:, 0, 0]
        g = np.cumsum(h)  # summing the second difference once gives the first difference
    return float(np.sum(g[int(context):] ** 2))


def check_tail_energy(tail_energy, *, verbose: bool = True,
                      cases: list[dict[str, Any]] | None = None,
                      time_limit: float | None = DEFAULT_TIME_LIMIT) -> CheckResult:
    """Check ``tail_energy(alpha, L, order)`` (exercise 2) at alpha = 0.5, 0.9, 0.99,
    contexts 4 and 32, orders 1 and 2."""
    cases = given_cases(cases)  # [] or a non-list: refused, naming cases
    cases = cases or [{"alpha": a, "L": L, "order": o} for a in (0.5, 0.9, 0.99)
                      for L in (4, 32) for o in (1, 2)]

    def causes(alpha, L, order):
        a = alpha
        p = 2 * order
        return [("the sum starts one lag late or early: the context covers j = 0 .. L-1, the "
                 "tail is j >= L", (1 - a) ** p * a ** (2 * (L - order + 1)) / (1 - a * a)),
                ("the sum starts one lag early: the tail is j >= L",
                 (1 - a) ** p * a ** (2 * (L - order - 1)) / (1 - a * a)),
                ("the coefficients were not squared: energy is the sum of g_j^2",
                 (1 - a) ** order * a ** (L - order) / (1 - a)),
                ("the geometric series of the squares has ratio a^2: divide by 1 - a^2",
                 (1 - a) ** p * a ** (2 * (L - order)) / (1 - a)),
                ("the coefficient's factor (1 - a)^order is squared too: (1 - a)^(2 order)",
                 (1 - a) ** order * a ** (2 * (L - order)) / (1 - a * a)),
                ("that is the whole energy: the tail starts at lag j = L",
                 (1 - a) ** p / (1 - a * a)),
                ("that is the energy inside the context (lags j < L); the tail is j >= L",
                 (1 - a) ** p * (1 - a ** (2 * (L - order))) / (1 - a * a))]

    return check_function("tail energy beyond L", tail_energy,
                          by_case(lambda c: float(tail_energies(c["alpha"], c["L"],
                                                                c["order"])[0])),
                          cases, compare=check_scalar, causes=causes,
                          rtol=1e-9, atol=1e-300, time_limit=time_limit, verbose=verbose)


# ------------------------------------------------------- exercise 3: the worst eigenvalue
def worst_eigenvalue_by_search(context: int) -> float:
    """Exercise 3's worst eigenvalue by bounded numerical maximisation of the order-1 tail
    energy (``scipy.optimize.minimize_scalar`` on ``-log`` of it, in ``1 - alpha``): the
    check's independent route, and the cells after the exercise."""
    from scipy.optimize import minimize_scalar

    from .._validation import check_int

    L = check_int("context", context, 2)  # L = 1: the whole response is the tail, no maximum

    def neg_log_tail(log_delta):
        d = np.exp(log_delta)
        return -(np.log(d) + 2 * (L - 1) * np.log1p(-d) - np.log(2 - d))

    res = minimize_scalar(neg_log_tail, bounds=(np.log(1e-9), np.log(0.999)),
                          method="bounded", options={"xatol": 1e-12})
    return float(1 - np.exp(res.x))


def check_worst_eigenvalue(worst_eigenvalue, *, verbose: bool = True,
                           cases: list[dict[str, Any]] | None = None,
                           time_limit: float | None = DEFAULT_TIME_LIMIT) -> CheckResult:
    """Check ``worst_eigenvalue(L)`` (exercise 3) for L = 8, 32, 1024 and 2."""
    def causes(L):
        m = L - 1
        root = np.sqrt(1 + 4 * m * m)
        return [("that is the first-order estimate 1 - 1/(2(L-1)); solve the quadratic "
                 "exactly", 1 - 1 / (2 * (L - 1))),
                ("the other root: the one in (0, 1) takes + sqrt(...)", (-1 - root) / (2 * m)),
                ("the exponent of alpha in the tail is 2L - 2: the quadratic has L - 1, not L",
                 (-1 + np.sqrt(1 + 4 * L * L)) / (2 * L)),
                ("the factor 1/(1 + alpha) of the tail was dropped; it moves the maximum",
                 (2 * L - 2) / (2 * L - 1)),
                ("that maximises one coefficient (1 - alpha) alpha^(L-1); the tail energy sums "
                 "the squares of all coefficients beyond L", (L - 1) / L),
                ("the sign of the alpha term: d/dalpha log(1 + alpha) enters with a minus; "
                 "the root must lie in (0, 1)", (1 + root) / (2 * m))]

    return check_function("worst eigenvalue", worst_eigenvalue,
                          by_case(lambda c: worst_eigenvalue_by_search(c["L"])),
                          given_cases(cases) or [{"L": L} for L in (8, 32, 1024, 2)],
                          compare=check_scalar, causes=causes, rtol=1e-7, atol=0.0,
                          time_limit=time_limit, verbose=verbose)


# --------------------------------------------------------------------------- the slider
SLIDER_T = 1024
SLIDER_K = 12
SLIDER_Q = 0.5


@lru_cache(maxsize=1)
def _slider_inputs():
    """White-noise input, the two algorithms' feature designs at contexts sqrt(T) and T
    (they depend on the input only) and a step of twice each design's safe step."""
    from ..learning import SpectralFiltering, SpectralFilteringAR2
    from .lesson05 import eta_safe

    u = np.random.default_rng(7).standard_normal((SLIDER_T, 1))
    L = int(np.ceil(SLIDER_T ** SLIDER_Q))
    zeros = np.zeros((SLIDER_T, 1))
    out = {}
    for name, cls in (("Algorithm 1", SpectralFiltering), ("Algorithm 2", SpectralFilteringAR2)):
        runs = {}
        for context in (L, None):
            learner = cls(horizon=SLIDER_T, k=SLIDER_K, context=context, radius=np.inf,
                          lr_schedule="constant")
            X = learner.design(u, zeros)[0]
            runs[context] = (learner, X)
        lr = 2.0 * eta_safe(runs[None][1])
        out[name] = {ctx: (learner.clone(lr=lr), X) for ctx, (learner, X) in runs.items()}
    return u, L, out


def one_mode_losses(alpha: float) -> dict[str, tuple[float, float]]:
    """Last-quarter mean losses ``(context sqrt(T), full context)`` of Algorithms 1 and 2 on
    the one-mode system ``(alpha, 1, 1, 0)`` driven by the slider's white noise."""
    from .._validation import check_real
    from ..learning._kernels import ar_part
    from ..systems import LDS, simulate

    alpha = check_real("alpha", alpha, low=-1.0, high=1.0, low_inclusive=False,
                       high_inclusive=False)  # a stable mode: the stream stays bounded
    u, L, runs = _slider_inputs()
    system = LDS([[alpha]], [[1.0]], [[1.0]], dt=1.0)
    y = simulate(system, u, output="lengen", return_states=False).y
    quarter = slice(3 * SLIDER_T // 4, None)
    out = {}
    for name, by_context in runs.items():
        coefs = (1.0,) if name == "Algorithm 1" else (2.0, -1.0)
        base = ar_part(y, coefs)
        pair = []
        for context in (L, None):
            learner, X = by_context[context]
            learner.fit_predict(u, y, design=(X, base))
            pair.append(float(np.mean(learner.losses_[quarter])))
        out[name] = (pair[0], pair[1])
    return out


@lru_cache(maxsize=1)
def _ratio_curve():
    deltas = np.logspace(-6, np.log10(0.3), 13)
    ratios = {"Algorithm 1": [], "Algorithm 2": []}
    for d in deltas:
        for name, (short, full) in one_mode_losses(1 - d).items():
            ratios[name].append(short / full)
    return deltas, {k: np.array(v) for k, v in ratios.items()}


def _eigenvalue_axes(fig) -> dict[str, Any]:
    """The slider's axes and the artists that do not move, made once (see
    :func:`eigenvalue_slider`)."""
    from ..systems import eigenvalue_regions

    u, L, _ = _slider_inputs()
    regions = eigenvalue_regions(SLIDER_T, SLIDER_Q)
    grid = np.logspace(-6, np.log10(0.3), 120)
    ax1, ax2 = fig.subplots(1, 2)
    fig.subplots_adjust(left=0.08, right=0.98, bottom=0.16, top=0.88, wspace=0.28)
    state: dict[str, Any] = {"regions": regions}
    for i, ax in enumerate((ax1, ax2)):
        ax.axvspan(1 - regions.region_b.high, 1 - regions.region_b.low, color="C3",
                   alpha=0.15, lw=0)
        state[f"where{i}"] = ax.axvline(0.03, color="k", lw=1.5)
    ax1.plot(grid, tail_energies(1 - np.asarray(grid), L, 1), "C0",
             label="Algorithm 1: (1-α) α^(j-1)")
    ax1.plot(grid, tail_energies(1 - np.asarray(grid), L, 2), "C2",
             label="Algorithm 2: (1-α)² α^(j-2)")
    ax1.axvline(1 - worst_eigenvalue_by_search(L), color="C0", ls=":", lw=1)
    ax1.set(xscale="log", yscale="log", xlabel="1 - α", ylim=(1e-16, 1e-1))
    ax1.set_title(f"energy beyond the context L = {L} (red: Region B, q = 1/2)", fontsize=9)
    ax1.legend(fontsize=7, loc="lower right")
    deltas, ratios = _ratio_curve()
    for name, color in (("Algorithm 1", "C0"), ("Algorithm 2", "C2")):
        ax2.plot(deltas, ratios[name], color=color, lw=1, alpha=0.6)
        (state[name],) = ax2.plot([0.03], [1.0], "o", color=color, label=name)
    ax2.axhline(1.0, color="0.5", ls=":", lw=1)
    ax2.set(xscale="log", yscale="log", xlabel="1 - α", ylim=(0.5, 300))
    ax2.set_title(f"loss ratio, context {L} / full (T = {SLIDER_T}, k = {SLIDER_K})",
                  fontsize=9)
    state["legend"] = ax2.legend(fontsize=7, loc="upper right")
    no_minor(ax1, ax2)
    state["moving"] = [state["where0"], state["where1"], state["Algorithm 1"],
                       state["Algorithm 2"], state["legend"]]
    return state


@slider("lesson07.eigenvalue", title="Region B: one eigenvalue, Algorithm 1 against 2",
        setup=_eigenvalue_axes, delta=Param(1e-6, 0.3, 0.03, log=True, label="1 - α"))
def eigenvalue_slider(state, delta: float) -> dict[str, Any]:
    """Left: the tail energies beyond the context L = sqrt(T) (T = 1024) of Algorithm 1's and
    Algorithm 2's targets against 1 - alpha, with Region B for q = 1/2 and the worst
    eigenvalue. Right: the measured loss ratio (context L over full context) of both
    algorithms on the one-mode system (alpha, 1, 1): a curve over 13 eigenvalues and the
    slider's eigenvalue."""
    alpha = 1.0 - delta
    losses = one_mode_losses(alpha)
    ratios = {name: short / full for name, (short, full) in losses.items()}
    for i in (0, 1):
        state[f"where{i}"].set_xdata([delta] * 2)
    for j, (name, ratio) in enumerate(ratios.items()):
        state[name].set_data([delta], [ratio])
        state["legend"].get_texts()[j].set_text(f"{name}: {ratio:.3g}")
    label = str(state["regions"].classify([alpha])[0])
    return {"α": alpha, "region (q = 1/2)": label, "ratio Algorithm 1": ratios["Algorithm 1"],
            "ratio Algorithm 2": ratios["Algorithm 2"]}


# The interpretation question: multiple choice, the right choice kept as a digest (the
# package holds no answer in the clear); each wrong choice has its own hint.
INTERPRETATION = ChoiceQuestion(
    key="lesson07.interpretation",
    question=("At 1 - α = 1e-3 (Region B for T = 1024, q = 1/2) the slider shows a loss ratio "
              "of about 6.5 for Algorithm 1 and about 1.0 for Algorithm 2. Why?"),
    choices={
        "a": "Algorithm 2 uses more filters",
        "b": "in Region B the eigenvalue is forgotten within the context, so any algorithm "
             "does well",
        "c": "Algorithm 1 diverged at this step size",
        "d": "Algorithm 2 learns the second difference, whose coefficients carry (1 - α)² "
             "instead of (1 - α): its energy beyond L = 32 is about (1 - α)² = 1e-6 of "
             "Algorithm 1's, so the short context loses almost nothing",
    },
    digest="3b8de5a4263ad910250fff75e784e1d950318b81b1e3bf42a6ecaf4838a637b9",
    hints={
        "a": "both algorithms run with k = 12 filters on the slider",
        "b": "Region B is where the memory is longer than the context but the response is not "
             "flat: the hard case, and Algorithm 1's ratio of 6.5 shows it",
        "c": "both run at twice their safe step and their full-context losses are finite; the "
             "ratio compares two finished runs",
    },
    minutes=5)


def check_interpretation(interpretation, *, verbose: bool = True) -> CheckResult:
    """Check the interpretation question's answer (a letter, :data:`INTERPRETATION`)."""
    return INTERPRETATION.check(interpretation, verbose=verbose)


#: The graded checks of the lesson: the name of each answer in the notebook -> its check.
CHECKS: dict[str, Callable[..., CheckResult]]
CHECKS = {"second_difference": check_second_difference, "tail_energy": check_tail_energy,
          "worst_eigenvalue": check_worst_eigenvalue,
          "interpretation": check_interpretation}


def summary(*, verbose: bool = True, **answers: Any) -> dict[str, Any]:
    """Run every graded check of the lesson on ``answers`` (:func:`run_checks`)."""
    return run_checks(CHECKS, answers, verbose=verbose)
