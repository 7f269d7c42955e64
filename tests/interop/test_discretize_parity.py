"""Property: ``lds_toolkit.discretize`` is ``control.sample_system``, method for method and
keyword for keyword, on random continuous SISO and MIMO systems: the same matrices (to 1e-12
of their scale), timebase, signal names and system name, and python-control's type back
(a ``StateSpace`` for a ``StateSpace``, an ``LDS`` for an ``LDS``).

The three deliberate differences of the module docstring are pinned here too: ``name=`` with
``copy_names=False`` is used (python-control 0.10.2 drops it), ``prewarp_frequency`` with a
method that cannot use it is an error (python-control warns), ``"impulse"`` refuses D != 0.
"""

from __future__ import annotations

import re

import control as ct
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import lds_toolkit as lt
from lds_toolkit.systems import LDS

GENERIC = re.compile(r"sys\[\d+\]")
PC_METHODS = ["zoh", "foh", "impulse", "bilinear", "tustin", "gbt", "euler", "backward_diff"]


@st.composite
def named_plants(draw):
    """A random stable continuous ``control.StateSpace``: n 1..4, SISO half the time, D = 0
    half the time, default or given signal and system names."""
    n = draw(st.integers(1, 4))
    siso = draw(st.booleans())
    d_in, d_out = (1, 1) if siso else (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    rng = np.random.default_rng(draw(st.integers(0, 2**31 - 1)))
    A = rng.standard_normal((n, n))
    A -= (np.max(np.linalg.eigvals(A).real) + rng.uniform(0.3, 2.0)) * np.eye(n)  # Hurwitz
    B, C = rng.standard_normal((n, d_in)), rng.standard_normal((d_out, n))
    D = rng.standard_normal((d_out, d_in)) * draw(st.sampled_from([0.0, 1.0]))
    names = {}
    if draw(st.booleans()):
        names = {"inputs": [f"f{i}" for i in range(d_in)],
                 "outputs": [f"p{i}" for i in range(d_out)],
                 "states": [f"s{i}" for i in range(n)], "name": "plant"}
    return ct.ss(A, B, C, D, **names)


@st.composite
def sampling_options(draw, plant):
    """(dt, method, keywords) valid for ``plant`` in both libraries."""
    dt = draw(st.sampled_from([0.05, 0.1, 0.5]))
    method = draw(st.sampled_from(PC_METHODS))
    kw: dict = {}
    if method == "gbt":
        kw["alpha"] = draw(st.sampled_from([0.0, 0.25, 0.5, 0.8, 1.0]))
    if (method in ("bilinear", "tustin") or kw.get("alpha") == 0.5) and draw(st.booleans()):
        kw["prewarp_frequency"] = draw(st.floats(0.05, 0.9)) * np.pi / dt
    if draw(st.booleans()):
        kw["name"] = "sampled"
    if draw(st.booleans()):
        kw["copy_names"] = draw(st.booleans())
    for key, count, prefix in (("inputs", plant.ninputs, "v"), ("outputs", plant.noutputs, "z"),
                               ("states", plant.nstates, "w")):
        choice = draw(st.sampled_from(["none", "list", "count"]))
        if choice == "list":
            kw[key] = [f"{prefix}{i}" for i in range(count)]
        elif choice == "count":
            kw[key] = count
    return dt, method, kw


def _close(ours, theirs):
    for m in "ABCD":
        a, b = np.asarray(getattr(ours, m)), np.asarray(getattr(theirs, m))
        assert a.shape == b.shape, m
        scale = max(1.0, float(np.abs(b).max(initial=0.0)))
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-12 * scale, err_msg=m)


PROPERTY = settings(max_examples=60, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])


