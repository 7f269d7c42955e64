"""The :class:`LDS` type: a validated linear state-space model that *is* a
``control.StateSpace``.

Continuous time (``dt = 0``, python-control's value; ``None`` and ``False`` are accepted and
stored as ``0``)::

    dx/dt = A x + B u,        y = C x + D u

Discrete time with sample time ``dt`` (the state recursion every function in the toolkit
uses; the output index convention is chosen where outputs are produced, see
:func:`lds_toolkit.systems.simulate`)::

    x_{t+1} = A x_t + B u_t,  y_t = C x_t + D u_t

``dt = True`` is python-control's "discrete time, sample time unspecified"; it is kept as
``True`` (not converted to a number).

**Why a subclass of** ``control.StateSpace`` **rather than an object that implements the
protocol python-control calls.** python-control dispatches on the class: ``forced_response``,
``step_response``, ``initial_response`` and ``impulse_response`` refuse anything that is not
an instance of ``StateSpace`` or ``TransferFunction``, and ``feedback``/``series``/
``interconnect`` call ``StateSpace`` internals. A look-alike object would need every such
function re-implemented; a subclass gets them all, computed by python-control's own code, so
``ct.poles(lds)``, ``ct.bode(lds)``, ``ct.feedback(lds, K)`` or ``ct.forced_response(lds, T,
U)`` give exactly what they give for the equivalent ``StateSpace``. The subclass keeps what
the toolkit needs: the constructor validates (finite real matrices of matching shapes, a
valid timebase) *before* python-control's constructor runs, and ``A, B, C, D`` are replaced
by read-only float64 arrays that the numba cores read directly, so the simulation paths are
unchanged. What differs from a plain ``StateSpace``: the matrices and ``dt`` cannot be
reassigned (build a new system with :meth:`LDS.with_matrices`), static systems (no state),
complex matrices and python-control's ``dt=None`` ("unspecified timebase") are refused, and
:meth:`LDS.impulse_response` returns Markov parameters (python-control's
``ct.impulse_response(lds)`` still gives its ``TimeResponseData``). Equality is python-control's
(identity, so ``ct.interconnect`` treats two equal-valued systems as two systems); compare
values with :meth:`LDS.equals`. Results of python-control's functions (``feedback``,
``sample_system``, ``series``, ...) are plain ``StateSpace`` objects, as they would be for a
``StateSpace``; :func:`as_lds` turns one back into an :class:`LDS` with its signal names.

Every function of the toolkit that takes an :class:`LDS` also takes a ``control.StateSpace``
and a ``control.TransferFunction`` (python-control's ``control.ss`` realisation of it, its
names kept); :func:`as_lds` is the one place that converts (through
:meth:`LDS.from_statespace` and :func:`from_transfer_function`).
"""

from __future__ import annotations

import control
import numpy as np

from .._signal_names import SignalNames, check_signal_names, check_system_name
from .._typing import ArrayLike
from .._validation import (
    as_matrix,
    as_square,
    check_bool,
    check_choice,
    check_real,
)
from ._discretization import discretize_matrices, sample_time
from ._frozen import frozen
from ._timebase import (
    SYSTEM_TYPES,
    as_state_vector,
    realise_transfer_function,
    sampled_name,
    timebase,
)

__all__ = ["LDS", "SYSTEM_TYPES", "SignalNames", "as_lds", "as_state_vector",
           "from_transfer_function", "is_system", "like_input", "require_continuous",
           "require_discrete", "sampled_name", "timebase"]

#: Attributes that cannot change after construction (python-control may write an equal value).
_FROZEN = frozenset({"A", "B", "C", "D", "dt"})
#: Keywords of :meth:`LDS.with_matrices`.
_WITH_KEYS = ("A", "B", "C", "D", "dt", "inputs", "outputs", "states", "name")
#: Values of ``convention=`` of :meth:`LDS.impulse_response`.
IMPULSE_CONVENTIONS = ("toolkit", "control")


