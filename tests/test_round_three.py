"""Issue 38: every unclear or silent case of the third reliability round.

The cases that must end in a clear error are listed in :mod:`tests._round_three_cases` and run
by :func:`test_every_listed_case_gets_a_clear_error`; the cases whose right answer is a
behaviour (a name kept, a zero D widened, a store left alone, a warning) are tested below,
each against an independent computation or an invariant."""

from __future__ import annotations

import json
import os
import warnings

import numpy as np
import pytest

import lds_toolkit as L
from lds_toolkit import _validation
from lds_toolkit.experiments.runner import workers
from lds_toolkit.systems import zoh_matrices

from ._round_three_cases import cases, run_case

CASES = cases()


def test_the_listed_cases_have_unique_ids():
    assert len({c[0] for c in CASES}) == len(CASES)


@pytest.mark.parametrize("case_id, call, names", CASES, ids=[c[0] for c in CASES])
def test_every_listed_case_gets_a_clear_error(case_id, call, names, tmp_path):
    verdict, detail = run_case(call, names, tmp_path)
    assert verdict == "clear", f"{case_id}: {verdict}: {detail}"


# ------------------------------------------------------------------------------- interop
def test_distinct_signal_names_are_kept_one_per_signal():
    sys = L.LDS(np.diag([0.5, 0.6]), np.eye(2), np.eye(2), dt=1.0, inputs=["a", "b"],
                outputs=["p", "q"], name="plant")
    assert sys.input_labels == ["a", "b"] and sys.output_labels == ["p", "q"]
    assert sys.name == "plant"
    with pytest.raises(ValueError, match=r"inputs must name each of the 2 inputs once, got "
                                         r"'a' twice \(positions 0 and 1\)"):
        L.LDS(np.diag([0.5, 0.6]), np.eye(2), np.eye(2), dt=1.0, inputs=["a", "a"])


def test_with_matrices_widens_a_zero_d_and_keeps_a_nonzero_one_only_when_given():
    sys = L.LDS([[0.5]], [[1.0]], [[1.0]], dt=1.0, inputs=["u"], outputs=["y"])
    wide = sys.with_matrices(B=[[1.0, 2.0]])
    assert wide.D.shape == (1, 2) and not np.any(wide.D)
    assert wide.input_labels == ["u[0]", "u[1]"] and wide.output_labels == ["y"]
    # the same system built directly: identical matrices
    assert wide.equals(L.LDS([[0.5]], [[1.0, 2.0]], [[1.0]], dt=1.0))
    with_d = L.LDS([[0.5]], [[1.0]], [[1.0]], [[3.0]], dt=1.0)
    with pytest.raises(ValueError, match=r"with_matrices: the new B and C give D the shape "
                                         r"\(1, 2\), but the system's D \(1, 1\) is nonzero"):
        with_d.with_matrices(B=[[1.0, 2.0]])
    assert with_d.with_matrices(B=[[1.0, 2.0]], D=[[3.0, 0.0]]).D.tolist() == [[3.0, 0.0]]


def test_system_matrices_refuse_in_place_changes_and_stay_plain_arrays_otherwise():
    sys = L.LDS([[0.5, 0.1], [0.0, 0.3]], [[1.0], [0.0]], [[1.0, 1.0]], dt=1.0)
    for edit in (lambda: sys.A.__setitem__((0, 0), np.nan), lambda: sys.B.__iadd__(1.0),
                 lambda: np.multiply(sys.C, 2.0, out=sys.C),
                 lambda: sys.A[0].__setitem__(0, 1.0)):
        with pytest.raises(ValueError, match=r"an LDS is immutable: [ABC] cannot be changed in "
                                             r"place .* sys.with_matrices\("):
            edit()
    assert sys.A[0, 0] == 0.5
    copy = sys.A.copy()  # a plain writable array, to edit and build a new system from
    assert type(copy) is np.ndarray and copy.flags.writeable
    copy[0, 0] = 0.9
    assert sys.with_matrices(A=copy).A[0, 0] == 0.9 and sys.A[0, 0] == 0.5
    assert type(sys.A @ np.ones(2)) is np.ndarray and type(sys.A + 1) is np.ndarray
    assert repr(sys.A) == repr(np.array(sys.A))
    # the simulation reads the same numbers as from plain arrays
    u = np.random.default_rng(0).standard_normal((20, 1))
    plain = L.simulate(L.LDS(np.array(sys.A), np.array(sys.B), np.array(sys.C), dt=1.0), u)
    np.testing.assert_array_equal(L.simulate(sys, u).y, plain.y)


