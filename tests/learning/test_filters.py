"""Spectral filters of H_T (eq. 3) and N_T (eq. 5): closed forms, paths, conventions, cache."""

import warnings
from pathlib import Path

import numpy as np
import pytest
from scipy import integrate

from lds_toolkit.learning import (
    RESOLVABLE_FLOOR,
    FilterPrecisionWarning,
    eigenvector_error_bound,
    filter_matrix,
    spectral_filters,
)
from lds_toolkit.learning import filters as F
from lds_toolkit.learning._hankel import HankelFFT, hankel_symbol


def _quiet(*args, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FilterPrecisionWarning)
        return spectral_filters(*args, **kw)


# ---------------------------------------------------------------- closed forms
@pytest.mark.parametrize("kind, power", [("H", 1), ("N", 2)])
@pytest.mark.parametrize("i, j", [(0, 0), (0, 1), (2, 3), (7, 0), (10, 25), (40, 61)])
def test_entries_match_numerical_integration_of_definition(kind, power, i, j):
    # (M)_{ij} = int_0^1 mu_alpha[i] mu_alpha[j] d alpha with mu = (1-a)^power [1, a, a^2, ...]
    f = lambda a: ((1 - a) ** power * a**i) * ((1 - a) ** power * a**j)
    ref, _ = integrate.quad(f, 0.0, 1.0, epsabs=0, epsrel=1e-13, limit=200)
    got = filter_matrix(max(i, j) + 1, kind)[i, j]
    assert got == pytest.approx(ref, rel=1e-11)


def test_H_equals_hazan_Z_counted_from_one():
    T = 50
    i1 = np.arange(1, T + 1)
    s = np.add.outer(i1, i1).astype(float)
    Z = 2.0 / (s**3 - s)
    np.testing.assert_allclose(filter_matrix(T, "H"), Z, rtol=1e-14)


@pytest.mark.parametrize("kind, power", [("H", 1), ("N", 2)])
def test_matrix_is_integral_of_outer_products_by_quadrature(kind, power):
    # Gauss-Legendre with n nodes is exact for the polynomial integrand of degree <= 2T + 2.
    T = 40
    x, w = np.polynomial.legendre.leggauss(T + 5)
    a, w = 0.5 * (x + 1.0), 0.5 * w
    mu = (1 - a)[:, None] ** power * a[:, None] ** np.arange(T)[None, :]
    ref = (mu * w[:, None]).T @ mu
    np.testing.assert_allclose(filter_matrix(T, kind), ref, rtol=1e-12, atol=1e-17)


@pytest.mark.parametrize("kind", ["H", "N"])
@pytest.mark.parametrize("T", [5, 64, 333, 1000])
def test_fft_hankel_matvec_equals_dense(kind, T):
    rng = np.random.default_rng(T)
    X = rng.standard_normal((T, 7))
    op = HankelFFT(T, kind)
    want = filter_matrix(T, kind) @ X
    np.testing.assert_allclose(op.matmat(X), want, rtol=0, atol=1e-14)
    np.testing.assert_allclose(op.matmat_rows(np.ascontiguousarray(X.T)), want.T, rtol=0,
                               atol=1e-14)


# ---------------------------------------------------------------- fast vs dense
@pytest.mark.parametrize("kind", ["H", "N"])
@pytest.mark.parametrize("T", [600, 1024, 2048, 4096])
def test_fast_path_equals_dense_eigh(kind, T):
    k = 24
    # one extra pair so that the gap of the 24th filter is known
    sd, pd = _quiet(T, k + 1, kind, method="dense")
    sf, pf = _quiet(T, k + 1, kind, method="fast")
    np.testing.assert_allclose(sf, sd, rtol=0, atol=10 * F.EPS * sd[0])
    # Davis-Kahan: round-off moves filter i by ~ eps*sigma_1/gap_i on either path (measured
    # ratio err/bound <= 2 on T in 600..4096), so dense eigh is itself no better reference.
    bound = 4.0 * eigenvector_error_bound(sd)[:k]
    err = np.abs(pf - pd).max(axis=0)[:k]  # same sign convention on both paths
    above = sd[:k] / sd[0] >= RESOLVABLE_FLOOR
    well = above & (bound <= 1e-8)
    # the filters that float64 determines to 1e-8 agree to 1e-8 ...
    assert well.sum() >= (10 if kind == "H" else 7)
    assert np.all(err[well] <= 1e-8), (err, bound)
    # ... and every filter above the floor agrees within its round-off bound
    assert np.all(err[above] <= bound[above]), (err, bound)


