r"""Lesson 8 — capstone: an SSM is an LDS. The checks and the slider (torch).

Exercises (``docs/lessons/08_ssm_is_an_lds.py``):

1. :func:`check_bilinear_modes` — the discrete modes of an S4D layer from its continuous
   ones: with ``z = Δ a`` (a continuous eigenvalue times the step, what
   ``layer.to_lds(continuous=True)`` holds), S4's bilinear map
   ``λ = (1 + z/2) / (1 - z/2)``; against :func:`lds_toolkit.s4_bilinear` (S4++ paper eq. 3).
2. :func:`check_certificate_rate` — the decay rate a quadratic Lyapunov function proves:
   solve ``Aᵀ P A - P = -I``, then ``ρ = sqrt(λ_max(P^{-1} Aᵀ P A))``; against
   :func:`lds_toolkit.discrete_certificate`.
3. :func:`check_region_counts` — how many modes fall in each region of
   :func:`lds_toolkit.eigenvalue_regions` by their modulus, as
   :func:`lds_toolkit.eigenvalue_map` places them.

The slider ``lesson08.rate`` runs a trained S4D layer at a different step (``rate``
multiplies every Δ) and shows where its modes move on the regions, its certificate and its
impulse response. The layer is the one the lesson hands over with :func:`use_layer`, or
(for tests and benchmarks) one trained by :func:`train_capstone` at the quick size.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from functools import lru_cache
from typing import Any

import numpy as np
import torch  # noqa: F401 - lesson 8 needs torch: without it the module is skipped

from ._figures import no_minor
from .calling import DEFAULT_TIME_LIMIT, by_case, given_cases
from .check import CheckResult, check_equal, check_function, check_scalar, run_checks
from .questions import ChoiceQuestion
from .sliders import Param, slider

__all__ = ["CHECKS", "INTERPRETATION", "check_interpretation",
           "summary", "check_bilinear_modes", "check_certificate_rate",
           "check_region_counts", "capstone_stream", "mapped_modes", "train_capstone",
           "use_layer"]

LABELS = ("A-left", "B", "A-right", "outside")


# ---------------------------------------------------------- exercise 1: bilinear modes
def _real_block_diagonal(z: np.ndarray) -> np.ndarray:
    """A real matrix with the eigenvalues ``z`` and their conjugates: a 2 x 2 rotation block
    ``[[Re z, -Im z], [Im z, Re z]]`` per complex entry, a 1 x 1 block per real one."""
    blocks = []
    for v in z:
        if v.imag == 0:
            blocks.append(np.array([[v.real]]))
        else:
            blocks.append(np.array([[v.real, -v.imag], [v.imag, v.real]]))
    n = sum(b.shape[0] for b in blocks)
    A = np.zeros((n, n))
    i = 0
    for b in blocks:
        A[i:i + b.shape[0], i:i + b.shape[0]] = b
        i += b.shape[0]
    return A


def _toolkit_bilinear_modes(case: dict[str, Any]) -> np.ndarray:
    """The toolkit's answer to exercise 1: discretise the real system with the modes ``z``
    with :func:`lds_toolkit.s4_bilinear` at step 1 and read each block's eigenvalue (the one
    in the half plane of ``z``), in the order of ``z``."""
    z = case['z']
    from ..systems import LDS, s4_bilinear

    z = np.atleast_1d(np.asarray(z, dtype=complex))
    A = _real_block_diagonal(z)
    n = A.shape[0]
    Ad = s4_bilinear(LDS(A, np.ones((n, 1)), np.ones((1, n)), dt=0), 1.0).A
    out, i = [], 0
    for v in z:
        size = 1 if v.imag == 0 else 2
        lam = np.linalg.eigvals(Ad[i:i + size, i:i + size])
        out.append(lam[np.argmax(np.sign(v.imag or 1.0) * lam.imag)] if size == 2
                   else complex(lam[0]))
        i += size
    return np.array(out)


def mapped_modes(continuous_modes) -> np.ndarray:
    """The discrete modes of exercise 1 for the cell after it (on the trained layer):
    ``s4_bilinear`` at step 1 of the real system with ``continuous_modes``."""
    from .._validation import as_float_array

    z = as_float_array("continuous_modes", continuous_modes, allow_complex=True)
    return _toolkit_bilinear_modes({"z": z})


def check_bilinear_modes(bilinear_modes, *, verbose: bool = True,
                         cases: list[dict[str, Any]] | None = None,
                         time_limit: float | None = DEFAULT_TIME_LIMIT) -> CheckResult:
    """Check ``bilinear_modes(z)`` (exercise 1) on S4D-Lin-like modes ``z = Δ(-1/2 + i π n)``
    at two steps, and on real and fast modes."""
    cases = given_cases(cases)  # [] or a non-list: refused, naming cases
    cases = cases or [{"z": 0.01 * (-0.5 + 1j * np.pi * np.arange(4))},
                      {"z": 0.3 * (-0.5 + 1j * np.pi * np.arange(1, 5))},
                      {"z": np.array([-1e-4 + 0j, -0.2 + 0j, -3.0 + 2.0j])}]

    def causes(z):
        z = np.asarray(z, dtype=complex)
        return [("that is the zero-order hold exp(z); S4's bilinear (Tustin) form is "
                 "(1 + z/2) / (1 - z/2)", np.exp(z)),
                ("that is forward Euler, 1 + z", 1 + z),
                ("the halves are missing: (1 + z/2) / (1 - z/2)", (1 + z) / (1 - z)),
                ("that is backward Euler, 1 / (1 - z)", 1 / (1 - z)),
                ("numerator and denominator are swapped", (1 - z / 2) / (1 + z / 2)),
                ("that is the conjugate of each mode: keep the sign of Im z (the mode of z, "
                 "not of its conjugate)", np.conj((1 + z / 2) / (1 - z / 2)))]

    return check_function("discrete modes (bilinear)", bilinear_modes,
                          by_case(_toolkit_bilinear_modes), cases, causes=causes, rtol=1e-10,
                          atol=1e-12, time_limit=time_limit, verbose=verbose)


# ------------------------------------------------------------- exercise 2: certificate
def _toolkit_certificate_rate(case: dict[str, Any]) -> float:
    """The toolkit's answer to exercise 2: ``discrete_certificate(A).rho``."""
    A = case['A']
    from ..control import discrete_certificate

    return float(discrete_certificate(np.asarray(A, dtype=np.float64)).rho)


