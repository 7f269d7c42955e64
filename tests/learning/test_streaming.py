"""Streaming at stream speed (issue 44): the features of a diagonal-LDS bank with the
windowed-state recursion, the compiled step, feature-less streams, and the learners' memory
check (issue 46).

The bank's algebra is checked against independent computations: its taps against
``simulate``'s impulse response of the same LDS, its features against the FFT convolution of
those taps, and a learner streaming through it against ``fit_predict`` over the taps.
"""

from __future__ import annotations

import numpy as np
import pytest

from lds_toolkit.learning import LastValue, SpectralFiltering, SpectralFilteringAR2
from lds_toolkit.learning._kernels import lagged_features
from lds_toolkit.learning._stream import DiagonalBank, bank_design, bank_state
from lds_toolkit.systems import LDS, simulate


def _random_bank(rng, n=7, mb=4, m0=0, L=20):
    decays = np.sort(rng.uniform(-0.95, 0.99, n))
    return DiagonalBank(decays, rng.standard_normal((mb, n)), rng.standard_normal(mb), m0, L)


@pytest.mark.parametrize("m0", [0, 2])
def test_the_bank_taps_are_the_impulse_response_of_its_lds(m0):
    """taps[m0 + j, m0 + b] = h_b(j), j < L - m0, for h the impulse response simulate gives
    (y_t = C x_t + D u_t, x_{t+1} = A x_t + B u_t), behind m0 pure delays."""
    rng = np.random.default_rng(0)
    bank = _random_bank(rng, m0=m0, L=30)
    lds = LDS(np.diag(bank.decays), np.ones((bank.n, 1)), bank.C, bank.D[:, None], dt=1.0)
    impulse = np.zeros(30)
    impulse[0] = 1.0
    h = simulate(lds, impulse).y  # (30, mb)
    taps = bank.taps()
    np.testing.assert_allclose(taps[m0:, m0:], h[: 30 - m0], rtol=1e-12, atol=1e-14)
    assert np.array_equal(taps[:m0, :m0], np.eye(m0))
    assert not taps[m0:, :m0].any() and not taps[:m0, m0:].any()


@pytest.mark.parametrize("m0,L", [(0, 1), (0, 9), (0, 64), (0, 500), (2, 3), (2, 17),
                                  (2, 500)])
def test_the_windowed_recursion_equals_the_window_of_taps(m0, L):
    """x_t through w_{t+1} = a w_t + u_{t-1-m0} - a^c u_{t-L} equals the FFT convolution of
    the first L taps, zero-padded history, windows shorter and longer than the stream."""
    rng = np.random.default_rng(L + m0)
    bank = _random_bank(rng, m0=m0, L=L)
    u = rng.standard_normal((300, 3))
    X = np.empty((300, bank.m, 3))
    w = bank_design(u, bank.decays, bank.C, bank.D, bank.m0, bank.L, X)
    ref = lagged_features(u, bank.taps(), lag=1)
    np.testing.assert_allclose(X, ref, rtol=0, atol=1e-11 * np.abs(ref).max())
    # the state after the stream, by the recursion and by its definition
    np.testing.assert_allclose(w, bank_state(u, bank.decays, m0, L), rtol=1e-11, atol=1e-12)


class _BankLearner(SpectralFiltering):
    """A learner whose taps are a given bank's, streamed through that bank."""

    bank: DiagonalBank

    def _setup(self):
        return self.bank.taps(), (1.0,)

    def _streaming_bank(self):
        return self.bank

    def _batch_bank(self):
        return None


