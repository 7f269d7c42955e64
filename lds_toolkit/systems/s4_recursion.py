r"""S4's recursion as its own type, so that it cannot be mistaken for a standard system.

The S4 family (S4++ paper eqs. 3–6) runs, per channel::

    x_k = Ā x_{k-1} + B̄ u_k,     y_k = C x_k + D u_k,     x_{-1} given (zero by default)

The input enters the state in the *same* step. Read with the standard recursion of
python-control and :func:`~lds_toolkit.systems.simulate` (``x_{k+1} = A x_k + B u_k``,
``y_k = C x_k + D u_k``), the same four matrices are a different system: its output lags
and misses the ``C B̄ u_k`` term (one configuration measured 23.5 % error). So a layer's
``to_lds()`` gives the standard realisation of the recursion (below), which python-control
simulates to the layer's output, and the S4 matrices come as an :class:`S4Recursion`: not an
:class:`~lds_toolkit.systems.LDS`, not a ``control.StateSpace``, refused by both, with the
fields named ``A_bar``, ``B_bar``.

The standard realisation, with the state s_k = x_{k-1}::

    s_{k+1} = Ā s_k + B̄ u_k,     y_k = C Ā s_k + (D + C B̄) u_k

(:meth:`S4Recursion.to_lds`; :meth:`S4Recursion.from_lds` inverts it when Ā is invertible:
C = C_std Ā^{-1}, D = D_std - C B̄).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg

from .._typing import ArrayLike
from .._validation import as_matrix, as_square
from .lds import LDS, as_lds, as_state_vector

_NAME_KEYS = frozenset({"inputs", "outputs", "states", "name"})


@dataclass(frozen=True, eq=False, repr=False)
class S4Recursion:
    """The S4 recursion ``x_k = Ā x_{k-1} + B̄ u_k``, ``y_k = C x_k + D u_k`` (module
    docstring).

    Parameters
    ----------
    A_bar : array_like, shape (n, n)
        Ā.
    B_bar : array_like, shape (n, d_in)
        B̄.
    C : array_like, shape (d_out, n)
        C.
    D : array_like, shape (d_out, d_in), optional
        D (zeros when omitted).
    dt : float or True
        Sample time of the recursion (1: one sample, as the layers export it).
    names : dict, optional
        Signal names as the :class:`~lds_toolkit.systems.LDS` keywords (``inputs``,
        ``outputs``, ``states``, ``name``); :meth:`to_lds` and :meth:`from_lds` carry them (the
        standard realisation's state s_k = x_{k-1} keeps the state names).

    Notes
    -----
    The matrices (and names) are validated and frozen as an
    :class:`~lds_toolkit.systems.LDS`'s are.
    """

    A_bar: np.ndarray
    B_bar: np.ndarray
    C: np.ndarray
    D: np.ndarray | None = None
    dt: float | bool = 1.0
    names: dict | None = None

    def __post_init__(self):
        # the same validation (shapes, finiteness, a discrete timebase, names) as an LDS,
        # with the fields' own names in the messages
        names = {}
        if self.names is not None:
            if not isinstance(self.names, dict) or not set(self.names) <= _NAME_KEYS:
                raise TypeError(f"names must be a dict with keys among {sorted(_NAME_KEYS)} "
                                f"(the LDS name keywords), got {self.names!r}")
            names = {k: v for k, v in self.names.items() if v is not None}
        A = as_square("A_bar", self.A_bar)
        n = A.shape[0]
        B = as_matrix("B_bar", self.B_bar)
        if B.shape[0] != n:
            raise ValueError(f"B_bar must have shape ({n}, d_in) to match A_bar {A.shape}, "
                             f"got {B.shape}")
        C = as_matrix("C", self.C)
        if C.shape[1] != n:
            raise ValueError(f"C must have shape (d_out, {n}) to match A_bar {A.shape}, got "
                             f"{C.shape}")
        D = None if self.D is None else as_matrix("D", self.D, shape=(C.shape[0], B.shape[1]))
        holder = LDS(A, B, C, D, dt=self.dt, **names)
        if not holder.is_discrete:
            raise ValueError(f"dt must be a sample time > 0 or True (the recursion is discrete), "
                             f"got {self.dt!r}")
        for field, key in (("A_bar", "A"), ("B_bar", "B"), ("C", "C"), ("D", "D"),
                           ("dt", "dt")):
            object.__setattr__(self, field, getattr(holder, key))
        if self.names is not None:
            object.__setattr__(self, "names", {k: holder.names()[k] for k in names})

    @property
    def n_states(self) -> int:
        return self.A_bar.shape[0]

    @property
    def n_inputs(self) -> int:
        return self.B_bar.shape[1]

    @property
    def n_outputs(self) -> int:
        return self.C.shape[0]

    def to_lds(self, **names) -> LDS:
        """The standard realisation ``(Ā, B̄, C Ā, D + C B̄)`` (state s_k = x_{k-1}): python-
        control and :func:`~lds_toolkit.systems.simulate` run it to this recursion's outputs.
        Its names are this recursion's :attr:`names`, replaced by ``names`` (the :class:`LDS`
        name keywords) where given."""
        return LDS(self.A_bar, self.B_bar, self.C @ self.A_bar, self.D + self.C @ self.B_bar,
                   dt=self.dt, **{**(self.names or {}), **names})

    @classmethod
    def from_lds(cls, system) -> S4Recursion:
        """The recursion whose outputs equal the standard simulation of a discrete ``system``
        (an LDS or ``control.StateSpace``): ``C = C_std A^{-1}``, ``D = D_std - C B``; the
        system's names are kept.

        Raises ``ValueError`` when ``A`` is singular (an eigenvalue 0: the S4 output map is
        then not determined by the standard one) or the system is continuous-time.
        """
        system = as_lds(system)
        if not system.is_discrete:
            raise ValueError("system must be discrete-time to be read as an S4 recursion; "
                             "a continuous system is discretised by the layer instead")
        if not np.linalg.cond(system.A) < 1.0 / np.finfo(float).eps:
            raise ValueError("system has a (numerically) singular A, an eigenvalue 0: the S4 "
                             "recursion's C = C_std A^{-1} is not determined by the standard "
                             "realisation; pass the S4 matrices as an S4Recursion instead")
        C = scipy.linalg.solve(system.A.T, system.C.T).T
        return cls(system.A, system.B, C, system.D - C @ system.B, dt=system.dt,
                   names=system.names())

    def simulate(self, u: ArrayLike, x_prev: ArrayLike | None = None, **options):
        """Run the recursion: ``simulate(LDS(Ā, B̄, C, D), u, x_prev, output="s4")`` (see
        :func:`~lds_toolkit.systems.simulate` for ``u``, the batch axes and ``options``);
        ``x_prev`` is x_{-1} and ``result.x[k]`` is x_k."""
        from .simulate import simulate

        if x_prev is not None:
            x_prev = as_state_vector("x_prev", x_prev, self.n_states)
        held = LDS(self.A_bar, self.B_bar, self.C, self.D, dt=self.dt, **(self.names or {}))
        return simulate(held, u, x_prev, output="s4", **options)

    def __repr__(self) -> str:
        dt = "True (unspecified)" if self.dt is True else f"{self.dt:g}"
        return (f"S4Recursion(n={self.n_states}, d_in={self.n_inputs}, d_out={self.n_outputs}, "
                f"dt={dt}; x_k = A_bar x_(k-1) + B_bar u_k)")
