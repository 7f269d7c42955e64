"""Issue 46 (reliability round four): the bad inputs of its classes ``report --compare``,
``report``, interop, training and the experiment API, one entry each.

Same shape and verdicts as :mod:`tests._round_three_cases`: ``(id, call, names)``,
``call(tmp)`` (``tmp`` an empty directory of its own) must end in a clear error whose one-line
message contains every string of ``names``. ``tests/test_interop_training_errors.py`` asserts
every case is clear; ``python -m tests._interop_training_cases`` prints the counts (run from
another checkout, the counts of that code). ``benchmarks/gpu_check.sh``'s failure paths are in
``tests/neural_experiments/test_gpu_check.py``, the behaviours (names kept, a pickle round
trip, a page of compare) in their own tests.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import control as ct
import numpy as np

import lds_toolkit as L

from ._round_three_cases import CLEAR_TYPES, _cli
from ._second_pass_cases import run_case as _run_case

ROOT = Path(__file__).resolve().parents[1]
COMMITTED = ROOT / "docs" / "results" / "quick"
U = np.ones((8, 1))


def _roots(tmp: Path, edit=None) -> tuple[str, str]:
    """Two output roots holding the committed quick nss-etc run; ``edit(run_dir)`` changes
    B's."""
    for side in ("a", "b"):
        shutil.copytree(COMMITTED / "nss-etc", tmp / side / "nss-etc")
    if edit is not None:
        edit(tmp / "b" / "nss-etc")
    return str(tmp / "a"), str(tmp / "b")


def _write(name: str, content: bytes):
    def edit(run_dir: Path):
        (run_dir / name).write_bytes(content)
    return edit


def _compare(tmp: Path, edit=None, *extra: str) -> int:
    return _cli("report", "--compare", *_roots(tmp, edit), *extra)


def _report_cases():
    def empty(tmp):
        (tmp / "empty").mkdir()
        a, _ = _roots(tmp)
        return _cli("report", "--compare", a, str(tmp / "empty"))

    def one_run(tmp):
        a, _ = _roots(tmp)
        return _cli("report", "--compare", a, str(Path(a) / "nss-etc"))

    def report_unreadable(tmp):
        _, b = _roots(tmp, _write("summary.json", b"{oops"))
        return _cli("report", "--out", b)

    return [
        ("compare corrupted summary.json",
         lambda tmp: _compare(tmp, _write("summary.json", b'{"x": ')),
         ["unreadable", "nss-etc"]),
        ("compare summary.json {}", lambda tmp: _compare(tmp, _write("summary.json", b"{}")),
         ["unreadable", "nss-etc"]),
        ("compare summary.json a list",
         lambda tmp: _compare(tmp, _write("summary.json", b"[1, 2]")),
         ["unreadable", "nss-etc"]),
        ("compare an empty directory", empty, ["--compare", "holds no experiment's results"]),
        ("compare one run's directory as the root", one_run,
         ["--compare", "the directory of one experiment's run"]),
        ("compare a name that is in neither root",
         lambda tmp: _compare(tmp, None, "cloze"), ["cloze", "nothing to compare"]),
        ("report --all without --compare",
         lambda tmp: _cli("report", "--out", _roots(tmp)[0], "--all"), ["--all", "--compare"]),
        ("report a store with an unreadable row", report_unreadable,
         ["could not be judged", "nss-etc", "not valid JSON"]),
    ]