@pytest.mark.parametrize("kind", ["H", "N"])
@pytest.mark.parametrize("method, T", [("dense", 1500), ("fast", 2**14)])
def test_orthonormal_and_eigen_residual(kind, method, T):
    k = 24
    sigma, phi = _quiet(T, k, kind, method=method)
    assert phi.shape == (T, k) and sigma.shape == (k,)
    np.testing.assert_allclose(phi.T @ phi, np.eye(k), atol=1e-12)
    assert np.all(np.diff(sigma) <= 0)
    # residual with an independent dense mat-vec on a random subset of rows
    rows = np.random.default_rng(0).choice(T, size=min(T, 300), replace=False)
    h = hankel_symbol(2 * T - 1, kind)
    Hrows = h[rows[:, None] + np.arange(T)[None, :]]
    res = np.abs(Hrows @ phi - phi[rows] * sigma).max()
    assert res <= 50 * F.EPS * sigma[0]


@pytest.mark.parametrize("kind, power", [("H", 1), ("N", 2)])
def test_projection_identity_trace(kind, power):
    # int_0^1 ||(I - P_k) mu_alpha||^2 d alpha = trace(M) - sum_{i<=k} sigma_i
    T, k = 200, 12
    sigma, phi = _quiet(T, k, kind)
    x, w = np.polynomial.legendre.leggauss(T + 5)
    a, w = 0.5 * (x + 1.0), 0.5 * w
    mu = (1 - a)[:, None] ** power * a[:, None] ** np.arange(T)[None, :]
    resid = mu - (mu @ phi) @ phi.T
    lhs = np.sum(w * np.sum(resid**2, axis=1))
    trace = hankel_symbol(2 * T - 1, kind)[::2].sum()
    assert lhs == pytest.approx(trace - sigma.sum(), rel=1e-6, abs=1e-15)
    assert lhs < 1e-6 * trace  # k = 12 filters already capture almost everything


# ---------------------------------------------------------------- conventions
@pytest.mark.parametrize("kind", ["H", "N"])
def test_sign_convention_and_oscillation_property(kind):
    # strictly totally positive => filter i has exactly i sign changes (0-based i)
    T = 2048
    sigma, phi = _quiet(T, 12, kind, method="fast")
    assert np.all(phi[0] > 0)
    for i in range(12):
        v = phi[:, i]
        v = v[np.abs(v) > 1e-6 * np.abs(v).max()]
        changes = np.count_nonzero(np.diff(np.sign(v)) != 0)
        assert changes == i, (i, changes)


def test_fast_path_deterministic_and_non_power_of_two():
    s1, p1 = _quiet(3001, 10, "H", method="fast")
    s2, p2 = _quiet(3001, 10, "H", method="fast")
    np.testing.assert_array_equal(p1, p2)
    sd, pd = _quiet(3001, 10, "H", method="dense")
    np.testing.assert_allclose(p1, pd, atol=1e-8)


def test_fast_path_when_k_close_to_T():
    sd, pd = _quiet(20, 20, "N", method="dense")
    sf, pf = _quiet(20, 20, "N", method="fast")
    np.testing.assert_allclose(sf, sd, atol=10 * F.EPS * sd[0])
    np.testing.assert_allclose(pf[:, :6], pd[:, :6], atol=1e-8)


def test_negative_branch():
    T, k = 256, 8
    s, p = _quiet(T, k, "H")
    sn, pn = _quiet(T, k, "H", branch="negative")
    D = np.diag((-1.0) ** np.arange(T))
    M = D @ filter_matrix(T, "H") @ D  # = int over alpha in [-1, 0] with weight (1-|a|)^2
    np.testing.assert_allclose(M @ pn, pn * sn, atol=1e-14)
    np.testing.assert_array_equal(sn, s)
    sb, pb = _quiet(T, k, "H", branch="both")
    assert sb.shape == (2 * k,) and pb.shape == (T, 2 * k)
    np.testing.assert_array_equal(pb[:, :k], p)
    np.testing.assert_array_equal(pb[:, k:], pn)
    # alpha = -0.9: impulse response (1-|a|) a^j is captured by the negative filters only
    mu = 0.1 * (-0.9) ** np.arange(T)
    assert np.linalg.norm(mu - pn @ (pn.T @ mu)) < 1e-2 * np.linalg.norm(mu)
    assert np.linalg.norm(mu - p @ (p.T @ mu)) > 0.5 * np.linalg.norm(mu)


