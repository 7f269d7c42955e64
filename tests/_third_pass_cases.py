"""Issue 38's own pass: bad inputs to entry points that neither the issue's list nor the
earlier passes (:mod:`tests._second_pass_cases`, ``tests/test_bad_inputs.py``) tried.

Same shape and verdicts as :mod:`tests._second_pass_cases` (``(id, call, names)``, ``call()``
must end in a ``TypeError``/``ValueError``/``FloatingPointError`` -- or, for a path argument,
an ``OSError`` -- whose one-line message contains every string of ``names``).
``tests/test_second_pass.py`` asserts every case is clear; ``python -m tests._third_pass_cases``
prints the counts.
"""

from __future__ import annotations

import math
import tempfile
from pathlib import Path

import control as ct
import numpy as np

import lds_toolkit as L
from lds_toolkit import control as C
from lds_toolkit.learning import filters as F
from lds_toolkit.learning.regret import loglog_slope, regret_grid
from lds_toolkit.systems import (
    as_lds,
    draw_eigenvalues,
    era,
    hankel_matrix,
    impulse_fit_error,
)

from ._second_pass_cases import run_case as _run_case

nan, inf = math.nan, math.inf
CLEAR_TYPES = (TypeError, ValueError, FloatingPointError, OSError)
SYS = L.LDS([[0.5]], [[1.0]], [[1.0]], dt=1.0)
SYS2 = L.LDS(np.diag([0.5, 0.2]), np.eye(2), np.eye(2), dt=1.0)
CONT = L.LDS([[-1.0]], [[1.0]], [[1.0]])
U = np.ones((8, 1))
H = np.ones((10, 1, 1))


