"""Random system factories: seeded reproducibility, spectra inside the requested intervals,
the split between intervals, symmetry, and the distribution of drawn eigenvalues."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.stats

from lds_toolkit.systems import (
    draw_eigenvalues,
    eigenvalue_regions,
    random_lds,
    random_stable_lds,
    simulate,
)
from lds_toolkit.systems.simulate import modal_form


def test_same_seed_same_system_different_seed_different_system():
    iv = [(0.1, 0.5), (0.9, 0.99)]
    a = random_lds(8, iv, d_in=2, d_out=3, rng=42)
    b = random_lds(8, iv, d_in=2, d_out=3, rng=np.random.default_rng(42))
    c = random_lds(8, iv, d_in=2, d_out=3, rng=43)
    assert a.equals(b)
    assert not a.equals(c)
    assert random_lds(5, iv, symmetric=False, rng=np.random.SeedSequence(7)).equals(
        random_lds(5, iv, symmetric=False, rng=np.random.SeedSequence(7)))
    assert random_stable_lds(6, rng=3).equals(random_stable_lds(6, rng=3))
    assert not random_stable_lds(6, rng=3).equals(random_stable_lds(6, rng=4))
    # a shared Generator advances: two draws from it differ
    g = np.random.default_rng(0)
    assert not random_lds(4, iv, rng=g).equals(random_lds(4, iv, rng=g))


@pytest.mark.parametrize("n", [1, 2, 7, 64])
def test_symmetric_spectrum_inside_region_a_half_each(n):
    regions = eigenvalue_regions(2**14, 7 / 8)
    sys = random_lds(n, regions.region_a, d_in=2, d_out=2, rng=n)
    A = np.array(sys.A)
    assert np.array_equal(A, A.T)  # exactly: the simulator takes the orthogonal path
    lam = np.linalg.eigvalsh(A)
    left, right = regions.region_a
    in_left = (lam >= left.low - 1e-12) & (lam <= left.high + 1e-12)
    in_right = (lam >= right.low - 1e-12) & (lam <= right.high + 1e-12)
    assert np.all(in_left | in_right)
    assert in_left.sum() == (n + 1) // 2 and in_right.sum() == n // 2
    assert simulate(sys, np.ones((3, 2))).method == "modal"
    assert modal_form(A).orthogonal


def test_symmetric_eigenvalues_are_the_drawn_ones():
    """A = Q diag(λ) Q^T with Q orthogonal: the spectrum equals draw_eigenvalues' output for
    the same stream position."""
    iv = [(-0.5, 0.2), (0.7, 0.95)]
    lam = draw_eigenvalues(10, iv, rng=5)
    sys = random_lds(10, iv, rng=5)
    np.testing.assert_allclose(np.linalg.eigvalsh(sys.A), lam, atol=1e-13)


def test_nonsymmetric_same_real_spectrum():
    iv = [(0.2, 0.4), (0.8, 0.9)]
    sys = random_lds(12, iv, symmetric=False, rng=1)
    A = np.array(sys.A)
    assert not np.allclose(A, A.T)
    lam = np.linalg.eigvals(A)
    assert np.abs(lam.imag).max() < 1e-8
    np.testing.assert_allclose(np.sort(lam.real), draw_eigenvalues(12, iv, rng=1), atol=1e-9)
    # non-normal: A A^T != A^T A
    assert np.abs(A @ A.T - A.T @ A).max() > 1e-3


def test_draw_eigenvalues_counts_weights_and_uniformity():
    lam = draw_eigenvalues(7, [(0, 1), (2, 3), (5, 6)], rng=0)
    assert np.all(np.diff(lam) >= 0)
    counts = [np.sum((lam >= a) & (lam <= b)) for a, b in [(0, 1), (2, 3), (5, 6)]]
    assert counts == [3, 2, 2]  # remainder to the first interval
    lam = draw_eigenvalues(10, [(0, 1), (2, 3)], weights=[3, 1], rng=0)
    assert np.sum(lam < 1.5) == 8 and np.sum(lam > 1.5) == 2  # round(7.5) -> 8, 2.5 -> 2
    lam = draw_eigenvalues(10, [(0, 1), (2, 3)], weights=[0, 1], rng=0)
    assert np.all(lam >= 2)
    # uniform inside each interval: Kolmogorov–Smirnov against U(0.3, 0.8)
    lam = draw_eigenvalues(4000, [(0.3, 0.8)], rng=1)
    assert scipy.stats.kstest(lam, scipy.stats.uniform(0.3, 0.5).cdf).pvalue > 1e-3
    # degenerate interval: a repeated eigenvalue
    np.testing.assert_array_equal(draw_eigenvalues(3, [(0.5, 0.5)], rng=0), [0.5] * 3)


def test_random_lds_options():
    sys = random_lds(6, [(0, 0.9)], d_in=3, d_out=2, feedthrough=True, dt=0.1, rng=0)
    assert (sys.n_states, sys.n_inputs, sys.n_outputs, sys.dt) == (6, 3, 2, 0.1)
    assert np.any(sys.D != 0)
    assert np.all(random_lds(6, [(0, 0.9)], rng=0).D == 0)
    # C ~ N(0, 1/n): column-scaled so that ||C||_F^2 / (d_out) ~ 1 on average
    big = random_lds(100, [(0, 0.9)], d_out=200, rng=0)
    assert np.mean(np.array(big.C) ** 2) * 100 == pytest.approx(1.0, rel=0.05)


@pytest.mark.parametrize("continuous", [False, True])
def test_random_stable_lds_is_stable(continuous):
    for seed in range(5):
        sys = random_stable_lds(7, d_in=2, d_out=3, radius=0.8, continuous=continuous,
                                rng=seed)
        lam = np.linalg.eigvals(sys.A)
        if continuous:
            assert sys.is_continuous and sys.is_stable()
            assert np.all((lam.real >= -2 - 1e-9) & (lam.real <= -0.1 + 1e-9))
            assert np.all(np.abs(lam.imag) <= 3 + 1e-9)
        else:
            assert sys.dt == 1.0 and sys.is_stable()
            assert np.abs(lam).max() <= 0.8 + 1e-9
        assert np.any(np.abs(lam.imag) > 0)  # complex pairs (non-symmetric A)