# ---------------------------------------------------------------- floor warning
def test_warning_fires_for_N_at_paper_scale():
    with pytest.warns(FilterPrecisionWarning, match=r"indices \[.*23\]") as rec:
        sigma, _ = spectral_filters(2**14, 24, "N", cache=False)
    bad = np.flatnonzero(sigma / sigma[0] < RESOLVABLE_FLOOR)
    assert bad.size >= 1 and bad[-1] == 23
    assert str(bad.tolist()) in str(rec[0].message)


def test_no_warning_for_H_at_paper_scale():
    with warnings.catch_warnings():
        warnings.simplefilter("error", FilterPrecisionWarning)
        sigma, _ = spectral_filters(2**14, 24, "H", cache=False)
    assert sigma[-1] / sigma[0] > RESOLVABLE_FLOOR


# ---------------------------------------------------------------- cache
def test_cache_roundtrip_atomic_and_used(tmp_path, monkeypatch):
    monkeypatch.setenv("LDS_TOOLKIT_CACHE", str(tmp_path / "c"))
    s1, p1 = spectral_filters(2000, 16, "H")
    files = list(Path(tmp_path / "c").iterdir())
    assert [f.name for f in files] == ["spectral_filters_v1_H_T2000_k16.npz"]

    def boom(*a, **k):
        raise AssertionError("recomputed instead of loading the cache")

    monkeypatch.setattr(F, "_fast_eigs", boom)
    s2, p2 = spectral_filters(2000, 16, "H")
    np.testing.assert_array_equal(p1, p2)
    np.testing.assert_array_equal(s1, s2)
    # the key includes kind and k
    with pytest.raises(AssertionError, match="recomputed"):
        spectral_filters(2000, 15, "H")
    with pytest.raises(AssertionError, match="recomputed"):
        spectral_filters(2000, 16, "N")


def test_corrupt_cache_is_recomputed(tmp_path, monkeypatch):
    monkeypatch.setenv("LDS_TOOLKIT_CACHE", str(tmp_path))
    path = tmp_path / "spectral_filters_v1_H_T700_k5.npz"
    path.write_bytes(b"not an npz")
    s, p = spectral_filters(700, 5, "H")
    sd, pd = spectral_filters(700, 5, "H", method="dense")
    np.testing.assert_allclose(p, pd, atol=1e-10)
    with np.load(path) as z:  # overwritten with a valid file
        np.testing.assert_array_equal(z["phi"], p)
    assert not list(tmp_path.glob("*.tmp"))


def test_cache_env_var_default(monkeypatch):
    monkeypatch.delenv("LDS_TOOLKIT_CACHE", raising=False)
    assert F.cache_dir() == Path.home() / ".cache" / "lds_toolkit"


# ---------------------------------------------------------------- bad input
@pytest.mark.parametrize(
    "args, kw, exc, match",
    [
        ((10, 11), {}, ValueError, "k must be <= T"),
        ((10, 0), {}, ValueError, "k must be an integer >= 1"),
        ((10, -3), {}, ValueError, "k must be an integer >= 1"),
        ((0, 1), {}, ValueError, "T must be an integer >= 1"),
        ((10.0, 2), {}, TypeError, "T must be an integer"),
        ((10, True), {}, TypeError, "k must be an integer"),
        ((10, 2), {"kind": "Z"}, ValueError, "kind must be 'H'"),
        ((10, 2), {"method": "eig"}, ValueError, "method must be"),
        ((10, 2), {"branch": "neg"}, ValueError, "branch must be"),
    ],
)
def test_bad_inputs(args, kw, exc, match):
    with pytest.raises(exc, match=match):
        spectral_filters(*args, **kw)


def test_numpy_integers_accepted():
    s, p = spectral_filters(np.int64(64), np.int32(4))
    assert p.shape == (64, 4)
