r"""Lesson 2 — discretisation conventions: the checks and the slider.

Exercises (``docs/lessons/02_discretisation.py``), for a continuous system
``ẋ = A x + B u``, ``y = C x + D u`` and a step ``Δ``, with ``M = (I - Δ/2 A)^{-1}``:

1. :func:`check_s4_bilinear` — S4's bilinear form (S4++ paper eqs. 3–6):
   ``Ā = M (I + Δ/2 A)``, ``B̄ = M B Δ``, for ``x_k = Ā x_{k-1} + B̄ u_k``, ``y_k = C x_k``
   (:func:`lds_toolkit.s4_bilinear`).
2. :func:`check_tustin` — Tustin as scipy and python-control define it: the same Ā, B̄ and
   ``C_d = C M``, ``D_d = D + C M B Δ/2`` for ``x_{k+1} = A_d x_k + B_d u_k``,
   ``y_k = C_d x_k + D_d u_k`` (:func:`lds_toolkit.discretize` ``"tustin"``).
3. :func:`check_tustin_from_s4` — from rest with ``D = 0`` the two outputs are related by
   ``y^tustin_k = (y^s4_k + y^s4_{k-1}) / 2`` (``y^s4_{-1} = 0``).

The slider ``lesson02.step`` moves ``Δ`` and shows where zero-order hold, Tustin and forward
Euler put the poles of a lightly damped system, and each method's frequency-response error
against the continuous system (python-control's ``frequency_response``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .calling import DEFAULT_TIME_LIMIT, given_cases
from .check import CheckResult, check_array, check_function, run_checks
from .questions import ChoiceQuestion
from .sliders import Param, slider, sparse_log_ticks

__all__ = ["CHECKS", "INTERPRETATION", "check_interpretation",
           "EXAMPLE", "check_s4_bilinear", "check_tustin", "check_tustin_from_s4",
           "summary"]

#: The lesson's example: a lightly damped oscillator (poles -0.2 ± 3i) and a slow real pole.
EXAMPLE = {
    "A": np.array([[0.0, 1.0, 0.0], [-9.04, -0.4, 1.0], [0.0, 0.0, -0.5]]),
    "B": np.array([[0.0], [0.0], [1.0]]),
    "C": np.array([[1.0, 0.0, 0.0]]),
    "D": np.array([[0.0]]),
}


def _lds(A, B, C, D):
    from ..systems import LDS

    return LDS(A, B, C, D)


# The expected values come from the toolkit's library, each route taking the case as one
# dict: no function of the package has an exercise's signature (see lesson01).


def _toolkit_s4_bilinear(case: dict[str, Any]) -> tuple[np.ndarray, np.ndarray]:
    """``(Ā, B̄)`` of :func:`lds_toolkit.s4_bilinear`."""
    from ..systems import s4_bilinear

    A, B, dt = case["A"], case["B"], case["dt"]
    n, m = np.shape(B)
    d = s4_bilinear(_lds(A, B, np.zeros((1, n)), np.zeros((1, m))), dt)
    return np.array(d.A), np.array(d.B)


def _toolkit_tustin(case: dict[str, Any]) -> tuple[np.ndarray, ...]:
    """``(A_d, B_d, C_d, D_d)`` of ``discretize(sys, dt, "tustin")``."""
    from ..systems import discretize

    A, B, C, D, dt = (case[k] for k in ("A", "B", "C", "D", "dt"))
    d = discretize(_lds(A, B, C, D), dt, "tustin")
    return np.array(d.A), np.array(d.B), np.array(d.C), np.array(d.D)


def _cases() -> list[dict[str, Any]]:
    rng = np.random.default_rng(2)
    A = rng.standard_normal((4, 4)) - 3 * np.eye(4)
    return [{"A": EXAMPLE["A"], "B": EXAMPLE["B"], "dt": 0.1},
            {"A": A, "B": rng.standard_normal((4, 2)), "dt": 0.35}]


def check_s4_bilinear(s4_discretize, *, verbose: bool = True,
                      cases: list[dict[str, Any]] | None = None,
                      time_limit: float | None = DEFAULT_TIME_LIMIT) -> CheckResult:
    """Check ``s4_discretize(A, B, dt) -> (A_bar, B_bar)`` (exercise 1).

    The two matrices are compared stacked side by side, ``[Ā | B̄]``. Recognises B̄ without
    the factor Δ, zero-order hold, forward Euler and the inverse on the wrong side."""
    def stacked(A, B, dt):
        Ab, Bb = _toolkit_s4_bilinear({"A": A, "B": B, "dt": dt})
        return np.hstack([Ab, Bb])

    def student(A, B, dt):
        out = s4_discretize(A, B, dt)
        if out is None or out is Ellipsis:
            return out
        Ab, Bb = out
        return np.hstack([np.atleast_2d(Ab), np.atleast_2d(Bb)])

    def causes(A, B, dt):
        from scipy.linalg import expm

        n = A.shape[0]
        inv = np.linalg.inv(np.eye(n) - dt / 2 * A)
        Ab = inv @ (np.eye(n) + dt / 2 * A)
        zoh = expm(np.block([[A, B], [np.zeros((B.shape[1], n + B.shape[1]))]]) * dt)
        return [("B̄ misses the factor Δ: B̄ = (I - Δ/2 A)^{-1} Δ B", np.hstack([Ab, inv @ B])),
                ("this is zero-order hold (e^{AΔ}, ∫e^{As}ds B), not the bilinear form",
                 zoh[:n]),
                ("this is forward Euler (I + Δ A, Δ B), not the bilinear form",
                 np.hstack([np.eye(n) + dt * A, dt * B])),
                ("B̄ = Δ B: the inverse multiplies B too, B̄ = M B Δ with M = (I - Δ/2 A)^{-1}",
                 np.hstack([Ab, dt * B])),
                ("the signs of the halves are swapped: yours is Ā^{-1}, the step backwards in "
                 "time (unstable for a stable A); the inverse is of I - Δ/2 A",
                 np.hstack([np.linalg.solve(np.eye(n) + dt / 2 * A, np.eye(n) - dt / 2 * A),
                            np.linalg.solve(np.eye(n) + dt / 2 * A, dt * B)])),
                ("Δ where the bilinear form has Δ/2: it averages the two ends of the step "
                 "(the trapezoidal rule), so each end gets half",
                 np.hstack([np.linalg.solve(np.eye(n) - dt * A, np.eye(n) + dt * A),
                            np.linalg.solve(np.eye(n) - dt * A, dt * B)])),
                ("this is backward Euler ((I - Δ A)^{-1}, (I - Δ A)^{-1} Δ B), not the bilinear "
                 "form", np.hstack([np.linalg.inv(np.eye(n) - dt * A),
                                    np.linalg.solve(np.eye(n) - dt * A, dt * B)]))]

    return check_function("S4 bilinear (Ā, B̄)", None if s4_discretize is None
                          or s4_discretize is Ellipsis else student, stacked,
                          given_cases(cases) or _cases(), causes=causes, rtol=1e-9, atol=1e-12,
                          time_limit=time_limit, verbose=verbose)


def check_tustin(tustin, *, verbose: bool = True, cases: list[dict[str, Any]] | None = None,
                 time_limit: float | None = DEFAULT_TIME_LIMIT) -> CheckResult:
    """Check ``tustin(A, B, C, D, dt) -> (Ad, Bd, Cd, Dd)`` (exercise 2), compared as the
    block matrix ``[[Ad, Bd], [Cd, Dd]]``. Recognises S4's form (C, D unchanged). A
    ``tustin`` that calls the student's ``s4_discretize`` (exercise 1) is checked with the
    toolkit's in its place, and the message says when exercise 1 is the cause."""
    rng = np.random.default_rng(3)
    cases = given_cases(cases)  # [] or a non-list: refused, naming cases
    cases = cases or [dict(c, C=rng.standard_normal((2, c["A"].shape[0])),
                           D=rng.standard_normal((2, c["B"].shape[1]))) for c in _cases()]

    def block(A, B, C, D, dt):
        Ad, Bd, Cd, Dd = _toolkit_tustin({"A": A, "B": B, "C": C, "D": D, "dt": dt})
        return np.block([[Ad, Bd], [Cd, Dd]])

    def student(A, B, C, D, dt):
        out = tustin(A, B, C, D, dt)
        if out is None or out is Ellipsis:
            return out
        Ad, Bd, Cd, Dd = (np.atleast_2d(np.asarray(m, dtype=float)) for m in out)
        return np.block([[Ad, Bd], [Cd, Dd]])

    student.__wrapped__ = tustin  # type: ignore[attr-defined]  # substitutes reach its globals

    def toolkit_s4(A, B, dt):
        return _toolkit_s4_bilinear({"A": A, "B": B, "dt": dt})

    def causes(A, B, C, D, dt):
        Ad, Bd, Cd, Dd = _toolkit_tustin({"A": A, "B": B, "C": C, "D": D, "dt": dt})
        Cm = C @ np.linalg.inv(np.eye(A.shape[0]) - dt / 2 * A)
        return [("C and D are unchanged: that is S4's form, read with y_k = C x_k after the "
                 "input entered x_k; Tustin's C_d = C M, D_d = D + C M B Δ/2",
                 np.block([[Ad, Bd], [C, D]])),
                ("D_d misses the term C M B Δ/2", np.block([[Ad, Bd], [Cd, D]])),
                ("D_d = D + C M B Δ (the factor is Δ/2)",
                 np.block([[Ad, Bd], [Cm, D + Cm @ B * dt]])),
                ("C_d = C Ā: the output map is C M with M = (I - Δ/2 A)^{-1}, not C Ā",
                 np.block([[Ad, Bd], [C @ Ad, Dd]])),
                ("M is in D_d too: D_d = D + C M B Δ/2, not D + C B Δ/2",
                 np.block([[Ad, Bd], [Cd, D + C @ B * dt / 2]])),
                ("C is unchanged: Tustin's output map changes too, C_d = C M",
                 np.block([[Ad, Bd], [C, Dd]]))]

    return check_function("Tustin (A_d, B_d, C_d, D_d)", None if tustin is None
                          or tustin is Ellipsis else student, block, cases,
                          causes=causes, rtol=1e-9, atol=1e-12, time_limit=time_limit,
                          substitutes={"s4_discretize": (toolkit_s4,
                                                         "exercise 1 (s4_discretize)")},
                          verbose=verbose)


