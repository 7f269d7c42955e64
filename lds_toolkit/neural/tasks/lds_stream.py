"""Next-output prediction on streams of a linear dynamical system (the online learners' data).

A stream of length L + 1 is simulated with the length-generalization paper's convention
(``simulate(..., output="lengen")``: C A^l B is the coefficient of u_{t-l} in y_{t+1})::

    x_{t+1} = A x_t + B u_t + w_t,     y_{t+1} = C x_{t+1} + D u_t + v_{t+1},   x_0 = 0, y_0 = v_0

with i.i.d. Gaussian inputs u_t ~ N(0, input_scale² I). The model reads, at position t, the
pair (u_t, y_t) and must output y_{t+1}::

    inputs[t]  = concat(u_t, y_t)       t = 0 .. L-1
    targets[t] = y_{t+1}

so it has seen u_0..u_t and y_0..y_t: the information Algorithms 1 and 2 use for their
prediction of y_{t+1} (their ŷ_t is built from u_{<t} and y_{<t}). The raw streams are kept in
``info["u"]`` and ``info["y"]`` (length L + 1) so that the online learners run on exactly the
same numbers.
"""

from __future__ import annotations

import numpy as np

from ..._random import RngLike, as_generator
from ..._validation import check_fits_in_memory, check_real
from ...systems import LDS, simulate
from ...systems.lds import require_discrete
from ._checks import check_length, check_positive_int
from ._data import SequenceTask


def lds_next_output(system: LDS, n: int, length: int, *, input_scale: float = 1.0,
                    process_noise: float | None = None, obs_noise: float | None = None,
                    rng: RngLike = None) -> SequenceTask:
    """Draw ``n`` input streams, simulate ``system`` and build next-output targets.

    Parameters
    ----------
    system : LDS
        Discrete-time system (e.g. ``random_lds(n, eigenvalue_regions(T, q).region_a)``).
    n : int
        Number of streams.
    length : int
        Positions per stream L (the simulation runs L + 1 steps).
    input_scale : float
        Standard deviation of the inputs.
    process_noise, obs_noise : float, optional
        Standard deviations of w_t and v_t (none by default).
    rng : Generator, int or None
        Draws the inputs, then the noise.

    Returns
    -------
    SequenceTask
        inputs (n, L, d_in + d_out), targets (n, L, d_out), every position masked;
        ``info["u"]`` (n, L+1, d_in), ``info["y"]`` (n, L+1, d_out).
    """
    system = require_discrete(system, "system")  # an LDS or a control.StateSpace
    n = check_positive_int("n", n)
    length = check_length("length", length, 1)
    input_scale = check_real("input_scale", input_scale, low=0.0, low_inclusive=False)
    d_in, d_out = system.n_inputs, system.n_outputs
    # u and y (L + 1 steps), the simulated states, inputs and targets: float64 each
    per_step = 2 * d_in + 3 * d_out + system.n_states
    check_fits_in_memory("n * length", f"{n} * {length}", 8.0 * n * (length + 1) * per_step,
                         f"the float64 streams, states, inputs and targets ({per_step} numbers "
                         f"per step of each of the n streams)")
    gen = as_generator(rng)
    u = input_scale * gen.standard_normal((n, length + 1, system.n_inputs))
    y = simulate(system, u, process_noise=process_noise, obs_noise=obs_noise, output="lengen",
                 return_states=False, rng=gen).y
    inputs = np.concatenate([u[:, :length], y[:, :length]], axis=-1)
    targets = y[:, 1:].copy()
    mask = np.ones((n, length), dtype=bool)
    return SequenceTask(inputs, targets, mask, mask.copy(), name="lds-next-output",
                        info={"u": u, "y": y})
