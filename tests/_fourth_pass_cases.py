"""Issue 46's own pass: bad inputs aimed at what that round adds to the library --
:func:`lds_toolkit.filters_as_lds`, the streaming cores (``filters=``, context windows, feature
dicts), the river twins and ``STU.to_lds`` / ``STU.step``. The teaching side (lesson checks,
sliders, the lesson build) is :mod:`tests._fourth_pass_teaching_cases`.

Same shape and verdicts as :mod:`tests._second_pass_cases` (``(id, call, names)``, ``call()``
must end in a ``TypeError``/``ValueError``/``FloatingPointError`` -- or, for a path argument,
an ``OSError`` -- whose one-line message contains every string of ``names``).
``tests/test_second_pass.py`` asserts every case is clear; ``python -m tests._fourth_pass_cases``
prints the counts.
"""

from __future__ import annotations

import math

import numpy as np

import lds_toolkit as L
from lds_toolkit.learning import learners as core

from ._second_pass_cases import run_case as _run_case

nan, inf = math.nan, math.inf
CLEAR_TYPES = (TypeError, ValueError, FloatingPointError, OSError)
U = np.ones((16, 1))


def _fal(*args, **kwargs):
    return L.filters_as_lds(*args, **kwargs)


def _filters_as_lds_cases():
    return [
        ("filters_as_lds T float", lambda: _fal(64.0, 4), ["T"]),
        ("filters_as_lds T string", lambda: _fal("64", 4), ["T"]),
        ("filters_as_lds T bool", lambda: _fal(True, 1), ["T"]),
        ("filters_as_lds T 0", lambda: _fal(0, 1), ["T"]),
        ("filters_as_lds T negative", lambda: _fal(-8, 1), ["T"]),
        ("filters_as_lds T nan", lambda: _fal(nan, 4), ["T"]),
        ("filters_as_lds T inf", lambda: _fal(inf, 4), ["T"]),
        ("filters_as_lds T None", lambda: _fal(None, 4), ["T"]),
        ("filters_as_lds T numpy float", lambda: _fal(np.float64(64.0), 4), ["T"]),
        ("filters_as_lds T huge", lambda: _fal(10**13, 4), ["T"]),
        ("filters_as_lds T 2^40", lambda: _fal(2**40, 1), ["T"]),
        ("filters_as_lds k 0", lambda: _fal(64, 0), ["k"]),
        ("filters_as_lds k negative", lambda: _fal(64, -2), ["k"]),
        ("filters_as_lds k float", lambda: _fal(64, 4.0), ["k"]),
        ("filters_as_lds k bool", lambda: _fal(64, True), ["k"]),
        ("filters_as_lds k string", lambda: _fal(64, "4"), ["k"]),
        ("filters_as_lds k > T", lambda: _fal(8, 9), ["k", "T"]),
        ("filters_as_lds k numpy > T", lambda: _fal(np.int64(8), np.int32(20)), ["k", "T"]),
        ("filters_as_lds kind lower case", lambda: _fal(64, 4, "h"), ["kind"]),
        ("filters_as_lds kind int", lambda: _fal(64, 4, 3), ["kind"]),
        ("filters_as_lds kind list", lambda: _fal(64, 4, ["H"]), ["kind"]),
        ("filters_as_lds kind None", lambda: _fal(64, 4, None), ["kind"]),
        ("filters_as_lds kind array", lambda: _fal(64, 4, np.array(["H", "N"])), ["kind"]),
        ("filters_as_lds branch unknown", lambda: _fal(64, 4, branch="pos"), ["branch"]),
        ("filters_as_lds branch None", lambda: _fal(64, 4, branch=None), ["branch"]),
        ("filters_as_lds branch list", lambda: _fal(64, 4, branch=["both"]), ["branch"]),
        ("filters_as_lds branch bool", lambda: _fal(64, 4, branch=True), ["branch"]),
        ("filters_as_lds branch array",
         lambda: _fal(64, 4, branch=np.array(["positive", "both"])), ["branch"]),
        ("filters_as_lds tol 0", lambda: _fal(64, 4, tol=0.0), ["tol"]),
        ("filters_as_lds tol 1", lambda: _fal(64, 4, tol=1.0), ["tol"]),
        ("filters_as_lds tol negative", lambda: _fal(64, 4, tol=-1e-6), ["tol"]),
        ("filters_as_lds tol nan", lambda: _fal(64, 4, tol=nan), ["tol"]),
        ("filters_as_lds tol inf", lambda: _fal(64, 4, tol=inf), ["tol"]),
        ("filters_as_lds tol string", lambda: _fal(64, 4, tol="1e-6"), ["tol"]),
        ("filters_as_lds tol bool", lambda: _fal(64, 4, tol=True), ["tol"]),
        ("filters_as_lds tol complex", lambda: _fal(64, 4, tol=1e-6 + 0j), ["tol"]),
        ("filters_as_lds tol array", lambda: _fal(64, 4, tol=np.array([1e-6])), ["tol"]),
        ("filters_as_lds cache string", lambda: _fal(64, 4, cache="no"), ["cache"]),
        ("filters_as_lds cache int", lambda: _fal(64, 4, cache=0), ["cache"]),
        ("filters_as_lds unknown keyword", lambda: _fal(64, 4, method="omp"), ["method"]),
        ("filters_as_lds precision unknown", lambda: _fal(64, 4, precision="quad"),
         ["precision"]),
        ("filters_as_lds precision None", lambda: _fal(64, 4, precision=None), ["precision"]),
        ("filters_as_lds precision array",
         lambda: _fal(64, 4, precision=np.array(["double", "extended"])), ["precision"]),
        ("filters_as_lds branch positional", lambda: _fal(64, 4, "H", "both"), ["positional"]),
        ("filters_as_lds tol unreachable", lambda: _fal(64, 4, tol=1e-300, cache=False),
         ["tol", "T=64"]),
    ]


