"""Lesson 6's checks: independent answers pass, the usual slips get their hint; the slider's
filter range stops at the float64 floor."""

from __future__ import annotations

import numpy as np
import scipy.integrate
import scipy.linalg as sla

from lds_toolkit.learning import spectral_filters
from lds_toolkit.learning.filters import RESOLVABLE_FLOOR, filter_matrix
from lds_toolkit.teaching import SliderApp, lesson06


def hankel_by_quadrature(T):  # the integral of eq. 3, numerically
    out = np.empty((T, T))
    for i in range(T):
        for j in range(T):
            out[i, j] = scipy.integrate.quad(lambda a, n=i + j: (1 - a) ** 2 * a**n, 0, 1,
                                             epsabs=0, epsrel=1e-13)[0]
    return out


def top_filters(H, k):  # scipy's subset driver and an explicit sign loop
    import scipy.linalg as sla

    w, v = sla.eigh(H, subset_by_index=[H.shape[0] - k, H.shape[0] - 1])
    w, v = w[::-1], v[:, ::-1].copy()
    for i in range(k):
        if v[0, i] < 0:
            v[:, i] = -v[:, i]
    return w, v


def test_independent_answers_pass():
    res = lesson06.check_hankel_matrix(
        lambda T: hankel_by_quadrature(T) if T <= 5 else filter_matrix(T), verbose=False)
    assert res.passed
    assert lesson06.check_top_filters(top_filters, verbose=False).passed

    def residual(phi, alpha):  # via the QR of the filters
        mu = (1 - alpha) * alpha ** np.arange(phi.shape[0])
        q, _ = np.linalg.qr(phi)
        return np.linalg.norm(mu - q @ (q.T @ mu)) / np.linalg.norm(mu)

    assert lesson06.check_projection_residual(residual, verbose=False).passed
    count = lambda sigma: sum(s >= RESOLVABLE_FLOOR * sigma[0] for s in sigma)
    assert lesson06.check_resolvable_count(count, verbose=False).passed


def test_slips_get_their_hint():
    def unsigned(H, k):
        w, v = np.linalg.eigh(H)
        return w[::-1][:k], -v[:, ::-1][:, :k] * np.sign(v[0, ::-1][:k])

    assert "sign convention" in lesson06.check_top_filters(unsigned, verbose=False).message
    ascending = lambda H, k: tuple(a[..., :k] for a in np.linalg.eigh(H))
    assert "ascending" in lesson06.check_top_filters(ascending, verbose=False).message
    no_weight = lambda T: 1.0 / (1 + np.add.outer(np.arange(T), np.arange(T)))
    assert "weight (1 - a)^2" in lesson06.check_hankel_matrix(no_weight,
                                                              verbose=False).message
    absolute = lambda sigma: int(np.sum(np.asarray(sigma) >= RESOLVABLE_FLOOR))
    assert "sigma_i / sigma_1" in lesson06.check_resolvable_count(absolute,
                                                                 verbose=False).message
    crashes = lambda H, k: 1 / 0
    res = lesson06.check_top_filters(crashes, verbose=False)
    assert res.status == "wrong" and "ZeroDivisionError" in res.message


def test_slider_stops_at_the_last_filter_above_the_floor():
    T = lesson06.SLIDER_T
    sigma = sla.eigh(filter_matrix(T), eigvals_only=True, subset_by_index=[T - 40, T - 1])
    assert int(np.sum(sigma / sigma.max() >= RESOLVABLE_FLOOR)) == lesson06.SLIDER_K_MAX
    spec = SliderApp("lesson06.filters").spec
    assert spec.params["k"].high == lesson06.SLIDER_K_MAX
    sig, _ = spectral_filters(lesson06.SLIDER_T, lesson06.SLIDER_K_MAX)  # no warning: resolved
    assert sig[-1] / sig[0] >= RESOLVABLE_FLOOR


def test_slider_ratio_is_one_at_full_context_and_follows_the_learner():
    app = SliderApp("lesson06.filters")
    assert app.update(k=6, q=1.0)["loss ratio"] == 1.0
    numbers = app.update(k=6, q=0.5)
    u, y, r, lr, _ = lesson06._slider_data()
    short = lesson06.final_loss(6, 32, u, y, r, lr)[768:].mean()
    full = lesson06.final_loss(6, None, u, y, r, lr)[768:].mean()
    assert numbers["context"] == 32
    assert numbers["loss ratio"] == short / full
