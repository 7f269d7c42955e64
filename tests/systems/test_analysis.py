"""Analyses of a discrete-time LDS: the eigenvalue map against the regions (checked against the
regions' formulas written out here) and the memory length (closed forms for scalar systems, a
naive sum of the impulse response for MIMO ones)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.linalg

from lds_toolkit.systems import LDS, eigenvalue_map, memory_length, random_stable_lds


def _rotation(r, theta):
    return r * np.array([[np.cos(theta), -np.sin(theta)], [np.sin(theta), np.cos(theta)]])


# ------------------------------------------------------------------------ eigenvalue map
def test_eigenvalue_map_places_modes_by_modulus():
    T, q = 2**12, 7 / 8
    low_b = 1 - math.log(T) / (8 * T**q)            # the regions' formulas, written out
    high_b = 1 - 1 / (2 * T**1.25)
    mid_b, right_a = 0.5 * (low_b + high_b), 0.5 * (high_b + 1)
    left_a = 0.95 * low_b
    A = scipy.linalg.block_diag(
        [[mid_b]],                                   # real, Region B
        _rotation(left_a, 0.4),                      # complex pair, modulus in A-left
        [[-right_a]],                                # negative, modulus in A-right
        [[0.3]],                                     # below Region A
        [[1.01]],                                    # unstable: above 1
    )
    sys = LDS(A, np.ones((6, 1)), np.ones((1, 6)), dt=0.5)
    emap = eigenvalue_map(sys, T, q)
    np.testing.assert_allclose(emap.modulus, [1.01, right_a, mid_b, left_a, left_a, 0.3],
                               rtol=1e-12)
    assert emap.labels.tolist() == ["outside", "A-right", "B", "A-left", "A-left", "outside"]
    assert emap.in_region_b.tolist() == [False, False, True, False, False, False]
    assert emap.in_region_a.sum() == 3
    assert emap.counts == {"A-left": 2, "B": 1, "A-right": 1, "outside": 2}
    assert emap.real_nonnegative.tolist() == [True, False, True, False, False, True]
    assert emap.spectral_radius == pytest.approx(1.01, rel=1e-14)
    assert emap.spectral_radius == pytest.approx(sys.spectral_radius(), rel=1e-14)
    assert not emap.theorem_condition                # a B mode and an unstable one
    # the same eigenvalues through the regions' own classifier of |λ|
    assert emap.labels.tolist() == emap.regions.classify(np.abs(emap.eigenvalues)).tolist()
    d = emap.as_dict()
    assert d["counts"] == emap.counts and len(d["eigenvalues"]) == 6


def test_theorem_condition_and_statespace_input():
    T = 2**10
    r = eigenvalue_map(LDS(np.diag([0.2, 0.5]), np.ones((2, 1)), np.ones((1, 2)), dt=1.0), T)
    assert r.theorem_condition and r.counts["outside"] == 2
    sys = random_stable_lds(4, radius=0.9, rng=0)
    a, b = eigenvalue_map(sys, T), eigenvalue_map(sys.to_statespace(), T)
    np.testing.assert_array_equal(a.eigenvalues, b.eigenvalues)
    with pytest.raises(ValueError, match=r"system must be discrete-time .* discretize it first"):
        eigenvalue_map(LDS([[-1.0]], [[1.0]], [[1.0]]), T)
    with pytest.raises(ValueError, match=r"T must be an integer >= 2"):
        eigenvalue_map(sys, 1)


# ------------------------------------------------------------------------ memory length
def _scalar_length(a, b, c, d, eps):
    """Closed form: E = d² + c²b²/(1-a²), tail(ℓ) = c²b² a^{2(ℓ-1)}/(1-a²) for ℓ >= 1."""
    g = (c * b) ** 2 / (1 - a * a)
    E = d * d + g
    if g <= eps * E:
        return 1
    return 1 + max(0, math.ceil(math.log(eps * E / g) / (2 * math.log(abs(a)))))


@pytest.mark.parametrize("a", [0.3, -0.6, 0.9, 0.995, -0.99999])
@pytest.mark.parametrize("eps", [0.3, 1e-2, 1.7e-5, 1e-9])
def test_scalar_memory_length_closed_form(a, eps):
    sys = LDS([[a]], [[1.7]], [[-0.4]], dt=1.0)
    m = memory_length(sys, eps)
    assert m.length == 1 + math.ceil(math.log(eps) / (2 * math.log(abs(a))))
    assert m.length == 1 + math.ceil(m.single_mode_length)
    assert m.total_energy == pytest.approx((1.7 * 0.4) ** 2 / (1 - a * a), rel=1e-10)
    assert m.tail_fraction <= eps
    assert m.tail_fraction == pytest.approx(a ** (2 * (m.length - 1)), rel=1e-8)


@pytest.mark.parametrize("d", [0.0, 0.5, 3.0, 30.0])
def test_scalar_memory_length_with_feedthrough(d):
    for a in (0.5, -0.97):
        for eps in (1e-1, 1e-3, 1e-6):
            m = memory_length(LDS([[a]], [[1.0]], [[1.0]], [[d]], dt=1.0), eps)
            assert m.length == _scalar_length(a, 1.0, 1.0, d, eps)


def test_memory_length_edge_cases():
    zero = LDS([[0.5]], [[0.0]], [[1.0]], dt=1.0)
    assert memory_length(zero).length == 0 and memory_length(zero).total_energy == 0.0
    feedthrough_only = LDS([[0.5]], [[0.0]], [[1.0]], [[2.0]], dt=1.0)
    assert memory_length(feedthrough_only).length == 1
    nilpotent = LDS([[0.0]], [[1.0]], [[1.0]], dt=1.0)     # h = (0, 1, 0, 0, ...)
    assert memory_length(nilpotent, 0.5).length == 2
    with pytest.raises(ValueError, match=r"Schur-stable .* ρ\(A\) = 1"):
        memory_length(LDS([[1.0]], [[1.0]], [[1.0]], dt=1.0))
    with pytest.raises(ValueError, match=r"eps must lie in \(0, 1\)"):
        memory_length(zero, 1.0)
    with pytest.raises(ValueError, match=r"system must be discrete-time"):
        memory_length(LDS([[-1.0]], [[1.0]], [[1.0]]))


def _naive_length(sys, eps, horizon):
    h = sys.impulse_response(horizon)
    e = np.sum(h * h, axis=(1, 2))
    tails = np.cumsum(e[::-1])[::-1]                   # tails[l] = Σ_{t>=l} e_t (truncated)
    return int(np.argmax(tails <= eps * tails[0])), tails[0]


@pytest.mark.parametrize("seed", range(6))
def test_memory_length_against_a_naive_sum(seed):
    rng = np.random.default_rng(seed)
    n, d_in, d_out = int(rng.integers(2, 7)), int(rng.integers(1, 3)), int(rng.integers(1, 3))
    A = rng.standard_normal((n, n))
    A *= rng.uniform(0.8, 0.98) / np.max(np.abs(np.linalg.eigvals(A)))
    sys = LDS(A, rng.standard_normal((n, d_in)), rng.standard_normal((d_out, n)),
              rng.standard_normal((d_out, d_in)) * rng.integers(0, 2), dt=0.1)
    for eps in (1e-2, 1e-5):
        ref, energy = _naive_length(sys, eps, 4000)       # 0.98^4000 ~ 1e-35: no truncation
        m = memory_length(sys, eps)
        assert m.length == ref
        assert m.total_energy == pytest.approx(energy, rel=1e-9)
    # a StateSpace gives the same answer
    assert memory_length(sys.to_statespace(), 1e-3).length == memory_length(sys, 1e-3).length
