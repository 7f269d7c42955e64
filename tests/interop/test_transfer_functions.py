"""python-control's types, every one the docs promise (issue 46):

* every public function that takes a system takes a ``control.TransferFunction`` and gives
  exactly what it gives for python-control's own realisation of it, ``control.ss(tf)``, the
  transfer function's names kept;
* complex matrices are refused with the same ``TypeError`` whether they come in an
  :class:`LDS` or in a python-control ``StateSpace`` (python-control's constructor itself
  casts complex arrays to real with a ``ComplexWarning``: that is its warning, pinned here);
* an ``LDSOracle`` built from a plain ``StateSpace`` pickles (river's model saving) and
  clones, and predicts the same after the round trip.
"""

from __future__ import annotations

import pickle
import warnings

import control as ct
import numpy as np
import pytest

from lds_toolkit.control import (
    ETCSystem,
    continuous_lyapunov,
    discrete_certificate,
    discrete_lyapunov,
    verify,
)
from lds_toolkit.learning import LDSOracle
from lds_toolkit.systems import (
    LDS,
    S4Recursion,
    as_lds,
    discretize,
    eigenvalue_map,
    memory_length,
    s4_bilinear,
    simulate,
    simulate_continuous,
)
from lds_toolkit.systems.realization import impulse_fit_error

TF_C = ct.tf([1.0, 2.0], [1.0, 3.0, 2.5], inputs="u", outputs="y", name="Gc")
TF_D = ct.tf([0.5, 0.1], [1.0, -0.9, 0.2], 0.1, inputs="u", outputs="y", name="Gd")
U = np.random.default_rng(0).standard_normal((40, 1))


def _realised(tf) -> LDS:
    """python-control's realisation with the transfer function's names."""
    return LDS.from_statespace(ct.ss(tf, name=tf.name))


def _same(a, b):
    if isinstance(a, ct.LTI):
        z = np.exp(1j * np.array([0.05, 0.7, 2.0]))
        s = 1j * np.array([0.05, 0.7, 2.0])
        pts = z if a.isdtime() else s
        np.testing.assert_allclose(a(pts).ravel(), b(pts).ravel(), rtol=1e-10)
        return
    if hasattr(a, "y"):
        np.testing.assert_allclose(a.y, b.y, rtol=1e-12, atol=1e-14)
        return
    if isinstance(a, tuple | list):
        for x, y in zip(a, b):
            _same(x, y)
        return
    if hasattr(a, "__dataclass_fields__"):
        for name in a.__dataclass_fields__:
            _same(getattr(a, name), getattr(b, name))
        return
    if isinstance(a, np.ndarray | float | int):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)
        return
    assert a == b


CALLS = {
    "as_lds": (TF_D, lambda s: as_lds(s).A),
    "simulate": (TF_D, lambda s: simulate(s, U)),
    "simulate_continuous": (TF_C, lambda s: simulate_continuous(s, np.arange(40) * 0.05, U)),
    "discretize": (TF_C, lambda s: discretize(s, 0.1, "tustin")),
    "s4_bilinear": (TF_C, lambda s: s4_bilinear(s, 0.1)),
    "eigenvalue_map": (TF_D, lambda s: eigenvalue_map(s, 64).eigenvalues),
    "memory_length": (TF_D, lambda s: memory_length(s)),
    "impulse_fit_error": (TF_D, lambda s: impulse_fit_error(s, _realised(TF_D)
                                                             .impulse_response(16))),
    "continuous_lyapunov": (TF_C, lambda s: continuous_lyapunov(s, np.eye(2))),
    "discrete_lyapunov": (TF_D, lambda s: discrete_lyapunov(s, np.eye(2))),
    "discrete_certificate": (TF_D, lambda s: discrete_certificate(s).P),
    "verify": (TF_C, lambda s: verify(s, continuous_lyapunov(_realised(TF_C), np.eye(2)),
                                      np.eye(2))),
    "ETCSystem": (TF_C, lambda s: ETCSystem(s, K=[[-0.5, -0.2]]).A),
    "ETCSystem.from_lqr": (TF_C, lambda s: ETCSystem.from_lqr(s, np.eye(2), np.eye(1)).K),
    "S4Recursion.from_lds": (TF_D, lambda s: S4Recursion.from_lds(s).A_bar),
    "LDSOracle": (TF_D, lambda s: LDSOracle(s).fit_predict(U, np.zeros((40, 1)))),
}


@pytest.mark.parametrize("what", list(CALLS))
def test_every_function_takes_a_transfer_function_as_its_realisation(what):
    tf, call = CALLS[what]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        _same(call(tf), call(_realised(tf)))


def test_a_transfer_function_keeps_its_names_and_comes_back_as_one():
    sys_ = as_lds(TF_D)
    assert (sys_.input_labels, sys_.output_labels, sys_.name, sys_.dt) == (["u"], ["y"],
                                                                          "Gd", 0.1)
    for out in (discretize(TF_C, 0.1), s4_bilinear(TF_C, 0.1)):
        assert type(out) is ct.TransferFunction and out.input_labels == ["u"]
    assert s4_bilinear(TF_C, 0.1).name == "Gc"
    assert simulate(TF_D, U).output_labels == ["y"]


def test_complex_matrices_are_refused_alike_on_every_route():
    A = np.array([[0.5 + 0.1j]])
    with pytest.raises(TypeError, match=r"^A must be real, got complex entries$"):
        LDS(A, [[1.0]], [[1.0]], dt=1.0)
    with pytest.warns(np.exceptions.ComplexWarning):  # python-control's own cast
        assert ct.ss(A, [[1.0]], [[1.0]], [[0.0]], 1).A.dtype == float
    plain = ct.ss([[0.5]], [[1.0]], [[1.0]], [[0.0]], 1)
    plain.A = A  # python-control allows it: the toolkit reads the matrices as they are
    for call in (as_lds, lambda s: simulate(s, U), lambda s: LDSOracle(s).predict_one(1.0),
                 lambda s: discrete_lyapunov(s, np.eye(1)), lambda s: eigenvalue_map(s, 8)):
        with pytest.raises(TypeError, match=r"^A must be real, got complex entries$"):
            call(plain)


def test_an_oracle_of_a_statespace_pickles_and_clones():
    river = pytest.importorskip("river")
    from lds_toolkit.learning import river as twins

    plant = ct.ss([[0.5, 0.1], [0.0, 0.3]], [[1.0, 0.0], [0.5, 1.0]], [[1.0, -1.0]],
                  [[0.0, 0.2]], 1.0, inputs=["a", "b"], outputs=["y"], name="P")
    for oracle in (LDSOracle(plant), twins.LDSOracle(plant)):
        x = {"a": 1.0, "b": -0.5} if isinstance(oracle, river.base.Base) else np.array([1.0, -0.5])
        oracle.learn_one(x, 0.3)
        copy = pickle.loads(pickle.dumps(oracle))
        assert type(copy.system) is ct.StateSpace and copy.system.name == "P"
        assert copy.system.input_labels == ["a", "b"]
        for k in "ABCD":
            np.testing.assert_array_equal(getattr(copy.system, k), getattr(plant, k))
        assert copy.predict_one(x) == oracle.predict_one(x)  # the state came along
    clone = twins.LDSOracle(plant).clone()
    assert clone.system is not None and clone.predict_one({"a": 1.0}) == 0.0
