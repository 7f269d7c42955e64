"""river's contract: the learners as river estimators (``lds_toolkit.learning.river``).

river's own ``check_estimator`` on every learner; ``progressive_val_score`` and a
``StandardScaler() | learner`` pipeline give ``fit_predict``'s numbers (to 1e-12) on river's
TrumpApproval stream; dict features are read by name (key order changes nothing, bit for bit);
emerging and disappearing features are the zero-filled stream; ``predict_one`` has one form
per target, cold and warm; the ``"normalized"`` step is scale-free; river stays optional.
"""

from __future__ import annotations

import ast
import builtins
import importlib
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

river = pytest.importorskip("river")
pytest.importorskip("sklearn")  # river.checks reads its datasets through scikit-learn

from river import checks, datasets, evaluate, metrics, preprocessing  # noqa: E402

from lds_toolkit.learning import learners as core  # noqa: E402
from lds_toolkit.learning import river as rl  # noqa: E402
from lds_toolkit.systems import LDS  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::lds_toolkit.learning.FilterPrecisionWarning")

TWINS = [rl.SpectralFiltering, rl.SpectralFilteringAR2, rl.LastValue, rl.LDSOracle,
         rl.BestInHindsight]
# every learner in its first unit-test configuration (the default suite), the others slow
CASES = [pytest.param(cls, params, marks=[pytest.mark.slow] if i else [])
         for cls in TWINS for i, params in enumerate(cls._unit_test_params())]
DATASET_CHECKS = {"check_shuffle_features_no_impact", "check_emerging_features",
                  "check_disappearing_features", "check_radically_disappearing_features",
                  "check_predict_one_before_any_learn", "check_learn_one", "check_pickling",
                  "check_no_state_aliasing_with_input", "check_clone_is_independent",
                  "check_predict_one_pure", "check_bounded_memory_growth"}


@pytest.mark.parametrize("cls, params", CASES,
                         ids=[f"{p.values[0].__name__}-{i}" for i, p in enumerate(CASES)])
def test_check_estimator_passes_on_every_learner(cls, params):
    model = cls(**params)
    assert isinstance(model, river.base.Regressor) and isinstance(model, core.OnlineLearner)
    assert model._unit_test_skips() == set()  # no check is skipped, so none needs a reason
    names = {check.__name__ for check in checks.yield_checks(model)}
    assert DATASET_CHECKS <= names           # the feature checks are among those that run
    checks.check_estimator(model)


@pytest.fixture(scope="module")
def trump():
    """river's TrumpApproval stream as (rows of dicts, targets)."""
    data = list(datasets.TrumpApproval())
    return [x for x, _ in data], np.array([y for _, y in data])


def _matrix(rows, columns):
    return np.array([[x.get(c, 0.0) for c in columns] for x in rows])


def _oracle():
    return rl.LDSOracle(**next(rl.LDSOracle._unit_test_params()))


STREAMED = {  # the learners whose streaming run is fit_predict's (not BestInHindsight: its
    "sf-default": lambda: rl.SpectralFiltering(horizon=128, k=6),  # fit_predict is a solve)
    "sf-inv-sqrt": lambda: rl.SpectralFiltering(horizon=128, k=5, context=16, radius=50.0,
                                                lr=0.05, lr_schedule="inv_sqrt"),
    "ar2-default": lambda: rl.SpectralFilteringAR2(horizon=128, k=6),
    "last-value": rl.LastValue,
    "oracle": _oracle,
}


class RecordingMSE(metrics.MSE):
    """river's MSE, keeping every prediction it is updated with."""

    def __init__(self):
        super().__init__()
        self.predictions = []

    def update(self, y_true, y_pred, w=1.0):
        self.predictions.append(y_pred)
        super().update(y_true, y_pred, w)


def _progressive(model, rows, y):
    """``(predictions, MSE)`` of river's ``progressive_val_score`` over the stream."""
    metric = evaluate.progressive_val_score(zip(rows, y), model, RecordingMSE())
    return np.array(metric.predictions), metric.get()


@pytest.mark.parametrize("name", list(STREAMED))
def test_progressive_val_score_equals_fit_predict(trump, name):
    rows, y = trump
    make = STREAMED[name]
    columns = list(make().system.input_labels) if name == "oracle" else sorted(rows[0])
    batch = make().fit_predict(_matrix(rows, columns), y)[:, 0]
    streamed, mse = _progressive(make(), rows, y)
    assert np.all(np.isfinite(batch)) and streamed.shape == batch.shape
    np.testing.assert_allclose(streamed, batch, rtol=1e-12, atol=0)
    assert mse == pytest.approx(np.mean((batch - y) ** 2), rel=1e-12)