class LDS(control.StateSpace):
    """A linear dynamical system ``(A, B, C, D)`` in continuous or discrete time.

    A subclass of ``control.StateSpace`` (see the module docstring for why): every
    python-control function takes it and gives what it gives for the equivalent
    ``StateSpace``.

    Parameters
    ----------
    A : array_like, shape (n, n)
        State matrix.
    B : array_like, shape (n, d_in)
        Input matrix.
    C : array_like, shape (d_out, n)
        Output matrix.
    D : array_like, shape (d_out, d_in), optional
        Feed-through matrix; zeros when omitted.
    dt : float, True, 0 or None, optional
        Timebase, as in python-control except for ``None``:

        * ``0`` (stored), ``None`` (default) or ``False``: continuous time;
        * a float ``> 0``: discrete time with that sample time;
        * ``True``: discrete time with an unspecified sample time (stored as ``True``;
          time vectors then count steps, as python-control does).

        python-control's own ``dt=None`` ("timebase not specified") has no counterpart here:
        :meth:`from_statespace` refuses it rather than guess.
    inputs, outputs, states : list of str, str or int, optional
        Signal names, as python-control's (``["u"]``, ``"y"``, ...); default ``u[i]``,
        ``y[i]``, ``x[i]``. Kept by :func:`simulate`, :func:`discretize` and
        :meth:`with_matrices`.
    name : str, optional
        System name (python-control's ``sys[k]`` by default).

    Raises
    ------
    ValueError
        If a matrix is not 2-D, shapes do not match, entries are not finite, or ``dt < 0``.
    TypeError
        If ``dt`` is not a number, a bool or None.

    Examples
    --------
    >>> import control as ct
    >>> sys = LDS(A=[[0.9]], B=[[1.0]], C=[[1.0]], dt=1.0, inputs="u", outputs="y")
    >>> sys.is_stable(), isinstance(sys, ct.StateSpace)
    (True, True)
    >>> float(ct.dcgain(sys))
    10.000000000000002
    """

    def __init__(self, A: ArrayLike, B: ArrayLike, C: ArrayLike, D: ArrayLike | None = None,
                 dt: float | bool | None = None, *, inputs: SignalNames = None,
                 outputs: SignalNames = None, states: SignalNames = None,
                 name: str | None = None) -> None:
        A = as_square("A", A)
        n = A.shape[0]
        B = as_matrix("B", B)
        if B.shape[0] != n:
            raise ValueError(f"B must have shape ({n}, d_in) to match A {A.shape}, got {B.shape}")
        C = as_matrix("C", C)
        if C.shape[1] != n:
            raise ValueError(f"C must have shape (d_out, {n}) to match A {A.shape}, got {C.shape}")
        if D is None:
            D = np.zeros((C.shape[0], B.shape[1]))
        else:
            D = as_matrix("D", D, shape=(C.shape[0], B.shape[1]))
        dt = timebase(dt)
        # own read-only copies (validation returns the caller's array when it is already
        # float64; freezing that would make the caller's array read-only, and sharing it would
        # let later edits change the system), refusing in-place edits with a clear message
        frozen_arrays = {key: frozen(key, arr) for key, arr in (("A", A), ("B", B), ("C", C),
                                                                ("D", D))}
        names = {"inputs": inputs, "outputs": outputs, "states": states, "name": name}
        for key, count, what in (("inputs", B.shape[1], "columns of B"),
                                 ("outputs", C.shape[0], "rows of C"), ("states", n, "A's size")):
            check_signal_names(key, names[key], count, what)
        check_system_name(name)
        given = {k: v for k, v in names.items() if v is not None}
        super().__init__(frozen_arrays["A"], frozen_arrays["B"], frozen_arrays["C"],
                         frozen_arrays["D"], dt, remove_useless_states=False, **given)
        for key, arr in frozen_arrays.items():  # python-control's constructor made its own copies
            object.__setattr__(self, key, arr)
        object.__setattr__(self, "_lds_frozen", True)

    def __setattr__(self, name, value):
        if name in _FROZEN and self.__dict__.get("_lds_frozen", False):
            old = self.__dict__.get(name)
            same = (old is value or (name == "dt" and (old is True) == (value is True)
                                     and old == value))
            if not same:
                raise AttributeError(f"an LDS is immutable: {name} cannot be reassigned; build "
                                     f"a new system with with_matrices({name}=...)")
            return
        super().__setattr__(name, value)

    def __reduce__(self):
        # python-control's StateSpace holds closures and does not pickle; an LDS is rebuilt
        # from its matrices, timebase and names (also what copy.deepcopy and sys.copy() use)
        return (_rebuild, (np.array(self.A), np.array(self.B), np.array(self.C),
                           np.array(self.D), self.dt, self.names()))

    # ----------------------------------------------------------------- sizes
    @property
    def n_states(self) -> int:
        """Hidden dimension n."""
        return self.A.shape[0]

    @property
    def n_inputs(self) -> int:
        """Input dimension d_in."""
        return self.B.shape[1]

    @property
    def n_outputs(self) -> int:
        """Output dimension d_out."""
        return self.C.shape[0]

    @property
    def is_discrete(self) -> bool:
        """``dt`` is a sample time or ``True``."""
        return self.dt is True or self.dt != 0

    @property
    def sample_time(self) -> float:
        """The sample time of a discrete system: ``dt``, or 1.0 (one step) for ``dt=True``.

        Raises ``ValueError`` for a continuous system.
        """
        if not self.is_discrete:
            raise ValueError("a continuous-time system (dt = 0) has no sample time")
        return 1.0 if self.dt is True else float(self.dt)

    @property
    def is_continuous(self) -> bool:
        """``dt`` is 0."""
        return not self.is_discrete

    def names(self) -> dict:
        """The signal names as keywords of the constructor: ``{"inputs": [...], "outputs":
        [...], "states": [...], "name": str}``."""
        return {"inputs": list(self.input_labels), "outputs": list(self.output_labels),
                "states": list(self.state_labels), "name": self.name}

    # ------------------------------------------------------------ spectrum
    def eigenvalues(self) -> np.ndarray:
        """Eigenvalues of A (complex array, sorted by decreasing modulus for discrete systems
        and by decreasing real part for continuous ones)."""
        lam = np.linalg.eigvals(self.A).astype(complex)
        key = -np.abs(lam) if self.is_discrete else -lam.real
        return lam[np.argsort(key, kind="stable")]

    def spectral_radius(self) -> float:
        """max |λ_i(A)|."""
        return float(np.max(np.abs(np.linalg.eigvals(self.A))))

    def spectral_abscissa(self) -> float:
        """max Re λ_i(A)."""
        return float(np.max(np.linalg.eigvals(self.A).real))

    def is_stable(self, *, tol: float = 0.0) -> bool:
        """Asymptotic stability: ρ(A) < 1 - tol (discrete) or max Re λ(A) < -tol (continuous);
        ``tol`` a finite margin >= 0."""
        tol = check_real("tol", tol, low=0.0)
        if self.is_discrete:
            return self.spectral_radius() < 1.0 - tol
        return self.spectral_abscissa() < -tol

    def is_marginally_stable(self, *, tol: float = 1e-12) -> bool:
        """ρ(A) <= 1 + tol (discrete) or max Re λ(A) <= tol (continuous).

        Only a spectral check: a defective eigenvalue on the boundary is not detected.
        """
        tol = check_real("tol", tol, low=0.0)
        if self.is_discrete:
            return self.spectral_radius() <= 1.0 + tol
        return self.spectral_abscissa() <= tol

    # ---------------------------------------------------------- transforms
    def discretize(self, dt: float, method: str = "zoh", *, alpha: float | None = None,
                   prewarp_frequency: float | None = None, name: str | None = None,
                   copy_names: bool = True, inputs: SignalNames = None,
                   outputs: SignalNames = None, states: SignalNames = None) -> LDS:
        """Discretise a continuous system; see :func:`lds_toolkit.systems.discretize` (the
        same keywords, python-control's ``sample_system`` names: with ``copy_names`` the
        signal names are kept, state names too except for ``"matched"``, whose realisation has
        other states, and the system name gets python-control's ``$sampled`` suffix)."""
        if not self.is_continuous:
            raise ValueError(f"system must be continuous-time (dt 0 or None), got dt={self.dt}")
        copy_names = check_bool("copy_names", copy_names)
        check_system_name(name)
        Ad, Bd, Cd, Dd = discretize_matrices(self.A, self.B, self.C, self.D, dt, method,
                                             alpha=alpha, prewarp_frequency=prewarp_frequency)
        names: dict = {}
        if copy_names:
            names = self.names()
            names["name"] = sampled_name(self.name)
            if method == "matched" or Ad.shape != self.A.shape:
                names.pop("states")
        given = {"inputs": inputs, "outputs": outputs, "states": states, "name": name}
        names.update({k: v for k, v in given.items() if v is not None})
        return LDS(Ad, Bd, Cd, Dd, dt=sample_time(dt), **names)

    def impulse_response(self, length: int | None = None, *,
                         convention: str = "toolkit") -> np.ndarray:
        """Impulse response of a discrete system, shape (length, d_out, d_in).

        ``convention="toolkit"`` (default): the Markov parameters, the response to a unit
        *sample* ``u_0 = 1`` (standard convention ``y_t = C x_t + D u_t``, ``x_0 = 0``)::

            h_0 = D,   h_t = C A^{t-1} B   (t >= 1)

        ``convention="control"``: python-control's ``control.impulse_response``, the response
        to a pulse of unit *area*, ``u_0 = 1/dt`` (``dt = 1`` for ``dt=True``): ``h_t / dt``.
        ``control.impulse_response(sys, T).outputs`` equals it channel by channel (python-control
        returns it as ``(d_out, d_in, T)``, and its time axis is ``t = k dt``).

        This overrides python-control's ``StateSpace.impulse_response()`` method (which returns
        a ``TimeResponseData``); ``control.impulse_response(sys)`` gives that one.
        """
        from .._validation import check_fits_in_memory, check_positive_int

        if length is None:
            raise TypeError("LDS.impulse_response(length) returns the first `length` Markov "
                            "parameters and needs `length`; python-control's response object "
                            "is control.impulse_response(sys)")
        check_choice("convention", convention, IMPULSE_CONVENTIONS)
        if not self.is_discrete:
            raise ValueError("impulse_response needs a discrete system (dt = 0 here); "
                             "discretize it first, or use control.impulse_response(sys)")
        length = check_positive_int("length", length)
        check_fits_in_memory("length", length, 8.0 * length * self.n_outputs * self.n_inputs,
                             f"the (length, d_out={self.n_outputs}, d_in={self.n_inputs}) "
                             "float64 Markov parameters")
        out = np.empty((length, self.n_outputs, self.n_inputs))
        out[0] = self.D
        # plain ndarray views: a FrozenMatrix's products go through __array_ufunc__ (~2 us)
        A, C = np.asarray(self.A), np.asarray(self.C)
        AkB = self.B.copy()
        for t in range(1, length):
            out[t] = C @ AkB
            AkB = A @ AkB
        if convention == "control":
            out /= self.sample_time
        return out

    # ---------------------------------------------------- python-control
    @classmethod
    def from_statespace(cls, sys) -> LDS:
        """Build from a ``control.StateSpace``, keeping its signal and system names.

        The timebase follows python-control: ``sys.dt == 0`` is continuous time, ``True``
        discrete with an unspecified step, a float ``> 0`` discrete with that step.
        python-control's ``dt=None`` ("timebase not specified", compatible with both) is
        ambiguous here and raises ``ValueError``: set it first, e.g.
        ``control.ss(sys, dt=0)``. An :class:`LDS` is returned as it is.
        """
        if isinstance(sys, LDS):
            return sys
        try:
            A, B, C, D = sys.A, sys.B, sys.C, sys.D
        except AttributeError as exc:
            hint = ("; as_lds(sys) realises one" if isinstance(sys, control.TransferFunction)
                    else "")
            raise TypeError(f"sys must be a control.StateSpace, got {type(sys).__name__}"
                            f"{hint}") from exc
        dt = getattr(sys, "dt", None)
        if dt is None:
            raise ValueError(
                "sys has python-control's timebase dt=None ('not specified': continuous or "
                "discrete), which is ambiguous; set it first, e.g. control.ss(sys, dt=0) for "
                "continuous time or control.ss(sys, dt=True) / dt=<sample time> for discrete")
        names = {}
        if isinstance(sys, control.StateSpace):
            names = {"inputs": list(sys.input_labels), "outputs": list(sys.output_labels),
                     "states": list(sys.state_labels), "name": sys.name}
        return cls(A, B, C, D, dt, **names)

    def to_statespace(self) -> control.StateSpace:
        """A plain ``control.StateSpace`` (python-control's own class) with the same matrices,
        timebase and names. An :class:`LDS` already is a ``StateSpace``; this is for code
        that needs exactly that class (or a mutable copy)."""
        return control.StateSpace(np.array(self.A), np.array(self.B), np.array(self.C),
                                  np.array(self.D), self.dt, **self.names())

    # --------------------------------------------------------------- misc
    def with_matrices(self, **changes) -> LDS:
        """A copy with some of A, B, C, D, dt (or the names) replaced; names whose signal
        count no longer matches are reset to python-control's defaults.

        The matrices are read-only (an LDS is immutable): this is how a system is changed.
        When B or C changes the number of inputs or outputs and ``D`` is not given, a zero
        ``D`` takes the new shape; a nonzero ``D`` must then be given with it."""
        unknown = sorted(set(changes) - set(_WITH_KEYS))
        if unknown:
            raise TypeError(f"with_matrices got unknown keywords {unknown}; it takes "
                            f"{', '.join(_WITH_KEYS)}")
        kw = {k: getattr(self, k) for k in ("A", "B", "C", "D", "dt")}
        kw.update({k: v for k, v in changes.items() if k in kw})
        if "D" not in changes and np.ndim(kw["B"]) == 2 and np.ndim(kw["C"]) == 2:
            shape = (np.shape(kw["C"])[0], np.shape(kw["B"])[1])
            if shape != self.D.shape:
                if np.any(self.D):
                    raise ValueError(
                        f"with_matrices: the new B and C give D the shape {shape}, but the "
                        f"system's D {self.D.shape} is nonzero and cannot be carried over; "
                        f"pass D of shape {shape} as well")
                kw["D"] = None  # the constructor's zeros of the new shape
        names = self.names()
        sizes = {"inputs": ("B", 1), "outputs": ("C", 0), "states": ("A", 0)}
        for key, (mat, axis) in sizes.items():
            if key not in changes and np.shape(kw[mat])[axis:axis + 1] != (len(names[key]),):
                names.pop(key)
        names.update({k: v for k, v in changes.items() if k not in kw})
        if "name" not in changes:
            names.pop("name")
        return LDS(**kw, **names)

    def equals(self, other) -> bool:
        """Same timebase and exactly equal ``A, B, C, D`` (signal names are not compared).

        ``==`` is python-control's identity, which ``ct.interconnect`` relies on."""
        if not isinstance(other, control.StateSpace):
            return False
        return ((self.dt is True) == (other.dt is True) and self.dt == other.dt
                and all(np.shape(getattr(self, k)) == np.shape(getattr(other, k))
                        and np.array_equal(getattr(self, k), getattr(other, k))
                        for k in ("A", "B", "C", "D")))

    def __repr__(self) -> str:
        if not self.is_discrete:
            kind = "continuous"
        elif self.dt is True:
            kind = "discrete, dt=True (unspecified)"
        else:
            kind = f"discrete, dt={self.dt:g}"
        return (f"LDS(n={self.n_states}, d_in={self.n_inputs}, d_out={self.n_outputs}, "
                f"{kind})")