def check_tustin_from_s4(tustin_from_s4, *, verbose: bool = True,
                         time_limit: float | None = DEFAULT_TIME_LIMIT) -> CheckResult:
    """Check ``tustin_from_s4(y_s4) -> y_tustin`` (exercise 3) on simulated outputs: the
    expected answer is the Tustin system's own simulation, not the formula."""
    from ..systems import discretize, s4_bilinear, simulate

    rng = np.random.default_rng(4)
    sysc = _lds(**EXAMPLE)
    u = rng.standard_normal((64, 1))
    y_s4 = simulate(s4_bilinear(sysc, 0.2), u, output="s4").y
    y_tustin = simulate(discretize(sysc, 0.2, "tustin"), u).y
    lag = np.concatenate([np.zeros((1, 1)), y_s4[:-1]])
    if tustin_from_s4 is None or tustin_from_s4 is Ellipsis:
        return check_array("Tustin output from the S4 output", None, y_tustin,
                           verbose=verbose)
    return check_function(
        "Tustin output from the S4 output", tustin_from_s4, lambda y_s4: y_tustin,
        [{"y_s4": y_s4}], rtol=1e-9, atol=1e-12, verbose=verbose, time_limit=time_limit,
        causes=[("the average with the next output y_{k+1} instead of the previous one",
                 0.5 * (y_s4 + np.concatenate([y_s4[1:], np.zeros((1, 1))]))),
                ("the S4 output delayed by one step, without the average", lag),
                ("y_{-1} must be 0 (the system starts at rest), not y_0",
                 0.5 * (y_s4 + np.concatenate([y_s4[:1], y_s4[:-1]]))),
                ("np.roll wraps the last output round to k = 0; y_{-1} = 0 (the system starts "
                 "at rest)", 0.5 * (y_s4 + np.roll(y_s4, 1, axis=0))),
                ("the average has the factor 1/2: (y_k + y_{k-1}) / 2", 2 * y_tustin),
                ("a difference: Tustin's output is the average of y^s4_k and y^s4_{k-1}",
                 0.5 * (y_s4 - lag))])