@pytest.mark.parametrize("name", ["sf-default", "sf-inv-sqrt", "ar2-default", "last-value"])
def test_standard_scaler_pipeline_equals_fit_predict_on_the_scaled_stream(trump, name):
    rows, y = trump
    scaler, scaled = preprocessing.StandardScaler(), []
    for x in rows:             # what the pipeline's learn_one feeds the learner: learn, then
        scaler.learn_one(x)    # transform (river's Pipeline.learn_one)
        scaled.append(scaler.transform_one(x))
    batch = STREAMED[name]().fit_predict(_matrix(scaled, sorted(rows[0])), y)[:, 0]
    pipeline = preprocessing.StandardScaler() | STREAMED[name]()
    np.testing.assert_allclose(_progressive(pipeline, rows, y)[0], batch, rtol=1e-12, atol=0)


@pytest.mark.parametrize("name", list(STREAMED) + ["hindsight"])
def test_key_order_does_not_change_a_prediction(trump, name):
    rows, y = trump
    make = ((lambda: rl.BestInHindsight(core.SpectralFiltering(horizon=64, k=4)))
            if name == "hindsight" else STREAMED[name])
    forward, backward = make(), make()
    for x, t in zip(rows[:150], y[:150]):
        reverse = dict(reversed(list(x.items())))
        assert forward.predict_one(x) == backward.predict_one(reverse)
        forward.learn_one(x, t)
        backward.learn_one(reverse, t)
    np.testing.assert_array_equal(forward.coef_, backward.coef_)


def test_oracle_reads_inputs_by_the_systems_names():
    """The issue's case: the first dict's key order decided which input was which."""
    sys_ = LDS([[0.0]], [[1.0, 0.0]], [[1.0]], dt=1.0, inputs=["a", "b"])
    preds = []
    for x in ({"a": 1.0, "b": 0.0}, {"b": 0.0, "a": 1.0}):
        oracle = core.LDSOracle(sys_)
        oracle.learn_one(x, 0.0)
        preds.append(oracle.predict_one(x))
    assert preds == [1.0, 1.0]
    rng = np.random.default_rng(3)
    u = rng.standard_normal((30, 2))
    u[10:15, 1] = 0.0                                     # "b" missing: counts as 0
    ref = core.LDSOracle(sys_).fit_predict(u, np.zeros(30))[:, 0]
    oracle, got = core.LDSOracle(sys_), []
    for t, (a, b) in enumerate(u):
        x = {"b": b, "a": a} if not 10 <= t < 15 else {"a": a}
        got.append(oracle.predict_one(x))
        oracle.learn_one(x, 0.0)
    np.testing.assert_allclose(got, ref, rtol=0, atol=1e-15)
    with pytest.raises(ValueError, match=r"x \(u_t\) has the key 'c', which is not one of "
                                         r"the names \['a', 'b'\] \(matched by name\)"):
        oracle.learn_one({"a": 1.0, "c": 2.0}, 0.0)


@pytest.mark.parametrize("make", [lambda: core.SpectralFiltering(horizon=40, k=4, lr=0.05),
                                  lambda: rl.SpectralFilteringAR2(horizon=40, k=5)],
                         ids=["sf", "ar2-river"])
def test_emerging_and_disappearing_features_are_the_zero_filled_stream(make):
    """river's convention: a feature seen for the first time is a new input whose past was 0;
    a missing one counts as 0. The streamed dicts equal fit_predict on the zero-filled
    matrix (columns: the first keys sorted, then new ones in order of arrival)."""
    rng = np.random.default_rng(9)
    n = 40
    u, y = rng.standard_normal((n, 3)), rng.standard_normal(n)
    u[:10, 2] = 0.0      # "c" emerges at t = 10
    u[20:30, 0] = 0.0    # "b" disappears for t = 20..29 (column 0 is "b")
    learner, got = make(), []
    for t in range(n):
        x = {"b": u[t, 0], "a": u[t, 1]}
        if t >= 10:
            x["c"] = u[t, 2]
        if 20 <= t < 30:
            del x["b"]
        got.append(learner.predict_one(x))
        learner.learn_one(x, y[t])
    assert learner.input_names_ == ["a", "b", "c"]
    ref = make().fit_predict(u[:, [1, 0, 2]], y)[:, 0]
    np.testing.assert_allclose(got, ref, rtol=0, atol=1e-12 * np.abs(ref).max())


