"""Bad inputs at the river and python-control entry points (issue 37), as data.

Each :class:`Case` is a call and what it must do: raise an error of a type whose message
names the argument (:class:`Raises`, the pattern), or work correctly (:class:`Works`, a check
of the result). ``tests/interop/test_entry_bad_inputs.py`` runs them; the same list, run
against another version of the toolkit, counts its answers as clear, unclear or silent
(:func:`classify`). Calls import what they use inside, so a case that needs an API this
version lacks is counted as such instead of breaking the import of the list.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import numpy as np


@dataclass(frozen=True)
class Raises:
    exc: type | tuple[type, ...]
    pattern: str  # a regex the message must match (search), naming the argument
    arg: str = ""  # the argument's name: another version's message naming it is clear too


@dataclass(frozen=True)
class Works:
    check: Callable[[Any], bool]  # the result is correct
    what: str


@dataclass(frozen=True)
class Case:
    id: str
    call: Callable[[], Any]
    expect: Raises | Works


# ----------------------------------------------------------------------------- helpers
def _sf(**kw):
    from lds_toolkit.learning import SpectralFiltering

    return SpectralFiltering(**{"horizon": 16, "k": 3, **kw})


def _warm(**kw):
    learner = _sf(**kw)
    learner.learn_one({"a": 1.0, "b": 2.0}, 1.0)
    return learner


def _twin(cls_name, **kw):
    import lds_toolkit.learning.river as rl

    return getattr(rl, cls_name)(**kw)


def _named(dt=1.0, d_in=2):
    from lds_toolkit.systems import LDS

    return LDS(0.5 * np.eye(2), np.ones((2, d_in)), np.ones((1, 2)), dt=dt,
               inputs=["a", "b"][:d_in] if d_in <= 2 else None, outputs=["y"], name="G")


def _oracle(**kw):
    from lds_toolkit.learning import LDSOracle

    return LDSOracle(_named(), **kw)


def _plant(D=0.0, **names):
    import control as ct

    return ct.ss([[-1.0, 0.5], [0.0, -2.0]], [[1.0], [1.0]], [[1.0, 0.0]], [[D]], **names)


def _disc(*args, **kw):
    import lds_toolkit as lt

    return lt.discretize(*args, **kw)


def _s4b(*args, **kw):
    import lds_toolkit as lt

    return lt.s4_bilinear(*args, **kw)


def _learn(learner, x, y):
    learner.learn_one(x, y)
    return learner


def _stream(learner, n=6, x=lambda t: {"a": float(t)}, y=lambda t: float(t)):
    for t in range(n):
        learner.learn_one(x(t), y(t))
    return learner


def _finite_float(v):
    return type(v) is float and math.isfinite(v)


CASES: list[Case] = []


def case(id_, call, expect):
    CASES.append(Case(id_, call, expect))


# ------------------------------------------------- river: dict features that are not numbers
NOT_NUMBERS = {"str": "1.5", "none": None, "list": [1.0], "dict": {"z": 1.0}, "complex": 1 + 2j,
               "bytes": b"1", "datetime64": np.datetime64("2020-01-01"),
               "timedelta64": np.timedelta64(3, "s"), "decimal": Decimal("1.5"),
               "object": object(), "array-1": np.array([1.0]), "set": {1.0}}
for tag, value in NOT_NUMBERS.items():
    case(f"river-feature-{tag}-learn", lambda v=value: _warm().learn_one({"a": v, "b": 1.0}, 1.0),
         Raises(TypeError, r"x \(u_t\)\['a'\] must be a real number, got ", "x (u_t)"))
    case(f"river-feature-{tag}-predict", lambda v=value: _warm().predict_one({"a": v, "b": 1.0}),
         Raises(TypeError, r"x \(u_t\)\['a'\] must be a real number, got ", "x (u_t)"))
for tag, value in {"nan": np.nan, "inf": np.inf, "-inf": -np.inf}.items():
    case(f"river-feature-{tag}-learn", lambda v=value: _warm().learn_one({"a": v}, 1.0),
         Raises(ValueError, r"x \(u_t\)\['a'\] must be finite, got ", "x (u_t)"))
    case(f"river-feature-{tag}-predict", lambda v=value: _warm().predict_one({"b": v}),
         Raises(ValueError, r"x \(u_t\)\['b'\] must be finite, got ", "x (u_t)"))
    case(f"river-feature-{tag}-cold", lambda v=value: _sf().predict_one({"a": v}),
         Raises(ValueError, r"x \(u_t\)\['a'\] must be finite", "x (u_t)"))
# numbers of other types are numbers (river's one-hot booleans included)
for tag, value in {"bool": True, "float32": np.float32(2.0), "int64": np.int64(3),
                   "0-d-array": np.array(2.5)}.items():
    case(f"river-feature-{tag}-is-a-number",
         lambda v=value: _warm().learn_one({"a": v, "b": 1.0}, 1.0) or "ok",
         Works(lambda r: r == "ok", "accepted as a number"))

# ------------------------------------------------------------------ river: bad targets
BAD_TARGETS = {
    "nan": (np.nan, ValueError, r"y \(y_t\) must contain only finite values"),
    "inf": (np.inf, ValueError, r"y \(y_t\) must contain only finite values"),
    "str": ("1.0", TypeError, r"y \(y_t\) must be numeric, got str"),
    "mixed-list": ([1.0, "a"], TypeError, r"y \(y_t\) must be numeric"),
    "2-d": (np.ones((2, 2)), ValueError, r"y \(y_t\) must be a number, a non-empty 1-D"),
    "empty-array": (np.array([]), ValueError, r"y \(y_t\) must be a number, a non-empty 1-D"),
    "empty-dict": ({}, ValueError, r"y \(y_t\) must have at least one key"),
    "dict-nan": ({"p": np.nan}, ValueError, r"y \(y_t\)\['p'\] must be finite"),
    "dict-str": ({"p": "x"}, TypeError, r"y \(y_t\)\['p'\] must be a real number"),
    "list-inf": ([np.inf], ValueError, r"y \(y_t\) must contain only finite values"),
}
for tag, (value, exc, pattern) in BAD_TARGETS.items():
    case(f"river-target-{tag}-cold", lambda v=value: _sf().learn_one({"a": 1.0}, v),
         Raises(exc, pattern, "y (y_t)"))
case("river-target-nan-warm", lambda: _warm().learn_one({"a": 1.0}, float("nan")),
     Raises(ValueError, r"y \(y_t\) must contain only finite values"))
case("river-target-missing", lambda: _warm().learn_one({"a": 1.0}),
     Raises(TypeError, r"learn_one\(x, y\) takes the input u_t and the target y_t"))
case("river-target-dict-then-float",
     lambda: _learn(_sf(), {"a": 1.0}, {"p": 1.0}).learn_one({"a": 1.0}, 2.0),
     Raises(ValueError, r"y \(y_t\) must be a dict as in the first call"))
case("river-target-float-then-dict",
     lambda: _learn(_sf(), {"a": 1.0}, 1.0).learn_one({"a": 1.0}, {"p": 2.0}),
     Raises(ValueError, r"y \(y_t\) must be a (scalar|array) as in the first call, got a dict"))
case("river-target-new-name",
     lambda: _learn(_sf(), {"a": 1.0}, {"p": 1.0}).learn_one({"a": 1.0}, {"q": 2.0}),
     Raises(ValueError, r"y \(y_t\) has the new key 'q'"))
case("river-target-missing-name",
     lambda: _learn(_sf(), {"a": 1.0}, {"p": 1.0, "q": 1.0}).learn_one({"a": 1.0}, {"p": 2.0}),
     Raises(ValueError, r"y \(y_t\) lacks the key 'q'"))
case("river-target-bad-value-changes-nothing",
     lambda: _bad_then_state(), Works(lambda r: r, "the learner is as before the bad call"))


def _bad_then_state():
    """A rejected learn_one (good x, bad y) registers no new feature and takes no step."""
    learner = _warm()
    before = (learner.coef_.copy(), learner.input_names_, learner.n_updates_)
    try:
        learner.learn_one({"a": 1.0, "new": 2.0}, float("nan"))
    except ValueError:
        pass
    return (np.array_equal(learner.coef_, before[0]) and learner.input_names_ == before[1]
            and learner.n_updates_ == before[2])


# ------------------------------------------------------------------- river: bad inputs x
BAD_X = {
    "2-d": (np.ones((2, 2)), ValueError, r"x \(u_t\) must be a number, a non-empty 1-D"),
    "empty-array": (np.array([]), ValueError, r"x \(u_t\) must be a number, a non-empty 1-D"),
    "set": ({1.0, 2.0}, TypeError, r"x \(u_t\) must be numeric"),
    "str": ("abc", TypeError, r"x \(u_t\) must be numeric"),
    "none": (None, TypeError, r"x \(u_t\) must be an array, got None"),
    "nested-list": ([[1.0]], ValueError, r"x \(u_t\) must be a number, a non-empty 1-D"),
}
for tag, (value, exc, pattern) in BAD_X.items():
    case(f"river-input-{tag}", lambda v=value: _sf().learn_one(v, 1.0),
         Raises(exc, pattern, "x (u_t)"))
case("river-input-dict-then-array",
     lambda: _warm().learn_one(np.ones(2), 1.0),
     Raises(ValueError, r"x \(u_t\) must be a dict as in the first call"))
case("river-input-array-then-dict",
     lambda: _learn(_sf(), np.ones(2), 1.0).learn_one({"a": 1.0}, 1.0),
     Raises(ValueError, r"x \(u_t\) must be a array as in the first call, got a dict"))
case("river-input-wrong-length",
     lambda: _learn(_sf(), np.ones(2), 1.0).learn_one(np.ones(3), 1.0),
     Raises(ValueError, r"x \(u_t\) must have shape \(2,\), got \(3,\)"))
case("river-input-empty-dict-cold",  # a feature-less stream: the target's own past (issue 44)
     lambda: _learn(_sf(), {}, 1.0).predict_one({}), Works(_finite_float, "a float prediction"))
case("river-input-empty-dict-warm",  # every feature missing: zeros (river's convention)
     lambda: _warm().predict_one({}), Works(_finite_float, "a float prediction"))
case("river-input-unknown-key-predict",  # a feature never learned does not enter
     lambda: _warm().predict_one({"a": 1.0, "zzz": 5.0}) == _warm().predict_one({"a": 1.0}),
     Works(lambda r: r is True, "the same prediction"))
case("river-input-key-order",
     lambda: _stream(_sf(), x=lambda t: {"b": t, "a": -t}).predict_one({"a": 0.0})
     == _stream(_sf(), x=lambda t: {"a": -t, "b": t}).predict_one({"a": 0.0}),
     Works(lambda r: r is True, "the same prediction"))
case("river-input-int-keys", lambda: _stream(_sf(), x=lambda t: {0: t, 1: 1.0}).input_names_,
     Works(lambda r: r == [0, 1], "columns by key"))
case("river-input-mixed-type-keys",
     lambda: _stream(_sf(), x=lambda t: {0: t, "a": 1.0}).input_names_,
     Works(lambda r: sorted(map(repr, r)) == ["'a'", "0"], "columns for both keys"))

# ------------------------------------------------------------ river: LDSOracle by names
case("oracle-unknown-key", lambda: _oracle().learn_one({"a": 1.0, "c": 1.0}, 0.0),
     Raises(ValueError, r"x \(u_t\) has the key 'c', which is not one of the names "
                        r"\['a', 'b'\]"))
case("oracle-int-key", lambda: _oracle().learn_one({0: 1.0, "b": 1.0}, 0.0),
     Raises(ValueError, r"x \(u_t\) has the key 0, which is not one of the names"))
case("oracle-target-wrong-name", lambda: _oracle().learn_one({"a": 1.0}, {"z": 0.0}),
     Raises(ValueError, r"y \(y_t\) has the key 'z', which is not one of the names \['y'\]"))
case("oracle-array-wrong-length", lambda: _oracle().learn_one(np.ones(3), 0.0),
     Raises(ValueError, r"x \(u_t\) must have shape \(2,\), one entry per name"))
case("oracle-missing-input-is-zero",
     lambda: _stream(_oracle(), x=lambda t: {"a": 1.0}).predict_one({"a": 0.0})
     == _stream(_oracle(), x=lambda t: {"a": 1.0, "b": 0.0}).predict_one({"a": 0.0}),
     Works(lambda r: r is True, "a missing input counts as 0"))
case("oracle-continuous-system",
     lambda: _learn(__import__("lds_toolkit").learning.LDSOracle(_named(dt=0)), 1.0, 1.0),
     Raises(ValueError, r"system must be discrete-time"))
case("oracle-transfer-function",  # realised by control.ss: y_0 = C x_0 = 0
     lambda: __import__("lds_toolkit").learning.LDSOracle(
         __import__("control").tf([1.0], [1.0, 0.5], True)).predict_one(1.0),
     Works(lambda r: r == 0.0, "the cold prediction C x_0 = 0 of the realised system"))
case("oracle-transfer-function-frd",
     lambda: __import__("lds_toolkit").learning.LDSOracle(
         __import__("control").frd([1.0, 2.0], [0.1, 1.0])).predict_one(1.0),
     Raises(TypeError, r"system must be an LDS, a control.StateSpace or a "
                       r"control.TransferFunction, got FrequencyResponseData, which has no "
                       r"state-space realisation"))
case("oracle-x0-shape", lambda: _oracle(x0=np.ones(3)).predict_one({"a": 1.0}),
     Raises(ValueError, r"x0 must have shape \(2,\)"))
case("oracle-x0-nan", lambda: _oracle(x0=[np.nan, 0.0]).predict_one({"a": 1.0}),
     Raises(ValueError, r"x0 must contain only finite values"))
case("oracle-cold-float", lambda: _oracle().predict_one({"a": 1.0}),
     Works(_finite_float, "a float (one output)"))

# ---------------------------------------------------- river twins: bad hyper-parameters
TWIN_PARAMS = {
    "lr-negative": ({"lr": -1.0}, ValueError, r"lr must be > 0"),
    "lr-nan": ({"lr": float("nan")}, ValueError, r"lr must be > 0"),
    "lr-str": ({"lr": "0.1"}, TypeError, r"lr must be a real number > 0, got str"),
    "lr-schedule": ({"lr_schedule": "adam"}, ValueError, r"lr_schedule must be one of"),
    "radius-zero": ({"radius": 0.0}, ValueError, r"radius must be > 0"),
    "radius-nan": ({"radius": float("nan")}, ValueError, r"radius must be > 0"),
    "horizon-zero": ({"horizon": 0}, ValueError, r"horizon must be an integer"),
    "horizon-float": ({"horizon": 2.5}, TypeError, r"horizon must be an integer"),
    "horizon-bool": ({"horizon": True}, TypeError, r"horizon must be an integer"),
    "k-zero": ({"k": 0}, ValueError, r"k must be an integer"),
    "k-over-horizon": ({"k": 40}, ValueError, r"k must be <= 16 for horizon=16"),
    "context-over": ({"context": 17}, ValueError, r"context must be an integer in \[1, 16\]"),
    "precision": ({"filter_precision": "quad"}, ValueError, r"filter_precision must be one of"),
}
for tag, (params, exc, pattern) in TWIN_PARAMS.items():
    case(f"twin-{tag}",
         lambda p=params: _twin("SpectralFiltering", **{"horizon": 16, "k": 3, **p}).learn_one(
             {"a": 1.0}, 1.0), Raises(exc, pattern, next(iter(params))))
case("twin-hindsight-template-none",
     lambda: _twin("BestInHindsight", template=None).learn_one({"a": 1.0}, 1.0),
     Raises(TypeError, r"template must be a SpectralFiltering, SpectralFilteringAR2 or "
                       r"LastValue instance, got None"))
case("twin-hindsight-template-oracle",
     lambda: _twin("BestInHindsight", template=_oracle()).learn_one({"a": 1.0}, 1.0),
     Raises(TypeError, r"template must be a SpectralFiltering"))
case("twin-hindsight-tol",
     lambda: _twin("BestInHindsight", template=_sf(), tol=0.0).fit_predict(np.ones(5),
                                                                             np.ones(5)),
     Raises(ValueError, r"tol must be > 0"))
case("twin-oracle-none", lambda: _twin("LDSOracle", system=None).predict_one({"a": 1.0}),
     Raises(TypeError, r"system must be an LDS, a control.StateSpace or a "
                       r"control.TransferFunction, got NoneType"))
case("twin-learn-kwargs", lambda: _twin("LastValue").learn_one({"a": 1.0}, 1.0, w=2.0),
     Raises(TypeError, r"LastValue.learn_one takes x and y only, got \['w'\]"))
case("twin-step-sizes-normalized",
     lambda: _sf(lr_schedule="normalized").step_sizes(3),
     Raises(ValueError, r"lr_schedule='normalized' divides each step by .* pass scale"))
case("twin-unscaled-stream-finite",
     lambda: _stream(_twin("SpectralFiltering", horizon=32, k=4), n=60,
                     x=lambda t: {"date": 7.3e5 + t, "poll": 40.0 + t % 3},
                     y=lambda t: 40.0 + t % 5).predict_one({}),
     Works(_finite_float, "a finite prediction on an unscaled stream"))
case("reset-d-in-zero", lambda: _sf().reset(0, 1), Raises(ValueError, r"d_in must be an integer"))
case("reset-d-out-float", lambda: _sf().reset(1, 1.5),
     Raises(TypeError, r"d_out must be an integer"))

# ------------------------------------------------------------- python-control: discretize
BAD_DT = {
    "true": (True, TypeError, r"dt must be a sample time > 0 to discretise with, got True"),
    "zero": (0, ValueError, r"dt must lie in \(0, inf\), got 0"),
    "negative": (-1.0, ValueError, r"dt must lie in \(0, inf\)"),
    "nan": (float("nan"), ValueError, r"dt must be finite, got nan"),
    "inf": (float("inf"), ValueError, r"dt must be finite, got inf"),
    "str": ("0.1", TypeError, r"dt must be a real number, got str"),
    "none": (None, TypeError, r"dt must be a real number, got NoneType"),
    "subnormal": (1e-320, ValueError, r"dt=.* is below the smallest normal float64"),
    "array": (np.array([0.1, 0.2]), TypeError, r"dt must be a real number, got array"),
}
for tag, (dt, exc, pattern) in BAD_DT.items():
    case(f"discretize-dt-{tag}", lambda d=dt: _disc(_plant(), d), Raises(exc, pattern, "dt"))
    case(f"s4-bilinear-dt-{tag}", lambda d=dt: _s4b(_plant(), d), Raises(exc, pattern, "dt"))
BAD_OPTIONS = {
    "method-none": ({"method": None}, ValueError, r"method must be one of"),
    "method-upper": ({"method": "ZOH"}, ValueError, r"method must be one of"),
    "method-int": ({"method": 1}, ValueError, r"method must be one of"),
    "method-space": ({"method": "tustin "}, ValueError, r"method must be one of"),
    "impulse-with-D": ({"method": "impulse", "system": _plant(D=0.5)}, ValueError,
                       r"method='impulse' \(impulse invariance\) needs a strictly proper"),
    "impulse-tiny-D": ({"method": "impulse", "system": _plant(D=1e-12)}, ValueError,
                       r"got D\[0, 0\] = 1e-12"),
    "alpha-str": ({"method": "gbt", "alpha": "0.5"}, TypeError, r"alpha must be a real"),
    "alpha-nan": ({"method": "gbt", "alpha": float("nan")}, ValueError, r"alpha must be"),
    "alpha-negative": ({"method": "gbt", "alpha": -0.1}, ValueError, r"alpha must lie in"),
    "alpha-without-gbt": ({"method": "impulse", "alpha": 0.5}, ValueError,
                          r"alpha is only used by method='gbt'"),
    "prewarp-zero": ({"method": "tustin", "prewarp_frequency": 0.0}, ValueError,
                     r"prewarp_frequency must lie in"),
    "prewarp-nan": ({"method": "tustin", "prewarp_frequency": float("nan")}, ValueError,
                    r"prewarp_frequency must be finite"),
    "prewarp-euler": ({"method": "euler", "prewarp_frequency": 1.0}, ValueError,
                      r"prewarp_frequency needs method='bilinear'"),
    "prewarp-impulse": ({"method": "impulse", "prewarp_frequency": 1.0}, ValueError,
                        r"prewarp_frequency needs method='bilinear'"),
    "name-int": ({"name": 123}, TypeError, r"name must be a string \(the system's name\)"),
    "name-dot": ({"name": "a.b"}, ValueError, r"invalid system name 'a.b' \('.' not allowed"),
    "copy-names-str": ({"copy_names": "no"}, TypeError, r"copy_names must be True or False"),
    "copy-names-none": ({"copy_names": None}, TypeError, r"copy_names must be True or False"),
    "copy-names-int": ({"copy_names": 1}, TypeError, r"copy_names must be True or False"),
    "inputs-too-many": ({"inputs": ["u", "v"]}, ValueError, r"inputs must name the 1 inputs"),
    "inputs-count": ({"inputs": 3}, ValueError, r"inputs must name the 1 inputs"),
    "outputs-empty": ({"outputs": []}, ValueError, r"outputs must name the 1 outputs"),
    "states-too-few": ({"states": ["s"]}, ValueError, r"states must name the 2 states"),
    "states-not-str": ({"states": [1, 2]}, TypeError,
                       r"states must be signal names \(strings\), got int 1 at position 0"),
    "inputs-set": ({"inputs": {"u"}}, TypeError,
                   r"inputs must be a list of signal names \(strings\), one name or a count"),
    "inputs-bool": ({"inputs": True}, TypeError,
                    r"inputs must be a list of signal names \(strings\), one name or a count"),
    "inputs-dot": ({"inputs": ["u.v"]}, ValueError, r"invalid signal name 'u.v'"),
}
for tag, (kw, exc, pattern) in BAD_OPTIONS.items():
    def _call(kw=kw):
        kw = dict(kw)
        system = kw.pop("system", _plant())
        method = kw.pop("method", "zoh")
        return _disc(system, 0.1, method, **kw)
    named = [k for k in kw if k not in ("system", "method")]
    arg = "D" if tag.startswith("impulse-") else (named[-1] if named else "method")
    case(f"discretize-{tag}", _call, Raises(exc, pattern, arg))


def _static():
    import control as ct

    return ct.ss([], [], [], [[1.0]], dt=0)


BAD_SYSTEMS = {
    "discrete": (lambda: _plant().sample(0.1), ValueError, r"system must be continuous-time"),
    "dt-true": (lambda: __import__("control").ss(_plant(), dt=True), ValueError,
                r"system must be continuous-time \(dt None or 0\), got dt=True"),
    "dt-none": (lambda: __import__("control").ss(_plant(), dt=None), ValueError,
                r"python-control's timebase dt=None"),
    "transfer-function-discrete": (lambda: __import__("control").tf([1.0], [1.0, 0.5], 0.1),
                                   ValueError, r"system must be continuous-time"),
    "transfer-function-mimo": (lambda: __import__("control").tf(
        [[[1.0], [2.0]]], [[[1.0, 1.0], [1.0, 2.0]]]), TypeError,
        r"system is a 2-input, 1-output control.TransferFunction, which python-control "
        r"realises only with slycot"),
    "frd": (lambda: __import__("control").frd([1.0, 2.0], [0.1, 1.0]), TypeError,
            r"got FrequencyResponseData, which has no state-space realisation"),
    "array": (lambda: np.eye(2), TypeError, r"system must be an LDS, a control.StateSpace or a "
                                            r"control.TransferFunction, "
                                             r"got ndarray"),
    "none": (lambda: None, TypeError, r"system must be an LDS, a control.StateSpace or a "
                                      r"control.TransferFunction"),
    "dict": (lambda: {"A": 1}, TypeError, r"system must be an LDS, a control.StateSpace or a "
                                          r"control.TransferFunction"),
    "s4-recursion": (lambda: __import__("lds_toolkit").systems.S4Recursion(
        np.eye(1) * 0.5, np.ones((1, 1)), np.ones((1, 1))), TypeError,
        r"convert it with system.to_lds\(\) first"),
    "static": (_static, ValueError, r"A must have at least one row|static|no state"),
    "nan-in-A": (lambda: _mutated(np.nan), ValueError, r"A must contain only finite values"),
    "complex-A": (lambda: _mutated(1j), TypeError, r"A must be real"),
    "nonlinear": (lambda: __import__("control").nlsys(lambda t, x, u, p: -x, None, states=1,
                                                      inputs=1, outputs=1), TypeError,
                  r"system must be an LDS, a control.StateSpace or a "
                  r"control.TransferFunction, got NonlinearIOSystem"),
}


def _mutated(value):
    """A StateSpace whose A was edited in place after construction (python-control allows
    it): the toolkit reads the matrices as they are now."""
    sys_ = _plant()
    A = np.array(sys_.A, dtype=complex if isinstance(value, complex) else float)
    A[0, 0] = value
    sys_.A = A
    return sys_


for tag, (make, exc, pattern) in BAD_SYSTEMS.items():
    case(f"discretize-system-{tag}", lambda m=make: _disc(m(), 0.1),
         Raises(exc, pattern, "A" if tag in ("nan-in-A", "complex-A") else "system"))
for tag in ("discrete", "transfer-function-discrete", "dt-true"):
    make, exc, pattern = BAD_SYSTEMS[tag]
    case(f"s4-bilinear-system-{tag}", lambda m=make: _s4b(m(), 0.1),
         Raises(exc, pattern, "system"))
case("discretize-singular-tustin",
     lambda: _disc(__import__("control").ss([[20.0]], [[1.0]], [[1.0]], [[0.0]]), 0.1,
                   "tustin"),
     Raises(ValueError, r"dt=0.1 makes I - dt/2 A singular"))
case("discretize-overflow",
     lambda: _disc(__import__("control").ss([[1000.0]], [[1.0]], [[1.0]], [[0.0]]), 10.0),
     Raises(ValueError, r"dt=10 is too large for the zero-order hold"))
case("discretize-foh-overflow",
     lambda: _disc(__import__("control").ss([[1000.0]], [[1.0]], [[1.0]], [[0.0]]), 10.0,
                   "foh"),
     Raises(ValueError, r"dt=10 makes the foh discretisation overflow float64"))
case("discretize-matched-mimo", lambda: _disc(_plant_mimo(), 0.1, "matched"),
     Raises(ValueError, r"method='matched' \(pole-zero matching\) is defined for single-input"))


def _plant_mimo():
    import control as ct

    return ct.ss(-np.eye(2), np.eye(2), np.eye(2), np.zeros((2, 2)))


# weird but valid StateSpace objects: the answer is python-control's
class _Sub(__import__("control").StateSpace):
    """A user's StateSpace subclass."""