def _interop_cases():
    frd = ct.frd([1.0, 2.0], [0.1, 1.0])
    mimo = ct.tf([[[1.0], [2.0]]], [[[1.0, 0.5], [1.0, 0.2]]], 1.0)
    no_timebase = ct.tf([1.0], [1.0, 0.5], None)

    def complex_statespace():
        plain = ct.ss([[0.5]], [[1.0]], [[1.0]], [[0.0]], 1)
        plain.A = np.array([[0.5 + 0.1j]])
        return plain

    return [
        ("simulate a FrequencyResponseData", lambda tmp: L.simulate(frd, U),
         ["system", "control.TransferFunction", "FrequencyResponseData",
          "no state-space realisation"]),
        ("simulate a MIMO TransferFunction", lambda tmp: L.simulate(mimo, np.ones((8, 2))),
         ["system", "2-input", "slycot"]),
        ("discretize a TransferFunction with dt=None",
         lambda tmp: L.systems.discretize(no_timebase, 0.1), ["system", "dt=None"]),
        ("simulate a complex StateSpace", lambda tmp: L.simulate(complex_statespace(), U),
         ["A must be real"]),
        ("LDSOracle of a complex StateSpace",
         lambda tmp: L.learning.LDSOracle(complex_statespace()).predict_one(1.0),
         ["A must be real"]),
        ("LDS complex", lambda tmp: L.LDS([[0.5 + 0.1j]], [[1.0]], [[1.0]], dt=1.0),
         ["A must be real"]),
        ("LDS.from_statespace a TransferFunction",
         lambda tmp: L.LDS.from_statespace(ct.tf([1.0], [1.0, 0.5], 1.0)),
         ["sys", "TransferFunction", "as_lds"]),
        ("ETCSystem of a FrequencyResponseData",
         lambda tmp: L.control.inter_event_statistics(frd, None, [1.0], K=[[1.0]]),
         ["system", "FrequencyResponseData"]),
    ]


def _experiment_api_cases():
    from lds_toolkit.experiments import verify_outputs

    return [
        ("verify_outputs '/nonexistent'", lambda tmp: verify_outputs("/nonexistent"),
         ["outdir", "'/nonexistent'", "does not exist"]),
        ("verify_outputs a relative path",
         lambda tmp: verify_outputs("no/such/run"), ["outdir", "'no/such/run'"]),
        ("verify_outputs a path with a trailing slash",
         lambda tmp: verify_outputs(str(tmp / "missing") + "/"),
         ["outdir", "missing/'", "does not exist"]),
    ]


def _training_cases():
    import torch

    from lds_toolkit.neural import SequenceModel, TrainConfig, train
    from lds_toolkit.neural.tasks import SequenceTask
    from lds_toolkit.neural.training import evaluate
    from lds_toolkit.neural.training.evaluation import predict

    def reals():
        x = np.random.default_rng(0).standard_normal((4, 8, 1))
        mask = np.ones((4, 8), bool)
        return SequenceTask(x, np.cumsum(x, axis=1), mask, mask.copy(), name="cumsum")

    def meta_model():
        with torch.device("meta"):
            return SequenceModel(4, 1, "s4d", d_input=1, d_output=1, seed=0)

    def downgraded(tmp):
        ckpt = tmp / "run.pt"
        model = SequenceModel(4, 1, "s4d", d_input=1, d_output=1, seed=0)
        train(model, reals(), steps=2, batch_size=2, checkpoint=ckpt)
        state = torch.load(ckpt, weights_only=True)
        meta = json.loads(state["meta"])
        meta["format"] = "lds_toolkit-checkpoint/1"
        state["meta"] = json.dumps(meta)
        state["model"] = {k: v + 1.0 if v.is_floating_point() else v
                          for k, v in state["model"].items()}  # edited: digest now wrong
        torch.save(state, ckpt)
        return train(SequenceModel(4, 1, "s4d", d_input=1, d_output=1, seed=0), reals(),
                     steps=4, batch_size=2, checkpoint=ckpt)

    return [
        ("TrainConfig compile backend nonexistent",
         lambda tmp: TrainConfig(compile={"backend": "nonexistent"}),
         ["TrainConfig.compile['backend']", "'nonexistent'", "inductor"]),
        ("train a model on the meta device", lambda tmp: train(meta_model(), reals(), steps=1),
         ["train", "meta device", "to_empty"]),
        ("evaluate a model on the meta device", lambda tmp: evaluate(meta_model(), reals()),
         ["evaluate", "meta device"]),
        ("predict a model on the meta device", lambda tmp: predict(meta_model(), reals()),
         ["predict", "meta device"]),
        ("resume a format-2 checkpoint relabelled format 1", downgraded,
         ["checkpoint", "format", "digest", "downgrade"]),
    ]


def cases() -> list:
    out = _report_cases() + _interop_cases() + _experiment_api_cases()
    try:
        import torch  # noqa: F401
    except ImportError:
        return out
    return out + _training_cases()


def run_case(call, names, tmp: Path, seconds: float = 120.0) -> tuple[str, str]:
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
        print(f"{verdict:8s} {case_id}: {detail[:150]}")
    print(f"{sum(counts.values())} cases: {counts['clear']} clear, {counts['unclear']} "
          f"unclear, {counts['silent']} silent")
