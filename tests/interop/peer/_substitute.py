"""What the peer suite substitutes in python-control's own tests, and the tally of it.

python-control's test modules (shipped in its wheel) run unchanged; for the duration of each
test these names point at the toolkit:

* **systems** — ``control.ss``, ``control.StateSpace`` (and the ``StateSpace``/``ss`` names the
  test modules imported), ``rss``, ``drss``, ``tf2ss``: python-control's constructor runs first
  (so its argument processing, names and error messages are its own), then the result becomes
  an :class:`lds_toolkit.systems.LDS` through :meth:`LDS.from_statespace` (our validation).
  Every python-control function in the test then operates on LDS objects. Systems the toolkit
  refuses by design (no state, complex entries, python-control's unspecified timebase
  ``dt=None``) stay python-control's: counted as pass-through.
* **discrete-time simulation** — ``control.timeresp.forced_response`` (also what
  ``step_response``, ``impulse_response`` and ``initial_response`` call): python-control
  interprets the arguments (time grid, inputs, initial state, squeeze, labels), then
  :func:`lds_toolkit.simulate` recomputes outputs and states, which replace python-control's.
  Continuous systems (python-control interpolates inputs linearly; ``simulate_continuous``
  holds them), transfer functions and time grids coarser than the sample time (python-control
  then subsamples a finer simulation) pass through.
* **discretisation** — ``StateSpace.sample`` (hence ``sample_system``/``c2d``) calls
  :func:`lds_toolkit.discretize` for every method the toolkit has; ``"impulse"`` and options
  python-control ignores with a warning (where the toolkit raises) pass through.
* **Lyapunov** — ``lyap``/``dlyap`` of ``mateqn_test`` call
  ``continuous_lyapunov``/``discrete_lyapunov`` with ``convention="control"``; the Sylvester and
  generalised forms (not in the toolkit's API) pass through.
"""

from __future__ import annotations

import copy
import warnings
from collections import Counter

import control
import control.statesp
import control.timeresp
import numpy as np

import lds_toolkit as lt
from lds_toolkit.systems import LDS
from lds_toolkit.systems.discretize import METHODS

REAL = {"StateSpace": control.statesp.StateSpace, "ss": control.statesp.ss,
        "rss": control.statesp.rss, "drss": control.statesp.drss,
        "tf2ss": control.statesp.tf2ss, "sample": control.statesp.StateSpace.sample,
        "forced_response": control.timeresp.forced_response,
        "lyap": control.mateqn.lyap, "dlyap": control.mateqn.dlyap}

#: calls routed to the toolkit ("ours") and passed through ("theirs"), per kind, this test
TALLY: Counter = Counter()


def _ours(kind: str, value):
    TALLY[("ours", kind)] += 1
    return value


def _theirs(kind: str, value):
    TALLY[("theirs", kind)] += 1
    return value


def as_toolkit_system(sys):
    """``sys`` as an LDS when the toolkit accepts it, else unchanged (pass-through)."""
    if isinstance(sys, LDS) or not isinstance(sys, REAL["StateSpace"]):
        return sys
    if sys.nstates == 0 or np.iscomplexobj(sys.A) or sys.dt is None:
        return _theirs("system", sys)
    try:
        return _ours("system", LDS.from_statespace(sys))
    except (ValueError, TypeError):
        return _theirs("system", sys)


def _constructor(name):
    real = REAL[name]

    def build(*args, **kwargs):
        return as_toolkit_system(real(*args, **kwargs))
    build.__name__ = name
    return build


class _StateSpaceMeta(type):
    """``isinstance``/``issubclass`` and attributes answer as python-control's StateSpace;
    calling builds a toolkit system."""

    def __instancecheck__(cls, obj):
        return isinstance(obj, REAL["StateSpace"])

    def __subclasscheck__(cls, sub):
        return issubclass(sub, REAL["StateSpace"])

    def __call__(cls, *args, **kwargs):
        return as_toolkit_system(REAL["StateSpace"](*args, **kwargs))

    def __getattr__(cls, name):
        return getattr(REAL["StateSpace"], name)


class StateSpace(metaclass=_StateSpaceMeta):
    """Stands for ``control.StateSpace`` in the peer tests (module docstring)."""


