r"""Simulation of discrete-time linear dynamical systems (numba cores, batched).

Four output conventions, chosen by the explicit ``output`` argument. Let ``s_t`` denote
the state of the standard recursion::

    s_0 = x0,      s_{t+1} = A s_t + B u_t + w_t                     (all conventions)

``output="standard"`` (python-control, scipy ``dlsim``)::

    y_t = C s_t + D u_t + v_t                  states[t] = s_t

``output="lengen"`` — the length-generalization paper as its text and theorems read it:
"a matrix coefficient of the form C A^ℓ B capturing u_{t−ℓ}'s contribution to y_{t+1}"
(Sec. 2, below eq. 1), so y_{t+1} = Σ_{ℓ≥0} C A^ℓ B u_{t−ℓ} + D u_t. The output at index t
is a function of the input history u_{<t}; D enters where eq. 1 prints it (D u_t in
y_{t+1}), so that y_{t+1} stays a function of that history::

    y_t = C s_t + D u_{t-1} + v_t   (u_{-1} = 0)     states[t] = s_t

With D = 0 it equals ``"standard"``. Algorithms 1 and 2 are built for it: their first tap
multiplies u_{t−1} when predicting y_t, whose coefficient is C B (+ D).

``output="eq1-literal"`` — eq. 1 as printed, x_{t+1} = A x_t + B u_t + w_t,
y_{t+1} = C x_t + D u_t + ζ_t. Then C A^ℓ B multiplies u_{t−1−ℓ} in y_{t+1} (one step more
delay than the paper's own sentence and than Algorithms 1–2 assume); kept to measure that
reading (docs/index.md, errata)::

    y_0 = v_0 (eq. 1 does not define y_0; the noiseless value is 0),
    y_t = C s_{t-1} + D u_{t-1} + v_t   (t >= 1)      states[t] = s_t

``output="s4"`` — the S4 recursion x_k = Ā x_{k-1} + B̄ u_k, y_k = C x_k + D u_k, with
``x0`` playing x_{-1}; the input enters the state in the same step::

    y_t = C s_{t+1} + D u_t + v_t              states[t] = s_{t+1} (= x_t of S4)

Here ``v_t = obs_noise[t]`` is added to output index t in every convention (for
``"eq1-literal"``, v_t = ζ_{t-1}). ``process_noise[t]`` is w_t.

Two numerically equivalent paths (``method``; the one taken is the result's ``path``):

``"dense"``
    The recursion with the full A: O(n^2) per step (the whole batch multiplied by A in one
    matrix product per step). Runs without process noise go by blocks of L steps in
    matrix-matrix products: outputs only at O(n^2 / L + n (d_in + d_out) + L d_in d_out) per
    step; with the states (nb T >= 512 steps, T >= 2n) the steps inside all blocks advance
    together, one (blocks x n) @ (n x n) product per step of a block (n^2 per step, BLAS-3).
``"modal"``
    The recursion in the eigenbasis A = V Λ V^{-1}: z = V^{-1} s evolves as
    z_{t+1} = Λ z_t + V^{-1}B u_t, and y = C V z + D u: O(n (d_in + d_out)) per step plus one
    O(n^3) eigen-decomposition (outputs-only runs again by blocks of matrix-matrix products).
    Real arithmetic for symmetric A (V orthogonal), complex otherwise, one mode per
    conjugate pair. Round-off is amplified by up to cond(V); a (numerically) defective A,
    cond(V) > ``MODAL_FORCED_MAX_COND`` (e.g. a Jordan block), is refused with ``ValueError``.
    Every modal run carries a *certificate* (:class:`ModalCertificate`, the result's
    ``certificate``): a first-order a-posteriori estimate of its relative error, from the
    residual A V - V Λ of the computed eigenbasis propagated through the modes with the
    largest modal states the run reached (derivation in ``lds_toolkit/systems/_modal.py``).
``"auto"`` (default)
    ``"dense"`` by blocks when they apply (no process noise, long enough: no decomposition and
    the fastest route measured, with or without the states). Otherwise ``"modal"`` when A is
    symmetric (orthogonal eigenbasis, backward stable like the dense recursion), or when
    cond(V) eps <= ``rtol`` and the certificate's estimate is <= ``rtol`` after the run;
    ``"dense"`` otherwise: a defective or nearly defective A, or a run whose estimate fails,
    is (re)done on the dense path, and its certificate is kept in the result.

Divergence: the simulation stops at the first step t where ``||s_{t+1}||_2 > max_state_norm``
(or a non-finite value appears) for some batch element and raises
:class:`SimulationDivergedError` naming that step and the batch index (the lowest one if
several elements diverge at the same step), rather than returning inf/NaN. Every path
(dense, modal, continuous) reports the same (step, batch index).
"""

