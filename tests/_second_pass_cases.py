"""Issue 27's second pass: bad inputs to the public API that no earlier attack tried.

Each case is ``(id, call, names)``: ``call()`` must raise ``TypeError``/``ValueError`` (or a
subclass, or ``FloatingPointError``) whose message contains every string of ``names`` (the
argument, and where useful the range). :func:`classify` sorts an outcome into

* ``clear``: such an error, naming the argument;
* ``unclear``: another exception type, a message that does not name the argument, or a call
  still running after the time limit;
* ``silent``: the call returned (a wrong or meaningless result).

``tests/test_second_pass.py`` asserts every case is clear; run this module as a script for the
counts (``python -m tests._second_pass_cases``).
"""

from __future__ import annotations

import math
import signal
import warnings

import numpy as np

import lds_toolkit as L
from lds_toolkit import control as C
from lds_toolkit.learning import filters as F
from lds_toolkit.learning.regret import cumulative_loss
from lds_toolkit.systems import (
    era,
    hankel_matrix,
    impulse_fit_error,
    modal_form,
    zoh_matrices,
)

nan, inf = math.nan, math.inf
SYS = L.LDS([[0.5]], [[1.0]], [[1.0]], dt=1.0)
CONT = L.LDS([[-1.0]], [[1.0]], [[1.0]])
U = np.ones((8, 1))


