"""filters_as_lds: the spectral filters as the impulse response of a small diagonal LDS.

Checked against :func:`spectral_filters` through :func:`simulate` (an independent path: the
fit never calls simulate), at small T for both kinds and every branch, and at the issue's
targets (T = 2^14 fast, T = 2^20 slow)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import lds_toolkit
from lds_toolkit.learning import FiltersLDSReport, filters_as_lds, spectral_filters
from lds_toolkit.learning.filters import FilterPrecisionWarning
from lds_toolkit.learning.filters_lds import _MEMORY
from lds_toolkit.systems import simulate


def impulse(lds, T):
    u = np.zeros((T, 1))
    u[0] = 1.0
    return simulate(lds, u, return_states=False).y


def rel_errors(y, phi):
    return np.linalg.norm(y - phi, axis=0) / np.linalg.norm(phi, axis=0)


@pytest.fixture(autouse=True)
def _fresh_memory():
    _MEMORY.clear()
    yield
    _MEMORY.clear()


@pytest.mark.parametrize("kind", ["H", "N"])
@pytest.mark.parametrize("branch", ["positive", "negative", "both"])
@pytest.mark.parametrize("T,k", [(64, 6), (1500, 10), (3000, 16)])
def test_impulse_response_equals_filters(kind, branch, T, k):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FilterPrecisionWarning)
        lds = filters_as_lds(T, k, kind, branch=branch, tol=1e-6)
        _, phi = spectral_filters(T, k, kind, branch=branch)
    rep = lds.fit_report
    width = 2 * k if branch == "both" else k
    assert (lds.n_inputs, lds.n_outputs, lds.dt) == (1, width, 1.0)
    err = rel_errors(impulse(lds, T), phi)
    assert err.max() <= 1e-6
    np.testing.assert_allclose(err, rep.errors, rtol=1e-3, atol=1e-12)
    # diagonal A of real decays in (0, 1) (negative branch: their negatives)
    A = np.asarray(lds.A)
    assert np.count_nonzero(A - np.diag(np.diag(A))) == 0
    a = np.diag(A)
    if branch == "positive":
        assert np.all((a > 0) & (a < 1))
    elif branch == "negative":
        assert np.all((a < 0) & (a > -1))
    else:
        assert np.all((np.abs(a) > 0) & (np.abs(a) < 1))
        assert (a > 0).sum() == (a < 0).sum() == rep.n_states // 2
    assert rep.n_states == lds.n_states
    assert abs(rep.max_error - err.max()) <= 1e-3 * err.max() + 1e-12


@pytest.mark.parametrize("kind,budget", [("H", 96), ("N", 96)])
def test_target_T_2_14(kind, budget):
    """The issue's target: T = 2^14, k = 24, <= 1e-6 with <= 96 states, checked by simulation."""
    T = 2**14
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FilterPrecisionWarning)
        lds = filters_as_lds(T, 24, kind)
        _, phi = spectral_filters(T, 24, kind)
    assert lds.n_states <= budget
    assert rel_errors(impulse(lds, T), phi).max() <= 1e-6


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["H", "N"])
def test_target_T_2_20(kind):
    T = 2**20
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FilterPrecisionWarning)
        lds = filters_as_lds(T, 24, kind)
        _, phi = spectral_filters(T, 24, kind)
    assert lds.n_states <= 160
    assert rel_errors(impulse(lds, T), phi).max() <= 1e-6


def test_top_level_export_and_report():
    assert lds_toolkit.filters_as_lds is filters_as_lds
    lds = filters_as_lds(200, 4, tol=1e-7)
    rep = lds.fit_report
    assert isinstance(rep, FiltersLDSReport)
    assert (rep.T, rep.k, rep.kind, rep.branch, rep.tol) == (200, 4, "H", "positive", 1e-7)
    assert rep.max_error <= 1e-7 and not rep.from_cache
    assert filters_as_lds(200, 4, tol=1e-7).fit_report.from_cache
    assert list(lds.output_labels) == [f"phi[{i}]" for i in range(4)]
    assert list(filters_as_lds(200, 4, branch="negative", tol=1e-7).output_labels) == [
        f"phi_neg[{i}]" for i in range(4)]