# The interpretation question: multiple choice, the right choice kept as a digest (the
# package holds no answer in the clear); each wrong choice has its own hint.
INTERPRETATION = ChoiceQuestion(
    key="lesson02.interpretation",
    question=("Move Δ from 0.01 to 1 on the slider (poles -0.2 ± 3i and -0.5). Which method "
              "puts a pole outside the unit circle, and from which step on?"),
    choices={
        "a": "zero-order hold, once Δ passes about 0.5: e^{pΔ} grows with Δ",
        "b": "Tustin, once Δ passes the Nyquist limit π/3 of the resonance",
        "c": "forward Euler, from Δ ≈ 2|Re p|/|p|² ≈ 0.044 on: |1 + pΔ|² = 1 - 0.4Δ + 9.04Δ² "
             "exceeds 1 for the lightly damped pair",
        "d": "forward Euler, but only beyond Δ = 2/|p| ≈ 0.66, the limit of a real pole",
    },
    digest="6d0b6f12f784732a0747f35bb70708026160141625fcd3df4bd9867fc81b98f0",
    hints={
        "a": "|e^{pΔ}| = e^{Re p · Δ} < 1 for every Δ when Re p < 0: zero-order hold never "
             "destabilises a stable system (see max |z| zoh on the slider)",
        "b": "Tustin maps the whole left half plane into the unit disc, for every Δ; it warps "
             "frequencies, it does not destabilise",
        "d": "2/|p| is the limit for a real pole; for a complex pair |1 + pΔ|² = 1 + 2 Re p Δ "
             "+ |p|² Δ², which exceeds 1 as soon as Δ > 2|Re p|/|p|²",
    },
    minutes=5)


