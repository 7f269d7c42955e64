"""One return-type rule for every function of the public API that returns a system:

* a function that transforms a system gives python-control's type back: a plain
  ``control.StateSpace`` for a ``control.StateSpace``, an ``LDS`` for an ``LDS``;
* a function that builds a system from something else (matrices, data, a layer, another
  type on purpose: ``as_lds``, ``LDS.from_statespace``) returns an ``LDS``, and
  ``LDS.to_statespace`` a plain ``StateSpace``, whatever came in.

``test_every_system_returning_function_is_covered`` finds the functions by their return
annotations (every public function and method of the package's ``__all__`` and of the torch
layers), so a new one fails here until it is put in a row.
"""

from __future__ import annotations

import inspect

import control as ct
import numpy as np
import pytest

import lds_toolkit as lt
import lds_toolkit.control
import lds_toolkit.learning
import lds_toolkit.systems
from lds_toolkit.systems import LDS, S4Recursion

SS = ct.StateSpace


def _plant(kind: str, dt=0):
    A = np.array([[-1.0, 0.5], [0.0, -2.0]]) if dt == 0 else np.diag([0.5, -0.3])
    lds = LDS(A, np.ones((2, 1)), np.ones((1, 2)), dt=dt, inputs="u", outputs="y",
              states=["a", "b"], name="G")
    return lds if kind == "lds" else lds.to_statespace()


# (call on a system of the given kind) -> (expected type for an LDS in, for a StateSpace in)
TRANSFORMS = {
    "lds_toolkit.systems.discretize.discretize": lambda s: lt.discretize(s, 0.1, "foh"),
    "lds_toolkit.systems.discretize.s4_bilinear": lambda s: lt.s4_bilinear(s, 0.1),
}
CONVERTERS = {  # name -> (call, the type it returns for either input)
    "lds_toolkit.systems.lds.as_lds": (lt.systems.as_lds, LDS),
    "lds_toolkit.systems.lds.LDS.from_statespace": (LDS.from_statespace, LDS),
    "lds_toolkit.systems.lds.LDS.to_statespace": (lambda s: LDS.from_statespace(s)
                                                  .to_statespace(), SS),
}
BUILDERS = {  # name -> a call building a system from no system
    "lds_toolkit.systems.lds.LDS.discretize": lambda: _plant("lds").discretize(0.1, "zoh"),
    "lds_toolkit.systems.lds.LDS.with_matrices": lambda: _plant("lds").with_matrices(
        D=np.ones((1, 1))),
    "lds_toolkit.systems.random.random_lds": lambda: lt.random_lds(3, [(0.5, 0.9)], rng=0),
    "lds_toolkit.systems.random.random_stable_lds": lambda: lt.random_stable_lds(3, rng=0),
    "lds_toolkit.systems.realization.era": lambda: lt.systems.era(
        _plant("lds", dt=1.0).impulse_response(20), 2)[0],
    "lds_toolkit.learning.filters_lds.filters_as_lds": lambda: lt.filters_as_lds(64, 4),
    "lds_toolkit.systems.s4_recursion.S4Recursion.to_lds": lambda: S4Recursion(
        np.eye(2) * 0.5, np.ones((2, 1)), np.ones((1, 2))).to_lds(),
}
LAYER_EXPORTS = ("to_lds",)  # the torch layers' exports: test_layer_exports_are_lds
LAYER_BUILDERS = {"lds_toolkit.neural.layers.stu.STU.fit_lds"}  # also there


@pytest.mark.parametrize("name", list(TRANSFORMS))
def test_a_transform_gives_the_type_that_came_in(name):
    for kind, expected in (("lds", LDS), ("statespace", SS)):
        out = TRANSFORMS[name](_plant(kind))
        assert type(out) is expected, (name, kind)
        assert out.input_labels == ["u"] and out.state_labels == ["a", "b"]


@pytest.mark.parametrize("name", list(CONVERTERS))
def test_a_converter_gives_its_own_type(name):
    call, expected = CONVERTERS[name]
    for kind in ("lds", "statespace"):
        out = call(_plant(kind))
        assert type(out) is expected and out.name == "G" and out.input_labels == ["u"]


@pytest.mark.parametrize("name", list(BUILDERS))
def test_a_builder_gives_an_lds(name):
    assert type(BUILDERS[name]()) is LDS


def test_layer_exports_are_lds():
    torch = pytest.importorskip("torch")
    from lds_toolkit.neural import DPLRSSM, S4, STU, DiagonalSSM, S4Plus

    assert type(STU(1, 32, 8).fit_lds(2).system) is LDS
    assert type(STU(1, 32, 8).to_lds()) is LDS and type(STU(2, 32, 8).to_lds(1)) is LDS
    with torch.no_grad():
        for layer in (S4(2, 4, seed=0), S4Plus(2, 4, seed=0), DiagonalSSM(2, 4, seed=0),
                      DPLRSSM(2, 4, seed=0), S4.from_lds(_plant("statespace", dt=1.0))):
            for out in (layer.to_lds(), layer.to_lds(0), layer.to_lds(continuous=True)):
                assert type(out) is LDS


def _annotated_system_returners() -> set[str]:
    """Public functions and methods whose return annotation names a system type."""
    found: set[str] = set()
    modules = [lt, lt.systems, lt.control, lt.learning]
    try:
        import lds_toolkit.neural as neural
        modules.append(neural)
    except ImportError:  # pragma: no cover - without torch
        pass

    def visit(qualname, fn):
        annotation = str(inspect.signature(fn).return_annotation)
        if any(t in annotation for t in ("LDS", "SystemLike", "StateSpace")):
            found.add(qualname)

    for module in modules:
        for public in module.__all__:
            obj = getattr(module, public)
            if inspect.isfunction(obj):
                visit(f"{obj.__module__}.{obj.__qualname__}", obj)
            elif inspect.isclass(obj) and obj.__module__.startswith("lds_toolkit"):
                for attr, value in vars(obj).items():
                    fn = getattr(value, "__func__", value)
                    if not attr.startswith("_") and inspect.isfunction(fn):
                        if attr in LAYER_EXPORTS and "neural" in obj.__module__:
                            continue  # the layers' to_lds: test_layer_exports_are_lds
                        visit(f"{obj.__module__}.{obj.__qualname__}.{attr}", fn)
    return found


def test_every_system_returning_function_is_covered():
    covered = set(TRANSFORMS) | set(CONVERTERS) | set(BUILDERS)
    found = _annotated_system_returners()
    assert found - LAYER_BUILDERS == covered
    assert found & LAYER_BUILDERS in (LAYER_BUILDERS, set())  # set() without torch
