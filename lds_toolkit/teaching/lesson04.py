r"""Lesson 4 — event-triggered control and the NSS perturbation: the checks and the slider.

Exercises (``docs/lessons/04_etc_and_nss.py``), for the S4++ paper's loop
``ẋ = A x + B K x(t_i)`` on ``[t_i, t_{i+1})`` with its certificate ``(P, M)``:

1. :func:`check_trigger` — eq. 12's triggering function
   ``g = κ xᵀMx - 2 xᵀ P B K e`` with ``e = x(t_i) - x`` (eq. 9;
   :class:`lds_toolkit.control.LyapunovRule`).
2. :func:`check_first_event` — the first event on the grid ``t = k h``: flow
   ``z = (x, x(t_i))`` exactly with ``e^{A_z h}``, ``A_z = [[A, BK], [0, 0]]``, and stop at the
   first ``k`` with ``g ≤ 0`` (:func:`lds_toolkit.simulate_etc`, ``mode="grid"``).
3. :func:`check_replay` — the open-loop replay of held inputs ``u_i`` on
   ``[t_i, t_{i+1})`` through ``ẋ = A x + B u``, exactly by zero-order hold between the
   switching instants (:func:`lds_toolkit.control.nss.replay_open_loop`).

The slider ``lesson04.etc`` moves κ (number of events of the grid-monitored loop) and the
perturbation size ε of the instants at which the recorded inputs are replayed (the NSS
example, S4++ Fig. 1): the replay's ``max |x|`` on ``[0, 10]``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .calling import DEFAULT_TIME_LIMIT, by_case, given_cases
from .check import CheckResult, check_function, check_scalar, run_checks
from .questions import ChoiceQuestion
from .sliders import Param, slider, sparse_log_ticks

__all__ = ["CHECKS", "INTERPRETATION", "check_interpretation",
           "check_first_event", "check_replay", "check_trigger", "summary"]


def _system():
    from ..control import paper_system

    return paper_system()


def _toolkit_trigger(case: dict[str, Any]) -> float:
    """Eq. 12's function at one point, from :class:`LyapunovRule` on the paper's system
    (whose ``P, M, B, K`` the exercise's cases pass)."""
    x, e, P, M, B, K, kappa = (case[k] for k in ('x', 'e', 'P', 'M', 'B', 'K', 'kappa'))
    from ..control import LyapunovRule

    x, e = np.asarray(x, float), np.asarray(e, float)
    sys = _system()
    if not (np.allclose(P, sys.P) and np.allclose(M, sys.M) and np.allclose(B, sys.B)
            and np.allclose(K, sys.K)):
        raise ValueError("the toolkit's trigger is defined for the paper's system only: P, "
                         "M, B, K must be paper_system()'s")
    rule = LyapunovRule(kappa)
    return float(rule.function(sys, np.zeros(1), x[None, :], e[None, :], None)[0])


def check_trigger(trigger, *, verbose: bool = True,
                  cases: list[dict[str, Any]] | None = None,
                  time_limit: float | None = DEFAULT_TIME_LIMIT) -> CheckResult:
    """Check ``trigger(x, e, P, M, B, K, kappa) -> float`` (exercise 1) at five points."""
    sys = _system()
    rng = np.random.default_rng(8)
    mats = {"P": np.asarray(sys.P), "M": np.asarray(sys.M), "B": np.asarray(sys.B),
            "K": np.asarray(sys.K)}
    cases = given_cases(cases)  # [] or a non-list: refused, naming cases
    cases = cases or [dict(mats, x=rng.standard_normal(2), e=rng.standard_normal(2) * s, kappa=k)
                      for s, k in ((0.0, 0.5), (1.0, 0.3), (0.1, 0.5), (0.5, 0.9),
                                   (2.0, 0.1))]

    def causes(x, e, P, M, B, K, kappa):
        xm = float(x @ M @ x)
        cross = float(x @ P @ B @ K @ e)
        return [("the factor 2 of the cross term is missing", kappa * xm - cross),
                ("the sign of the cross term: eq. 12 subtracts 2 xᵀPBKe", kappa * xm + 2 * cross),
                ("κ multiplies xᵀMx only, not the cross term", kappa * (xm - 2 * cross)),
                ("the cross term is xᵀPBKe, not eᵀPBKx: PBK is not symmetric",
                 kappa * xm - 2 * float(e @ P @ B @ K @ x)),
                ("xᵀMx with the certificate's M, not |x|²", kappa * float(x @ x) - 2 * cross),
                ("κ xᵀMx: the decrease is measured with M, not with xᵀPx",
                 kappa * float(x @ P @ x) - 2 * cross)]

    return check_function("trigger function (eq. 12)", trigger, by_case(_toolkit_trigger),
                          cases, compare=check_scalar, causes=causes, rtol=1e-10, atol=1e-12,
                          time_limit=time_limit, verbose=verbose)


def _toolkit_first_event(case: dict[str, Any]) -> float:
    """The first triggered event of ``simulate_etc(paper_system(), LyapunovRule(kappa), x0,
    mode="grid", grid_step=h)`` (``inf`` if none within 10 time units)."""
    kappa, x0, h = (case[k] for k in ('kappa', 'x0', 'h'))
    from ..control import LyapunovRule, simulate_etc

    res = simulate_etc(_system(), LyapunovRule(kappa), np.asarray(x0, float), horizon=10.0,
                       mode="grid", grid_step=h)
    return float(res.event_times[0]) if res.n_events else float("inf")


def check_first_event(first_event, *, verbose: bool = True,
                      cases: list[dict[str, Any]] | None = None,
                      time_limit: float | None = DEFAULT_TIME_LIMIT) -> CheckResult:
    """Check ``first_event(kappa, x0, h) -> t_1`` (exercise 2) on three settings.

    The student's ``first_event`` calls their ``trigger`` (exercise 1): it is checked with the
    toolkit's trigger in its place (one slip costs one point), and the message says when
    exercise 1 is the cause. Forward Euler (``I + h A_z`` for ``e^{A_z h}``) lags the exact
    flow by one grid step on these cases, so the hint for an event one step late names both;
    the sign of ``e``, ``e^{A_z} h``, a held state that moves and ``u = K x(t)`` have their own.
    """
    cases = given_cases(cases)  # [] or a non-list: refused, naming cases
    cases = cases or [{"kappa": 0.2, "x0": np.array([0.3, -1.0]), "h": 0.005},
                      {"kappa": 0.5, "x0": np.array([1.0, 0.0]), "h": 0.01},
                      {"kappa": 0.9, "x0": np.array([-1.0, 2.0]), "h": 0.02}]

    def causes(kappa, x0, h):
        t1 = _toolkit_first_event({"kappa": kappa, "x0": x0, "h": h})
        return [("one grid step late: the event is the first k h at which g ≤ 0, not the "
                 "step after it (forward Euler, z + h A_z z, lags the exact flow e^{A_z h} "
                 "and gives the same)", t1 + h),
                ("one grid step early: the event is at k h after the k-th step (count the "
                 "steps from 1)", t1 - h),
                *((text, _first_event_slip(kappa, x0, h, slip)) for slip, text in (
                    ("error sign", "e = x(t_i) − x (eq. 9): the held state minus the current "
                                   "one"),
                    ("expm outside", "e^{A_z h}: scale A_z by h inside the exponential, "
                                     "not the result"),
                    ("not held", "the lower half of z, the held state x(t_i), must stay "
                                 "constant between events: A_z's bottom rows are zero"),
                    ("continuous feedback", "A_z = [[A, BK], [0, 0]]: the input is held "
                                            "at K x(t_i) between events, not K x(t)"))),
                ("forward Euler: z ← (I + h A_z) z is not the exact flow; step with "
                 "e^{A_z h} (scipy.linalg.expm)", _euler_first_event(kappa, x0, h))]

    def toolkit_trigger(x, e, P, M, B, K, kappa):
        return _toolkit_trigger({"x": x, "e": e, "P": P, "M": M, "B": B, "K": K,
                                 "kappa": kappa})

    return check_function("first event on the grid", first_event,
                          by_case(_toolkit_first_event), cases, compare=check_scalar,
                          causes=causes, rtol=1e-9, atol=1e-9, time_limit=time_limit,
                          substitutes={"trigger": (toolkit_trigger, "exercise 1 (trigger)")},
                          verbose=verbose)


def _first_event_slip(kappa: float, x0, h: float, slip: str) -> float:
    """The first grid event as a common wrong answer computes it (for the hints): ``slip`` is
    ``"error sign"`` (``e = x - x_i``), ``"expm outside"`` (``e^{A_z} h`` as the step),
    ``"not held"`` (the held state reset to the state every step) or ``"continuous
    feedback"`` (``x`` flows with ``A + BK``, the held state stays at ``x0``)."""
    from scipy.linalg import expm

    slips = ("error sign", "expm outside", "not held", "continuous feedback")
    if slip not in slips:
        raise ValueError(f"slip must be one of {slips}, got {slip!r}")
    sys = _system()
    A, B, K, P, M = (np.asarray(m, float) for m in (sys.A, sys.B, sys.K, sys.P, sys.M))
    x0 = np.asarray(x0, float)
    n = x0.size
    Az = np.block([[A + B @ K, np.zeros((n, n))] if slip == "continuous feedback"
                   else [A, B @ K], [np.zeros((n, 2 * n))]])
    step = expm(Az) * h if slip == "expm outside" else expm(Az * h)
    z = np.r_[x0, x0]  # (x, x_i), the held state equal to the state at t = 0
    sign = -1.0 if slip == "error sign" else 1.0
    steps = int(round(10.0 / h))
    for k in range(1, steps + 1):
        z = step @ z
        if slip == "not held":
            z[n:] = z[:n]
        x, e = z[:n], sign * (z[n:] - z[:n])
        if kappa * x @ M @ x - 2 * x @ P @ B @ K @ e <= 0:
            return k * h
    return float("inf")


def _euler_first_event(kappa: float, x0, h: float) -> float:
    """The first grid event when the loop is stepped by forward Euler (the wrong answer
    :func:`check_first_event` recognises): all grid states ``(I + h A_z)^k z_0`` at once,
    then the first ``k`` whose trigger value is ``<= 0``."""
    sys = _system()
    A, B, K = (np.asarray(m, float) for m in (sys.A, sys.B, sys.K))
    P, M = np.asarray(sys.P, float), np.asarray(sys.M, float)
    n = A.shape[0]
    euler = np.eye(2 * n) + h * np.block([[A, B @ K], [np.zeros((n, 2 * n))]])
    steps = int(round(10.0 / h))
    states = np.empty((steps, 2 * n))
    states[0] = euler @ np.tile(np.asarray(x0, float), 2)
    for k in range(1, steps):
        states[k] = euler @ states[k - 1]
    x, held = states[:, :n], states[:, n:]
    g = kappa * np.einsum("ti,ij,tj->t", x, M, x) - 2 * np.einsum(
        "ti,ij,tj->t", x, P @ B @ K, held - x)
    hits = np.flatnonzero(g <= 0)
    return float((hits[0] + 1) * h) if hits.size else float("inf")


def _replay_slip(sample_times, inputs, t_end: float, slip: str) -> np.ndarray:
    """``x(t_end)`` of the open-loop replay as a common wrong answer computes it (for the
    hints): ``slip`` is ``"last not held"`` (stops at the last instant), ``"no input"``,
    ``"expm outside"`` (``e^{F} s`` for ``e^{F s}``), ``"spans from 0"`` (each span measured
    from ``t = 0``) or ``"from rest"`` (``x(0) = 0``)."""
    from scipy.linalg import expm

    slips = ("last not held", "no input", "expm outside", "spans from 0", "from rest")
    if slip not in slips:
        raise ValueError(f"slip must be one of {slips}, got {slip!r}")
    sys = _system()
    A, B = np.asarray(sys.A, float), np.asarray(sys.B, float)
    times = np.asarray(sample_times, float)
    u_all = np.atleast_2d(np.asarray(inputs, float))
    n, m = len(A), B.shape[1]
    F = np.block([[A, np.zeros_like(B) if slip == "no input" else B],
                  [np.zeros((m, n + m))]])
    x = np.zeros(n) if slip == "from rest" else np.array([1.0, 0.0])
    spans = list(zip(times, np.append(times[1:], t_end), u_all))
    for start, end, u in spans[:-1] if slip == "last not held" else spans:
        end = min(end, t_end)
        if end > start:
            s = end if slip == "spans from 0" else end - start
            E = expm(F) * s if slip == "expm outside" else expm(F * s)
            x = (E @ np.concatenate([x, u]))[:n]
    return x


def _toolkit_replay(case: dict[str, Any]) -> np.ndarray:
    """``x(t_end)`` of the paper plant's open-loop replay from ``x(0) = (1, 0)``
    (:func:`~lds_toolkit.control.nss.replay_open_loop`)."""
    sample_times, inputs, t_end = (case[k] for k in ('sample_times', 'inputs', 't_end'))
    from ..control.nss import replay_open_loop

    sys = _system()
    return replay_open_loop(sys.A, sys.B, np.asarray(sample_times, float),
                            np.asarray(inputs, float), np.array([1.0, 0.0]),
                            np.array([0.0, t_end]))[-1]


def check_replay(replay, *, verbose: bool = True,
                 cases: list[dict[str, Any]] | None = None,
                 time_limit: float | None = DEFAULT_TIME_LIMIT) -> CheckResult:
    """Check ``replay(sample_times, inputs, t_end) -> x(t_end)`` (exercise 3) on recorded ETC
    inputs replayed at their own and at perturbed instants."""
    from ..control import LyapunovRule, simulate_etc

    res = simulate_etc(_system(), LyapunovRule(0.5), [1.0, 0.0], horizon=4.0, mode="grid")
    times, inputs = np.asarray(res.sample_times), np.asarray(res.inputs)
    shifted = times.copy()
    shifted[1:] += np.random.default_rng(9).uniform(-0.005, 0.005, times.size - 1)
    # every case gets its own arrays (a student's in-place edit of one cannot reach another)
    cases = given_cases(cases)  # [] or a non-list: refused, naming cases
    cases = cases or [{"sample_times": times.copy(), "inputs": inputs.copy(), "t_end": 4.0},
                      {"sample_times": shifted, "inputs": inputs.copy(), "t_end": 4.0},
                      {"sample_times": times[:4].copy(), "inputs": inputs[:4].copy(),
                       "t_end": 2.5}]

    def causes(sample_times, inputs, t_end):
        from ..control.nss import replay_open_loop

        sys = _system()
        n = len(sample_times)
        # each input applied one interval late (held from t_{i+1} instead of t_i)
        late = replay_open_loop(sys.A, sys.B, sample_times,
                                np.vstack([np.zeros((1, inputs.shape[1])), inputs[:-1]]),
                                np.array([1.0, 0.0]), np.array([0.0, t_end]))[-1]
        slips = [(text, _replay_slip(sample_times, inputs, t_end, slip)) for slip, text in (
            ("last not held", "the last input is held too, from the last instant to t_end"),
            ("no input", "the held input drives the flow: the block [[A, B], [0, 0]] carries u "
                         "along with x"),
            ("expm outside", "e^{F s}: scale the block matrix by the span inside the "
                             "exponential, not the result"),
            ("spans from 0", "each span is t_{i+1} − t_i, not measured from t = 0"),
            ("from rest", "the replay starts from x(0) = (1, 0), not from rest"))]
        return ([("each input is applied one interval late (u_i must act on [t_i, t_{i+1}))",
                  late)] if n > 1 else []) + slips

    return check_function("open-loop replay x(t_end)", replay, by_case(_toolkit_replay),
                          cases, causes=causes, rtol=1e-7, atol=1e-9, time_limit=time_limit,
                          verbose=verbose)


# The interpretation question: multiple choice, the right choice kept as a digest (the
# package holds no answer in the clear); each wrong choice has its own hint.
INTERPRETATION = ChoiceQuestion(
    key="lesson04.interpretation",
    question=("Move ε from 1e-8 to 9e-3: the replay at perturbed instants reaches max |x| of "
              "about 8 at ε = 1e-8 and about 8e3 at ε = 1e-5, while the recorded loop stays "
              "near 1. What is going on?"),
    choices={
        "a": "the open-loop plant is unstable: a switching instant shifted by δ injects an "
             "error proportional to δ, which then grows like e^{λ_max t}; the closed loop "
             "corrects such errors, a replay of recorded inputs cannot (the NSS example)",
        "b": "round-off: the replay integrates with too coarse a step",
        "c": "the event-triggered loop itself is unstable; the replay only shows it",
        "d": "the loop has too few events: a smaller κ (more events) makes the replay robust",
    },
    digest="51c6441ff98542697ffef98ec91b15a7ebf7ac56228408785c52bab8ac8cccad",
    hints={
        "b": "the replay is exact (matrix exponentials between instants), and the unperturbed "
             "replay stays near 1: the growth comes from the shifts",
        "c": "the recorded loop's x stays bounded (max |x| original ≈ 1): the loop is stable",
        "d": "move κ down to 0.1: more events, and the perturbed replay still blows up",
    },
    minutes=5)


def check_interpretation(interpretation, *, verbose: bool = True) -> CheckResult:
    """Check the interpretation question's answer (a letter, :data:`INTERPRETATION`)."""
    return INTERPRETATION.check(interpretation, verbose=verbose)


#: The graded checks of the lesson: the name of each answer in the notebook -> its check.
CHECKS: dict[str, Callable[..., CheckResult]]
CHECKS = {"trigger": check_trigger, "first_event": check_first_event, "replay": check_replay,
          "interpretation": check_interpretation}


def summary(*, verbose: bool = True, **answers: Any) -> dict[str, Any]:
    """Run every graded check of the lesson on ``answers`` (:func:`run_checks`)."""
    return run_checks(CHECKS, answers, verbose=verbose)


# --------------------------------------------------------------------------- slider

_HORIZON = 10.0
_OUT_STEP = 0.05


def _etc_axes(fig) -> dict[str, Any]:
    ax1, ax2 = fig.subplots(1, 2)
    (x1,) = ax1.plot([], [], lw=1, label="$x_1$")
    (x2,) = ax1.plot([], [], lw=1, label="$x_2$")
    events = ax1.vlines([], 0, 1, color="0.6", lw=0.5)
    ax1.set_xlim(0, _HORIZON)
    ax1.set_ylim(-1.2, 1.2)
    ax1.set_xlabel("t")
    ax1.legend(fontsize=7, loc="upper right")
    t = np.arange(0, _HORIZON + 1e-9, _OUT_STEP)
    (orig,) = ax2.plot(t, np.ones_like(t), color="C0", lw=1, label="replay at $t_i$")
    (pert,) = ax2.plot(t, np.ones_like(t), color="C3", lw=1, label="replay at $t_i + δ_i$")
    ax2.set_yscale("log")
    ax2.set_ylim(1e-6, 1e12)
    sparse_log_ticks(ax2)
    ax2.set_xlabel("t")
    ax2.set_ylabel("|x(t)|, open loop")
    ax2.legend(fontsize=7, loc="upper left")
    fig.subplots_adjust(left=0.06, right=0.98, bottom=0.17, top=0.88, wspace=0.25)
    return {"ax1": ax1, "ax2": ax2, "x1": x1, "x2": x2, "events": events, "orig": orig,
            "pert": pert, "t": t, "cache": {},
            "moving": [x1, x2, events, orig, pert, ax1.title, ax2.title]}


@slider("lesson04.etc", title="Event-triggered control (κ) and the NSS replay (ε)",
        setup=_etc_axes,
        kappa=Param(0.05, 0.95, 0.5, step=0.01, label="κ"),
        epsilon=Param(1e-8, 9e-3, 5e-3, log=True, label="ε"))
def etc_slider(state, kappa: float, epsilon: float) -> dict[str, Any]:
    """The grid-monitored ETC loop (h = 0.01, eq. 12 with κ) of the paper's system from
    ``(1, 0)``, and the open-loop replay of its recorded inputs at the original instants and
    at instants shifted by ``δ_i ~ U(-ε, ε)`` (seed 0), on ``[0, 10]``."""
    from ..control import LyapunovRule, simulate_etc
    from ..control.nss import perturb_sample_times, replay_open_loop

    sys = _system()
    cache = state["cache"]
    if cache.get("kappa") != kappa:  # moving ε alone reuses the ETC run
        res = simulate_etc(sys, LyapunovRule(kappa), [1.0, 0.0], horizon=_HORIZON,
                           mode="grid", grid_step=0.01, output_step=_OUT_STEP)
        t = state["t"]
        x0 = np.array([1.0, 0.0])
        cache.update(kappa=kappa, res=res, orig=np.linalg.norm(replay_open_loop(
            sys.A, sys.B, res.sample_times, res.inputs, x0, t), axis=1))
    res = cache["res"]
    t = state["t"]
    perturbed = perturb_sample_times(res.sample_times, epsilon, rng=0, grid_step=0.01)
    x_p = replay_open_loop(sys.A, sys.B, perturbed, res.inputs, np.array([1.0, 0.0]), t)
    norm_p = np.linalg.norm(x_p, axis=1)
    state["x1"].set_data(res.t, res.x[:, 0])
    state["x2"].set_data(res.t, res.x[:, 1])
    state["events"].set_segments([[(s, -1.2), (s, 1.2)] for s in res.event_times])
    state["orig"].set_ydata(np.maximum(cache["orig"], 1e-300))
    state["pert"].set_ydata(np.maximum(norm_p, 1e-300))
    state["ax1"].set_title(f"κ = {kappa:.2f}: {res.n_events} events, shortest gap "
                           f"{res.min_inter_event:.3f}", fontsize=9)
    state["ax2"].set_title(f"ε = {epsilon:.2g}: max |x| = {norm_p.max():.3g} (perturbed), "
                           f"{cache['orig'].max():.3g} (original)", fontsize=9)
    return {"events": int(res.n_events), "min gap": float(res.min_inter_event),
            "max |x| perturbed": float(norm_p.max()),
            "max |x| original": float(cache["orig"].max())}
