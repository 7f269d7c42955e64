r"""Lesson 6 — spectral filtering: the checks and the slider.

Exercises (``docs/lessons/06_spectral_filtering.py``), for the matrix of eq. 3 of the
length-generalization paper, ``H_T = int_0^1 mu_a mu_a^T da`` with
``mu_a = (1 - a) [1, a, a^2, ..., a^{T-1}]``:

1. :func:`check_hankel_matrix` — its entries in closed form,
   ``(H_T)_{ij} = 2 / ((n+1)(n+2)(n+3))``, ``n = i + j`` (0-based), against
   :func:`lds_toolkit.learning.filter_matrix`.
2. :func:`check_top_filters` — its top-k eigenpairs, eigenvalues descending and the sign
   convention ``phi_i[0] > 0``, against :func:`lds_toolkit.spectral_filters` (dense path).
3. :func:`check_projection_residual` — how well k filters represent ``mu_a``:
   ``||(I - Phi Phi^T) mu_a|| / ||mu_a||``.
4. :func:`check_resolvable_count` — how many eigenpairs float64 resolves: the number of
   ``sigma_i / sigma_1 >= 100 eps`` (:data:`lds_toolkit.learning.filters.RESOLVABLE_FLOOR`).

The slider ``lesson06.filters`` runs Algorithm 1 with ``k`` filters and context ``T^q`` on a
Region A stream (T = 1024) and shows the loss ratio to the full context; ``k`` stops at the
last filter above the float64 floor.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from typing import Any

import numpy as np

from ._figures import no_minor
from .calling import DEFAULT_TIME_LIMIT, by_case, call_student, fresh_case, given_cases, guarded
from .check import (
    CheckResult,
    check_array,
    check_function,
    check_scalar,
    is_stub,
    report,
    run_checks,
)
from .questions import ChoiceQuestion
from .sliders import Param, slider

__all__ = ["CHECKS", "INTERPRETATION", "check_interpretation",
           "summary", "check_hankel_matrix", "check_top_filters",
           "check_projection_residual", "check_resolvable_count", "filters_above_floor",
           "impulse_vector", "projection_residuals"]


# ------------------------------------------------------------------ exercise 1: H_T
def _toolkit_hankel_matrix(case: dict[str, Any]) -> np.ndarray:
    """The toolkit's answer to exercise 1: ``filter_matrix(T, "H")``."""
    T = case['T']
    from ..learning.filters import filter_matrix

    return filter_matrix(T, "H")


def check_hankel_matrix(hankel_matrix, *, verbose: bool = True,
                        cases: list[dict[str, Any]] | None = None,
                        time_limit: float | None = DEFAULT_TIME_LIMIT) -> CheckResult:
    """Check ``hankel_matrix(T)`` (exercise 1) for T = 5, 64 and 1."""
    def causes(T):
        n = 1.0 * (np.arange(T)[:, None] + np.arange(T)[None, :])  # n = i + j
        return [("the weight (1 - a)^2 is missing: int_0^1 a^n da = 1/(n+1)", 1 / (n + 1)),
                ("only one factor (1 - a): int_0^1 (1 - a) a^n da = 1/((n+1)(n+2)); mu_a "
                 "carries (1 - a) and so does mu_a^T", 1 / ((n + 1) * (n + 2))),
                ("n counted from 1: with i, j = 0 .. T-1, n = i + j starts at 0",
                 2 / ((n + 2) * (n + 3) * (n + 4))),
                ("the factor 2 of int_0^1 (1 - a)^2 a^n da = 2/((n+1)(n+2)(n+3)) is missing",
                 1 / ((n + 1) * (n + 2) * (n + 3))),
                ("the Beta integral is n! 2! / (n+3)!: three factors (n+1)(n+2)(n+3) below",
                 2 / ((n + 1) * (n + 2))),
                ("i and j run over 0 .. T-1: T rows and columns, not T + 1",
                 (lambda m: 2.0 / ((m + 1) * (m + 2) * (m + 3)))(
                     np.add.outer(np.arange(T + 1), np.arange(T + 1)).astype(float)))]

    return check_function("the matrix H_T", hankel_matrix, by_case(_toolkit_hankel_matrix),
                          given_cases(cases) or [{"T": 5}, {"T": 64}, {"T": 1}],
                          causes=causes, rtol=1e-12,
                          atol=0.0, time_limit=time_limit, verbose=verbose)


