r"""Lesson 1 — memory and eigenvalue regions: the checks and the slider.

Exercises (``docs/lessons/01_memory_and_regions.py``):

1. :func:`check_impulse_response` — the impulse response of ``(A, B, C, D)`` by running the
   recursion ``x_{t+1} = A x_t + B u_t``, ``y_t = C x_t + D u_t`` from ``x_0 = 0`` with
   ``u_0 = 1``: ``h_0 = D``, ``h_t = C A^{t-1} B`` (the toolkit's Markov parameters,
   :meth:`lds_toolkit.LDS.impulse_response`).
2. :func:`check_memory_formula` — the memory length of a scalar system ``(a, b, c, 0)``,
   ``ℓ_ε = 1 + ⌈log ε / (2 log |a|)⌉`` (:func:`lds_toolkit.memory_length`).
3. :func:`check_region` — the region of a real eigenvalue for horizon ``T`` and exponent
   ``q`` (:func:`lds_toolkit.eigenvalue_regions`).

The slider ``lesson01.memory`` moves a conjugate pair ``|λ| e^{±iθ}`` and shows its impulse
response, its memory and where ``|λ|`` lies on the regions of ``T = 1024``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .calling import DEFAULT_TIME_LIMIT, by_case, given_cases
from .check import (
    CheckResult,
    check_equal,
    check_function,
    check_scalar,
    report,
    run_checks,
)
from .questions import ChoiceQuestion
from .sliders import Param, slider, sparse_log_ticks

__all__ = ["CHECKS", "INTERPRETATION", "summary", "check_impulse_response",
           "check_interpretation", "check_memory_formula", "check_region",
           "pair_impulse_response", "pair_system"]

#: The horizon of the slider's region plot.
SLIDER_T = 1024

# The expected values come from the toolkit's library (an independent route: the Markov
# parameters, the observability Gramian, the region table), each taking the *case* (a dict of
# the exercise's arguments): no function of the package has an exercise's signature, so none
# can be handed to a check as an answer (tests/teaching/test_no_solutions.py).


def _toolkit_impulse_response(case: dict[str, Any]) -> np.ndarray:
    """``LDS(A, B, C, D).impulse_response(length)``: shape ``(length, d_out, d_in)``."""
    from ..systems import LDS

    return LDS(case["A"], case["B"], case["C"], case["D"], dt=1.0).impulse_response(
        case["length"])


def _toolkit_memory(case: dict[str, Any]) -> float:
    """``memory_length`` of ``(a, 1, 1, 0)`` at ``eps`` (from the Gramian, no formula)."""
    from ..systems import LDS, memory_length

    return float(memory_length(LDS([[case["a"]]], [[1.0]], [[1.0]], dt=1.0),
                               eps=case["eps"]).length)


def _toolkit_region(case: dict[str, Any]) -> str:
    """``eigenvalue_regions(T, q).classify([lam])``."""
    from ..systems import eigenvalue_regions

    return str(eigenvalue_regions(case["T"], case["q"]).classify([case["lam"]])[0])


def _impulse_cases() -> list[dict[str, Any]]:
    rng = np.random.default_rng(1)
    A = rng.standard_normal((3, 3))
    A *= 0.9 / max(abs(np.linalg.eigvals(A)))
    return [
        {"A": np.array([[0.9]]), "B": np.array([[1.0]]), "C": np.array([[1.0]]),
         "D": np.array([[0.0]]), "length": 6},
        {"A": A, "B": rng.standard_normal((3, 2)), "C": rng.standard_normal((1, 3)),
         "D": np.array([[0.5, -1.0]]), "length": 12},
        # two outputs, D != 0: a mixed-up C/D or input/output axis shows
        {"A": np.array([[0.5, 0.2], [0.0, -0.3]]), "B": np.array([[1.0], [2.0]]),
         "C": np.array([[1.0, 0.0], [1.0, 1.0]]), "D": np.array([[0.25], [0.0]]),
         "length": 5},
    ]


def check_impulse_response(impulse_response, *, verbose: bool = True,
                           cases: list[dict[str, Any]] | None = None,
                           time_limit: float | None = DEFAULT_TIME_LIMIT) -> CheckResult:
    """Check ``impulse_response(A, B, C, D, length)`` (exercise 1).

    Expected: an array of shape ``(length, d_out, d_in)`` with ``h_0 = D`` and
    ``h_t = C A^{t-1} B`` (:meth:`lds_toolkit.LDS.impulse_response`). Recognises the response
    read one step early (``h_t = C A^t B``, the S4 reading), a missing ``D``, ``A`` used
    transposed, and the axes of outputs and inputs swapped. ``cases`` replaces the public
    cases (the autograder's hidden ones); ``time_limit``: seconds per call.
    """
    def causes(A, B, C, D, length):
        h = _toolkit_impulse_response({"A": A, "B": B, "C": C, "D": D, "length": length})
        no_d = h.copy()
        no_d[0] = 0.0
        s4 = _toolkit_impulse_response({"A": A, "B": B, "C": C @ A, "D": D + C @ B,
                                        "length": length})
        transposed = _toolkit_impulse_response({"A": np.asarray(A).T, "B": B, "C": C, "D": D,
                                                "length": length})
        return [("D is missing from h_0 (the input reaches y_0 through D)", no_d),
                ("h_t = C A^t B: the state was read after the input entered it (S4's "
                 "convention x_k = A x_{k-1} + B u_k); here y_t = C x_t + D u_t reads x_t "
                 "before u_t enters", s4),
                ("A is used transposed (x_{t+1} = A x_t multiplies the state from the left)",
                 transposed),
                ("the axes are (length, d_in, d_out): h_t = C A^{t-1} B has d_out rows and "
                 "d_in columns", np.swapaxes(h, 1, 2)),
                ("one column per input is missing: h has shape (length, d_out, d_in), and a "
                 "vector of ones as u_0 sums the inputs' responses", h.sum(axis=2))]

    return check_function("impulse response", impulse_response,
                          lambda **case: _toolkit_impulse_response(case),
                          given_cases(cases) or _impulse_cases(), causes=causes, rtol=1e-9,
                          atol=1e-12,
                          time_limit=time_limit, verbose=verbose)


_MEMORY_CASES = [{"a": 0.9, "eps": 1e-3}, {"a": 0.99, "eps": 1e-3}, {"a": -0.5, "eps": 1e-6},
                 {"a": 0.999, "eps": 1e-2}]


def check_memory_formula(memory_of, *, verbose: bool = True,
                         cases: list[dict[str, Any]] | None = None,
                         time_limit: float | None = DEFAULT_TIME_LIMIT) -> CheckResult:
    """Check ``memory_of(a, eps)`` (exercise 2) against ``memory_length`` at four points.

    Recognises: no square on the energies, the count started at 0 (the same number as
    ``floor`` for ``ceil``), the factor ``1 - a^2`` kept, a number that is not a whole count
    of lags, and ``log`` of a negative ``a`` (NaN or a math domain error). ``log10`` for the
    natural log is the same ratio: it passes.
    """
    def causes(a, eps):
        import math

        la = math.log(abs(a))
        return [("forgot the square: the energy of h_t = a^(t-1) falls like a^(2t)",
                 1 + math.ceil(math.log(eps) / la)),
                ("the count starts at 0: h_0 = D = 0 is the first lag, so add 1",
                 math.ceil(math.log(eps) / (2 * la))),
                ("the tail is a^(2l) / (1 - a^2) of the energy 1 / (1 - a^2): the (1 - a^2) "
                 "cancels, so do not keep it", 1 + math.ceil(
                     math.log(eps * (1 - a * a)) / (2 * la)))]

    def whole(name, answer, expected, **options):
        res = check_scalar(name, answer, expected, **options)
        value = np.asarray(answer)
        if res.passed and (value.size != 1 or not np.isfinite(value).all()
                           or float(value.reshape(())) != round(float(value.reshape(())))):
            return report(name, "wrong", f"yours {float(value.reshape(())):.6g} is not a whole "
                          "number of lags: the smallest l is an integer, round up with ceil",
                          options.get("verbose", True))
        return res

    return check_function("memory length of a scalar system", memory_of,
                          lambda **case: _toolkit_memory(case), given_cases(cases) or _MEMORY_CASES,
                          compare=whole, causes=causes, rtol=0, atol=0.5,
                          time_limit=time_limit, verbose=verbose)


def _region_cases() -> list[dict[str, Any]]:
    """The cases of exercise 3: every region, both end points of Region B (as floats, at
    ``T = 1024``, and exactly, at ``T = 2^16``), beyond both ends."""
    from ..systems import eigenvalue_regions

    T, q = 1024, 7 / 8
    r = eigenvalue_regions(T, q)
    lams = [0.5, 0.95 * r.good_threshold + 0.05 * r.region_a[0].low, r.good_threshold,
            0.5 * (r.good_threshold + r.marginal_threshold), r.marginal_threshold,
            1 - 1e-9, 1.0, 1.01, 0.85, -0.5]
    cases = [{"lam": float(v), "T": T, "q": q} for v in lams]
    cases.append({"lam": 0.999, "T": 2**14, "q": 1 / 2})
    # an end point every route computes exactly: T = 2^16, 1 - 1/(2 T^(5/4)) = 1 - 2^-21
    cases.append({"lam": 1 - 2.0**-21, "T": 2**16, "q": 7 / 8})
    return cases


_LABELS = ("A-left", "B", "A-right", "outside")


class _OneOf(str):
    """The expected label of a case at an end point that floats cannot represent exactly;
    ``accepted`` holds the labels on both sides of it (a student's own computation of the
    end point may differ from the toolkit's by one rounding)."""

    accepted: frozenset[str] = frozenset()


def _inexact_end(lam: float, T: int, q: float) -> bool:
    """Is ``lam`` an end point of Region B that is not exact in floating point? The left end
    ``1 - log T / (8 T^q)`` never is (a logarithm); the right end ``1 - 1/(2 T^{5/4})`` is
    exact when ``T^{5/4}`` is a power of two (``T = 2^{4k}``)."""
    from ..systems import eigenvalue_regions

    r = eigenvalue_regions(T, q)
    if lam == r.good_threshold:
        return True
    exact = float(T).is_integer() and T > 0 and (int(T) & (int(T) - 1)) == 0 and \
        (int(T).bit_length() - 1) % 4 == 0
    return lam == r.marginal_threshold and not exact


def _expected_region(case: dict[str, Any]) -> str:
    label = _OneOf(_toolkit_region(case))
    if _inexact_end(case["lam"], case["T"], case["q"]):
        label.accepted = frozenset(
            _toolkit_region(dict(case, lam=float(np.nextafter(case["lam"], d))))
            for d in (-np.inf, np.inf)) | {str(label)}
    return label


def _compare_region(name: str, answer: Any, expected: str, **options: Any) -> CheckResult:
    """:func:`check_equal`, with either side's label passing at an inexact end point."""
    accepted: frozenset[str] = getattr(expected, "accepted", frozenset())
    if isinstance(answer, str) and answer not in _LABELS:
        return report(name, "wrong", f"yours {answer!r}: answer with one of the labels "
                      f"{', '.join(map(repr, _LABELS))}", options.get("verbose", True))
    if isinstance(answer, str) and answer in accepted:
        return check_equal(name, answer, answer, verbose=options.get("verbose", True))
    return check_equal(name, answer, str(expected), **options)


def check_region(region_of, *, verbose: bool = True,
                 cases: list[dict[str, Any]] | None = None,
                 time_limit: float | None = DEFAULT_TIME_LIMIT) -> CheckResult:
    """Check ``region_of(lam, T, q)`` (exercise 3) on eigenvalues in every region and at end
    points.

    An end point that floats cannot represent (Region B's left end, a logarithm) may sit one
    rounding off the student's own computation of it: there either neighbouring label passes
    (the tolerance the maths allows). The right end ``1 - 1/(2 T^{5/4}) = 1 - 2^{-21}`` of
    ``T = 2^16`` is exact in every route, and Region B's openness is checked there.
    """
    def causes(lam, T, q):
        expected = _toolkit_region({"lam": lam, "T": T, "q": q})
        out = []
        if expected == "outside":
            out += [("the regions end at 1 and start at 0.9 x the left end of Region B", v)
                    for v in ("A-left", "B", "A-right")]
        if expected in ("A-left", "A-right"):
            out.append(("an end point: Region B is open, its end points belong to Region A",
                        "B"))
        if expected == "B":
            out += [("Region B's left end depends on q: 1 - log T / (8 T^q), natural log", v)
                    for v in ("A-left", "outside")]
        return out

    return check_function("region of an eigenvalue", region_of, by_case(_expected_region),
                          given_cases(cases) or _region_cases(), compare=_compare_region,
                          causes=causes,
                          time_limit=time_limit, verbose=verbose)


# The interpretation question: multiple choice, the right choice kept as a digest (the
# package holds no answer in the clear); each wrong choice has its own hint.
INTERPRETATION = ChoiceQuestion(
    key="lesson01.interpretation",
    question=("Three systems have one real eigenvalue each: 0.99, 0.999 and 0.99999. A "
              "predictor sees the last T^q = 1024^(7/8) (about 430) inputs of a stream of "
              "T = 1024. Which eigenvalue is the hard one for it, and why?"),
    choices={
        "a": "0.99: its response is the largest at short lags",
        "b": "0.999: its memory (about 3450 lags) is longer than the context, yet its "
             "response still decays within T: Region B",
        "c": "0.99999: its memory is the longest of the three, so it is the hardest",
        "d": "none: a linear system is equally easy to predict whatever its eigenvalue",
    },
    digest="8e4a5c593ff8dd68226d65242c827e24ffea665520e1de71228262ccf9b89898",
    hints={
        "a": "memory_of(0.99, 1e-3) is about 345 lags: within the context of about 430, "
             "Region A (left); the predictor sees all of it",
        "c": "1 - 0.99999 is below 1/(2 T^(5/4)): Region A (right). Over T = 1024 its "
             "response is almost flat, and predicting y_t from y_(t-1) takes care of it",
        "d": "linearity does not make memory equal: the memory grows like 1/(1 - |λ|), and "
             "what matters is how it compares with the context and with T",
    },
    minutes=5)


def check_interpretation(interpretation, *, verbose: bool = True) -> CheckResult:
    """Check the interpretation question's answer (a letter, :data:`INTERPRETATION`)."""
    return INTERPRETATION.check(interpretation, verbose=verbose)


def pair_system(modulus: float, angle: float):
    """A discrete system with the eigenvalues ``modulus · e^{±i angle}`` (a rotation scaled
    by ``modulus``; a single real mode when ``angle = 0``), ``B = (1, 0)ᵀ``, ``C = (1, 0)``."""
    from .._validation import check_real
    from ..systems import LDS

    modulus = check_real("modulus", modulus, low=0.0)
    angle = check_real("angle", angle)
    c, s = np.cos(angle), np.sin(angle)
    A = modulus * np.array([[c, -s], [s, c]])
    return LDS(A, [[1.0], [0.0]], [[1.0, 0.0]], dt=1.0)


_LAGS = 2**19  # the slider's modulus goes to 0.99999: memory up to ~3.5e5 lags
# log-spaced bins of lags: the figure draws the range of h_t within each bin (every lag
# below ~30 is its own bin), a few hundred points instead of half a million
_EDGES = np.unique(np.geomspace(1, _LAGS, 300).astype(np.int64))
_EDGES = np.concatenate(([0], _EDGES[:-1]))


def _memory_axes(fig) -> dict[str, Any]:
    """The slider's axes and artists, made once (see :func:`memory_slider`)."""
    from ..systems import eigenvalue_regions

    regions = eigenvalue_regions(SLIDER_T, 7 / 8)
    ax1, ax2 = fig.subplots(1, 2, gridspec_kw={"width_ratios": [3, 2]})
    x = np.maximum(_EDGES, 0.5)
    (hi,) = ax1.plot(x, np.zeros(x.size), lw=0.9, color="C0")
    (lo,) = ax1.plot(x, np.zeros(x.size), lw=0.9, color="C0")
    mem_line = ax1.axvline(1, color="C3", ls="--", lw=1, label="memory $\\ell_{0.001}$")
    ax1.set_xscale("log")
    ax1.set_xlim(0.5, _LAGS)
    ax1.set_ylim(-1.05, 1.05)
    ax1.set_xlabel("lag t (range of $h_t$ within each log-spaced bin)")
    ax1.set_ylabel("$h_t$")
    ax1.legend(fontsize=7, loc="lower left")
    d_good = 1 - regions.good_threshold
    d_marg = 1 - regions.marginal_threshold
    ax2.axvspan(d_good, 1 - regions.region_a[0].low, color="C2", alpha=0.3, label="A (left)")
    ax2.axvspan(d_marg, d_good, color="C3", alpha=0.3, label="B")
    ax2.axvspan(1e-9, d_marg, color="C2", alpha=0.6, label="A (right)")
    where = ax2.axvline(0.01, color="k", lw=2)
    ax2.set_xscale("log")
    ax2.set_xlim(1, 1e-9)
    ax2.set_yticks([])
    ax2.set_xlabel(f"1 - |λ|   (T = {SLIDER_T}, q = 7/8)")
    ax2.legend(fontsize=7, loc="upper left")
    sparse_log_ticks(ax1)
    sparse_log_ticks(ax2)
    fig.subplots_adjust(left=0.07, right=0.98, bottom=0.17, top=0.88, wspace=0.12)
    return {"ax1": ax1, "ax2": ax2, "hi": hi, "lo": lo, "mem": mem_line, "where": where,
            "regions": regions, "moving": [hi, lo, mem_line, where, ax1.title, ax2.title]}


def pair_impulse_response(modulus: float, angle: float, length: int) -> np.ndarray:
    """``h_t`` of :func:`pair_system` in closed form: ``h_0 = 0``,
    ``h_t = |λ|^{t-1} cos((t-1) θ)`` (``A^k`` is ``|λ|^k`` times a rotation by ``kθ``)."""
    from .._validation import check_int, check_real

    length = check_int("length", length)
    modulus = check_real("modulus", modulus, low=0.0, low_inclusive=False)
    angle = check_real("angle", angle)
    k = np.arange(length - 1, dtype=float)
    return np.concatenate(([0.0], np.exp(k * np.log(modulus)) * np.cos(k * angle)))


@slider("lesson01.memory", title="Memory of the eigenvalue pair |λ|·exp(±iθ)",
        setup=_memory_axes,
        modulus=Param(0.5, 0.99999, 0.99, step=1e-5, label="|λ|"),
        angle=Param(0.0, 3.1416, 0.1, step=0.01, label="θ (rad)"))
def memory_slider(state, modulus: float, angle: float) -> dict[str, Any]:
    """Impulse response of :func:`pair_system` over 2^19 lags (its range within log-spaced
    bins), its memory ``ℓ_ε`` (ε = 1e-3, :func:`lds_toolkit.memory_length`), and
    ``1 - |λ|`` on the regions of ``T = 1024``."""
    from ..systems import memory_length

    h = pair_impulse_response(modulus, angle, _LAGS)
    mem = memory_length(pair_system(modulus, angle), eps=1e-3).length
    label = str(state["regions"].classify([modulus])[0])
    state["hi"].set_ydata(np.maximum.reduceat(h, _EDGES))
    state["lo"].set_ydata(np.minimum.reduceat(h, _EDGES))
    state["mem"].set_xdata([max(mem, 0.5)] * 2)
    state["where"].set_xdata([1 - modulus] * 2)
    state["ax1"].set_title(f"memory (99.9 % of the energy): {mem} lags", fontsize=9)
    state["ax2"].set_title(f"|λ| = {modulus:.6g}: {label}", fontsize=9)
    return {"memory": int(mem), "region": label, "1/(1-|λ|)": 1 / (1 - modulus)}


#: The graded checks of the lesson: the name of each answer in the notebook -> its check.
CHECKS: dict[str, Callable[..., CheckResult]] = {
    "impulse_response": check_impulse_response, "memory_of": check_memory_formula,
    "region_of": check_region, "interpretation": check_interpretation}


def summary(*, verbose: bool = True, **answers: Any) -> dict[str, Any]:
    """Run every graded check of the lesson on ``answers`` (:func:`run_checks`)."""
    return run_checks(CHECKS, answers, verbose=verbose)