def _systems_cases():
    return [
        # ------------------------------------------------------------ LDS methods
        ("LDS.is_stable tol -1", lambda: SYS.is_stable(tol=-1.0), ["tol"]),
        ("LDS.is_stable tol string", lambda: SYS.is_stable(tol="0"), ["tol"]),
        ("LDS.is_marginally_stable tol nan", lambda: SYS.is_marginally_stable(tol=nan),
         ["tol"]),
        ("LDS.sample_time continuous", lambda: CONT.sample_time, ["continuous"]),
        ("LDS.discretize method", lambda: CONT.discretize(0.1, method="rk4"), ["method"]),
        ("LDS.discretize dt string", lambda: CONT.discretize("0.1"), ["dt"]),
        ("LDS.discretize alpha 2", lambda: CONT.discretize(0.1, method="gbt", alpha=2.0),
         ["alpha"]),
        ("LDS.discretize alpha without gbt", lambda: CONT.discretize(0.1, alpha=0.5),
         ["alpha"]),
        ("LDS.discretize prewarp negative",
         lambda: CONT.discretize(0.1, method="tustin", prewarp_frequency=-1.0),
         ["prewarp_frequency"]),
        ("LDS.discretize prewarp above Nyquist",
         lambda: CONT.discretize(0.1, method="tustin", prewarp_frequency=100.0),
         ["prewarp_frequency"]),
        ("LDS.impulse_response length 0", lambda: SYS.impulse_response(0), ["length"]),
        ("LDS.impulse_response length float", lambda: SYS.impulse_response(3.0), ["length"]),
        ("LDS.impulse_response convention", lambda: SYS.impulse_response(3, convention="x"),
         ["convention"]),
        ("LDS.impulse_response continuous", lambda: CONT.impulse_response(3), ["discrete"]),
        ("LDS.with_matrices unknown keyword", lambda: SYS.with_matrices(E=[[1.0]]), ["E"]),
        ("LDS.with_matrices A shape", lambda: SYS.with_matrices(A=np.eye(2)), ["B"]),
        ("LDS.with_matrices dt negative", lambda: SYS.with_matrices(dt=-1.0), ["dt"]),
        ("LDS.with_matrices outputs count", lambda: SYS.with_matrices(outputs=["a", "b"]),
         ["outputs"]),
        ("LDS states repeated",
         lambda: L.LDS(np.eye(2) * 0.5, np.ones((2, 1)), np.ones((1, 2)), dt=1.0,
                       states=["x", "x"]), ["states", "twice"]),
        ("LDS outputs empty name",
         lambda: L.LDS([[0.5]], [[1.0]], [[1.0]], dt=1.0, outputs=[""]), ["outputs"]),
        ("LDS inputs dict",
         lambda: L.LDS([[0.5]], [[1.0]], [[1.0]], dt=1.0, inputs={"a": 1}), ["inputs"]),
        ("LDS inputs count wrong",
         lambda: L.LDS([[0.5]], [[1.0]], [[1.0]], dt=1.0, inputs=3), ["inputs"]),
        ("LDS matrix ragged", lambda: L.LDS([[0.5, 1.0], [1.0]], [[1.0]], [[1.0]]), ["A"]),
        ("LDS A 3-D", lambda: L.LDS(np.ones((1, 1, 1)), [[1.0]], [[1.0]]), ["A"]),
        ("LDS D nan", lambda: L.LDS([[0.5]], [[1.0]], [[1.0]], [[nan]]), ["D"]),
        ("LDS.from_statespace dt None",
         lambda: L.LDS.from_statespace(ct.ss([[0.5]], [[1.0]], [[1.0]], 0, dt=None)), ["dt"]),
        ("LDS.from_statespace not a system", lambda: L.LDS.from_statespace("sys"), ["sys"]),
        # a TransferFunction is taken since issue 46 (realised by control.ss): what has no
        # realisation, or one python-control cannot make here, is refused
        ("as_lds frequency response data",
         lambda: as_lds(ct.frd([1.0, 2.0], [0.1, 1.0])),
         ["system", "FrequencyResponseData", "no state-space realisation"]),
        ("as_lds matrix", lambda: as_lds(np.eye(2)), ["system"]),
        # ------------------------------------------------------------ realization
        ("hankel_matrix h 2-D", lambda: hankel_matrix(np.ones((10, 1))), ["h"]),
        ("hankel_matrix h nan", lambda: hankel_matrix(np.full((10, 1, 1), nan)), ["h"]),
        ("hankel_matrix rows + cols too long", lambda: hankel_matrix(H, 8, 8), ["rows", "cols"]),
        ("hankel_matrix cols 0", lambda: hankel_matrix(H, 3, 0), ["cols"]),
        ("era order > rank dims", lambda: era(H, 50), ["order"]),
        ("era dt negative", lambda: era(H, 1, dt=-1.0), ["dt"]),
        ("era h string", lambda: era("abc", 1), ["h"]),
        ("era order float", lambda: era(H, 1.5), ["order"]),
        ("impulse_fit_error shape mismatch",
         lambda: impulse_fit_error(SYS, np.ones((4, 2, 1))), ["h"]),
        ("impulse_fit_error continuous", lambda: impulse_fit_error(CONT, H), ["discrete"]),
        ("impulse_fit_error h empty", lambda: impulse_fit_error(SYS, np.ones((0, 1, 1))), ["h"]),
        # ------------------------------------------------------------ draws and regions
        ("draw_eigenvalues n 0", lambda: draw_eigenvalues(0, [(0.1, 0.5)]), ["n"]),
        ("draw_eigenvalues weights length",
         lambda: draw_eigenvalues(2, [(0.1, 0.5)], weights=[0.5, 0.5]), ["weights"]),
        ("draw_eigenvalues weights zero",
         lambda: draw_eigenvalues(2, [(0.1, 0.5), (0.6, 0.7)], weights=[0.0, 0.0]),
         ["weights"]),
        ("draw_eigenvalues rng float", lambda: draw_eigenvalues(2, [(0.1, 0.5)], rng=1.5),
         ["rng"]),
        ("random_lds d_out float", lambda: L.random_lds(2, [(0.1, 0.5)], d_out=1.5), ["d_out"]),
        ("random_lds symmetric string",
         lambda: L.random_lds(2, [(0.1, 0.5)], symmetric="no"), ["symmetric"]),
        ("random_lds feedthrough string",
         lambda: L.random_lds(2, [(0.1, 0.5)], feedthrough="yes"), ["feedthrough"]),
        ("random_lds rng negative", lambda: L.random_lds(2, [(0.1, 0.5)], rng=-3), ["rng"]),
        ("random_stable_lds continuous string",
         lambda: L.random_stable_lds(2, continuous="yes"), ["continuous"]),
        ("random_stable_lds n float", lambda: L.random_stable_lds(2.5), ["n"]),
        ("eigenvalue_map q nan", lambda: L.eigenvalue_map(SYS, 64, q=nan), ["q"]),
        ("eigenvalue_map continuous", lambda: L.eigenvalue_map(CONT, 64), ["discrete"]),
        ("eigenvalue_regions q string", lambda: L.eigenvalue_regions(64, "0.5"), ["q"]),
        # ------------------------------------------------------------ simulation
        ("simulate rtol 0", lambda: L.simulate(SYS, U, rtol=0.0), ["rtol"]),
        ("simulate return_states string", lambda: L.simulate(SYS, U, return_states="no"),
         ["return_states"]),
        ("simulate x0 nan", lambda: L.simulate(SYS, U, x0=[nan]), ["x0"]),
        ("simulate process_noise shape",
         lambda: L.simulate(SYS, U, process_noise=np.ones((3, 1))), ["process_noise"]),
        ("simulate u string", lambda: L.simulate(SYS, "abc"), ["u"]),
        ("simulate u complex", lambda: L.simulate(SYS, U * 1j), ["u"]),
        ("simulate rng string", lambda: L.simulate(SYS, U, obs_noise=0.1, rng="x"), ["rng"]),
        ("simulate_continuous t nan",
         lambda: L.simulate_continuous(CONT, [0.0, nan], np.ones((2, 1))), ["t"]),
        ("simulate_continuous t 2-D",
         lambda: L.simulate_continuous(CONT, np.ones((2, 2)), np.ones((2, 1))), ["t"]),
        ("simulate_continuous method", lambda: L.simulate_continuous(
            CONT, [0.0, 1.0], np.ones((2, 1)), method="rk4"), ["method"]),
        ("simulate_continuous x0 shape", lambda: L.simulate_continuous(
            CONT, [0.0, 1.0], np.ones((2, 1)), x0=[1.0, 2.0]), ["x0"]),
        ("S4Recursion dt 0", lambda: L.systems.S4Recursion([[0.5]], [[1.0]], [[1.0]], dt=0),
         ["dt"]),
        ("S4Recursion.simulate x_prev shape",
         lambda: L.systems.S4Recursion([[0.5]], [[1.0]], [[1.0]]).simulate(U, x_prev=[1, 2]),
         ["x_prev"]),
        ("S4Recursion.from_lds not a system",
         lambda: L.systems.S4Recursion.from_lds("sys"), ["system"]),
        ("s4_bilinear discrete system", lambda: L.s4_bilinear(SYS, 0.1), ["continuous"]),
        ("discretize MIMO transfer function",
         lambda: L.discretize(ct.tf([[[1.0], [2.0]]], [[[1.0, 1.0], [1.0, 2.0]]]), 0.1),
         ["system", "slycot"]),
    ]