def _numpy_cases():
    return [
        # ----------------------------------------------------------- LDS and systems
        ("LDS A nan", lambda: L.LDS([[nan]], [[1.0]], [[1.0]]), ["A"]),
        ("LDS A string", lambda: L.LDS("abc", [[1.0]], [[1.0]]), ["A"]),
        ("LDS B rows", lambda: L.LDS(np.eye(2), np.ones((3, 1)), np.ones((1, 2))), ["B"]),
        ("LDS C cols", lambda: L.LDS(np.eye(2), np.ones((2, 1)), np.ones((1, 3))), ["C"]),
        ("LDS D shape", lambda: L.LDS([[0.5]], [[1.0]], [[1.0]], np.ones((2, 2))), ["D"]),
        ("LDS dt negative", lambda: L.LDS([[0.5]], [[1.0]], [[1.0]], dt=-1.0), ["dt"]),
        ("LDS dt nan", lambda: L.LDS([[0.5]], [[1.0]], [[1.0]], dt=nan), ["dt"]),
        ("LDS dt string", lambda: L.LDS([[0.5]], [[1.0]], [[1.0]], dt="1"), ["dt"]),
        ("LDS complex A", lambda: L.LDS([[1j]], [[1.0]], [[1.0]]), ["A"]),
        ("LDS empty A", lambda: L.LDS(np.zeros((0, 0)), np.zeros((0, 1)), np.zeros((1, 0))),
         ["A"]),
        # a 1-D u is python-control's single-input convention (issue 25): refused for two inputs
        ("simulate u 1-D, two inputs",
         lambda: L.simulate(L.LDS(0.5 * np.eye(2), np.eye(2), np.eye(2), dt=1.0), np.ones(8)),
         ["u", "single-input"]),
        ("simulate u wrong d_in", lambda: L.simulate(SYS, np.ones((8, 2))), ["u", "d_in"]),
        ("simulate u empty", lambda: L.simulate(SYS, np.ones((0, 1))), ["u"]),
        ("simulate u inf", lambda: L.simulate(SYS, np.array([[1.0], [inf]])), ["u"]),
        ("simulate x0 shape", lambda: L.simulate(SYS, U, x0=np.ones(3)), ["x0"]),
        ("simulate output unknown", lambda: L.simulate(SYS, U, output="nope"), ["output"]),
        ("simulate method unknown", lambda: L.simulate(SYS, U, method="nope"), ["method"]),
        ("simulate noise negative", lambda: L.simulate(SYS, U, process_noise=-1.0),
         ["process_noise"]),
        ("simulate obs_noise nan", lambda: L.simulate(SYS, U, obs_noise=nan), ["obs_noise"]),
        ("simulate max_state_norm 0", lambda: L.simulate(SYS, U, max_state_norm=0.0),
         ["max_state_norm"]),
        ("simulate continuous system", lambda: L.simulate(CONT, U), ["discrete"]),
        ("simulate not a system", lambda: L.simulate("sys", U), ["system"]),
        ("simulate_continuous t decreasing",
         lambda: L.simulate_continuous(CONT, [0.0, 2.0, 1.0], np.ones((3, 1))), ["t"]),
        ("simulate_continuous t/u length",
         lambda: L.simulate_continuous(CONT, [0.0, 1.0], np.ones((3, 1))), ["u"]),
        ("simulate_continuous discrete system",
         lambda: L.simulate_continuous(SYS, [0.0, 1.0], np.ones((2, 1))), ["continuous"]),
        ("discretize dt 0", lambda: L.discretize(CONT, 0.0), ["dt"]),
        ("discretize dt inf", lambda: L.discretize(CONT, inf), ["dt"]),
        ("discretize method", lambda: L.discretize(CONT, 0.1, method="euler2"), ["method"]),
        ("discretize discrete system", lambda: L.discretize(SYS, 0.1), ["continuous"]),
        ("s4_bilinear dt negative", lambda: L.s4_bilinear(CONT, -0.1), ["dt"]),
        ("eigenvalue_regions T 1", lambda: L.eigenvalue_regions(1), ["T"]),
        ("eigenvalue_regions q -0.1", lambda: L.eigenvalue_regions(1024, -0.1), ["q"]),
        ("eigenvalue_regions q 2", lambda: L.eigenvalue_regions(1024, 2.0), ["q"]),
        ("eigenvalue_regions T float", lambda: L.eigenvalue_regions(1024.0), ["T"]),
        ("eigenvalue_map T 0", lambda: L.eigenvalue_map(SYS, 0), ["T"]),
        ("memory_length eps 0", lambda: L.memory_length(SYS, 0.0), ["eps"]),
        ("memory_length eps 2", lambda: L.memory_length(SYS, 2.0), ["eps"]),
        ("memory_length unstable",
         lambda: L.memory_length(L.LDS([[1.5]], [[1.0]], [[1.0]], dt=1.0)), ["stable"]),
        ("random_lds n 0", lambda: L.random_lds(0, [(0.1, 0.5)]), ["n"]),
        ("random_lds interval reversed", lambda: L.random_lds(3, [(0.5, 0.1)]),
         ["eigenvalue_intervals"]),
        ("random_lds interval text", lambda: L.random_lds(3, [(0.5, "x")]),
         ["eigenvalue_intervals"]),
        ("random_lds no intervals", lambda: L.random_lds(3, []), ["eigenvalue_intervals"]),
        ("random_lds weights", lambda: L.random_lds(3, [(0.1, 0.5)], weights=[-1.0]),
         ["weights"]),
        ("random_lds d_in 0", lambda: L.random_lds(3, [(0.1, 0.5)], d_in=0), ["d_in"]),
        ("random_lds dt 0", lambda: L.random_lds(3, [(0.1, 0.5)], dt=0.0), ["dt"]),
        ("random_lds rng string", lambda: L.random_lds(3, [(0.1, 0.5)], rng="seed"), ["rng"]),
        ("random_stable_lds radius 1", lambda: L.random_stable_lds(3, radius=1.0), ["radius"]),
        ("modal_form not square", lambda: modal_form(np.ones((2, 3))), ["square"]),
        ("hankel_matrix rows 0", lambda: hankel_matrix(np.ones((9, 1, 1)), 0, 3), ["rows"]),
        ("era order 0", lambda: era(np.ones((10, 1, 1)), 0), ["order"]),
        ("impulse_fit_error h nan",
         lambda: impulse_fit_error(SYS, np.full((4, 1, 1), nan)), ["h"]),
        ("zoh_matrices dt nan", lambda: zoh_matrices(np.eye(1), np.ones((1, 1)), nan), ["dt"]),
        # ------------------------------------------------------------------ learning
        ("spectral_filters k > T", lambda: L.spectral_filters(8, 9), ["k"]),
        ("spectral_filters kind", lambda: L.spectral_filters(8, 2, "Q"), ["kind"]),
        ("spectral_filters method", lambda: L.spectral_filters(8, 2, method="lanczos"),
         ["method"]),
        ("spectral_filters precision", lambda: L.spectral_filters(8, 2, precision="quad"),
         ["precision"]),
        ("spectral_filters branch", lambda: L.spectral_filters(8, 2, branch="both2"),
         ["branch"]),
        ("spectral_filters T bool", lambda: L.spectral_filters(True, 1), ["T"]),
        ("filter_matrix kind", lambda: F.filter_matrix(8, "Z"), ["kind"]),
        ("eigenvector_error_bound 1 value", lambda: F.eigenvector_error_bound(np.ones(1)),
         ["sigma"]),
        ("SpectralFiltering k 0",
         lambda: L.SpectralFiltering(horizon=32, k=0).fit_predict(U, U), ["k"]),
        ("SpectralFiltering context > horizon",
         lambda: L.SpectralFiltering(horizon=8, k=2, context=9).fit_predict(U, U),
         ["context"]),
        ("SpectralFiltering lr 0",
         lambda: L.SpectralFiltering(horizon=8, k=2, lr=0.0).fit_predict(U, U), ["lr"]),
        ("SpectralFiltering lr nan",
         lambda: L.SpectralFiltering(horizon=8, k=2, lr=nan).fit_predict(U, U), ["lr"]),
        ("SpectralFiltering schedule",
         lambda: L.SpectralFiltering(horizon=8, k=2, lr_schedule="cosine").fit_predict(U, U),
         ["lr_schedule"]),
        ("SpectralFiltering radius -1",
         lambda: L.SpectralFiltering(horizon=8, k=2, radius=-1.0).fit_predict(U, U),
         ["radius"]),
        ("SpectralFiltering precision",
         lambda: L.SpectralFiltering(horizon=8, k=2, filter_precision="x").fit_predict(U, U),
         ["filter_precision"]),
        ("SpectralFiltering u/y lengths",
         lambda: L.SpectralFiltering(horizon=8, k=2).fit_predict(U, np.ones((7, 1))),
         ["u", "y"]),
        ("SpectralFiltering empty stream",
         lambda: L.SpectralFiltering(horizon=4, k=2).fit_predict(U[:0], U[:0]), ["u"]),
        ("SpectralFiltering y nan",
         lambda: L.SpectralFiltering(horizon=8, k=2).fit_predict(U, np.full((8, 1), nan)),
         ["y"]),
        ("SpectralFilteringAR2 horizon 1",
         lambda: L.SpectralFilteringAR2(horizon=1, k=1).fit_predict(U[:1], U[:1]),
         ["horizon"]),
        ("LastValue u/y lengths", lambda: L.LastValue().fit_predict(U, np.ones((3, 1))),
         ["u", "y"]),
        ("BestInHindsight template",
         lambda: L.BestInHindsight("alg1").fit_predict(U, U), ["template"]),
        ("BestInHindsight tol 0",
         lambda: L.BestInHindsight(L.SpectralFiltering(horizon=8, k=2), tol=0.0)
         .fit_predict(U, U), ["tol"]),
        ("LDSOracle not a system", lambda: L.LDSOracle("sys").fit_predict(U, U), ["system"]),
        ("asymmetric_regret learner", lambda: L.asymmetric_regret("alg", U, U), ["learner"]),
        ("asymmetric_regret n_points 1",
         lambda: L.asymmetric_regret(L.SpectralFiltering(horizon=8, k=2), U, U, n_points=1),
         ["n_points"]),
        ("asymmetric_regret t_grid beyond",
         lambda: L.asymmetric_regret(L.SpectralFiltering(horizon=8, k=2), U, U,
                                     t_grid=[2, 99]), ["t_grid"]),
        ("cumulative_loss nan", lambda: cumulative_loss([1.0, nan]), ["losses"]),
        # ------------------------------------------------------------------- control
        ("continuous_lyapunov unstable",
         lambda: L.continuous_lyapunov(np.eye(2), np.eye(2)), ["A"]),
        # a non-symmetric M is solved since issue 25 (the solution is unique for a stable A)
        ("continuous_lyapunov M not square",
         lambda: L.continuous_lyapunov(-np.eye(2), np.ones((2, 3))), ["M"]),
        ("continuous_lyapunov convention",
         lambda: L.continuous_lyapunov(-np.eye(2), np.eye(2), convention="x"),
         ["convention"]),
        ("discrete_lyapunov unstable", lambda: L.discrete_lyapunov(2 * np.eye(2), np.eye(2)),
         ["A"]),
        ("discrete_lyapunov M shape",
         lambda: L.discrete_lyapunov(0.5 * np.eye(2), np.eye(3)), ["M"]),
        ("discrete_certificate rate below rho",
         lambda: L.discrete_certificate(0.5 * np.eye(2), rate=0.3), ["rate"]),
        ("verify tol -1", lambda: L.verify(-np.eye(2), np.eye(2), np.eye(2), tol=-1.0),
         ["tol"]),
        ("verify P shape", lambda: L.verify(-np.eye(2), np.eye(3), np.eye(2)), ["P"]),
        ("LyapunovRule kappa 0", lambda: C.LyapunovRule(0.0), ["kappa"]),
        ("LyapunovRule kappa 1", lambda: C.LyapunovRule(1.0), ["kappa"]),
        ("PeriodicRule period 0", lambda: C.PeriodicRule(0.0), ["period"]),
        ("RelativeErrorRule sigma nan", lambda: C.RelativeErrorRule(nan), ["sigma"]),
        ("ETCSystem K shape", lambda: C.ETCSystem(-np.eye(2), np.ones((2, 1)), np.ones((2, 2))),
         ["K"]),
        ("ETCSystem unstable loop",
         lambda: C.ETCSystem(np.eye(2), np.ones((2, 1)), np.zeros((1, 2))), ["A + B K"]),
        ("simulate_etc x0 zero",
         lambda: L.simulate_etc(L.paper_system(), C.LyapunovRule(0.5), [0.0, 0.0]), ["x0"]),
        ("simulate_etc horizon 0",
         lambda: L.simulate_etc(L.paper_system(), C.LyapunovRule(0.5), [1.0, 0.0],
                                horizon=0.0), ["horizon"]),
        ("simulate_etc mode",
         lambda: L.simulate_etc(L.paper_system(), C.LyapunovRule(0.5), [1.0, 0.0],
                                mode="fast"), ["mode"]),
        ("simulate_etc rule", lambda: L.simulate_etc(L.paper_system(), "lyapunov", [1.0, 0.0]),
         ["rule"]),
        ("simulate_etc tol >= bracket",
         lambda: L.simulate_etc(L.paper_system(), C.LyapunovRule(0.5), [1.0, 0.0],
                                tol=0.1, bracket_step=0.01), ["tol"]),
        ("simulate_etc max_events 0",
         lambda: L.simulate_etc(L.paper_system(), C.LyapunovRule(0.5), [1.0, 0.0],
                                max_events=0), ["max_events"]),
        ("nss_experiment magnitude > grid",
         lambda: L.nss_experiment(grid_step=0.01, magnitude=0.02), ["magnitude"]),
        ("nss_sweep kappas empty",
         lambda: C.nss_sweep(magnitudes=[1e-3], kappas=[]), ["kappas"]),
        ("nss_sweep seeds 0",
         lambda: C.nss_sweep(magnitudes=[1e-3], kappas=[0.5], seeds=0), ["seeds"]),
        ("jittered_grid step 0", lambda: C.jittered_grid(1.0, 0.0, 0.1), ["step"]),
        ("inter_event_statistics horizon -1",
         lambda: L.inter_event_statistics(L.paper_system(), C.LyapunovRule(0.5), [1.0, 0.0],
                                          horizon=-1.0), ["horizon"]),
        ("level_set level 0", lambda: C.level_set(np.eye(2), 0.0), ["level"]),
        ("lyapunov_values P not square", lambda: C.lyapunov_values(np.ones((2, 3)), [1.0, 0.0]),
         ["P"]),
    ]