def test_single_tap():
    lds = filters_as_lds(1, 1)
    np.testing.assert_allclose(impulse(lds, 1), spectral_filters(1, 1)[1])


def test_cache_file_checked_and_corruption_refused(tmp_path, monkeypatch):
    monkeypatch.setenv("LDS_TOOLKIT_CACHE", str(tmp_path))
    first = filters_as_lds(300, 5, "H")
    files = sorted(tmp_path.glob("filters_lds_*.npz"))
    assert len(files) == 1
    _MEMORY.clear()
    again = filters_as_lds(300, 5, "H")
    assert again.fit_report.from_cache and again.equals(first)
    # flip a byte inside the stored coefficients: refused with a warning, refitted, rewritten
    data = bytearray(files[0].read_bytes())
    data[len(data) // 2] ^= 0xFF
    files[0].write_bytes(bytes(data))
    _MEMORY.clear()
    with pytest.warns(RuntimeWarning, match="integrity check"):
        refit = filters_as_lds(300, 5, "H")
    assert not refit.fit_report.from_cache and refit.equals(first)
    _MEMORY.clear()
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        assert filters_as_lds(300, 5, "H").fit_report.from_cache
    # a file with a consistent checksum but another key (foreign) is refused too
    other = tmp_path / files[0].name.replace("T300", "T301")
    other.write_bytes(files[0].read_bytes())
    _MEMORY.clear()
    with pytest.warns(RuntimeWarning, match="integrity check"):
        filters_as_lds(301, 5, "H")


@pytest.mark.parametrize("kwargs,exc,match", [
    ({"T": 0, "k": 1}, ValueError, "T must be an integer >= 1"),
    ({"T": 10.0, "k": 1}, TypeError, "T must be an integer"),
    ({"T": 10, "k": 0}, ValueError, "k must be an integer >= 1"),
    ({"T": 10, "k": 11}, ValueError, "k must be <= T"),
    ({"T": 10, "k": 2, "kind": "Z"}, ValueError, "kind must be 'H'"),
    ({"T": 10, "k": 2, "branch": "pos"}, ValueError, "branch must be one of"),
    ({"T": 10, "k": 2, "tol": 0.0}, ValueError, "tol must lie in"),
    ({"T": 10, "k": 2, "tol": float("nan")}, ValueError, "tol must be finite"),
    ({"T": 10, "k": 2, "tol": "1e-6"}, TypeError, "tol must be a real number"),
    ({"T": 10, "k": 2, "cache": 1}, TypeError, "cache must be True or False"),
])
def test_argument_errors(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        filters_as_lds(**kwargs)


def test_unreachable_tol_names_the_problem():
    with pytest.raises(ValueError, match=r"T=4000, k=12, kind='H'.*best worst-filter relative "
                                         r"L2 error was"):
        filters_as_lds(4000, 12, "H", tol=1e-15, cache=False)


def test_extended_precision_filters():
    """N_T's last filters at T = 2048 are float64 round-off (no short exponential sum follows
    them); the extended-precision filters are the true ones, and they fit."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FilterPrecisionWarning)
        with pytest.raises(ValueError, match="precision='extended' resolves them"):
            filters_as_lds(2048, 24, "N", cache=False)
        lds = filters_as_lds(2048, 24, "N", precision="extended", branch="both")
        _, phi = spectral_filters(2048, 24, "N", precision="extended", branch="both")
    assert lds.fit_report.precision == "extended"
    assert rel_errors(impulse(lds, 2048), phi).max() <= 1e-6
    with pytest.raises(ValueError, match="precision must be one of"):
        filters_as_lds(64, 4, precision="quad")