def forced_response(sysdata, *args, **kwargs):
    """python-control's forced_response, with the outputs and states of a discrete
    ``StateSpace`` recomputed by :func:`lds_toolkit.simulate` (module docstring)."""
    resp = REAL["forced_response"](sysdata, *args, **kwargs)
    if isinstance(sysdata, list | tuple):  # the per-system calls came through here already
        return resp
    sys = sysdata
    eligible = (isinstance(sys, REAL["StateSpace"]) and sys.isdtime(strict=True)
                and not kwargs.get("interpolate", False) and sys.nstates > 0
                and resp.x is not None and resp.u is not None and resp.ntraces == 0)
    if not eligible:
        return _theirs("forced_response", resp)
    step = 1.0 if sys.dt is True else float(sys.dt)
    if resp.t.size > 1 and not np.allclose(np.diff(resp.t), step, rtol=1e-9, atol=0):
        return _theirs("forced_response", resp)  # python-control subsamples its simulation
    try:
        system = sys if isinstance(sys, LDS) else LDS.from_statespace(sys)
    except (ValueError, TypeError):
        return _theirs("forced_response", resp)
    u = np.asarray(resp.u, dtype=float).reshape(sys.ninputs, -1)
    res = lt.simulate(system, u.T, np.asarray(resp.x, dtype=float)[:, 0])
    out = copy.copy(resp)
    out.y = res.y.T.reshape(np.shape(resp.y))
    out.x = res.x.T.reshape(np.shape(resp.x))
    return _ours("forced_response", out)


def sample(self, Ts, method="zoh", alpha=None, prewarp_frequency=None, name=None,
           copy_names=True, **kwargs):
    """``StateSpace.sample`` computed by :func:`lds_toolkit.discretize` (module docstring)."""
    real = REAL["sample"]
    if not self.isctime():
        raise ValueError("System must be continuous-time system")
    theirs_only = (method not in METHODS or self.dt is None
                   or self.nstates == 0 or np.iscomplexobj(self.A)
                   or (alpha is not None and method != "gbt")
                   or (prewarp_frequency is not None
                       and not (method in ("bilinear", "tustin")
                                or (method == "gbt" and alpha == 0.5))))
    if theirs_only:
        return _theirs("sample", real(self, Ts, method, alpha, prewarp_frequency, name,
                                      copy_names, **kwargs))
    plain = REAL["StateSpace"](self.A, self.B, self.C, self.D, self.dt)
    plain._copy_names(self)
    sysd = lt.discretize(plain, Ts, method, alpha=alpha, prewarp_frequency=prewarp_frequency)
    if not copy_names:
        sysd = REAL["StateSpace"](sysd.A, sysd.B, sysd.C, sysd.D, Ts)
    elif name is not None:
        sysd.name = name
    return _ours("sample", as_toolkit_system(REAL["StateSpace"](sysd, **kwargs)))


def _lyapunov(which):
    real = REAL[which]
    ours = lt.continuous_lyapunov if which == "lyap" else lt.discrete_lyapunov

    def solve(A, Q, C=None, E=None, method=None):
        if C is not None or E is not None or method not in (None, "scipy"):
            return _theirs(which, real(A, Q, C, E, method=method))
        A2, Q2 = np.atleast_2d(A), np.atleast_2d(Q)
        if A2.ndim != 2 or A2.shape[0] != A2.shape[1] or Q2.shape != A2.shape:
            return _theirs(which, real(A, Q, C, E, method=method))  # their shape errors
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            return _ours(which, ours(A2, Q2, convention="control"))
    solve.__name__ = which
    return solve


def install(monkeypatch, modules) -> None:
    """Point the names at the toolkit for one test (``monkeypatch`` restores them)."""
    for mod in (control, control.statesp, *modules):
        for name in ("ss", "rss", "drss", "tf2ss"):
            if mod is not control.statesp and hasattr(mod, name):
                monkeypatch.setattr(mod, name, _constructor(name))
        if mod is not control.statesp and hasattr(mod, "StateSpace"):
            monkeypatch.setattr(mod, "StateSpace", StateSpace)
        for which in ("lyap", "dlyap"):
            if mod is not control and hasattr(mod, which) and mod.__name__.endswith("_test"):
                monkeypatch.setattr(mod, which, _lyapunov(which))
    monkeypatch.setattr(control.timeresp, "forced_response", forced_response)
    monkeypatch.setattr(control, "forced_response", forced_response)
    monkeypatch.setattr(control.statesp.StateSpace, "sample", sample)