def _certificate_cases() -> list[dict[str, Any]]:
    rng = np.random.default_rng(81)
    cases = []
    for n, radius in ((2, 0.9), (4, 0.99)):
        A = rng.standard_normal((n, n)) + 2 * np.triu(rng.standard_normal((n, n)), 1)
        cases.append({"A": A * radius / max(abs(np.linalg.eigvals(A)))})  # non-normal
    cases.append({"A": np.array([[0.5, 0.0], [0.0, -0.2]])})
    return cases


def check_certificate_rate(certificate_rate, *, verbose: bool = True,
                           cases: list[dict[str, Any]] | None = None,
                           time_limit: float | None = DEFAULT_TIME_LIMIT) -> CheckResult:
    """Check ``certificate_rate(A)`` (exercise 2) on two non-normal stable matrices (there
    the certified rate exceeds the spectral radius) and a diagonal one."""
    import scipy.linalg as sla

    def causes(A):
        A = np.asarray(A)
        P_t = sla.solve_discrete_lyapunov(A, np.eye(A.shape[0]))  # A P Aᵀ - P = -I
        P = sla.solve_discrete_lyapunov(A.T, np.eye(A.shape[0]))  # Aᵀ P A - P = -I
        rho2_t = float(sla.eigh(A.T @ P_t @ A, P_t, eigvals_only=True)[-1])
        rho2 = _toolkit_certificate_rate({"A": A}) ** 2
        return [("that is the spectral radius max |λ(A)|: the certificate's ρ is at least "
                 "that, and larger for a non-normal A", float(max(abs(np.linalg.eigvals(A))))),
                ("scipy's solve_discrete_lyapunov(a, q) solves a X aᴴ - X + q = 0: pass "
                 "a = A.T for Aᵀ P A - P = -I", float(np.sqrt(max(rho2_t, 0.0)))),
                ("that is ρ²: V(x) = xᵀPx contracts by ρ², the norm ||x||_P by ρ", rho2),
                ("the generalised problem is Aᵀ P A v = λ P v: eigh(Aᵀ P A, P), not "
                 "eigh(P, Aᵀ P A)", float(np.sqrt(sla.eigh(P, A.T @ P @ A,
                                                           eigvals_only=True)[-1]))),
                ("λ_max(Aᵀ P A) alone is not the ratio V(Ax) / V(x): divide by P (the "
                 "generalised eigenvalues of (Aᵀ P A, P))",
                 float(np.sqrt(np.linalg.eigvalsh(A.T @ P @ A)[-1]))),
                ("that is ||A||_2, the contraction in the Euclidean norm; the certificate "
                 "measures it in the P-norm", float(np.linalg.norm(A, 2)))]

    return check_function("certified decay rate", certificate_rate,
                          by_case(_toolkit_certificate_rate),
                          given_cases(cases) or _certificate_cases(),
                          compare=check_scalar, causes=causes, rtol=1e-8,
                          time_limit=time_limit, verbose=verbose)


