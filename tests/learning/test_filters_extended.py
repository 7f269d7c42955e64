"""precision="extended" spectral filters: exact Hankel mat-vec and the refined eigenpairs.

Independent routes: 60-digit mpmath (matrix products and ``eigsy``) on small T; the dense
and fast float64 starts, which must refine to the same filters for T up to 4096.
"""

import warnings

import numpy as np
import pytest

from lds_toolkit.learning import (
    EXTENDED_FLOOR,
    RESOLVABLE_FLOOR,
    FilterPrecisionWarning,
    eigenvector_error_bound,
    spectral_filters,
)
from lds_toolkit.learning import _extended as X_
from lds_toolkit.learning import filters as F

mp = pytest.importorskip("mpmath")


def _quiet(*args, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FilterPrecisionWarning)
        return spectral_filters(*args, **kw)


def _mp_symbol(n, kind):
    if kind == "H":
        return mp.mpf(2) / ((n + 1) * (n + 2) * (n + 3))
    return mp.mpf(24) / ((n + 1) * (n + 2) * (n + 3) * (n + 4) * (n + 5))


def _mp_matrix(T, kind):
    return mp.matrix([[_mp_symbol(i + j, kind) for j in range(T)] for i in range(T)])


# ---------------------------------------------------------------- exact mat-vec
@pytest.mark.parametrize("kind", ["H", "N"])
@pytest.mark.parametrize("T", [7, 64, 257])
def test_exact_matvec_matches_60_digit_product(kind, T):
    mp.mp.dps = 60
    rng = np.random.default_rng(T)
    # graded columns: entries spanning 30 orders of magnitude exercise the fixed point
    X = rng.standard_normal((T, 3)) * 10.0 ** rng.uniform(-30, 0, size=(T, 3))
    X[:, 2] = np.linspace(-1, 1, T) * 1e-200  # tiny scale: relative, not absolute, fixed point
    hi, lo = X_.ExactHankel(T, kind).matmat(X)
    M = _mp_matrix(T, kind)
    for c in range(3):
        exact = M * mp.matrix([mp.mpf(float(v)) for v in X[:, c]])
        scale = mp.mpf(float(np.abs(X[:, c]).max()))
        err = max(abs(exact[i] - (mp.mpf(float(hi[i, c])) + mp.mpf(float(lo[i, c]))))
                  for i in range(T))
        assert err <= X_.EXTENDED_EPS * scale, (c, err)
        # hi is the correctly rounded float64 of the result, to within one ulp
        np.testing.assert_allclose(hi[:, c], [float(v) for v in exact], rtol=2.3e-16, atol=0)


def test_digits_reconstruct_the_vector_exactly():
    rng = np.random.default_rng(3)
    X = rng.standard_normal((50, 2)) * 10.0 ** rng.uniform(-12, 3, size=(50, 2))
    bits, S = 14, 7
    d, e = X_.vector_digits(X, bits, S)
    assert np.all(np.abs(d) < 2**bits) and np.all(d == np.floor(d))
    for c in range(2):
        for t in range(50):
            val = sum(mp.mpf(float(d[a, t, c])) * mp.mpf(2) ** (-bits * (a + 1)) for a in range(S))
            val *= mp.mpf(2) ** int(e[c])
            assert abs(val - mp.mpf(float(X[t, c]))) <= 2.0 ** (e[c] - bits * S)


def test_lost_exactness_is_an_error_not_silent(monkeypatch):
    # digits of 24 bits make the integer correlations ~2^56 > 2^53: the rounding check fires
    monkeypatch.setattr(X_, "_digit_bits", lambda T: 24)
    op = X_.ExactHankel(2000, "H")
    with pytest.raises(RuntimeError, match="lost exactness"):
        op.matmat(np.random.default_rng(0).standard_normal((2000, 2)))


def test_gram_dot2_is_twice_working_precision():
    # x^T y with catastrophic cancellation: float64 @ loses everything, Dot2 does not
    x = np.array([[1e16], [1.0], [-1e16], [1e-3]])
    y = np.ones((4, 1))
    assert (x.T @ y)[0, 0] != pytest.approx(1.001)
    assert X_.gram_dot2(x, y)[0, 0] == pytest.approx(1.001, rel=1e-15)


