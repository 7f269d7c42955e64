"""Property: python-control's functions give the same answer for an ``LDS`` as for the
equivalent ``control.StateSpace`` (the plain copy ``sys.to_statespace()``), to 1e-12 relative,
for random stable SISO and MIMO systems in discrete and continuous time.

Poles, zeros (SISO; MIMO zeros need slycot), DC gain, the frequency response, feedback /
series / parallel, forced / step / impulse / initial responses, and sample_system / c2d.
"""

from __future__ import annotations

import control as ct
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lds_toolkit.systems import LDS

RTOL = 1e-12


@st.composite
def stable_systems(draw):
    """(lds, statespace): a random stable system, n 1..5, d_in and d_out 1..3 (SISO half the
    time), discrete (dt 0.1, 1 or True) or continuous."""
    n = draw(st.integers(1, 5))
    siso = draw(st.booleans())
    d_in, d_out = (1, 1) if siso else (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    dt = draw(st.sampled_from([0, 0.1, 1.0, True]))
    rng = np.random.default_rng(draw(st.integers(0, 2**31 - 1)))
    A = rng.standard_normal((n, n))
    lam = np.linalg.eigvals(A)
    if dt is not True and dt == 0:
        A = A - (np.max(lam.real) + rng.uniform(0.2, 2.0)) * np.eye(n)   # Hurwitz
    else:
        A = rng.uniform(0.3, 0.95) * A / np.max(np.abs(lam))             # Schur
    B, C = rng.standard_normal((n, d_in)), rng.standard_normal((d_out, n))
    D = rng.standard_normal((d_out, d_in)) * draw(st.sampled_from([0.0, 1.0]))
    lds = LDS(A, B, C, D, dt=dt)
    return lds, lds.to_statespace()


def close(a, b):
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape
    scale = max(1.0, float(np.max(np.abs(b), initial=0.0)))
    np.testing.assert_allclose(a, b, rtol=RTOL, atol=RTOL * scale)


def _grid(sys, n=25):
    T = 1.0 if sys.dt is True else (sys.dt if sys.dt else 0.05)
    return np.arange(n) * T


PROPERTY = settings(max_examples=30, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])


@PROPERTY
@given(stable_systems())
def test_spectrum_gain_and_frequency_response(pair):
    lds, ss = pair
    assert type(ss) is ct.StateSpace and isinstance(lds, ct.StateSpace)
    close(np.sort_complex(ct.poles(lds)), np.sort_complex(ct.poles(ss)))
    if lds.issiso():
        close(np.sort_complex(ct.zeros(lds)), np.sort_complex(ct.zeros(ss)))
    close(ct.dcgain(lds), ct.dcgain(ss))
    w = np.logspace(-2, 0.4, 15)            # below the Nyquist frequency of dt = 1
    close(ct.frequency_response(lds, w).complex, ct.frequency_response(ss, w).complex)
    close(lds(1j * 0.3 if lds.isctime() else np.exp(0.3j)),
          ss(1j * 0.3 if ss.isctime() else np.exp(0.3j)))


@PROPERTY
@given(stable_systems())
def test_interconnections(pair):
    lds, ss = pair
    K = np.full((lds.ninputs, lds.noutputs), 0.1)
    for ours, theirs in ((ct.feedback(lds, K), ct.feedback(ss, K)),
                         (ct.parallel(lds, lds), ct.parallel(ss, ss)),
                         (lds * 2.0, ss * 2.0), (-lds, -ss)):
        for m in "ABCD":
            close(getattr(ours, m), getattr(theirs, m))
        assert ours.dt == theirs.dt
    if lds.ninputs == lds.noutputs:
        ours, theirs = ct.series(lds, lds), ct.series(ss, ss)
        for m in "ABCD":
            close(getattr(ours, m), getattr(theirs, m))


@pytest.mark.filterwarnings("ignore:System has direct feedthrough")  # impulse with D != 0
@PROPERTY
@given(stable_systems(), st.integers(0, 2**31 - 1))
def test_time_responses(pair, seed):
    lds, ss = pair
    T = _grid(lds)
    rng = np.random.default_rng(seed)
    U = rng.standard_normal((lds.ninputs, T.size))
    x0 = rng.standard_normal(lds.nstates)
    for fn, args in ((ct.forced_response, (T, U, x0)), (ct.step_response, (T,)),
                     (ct.impulse_response, (T,)), (ct.initial_response, (T, x0))):
        ours, theirs = fn(lds, *args), fn(ss, *args)
        close(ours.t, theirs.t)
        close(ours.y, theirs.y)
        if theirs.x is not None:
            close(ours.x, theirs.x)


@PROPERTY
@given(stable_systems(), st.sampled_from(["zoh", "foh", "bilinear", "euler",
                                          "backward_diff"]))
def test_sample_system(pair, method):
    lds, ss = pair
    if lds.is_discrete:
        with pytest.raises(ValueError):
            ct.sample_system(lds, 0.1, method)
        return
    ours, theirs = ct.sample_system(lds, 0.1, method), ct.c2d(ss, 0.1, method)
    for m in "ABCD":
        close(getattr(ours, m), getattr(theirs, m))
    assert ours.dt == theirs.dt == 0.1