def test_zoh_matrices_take_lists_and_match_the_closed_form():
    # dx/dt = -x + u held over dt: A_d = e^{-dt}, B_d = 1 - e^{-dt}
    Ad, Bd = zoh_matrices([[-1.0]], [[1.0]], 0.3)
    np.testing.assert_allclose(Ad, [[np.exp(-0.3)]], rtol=1e-14)
    np.testing.assert_allclose(Bd, [[1.0 - np.exp(-0.3)]], rtol=1e-14)


# ------------------------------------------------------------------------------- systems
def test_memory_length_says_when_the_memory_is_beyond_every_horizon(monkeypatch):
    monkeypatch.setattr(_validation, "memory_bytes", lambda: 16 * 2**30)
    rho = 0.999999999999
    with pytest.warns(RuntimeWarning, match=r"memory_length: ρ\(A\) = 0.999999999999 is 1e-12 "
                                            r"from 1 .* needs 25.1 TiB for one float64 channel, "
                                            r"more than this machine's 16 GiB"):
        m = L.memory_length(L.LDS([[rho]], [[1.0]], [[1.0]], dt=1.0))
    # still the scalar closed form 1 + ceil(log eps / (2 log rho)) to float64's resolution
    assert m.length == pytest.approx(1 + np.log(1e-3) / (2 * np.log(rho)), rel=1e-6)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert L.memory_length(L.LDS([[0.99]], [[1.0]], [[1.0]], dt=1.0)).length == 345


@pytest.mark.parametrize("a, u, cause", [
    (0.5, np.full((8, 1), 1e300), r"the input itself is too large: max \|u_0\| = 1e\+300"),
    (1.5, np.ones((1000, 1)), r"the system is unstable over this horizon"),
])
def test_a_divergence_blames_a_huge_input_or_an_unstable_system(a, u, cause):
    with pytest.raises(L.SimulationDivergedError, match=cause):
        L.simulate(L.LDS([[a]], [[1.0]], [[1.0]], dt=1.0), u)


# -------------------------------------------------------------------------- experiments
def test_reproduce_with_fresh_no_leaves_a_finished_store_alone(tmp_path):
    tasks = tmp_path / "lds-impulse" / ".tasks"
    tasks.mkdir(parents=True)
    (tasks / "kept.json").write_text("{}")
    with pytest.raises(TypeError, match="fresh must be True or False, got str 'no'"):
        L.reproduce("lds-impulse", quick=True, out=tmp_path, fresh="no", progress=False)
    assert (tasks / "kept.json").read_text() == "{}"


def test_workers_never_outnumber_the_tasks_and_fit_the_process_limit(monkeypatch):
    assert workers.local_workers(400_000, 9) == 9
    assert workers.local_workers(3, 9) == 3 and workers.local_workers(-1, 1) == 1
    monkeypatch.setattr(workers, "process_limit", lambda: 40)
    monkeypatch.setattr(workers, "user_task_count", lambda: 35)
    with pytest.raises(ValueError, match=r"--jobs=400000 is more than the 40 processes this "
                                         r"user may run \(ulimit -u\)"):
        workers.check_workers(400_000, 9, "--jobs")
    with pytest.raises(ValueError, match=r"jobs=8 would start 8 worker processes, but this user "
                                         r"already runs 35 of the 40"):
        workers.check_workers(8, 9)
    assert workers.check_workers(4, 9) == 4
    monkeypatch.setattr(workers, "process_limit", lambda: None)
    monkeypatch.setattr(workers, "available_memory_bytes", lambda: 2**30)
    with pytest.raises(ValueError, match=r"jobs=9 would start 9 worker processes, which need "
                                         r"about 1.69 GiB \(192 MiB each\), more than the "
                                         r"1 GiB of memory available now"):
        workers.check_workers(9, 100)


