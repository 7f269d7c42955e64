"""Issue 38: the unclear and silent cases of the third reliability round, one entry each.

Each case is ``(id, call, names)``: ``call(tmp)`` (``tmp`` an empty directory of its own)
must end in a clear error, an exception of :data:`CLEAR_TYPES` whose one-line message contains
every string of ``names`` (the argument, and what to do where the issue asked for it).
:func:`run_case` sorts an outcome as :func:`tests._second_pass_cases.run_case` does (``clear``
/ ``unclear`` / ``silent``); ``tests/test_round_three.py`` asserts every case is clear. Run
this module as a script for the counts (``python -m tests._round_three_cases``).

The cases whose right answer is a behaviour rather than an error (a name kept, a refusal
that must not touch a file) have their own tests in ``tests/test_round_three.py``.
"""

from __future__ import annotations

import io
import json
import math
from pathlib import Path

import numpy as np

import lds_toolkit as L
from lds_toolkit import control as C

from ._second_pass_cases import run_case as _run_case

nan, inf = math.nan, math.inf
#: Exception types that count as a clear refusal: a bad value or type, a divergence, and for
#: a file argument the OSError that says what is at the path.
CLEAR_TYPES = (TypeError, ValueError, FloatingPointError, OSError)


def _sys2():
    return L.LDS(np.diag([0.5, 0.6]), np.eye(2), np.eye(2), dt=1.0)


def _cli(*argv: str) -> int:
    """``lds-toolkit argv``: a non-zero exit becomes ``ValueError(stderr)`` (the message the
    user reads), a zero exit is returned (silent)."""
    import contextlib

    from lds_toolkit import cli

    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            code = cli.main(list(argv))
        except SystemExit as exc:
            code = int(exc.code or 0)
    if code:
        raise ValueError(err.getvalue().strip().splitlines()[-1])
    return code


def _finished_run(tmp: Path) -> Path:
    """A complete quick run of ``lds-impulse`` under ``tmp/out`` (cached per process)."""
    from lds_toolkit.experiments import reproduce

    out = tmp / "out"
    reproduce("lds-impulse", quick=True, out=out, progress=False)
    return out