def check_interpretation(interpretation, *, verbose: bool = True) -> CheckResult:
    """Check the interpretation question's answer (a letter, :data:`INTERPRETATION`)."""
    return INTERPRETATION.check(interpretation, verbose=verbose)


#: The graded checks of the lesson: the name of each answer in the notebook -> its check.
CHECKS: dict[str, Callable[..., CheckResult]] = {
    "s4_discretize": check_s4_bilinear, "tustin": check_tustin,
    "tustin_from_s4": check_tustin_from_s4, "interpretation": check_interpretation}


def summary(*, verbose: bool = True, **answers: Any) -> dict[str, Any]:
    """Run every graded check of the lesson on ``answers`` (:func:`run_checks`)."""
    return run_checks(CHECKS, answers, verbose=verbose)


# --------------------------------------------------------------------------- slider

#: The slider's frequency grid (rad/s): up to the Nyquist frequency π/Δ of the smallest Δ;
#: each Δ shows the part below its own Nyquist frequency.
_OMEGA = np.geomspace(0.05, np.pi / 0.01, 400)


def frequency_response(system, omega) -> np.ndarray:
    """``H(e^{iωΔ}) = C (e^{iωΔ} I - A)^{-1} B + D`` of a discrete single-input
    single-output system on the frequencies ``omega``, through the eigenvalues of A
    (diagonalisable A; ``n`` solves of size n otherwise avoided)."""
    from .._validation import as_float_array
    from ..systems.lds import require_discrete

    system = require_discrete(system, "system")
    omega = as_float_array("omega", omega)
    lam, V = np.linalg.eig(system.A)
    left = (system.C @ V).ravel()
    right = np.linalg.solve(V, system.B).ravel()
    z = np.exp(1j * np.asarray(omega) * system.dt)
    return (left * right / (z[:, None] - lam)).sum(axis=1) + system.D[0, 0]