def _control_cases():
    loop = L.paper_system()
    rule = C.LyapunovRule(0.5)
    return [
        ("DynamicRule theta 0", lambda: C.DynamicRule(theta=0.0), ["theta"]),
        ("DynamicRule lam nan", lambda: C.DynamicRule(lam=nan), ["lam"]),
        ("DynamicRule eta0 negative", lambda: C.DynamicRule(eta0=-1.0), ["eta0"]),
        ("DynamicRule kappa string", lambda: C.DynamicRule(kappa="0.5"), ["kappa"]),
        ("PeriodicRule period inf", lambda: C.PeriodicRule(inf), ["period"]),
        ("RelativeErrorRule sigma 1", lambda: C.RelativeErrorRule(1.0), ["sigma"]),
        ("jittered_grid magnitude negative", lambda: C.jittered_grid(1.0, 0.1, -0.01),
         ["magnitude"]),
        ("jittered_grid horizon nan", lambda: C.jittered_grid(nan, 0.1, 0.01), ["horizon"]),
        ("jittered_grid magnitude >= step", lambda: C.jittered_grid(1.0, 0.1, 0.2),
         ["magnitude"]),
        ("perturb_sample_times not increasing",
         lambda: C.perturb_sample_times([0.0, 0.5, 0.2], 0.01), ["sample_times"]),
        ("perturb_sample_times magnitude nan",
         lambda: C.perturb_sample_times([0.0, 0.5], nan), ["magnitude"]),
        ("perturb_sample_times grid_step 0",
         lambda: C.perturb_sample_times([0.0, 0.5], 0.01, grid_step=0.0), ["grid_step"]),
        ("replay_open_loop A not square",
         lambda: C.replay_open_loop(np.ones((2, 3)), np.ones((2, 1)), [0.0], np.ones((1, 1)),
                                    [1.0, 0.0], [0.0, 1.0]), ["A"]),
        ("replay_open_loop inputs length",
         lambda: C.replay_open_loop(-np.eye(2), np.ones((2, 1)), [0.0, 0.5], np.ones((3, 1)),
                                    [1.0, 0.0], [0.0, 1.0]), ["inputs"]),
        ("replay_open_loop t decreasing",
         lambda: C.replay_open_loop(-np.eye(2), np.ones((2, 1)), [0.0], np.ones((1, 1)),
                                    [1.0, 0.0], [1.0, 0.0]), ["t"]),
        ("nss_experiment rule string", lambda: L.nss_experiment(rule="lyapunov"), ["rule"]),
        ("nss_experiment mode", lambda: L.nss_experiment(mode="fast"), ["mode"]),
        ("nss_experiment x0 zero", lambda: L.nss_experiment(x0=(0.0, 0.0)), ["x0"]),
        ("nss_sweep magnitudes negative",
         lambda: C.nss_sweep(magnitudes=[-1e-3], kappas=[0.5], seeds=1), ["magnitudes"]),
        ("nss_sweep kappas 1", lambda: C.nss_sweep(magnitudes=[1e-3], kappas=[1.0], seeds=1),
         ["kappa"]),
        ("discrete_certificate M not PD",
         lambda: L.discrete_certificate(0.5 * np.eye(2), -np.eye(2)), ["M"]),
        ("discrete_certificate continuous system",
         lambda: L.discrete_certificate(CONT), ["discrete"]),
        ("verify discrete string",
         lambda: L.verify(-np.eye(2), np.eye(2), np.eye(2), discrete="no"), ["discrete"]),
        ("continuous_lyapunov M nan",
         lambda: L.continuous_lyapunov(-np.eye(2), np.full((2, 2), nan)), ["M"]),
        ("continuous_lyapunov discrete system",
         lambda: L.continuous_lyapunov(SYS2, np.eye(2)), ["continuous"]),
        ("lyapunov_values x shape", lambda: C.lyapunov_values(np.eye(2), [1.0, 2.0, 3.0]),
         ["x"]),
        ("level_set P 3x3", lambda: C.level_set(np.eye(3), 1.0), ["P"]),
        ("level_set n_points 2", lambda: C.level_set(np.eye(2), 1.0, n_points=2), ["n_points"]),
        ("ETCSystem.from_lqr R not PD",
         lambda: C.ETCSystem.from_lqr(np.eye(2), np.eye(2), np.eye(2), -np.eye(2)), ["R"]),
        ("ETCSystem.from_lqr certificate",
         lambda: C.ETCSystem.from_lqr(-np.eye(2), np.eye(2), np.eye(2), np.eye(2),
                                      certificate="x"), ["certificate"]),
        ("ETCSystem names unknown key",
         lambda: C.ETCSystem(-np.eye(2), np.eye(2), np.zeros((2, 2)), names={"output": "y"}),
         ["names", "output"]),
        ("ETCSystem names states count",
         lambda: C.ETCSystem(-np.eye(2), np.eye(2), np.zeros((2, 2)),
                             names={"states": ["x"]}), ["states"]),
        ("simulate_etc x0 shape", lambda: L.simulate_etc(loop, rule, [1.0, 0.0, 0.0]), ["x0"]),
        ("simulate_etc output_step 0",
         lambda: L.simulate_etc(loop, rule, [1.0, 0.0], output_step=0.0), ["output_step"]),
        ("simulate_etc grid_step nan",
         lambda: L.simulate_etc(loop, rule, [1.0, 0.0], mode="grid", grid_step=nan),
         ["grid_step"]),
        ("simulate_etc check_times without grid",
         lambda: L.simulate_etc(loop, rule, [1.0, 0.0], check_times=[0.5]), ["check_times"]),
        ("simulate_etc check_times zero",
         lambda: L.simulate_etc(loop, rule, [1.0, 0.0], mode="grid", check_times=[0.0, 0.5],
                                horizon=1.0), ["check_times", "entry 0"]),
        ("simulate_etc check_times beyond horizon",
         lambda: L.simulate_etc(loop, rule, [1.0, 0.0], mode="grid", check_times=[0.5, 2.0],
                                horizon=1.0), ["check_times", "horizon"]),
        ("inter_event_statistics x0 0 runs",
         lambda: L.inter_event_statistics(loop, rule, 0), ["x0"]),
        ("inter_event_statistics K with loop",
         lambda: L.inter_event_statistics(loop, rule, [1.0, 0.0], K=np.eye(2)), ["K"]),
        ("inter_event_statistics rng negative",
         lambda: L.inter_event_statistics(loop, rule, 2, rng=-1), ["rng"]),
    ]