@pytest.mark.parametrize("m0,L", [(0, 12), (2, 40), (0, 200)])
def test_streaming_through_the_bank_equals_fit_predict_over_its_taps(m0, L):
    rng = np.random.default_rng(3)
    bank = _random_bank(rng, m0=m0, L=L)
    learner = _BankLearner(horizon=L, k=bank.m, lr=0.05, radius=5.0)
    learner.bank = bank
    u, y = rng.standard_normal((150, 2)), rng.standard_normal((150, 1))
    ref = learner.fit_predict(u, y)
    streamed = _BankLearner(horizon=L, k=bank.m, lr=0.05, radius=5.0)
    streamed.bank = bank
    got = []
    for t in range(150):
        got.append(streamed.predict_one(u[t]))
        streamed.learn_one(u[t], y[t])
    np.testing.assert_allclose(got, ref[:, 0], rtol=0, atol=1e-11 * np.abs(ref).max())
    # fit_predict leaves the bank's state where the steps leave it: continuing agrees
    u2, y2 = rng.standard_normal((30, 2)), rng.standard_normal((30, 1))
    for t in range(30):
        a, b = learner.predict_one(u2[t]), streamed.predict_one(u2[t])
        assert abs(a - b) <= 1e-11 * max(1.0, abs(b))
        learner.learn_one(u2[t], y2[t])
        streamed.learn_one(u2[t], y2[t])


def _ar2(seed, n=600):
    rng = np.random.default_rng(seed)
    y = np.zeros(n)
    for t in range(2, n):  # y_t = 1.5 y_{t-1} - 0.7 y_{t-2} + e_t (poles at radius 0.84)
        y[t] = 1.5 * y[t - 1] - 0.7 * y[t - 2] + rng.standard_normal()
    return y


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_a_featureless_stream_learns_from_its_own_past(seed):
    """x = {}: u_t := y_t. On an AR(2) stream (a_1 = 1.5, a_2 = -0.7) Algorithm 2, which
    holds the model exactly (M_1 = a_1 - 2, M_2 = a_2 + 1), beats LastValue's MAE by a
    margin; the streamed numbers are fit_predict(y, y)'s."""
    rl = pytest.importorskip("lds_toolkit.learning.river")
    y = _ar2(seed)
    model, last = rl.SpectralFilteringAR2(horizon=64, k=5), rl.LastValue()
    pred, base = [], []
    for t in range(y.size):
        pred.append(model.predict_one({}))
        base.append(last.predict_one({}))
        model.learn_one({}, y[t])
        last.learn_one({}, y[t])
    mae, mae_last = np.mean(np.abs(np.subtract(pred, y))[100:]), np.mean(
        np.abs(np.subtract(base, y))[100:])
    assert mae < 0.8 * mae_last, (mae, mae_last)
    ref = rl.SpectralFilteringAR2(horizon=64, k=5).fit_predict(y, y)[:, 0]
    np.testing.assert_allclose(pred, ref, rtol=0, atol=1e-10 * np.abs(ref).max())
    assert model.input_names_ == ["y"]


def test_a_featureless_stream_refuses_features_later_and_core_learners_take_it_too():
    learner = SpectralFiltering(horizon=16, k=3)
    assert learner.predict_one({}) == 0.0
    learner.learn_one({}, 1.0)
    learner.learn_one({}, 2.0)
    assert learner.coef_.shape == (3, 1, 1)
    with pytest.raises(ValueError, match=r"x \(u_t\) must be an empty dict, as in the first "
                                         r"call: a feature-less stream"):
        learner.learn_one({"a": 1.0}, 3.0)
    with pytest.raises(ValueError, match="must be an empty dict"):
        learner.predict_one([1.0])


def test_a_huge_feature_dict_is_refused_before_allocating(monkeypatch):
    """20,000 keys at the default horizon need 2 L d_in float64 of window: the error says
    how much, before anything is allocated (issue 46)."""
    import lds_toolkit.learning._protocol as proto

    monkeypatch.setattr(proto, "available_memory_bytes", lambda: 2 * 2**30)
    learner = SpectralFiltering(filters="exact")
    x = {f"f{i}": 1.0 for i in range(20_000)}
    with pytest.raises(ValueError, match=r"x \(u_t\) has 20000 features: SpectralFiltering "
                                         r"with context L=16384 keeps 2 L x d_in = 32768 x "
                                         r"20000 past inputs .* 4\.8\d GiB, more than the "
                                         r"2 GiB of memory available"):
        learner.learn_one(x, 1.0)
    assert not learner._started()  # nothing was sized or allocated
    small = SpectralFiltering(horizon=64, k=3)  # a key that emerges later is checked too
    small.learn_one({"a": 1.0}, 1.0)
    monkeypatch.setattr(proto, "available_memory_bytes", lambda: 1000)
    with pytest.raises(ValueError, match="has 2 features"):
        small.learn_one({"a": 1.0, "b": 2.0}, 1.0)