@PROPERTY
@given(st.data())
def test_discretize_is_sample_system(data):
    plant = data.draw(named_plants())
    dt, method, kw = data.draw(sampling_options(plant))
    if method == "impulse" and np.any(plant.D != 0):
        with pytest.raises(ValueError, match=r"method='impulse' \(impulse invariance\) needs "
                                             r"a strictly proper system, D = 0; got D\["):
            lt.discretize(plant, dt, method, **kw)
        return
    theirs = ct.sample_system(plant, dt, method, **kw)
    ours = lt.discretize(plant, dt, method, **kw)
    assert type(ours) is ct.StateSpace and type(theirs) is ct.StateSpace
    _close(ours, theirs)
    assert ours.dt == theirs.dt == dt
    for labels in ("input_labels", "output_labels", "state_labels"):
        assert getattr(ours, labels) == getattr(theirs, labels), labels
    if "name" in kw and kw.get("copy_names") is False:
        assert ours.name == kw["name"] and GENERIC.fullmatch(theirs.name)  # theirs drops it
    elif GENERIC.fullmatch(theirs.name):
        assert GENERIC.fullmatch(ours.name)
    else:
        assert ours.name == theirs.name
    # an LDS in gives an LDS out, with the same numbers and names
    as_lds = lt.discretize(LDS.from_statespace(plant), dt, method, **kw)
    assert type(as_lds) is LDS
    _close(as_lds, ours)
    assert as_lds.names()["inputs"] == ours.input_labels
    assert as_lds.names()["states"] == ours.state_labels


@pytest.mark.parametrize("dt", [0.1, 0.7])
def test_matched_equals_sample_system_of_the_transfer_function(dt):
    """python-control has "matched" for transfer functions only: the toolkit's state-space
    result has the same frequency response as ``sample_system(tf(plant), dt, "matched")``."""
    plant = ct.ss([[-1.0, 0.5], [0.0, -3.0]], [[1.0], [1.0]], [[1.0, -2.0]], [[0.5]],
                  inputs="u", outputs="y", name="G")
    ours = lt.discretize(plant, dt, "matched")
    theirs = ct.sample_system(ct.ss2tf(plant), dt, "matched")
    z = np.exp(1j * np.array([0.01, 0.3, 1.0, 2.5]))
    np.testing.assert_allclose(ours(z).ravel(), theirs(z).ravel(), rtol=1e-10)
    assert (type(ours), ours.name, ours.input_labels) == (ct.StateSpace, "G$sampled", ["u"])


def test_the_deliberate_differences():
    plant = ct.ss([[-1.0]], [[1.0]], [[1.0]], [[1e-9]], name="G")
    with pytest.warns(UserWarning, match="prewarp_frequency ignored"):
        ct.sample_system(plant, 0.1, "zoh", prewarp_frequency=1.0)
    with pytest.raises(ValueError, match="prewarp_frequency needs method='bilinear'"):
        lt.discretize(plant, 0.1, "zoh", prewarp_frequency=1.0)
    dropped = ct.sample_system(plant, 0.1, "impulse")   # scipy drops |D| < 1e-8 in silence
    assert dropped.D[0, 0] == pytest.approx(0.1)         # C B dt, no trace of D
    with pytest.raises(ValueError, match=r"got D\[0, 0\] = 1e-09"):
        lt.discretize(plant, 0.1, "impulse")
    assert GENERIC.fullmatch(ct.sample_system(plant, 0.1, name="H", copy_names=False).name)
    assert lt.discretize(plant, 0.1, name="H", copy_names=False).name == "H"


@pytest.mark.parametrize("kw", [{}, {"name": "z"}, {"copy_names": False},
                                {"copy_names": False, "name": "z"},
                                {"copy_names": False, "name": "z", "inputs": ["a"]},
                                {"outputs": ["w"]}], ids=repr)
@pytest.mark.parametrize("method", ["zoh", "tustin", "foh"])
def test_a_transfer_function_is_sampled_as_sample_system_samples_it(kw, method):
    """A ``TransferFunction`` in: python-control's type back, the same response and names as
    ``control.sample_system`` of it, ``name=`` with ``copy_names=False`` included (its
    transfer-function path applies the name, as its documentation says: the state-space
    path's drop is the odd one out, ``test_the_deliberate_differences``)."""
    tf = ct.tf([1.0, 2.0], [1.0, 3.0, 2.5], inputs="u", outputs="y", name="T")
    theirs = ct.sample_system(tf, 0.1, method, **kw)
    ours = lt.discretize(tf, 0.1, method, **kw)
    assert type(ours) is ct.TransferFunction and ours.dt == theirs.dt == 0.1
    z = np.exp(1j * np.array([0.01, 0.3, 1.0, 2.5]))
    np.testing.assert_allclose(ours(z).ravel(), theirs(z).ravel(), rtol=1e-10)
    assert (ours.input_labels, ours.output_labels) == (theirs.input_labels,
                                                       theirs.output_labels)
    if GENERIC.fullmatch(theirs.name):
        assert GENERIC.fullmatch(ours.name)
    else:
        assert ours.name == theirs.name