@pytest.mark.parametrize("jobs", ["400000", "1000000"])
def test_cli_refuses_jobs_beyond_the_process_limit_before_starting_anything(jobs, monkeypatch,
                                                                        tmp_path, capsys):
    """Under a 40-process limit (the issue's case; where the limit is unlimited, the workers
    are capped at the 9 tasks instead: ``local_workers`` above)."""
    from lds_toolkit.cli import main as cli_main

    monkeypatch.setattr(workers, "process_limit", lambda: 40)
    code = cli_main(["reproduce", "lds-impulse", "--quick", "--out", str(tmp_path),
                     "--jobs", jobs])
    assert code == 2 and not (tmp_path / "lds-impulse").exists()
    err = capsys.readouterr().err
    assert err == (f"error: --jobs={jobs} is more than the 40 processes this user may run "
                   f"(ulimit -u); give at most the number of cores ({os.cpu_count()}), or -1 "
                   "for one worker per core\n")


def test_user_task_count_counts_this_process():
    count = workers.user_task_count()
    if count is None:  # pragma: no cover - no /proc
        pytest.skip("no /proc on this system")
    assert count >= 1


def _vouched_run(root, name, summary):
    """A run directory whose run.json vouches for ``summary`` (as a finished run writes)."""
    from lds_toolkit.experiments.store.outputs import file_digest

    d = root / name
    d.mkdir(parents=True)
    (d / "summary.json").write_text(json.dumps(summary))
    (d / "run.json").write_text(json.dumps({"files": {"summary.json": file_digest(
        d / "summary.json")}}))
    return d


def test_report_does_not_follow_a_linked_run(tmp_path):
    from lds_toolkit.experiments import get_experiment
    from lds_toolkit.experiments.report import build_report

    exp = get_experiment("nss-etc")
    elsewhere = _vouched_run(tmp_path / "elsewhere", "nss-etc", {"config": {}})
    out = tmp_path / "out"
    out.mkdir()
    os.symlink(elsewhere, out / "nss-etc")
    rows = build_report(out, names=["nss-etc"])
    assert len(rows) == len(exp.claims) > 0
    for row in rows:
        assert row.result.verdict == "not run"
        assert "is a symbolic link, not a directory of results (not followed)" in \
            row.result.message


def test_report_flags_a_number_stored_as_text():
    from lds_toolkit.experiments.claims import Claim, evaluate_claim

    claim = Claim(id="x", paper="-", where="-", statement="x is small", quantity="x", op="<=",
                  threshold=2, scales=("quick",))
    result = evaluate_claim(claim, {"x": "abc", "config": {"scale": "quick"}})
    assert result.verdict == "not run"
    assert result.message == ('unreadable: x holds the str "abc", not a number (summary.json '
                              'is not what the experiment writes)')
    assert evaluate_claim(claim, {"x": 1.5, "config": {}}).verdict == "holds"
    assert evaluate_claim(claim, {"x": [1.0, "2"], "config": {}}).verdict == "not run"


# ------------------------------------------------------------------------ tasks, training
def _reals(n=4, length=8, seed=0):
    from lds_toolkit.neural.tasks import SequenceTask

    x = np.random.default_rng(seed).standard_normal((n, length, 1))
    mask = np.ones((n, length), bool)
    return SequenceTask(x, np.cumsum(x, axis=1), mask, mask.copy(), name="cumsum",
                        info={"scale": 1.5, "raw": x[:, :, 0]})


