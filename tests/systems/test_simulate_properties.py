"""Hypothesis property tests of simulate(): shapes and per-element batching, superposition,
time invariance, the paper convention's y_0, and continuation from final_state."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from lds_toolkit.systems import simulate

from ._ref import make_system, rel_err

CONVENTIONS = ("standard", "lengen", "eq1-literal", "s4")
# (system kind, method): symmetric -> real orthogonal modal path, nonsymmetric -> complex
# modal path, any kind forced onto the dense path, defective -> dense via auto
PATHS = [("symmetric", "auto"), ("nonsymmetric", "auto"), ("nonsymmetric", "dense"),
         ("jordan", "auto")]
SETTINGS = settings(max_examples=50, deadline=None)

dims = st.integers(1, 4)
batch_shapes = st.lists(st.integers(1, 3), max_size=2).map(tuple)


def _system(path, n, d_in, d_out, seed):
    kind, method = path
    return make_system(kind, n, d_in, d_out, np.random.default_rng(seed)), method


@SETTINGS
@given(path=st.sampled_from(PATHS), output=st.sampled_from(CONVENTIONS), n=dims, d_in=dims,
       d_out=dims, T=st.integers(1, 12), bu=batch_shapes, bx=batch_shapes,
       seed=st.integers(0, 2**32 - 1))
def test_shapes_and_batch_elements_equal_single_runs(path, output, n, d_in, d_out, T, bu, bx,
                                                      seed):
    sys, method = _system(path, n, d_in, d_out, seed)
    n = sys.n_states
    rng = np.random.default_rng(seed + 1)
    # make the two batch shapes broadcast-compatible by putting x0's axes in front of u's
    u = rng.standard_normal(bu + (T, d_in))
    x0 = rng.standard_normal(bx + (1,) * len(bu) + (n,))
    res = simulate(sys, u, x0, output=output, method=method)
    bshape = bx + bu
    assert res.y.shape == bshape + (T, d_out)
    assert res.x.shape == bshape + (T, n)
    assert res.final_state.shape == bshape + (n,)
    assert np.isfinite(res.y).all()
    # every batch element is the unbatched simulation of its own (u, x0)
    for idx in list(np.ndindex(*bshape))[:4]:
        single = simulate(sys, u[idx[len(bx):]], x0[idx[:len(bx)]][(0,) * len(bu)],
                          output=output, method=method)
        assert rel_err(res.y[idx], single.y) <= 1e-12
        assert rel_err(res.x[idx], single.x) <= 1e-12


@SETTINGS
@given(path=st.sampled_from(PATHS), output=st.sampled_from(CONVENTIONS), n=dims, d_in=dims,
       d_out=dims, T=st.integers(1, 30),
       a=st.floats(-3, 3, allow_nan=False), b=st.floats(-3, 3, allow_nan=False),
       seed=st.integers(0, 2**32 - 1))
def test_superposition(path, output, n, d_in, d_out, T, a, b, seed):
    """simulate(a u1 + b u2, a x01 + b x02) = a sim1 + b sim2 (outputs and states)."""
    sys, method = _system(path, n, d_in, d_out, seed)
    rng = np.random.default_rng(seed + 2)
    u1, u2 = rng.standard_normal((2, T, d_in))
    x1, x2 = rng.standard_normal((2, sys.n_states))
    s1 = simulate(sys, u1, x1, output=output, method=method)
    s2 = simulate(sys, u2, x2, output=output, method=method)
    s12 = simulate(sys, a * u1 + b * u2, a * x1 + b * x2, output=output, method=method)
    for field in ("y", "x", "final_state"):
        f1, f2, f12 = (getattr(s, field) for s in (s1, s2, s12))
        scale = abs(a) * np.abs(f1).max() + abs(b) * np.abs(f2).max() + 1e-300
        assert np.abs(f12 - (a * f1 + b * f2)).max() <= 1e-10 * scale, field


@SETTINGS
@given(path=st.sampled_from(PATHS), output=st.sampled_from(CONVENTIONS), n=dims, d_in=dims,
       d_out=dims, T=st.integers(2, 30), data=st.data(), seed=st.integers(0, 2**32 - 1))
def test_time_invariance(path, output, n, d_in, d_out, T, data, seed):
    """From rest, the input delayed by k steps gives the output delayed by k steps."""
    k = data.draw(st.integers(1, T - 1))
    sys, method = _system(path, n, d_in, d_out, seed)
    u = np.random.default_rng(seed + 3).standard_normal((T, d_in))
    u_del = np.vstack([np.zeros((k, d_in)), u[:-k]])
    y = simulate(sys, u, output=output, method=method).y
    y_del = simulate(sys, u_del, output=output, method=method).y
    assert np.all(y_del[:k] == 0)
    assert rel_err(y_del[k:], y[:-k]) <= 1e-12


@SETTINGS
@given(path=st.sampled_from(PATHS), n=dims, d_in=dims, d_out=dims, T=st.integers(1, 10),
       zero_x0=st.booleans(), seed=st.integers(0, 2**32 - 1))
def test_paper_convention_first_output_is_zero(path, n, d_in, d_out, T, zero_x0, seed):
    """Eq. 1 defines y_{t+1} = C x_t + D u_t, so y_0 carries no signal; y_1 = C x_0 + D u_0."""
    sys, method = _system(path, n, d_in, d_out, seed)
    rng = np.random.default_rng(seed + 4)
    u = rng.standard_normal((2, T, d_in))
    x0 = np.zeros(sys.n_states) if zero_x0 else rng.standard_normal(sys.n_states)
    y = simulate(sys, u, x0, output="eq1-literal", method=method).y
    assert np.all(y[:, 0] == 0)
    if T > 1:
        first = x0 @ sys.C.T + u[:, 0] @ sys.D.T
        assert np.abs(y[:, 1] - first).max() <= 1e-12 * (np.abs(first).max() + 1)


@SETTINGS
@given(path=st.sampled_from(PATHS), output=st.sampled_from(["standard", "s4"]), n=dims,
       d_in=dims, d_out=dims, T=st.integers(2, 30), data=st.data(),
       seed=st.integers(0, 2**32 - 1))
def test_continuation_from_final_state(path, output, n, d_in, d_out, T, data, seed):
    """Simulating [0, k) then [k, T) from final_state equals one run over [0, T)."""
    k = data.draw(st.integers(1, T - 1))
    sys, method = _system(path, n, d_in, d_out, seed)
    rng = np.random.default_rng(seed + 5)
    u = rng.standard_normal((T, d_in))
    x0 = rng.standard_normal(sys.n_states)
    full = simulate(sys, u, x0, output=output, method=method)
    first = simulate(sys, u[:k], x0, output=output, method=method)
    second = simulate(sys, u[k:], first.final_state, output=output, method=method)
    assert rel_err(np.vstack([first.y, second.y]), full.y) <= 1e-10
    assert rel_err(second.final_state, full.final_state) <= 1e-10