from __future__ import annotations

import numpy as np

from .._random import RngLike, as_generator
from .._typing import ArrayLike
from .._validation import (
    as_float_array,
    check_bool,
    check_choice,
    check_fits_in_memory,
    check_real,
)
from . import _interop, _paths
from ._modal import ModalCertificate as ModalCertificate
from ._modal import ModalForm as ModalForm
from ._modal import modal_form as modal_form
from ._paths import MODAL_FORCED_MAX_COND as MODAL_FORCED_MAX_COND
from .lds import LDS, as_state_vector, require_discrete

OUTPUT_CONVENTIONS = ("standard", "lengen", "eq1-literal", "s4")
#: Names that are refused with an explanation instead of being guessed.
_REMOVED_CONVENTIONS = {
    "paper": 'output="paper" was removed: it meant eq. 1 of the length-generalization paper '
             'read literally (y_{t+1} = C x_t + D u_t), which is not the reading the paper\'s '
             'text, theorems and Algorithms 1-2 use. Use output="lengen" (y_{t+1} = sum_l '
             'C A^l B u_{t-l} + D u_t) or, to reproduce the old numbers, "eq1-literal"',
}
METHODS = ("auto", "dense", "modal")
#: Default tolerance of the modal path's certificate (relative error estimate).
DEFAULT_RTOL = 1e-10
#: Default bound on ||x||_2 beyond which a simulation is reported as diverged.
DEFAULT_MAX_STATE_NORM = 1e100


class SimulationDivergedError(FloatingPointError):
    """Raised when a simulated state exceeds the bound or becomes non-finite.

    Attributes
    ----------
    step : int
        Time index t of the input u_t whose update produced the offending state s_{t+1}.
    batch_index : tuple of int
        Index into the leading batch axes of the simulation: the element that diverged first
        (lowest index among ties).
    bound : float
        The bound on ||x||_2 that was exceeded.
    """

    def __init__(self, step: int, batch_index: tuple, bound: float, cause: str | None = None):
        self.step = int(step)
        self.batch_index = tuple(int(i) for i in batch_index)
        self.bound = float(bound)
        self.cause = cause
        why = cause or ("the system is unstable over this horizon — shorten it or raise "
                        "max_state_norm")
        super().__init__(
            f"simulation diverged: ||x|| exceeded {bound:g} (or became non-finite) at step "
            f"t={self.step} (state x_{self.step + 1}), batch index {self.batch_index}; {why}"
        )


def huge_input_cause(B: np.ndarray, u_t: np.ndarray, bound: float, t: int,
                     name: str = "u") -> str | None:
    """Why a divergence at step ``t`` is the input's doing: ``||B u_t||`` alone beyond
    ``bound`` (or not finite), so no state recursion, stable or not, stays below it;
    ``None`` when the input is moderate (the system then grew the state)."""
    with np.errstate(over="ignore", invalid="ignore"):
        v = B @ u_t
        top = float(np.max(np.abs(v), initial=0.0))
        pushed = top * float(np.linalg.norm(v / top)) if 0.0 < top < np.inf else top
    if np.isfinite(pushed) and pushed <= bound:
        return None
    big = float(np.max(np.abs(u_t)))
    return (f"the input itself is too large: max |{name}_{t}| = {big:.3g}, and ||B {name}_{t}|| "
            f"= {pushed:.3g} exceeds max_state_norm={bound:g} on its own (not a sign of an "
            f"unstable system); scale {name} down, or raise max_state_norm")