def test_a_task_is_saved_to_exactly_the_path_given_and_loads_back_equal(tmp_path):
    pytest.importorskip("torch")
    from lds_toolkit.neural.tasks import SequenceTask

    task = _reals()
    path = task.save(tmp_path / "task.data")  # no .npz suffix: numpy alone would add one
    assert path == tmp_path / "task.data" and sorted(os.listdir(tmp_path)) == ["task.data"]
    back = SequenceTask.load(path)
    for key in ("inputs", "targets", "mask", "eval_mask"):
        np.testing.assert_array_equal(getattr(back, key), getattr(task, key))
    assert back.name == "cumsum" and back.info["scale"] == 1.5
    np.testing.assert_array_equal(back.info["raw"], task.info["raw"])
    np.testing.assert_array_equal(task.subset([-1]).inputs, task.inputs[3:])


def test_a_large_file_of_another_kind_is_refused_on_its_first_bytes(tmp_path, monkeypatch):
    pytest.importorskip("torch")
    from lds_toolkit import _safe_files
    from lds_toolkit.neural.tasks import SequenceTask

    path = tmp_path / "big.npz"
    with open(path, "wb") as fh:
        fh.truncate(2**31)  # sparse: 2 GiB of zeros
    reads = []
    real_read = os.read
    monkeypatch.setattr(_safe_files.os, "read", lambda fd, n: reads.append(n) or
                        real_read(fd, n))
    with pytest.raises(ValueError, match=r"is not a task file written by SequenceTask.save: "
                                         r"task file does not start with b'PK\\x03\\x04'"):
        SequenceTask.load(path)
    assert reads == [4]  # the header only


def test_a_warmup_longer_than_the_run_is_said_with_the_learning_rate_it_reaches():
    torch = pytest.importorskip("torch")
    from lds_toolkit.neural import SequenceModel, train
    from lds_toolkit.neural.training._call_checks import TrainSettingWarning

    torch.manual_seed(0)
    model = SequenceModel(4, 1, "s4d", d_input=1, d_output=1, seed=0)
    with pytest.warns(TrainSettingWarning, match=r"warmup=1000000000000 is longer than the run "
                                                 r"\(steps=2\): the learning rate never reaches "
                                                 r"lr=0.01 \(it ends at 2e-12 of it\)"):
        res = train(model, _reals(), steps=2, warmup=10**12, lr=1e-2)
    # the schedule it warns about: lr (t + 1) / warmup at step t
    np.testing.assert_allclose(res.history["lr"], [1e-2 * 1e-12, 1e-2 * 2e-12], rtol=1e-12)


def test_a_batch_size_above_the_data_is_said_and_trains_as_the_full_batch():
    torch = pytest.importorskip("torch")
    from lds_toolkit.neural import SequenceModel, train
    from lds_toolkit.neural.training._call_checks import TrainSettingWarning

    data = _reals()
    runs = []
    for batch_size in (10**9, len(data)):
        torch.manual_seed(0)
        model = SequenceModel(4, 1, "s4d", d_input=1, d_output=1, seed=0)
        if batch_size > len(data):
            with pytest.warns(TrainSettingWarning, match=r"batch_size=1000000000 is larger than "
                                                         r"the 4 training sequences"):
                res = train(model, data, steps=3, batch_size=batch_size, lr=1e-2)
        else:
            res = train(model, data, steps=3, batch_size=batch_size, lr=1e-2)
        runs.append((res.history["loss"], [p.detach().clone() for p in model.parameters()]))
    np.testing.assert_array_equal(runs[0][0], runs[1][0])
    for a, b in zip(runs[0][1], runs[1][1]):
        torch.testing.assert_close(a, b, rtol=0, atol=0)