def _rebuild(A, B, C, D, dt, names):
    """Unpickling (and copying) of an :class:`LDS`."""
    return LDS(A, B, C, D, dt, **names)


def is_system(value) -> bool:
    """Whether ``value`` is a system object (an :class:`LDS` or a python-control ``LTI``)
    rather than a matrix: functions that take either use it to decide which they got."""
    return isinstance(value, LDS | control.LTI)


def from_transfer_function(system, name: str = "system") -> LDS:
    """An :class:`LDS` of a ``control.TransferFunction``: python-control's own state-space
    realisation (``control.ss``, :func:`~._timebase.realise_transfer_function`) with the
    transfer function's input, output and system names (without python-control's
    ``$converted`` suffix: the same system)."""
    realised = realise_transfer_function(system, name)
    return LDS(realised.A, realised.B, realised.C, realised.D, realised.dt,
               inputs=list(system.input_labels), outputs=list(system.output_labels),
               name=system.name)


def as_lds(system, name: str = "system") -> LDS:
    """The one conversion of a system argument: an :class:`LDS` is returned as is, a
    ``control.StateSpace`` converted by :meth:`LDS.from_statespace` and a
    ``control.TransferFunction`` by :func:`from_transfer_function` (python-control's
    ``control.ss`` realisation), names kept; anything else raises ``TypeError`` naming
    ``name``.

    Complex matrices are refused on every route with the same ``TypeError`` as
    :class:`LDS` (``A must be real, got complex entries``). python-control's own
    constructors (``control.ss``, ``control.tf``) cast complex arrays to real with a
    ``ComplexWarning`` (or refuse complex coefficients) before any toolkit function sees
    the system: that warning is the only sign of it.
    """
    if isinstance(system, LDS):
        return system
    if isinstance(system, control.StateSpace):
        return LDS.from_statespace(system)
    if isinstance(system, control.TransferFunction):
        return from_transfer_function(system, name)
    if isinstance(system, control.LTI):
        raise TypeError(f"{name} must be {SYSTEM_TYPES}, got {type(system).__name__}, "
                        "which has no state-space realisation")
    hint = ""
    if callable(getattr(system, "to_lds", None)):  # an S4Recursion or a layer
        hint = f"; convert it with {name}.to_lds() first"
    raise TypeError(f"{name} must be {SYSTEM_TYPES}, got {type(system).__name__}{hint}")