@pytest.mark.parametrize("make", ["SpectralFiltering", "SpectralFilteringAR2", "LastValue"])
@pytest.mark.parametrize("target", [1.0, np.array([1.0]), {"y": 1.0}, np.array([1.0, 2.0])])
def test_an_emerging_key_gives_the_same_form_on_core_learners_and_river_twins(make, target):
    """One form per target stream (float, dict, array of d_out), whatever keys emerge, the
    same on a core learner and its river twin (issue 46)."""
    rl = pytest.importorskip("lds_toolkit.learning.river")
    core_cls = {"SpectralFiltering": SpectralFiltering, "LastValue": LastValue,
                "SpectralFilteringAR2": SpectralFilteringAR2}[make]
    kw = {} if make == "LastValue" else {"horizon": 16, "k": 4}
    forms = []
    for cls in (core_cls, getattr(rl, make)):
        learner, seen = cls(**kw), []
        for x in ({"a": 1.0}, {"a": 1.0, "b": 2.0}, {"c": 3.0}, {"a": 1, "b": 2, "c": 3}):
            seen.append(learner.predict_one(x))
            learner.learn_one(x, target)
        seen.append(learner.predict_one({"d": 1.0}))
        forms.append([type(v).__name__ + str(getattr(v, "shape", "")) for v in seen])
    expected = {float: "float", dict: "dict"}.get(type(target), "float")
    if isinstance(target, np.ndarray) and target.size == 2:
        expected = "ndarray(2,)"
    assert forms[0] == forms[1] == [expected] * 5 or (forms[0] == forms[1] and forms[0][0]
                                                      == "float" and
                                                      set(forms[0][1:]) == {expected})


def _rel_rms(a, b):
    return float(np.sqrt(np.mean((a - b) ** 2)) / np.sqrt(np.mean(b ** 2)))


@pytest.mark.parametrize("cls", [SpectralFiltering, SpectralFilteringAR2])
@pytest.mark.parametrize("context", [None, 700])
def test_the_lds_route_equals_the_exact_route(cls, context):
    """Default horizon and k: the features through filters_as_lds' LDS (the window kept by
    the recursion, a context of 700 taps included) are the exact taps' within 1e-6 relative
    RMS per filter, and so are the predictions, batch and streamed; the streamed ones are
    the lds batch path's to round-off."""
    import warnings

    from lds_toolkit.learning import FilterPrecisionWarning
    from lds_toolkit.systems import random_lds

    warnings.simplefilter("ignore", FilterPrecisionWarning)
    rng = np.random.default_rng(5)
    system = random_lds(4, [(0.5, 0.999)], d_in=2, rng=1)
    u = rng.standard_normal((1200, 2))
    y = simulate(system, u, output="lengen").y
    kw = dict(context=context, lr=0.5, lr_schedule="normalized")
    exact, lds = cls(filters="exact", **kw), cls(filters="lds", **kw)
    Xe, Xl = exact.design(u, y)[0], lds.design(u, y)[0]
    per_filter = np.sqrt(np.mean((Xl - Xe) ** 2, axis=(0, 2)) / np.mean(Xe ** 2, axis=(0, 2)))
    assert per_filter.max() <= 1e-6, per_filter.max()
    pe, pl = exact.fit_predict(u, y), lds.fit_predict(u, y)
    assert _rel_rms(pl, pe) <= 1e-6
    assert _rel_rms(pl - y, pe - y) <= 1e-6  # the errors too, not only the y_{t-1} part
    streamed = cls(filters="lds", **kw)
    got = []
    for t in range(300):
        got.append(streamed.predict_one(u[t]))
        streamed.learn_one(u[t], y[t])
    np.testing.assert_allclose(got, pl[:300, 0], rtol=0, atol=1e-12 * np.abs(pl).max())
    assert lds._bank.n < 100 and exact._bank is None