class SimulationResult:
    """Outputs and states of :func:`simulate`.

    Attributes
    ----------
    y : ndarray, shape (..., T, d_out)
        Outputs in the requested convention.
    x : ndarray, shape (..., T, n) or None
        States (see the module docstring for which state each index holds); ``None`` when
        ``return_states=False``.
    final_state : ndarray, shape (..., n)
        s_T, the state to continue a simulation from (pass it as ``x0``). Computed on first
        access when the simulation did not need it.
    path : str
        The path used, ``"dense"`` or ``"modal"`` (``method`` is the same value, kept as an
        alias).
    certificate : ModalCertificate or None
        The modal path's error estimate (module docstring); also present when ``"auto"``
        rejected the modal run and redid it densely; None when the modal path was not tried.
    t : ndarray, shape (T,) or None
        Time of each index: ``k · dt`` for a discrete system (``k`` for ``dt=True``, as
        python-control counts steps), the grid for :func:`simulate_continuous`.
    u : ndarray, shape (..., T, d_in) or None
        The inputs that were simulated (float64; not a copy when they already were).
    output : str
        The output convention the result was computed with.
    names : dict or None
        The simulated system's names (:meth:`LDS.names`: ``inputs``, ``outputs``,
        ``states``, ``name``); ``None`` when unknown, then ``input_labels`` etc. are
        python-control's defaults ``u[i]``, ``y[i]``, ``x[i]``.
    """

    __slots__ = ("y", "x", "_final", "method", "t", "u", "output", "certificate", "names")

    def __init__(self, y, x, final_state, method, *, t=None, u=None, output="standard",
                 certificate=None, names=None):
        self.y = y
        self.x = x
        self._final = final_state
        self.method = method
        self.t = t
        self.u = u
        self.output = output
        self.certificate = certificate
        self.names = names

    @property
    def path(self) -> str:
        """The simulation path used, ``"dense"`` or ``"modal"``."""
        return self.method

    @property
    def final_state(self) -> np.ndarray:
        if callable(self._final):
            self._final = self._final()
        return self._final

    @property
    def input_labels(self) -> list[str]:
        """Names of the input channels (the system's, else ``u[i]``)."""
        return _interop.labels(self.names, "inputs", "u", self.u.shape[-1] if self.u is not None
                               else 0)

    @property
    def output_labels(self) -> list[str]:
        """Names of the output channels (the system's, else ``y[i]``)."""
        return _interop.labels(self.names, "outputs", "y", self.y.shape[-1])

    @property
    def state_labels(self) -> list[str]:
        """Names of the states (the system's, else ``x[i]``)."""
        n = self.x.shape[-1] if self.x is not None else self.final_state.shape[-1]
        return _interop.labels(self.names, "states", "x", n)

    def __iter__(self):  # allows ``x, y = simulate(...)``
        yield self.x
        yield self.y

    def __repr__(self) -> str:
        xs = None if self.x is None else self.x.shape
        return f"SimulationResult(y: {self.y.shape}, x: {xs}, method={self.method!r})"

    def to_time_response(self, *, squeeze: bool | None = None, return_x: bool = False):
        """The result as python-control's ``TimeResponseData``, with the signal names.

        python-control stores signals channel-first: ``resp.t`` has shape (T,), ``resp.y``
        (d_out, T), ``resp.x`` (n, T), ``resp.u`` (d_in, T), i.e. the transposes of ``y``,
        ``x`` and ``u`` here. A result with one batch axis, ``y`` of shape (N, T, d_out),
        becomes a multi-trace response: ``resp.y`` of shape (d_out, N, T). ``resp.outputs``
        etc. apply python-control's squeeze rules (a single-input single-output system drops
        the channel axis). The labels are the system's signal names (python-control's
        defaults when the system had none), so ``resp.plot()`` and ``resp.to_pandas()`` work.

        The arrays are copied as they are: for ``output="standard"`` they mean what
        ``control.forced_response`` means (``y_t = C x_t + D u_t``, ``x[t] = x_t``); other
        conventions are named in the response's title.

        Parameters
        ----------
        squeeze : bool, optional
            python-control's ``squeeze`` option of ``TimeResponseData``.
        return_x : bool
            Whether ``t, y, x = resp`` (rather than ``t, y = resp``) unpacks the response, as
            in ``control.forced_response(..., return_x=True)``.

        Returns
        -------
        control.TimeResponseData

        Raises
        ------
        ValueError
            If the result has more than one batch axis (reshape the inputs first), or was
            built without its time grid and inputs.
        """
        return _interop.time_response(self, squeeze=squeeze, return_x=return_x)

    def to_pandas(self):
        """The result as a ``pandas.DataFrame`` (needs pandas): columns ``time`` (and
        ``trace`` for a batch), then inputs, outputs and states named after the system's
        signals, one row per time step, as python-control's ``TimeResponseData.to_pandas``.
        """
        return _interop.to_pandas(self)


def _batched(name, arr, core_ndim, last, batch_shape):
    """Broadcast ``arr`` (..., *core) to batch_shape + core and flatten the batch axes."""
    core = arr.shape[arr.ndim - core_ndim:]
    if last is not None and core[-1] != last[1]:
        raise ValueError(f"{name} must have last axis of size {last[1]} ({last[0]}), "
                         f"got shape {arr.shape}")
    full = np.broadcast_to(arr, tuple(batch_shape) + core)
    return np.ascontiguousarray(full.reshape((-1,) + core))