# ------------------------------------------------------------ exercise 2: the filters
def _toolkit_top_filters(case: dict[str, Any]) -> tuple[np.ndarray, np.ndarray]:
    """The toolkit's answer to exercise 2 for ``H = H_T``: ``spectral_filters(T, k)`` by the
    dense path (no cache)."""
    H, k = (case[k] for k in ('H', 'k'))
    from ..learning import spectral_filters

    return spectral_filters(np.asarray(H).shape[0], k, "H", method="dense", cache=False)


def _filter_cases() -> list[dict[str, Any]]:
    return [{"H": _toolkit_hankel_matrix({"T": T}), "k": k} for T, k in ((16, 3), (200, 8))]


def check_top_filters(top_filters, *, verbose: bool = True,
                      cases: list[dict[str, Any]] | None = None,
                      time_limit: float | None = DEFAULT_TIME_LIMIT) -> CheckResult:
    """Check ``top_filters(H, k) -> (sigma, phi)`` (exercise 2) on H_16 (k = 3) and H_200
    (k = 8): ``sigma`` descending, shape (k,); ``phi`` (T, k), orthonormal columns with
    ``phi[0, i] > 0``."""
    name = "top eigenpairs of H_T"
    if is_stub(top_filters):
        return report(name, "todo", "the answer is still a stub (None or ...); write it and "
                      "run this cell again", verbose)
    if not callable(top_filters):
        return report(name, "wrong", f"expected a function, got {type(top_filters).__name__}",
                      verbose)
    worst = 0.0
    for i, case in enumerate(given_cases(cases) or _filter_cases()):
        where = f"case {i + 1} (T = {np.shape(case['H'])[0]}, k = {case['k']})"
        sigma, phi = _toolkit_top_filters(fresh_case(case))  # before the student's call
        out = call_student(top_filters, case, time_limit=time_limit)
        if not out.ok:
            return report(name, "wrong", f"your function {out.error} ({where})", verbose,
                          {"case": i, "kind": out.kind})
        got = out.value
        if is_stub(got) or (isinstance(got, tuple) and any(is_stub(g) for g in got)):
            return report(name, "todo", f"your function returned {got!r} ({where}); write "
                          "it and run this cell again", verbose)
        if not (isinstance(got, tuple) and len(got) == 2):
            return report(name, "wrong", f"expected a pair (sigma, phi), got "
                          f"{type(got).__name__} ({where})", verbose, {"case": i})
        res, err = guarded(_compare_filters, got, sigma, phi, case)
        if err is not None:
            return report(name, "wrong", f"{where}: your answer could not be compared: it "
                          f"{err}", verbose, {"case": i})
        if not res.passed:
            part, text = res.message.split(": ", 1)[1].split(" — ", 1)
            return report(name, res.status, f"{where}, {part}: {text}", verbose,
                          {"case": i, **res.details})
        worst = max(worst, float(res.details.get("max_abs_error", 0.0)))
    return report(name, "pass", f"matches spectral_filters on all cases (filters to "
                  f"{worst:.1e})", verbose, {"max_abs_error": worst})