def _same_as_sample_system(make, **kw):
    import control as ct

    sys_ = make()
    ours, theirs = _disc(sys_, 0.1, **kw), ct.sample_system(sys_, 0.1, **kw)
    return (type(ours) is ct.StateSpace
            and all(np.allclose(getattr(ours, m), getattr(theirs, m), rtol=1e-12, atol=1e-14)
                    for m in "ABCD") and ours.input_labels == theirs.input_labels)


WEIRD = {
    "subclass": lambda: _Sub([[-1.0]], [[1.0]], [[1.0]], [[0.0]]),
    "int-matrices": lambda: __import__("control").ss([[-1]], [[1]], [[1]], [[0]]),
    "float-dt-zero": lambda: __import__("control").ss([[-1.0]], [[1.0]], [[1.0]], 0, dt=0.0),
    "numpy-dt-zero": lambda: __import__("control").ss([[-1.0]], [[1.0]], [[1.0]], 0,
                                                      dt=np.float64(0)),
    "mimo-named": lambda: __import__("control").ss(-np.eye(2), np.eye(2), np.eye(2), 0,
                                                   inputs=["p", "q"], outputs=["r", "s"]),
    "integrator": lambda: __import__("control").ss([[0.0]], [[1.0]], [[1.0]], [[0.0]]),
    "unstable": lambda: __import__("control").ss([[3.0]], [[1.0]], [[1.0]], [[0.0]]),
}
for tag, make in WEIRD.items():
    case(f"discretize-weird-{tag}", lambda m=make: _same_as_sample_system(m),
         Works(lambda r: r is True, "sample_system's matrices, a StateSpace back"))