def _sf(**kw):
    return core.SpectralFiltering(**{"horizon": 64, "k": 4, **kw})


def _ar2(**kw):
    return core.SpectralFilteringAR2(**{"horizon": 64, "k": 4, **kw})


def _stream(learner, xs, ys):
    for x, y in zip(xs, ys, strict=True):
        learner.predict_one(x)
        learner.learn_one(x, y)
    return learner.predict_one(xs[-1])


def _warm(learner, x):
    learner.learn_one(x, 1.0)
    return learner


def _streaming_cases():
    many = {f"f{i}": 1.0 for i in range(20_000)}
    return [
        # -------------------------------------------------------------- filters=
        ("SpectralFiltering filters unknown", lambda: _sf(filters="fast").fit_predict(U, U),
         ["filters"]),
        ("SpectralFiltering filters upper case",
         lambda: _sf(filters="LDS").learn_one(1.0, 1.0), ["filters"]),
        ("SpectralFiltering filters None", lambda: _sf(filters=None).learn_one(1.0, 1.0),
         ["filters"]),
        ("SpectralFiltering filters bool", lambda: _sf(filters=True).reset(1, 1),
         ["filters"]),
        ("SpectralFiltering filters list", lambda: _sf(filters=["lds"]).reset(1, 1),
         ["filters"]),
        ("SpectralFiltering filters array",
         lambda: _sf(filters=np.array(["lds", "exact"])).reset(1, 1), ["filters"]),
        ("SpectralFiltering filters dict", lambda: _sf(filters={"lds": 1}).fit_predict(U, U),
         ["filters"]),
        ("SpectralFilteringAR2 filters unknown",
         lambda: _ar2(filters="auto ").predict_one(1.0), ["filters"]),
        ("SpectralFiltering set_params filters bad",
         lambda: _sf().set_params(filters="lsd").learn_one(1.0, 1.0), ["filters"]),
        ("SpectralFiltering clone filters bad",
         lambda: _sf().clone(filters=3).learn_one(1.0, 1.0), ["filters"]),
        ("SpectralFiltering lds unreachable precision",
         lambda: _sf(filter_precision="quad", filters="lds").reset(1, 1),
         ["filter_precision"]),
        # -------------------------------------------------------------- context, horizon
        ("SpectralFiltering context 0 lds", lambda: _sf(context=0, filters="lds").reset(1, 1),
         ["context"]),
        ("SpectralFiltering context > horizon lds",
         lambda: _sf(context=65, filters="lds").reset(1, 1), ["context"]),
        ("SpectralFiltering context float", lambda: _sf(context=8.0).reset(1, 1),
         ["context"]),
        ("SpectralFiltering context string", lambda: _sf(context="8").learn_one(1.0, 1.0),
         ["context"]),
        ("SpectralFiltering context bool", lambda: _sf(context=True).learn_one(1.0, 1.0),
         ["context"]),
        ("SpectralFiltering context nan", lambda: _sf(context=nan).reset(1, 1), ["context"]),
        ("SpectralFilteringAR2 context 2 lds",
         lambda: _ar2(context=2, filters="lds").reset(1, 1), ["context"]),
        ("SpectralFilteringAR2 k 2", lambda: _ar2(k=2).learn_one(1.0, 1.0), ["k"]),
        ("SpectralFiltering horizon 0", lambda: _sf(horizon=0).predict_one(1.0), ["horizon"]),
        ("SpectralFiltering horizon bool", lambda: _sf(horizon=True, k=1).reset(1, 1),
         ["horizon"]),
        ("SpectralFiltering horizon nan", lambda: _sf(horizon=nan).reset(1, 1), ["horizon"]),
        ("SpectralFiltering horizon huge lds",
         lambda: _sf(horizon=10**13, filters="lds").reset(1, 1), ["horizon"]),
        ("SpectralFiltering horizon huge auto predict_one",
         lambda: _sf(horizon=2**40).predict_one({"a": 1.0}), ["horizon"]),
        ("SpectralFiltering k > horizon lds", lambda: _sf(k=65, filters="lds").reset(1, 1),
         ["k"]),
        ("SpectralFiltering lr nan lds", lambda: _sf(lr=nan, filters="lds").reset(1, 1),
         ["lr"]),
        ("SpectralFiltering lr_schedule bad", lambda: _sf(lr_schedule="adam").reset(1, 1),
         ["lr_schedule"]),
        ("SpectralFiltering radius negative", lambda: _sf(radius=-1.0).reset(1, 1),
         ["radius"]),
        # -------------------------------------------------------------- reset / learn_one
        ("SpectralFiltering reset d_in float", lambda: _sf().reset(1.0, 1), ["d_in"]),
        ("SpectralFiltering reset d_out 0", lambda: _sf().reset(1, 0), ["d_out"]),
        ("SpectralFiltering reset d_in huge",
         lambda: _sf(filters="lds").reset(10**12, 1), ["d_in"]),
        ("SpectralFiltering learn_one x dict nan",
         lambda: _sf().learn_one({"a": nan}, 1.0), ["x", "a"]),
        ("SpectralFiltering learn_one x dict inf lds",
         lambda: _sf(filters="lds").learn_one({"a": inf}, 1.0), ["x", "a"]),
        ("SpectralFiltering learn_one x dict str value",
         lambda: _sf().learn_one({"a": "1.0"}, 1.0), ["x", "a"]),
        ("SpectralFiltering learn_one x dict None value",
         lambda: _sf().learn_one({"a": None}, 1.0), ["x", "a"]),
        ("SpectralFiltering learn_one x dict complex value",
         lambda: _sf().learn_one({"a": 1j}, 1.0), ["x", "a"]),
        ("SpectralFiltering learn_one x dict list value",
         lambda: _sf().learn_one({"a": [1.0, 2.0]}, 1.0), ["x", "a"]),
        ("SpectralFiltering learn_one warm x dict nan",
         lambda: _stream(_sf(), [{"a": 1.0}, {"a": nan}], [1.0, 1.0]), ["x", "a"]),
        ("SpectralFiltering learn_one warm emerging key nan",
         lambda: _stream(_sf(), [{"a": 1.0}, {"a": 1.0, "b": nan}], [1.0, 1.0]), ["x", "b"]),
        ("SpectralFiltering learn_one warm emerging key str",
         lambda: _stream(_sf(), [{"a": 1.0}, {"b": "x"}], [1.0, 1.0]), ["x", "b"]),
        ("SpectralFiltering learn_one y nan", lambda: _sf().learn_one({"a": 1.0}, nan), ["y"]),
        ("SpectralFiltering learn_one y string", lambda: _sf().learn_one(1.0, "1"), ["y"]),
        ("SpectralFiltering learn_one y dict nan",
         lambda: _sf().learn_one(1.0, {"y": nan}), ["y"]),
        ("SpectralFiltering learn_one y warm inf",
         lambda: _stream(_sf(filters="lds"), [1.0, 1.0], [1.0, inf]), ["y"]),
        ("SpectralFiltering learn_one y dict new key",
         lambda: _stream(_sf(), [1.0, 1.0], [{"y": 1.0}, {"z": 1.0}]), ["y", "z"]),
        ("SpectralFiltering learn_one y dict missing key",
         lambda: _stream(_sf(), [1.0, 1.0], [{"y": 1.0, "z": 1.0}, {"y": 1.0}]), ["y", "z"]),
        ("SpectralFiltering learn_one x dict after array",
         lambda: _stream(_sf(), [1.0, {"a": 1.0}], [1.0, 1.0]), ["x", "dict"]),
        ("SpectralFiltering learn_one x array after dict",
         lambda: _stream(_sf(), [{"a": 1.0}, 1.0], [1.0, 1.0]), ["x", "dict"]),
        ("SpectralFiltering learn_one x shape changes",
         lambda: _stream(_sf(), [np.ones(2), np.ones(3)], [1.0, 1.0]), ["x", "(2,)"]),
        ("SpectralFiltering learn_one x 2-D", lambda: _sf().learn_one(np.ones((2, 2)), 1.0),
         ["x"]),
        ("SpectralFiltering learn_one x empty array", lambda: _sf().learn_one(np.ones(0), 1.0),
         ["x"]),
        ("SpectralFiltering learn_one featureless then features",
         lambda: _stream(_sf(), [{}, {"a": 1.0}], [1.0, 1.0]), ["x", "empty dict"]),
        ("SpectralFiltering learn_one empty then empty y nan",
         lambda: _stream(_sf(), [{}, {}], [1.0, nan]), ["y"]),
        ("SpectralFiltering learn_one y None", lambda: _sf().learn_one({"a": 1.0}), ["y"]),
        ("SpectralFiltering learn_one 20000 keys",
         lambda: _sf(horizon=2**20, k=24).learn_one(many, 1.0), ["x", "20000"]),
        ("SpectralFiltering learn_one keys grow past memory",
         lambda: _stream(_sf(horizon=2**20, k=24), [{"a": 1.0}, many], [1.0, 1.0]),
         ["x", "20001"]),
        ("SpectralFiltering predict_one x dict nan warm",
         lambda: _warm(_sf(filters="lds"), {"a": 1.0}).predict_one({"a": nan}), ["x", "a"]),
        ("SpectralFiltering predict_one x string", lambda: _sf().predict_one("abc"), ["x"]),
        ("SpectralFiltering predict_one x None", lambda: _sf().predict_one(None), ["x"]),
        ("SpectralFiltering predict_one x set", lambda: _sf().predict_one({1.0, 2.0}), ["x"]),
        ("SpectralFiltering fit_predict filters lds u nan",
         lambda: _sf(filters="lds").fit_predict(np.full((16, 1), nan), U), ["u"]),
        ("SpectralFiltering fit_predict filters lds u length",
         lambda: _sf(filters="lds").fit_predict(np.ones((15, 1)), U), ["u"]),
        ("LastValue learn_one y nan", lambda: core.LastValue().learn_one(1.0, nan), ["y"]),
        ("LDSOracle learn_one unknown key",
         lambda: core.LDSOracle(L.LDS([[0.5]], [[1.0]], [[1.0]], dt=1.0, inputs=["u"]))
         .learn_one({"v": 1.0}, 1.0), ["x", "v"]),
        ("LDSOracle predict_one x nan",
         lambda: core.LDSOracle(L.LDS([[0.5]], [[1.0]], [[1.0]], dt=1.0)).predict_one(nan),
         ["x"]),
    ]