def _streams(kind):
    """(x, y) of 6 steps in a form: scalar, 1-element array, array (2 outputs), dicts."""
    rng = np.random.default_rng(1)
    u, y = rng.standard_normal((6, 2)), rng.standard_normal((6, 2))
    if kind == "scalar":
        return [(float(a), float(b)) for a, b in zip(u[:, 0], y[:, 0])]
    if kind == "array-1":
        return [(a[:1], b[:1]) for a, b in zip(u, y)]
    if kind == "array-2":
        return list(zip(u, y))
    if kind == "dict-x":
        return [({"p": a[0], "q": a[1]}, float(b[0])) for a, b in zip(u, y)]
    return [({"p": a[0], "q": a[1]}, {"v": b[0], "w": b[1]}) for a, b in zip(u, y)]


LEARNERS = {
    "sf": lambda d_in, d_out: core.SpectralFiltering(horizon=16, k=3, lr=0.05),
    "ar2": lambda d_in, d_out: rl.SpectralFilteringAR2(horizon=16, k=4),
    "last": lambda d_in, d_out: core.LastValue(),
    "hindsight": lambda d_in, d_out: core.BestInHindsight(core.SpectralFiltering(16, 3)),
    "oracle": lambda d_in, d_out: core.LDSOracle(LDS(
        0.5 * np.eye(2), np.ones((2, d_in)), np.ones((d_out, 2)), dt=1.0,
        inputs=["p", "q"][:d_in] if d_in == 2 else None,
        outputs=["v", "w"][:d_out] if d_out == 2 else None)),
}
FORMS = {  # stream kind -> (d_in, d_out, the type a warm prediction has)
    "scalar": (1, 1, float), "array-1": (1, 1, float), "array-2": (2, 2, np.ndarray),
    "dict-x": (2, 1, float), "dict-y": (2, 2, dict)}


@pytest.mark.parametrize("kind", list(FORMS))
@pytest.mark.parametrize("name", list(LEARNERS))
def test_predict_one_has_one_form_per_target_cold_and_warm(name, kind):
    d_in, d_out, warm_type = FORMS[kind]
    learner = LEARNERS[name](d_in, d_out)
    stream = _streams(kind)
    cold = learner.predict_one(stream[0][0])
    if name == "oracle":   # sized by its system: C x_0 in the output's form
        assert type(cold) is (float if d_out == 1 else np.ndarray)
    else:                  # no target seen: yhat_0 = 0.0
        assert type(cold) is float and cold == 0.0
    for i, (x, t) in enumerate(stream):
        got = learner.predict_one(x)
        if i:
            assert type(got) is warm_type
            if warm_type is np.ndarray:
                assert got.shape == (2,)
            if warm_type is dict:
                assert list(got) == ["v", "w"]
        learner.learn_one(x, t)
    assert type(learner.predict_one(stream[0][0])) is warm_type
    # after fit_predict (arrays), a scalar target still comes back as a float
    if kind in ("scalar", "array-1"):
        learner.fit_predict(np.zeros((5, 1)), np.zeros(5))
        assert type(learner.predict_one(0.0)) is float


def test_normalized_steps_are_scale_free_and_stable_on_unscaled_streams(trump):
    rng = np.random.default_rng(2)
    u, y = rng.standard_normal((200, 2)), rng.standard_normal((200, 1))
    make = lambda: core.SpectralFiltering(horizon=64, k=5, lr=0.5, lr_schedule="normalized")
    base = make().fit_predict(u, y)
    np.testing.assert_array_equal(make().fit_predict(1024.0 * u, y), base)  # exact powers of 2
    plain, streamed = make(), make()
    plain.fit_predict(u, y)
    for a, b in zip(1024.0 * u, y):
        streamed.learn_one(a, b)
    np.testing.assert_allclose(1024.0 * streamed.coef_, plain.coef_, rtol=1e-12, atol=1e-14)
    rows, target = trump     # river's stream in its own units: a date of ~7e5 beside ~40
    preds = rl.SpectralFiltering(horizon=128, k=6).fit_predict(_matrix(rows, sorted(rows[0])),
                                                                target)
    assert np.all(np.isfinite(preds))


def test_river_stays_optional(monkeypatch):
    """Only lds_toolkit/learning/river.py imports river; without river it names the extra."""
    root = Path(core.__file__).resolve().parents[1]
    importers = []
    for path in root.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import) else
                     [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level
                     else [])
            if any(n == "river" or n.startswith("river.") for n in names):
                importers.append(path.relative_to(root).as_posix())
    assert importers == ["learning/river.py"]
    real_import = builtins.__import__

    def no_river(name, *args, **kwargs):
        if name == "river" or name.startswith("river."):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_river)
    monkeypatch.delitem(sys.modules, "lds_toolkit.learning.river")
    with pytest.raises(ModuleNotFoundError, match=r'needs river.*pip install "lds_toolkit\[river'):
        importlib.import_module("lds_toolkit.learning.river")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        core.SpectralFiltering(horizon=8, k=2).learn_one({"a": 1.0}, 1.0)  # works without it