# ------------------------------------------------------------ exercise 3: region counts
def _toolkit_region_counts(case: dict[str, Any]) -> dict[str, int]:
    """The toolkit's answer to exercise 3: ``eigenvalue_regions(T, q).classify(|λ|)``
    counted, with every label present (``eigenvalue_map``'s placement)."""
    eigenvalues, T, q = (case[k] for k in ('eigenvalues', 'T', 'q'))
    from ..systems import eigenvalue_regions

    labels = eigenvalue_regions(T, q).classify(np.abs(np.asarray(eigenvalues)))
    counts = Counter(str(x) for x in labels)
    return {k: int(counts.get(k, 0)) for k in LABELS}


def _counts(values, T: int, q: float) -> dict[str, int]:
    """Labels of ``values`` (as given: a slip's stand-in for ``|λ|``) counted, every label
    present (for the hints)."""
    from ..systems import eigenvalue_regions

    counts = Counter(str(x) for x in eigenvalue_regions(T, q).classify(np.asarray(values)))
    return {k: int(counts.get(k, 0)) for k in LABELS}


def check_region_counts(region_counts, *, verbose: bool = True,
                        cases: list[dict[str, Any]] | None = None,
                        time_limit: float | None = DEFAULT_TIME_LIMIT) -> CheckResult:
    """Check ``region_counts(eigenvalues, T, q)`` (exercise 3) on complex modes in every
    region and a negative one."""
    from ..systems import eigenvalue_regions

    r = eigenvalue_regions(256, 7 / 8)
    mods = [0.5, 0.5 * (r.region_a[0].low + r.good_threshold),
            0.5 * (r.good_threshold + r.marginal_threshold), 1 - 1e-7, 1.001]
    angles = [0.0, 0.3, 0.3, 0.0, 0.1]
    lam = np.array([m * np.exp(1j * a) for m, a in zip(mods, angles)])
    lam = np.r_[lam, np.conj(lam[1:3]), -0.5 * (r.good_threshold + r.marginal_threshold)]
    cases = given_cases(cases)  # [] or a non-list: refused, naming cases
    cases = cases or [{"eigenvalues": lam, "T": 256, "q": 7 / 8},
                      {"eigenvalues": lam[1:3].copy(), "T": 256, "q": 7 / 8},  # two empty
                      {"eigenvalues": lam[:4].copy(), "T": 2**14, "q": 1 / 2}]

    def causes(eigenvalues, T, q):
        expected = _toolkit_region_counts({"eigenvalues": eigenvalues, "T": T, "q": q})
        real = Counter(str(x) for x in eigenvalue_regions(T, q).classify(np.real(eigenvalues)))
        return [("the regions are about |λ| (how fast a mode is forgotten), not Re λ",
                 {k: int(real.get(k, 0)) for k in LABELS}),
                ("every label needs an entry, with 0 for an empty region",
                 {k: v for k, v in expected.items() if v}),
                ("count every eigenvalue: a complex pair is two modes",
                 _counts(np.abs(eigenvalues[np.imag(eigenvalues) >= 0]), T, q)),
                ("place each mode by |λ|, not |λ|²", _counts(np.abs(eigenvalues) ** 2, T, q)),
                ("|Re λ| is not |λ|: the modulus is sqrt(Re² + Im²)",
                 _counts(np.abs(np.real(eigenvalues)), T, q)),
                ("return a dict {label: count} with the four labels as keys, not a list",
                 [expected[k] for k in LABELS])]

    return check_function("modes per region", region_counts, by_case(_toolkit_region_counts),
                          cases, compare=check_equal, causes=causes, time_limit=time_limit,
                          verbose=verbose)