def _compare_filters(got, sigma, phi, case) -> CheckResult:
    """The eigenvalues, then the filters, of a student's pair (exercise 2)."""
    every = np.linalg.eigvalsh(case["H"])  # ascending
    k = case["k"]
    res = check_array("eigenvalues", got[0], sigma, rtol=1e-9, atol=1e-15,
                      causes=[("ascending order: eigh returns the smallest first; "
                               "reverse it", sigma[::-1]),
                              ("these are the k smallest eigenvalues: eigh sorts them "
                               "in ascending order; take the last k, largest first",
                               every[:k]),
                              ("these are the k smallest eigenvalues, largest first: "
                               "eigh sorts in ascending order; take the last k",
                               every[:k][::-1]),
                              ("k - 1 values: a slice like w[-1:-k:-1] stops one short; "
                               "w[::-1][:k] takes k", sigma[:k - 1])], verbose=False)
    if res.passed:
        causes = [("ascending order: the columns must be reversed too", phi[:, ::-1]),
                  ("the filters are the columns of eigh's v (v[:, i]), shape (T, k); these "
                   "are rows", phi.T)]
        ans = np.asarray(got[1])
        if ans.shape == phi.shape and np.isfinite(ans).all() and \
                np.allclose(ans * np.sign(ans[0]), phi, atol=1e-8):
            causes.append(("the sign convention: multiply each column by the sign of its "
                           "first entry, so that phi_i[0] > 0", ans))
        res = check_array("filters", got[1], phi, rtol=0.0, atol=1e-8, causes=causes,
                          verbose=False)
    return res


# --------------------------------------------------------- exercise 3: the residual
def impulse_vector(alpha: float, T: int) -> np.ndarray:
    """``mu_alpha = (1 - alpha) [1, alpha, ..., alpha^{T-1}]`` (eq. 3's vector, T entries)."""
    from .._validation import check_int, check_real

    alpha, T = check_real("alpha", alpha), check_int("T", T)
    return (1.0 - alpha) * alpha ** np.arange(T)


def _toolkit_projection_residual(case: dict[str, Any]) -> float:
    """The answer to exercise 3: ``||mu - Phi Phi^+ mu|| / ||mu||`` by least squares."""
    phi, alpha = (case[k] for k in ('phi', 'alpha'))
    phi = np.asarray(phi, dtype=np.float64)
    mu = impulse_vector(alpha, phi.shape[0])
    coef = np.linalg.lstsq(phi, mu, rcond=None)[0]
    return float(np.linalg.norm(mu - phi @ coef) / np.linalg.norm(mu))


def projection_residuals(filters, alphas) -> np.ndarray:
    """The relative residuals of exercise 3 for several ``alphas`` at once (the figure after
    the exercise): ``||mu_a - Phi Phi^+ mu_a|| / ||mu_a||`` for each ``a`` in ``alphas``."""
    from .._validation import as_float_array

    alphas = np.atleast_1d(as_float_array("alphas", alphas))
    return np.array([_toolkit_projection_residual({"phi": filters, "alpha": float(a)})
                     for a in alphas])


@lru_cache(maxsize=1)
def _residual_filters() -> np.ndarray:
    from ..learning import spectral_filters

    return spectral_filters(256, 8, "H", method="dense", cache=False)[1]


def _residual_of(phi, mu) -> float:
    """``||mu - Phi Phi^T mu|| / ||mu||`` for a given vector (a slip's ``mu``, for the hints)."""
    return float(np.linalg.norm(mu - phi @ (phi.T @ mu)) / np.linalg.norm(mu))


