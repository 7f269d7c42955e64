"""The quadrature factor H_T ≈ F F^T (N_T likewise) that starts the fast filter path (issue 28).

* its symbol h~[n] = Σ_q c_q^2 e^{-n x_q} against the exact rationals 2/((n+1)(n+2)(n+3)) and
  24/((n+1)...(n+5)) (Python fractions): the sum of absolute errors over n < 2T, which bounds
  the operator-norm error of the Hankel matrix, is at the float64 rounding level;
* its eigenpairs against dense ``eigh`` within the round-off bound eps sigma_1 / gap_i;
* the fast path (quadrature start + exact-FFT Rayleigh-Ritz) against the extended-precision
  filters (correct to ~1e-16) at T = 2^14, and with the quadrature disabled (the subspace
  iteration fallback) it gives the same filters.
"""

from __future__ import annotations

import warnings
from fractions import Fraction

import numpy as np
import pytest

from lds_toolkit.learning import _quadrature
from lds_toolkit.learning import filters as F
from lds_toolkit.learning._quadrature import quadrature_eigs, quadrature_nodes, quadrature_symbol

EPS = np.finfo(np.float64).eps


def _exact_symbol(n_max: int, kind: str, every: int = 1) -> tuple[np.ndarray, np.ndarray]:
    num = 2 if kind == "H" else 24
    ns = np.arange(0, n_max, every)
    vals = []
    for n in ns.tolist():  # Python ints: exact
        den = (n + 1) * (n + 2) * (n + 3)
        if kind == "N":
            den *= (n + 4) * (n + 5)
        vals.append(float(Fraction(num, den)))
    return ns, np.array(vals)


@pytest.mark.parametrize("kind", ["H", "N"])
@pytest.mark.parametrize("T", [600, 4096, 2**16])
def test_symbol_error_at_rounding_level(kind, T):
    ns, exact = _exact_symbol(2 * T - 1, kind, every=1 if T <= 4096 else 7)
    approx = quadrature_symbol(ns, T, kind)
    err = np.abs(approx - exact)
    every = ns[1] - ns[0]
    # Σ_n |h~[n] - h[n]| >= ||H~ - H||_2; a few eps of h[0] (sampled sums scaled back)
    assert err.sum() * every <= 8 * EPS * exact[0]
    small = ns < 200
    assert np.all(err[small] <= 4 * EPS * exact[small])
    x, _ = quadrature_nodes(T, kind)
    assert x.size <= 210  # the rank of the factor stays small


@pytest.mark.parametrize("kind", ["H", "N"])
def test_quadrature_eigenpairs_equal_dense(kind):
    T, k = 2048, 20
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", F.FilterPrecisionWarning)
        sd, pd = F.spectral_filters(T, k + 1, kind, method="dense", cache=False)
    sq, pq = quadrature_eigs(T, k + 4, kind)
    pq = pq[:, :k] * np.sign(pq[0, :k])
    np.testing.assert_allclose(sq[:k], sd[:k], rtol=0, atol=16 * EPS * sd[0])
    bound = F.eigenvector_error_bound(sd)[:k]
    err = np.abs(pq - pd[:, :k]).max(axis=0)
    assert np.all(err <= 8 * bound + 1e-15), err / bound
    np.testing.assert_allclose(pq.T @ pq, np.eye(k), atol=1e-13)


@pytest.mark.parametrize("kind", ["H", "N"])
def test_fast_path_against_extended_precision(kind):
    T, k = 2**14, 20
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", F.FilterPrecisionWarning)
        se, pe = F.spectral_filters(T, k + 1, kind, method="fast", cache=False,
                                    precision="extended")
        sf, pf = F.spectral_filters(T, k, kind, method="fast", cache=False)
    bound = F.eigenvector_error_bound(se)[:k]
    err = np.abs(pf - pe[:, :k]).max(axis=0)
    assert np.all(err <= 4 * bound + 1e-15), err / bound
    np.testing.assert_allclose(sf, se[:k], rtol=0, atol=16 * EPS * se[0])


def test_subspace_iteration_fallback_gives_the_same_filters(monkeypatch):
    T, k = 3000, 16
    sq, pq = F.spectral_filters(T, k, "H", method="fast", cache=False)
    monkeypatch.setattr(F, "quadrature_basis", lambda *a, **kw: None)
    sr, pr = F.spectral_filters(T, k, "H", method="fast", cache=False)
    bound = F.eigenvector_error_bound(F.spectral_filters(T, k + 1, "H", method="dense",
                                                         cache=False)[0])[:k]
    np.testing.assert_allclose(sq, sr, rtol=0, atol=16 * EPS * sr[0])
    assert np.all(np.abs(pq - pr).max(axis=0) <= 8 * bound + 1e-15)


def test_too_few_nodes_returns_none():
    x, _ = quadrature_nodes(600, "H")
    assert _quadrature.quadrature_basis(600, x.size - 3, "H") is None