# ---------------------------------------------------------------- the capstone's data
def capstone_stream(T: int, n: int = 4, seed: int = 2024):
    """A symmetric LDS with ``n`` eigenvalues in Region A of ``(T, 7/8)``, a white-noise
    input and its stream ``simulate(..., output="lengen")``; returns ``(system, u, y)``."""
    from ..systems import eigenvalue_regions, random_lds, simulate

    rng = np.random.default_rng(seed)
    system = random_lds(n, eigenvalue_regions(T, 7 / 8).region_a, rng=rng)
    u = rng.standard_normal((T, 1))
    return system, u, simulate(system, u, output="lengen", return_states=False).y


def train_capstone(T: int = 1024, steps: int = 400, d_state: int = 8, seed: int = 0):
    """The lesson's recipe in one call: an S4D layer (one channel, identity activation, no
    output map, float64) trained to output ``y_{k+1}`` from ``u_0 .. u_k`` on
    :func:`capstone_stream`; returns ``(layer, system, fit)``."""
    from ..neural import S4, train
    from ..neural.tasks import SequenceTask

    system, u, y = capstone_stream(T)
    task = SequenceTask(inputs=u[None, :-1], targets=y[None, 1:],
                        mask=np.ones((1, T - 1), bool), eval_mask=np.ones((1, T - 1), bool),
                        name="capstone")
    layer = S4(1, d_state, activation="identity", output_linear=False, seed=seed).double()
    fit = train(layer, task, steps=steps, batch_size=1, lr=0.05, warmup=20,
                schedule="cosine", weight_decay=0.0, seed=seed, threads=1, progress=False)
    return layer, system, fit


_HANDED_OVER: dict[str, Any] = {}


def use_layer(layer, system, T: int) -> None:
    """Hand the lesson's trained layer, the true system and the horizon to the slider."""
    from .._validation import check_int

    _HANDED_OVER.update(layer=layer, system=system, T=check_int("T", T, 2))


@lru_cache(maxsize=1)
def _default_layer():
    layer, system, _ = train_capstone()
    return layer, system, 1024


def _slider_layer():
    if _HANDED_OVER:
        return _HANDED_OVER["layer"], _HANDED_OVER["system"], _HANDED_OVER["T"]
    return _default_layer()


def _rate_axes(fig) -> dict[str, Any]:
    """The slider's axes and the artists that do not move (regions, the true system), made
    once per figure for the layer handed over at that time (see :func:`rate_slider`)."""
    from ..systems import S4Recursion, eigenvalue_map, eigenvalue_regions

    layer, system, T = _slider_layer()
    regions = eigenvalue_regions(T, 7 / 8)
    ax1, ax2 = fig.subplots(1, 2)
    fig.subplots_adjust(left=0.08, right=0.98, bottom=0.16, top=0.88, wspace=0.25)
    lo = 1e-7
    gap, edge = 1 - regions.region_b.low, 1 - regions.region_b.high
    for a, b, color in ((lo, edge, "C2"), (edge, gap, "C3"),
                        (gap, 1 - regions.region_a[0].low, "C2")):
        ax1.axvspan(a, b, color=color, alpha=0.2, lw=0)
    true_modes = eigenvalue_map(system, T)
    ax1.plot(np.clip(1 - true_modes.modulus, lo, 1), np.ones(true_modes.modulus.size), "ko",
             mfc="none", ms=6)
    n_modes = layer.to_lds().n_states
    (learned,) = ax1.plot(np.full(n_modes, 0.5), np.zeros(n_modes), "C0s", mfc="none", ms=6)
    ax1.set(xscale="log", xlim=(lo, 1), ylim=(-0.6, 1.6), yticks=[0, 1],
            yticklabels=["learned", "true"], xlabel="1 - |λ|  (green: A, red: B)")
    impulse = np.zeros((4 * T, 1))
    impulse[0] = 1.0
    h_true = S4Recursion(system.A, system.B, system.C).simulate(impulse).y[:, 0]
    lags = np.arange(1, 4 * T + 1)
    ax2.plot(lags, h_true, "k", lw=1.5, label="true C A^l B")
    (response,) = ax2.plot(lags, h_true, "C0--", lw=1.2, label="layer")
    ax2.axvline(T, color="0.6", lw=0.8)
    span = float(np.ptp(h_true)) or 1.0
    ax2.set(xscale="log", xlabel="lag l + 1",
            ylim=(h_true.min() - 0.6 * span, h_true.max() + 0.6 * span))
    ax2.set_title("impulse responses (grey: the training length T)", fontsize=9)
    legend = ax2.legend(fontsize=7, loc="lower left")
    no_minor(ax1, ax2)
    return {"layer": layer, "T": T, "impulse": impulse, "h_true": h_true, "ax1": ax1,
            "learned": learned, "response": response, "legend": legend, "lo": lo,
            "moving": [learned, response, legend, ax1.title]}