def _numpy_cases():
    from lds_toolkit.learning.filters import eigenvector_error_bound
    from lds_toolkit.learning.regret import cumulative_loss
    from lds_toolkit.systems import S4Recursion, modal_form, zoh_matrices

    sys2 = _sys2()
    u = np.random.default_rng(0).standard_normal((64, 1))

    def set_entry(tmp):
        sys2.A[0, 0] = nan

    return [
        # ------------------------------------------------------------ control
        ("ETCSystem names string",
         lambda tmp: C.ETCSystem(-np.eye(2), np.eye(2), np.zeros((2, 2)), names="abc"),
         ["names", "dict"]),
        ("inter_event_statistics rng string",
         lambda tmp: L.inter_event_statistics(L.paper_system(), C.LyapunovRule(0.5),
                                              [1.0, 0.0], rng="abc", horizon=0.5),
         ["rng", "str"]),
        ("level_set n_points 1e10",
         lambda tmp: C.level_set(np.eye(2), 1.0, n_points=10**10), ["n_points", "memory"]),
        ("simulate_etc check_times unsorted",
         lambda tmp: L.simulate_etc(L.paper_system(), C.LyapunovRule(0.5), [1.0, 0.0],
                                    mode="grid", check_times=[0.5, 0.1, 0.2], horizon=1.0),
         ["check_times", "increasing", "0.1"]),
        # ------------------------------------------------------------ interop
        ("LDS name int", lambda tmp: L.LDS([[0.5]], [[1.0]], [[1.0]], dt=1.0, name=123),
         ["name", "str", "123"]),
        ("LDS inputs float", lambda tmp: L.LDS([[0.5]], [[1.0]], [[1.0]], dt=1.0, inputs=[1.5]),
         ["inputs", "1.5"]),
        ("LDS inputs None", lambda tmp: L.LDS([[0.5]], [[1.0]], [[1.0]], dt=1.0,
                                              inputs=[None]), ["inputs", "None"]),
        ("LDS inputs repeated", lambda tmp: L.LDS(np.diag([0.5, 0.6]), np.eye(2), np.eye(2),
                                                  dt=1.0, inputs=["a", "a"]),
         ["inputs", "'a'", "twice"]),
        ("with_matrices B wider, nonzero D",
         lambda tmp: L.LDS([[0.5]], [[1.0]], [[1.0]], [[2.0]], dt=1.0).with_matrices(
             B=np.ones((1, 2))), ["D", "with_matrices", "(1, 2)"]),
        ("LDS matrix entry assigned", set_entry, ["immutable", "with_matrices"]),
        # ------------------------------------------------------------ systems
        ("LDS impulse_response 1e12",
         lambda tmp: L.LDS([[0.5]], [[1.0]], [[1.0]], dt=1.0).impulse_response(10**12),
         ["length", "memory"]),
        ("S4Recursion A_bar nan", lambda tmp: S4Recursion([[nan]], [[1.0]], [[1.0]]),
         ["A_bar"]),
        ("S4Recursion B_bar shape",
         lambda tmp: S4Recursion(np.eye(2), np.ones((3, 1)), np.ones((1, 2))), ["B_bar"]),
        ("modal_form nan", lambda tmp: modal_form(np.array([[nan, 0.0], [0.0, 1.0]])),
         ["A", "finite"]),
        ("modal_form string", lambda tmp: modal_form("abc"), ["A", "numeric"]),
        ("modal_form not square", lambda tmp: modal_form(np.ones((2, 3))), ["A", "square"]),
        ("zoh_matrices A 2x3", lambda tmp: zoh_matrices(np.ones((2, 3)), np.ones((2, 1)), 0.1),
         ["A", "square"]),
        ("zoh_matrices dt nan", lambda tmp: zoh_matrices(np.eye(1), np.ones((1, 1)), nan),
         ["dt", "finite"]),
        # ------------------------------------------------------------ learning
        ("eigenvector_error_bound inf",
         lambda tmp: eigenvector_error_bound([1.0, inf]), ["sigma", "finite"]),
        ("eigenvector_error_bound nan",
         lambda tmp: eigenvector_error_bound([1.0, nan, 0.1]), ["sigma", "finite"]),
        ("asymmetric_regret LastValue",
         lambda tmp: L.asymmetric_regret(L.LastValue(), u, u), ["learner", "LastValue"]),
        ("cumulative_loss empty", lambda tmp: cumulative_loss([]), ["losses", "empty"]),
    ]


def _experiment_cases():
    from lds_toolkit.experiments import reproduce
    from lds_toolkit.experiments.runner import load_summary
    from lds_toolkit.experiments.runner.sweep import task_rng
    from lds_toolkit.experiments.store import TaskStore
    from lds_toolkit.experiments.store.outputs import verify_outputs

    def regular_file(tmp):
        path = tmp / "file.txt"
        path.write_text("x")
        return path

    def store_in_file(tmp):
        return TaskStore(regular_file(tmp))

    return [
        ("reproduce fresh 'no'",
         lambda tmp: reproduce("lds-impulse", quick=True, out=tmp, progress=False, fresh="no"),
         ["fresh", "True or False"]),
        ("reproduce progress 'no'",
         lambda tmp: reproduce("lds-impulse", quick=True, out=tmp, progress="no"),
         ["progress", "True or False"]),
        ("reproduce overrides list",
         lambda tmp: reproduce("lds-impulse", quick=True, out=tmp, progress=False,
                               overrides=["n=5"]), ["overrides", "mapping", "list"]),
        ("verify_outputs missing", lambda tmp: verify_outputs(tmp / "nonexistent"),
         ["outdir", "does not exist"]),
        ("verify_outputs regular file", lambda tmp: verify_outputs(regular_file(tmp)),
         ["outdir", "not a directory"]),
        ("TaskStore root regular file", store_in_file, ["root", "not a directory"]),
        ("load_summary missing", lambda tmp: load_summary(tmp, "lds-impulse"),
         ["lds-impulse", "reproduce"]),
        ("task_rng seed -1", lambda tmp: task_rng(-1, 0), ["seed", "-1"]),
        ("task_rng seed string", lambda tmp: task_rng("a", 0), ["seed", "'a'"]),
        # ------------------------------------------------------------ CLI
        ("cli --set key with a space",
         lambda tmp: _cli("reproduce", "lds-impulse", "--quick", "--out", str(tmp), "--set",
                          " n=5"), ["--set", "' n'"]),
    ]