def check_projection_residual(projection_residual, *, verbose: bool = True,
                              cases: list[dict[str, Any]] | None = None,
                              time_limit: float | None = DEFAULT_TIME_LIMIT) -> CheckResult:
    """Check ``projection_residual(phi, alpha)`` (exercise 3) with 8 filters of T = 256 at
    alpha = 0, 0.5, 0.99 and 0.9999."""
    phi = _residual_filters()
    cases = given_cases(cases)  # [] or a non-list: refused, naming cases
    cases = cases or [{"phi": phi, "alpha": a} for a in (0.0, 0.5, 0.99, 0.9999)]

    def causes(phi, alpha):
        mu = impulse_vector(alpha, phi.shape[0])
        res = mu - phi @ (phi.T @ mu)
        return [("not divided by ||mu_alpha||: the residual is relative",
                 float(np.linalg.norm(res))),
                ("that is the part inside the span, ||Phi Phi^T mu|| / ||mu||; the residual "
                 "is what is left outside", float(np.linalg.norm(phi.T @ mu)
                                                  / np.linalg.norm(mu))),
                ("a ratio of squared norms: the relative residual is ||r|| / ||mu||, not "
                 "||r||^2 / ||mu||^2", float(res @ res / (mu @ mu))),
                ("mu_alpha = (1 - alpha) [1, alpha, alpha^2, ...]: lag 0 first, not last",
                 _residual_of(phi, mu[::-1])),
                ("1 - ||Phi^T mu|| / ||mu|| is not the residual: the two parts are orthogonal, "
                 "so their squared norms add up (Pythagoras)",
                 float(1 - np.linalg.norm(phi.T @ mu) / np.linalg.norm(mu))),
                ("divide by ||mu_alpha||, the whole vector, not by the part inside the span",
                 float(np.linalg.norm(res) / np.linalg.norm(phi.T @ mu)))]

    return check_function("projection residual", projection_residual,
                          by_case(_toolkit_projection_residual), cases, compare=check_scalar,
                          causes=causes, rtol=1e-6, atol=1e-13, time_limit=time_limit,
                          verbose=verbose)


# ------------------------------------------------------- exercise 4: the float64 floor
def _toolkit_resolvable_count(case: dict[str, Any]) -> int:
    """The answer to exercise 4: the number of ``sigma_i / sigma_1 >= RESOLVABLE_FLOOR``."""
    sigma = case['sigma']
    from ..learning.filters import RESOLVABLE_FLOOR

    s = np.asarray(sigma, dtype=np.float64)
    return int(np.sum(s / s[0] >= RESOLVABLE_FLOOR))


def filters_above_floor(T: int) -> int:
    """How many eigenvalues of ``H_T`` are above the float64 floor (exercise 4's count for
    the spectrum of ``H_T``; the cell after the exercise)."""
    from ..learning.filters import filter_matrix

    spectrum = np.linalg.eigvalsh(filter_matrix(T))[::-1]
    return _toolkit_resolvable_count({"sigma": spectrum})


@lru_cache(maxsize=1)
def _spectra() -> tuple[np.ndarray, ...]:
    from ..learning.filters import filter_matrix

    return tuple(np.linalg.eigvalsh(filter_matrix(T))[::-1].copy() for T in (64, 256))


def check_resolvable_count(resolvable_count, *, verbose: bool = True,
                           cases: list[dict[str, Any]] | None = None,
                           time_limit: float | None = DEFAULT_TIME_LIMIT) -> CheckResult:
    """Check ``resolvable_count(sigma)`` (exercise 4) on every eigenvalue of H_64 and H_256
    and on a made-up spectrum (descending) whose largest value is not 1."""
    from ..learning.filters import EPS

    cases = given_cases(cases)  # [] or a non-list: refused, naming cases
    cases = cases or [{"sigma": s} for s in _spectra()] + [
        {"sigma": 3.0 * 0.5 ** np.arange(60)},
        {"sigma": np.array([2.0, 1.0, 0.5, 0.25])}]  # nothing below the floor

    def causes(sigma):
        s = np.asarray(sigma)
        rel = s / s[0]
        return [("compared with eps itself; below 100 eps an eigenvalue has fewer than two "
                 "correct digits", int(np.sum(rel >= EPS))),
                ("compared sigma_i instead of sigma_i / sigma_1: the round-off is relative "
                 "to the largest eigenvalue", int(np.sum(s >= 100 * EPS))),
                ("that is float32's eps: numpy works in float64, np.finfo(float).eps",
                 int(np.sum(rel >= 100 * float(np.finfo(np.float32).eps)))),
                ("sqrt(eps) is the floor for a difference quotient, not for an eigenvalue: "
                 "eigh's error is about eps sigma_1, so the floor is 100 eps",
                 int(np.sum(rel >= np.sqrt(EPS)))),
                ("np.argmax of 'below the floor' is 0 when nothing is below it: count the "
                 "values at or above it instead", int(np.argmax(rel < 100 * EPS))),
                ("that counts the values below the floor; count those at or above it",
                 int(np.sum(rel < 100 * EPS)))]

    return check_function("filters above the floor", resolvable_count,
                          by_case(_toolkit_resolvable_count), cases, compare=check_scalar,
                          causes=causes, rtol=0.0, atol=0.0, time_limit=time_limit, verbose=verbose)


