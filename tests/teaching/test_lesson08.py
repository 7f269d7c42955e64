"""Lesson 8's checks (torch): independent answers pass, the usual slips get their hint; the
slider shows the handed-over layer's modes and certificate."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch")

import scipy.linalg as sla  # noqa: E402

import lds_toolkit as lt  # noqa: E402
from lds_toolkit.teaching import SliderApp, lesson08  # noqa: E402


def test_independent_answers_pass():
    def modes(z):  # the Cayley transform as a 1 x 1 complex solve per mode
        return np.array([np.linalg.solve([[1 - v / 2]], [[1 + v / 2]])[0, 0]
                         for v in np.asarray(z, complex)])

    assert lesson08.check_bilinear_modes(modes, verbose=False).passed

    def rate(A):  # P by Kronecker products, rho as the P-norm of A
        n = A.shape[0]
        p = np.linalg.solve(np.kron(A.T, A.T) - np.eye(n * n), -np.eye(n).ravel())
        P = p.reshape(n, n)
        R = sla.sqrtm(0.5 * (P + P.T)).real
        return float(np.linalg.norm(R @ A @ np.linalg.inv(R), 2))

    assert lesson08.check_certificate_rate(rate, verbose=False).passed

    def counts(eigenvalues, T, q):  # by the formulas of lesson 1
        good, marg = 1 - np.log(T) / (8 * T**q), 1 - 1 / (2 * T**1.25)
        out = dict.fromkeys(("A-left", "B", "A-right", "outside"), 0)
        for m in np.abs(eigenvalues):
            key = ("A-left" if 0.9 * good <= m <= good else "B" if good < m < marg
                   else "A-right" if marg <= m <= 1 else "outside")
            out[key] += 1
        return out

    assert lesson08.check_region_counts(counts, verbose=False).passed


def test_slips_get_their_hint():
    zoh = lambda z: np.exp(z)
    assert "zero-order hold" in lesson08.check_bilinear_modes(zoh, verbose=False).message

    def transposed(A):
        P = sla.solve_discrete_lyapunov(A, np.eye(A.shape[0]))
        return float(np.sqrt(sla.eigh(A.T @ P @ A, P, eigvals_only=True)[-1]))

    assert "a = A.T" in lesson08.check_certificate_rate(transposed, verbose=False).message
    def by_real(eigenvalues, T, q):
        labels = lt.eigenvalue_regions(T, q).classify(np.real(eigenvalues))
        return {k: int(np.sum(labels == k)) for k in ("A-left", "B", "A-right", "outside")}

    assert "not Re" in lesson08.check_region_counts(by_real, verbose=False).message


def test_slider_shows_the_handed_over_layer():
    layer, system, fit = lesson08.train_capstone(T=256, steps=30, d_state=4)
    lesson08.use_layer(layer, system, 256)
    try:
        numbers = SliderApp("lesson08.rate").update(rate=2.0)
    finally:
        lesson08._HANDED_OVER.clear()
    cert = lt.discrete_certificate(layer.to_lds(rate=2.0))
    assert numbers["ρ"] == cert.rho
    counts = lt.eigenvalue_map(layer.to_lds(rate=2.0), 256).counts
    assert numbers["in B"] == counts["B"]
    assert numbers["in A"] + numbers["in B"] + numbers["outside"] == 4