def _experiment_cases():
    from lds_toolkit.experiments import reproduce
    from lds_toolkit.experiments.config.overrides import parse_assignment
    from lds_toolkit.experiments.store import TaskStore, task_key

    return [
        ("reproduce unknown name", lambda: reproduce("nope", progress=False), ["nope"]),
        ("reproduce scale", lambda: reproduce("lds-impulse", scale="huge"), ["scale"]),
        ("reproduce quick and paper",
         lambda: reproduce("lds-impulse", scale="paper", quick=True), ["quick"]),
        ("reproduce seeds 0", lambda: reproduce("lds-impulse", quick=True, seeds=0), ["seeds"]),
        ("reproduce seed -1", lambda: reproduce("lds-impulse", quick=True, seed=-1), ["seed"]),
        ("reproduce jobs 0", lambda: reproduce("lds-impulse", quick=True, jobs=0), ["jobs"]),
        ("reproduce override unknown",
         lambda: reproduce("lds-impulse", quick=True, overrides={"TT": 3}), ["TT"]),
        ("reproduce override type",
         lambda: reproduce("lds-impulse", quick=True, overrides={"T": "big"}), ["--set T"]),
        ("reproduce override reserved",
         lambda: reproduce("lds-impulse", quick=True, overrides={"seed": 3}), ["seed"]),
        ("reproduce override T bool",
         lambda: reproduce("lds-impulse", quick=True, overrides={"T": True}), ["--set T"]),
        ("reproduce override q_values strings",
         lambda: reproduce("lds-impulse", quick=True, overrides={"q_values": ["a"]}),
         ["q_values"]),
        ("reproduce override n negative",
         lambda: reproduce("lds-impulse", quick=True, overrides={"n": -3}), ["--set n"]),
        ("reproduce override seeds huge",
         lambda: reproduce("lds-impulse", quick=True, overrides={"seeds": 10**9}),
         ["--set seeds"]),
        ("reproduce out empty", lambda: reproduce("lds-impulse", quick=True, out=""), ["out"]),
        ("parse_assignment no =", lambda: parse_assignment("T2048"), ["KEY=VALUE"]),
        ("parse_assignment empty key", lambda: parse_assignment("=3"), ["KEY"]),
        ("TaskStore save bad key", lambda: TaskStore("/tmp").save("k", {}), ["key"]),
        ("TaskStore save object",
         lambda: TaskStore("/tmp/lds-toolkit-second-pass").save(
             task_key("x", {"seed": 0}, {"seed_index": 0}), {"f": object()}), ["result"]),
    ]