# --------------------------------------------------------------------------- the slider
SLIDER_T = 1024
#: Filters of H_1024 above the float64 floor (sigma_i / sigma_1 >= 100 eps); pinned by a test.
SLIDER_K_MAX = 23


@lru_cache(maxsize=1)
def _slider_data():
    """The Region A stream of lesson 5, the spectrum of H_T, and a constant step: twice the
    safe step of the full-context features with every filter above the floor."""
    from scipy.linalg import eigh

    from ..learning import SpectralFiltering
    from ..learning.filters import filter_matrix
    from .lesson05 import eta_safe, lesson_stream

    _, u, y, r = lesson_stream(SLIDER_T)
    full = SpectralFiltering(horizon=SLIDER_T, k=SLIDER_K_MAX, radius=r,
                             lr_schedule="constant")
    lr = 2.0 * eta_safe(full.design(u, y)[0])
    sigma = eigh(filter_matrix(SLIDER_T), eigvals_only=True,
                 subset_by_index=[SLIDER_T - 40, SLIDER_T - 1])[::-1].copy()
    return u, y, r, lr, sigma


def final_loss(k: int, context: int | None, u, y, r: float, lr: float) -> np.ndarray:
    """Per-step losses of Algorithm 1 with ``k`` filters and ``context`` at the step ``lr``."""
    from ..learning import SpectralFiltering

    learner = SpectralFiltering(horizon=u.shape[0], k=k, context=context, radius=r, lr=lr,
                                lr_schedule="constant")
    learner.fit_predict(u, y)
    return learner.losses_


def _filters_axes(fig) -> dict[str, Any]:
    """The slider's axes and artists, made once (see :func:`filters_slider`)."""
    from ..learning.filters import RESOLVABLE_FLOOR

    u, y, r, lr, sigma = _slider_data()
    ax1, ax2 = fig.subplots(1, 2, gridspec_kw={"width_ratios": [2, 3]})
    fig.subplots_adjust(left=0.08, right=0.98, bottom=0.16, top=0.88, wspace=0.3)
    i = np.arange(1, sigma.size + 1)
    rel = np.abs(sigma / sigma[0])
    ax1.semilogy(i, rel, "o", ms=2.5, color="0.6")
    (used,) = ax1.semilogy(i, rel, "o", ms=3.5, color="C0")
    ax1.axhline(RESOLVABLE_FLOOR, color="C3", ls="--", lw=1)
    ax1.text(i[-1], RESOLVABLE_FLOOR, "float64 floor", color="C3", fontsize=7, ha="right",
             va="bottom")
    ax1.set(xlabel="i", ylim=(1e-19, 2))
    t = np.arange(1, SLIDER_T + 1)
    (short,) = ax2.plot(t, np.full(t.size, np.nan), color="C0", lw=1, label="context T^q")
    (full,) = ax2.plot(t, np.full(t.size, np.nan), color="k", lw=1, label="full context")
    ax2.set(yscale="log", xlabel="t", ylabel="loss / mean y²", ylim=(1e-8, 1),
            xlim=(0, SLIDER_T))
    legend = ax2.legend(fontsize=7, loc="upper right")
    no_minor(ax1, ax2)
    return {"ax1": ax1, "ax2": ax2, "used": used, "rel": rel, "i": i, "short": short,
            "full": full, "legend": legend, "t": t,
            "moving": [used, short, full, legend, ax1.title, ax2.title]}