def _river_cases():
    from lds_toolkit.learning import river as rv

    sys1 = L.LDS([[0.5]], [[1.0]], [[1.0]], dt=1.0, inputs=["a"], outputs=["y"])
    return [
        ("river SpectralFiltering learn_one x list",
         lambda: rv.SpectralFiltering(horizon=64, k=4).learn_one([1.0, "a"], 1.0), ["x"]),
        ("river SpectralFiltering learn_one x dict nan",
         lambda: rv.SpectralFiltering(horizon=64, k=4).learn_one({"a": nan}, 1.0), ["x", "a"]),
        ("river SpectralFiltering learn_one x dict bytes",
         lambda: rv.SpectralFiltering(horizon=64, k=4).learn_one({"a": b"1"}, 1.0),
         ["x", "a"]),
        ("river SpectralFiltering learn_one y dict str",
         lambda: rv.SpectralFiltering(horizon=64, k=4).learn_one({"a": 1.0}, {"y": "1"}),
         ["y"]),
        ("river SpectralFiltering learn_one y list",
         lambda: rv.SpectralFiltering(horizon=64, k=4).learn_one({"a": 1.0}, [nan]), ["y"]),
        ("river SpectralFiltering learn_one no y",
         lambda: rv.SpectralFiltering(horizon=64, k=4).learn_one({"a": 1.0}), ["y"]),
        ("river SpectralFiltering learn_one extra keyword",
         lambda: rv.SpectralFiltering(horizon=64, k=4).learn_one({"a": 1.0}, 1.0, w=2.0),
         ["w"]),
        ("river SpectralFiltering predict_one extra keyword",
         lambda: rv.SpectralFiltering(horizon=64, k=4).predict_one({"a": 1.0}, w=2.0), ["w"]),
        ("river SpectralFiltering predict_one x dict inf",
         lambda: rv.SpectralFiltering(horizon=64, k=4).predict_one({"a": inf}), ["x", "a"]),
        ("river SpectralFiltering filters bad",
         lambda: rv.SpectralFiltering(horizon=64, k=4, filters="river").learn_one(
             {"a": 1.0}, 1.0), ["filters"]),
        ("river SpectralFiltering filters lds context 0",
         lambda: rv.SpectralFiltering(horizon=64, k=4, context=0, filters="lds").predict_one(
             {"a": 1.0}), ["context"]),
        ("river SpectralFilteringAR2 learn_one warm x nan lds",
         lambda: _stream(rv.SpectralFilteringAR2(horizon=64, k=4, filters="lds"),
                         [{"a": 1.0}, {"a": nan}], [1.0, 1.0]), ["x", "a"]),
        ("river SpectralFilteringAR2 featureless then features",
         lambda: _stream(rv.SpectralFilteringAR2(horizon=64, k=4), [{}, {"b": 1.0}],
                         [1.0, 1.0]), ["x", "empty dict"]),
        ("river LastValue learn_one y str",
         lambda: rv.LastValue().learn_one({"a": 1.0}, "high"), ["y"]),
        ("river LastValue predict_one x tuple nan",
         lambda: rv.LastValue().predict_one((nan,)), ["x"]),
        ("river LDSOracle learn_one unknown key",
         lambda: rv.LDSOracle(sys1).learn_one({"b": 1.0}, 1.0), ["x", "b"]),
        ("river LDSOracle predict_one x dict nan",
         lambda: rv.LDSOracle(sys1).predict_one({"a": nan}), ["x", "a"]),
        ("river LDSOracle learn_one y unknown key",
         lambda: rv.LDSOracle(sys1).learn_one({"a": 1.0}, {"z": 1.0}), ["y", "z"]),
        ("river LDSOracle system string", lambda: rv.LDSOracle("sys").predict_one({"a": 1.0}),
         ["system"]),
        ("river BestInHindsight template bad",
         lambda: rv.BestInHindsight(template="sf").learn_one({"a": 1.0}, 1.0), ["template"]),
    ]