def _noise_spec(name, value, T, dim):
    """``(sigma, None)`` for noise given as a standard deviation, ``(None, array)`` for an
    explicit array of shape (..., T, dim), ``(None, None)`` for no noise."""
    if value is None:
        return None, None
    if np.isscalar(value):
        return check_real(name, value, low=0.0), None
    arr = as_float_array(name, value)
    if arr.ndim < 2 or arr.shape[-2:] != (T, dim):
        raise ValueError(f"{name} must have shape (..., {T}, {dim}) or be a float standard "
                         f"deviation, got shape {arr.shape}")
    return None, arr


def simulate(system: LDS, u: ArrayLike, x0: ArrayLike | None = None,
             process_noise: ArrayLike | None = None, obs_noise: ArrayLike | None = None, *,
             output: str = "standard", method: str = "auto", return_states: bool = True,
             max_state_norm: float = DEFAULT_MAX_STATE_NORM, rng: RngLike = None,
             rtol: float = DEFAULT_RTOL) -> SimulationResult:
    """Simulate a discrete-time LDS, batched over leading axes.

    Parameters
    ----------
    system : LDS or control.StateSpace
        Discrete-time system (``dt`` a sample time or ``True``); a ``StateSpace`` is
        converted by :meth:`LDS.from_statespace`.
    u : array_like, shape (..., T, d_in), or (T,) for a single-input system
        Inputs; leading axes are batch axes. A 1-D ``u`` of a single-input system is read
        as (T, 1), as python-control reads it (the outputs keep their channel axis:
        ``y`` is (T, d_out)).
    x0 : array_like, shape (..., n), optional
        Initial state s_0 (zeros by default), broadcast against the batch axes of ``u``.
    process_noise : array_like (..., T, n) or float, optional
        w_t added to the state update; a float σ draws w_t ~ N(0, σ² I) from ``rng``.
    obs_noise : array_like (..., T, d_out) or float, optional
        v_t added to output index t; a float σ draws from ``rng``.
    output : {"standard", "lengen", "eq1-literal", "s4"}
        Output index convention (module docstring).
    method : {"auto", "dense", "modal"}
        Simulation path (module docstring).
    return_states : bool
        Also return the states (costs O(T n) memory per batch element).
    max_state_norm : float
        Bound on ||x||_2 beyond which :class:`SimulationDivergedError` is raised.
    rng : numpy Generator, int or None
        Source of the noise when it is given as a standard deviation.
    rtol : float
        Tolerance of the modal path's certificate: with ``method="auto"`` a non-symmetric A
        stays on the modal path only if its estimated relative error is <= rtol.

    Returns
    -------
    SimulationResult
        ``y`` of shape (..., T, d_out), ``x`` of shape (..., T, n) (or None), ``final_state``,
        ``path`` ("modal" or "dense") and ``certificate``.
        Unpacks as ``x, y = simulate(...)``; ``.to_time_response()`` gives python-control's
        ``TimeResponseData`` (channels first, labelled with the system's signal names),
        ``.to_pandas()`` a ``pandas.DataFrame``.

    Examples
    --------
    >>> import numpy as np
    >>> from lds_toolkit.systems import LDS, simulate
    >>> sys = LDS([[0.5]], [[1.0]], [[1.0]], dt=1.0)
    >>> simulate(sys, np.ones((3, 1))).y[:, 0]
    array([0. , 1. , 1.5])
    >>> simulate(sys, np.ones((3, 1)), output="s4").y[:, 0]
    array([1.  , 1.5 , 1.75])
    >>> sys_d = LDS([[0.5]], [[1.0]], [[1.0]], [[1.0]], dt=1.0)  # D = I: D u_{t-1} in y_t
    >>> simulate(sys_d, np.ones((3, 1)), output="lengen").y[:, 0]
    array([0. , 2. , 2.5])
    """
    system = require_discrete(system, hint="; for continuous systems use simulate_continuous "
                                           "or discretize first")
    if output in _REMOVED_CONVENTIONS:
        raise ValueError(_REMOVED_CONVENTIONS[output])
    check_choice("output", output, OUTPUT_CONVENTIONS)
    check_choice("method", method, METHODS)
    bound = check_real("max_state_norm", max_state_norm, low=0.0, low_inclusive=False)
    rtol = check_real("rtol", rtol, low=0.0, low_inclusive=False)
    n, d_in, d_out = system.n_states, system.n_inputs, system.n_outputs
    return_states = check_bool("return_states", return_states)

    u = as_float_array("u", u)
    if u.ndim == 1 and d_in == 1:  # python-control's convention for single-input systems
        u = u[:, None]
    if u.ndim < 2:
        raise ValueError(f"u must have shape (..., T, {d_in})" + (
            " (a 1-D u is accepted for single-input systems only)" if u.ndim == 1 else "")
            + f", got {u.shape}")
    if u.shape[-1] != d_in:
        raise ValueError(f"u must have last axis of size d_in={d_in}, got shape {u.shape}")
    T = u.shape[-2]
    if T < 1:
        raise ValueError(f"u must contain at least one time step, got shape {u.shape}")
    if x0 is not None:
        x0 = as_state_vector("x0", x0, n)
    w_sigma, w = _noise_spec("process_noise", process_noise, T, n)
    v_sigma, v = _noise_spec("obs_noise", obs_noise, T, d_out)
    # the batch shape comes from every array argument; noise given as σ is drawn only then,
    # so that each batch element gets its own draw
    named = [("u", u.shape[:-2])]
    if x0 is not None:
        named.append(("x0", x0.shape[:-1]))
    for name, arr in (("process_noise", w), ("obs_noise", v)):
        if arr is not None:
            named.append((name, arr.shape[:-2]))
    try:
        batch_shape = np.broadcast_shapes(*(shape for _, shape in named))
    except ValueError:
        desc = ", ".join(f"{name} {shape}" for name, shape in named)
        raise ValueError(f"batch (leading) axes do not broadcast: {desc}") from None
    _check_result_fits(u.shape, batch_shape, T, n, d_out,
                       return_states or w_sigma is not None)
    if w_sigma is not None or v_sigma is not None:
        gen = as_generator(rng)
        if w_sigma is not None:
            w = w_sigma * gen.standard_normal(batch_shape + (T, n))
            if w_sigma == 0:  # drawn (the draws of obs_noise stay the same), but zero: the
                w = None      # noiseless run, on its route (e.g. blocked), to the last bit
        if v_sigma is not None:
            v = v_sigma * gen.standard_normal(batch_shape + (T, d_out))

    ub = _batched("u", u, 2, ("d_in", d_in), batch_shape)
    x0b = (np.zeros((ub.shape[0], n)) if x0 is None
           else _batched("x0", x0, 1, ("n", n), batch_shape))
    wb = None if w is None else _batched("process_noise", w, 2, ("n", n), batch_shape)

    use_next = output == "s4"
    # "lengen" adds D u_{t-1} after the recursion; the cores then emit C s_t alone
    D_core = np.zeros_like(system.D) if output == "lengen" else system.D
    try:
        y, states, final, path, cert = _paths.run(system, D_core, ub, x0b, wb, use_next,
                                                  return_states, bound, method, rtol)
    except _paths.Diverged as exc:
        cause = huge_input_cause(system.B, ub[exc.b, exc.t], bound, exc.t)
        _raise_diverged(exc.b, exc.t, batch_shape, bound, cause)

    if output == "eq1-literal":
        y = np.concatenate([np.zeros_like(y[:, :1]), y[:, :-1]], axis=1)
    elif output == "lengen" and np.any(system.D):
        y[:, 1:] += ub[:, :-1] @ system.D.T
    y = y.reshape(batch_shape + (T, d_out))
    if v is not None:
        y = y + v
    final = final.reshape(batch_shape + (n,))
    x = states.reshape(batch_shape + (T, n)) if return_states else None
    return SimulationResult(y=y, x=x, final_state=final, method=path,
                            t=np.arange(T) * system.sample_time, u=u, output=output,
                            certificate=cert, names=system.names())


def _check_result_fits(u_shape, batch_shape, T: int, n: int, d_out: int, states: bool) -> None:
    """Refuse, before allocating, a simulation whose (batch, T, d_out) outputs, or (batch, T,
    n) states when they are kept or drawn as noise, cannot fit in memory (float64)."""
    n_batch = int(np.prod(batch_shape, dtype=float))
    width, what = (n, f"(batch, T, n) = {batch_shape + (T, n)} states") if states and n > d_out \
        else (d_out, f"(batch, T, d_out) = {batch_shape + (T, d_out)} outputs")
    check_fits_in_memory("u", f"array of shape {u_shape}", 8.0 * n_batch * T * width,
                         f"the float64 {what}")


def _raise_diverged(bad_b, bad_t, batch_shape, bound, cause=None):
    idx = np.unravel_index(bad_b, batch_shape) if batch_shape else ()
    raise SimulationDivergedError(bad_t, idx, bound, cause)