def _neural_cases():
    import torch

    from lds_toolkit import neural as N
    from lds_toolkit.neural import tasks as T

    x = torch.randn(2, 8, 4)
    return [
        ("S4 d_model 0", lambda: N.S4(0), ["d_model"]),
        ("S4 d_state odd", lambda: N.S4(4, d_state=3), ["d_state"]),
        ("S4 dt_min > dt_max", lambda: N.S4(4, dt_min=0.1, dt_max=0.01), ["dt_min"]),
        ("S4 mode", lambda: N.S4(4, mode="full"), ["mode"]),
        ("S4 dropout 1", lambda: N.S4(4, dropout=1.0), ["dropout"]),
        ("S4 transposed string", lambda: N.S4(4, transposed="no"), ["transposed"]),
        ("S4 output_linear string", lambda: N.S4(4, output_linear="no"), ["output_linear"]),
        ("S4 wrong channels", lambda: N.S4(4)(torch.randn(2, 8, 5)), ["channels"]),
        ("S4 int input", lambda: N.S4(4)(torch.ones(2, 8, 4, dtype=torch.int64)), ["dtype"]),
        ("S4 rate 0", lambda: N.S4(4)(x, rate=0.0), ["rate"]),
        ("Focus chunk_size 0", lambda: N.Focus(4, chunk_size=0), ["chunk_size"]),
        ("Focus chunk_size and n_chunks", lambda: N.Focus(4, chunk_size=2, n_chunks=2),
         ["n_chunks"]),
        ("Focus coefficients", lambda: N.Focus(4, coefficients="x"), ["coefficients"]),
        ("Focus adaptive string", lambda: N.Focus(4, adaptive="no"), ["adaptive"]),
        ("LaS d_model % heads", lambda: N.LaSAttention(6, n_heads=4), ["n_heads"]),
        ("LaS decay_bound -1", lambda: N.LaSAttention(4, n_heads=2, decay_bound=-1.0),
         ["decay_bound"]),
        ("LaS alibi string", lambda: N.LaSAttention(4, n_heads=2, alibi="yes"), ["alibi"]),
        ("LaS pool_order", lambda: N.LaSAttention(4, n_heads=2, pool_order="x"),
         ["pool_order"]),
        ("STU num_filters > seq_len", lambda: N.STU(4, seq_len=8, num_filters=9),
         ["num_filters"]),
        ("STU too long input", lambda: N.STU(4, seq_len=4, num_filters=2)(x), ["seq_len"]),
        ("SelfAttention causal string", lambda: N.SelfAttention(4, causal="no"), ["causal"]),
        ("S4PlusPlus tau 0", lambda: N.S4PlusPlus(4, tau=0), ["tau"]),
        ("SequenceModel n_layers -1", lambda: N.SequenceModel(4, -1), ["n_layers"]),
        ("SequenceModel unknown layer", lambda: N.SequenceModel(4, 1, "mamba"), ["layer"]),
        ("SequenceModel pool", lambda: N.SequenceModel(4, 1, pool="max"), ["pool"]),
        ("SequenceModel prenorm string", lambda: N.SequenceModel(4, 1, prenorm="yes"),
         ["prenorm"]),
        ("SequenceModel tie_embeddings string",
         lambda: N.SequenceModel(4, 1, vocab_size=5, tie_embeddings="no"), ["tie_embeddings"]),
        ("Block mlp_ratio -1", lambda: N.Block(4, mlp_ratio=-1.0), ["mlp_ratio"]),
        ("TrainConfig steps 0", lambda: N.TrainConfig(steps=0), ["steps"]),
        ("TrainConfig lr inf", lambda: N.TrainConfig(lr=inf), ["lr"]),
        ("TrainConfig betas 1", lambda: N.TrainConfig(betas=(0.9, 1.0)), ["betas"]),
        ("TrainConfig crop string", lambda: N.TrainConfig(crop="yes"), ["crop"]),
        ("S4PlusPlus causal string", lambda: N.S4PlusPlus(4, causal="no"), ["causal"]),
        ("S4PlusPlus smr_depthwise string", lambda: N.S4PlusPlus(4, smr_depthwise="no"),
         ["depthwise"]),
        ("LaS bias string", lambda: N.LaSAttention(4, n_heads=2, bias="no"), ["bias"]),
        ("Block prenorm string", lambda: N.Block(4, prenorm=0), ["prenorm"]),
        ("TrainConfig schedule", lambda: N.TrainConfig(schedule="linear"), ["schedule"]),
        ("Plateau window 0", lambda: N.Plateau(window=0), ["window"]),
        ("Plateau metric", lambda: N.Plateau(metric="f1"), ["metric"]),
        ("Plateau min_delta nan", lambda: N.Plateau(min_delta=nan), ["min_delta"]),
        ("train unknown setting", lambda: N.train(N.SequenceModel(4, 1, d_input=1,
                                                                  d_output=1),
                                                  T.sine_fit(8), stepz=3), ["stepz"]),
        ("associative_recall n 0", lambda: T.associative_recall(0, 8), ["n"]),
        ("associative_recall length 3", lambda: T.associative_recall(2, 3), ["length"]),
        ("associative_recall vocab 3", lambda: T.associative_recall(2, 8, vocab_size=3),
         ["vocab_size"]),
        ("cloze length 50", lambda: T.cloze(2, length=50), ["positions"]),
        ("cloze low > high", lambda: T.cloze(2, low=2.0, high=1.0), ["high"]),
        ("induction_heads length 2", lambda: T.induction_heads(2, 2), ["length"]),
        ("listops min > max", lambda: T.listops(2, min_length=10, max_length=5),
         ["max_length"]),
        ("listops operator_p 1", lambda: T.listops(2, operator_p=1.0), ["operator_p"]),
        ("sine_fit n_points 0", lambda: T.sine_fit(0), ["n_points"]),
        ("sine_fit jitter nan", lambda: T.sine_fit(8, jitter=nan), ["jitter"]),
        ("lds_next_output continuous", lambda: T.lds_next_output(CONT, 2, 8), ["discrete"]),
        ("SequenceTask split 1.0",
         lambda: T.sine_fit(8).split(1.0), ["train_fraction"]),
    ]