def _step_axes(fig) -> dict[str, Any]:
    import control

    sysc = _lds(**EXAMPLE)
    poles = np.linalg.eigvals(EXAMPLE["A"])
    ax1, ax2 = fig.subplots(1, 2, gridspec_kw={"width_ratios": [2, 3]})
    th = np.linspace(0, 2 * np.pi, 720)
    ax1.plot(np.cos(th), np.sin(th), color="0.6", lw=0.8)
    markers = {}
    for key, style in (("zoh", "o"), ("tustin", "x"), ("euler", "^")):
        (markers[key],) = ax1.plot(np.zeros(poles.size), np.zeros(poles.size), style,
                                   ls="none", label=key, ms=6, mfc="none")
    ax1.set_aspect("equal")
    ax1.set_xlabel("Re z (zoomed on z = 1)")
    ax1.set_ylabel("Im z")
    ax1.legend(fontsize=7, loc="lower left")
    lines = {}
    for key in ("zoh", "tustin", "euler"):
        (lines[key],) = ax2.plot(_OMEGA, np.ones(_OMEGA.size), lw=1, label=key)
    ax2.axvline(3.0, color="0.5", ls=":", lw=1)
    ax2.set_xscale("log")
    ax2.set_yscale("log")
    ax2.set_ylim(1e-6, 1e3)
    sparse_log_ticks(ax2)
    ax2.set_xlabel("ω (rad/s), up to the Nyquist frequency π/Δ; dotted: the resonance")
    ax2.set_ylabel("relative error of $H_d$")
    ax2.legend(fontsize=7, loc="upper left")
    fig.subplots_adjust(left=0.07, right=0.98, bottom=0.17, top=0.88, wspace=0.3)
    h_c = control.frequency_response(sysc, _OMEGA).complex.ravel()  # python-control's
    ax2.set_xlim(0.05, np.pi / 0.01)  # fixed (the slider's smallest Δ): each curve ends
    # at its own Nyquist frequency π/Δ; the pole plot zooms with Δ, so it is redrawn whole
    return {"ax1": ax1, "ax2": ax2, "markers": markers, "lines": lines, "sys": sysc,
            "h_c": h_c, "moving": [ax1, *lines.values(), ax2.title]}


@slider("lesson02.step", title="Sampling step Δ: poles and frequency-response error",
        setup=_step_axes, dt=Param(0.01, 1.0, 0.1, log=True, label="Δ"))
def step_slider(state, dt: float) -> dict[str, Any]:
    """Poles of zoh (``e^{pΔ}``), Tustin (``(1 + pΔ/2)/(1 - pΔ/2)``) and forward Euler
    (``1 + pΔ``) of :data:`EXAMPLE`, each from :func:`lds_toolkit.discretize`; and the
    relative error ``|H_d(e^{iωΔ}) - H(iω)| / |H(iω)|`` of each discrete frequency response
    against python-control's continuous one (``control.frequency_response``, computed once)
    for ``ω`` up to ``π/Δ``."""
    from ..systems import discretize

    below = _OMEGA <= np.pi / dt
    omega = _OMEGA[below]
    h_c = state["h_c"][below]
    numbers: dict[str, Any] = {}
    for key in ("zoh", "tustin", "euler"):
        d = discretize(state["sys"], dt, key)
        z = np.linalg.eigvals(d.A)
        state["markers"][key].set_data(z.real, z.imag)
        err = np.abs(frequency_response(d, omega) - h_c) / np.abs(h_c)
        state["lines"][key].set_data(omega, np.maximum(err, 1e-12))
        numbers[f"max |z| {key}"] = float(np.abs(z).max())
        numbers[f"error at ω=3 {key}"] = float(np.interp(np.log(3.0), np.log(omega), err))
    # zoom on z = 1, where the poles sit for small Δ; the unit circle stays in view
    zs = [np.asarray(m.get_xdata()) + 1j * np.asarray(m.get_ydata())
          for m in state["markers"].values()]
    w = min(1.6, max(0.05, 1.3 * max(np.abs(z - 1).max() for z in zs)))
    state["ax1"].set_xlim(1 - w, 1 + w)
    state["ax1"].set_ylim(-w, w)
    stable = numbers["max |z| euler"] < 1
    state["ax1"].set_title(f"Δ = {dt:.3g}: forward Euler is "
                           f"{'stable' if stable else 'UNSTABLE'}", fontsize=9)
    state["ax2"].set_title("error against python-control's continuous response", fontsize=9)
    return numbers
