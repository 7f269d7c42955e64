"""The :class:`LDS` type: a validated linear state-space model.

Continuous time (``dt is None``; ``dt = 0`` or ``False`` as in python-control is stored as None)::

    dx/dt = A x + B u,        y = C x + D u

Discrete time with sample time ``dt`` (the state recursion every function in the toolkit
uses; the output index convention is chosen where outputs are produced, see
:func:`lds_toolkit.systems.simulate`)::

    x_{t+1} = A x_t + B u_t,  y_t = C x_t + D u_t

``dt = True`` is python-control's "discrete time, sample time unspecified"; it is kept as
``True`` (not converted to a number) so that it survives the round trip to
``control.StateSpace``.

Every function of the toolkit that takes an :class:`LDS` also takes a ``control.StateSpace``;
:func:`as_lds` is the one place that converts (through :meth:`LDS.from_statespace`).
"""

from __future__ import annotations

import sys as _sys
from dataclasses import dataclass
from numbers import Real

import numpy as np

from .._validation import as_float_array, as_matrix, as_square, check_real
from ._discretization import discretize_matrices, sample_time


@dataclass(frozen=True, eq=False)
class LDS:
    """A linear dynamical system ``(A, B, C, D)`` in continuous or discrete time.

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
    dt : float, True or None, optional
        Timebase, as in python-control except for ``None``:

        * ``None`` (default), ``0`` or ``False``: continuous time (stored as ``None``);
        * a float ``> 0``: discrete time with that sample time;
        * ``True``: discrete time with an unspecified sample time (stored as ``True``;
          time vectors then count steps, as python-control does).

        python-control's own ``dt=None`` ("timebase not specified") has no counterpart here:
        :meth:`from_statespace` refuses it rather than guess.

    Raises
    ------
    ValueError
        If a matrix is not 2-D, shapes do not match, entries are not finite, or ``dt < 0``.
    TypeError
        If ``dt`` is not a number, a bool or None.

    Examples
    --------
    >>> import numpy as np
    >>> sys = LDS(A=[[0.9]], B=[[1.0]], C=[[1.0]], dt=1.0)
    >>> sys.is_stable()
    True
    """

    A: np.ndarray
    B: np.ndarray
    C: np.ndarray
    D: np.ndarray | None = None
    dt: float | bool | None = None

    def __post_init__(self):
        A = as_square("A", self.A)
        n = A.shape[0]
        B = as_matrix("B", self.B)
        if B.shape[0] != n:
            raise ValueError(f"B must have shape ({n}, d_in) to match A {A.shape}, got {B.shape}")
        C = as_matrix("C", self.C)
        if C.shape[1] != n:
            raise ValueError(f"C must have shape (d_out, {n}) to match A {A.shape}, got {C.shape}")
        if self.D is None:
            D = np.zeros((C.shape[0], B.shape[1]))
        else:
            D = as_matrix("D", self.D, shape=(C.shape[0], B.shape[1]))
        dt = timebase(self.dt)
        for name, arr in (("A", A), ("B", B), ("C", C), ("D", D)):
            # own copy: validation returns the caller's array when it is already float64,
            # and freezing that would make the caller's array read-only (and sharing it
            # would let later edits change the system)
            arr = np.array(arr, dtype=np.float64, copy=True)
            arr.setflags(write=False)
            object.__setattr__(self, name, arr)
        object.__setattr__(self, "dt", dt)

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
        """``dt`` is set (a sample time or ``True``)."""
        return self.dt is not None

    @property
    def sample_time(self) -> float:
        """The sample time of a discrete system: ``dt``, or 1.0 (one step) for ``dt=True``.

        Raises ``ValueError`` for a continuous system.
        """
        if self.dt is None:
            raise ValueError("a continuous-time system (dt is None) has no sample time")
        return 1.0 if self.dt is True else float(self.dt)

    @property
    def is_continuous(self) -> bool:
        """``dt`` is None."""
        return self.dt is None

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
    def discretize(self, dt: float, method: str = "zoh") -> LDS:
        """Discretise a continuous system; see :func:`lds_toolkit.systems.discretize`."""
        if not self.is_continuous:
            raise ValueError(f"system must be continuous-time (dt None or 0), got dt={self.dt}")
        Ad, Bd, Cd, Dd = discretize_matrices(self.A, self.B, self.C, self.D, dt, method)
        return LDS(Ad, Bd, Cd, Dd, dt=sample_time(dt))

    def impulse_response(self, length: int) -> np.ndarray:
        """Markov parameters of a discrete system, shape (length, d_out, d_in).

        Entry ``t`` is ``D`` for ``t = 0`` and ``C A^{t-1} B`` for ``t >= 1`` (standard
        convention ``y_t = C x_t + D u_t``, ``x_0 = 0``).
        """
        from .._validation import check_positive_int

        if not self.is_discrete:
            raise ValueError("impulse_response needs a discrete system (dt is None)")
        length = check_positive_int("length", length)
        out = np.empty((length, self.n_outputs, self.n_inputs))
        out[0] = self.D
        AkB = self.B.copy()
        for t in range(1, length):
            out[t] = self.C @ AkB
            AkB = self.A @ AkB
        return out

    # ---------------------------------------------------- python-control
    @classmethod
    def from_statespace(cls, sys) -> LDS:
        """Build from a ``control.StateSpace``.

        The timebase follows python-control: ``sys.dt == 0`` is continuous time, ``True``
        discrete with an unspecified step, a float ``> 0`` discrete with that step.
        python-control's ``dt=None`` ("timebase not specified", compatible with both) is
        ambiguous here and raises ``ValueError``: set it first, e.g.
        ``control.ss(sys, dt=0)``.
        """
        try:
            A, B, C, D = sys.A, sys.B, sys.C, sys.D
        except AttributeError as exc:
            raise TypeError(
                f"sys must be a control.StateSpace, got {type(sys).__name__}"
            ) from exc
        dt = getattr(sys, "dt", None)
        if dt is None:
            raise ValueError(
                "sys has python-control's timebase dt=None ('not specified': continuous or "
                "discrete), which is ambiguous; set it first, e.g. control.ss(sys, dt=0) for "
                "continuous time or control.ss(sys, dt=True) / dt=<sample time> for discrete")
        return cls(A=A, B=B, C=C, D=D, dt=dt)

    def to_statespace(self):
        """Convert to ``control.StateSpace`` (continuous: dt = 0; ``dt=True`` is kept)."""
        import control

        return control.ss(np.array(self.A), np.array(self.B), np.array(self.C),
                          np.array(self.D), 0 if self.dt is None else self.dt)

    # --------------------------------------------------------------- misc
    def with_matrices(self, **changes) -> LDS:
        """A copy with some of A, B, C, D, dt replaced."""
        kw = {k: getattr(self, k) for k in ("A", "B", "C", "D", "dt")}
        kw.update(changes)
        return LDS(**kw)

    def __repr__(self) -> str:
        if self.dt is None:
            kind = "continuous"
        elif self.dt is True:
            kind = "discrete, dt=True (unspecified)"
        else:
            kind = f"discrete, dt={self.dt:g}"
        return (f"LDS(n={self.n_states}, d_in={self.n_inputs}, d_out={self.n_outputs}, "
                f"{kind})")

    def __eq__(self, other) -> bool:
        if not isinstance(other, LDS):
            return NotImplemented
        return ((self.dt is True) == (other.dt is True) and self.dt == other.dt
                and all(np.array_equal(getattr(self, k), getattr(other, k))
                        for k in ("A", "B", "C", "D")))

    __hash__ = None