# ---------------------------------------------------------------- refined filters
@pytest.mark.parametrize("kind", ["H", "N"])
def test_extended_filters_match_60_digit_eigsy(kind):
    mp.mp.dps = 60
    T, k = 48, 24
    ev, Q = mp.eigsy(_mp_matrix(T, kind))
    order = [int(i) for i in np.argsort([-float(v) for v in ev])[:k]]
    s_ref = np.array([float(ev[i]) for i in order])
    p_ref = F._fix_signs(np.array([[float(Q[r, i]) for i in order] for r in range(T)]))

    s_ext, p_ext = _quiet(T, k, kind, method="dense", precision="extended")
    s_dbl, p_dbl = _quiet(T, k, kind, method="dense")
    rel = s_ref / s_ref[0]
    above = rel >= RESOLVABLE_FLOOR
    err_ext = np.abs(p_ext - p_ref).max(axis=0)
    err_dbl = np.abs(p_dbl - p_ref).max(axis=0)
    # above the float64 floor the refined filters are exact to float64 round-off ...
    assert err_ext[above].max() <= 1e-14, err_ext
    np.testing.assert_allclose(s_ext[above], s_ref[above], rtol=1e-14)
    # ... below it they are still within the extended bound, down to the extended floor
    bound = 4.0 * eigenvector_error_bound(s_ref, precision="extended")
    resolved = rel >= EXTENDED_FLOOR
    assert np.all(err_ext[resolved] <= bound[resolved]), (err_ext, bound)
    # and the float64 path is not (this is what the refinement is for)
    assert err_dbl[above].max() > 1e3 * err_ext[above].max()


@pytest.mark.parametrize("kind", ["H", "N"])
@pytest.mark.parametrize("T", [600, 1024, 2048, 4096])
def test_extended_fast_path_equals_dense_path(kind, T):
    # issue 4: fast == dense (up to sign; both use phi[0] > 0) to 1e-8 for every index
    # above the resolvable floor.  Extended precision meets it with room to spare.
    k = 24
    sd, pd = _quiet(T, k, kind, method="dense", precision="extended")
    sf, pf = _quiet(T, k, kind, method="fast", precision="extended")
    above = sd / sd[0] >= RESOLVABLE_FLOOR
    err = np.abs(pf - pd).max(axis=0)
    assert np.all(err[above] <= 1e-8)
    assert err.max() <= 1e-13, err  # measured <= 2e-15
    np.testing.assert_allclose(sf, sd, rtol=1e-12)
    for phi in (pd, pf):
        np.testing.assert_allclose(phi.T @ phi, np.eye(k), atol=1e-12)


def test_extended_no_warning_where_double_warns():
    with pytest.warns(FilterPrecisionWarning, match="precision='extended' resolves them"):
        spectral_filters(2**14, 24, "N", cache=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error", FilterPrecisionWarning)
        sigma, phi = spectral_filters(2**14, 24, "N", cache=False, precision="extended")
    assert sigma[-1] / sigma[0] < RESOLVABLE_FLOOR  # resolved, though below the float64 floor
    np.testing.assert_allclose(phi.T @ phi, np.eye(24), atol=1e-12)


def test_extended_warning_names_filters_below_its_floor():
    with pytest.warns(FilterPrecisionWarning, match="extended-precision resolvable floor"):
        sigma, _ = spectral_filters(48, 40, "N", precision="extended", cache=False)
    assert np.all(np.diff(sigma) <= 0)
    assert (sigma / sigma[0] < EXTENDED_FLOOR).any()


def test_extended_cache_key_is_separate(tmp_path, monkeypatch):
    monkeypatch.setenv("LDS_TOOLKIT_CACHE", str(tmp_path))
    spectral_filters(700, 6, "H")
    spectral_filters(700, 6, "H", precision="extended")
    names = sorted(f.name for f in tmp_path.iterdir())
    assert names == ["spectral_filters_v1_H_T700_k6.npz", "spectral_filters_v1_H_T700_k6_ext.npz"]


def test_bad_precision():
    with pytest.raises(ValueError, match="precision must be"):
        spectral_filters(10, 2, precision="quad")
    with pytest.raises(ValueError, match="precision must be"):
        eigenvector_error_bound(np.array([1.0, 0.5]), precision="single")