def _neural_cases():
    import torch

    from lds_toolkit import neural as N
    from lds_toolkit.neural import tasks as T

    def token_task(**kw):
        rng = np.random.default_rng(0)
        ids = rng.integers(0, 5, (4, 8))
        mask = np.ones((4, 8), bool)
        return T.SequenceTask(ids, ids.copy(), mask, mask.copy(), vocab_size=5, n_classes=5,
                              name="tokens", **kw)

    def regression_task(n=4, mask=True, eval_mask=True):
        x = np.random.default_rng(0).standard_normal((n, 8, 1))
        m = np.full((n, 8), mask)
        return T.SequenceTask(x, x.copy(), m, np.full((n, 8), eval_mask), name="reals")

    def model():
        torch.manual_seed(0)
        return N.SequenceModel(4, 1, "s4d", d_input=1, d_output=1)

    def saved_task(tmp):
        path = tmp / "t.npz"
        regression_task().save(path)
        return path

    def truncated(tmp):
        path = saved_task(tmp)
        path.write_bytes(path.read_bytes()[:100])
        return T.SequenceTask.load(path)

    def sparse(tmp):
        path = tmp / "big.npz"
        with open(path, "wb") as fh:
            fh.truncate(2**31)
        return T.SequenceTask.load(path)

    def zeros(tmp):
        path = tmp / "zeros.npz"
        path.write_bytes(bytes(4096))
        return T.SequenceTask.load(path)

    def object_array(tmp):
        path = tmp / "obj.npz"
        x = np.zeros((2, 3))
        np.savez(path, inputs=np.array([object()], dtype=object), targets=x, mask=x > 0,
                 eval_mask=x > 0, meta=np.array("{}"), allow_pickle=True)
        return T.SequenceTask.load(path)

    def missing_meta(tmp):
        path = tmp / "meta.npz"
        x = np.zeros((2, 3, 1))
        np.savez(path, inputs=x, targets=x, mask=x[..., 0] > 0, eval_mask=x[..., 0] > 0,
                 meta=np.array(json.dumps({"vocab_size": None})))
        return T.SequenceTask.load(path)

    sys1 = L.LDS([[0.5]], [[1.0]], [[1.0]], dt=1.0)
    sys_unspecified = L.LDS([[0.5]], [[1.0]], [[1.0]], dt=True)
    sigma, phi = L.spectral_filters(16, 4)

    return [
        # ------------------------------------------------------------ layers
        ("S4.from_lds dt=True", lambda tmp: N.S4.from_lds(sys_unspecified), ["system", "dt"]),
        ("STU filters int8",
         lambda tmp: N.STU(4, seq_len=16, num_filters=4,
                           filters=(sigma.astype(np.int8), phi)), ["filters", "int8"]),
        # ------------------------------------------------------------ tasks
        ("SequenceTask.save missing dir",
         lambda tmp: regression_task().save(tmp / "missing" / "t.npz"), ["path", "missing"]),
        ("SequenceTask.save directory", lambda tmp: regression_task().save(tmp),
         ["path", "directory"]),
        ("SequenceTask float (N, L) inputs",
         lambda tmp: T.SequenceTask(np.zeros((2, 3)), np.zeros((2, 3, 1)),
                                    np.ones((2, 3), bool), np.ones((2, 3), bool)),
         ["inputs", "vocab_size"]),
        ("SequenceTask inputs nan",
         lambda tmp: T.SequenceTask(np.full((2, 3, 1), nan), np.zeros((2, 3, 1)),
                                    np.ones((2, 3), bool), np.ones((2, 3), bool)),
         ["inputs", "finite"]),
        ("SequenceTask name int",
         lambda tmp: T.SequenceTask(np.zeros((2, 3, 1)), np.zeros((2, 3, 1)),
                                    np.ones((2, 3), bool), np.ones((2, 3), bool), name=123),
         ["name", "str"]),
        ("SequenceTask.load missing", lambda tmp: T.SequenceTask.load(tmp / "none.npz"),
         ["path", "none.npz"]),
        ("SequenceTask.load truncated", truncated, ["path", "task file"]),
        ("SequenceTask.load 2 GiB sparse", sparse, ["path", "task file"]),
        ("SequenceTask.load zeros", zeros, ["path", "task file"]),
        ("SequenceTask.load object array", object_array, ["path", "task file"]),
        ("SequenceTask.load missing meta", missing_meta, ["path", "info"]),
        ("SequenceTask.subset out of range", lambda tmp: regression_task().subset([100]),
         ["index", "100", "4"]),
        ("lds_next_output n 2**33", lambda tmp: T.lds_next_output(sys1, 2**33, 8),
         ["n", "memory"]),
        # ------------------------------------------------------------ training
        ("train all-False mask",
         lambda tmp: N.train(model(), regression_task(mask=False), steps=2),
         ["mask", "no position"]),
        ("evaluate all-False eval mask",
         lambda tmp: N.evaluate(model(), regression_task(eval_mask=False)),
         ["eval_mask", "no position"]),
        ("train no sequences",
         lambda tmp: N.train(model(), regression_task(n=0), steps=2), ["data", "no sequences"]),
        ("train callback string",
         lambda tmp: N.train(model(), regression_task(), steps=2, callback="abc"),
         ["callback", "function", "'abc'"]),
        ("train regression model on tokens",
         lambda tmp: N.train(model(), token_task(), steps=2), ["token", "vocab_size"]),
        ("train half model on CPU",
         lambda tmp: N.train(model().half(), regression_task(), steps=2), ["float16", "CPU"]),
        ("train inputs 1e300",
         lambda tmp: N.train(model(), T.SequenceTask(
             np.full((2, 8, 1), 1e300), np.zeros((2, 8, 1)), np.ones((2, 8), bool),
             np.ones((2, 8), bool)), steps=2), ["inputs", "1e+300"]),
    ]