def _learning_cases():
    sf = L.SpectralFiltering(horizon=8, k=2)
    return [
        ("spectral_filters cache string", lambda: L.spectral_filters(8, 2, cache="no"),
         ["cache"]),
        ("spectral_filters k float", lambda: L.spectral_filters(8, 2.0), ["k"]),
        ("spectral_filters T string", lambda: L.spectral_filters("8", 2), ["T"]),
        ("filter_matrix T 0", lambda: F.filter_matrix(0), ["T"]),
        ("eigenvector_error_bound 2-D", lambda: F.eigenvector_error_bound(np.ones((2, 2))),
         ["sigma"]),
        ("eigenvector_error_bound precision",
         lambda: F.eigenvector_error_bound([1.0, 0.5], precision="quad"), ["precision"]),
        ("loglog_slope lengths", lambda: loglog_slope([1, 2, 3], [1.0, 2.0]), ["regret"]),
        ("loglog_slope one point", lambda: loglog_slope([4], [1.0]), ["T"]),
        ("loglog_slope nan", lambda: loglog_slope([1, 2], [1.0, nan]), ["regret"]),
        ("regret_grid start 0", lambda: regret_grid(100, 4, start=0), ["start"]),
        ("regret_grid start > n", lambda: regret_grid(100, 4, start=200), ["start"]),
        ("SpectralFiltering horizon float",
         lambda: L.SpectralFiltering(horizon=8.5, k=2).fit_predict(U, U), ["horizon"]),
        ("SpectralFiltering learn_one wrong width",
         lambda: sf.clone().reset(1, 1).learn_one([1.0, 2.0], [1.0]), ["u"]),
        ("SpectralFiltering reset d_in 0", lambda: sf.clone().reset(0, 1), ["d_in"]),
        ("SpectralFiltering clone unknown", lambda: sf.clone(horizonn=3), ["horizonn"]),
        ("LastValue y string", lambda: L.LastValue().fit_predict(U, "abc"), ["y"]),
        ("LDSOracle wrong input width",
         lambda: L.LDSOracle(SYS).fit_predict(np.ones((8, 2)), U), ["u"]),
        ("LDSOracle x0 shape", lambda: L.LDSOracle(SYS, x0=[1.0, 2.0]).fit_predict(U, U),
         ["x0"]),
        ("BestInHindsight radius 0",
         lambda: L.BestInHindsight(sf, radius=0.0).fit_predict(U, U), ["radius"]),
        ("BestInHindsight context > horizon",
         lambda: L.BestInHindsight(sf, context=99).fit_predict(U, U), ["context"]),
        ("asymmetric_regret losses negative",
         lambda: L.asymmetric_regret(sf, U, U, losses=-np.ones(8)), ["losses"]),
        ("asymmetric_regret losses length",
         lambda: L.asymmetric_regret(sf, U, U, losses=np.ones(5)), ["losses"]),
        ("asymmetric_regret tol 1", lambda: L.asymmetric_regret(sf, U, U, tol=1.0), ["tol"]),
        ("asymmetric_regret benchmark_context 0",
         lambda: L.asymmetric_regret(sf, U, U, benchmark_context=0), ["context"]),
    ]