case("discretize-weird-impulse-strictly-proper",
     lambda: _same_as_sample_system(_plant, method="impulse"),
     Works(lambda r: r is True, "sample_system's matrices"))

# ----------------------------------------------------------- S4Recursion names, from_lds
case("s4-recursion-names-key",
     lambda: __import__("lds_toolkit").systems.S4Recursion(
         np.eye(1) * 0.5, np.ones((1, 1)), np.ones((1, 1)), names={"bogus": 1}),
     Raises(TypeError, r"names must be a dict with keys among"))
case("s4-recursion-names-str",
     lambda: __import__("lds_toolkit").systems.S4Recursion(
         np.eye(1) * 0.5, np.ones((1, 1)), np.ones((1, 1)), names="plant"),
     Raises(TypeError, r"names must be a dict with keys among"))
case("s4-recursion-names-count",
     lambda: __import__("lds_toolkit").systems.S4Recursion(
         np.eye(1) * 0.5, np.ones((1, 1)), np.ones((1, 1)), names={"inputs": ["a", "b"]}),
     Raises(ValueError, r"inputs must name the 1 inputs"))


def classify(case_: Case) -> tuple[str, str]:
    """``(kind, detail)``: kind ``clear`` (the expected error, or one naming the argument) or
    ``correct`` (works as it should), ``unclear`` (another error, or a message that does not
    name the argument), ``refused`` (an error where the call should work), ``silent`` (no
    error where one is due, or a wrong result), or ``n/a`` (this version lacks the API the
    case calls)."""
    try:
        result = case_.call()
    except Exception as exc:  # noqa: BLE001 - classifying any answer
        text = f"{type(exc).__name__}: {exc}"
        missing = ("No module named 'lds_toolkit.learning.river'", "unexpected keyword",
                   "got an unexpected keyword argument", "has no attribute 'input_names_'")
        if any(m in str(exc) for m in missing):
            return "n/a", text
        if isinstance(case_.expect, Works):
            return "refused", text  # an error where the call should work
        expect = case_.expect
        if isinstance(expect, Raises) and isinstance(exc, expect.exc | ValueError | TypeError) \
                and (re.search(expect.pattern, str(exc))
                     or (expect.arg and expect.arg in str(exc))):
            return "clear", text
        return "unclear", text
    if isinstance(case_.expect, Works):
        return ("correct", repr(result)[:80]) if case_.expect.check(result) else \
            ("silent", repr(result)[:80])
    return "silent", f"no error, returned {repr(result)[:60]}"