def _divergence_cases():
    sys1 = L.LDS([[0.5]], [[1.0]], [[1.0]], dt=1.0)
    big = np.full((8, 1), 1e300)
    noise = np.random.default_rng(0).standard_normal((64, 1))
    return [
        ("simulate inputs 1e300", lambda tmp: L.simulate(sys1, big), ["u", "1e+300"]),
        ("learner inputs 1e300",
         lambda tmp: L.SpectralFiltering(horizon=64, k=4).fit_predict(1e300 * noise, noise),
         ["u", "too large", "e+299"]),
    ]


def cases() -> list:
    """Every case (numpy, experiments and, when torch is installed, neural)."""
    out = _numpy_cases() + _experiment_cases() + _divergence_cases()
    try:
        out += _neural_cases()
    except ImportError:  # pragma: no cover - torch missing
        pass
    return out


def run_case(call, names, tmp: Path, seconds: float = 60.0) -> tuple[str, str]:
    """``(verdict, detail)`` of one case, run in ``tmp``."""
    return _run_case(lambda: call(Path(tmp)), names, seconds=seconds, errors=CLEAR_TYPES)


if __name__ == "__main__":  # pragma: no cover - the counts for the report
    import collections
    import tempfile

    counts: collections.Counter = collections.Counter()
    for case_id, call, names in cases():
        with tempfile.TemporaryDirectory() as tmp:
            verdict, detail = run_case(call, names, Path(tmp))
        counts[verdict] += 1
        print(f"{verdict:8s} {case_id}: {detail}")
    print(f"{sum(counts.values())} cases: {counts['clear']} clear, {counts['unclear']} "
          f"unclear, {counts['silent']} silent")