def _experiment_cases():
    from lds_toolkit.experiments import (
        code_version,
        get_experiment,
        register,
        run_sweep,
        task_key,
        to_jsonable,
    )
    from lds_toolkit.experiments.store import TaskStore

    tmp = Path(tempfile.mkdtemp(prefix="lds-third-pass-"))
    return [
        ("get_experiment int", lambda: get_experiment(3), ["name"]),
        ("get_experiment typo", lambda: get_experiment("lds-impulses"), ["lds-impulse"]),
        ("register not an Experiment", lambda: register(int), ["Experiment"]),
        ("task_key config not a dict", lambda: task_key("x", [1], {"seed_index": 0}),
         ["config"]),
        ("task_key task without seed_index", lambda: task_key("x", {"seed": 0}, {}),
         ["seed_index"]),
        ("task_key experiment empty", lambda: task_key("", {"seed": 0}, {"seed_index": 0}),
         ["experiment"]),
        ("code_version unknown", lambda: code_version("nope"), ["nope"]),
        ("to_jsonable object", lambda: to_jsonable({"a": object()}), ["object"]),
        ("run_sweep fn not callable",
         lambda: run_sweep("f", {"seed": 0}, [{"seed_index": 0}], ["k"]), ["fn"]),
        ("run_sweep tasks without seed_index",
         lambda: run_sweep(lambda c, t, r: 0, {"seed": 0}, [{}], ["k"]), ["seed_index"]),
        ("run_sweep progress string",
         lambda: run_sweep(lambda c, t, r: 0, {"seed": 0}, [{"seed_index": 0}], ["k"],
                           progress="no"), ["progress"]),
        ("run_sweep single_threaded string",
         lambda: run_sweep(lambda c, t, r: 0, {"seed": 0}, [{"seed_index": 0}], ["k"],
                           single_threaded="no"), ["single_threaded"]),
        ("run_sweep jobs float",
         lambda: run_sweep(lambda c, t, r: 0, {"seed": 0},
                           [{"seed_index": i} for i in range(3)], ["a", "b", "c"],
                           jobs=2.5), ["jobs", "2.5"]),
        ("TaskStore code_version not str", lambda: TaskStore(tmp, code_version=3),
         ["code_version"]),
        ("TaskStore.load not a key", lambda: TaskStore(tmp).load("abc"), ["key"]),
        ("reproduce name int", lambda: L.reproduce(3), ["name"]),
        ("reproduce seeds float", lambda: L.reproduce("lds-impulse", quick=True, seeds=2.5),
         ["seeds"]),
        ("reproduce quick string", lambda: L.reproduce("lds-impulse", quick="yes"), ["quick"]),
        ("reproduce jobs string", lambda: L.reproduce("lds-impulse", quick=True, jobs="2"),
         ["jobs"]),
        ("reproduce out is a file",
         lambda: L.reproduce("lds-impulse", quick=True, out=_file(tmp)), ["out"]),
        ("reproduce overrides key not str",
         lambda: L.reproduce("lds-impulse", quick=True, overrides={3: 1}), ["3"]),
        ("reproduce client not a client",
         lambda: L.reproduce("lds-impulse", quick=True, out=tmp, progress=False,
                             client="tcp://127.0.0.1:1"), ["client"]),
        ("load_summary name with slash",
         lambda: L.experiments.load_summary(tmp, "../etc"), ["name"]),
    ]