def _stu_cases():
    import torch

    from lds_toolkit.neural.layers.stu import STU

    torch.manual_seed(0)
    stu = STU(2, seq_len=32, num_filters=4).double()
    window = stu.initial_state(1, mode="window")
    return [
        ("STU.to_lds channel 2", lambda: stu.to_lds(2), ["channel"]),
        ("STU.to_lds channel negative", lambda: stu.to_lds(-1), ["channel"]),
        ("STU.to_lds channel float", lambda: stu.to_lds(1.0), ["channel"]),
        ("STU.to_lds channel bool", lambda: stu.to_lds(True), ["channel"]),
        ("STU.to_lds channel string", lambda: stu.to_lds("0"), ["channel"]),
        ("STU.to_lds channel numpy out of range", lambda: stu.to_lds(np.int64(5)), ["channel"]),
        ("STU.to_lds channel tensor", lambda: stu.to_lds(torch.tensor(3)), ["channel"]),
        ("STU.to_lds channel list", lambda: stu.to_lds([0]), ["channel"]),
        ("STU.to_lds tol 0", lambda: stu.to_lds(tol=0.0), ["tol"]),
        ("STU.to_lds tol nan", lambda: stu.to_lds(tol=nan), ["tol"]),
        ("STU.to_lds tol string", lambda: stu.to_lds(tol="1e-6"), ["tol"]),
        ("STU.to_lds tol bool", lambda: stu.to_lds(tol=True), ["tol"]),
        ("STU.initial_state mode", lambda: stu.initial_state(1, mode="exact"), ["mode"]),
        ("STU.initial_state tol negative", lambda: stu.initial_state(1, tol=-1.0), ["tol"]),
        ("STU.initial_state batch float", lambda: stu.initial_state(1.5), ["batch"]),
        ("STU.step x_t 1-D", lambda: stu.step(torch.ones(2, dtype=torch.float64),
                                              stu.initial_state(1)), ["x_t"]),
        ("STU.step x_t wrong width", lambda: stu.step(torch.ones(1, 3, dtype=torch.float64),
                                                      stu.initial_state(1)), ["x_t"]),
        ("STU.step x_t int dtype", lambda: stu.step(torch.ones(1, 2, dtype=torch.int64),
                                                    stu.initial_state(1)), ["x_t"]),
        ("STU.step x_t nan", lambda: stu.step(torch.full((1, 2), nan, dtype=torch.float64),
                                              stu.initial_state(1)), ["x_t"]),
        ("STU.step x_t numpy", lambda: stu.step(np.ones((1, 2)), stu.initial_state(1)),
         ["x_t"]),
        ("STU.step state wrong type", lambda: stu.step(torch.ones(1, 2, dtype=torch.float64),
                                                       (torch.zeros(1),)), ["state"]),
        ("STU.step state None", lambda: stu.step(torch.ones(1, 2, dtype=torch.float64), None),
         ["state"]),
        ("STU.step batch differs from state",
         lambda: stu.step(torch.ones(3, 2, dtype=torch.float64), stu.initial_state(1)),
         ["state", "batch"]),
        ("STU.step window batch differs",
         lambda: stu.step(torch.ones(3, 2, dtype=torch.float64), window), ["state", "batch"]),
        ("STU.step x_t complex",
         lambda: stu.step(torch.ones(1, 2, dtype=torch.complex128), stu.initial_state(1)),
         ["x_t"]),
    ]


def cases() -> list:
    """Every case of the pass's library half."""
    return (_filters_as_lds_cases() + _streaming_cases() + _river_cases() + _stu_cases())


def run_case(call, names, seconds: float = 60.0) -> tuple[str, str]:
    """``(verdict, detail)`` of one case."""
    return _run_case(call, names, seconds=seconds, errors=CLEAR_TYPES)


def main(module_cases) -> None:  # pragma: no cover - the counts for the report
    import collections

    counts: collections.Counter = collections.Counter()
    for case_id, call, names in module_cases():
        verdict, detail = run_case(call, names)
        counts[verdict] += 1
        print(f"{verdict:8s} {case_id}: {detail}", flush=True)
    print(f"{sum(counts.values())} cases: {counts['clear']} clear, {counts['unclear']} "
          f"unclear, {counts['silent']} silent")


if __name__ == "__main__":  # pragma: no cover
    main(cases)