@slider("lesson08.rate", title="The trained S4D layer at another step: modes, certificate",
        setup=_rate_axes, rate=Param(0.1, 10.0, 1.0, log=True, label="rate (Δ multiplier)"))
def rate_slider(state, rate: float) -> dict[str, Any]:
    """Left: 1 - |λ| of the layer's modes at ``rate`` (and of the true system) on the
    regions of (T, 7/8). Right: the layer's impulse response at ``rate`` against the true
    one (the coefficient of u_{t-1-l} in y_t, lags l = 0 .. 4T)."""
    from ..control import discrete_certificate
    from ..systems import eigenvalue_map, simulate

    T = state["T"]
    learned = state["layer"].to_lds(rate=rate)
    modes = eigenvalue_map(learned, T)
    cert = discrete_certificate(learned)
    state["learned"].set_xdata(np.clip(1 - modes.modulus, state["lo"], 1))
    h_layer = simulate(learned, state["impulse"]).y[:, 0]
    state["response"].set_ydata(h_layer)
    state["legend"].get_texts()[1].set_text(f"layer at rate {rate:.3g}")
    state["ax1"].set_title(f"modes at rate {rate:.3g}: certified ρ = {cert.rho:.6f}",
                           fontsize=9)
    h_true = state["h_true"]
    err = float(np.linalg.norm(h_layer[:T] - h_true[:T]) / np.linalg.norm(h_true[:T]))
    counts = modes.counts
    return {"ρ": cert.rho, "margin 1-ρ": cert.margin,
            "in A": counts["A-left"] + counts["A-right"], "in B": counts["B"],
            "outside": counts["outside"], "impulse error (first T)": err}


# The interpretation question: multiple choice, the right choice kept as a digest (the
# package holds no answer in the clear); each wrong choice has its own hint.
INTERPRETATION = ChoiceQuestion(
    key="lesson08.interpretation",
    question=("Run the trained layer at ten times its step (rate 10). The certificate still "
              "proves ρ < 1, with a margin 1 - ρ about ten times larger than at rate 1, but "
              "the impulse response is far from the true one. What does that say?"),
    choices={
        "a": "the certificate is wrong at rate 10: ρ < 1 cannot hold for a layer that is off",
        "b": "a larger step makes the layer more accurate, because it is more stable",
        "c": "stability is not accuracy: the bilinear map keeps every mode inside the unit "
             "circle for any Δ (1 - ρ grows about like Δ), but the modes move to where the "
             "true system's are not, so the layer is a stable model of another system",
        "d": "the modes left the unit circle, so the response diverges",
    },
    digest="083284f03382f811b0cea5c2c71c762f582350cd6b9784ce93481f7a1ccdf162",
    hints={
        "a": "ρ comes from a solved Lyapunov equation and bounds ||x_k||_P for every "
             "trajectory: it certifies stability, not closeness to the true system",
        "b": "the impulse error grows with the rate: more margin, less accuracy",
        "d": "the bilinear map sends Re z < 0 into |λ| < 1 for every step; ρ < 1 says so",
    },
    minutes=5)


def check_interpretation(interpretation, *, verbose: bool = True) -> CheckResult:
    """Check the interpretation question's answer (a letter, :data:`INTERPRETATION`)."""
    return INTERPRETATION.check(interpretation, verbose=verbose)


#: The graded checks of the lesson: the name of each answer in the notebook -> its check.
CHECKS: dict[str, Callable[..., CheckResult]]
CHECKS = {"bilinear_modes": check_bilinear_modes, "certificate_rate": check_certificate_rate,
          "region_counts": check_region_counts,
          "interpretation": check_interpretation}


def summary(*, verbose: bool = True, **answers: Any) -> dict[str, Any]:
    """Run every graded check of the lesson on ``answers`` (:func:`run_checks`)."""
    return run_checks(CHECKS, answers, verbose=verbose)