CASES = None


def cases() -> list:
    """Every case (numpy, experiments and, when torch is installed, neural)."""
    global CASES
    if CASES is None:
        CASES = _numpy_cases() + _experiment_cases()
        try:
            CASES += _neural_cases()
        except ImportError:  # pragma: no cover - torch missing
            pass
    return CASES


def run_case(call, names, seconds: float = 20.0,
             errors: tuple[type[BaseException], ...] = (TypeError, ValueError,
                                                        FloatingPointError)) -> tuple[str, str]:
    """``(verdict, detail)`` of one case (see the module docstring); ``errors`` are the
    exception types that count as a refusal."""
    def on_alarm(signum, frame):
        raise TimeoutError(f"still running after {seconds} s")

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = call()
    except errors as exc:
        text = str(exc)
        missing = [n for n in names if n not in text]
        if missing or "\n" in text.strip():
            return "unclear", f"{type(exc).__name__}: {text[:300]} (missing {missing})"
        return "clear", f"{type(exc).__name__}: {text[:300]}"
    except BaseException as exc:  # noqa: BLE001 - any other exception is the finding
        if isinstance(exc, KeyboardInterrupt):
            raise
        return "unclear", f"{type(exc).__name__}: {str(exc)[:300]}"
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    return "silent", f"returned {type(result).__name__}"


if __name__ == "__main__":  # pragma: no cover - the counts for the report
    import collections

    counts = collections.Counter()
    for case_id, call, names in cases():
        verdict, detail = run_case(call, names)
        counts[verdict] += 1
        if verdict != "clear":
            print(f"{verdict:8s} {case_id}: {detail}")
    print(f"{sum(counts.values())} cases: {counts['clear']} clear, {counts['unclear']} "
          f"unclear, {counts['silent']} silent")