def _file(tmp: Path) -> Path:
    path = tmp / "a-file"
    path.write_text("x")
    return path


def _cli_cases():
    from ._round_three_cases import _cli

    tmp = Path(tempfile.mkdtemp(prefix="lds-third-pass-cli-"))
    return [
        ("cli report format", lambda: _cli("report", "--out", str(tmp), "--format", "pdf"),
         ["--format"]),
        ("cli report out missing", lambda: _cli("report", "--out", str(tmp / "none")),
         ["--out"]),
        ("cli reproduce seeds 0",
         lambda: _cli("reproduce", "lds-impulse", "--quick", "--seeds", "0", "--out", str(tmp)),
         ["seeds"]),
        ("cli reproduce seed -1",
         lambda: _cli("reproduce", "lds-impulse", "--quick", "--seed", "-1", "--out", str(tmp)),
         ["seed"]),
        ("cli reproduce jobs 0",
         lambda: _cli("reproduce", "lds-impulse", "--quick", "--jobs", "0", "--out", str(tmp)),
         ["--jobs"]),
        ("cli reproduce jobs text",
         lambda: _cli("reproduce", "lds-impulse", "--quick", "--jobs", "two"), ["--jobs"]),
        ("cli reproduce set twice",
         lambda: _cli("reproduce", "lds-impulse", "--quick", "--set", "n=5", "--set", "n=6"),
         ["n"]),
        ("cli reproduce unknown name", lambda: _cli("reproduce", "nope"), ["nope"]),
        ("cli reproduce scale", lambda: _cli("reproduce", "lds-impulse", "--scale", "huge"),
         ["--scale"]),
        ("cli reproduce out is a file",
         lambda: _cli("reproduce", "lds-impulse", "--quick", "--out", str(_file(tmp))),
         ["--out"]),
    ]


def cases() -> list:
    """Every case of the pass."""
    return (_systems_cases() + _control_cases() + _learning_cases() + _experiment_cases()
            + _cli_cases())


def run_case(call, names, seconds: float = 60.0) -> tuple[str, str]:
    """``(verdict, detail)`` of one case."""
    return _run_case(call, names, seconds=seconds, errors=CLEAR_TYPES)


if __name__ == "__main__":  # pragma: no cover - the counts for the report
    import collections

    counts: collections.Counter = collections.Counter()
    for case_id, call, names in cases():
        verdict, detail = run_case(call, names)
        counts[verdict] += 1
        print(f"{verdict:8s} {case_id}: {detail}")
    print(f"{sum(counts.values())} cases: {counts['clear']} clear, {counts['unclear']} "
          f"unclear, {counts['silent']} silent")