def test_auto_streams_through_the_lds_where_it_pays_and_batches_exactly():
    """filters='auto': the steps take the LDS at the default horizon (context >= 512 and
    the LDS step costs at most half the window's), the exact window at horizon 64; the
    batch path is exact either way."""
    big, small = SpectralFiltering(), SpectralFiltering(horizon=64, k=6)
    assert big._streaming_bank() is not None and big._batch_bank() is None
    assert small._streaming_bank() is None and small._batch_bank() is None
    bank = big._streaming_bank()
    assert 2 * bank.cost(1) <= 2**14 * 24
    with pytest.raises(ValueError, match=r"filters must be one of .*got 'fast'"):
        SpectralFiltering(filters="fast").reset(1, 1)


def test_best_in_hindsight_takes_the_route_of_its_template():
    """BestInHindsight builds its class's features through the template's route: with an
    lds template its fixed predictor's predictions are the exact template's within 1e-6."""
    import warnings

    from lds_toolkit.learning import BestInHindsight, FilterPrecisionWarning

    warnings.simplefilter("ignore", FilterPrecisionWarning)
    rng = np.random.default_rng(2)
    u = rng.standard_normal((800, 1))
    y = np.cumsum(u[:, 0]) * 0.1 + 0.01 * rng.standard_normal(800)
    exact = BestInHindsight(SpectralFiltering(filters="exact"), radius=10.0)
    lds = BestInHindsight(SpectralFiltering(filters="lds"), radius=10.0)
    pe, pl = exact.fit_predict(u, y), lds.fit_predict(u, y)
    assert _rel_rms(pl, pe) <= 1e-6 and _rel_rms(pl - y[:, None], pe - y[:, None]) <= 1e-6
    assert lds._class()._batch_bank() is not None and exact._class()._batch_bank() is None


def test_lds_says_what_to_do_when_no_realization_reaches_the_tolerance():
    import warnings

    from lds_toolkit.learning import FilterPrecisionWarning

    warnings.simplefilter("ignore", FilterPrecisionWarning)
    learner = SpectralFiltering(horizon=64, k=64, filters="lds")  # 64 filters, most round-off
    with pytest.raises(ValueError, match=r"filters='lds': filters_as_lds\(T=64, k=64, "
                                         r"kind='H'\): no sum .* use filters='exact', or "
                                         r"'auto'"):
        learner.fit_predict(np.ones(5), np.ones(5))


def test_lds_fails_before_the_stream_starts_and_auto_falls_back_to_exact():
    """filters='lds' that no realization reaches fails at the first learn_one, leaving the
    learner cold; 'auto' streams exactly there (the same numbers as 'exact')."""
    import warnings

    from lds_toolkit.learning import FilterPrecisionWarning

    warnings.simplefilter("ignore", FilterPrecisionWarning)
    learner = SpectralFiltering(horizon=600, k=200, filters="lds")
    with pytest.raises(ValueError, match="filters='lds'"):
        learner.learn_one(1.0, 1.0)
    assert not learner._started()
    rng = np.random.default_rng(4)
    u, y = rng.standard_normal(40), rng.standard_normal(40)
    auto, exact = (SpectralFiltering(horizon=600, k=200, filters=f, lr=0.01)
                   for f in ("auto", "exact"))
    for t in range(40):
        assert auto.predict_one(u[t]) == exact.predict_one(u[t])
        auto.learn_one(u[t], y[t])
        exact.learn_one(u[t], y[t])
    assert auto._bank is None and not auto._route_pending


def test_compare_runs_names_experiments_on_one_side_and_refuses_no_common_one(tmp_path):
    """``benchmarks/streaming.py --compare-runs``: an experiment in one root only is named and
    skipped (lengen-regions takes no ``filters``); no experiment in common is a clear error."""
    import importlib.util
    import json as _json
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "benchmarks" / "streaming.py"
    spec = importlib.util.spec_from_file_location("streaming_bench", path)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    exact, lds = tmp_path / "exact", tmp_path / "lds"
    (exact / "lengen-regions").mkdir(parents=True)
    (exact / "lengen-regions" / "summary.json").write_text(_json.dumps({"x": 1.0}))
    lds.mkdir()
    with pytest.raises(SystemExit, match="no experiment has a summary.json in both"):
        bench.compare_runs(exact, lds)