def as_state_vector(name: str, x, n: int) -> np.ndarray:
    """Validate an initial state of shape (..., n)."""
    arr = as_float_array(name, x)
    if arr.ndim == 0 or arr.shape[-1] != n:
        raise ValueError(f"{name} must have shape (..., {n}), got {arr.shape}")
    return arr


def timebase(dt) -> float | bool | None:
    """Normalise a timebase: None, 0 or False -> None (continuous); True -> True (discrete,
    unspecified step); a float > 0 -> that float. See :class:`LDS`."""
    if dt is None:
        return None
    if isinstance(dt, bool | np.bool_):
        return True if dt else None
    want = ("dt must be None or 0 (continuous time), True (discrete, unspecified step) or a "
            "finite sample time > 0")
    if not isinstance(dt, Real | np.floating | np.integer):
        raise TypeError(f"{want}, got {type(dt).__name__} {dt!r}")
    value = float(dt)
    if not (np.isfinite(value) and value >= 0.0):
        raise ValueError(f"{want}, got {value:g}")
    return None if value == 0.0 else value


def is_system(value) -> bool:
    """Whether ``value`` is a system object (an :class:`LDS` or a python-control ``LTI``)
    rather than a matrix: functions that take either use it to decide which they got."""
    if isinstance(value, LDS):
        return True
    control = _sys.modules.get("control")
    return control is not None and isinstance(value, control.LTI)


def as_lds(system, name: str = "system") -> LDS:
    """The one conversion of a system argument: an :class:`LDS` is returned as is, a
    ``control.StateSpace`` converted by :meth:`LDS.from_statespace`; anything else raises
    ``TypeError`` naming ``name``.
    """
    if isinstance(system, LDS):
        return system
    control = _sys.modules.get("control")  # a StateSpace exists only if control is imported
    if control is not None:
        if isinstance(system, control.StateSpace):
            return LDS.from_statespace(system)
        if isinstance(system, control.LTI):
            raise TypeError(f"{name} must be an LDS or a control.StateSpace, got "
                            f"{type(system).__name__}; convert it with control.ss({name}) "
                            "first (the state-space realisation is then python-control's)")
    raise TypeError(f"{name} must be an LDS or a control.StateSpace, got "
                    f"{type(system).__name__}")


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