@slider("lesson06.filters", title="Spectral filtering: number of filters k, context T^q",
        setup=_filters_axes,
        k=Param(1, SLIDER_K_MAX, 8, integer=True, label="k (filters)"),
        q=Param(0.25, 1.0, 0.5, step=0.025, label="q (context T^q)"))
def filters_slider(state, k: float, q: float) -> dict[str, Any]:
    """Left: sigma_i / sigma_1 of H_1024 with the float64 floor and the k filters in use.
    Right: Algorithm 1's online loss with context ceil(T^q) and with the full context
    (moving average over 32 steps); the ratio of their means over the last quarter."""
    u, y, r, lr, sigma = _slider_data()
    k = int(k)
    L = int(np.ceil(SLIDER_T ** q))
    losses = {"short": final_loss(k, L, u, y, r, lr), "full": final_loss(k, None, u, y, r, lr)}
    quarter = slice(3 * SLIDER_T // 4, None)
    ratio = float(np.mean(losses["short"][quarter]) / np.mean(losses["full"][quarter]))
    state["used"].set_data(state["i"][:k], state["rel"][:k])
    t = state["t"]
    power = float(np.mean(y**2))
    for key, values in losses.items():
        c = np.cumsum(np.insert(values, 0, 0.0))
        state[key].set_ydata((c[t] - c[np.maximum(t - 32, 0)]) / np.minimum(t, 32) / power)
    state["legend"].get_texts()[0].set_text(f"context T^{q:.3g} = {L}")
    state["ax1"].set_title(f"σ_i / σ_1 of H_T (T = {SLIDER_T}); k = {k}", fontsize=9)
    state["ax2"].set_title(f"Algorithm 1, Region A: last-quarter loss ratio {ratio:.3g}",
                           fontsize=9)
    return {"k": k, "context": L, "loss ratio": ratio,
            "full-context loss": float(np.mean(losses["full"][quarter]) / power)}


# The interpretation question: multiple choice, the right choice kept as a digest (the
# package holds no answer in the clear); each wrong choice has its own hint.
INTERPRETATION = ChoiceQuestion(
    key="lesson06.interpretation",
    question=("With context T^{1/2} = 32 the last-quarter loss ratio (short over full context)"
              " is about 34 with k = 8 filters and about 1.0 with k = 1. Does one filter "
              "length-generalize better?"),
    choices={
        "a": "yes: fewer filters, less to learn, so a short context suffices",
        "b": "no: with one filter both runs are equally poor (the full-context loss is about "
             "4e-3 of mean y², against 6e-7 with 8 filters); a ratio near 1 means nothing "
             "without the loss it divides",
        "c": "the ratio 34 is a float64 artefact of the filters beyond the floor",
        "d": "yes: Theorem 4 asks for a single filter per eigenvalue",
    },
    digest="9490c344e94a7307e76c9ac0dfbd2b484b7bdda1b0700c89a965cb1111516d08",
    hints={
        "a": "look at the full-context loss the slider prints: one filter cannot represent the"
             " system's response, whatever the context",
        "c": "k = 8 is far above the floor (the floor is at k = 23 for T = 1024)",
        "d": "the error bound of Theorem 4 shrinks with k: more filters represent every "
             "impulse response better",
    },
    minutes=5)


def check_interpretation(interpretation, *, verbose: bool = True) -> CheckResult:
    """Check the interpretation question's answer (a letter, :data:`INTERPRETATION`)."""
    return INTERPRETATION.check(interpretation, verbose=verbose)


#: The graded checks of the lesson: the name of each answer in the notebook -> its check.
CHECKS: dict[str, Callable[..., CheckResult]]
CHECKS = {"hankel_matrix": check_hankel_matrix, "top_filters": check_top_filters,
          "projection_residual": check_projection_residual,
          "resolvable_count": check_resolvable_count,
          "interpretation": check_interpretation}


def summary(*, verbose: bool = True, **answers: Any) -> dict[str, Any]:
    """Run every graded check of the lesson on ``answers`` (:func:`run_checks`)."""
    return run_checks(CHECKS, answers, verbose=verbose)