def like_input(system, result: LDS):
    """The return-type rule of every function that transforms a system: ``result`` as a plain
    ``control.StateSpace`` when ``system`` came in as a ``control.StateSpace`` that is not an
    :class:`LDS` (python-control's type given back), as a ``control.TransferFunction`` (with
    the result's names) when it came in as one, else the :class:`LDS` itself."""
    if isinstance(system, control.TransferFunction):
        names = result.names()
        return control.tf(result.to_statespace(), inputs=names["inputs"],
                          outputs=names["outputs"], name=names["name"])
    if isinstance(system, control.StateSpace) and not isinstance(system, LDS):
        return result.to_statespace()
    return result


def require_continuous(system, name: str = "system") -> LDS:
    """``system`` as a continuous-time :class:`LDS` (see :func:`as_lds`), else raise."""
    system = as_lds(system, name)
    if system.is_discrete:
        raise ValueError(f"{name} must be continuous-time (dt None or 0), got dt={system.dt}")
    return system


def require_discrete(system, name: str = "system", hint: str = "") -> LDS:
    """``system`` as a discrete-time :class:`LDS` (see :func:`as_lds`), else raise."""
    system = as_lds(system, name)
    if not system.is_discrete:
        raise ValueError(f"{name} must be discrete-time (dt > 0 or True), got a continuous-time "
                         f"system{hint}")
    return system
