"""Layer <-> LDS bridge: real realisations of complex SSM modes, and their inverse.

**Real coordinates.** A layer channel stores ``N/2`` complex state entries ``z``; the real system
it stands for has the ``N`` states ``x̃ = [z; z̄]``, evolving as ``x̃' = A_f x̃ + b_f u``,
``y = c_f x̃ + d u`` with conjugate-symmetric ``A_f = [[A11, A12], [Ā12, Ā11]]``,
``b_f = [b; b̄]``, ``c_f = [c, c̄]``. In the real coordinates ``ξ`` interleaving
``(Re z_n, Im z_n)``, ``x̃ = W ξ`` with ``W[n, 2n] = 1, W[n, 2n+1] = i,
W[N/2+n, 2n] = 1, W[N/2+n, 2n+1] = -i`` (``W* W = 2 I``)::

    A_r = ½ W* A_f W,   B_r = ½ W* b_f = (Re b_n, Im b_n)_n,   C_r = c_f W = (2 Re c_n, -2 Im c_n)_n

all real. A diagonal ``A_f = diag(λ, λ̄)`` gives the 2x2 blocks ``[[Re λ, -Im λ], [Im λ, Re λ]]``;
the DPLR ``A_f = diag(λ, λ̄) - [p; p̄][p; p̄]*`` gives those blocks minus ``2 p_r p_rᵀ`` with
``p_r = ½ W* [p; p̄] = (Re p_n, Im p_n)_n`` — again diagonal plus rank one, now real.

**Inverse** (:func:`diagonal_modes`): split an LDS into its connected components (the state
coupling graph of ``A``), give each component to the one channel whose input drives it or whose
output reads it, and diagonalise each component (``lds_toolkit.systems.modal_form``). A complex
pair ``λ, λ̄`` becomes one stored mode ``(λ, b̃, c̃)``; a real eigenvalue becomes one stored mode
with ``c̃/2`` (so that ``2 Re(c z)`` gives ``c̃ z`` back); modes with ``b̃ = 0`` or ``c̃ = 0``
(exactly) do not reach the output and are dropped. Discrete eigenvalues are mapped back to
continuous ones by inverting the layer's discretisation at step ``Δ``.

**Names** (:func:`remember_names`, :func:`export_names`): ``from_lds`` stores the input and
output names of the system it was given (and its name) on the layer, outside the state dict;
every export (``to_lds()`` discrete or continuous, one channel or all, ``s4_recursion()``)
gives them back, channel ``h`` keeping the names of input and output ``h``. State names are
not kept: the layer's states are modal coordinates of its own. A list of single-channel systems
gives its channels their systems' input and output names when these are all different, else
the defaults ``u[h]``, ``y[h]``. Names travel through ``state_dict`` (a checkpoint) as the
entry ``_lds_names`` of the layer's SSM, a uint8 tensor of their UTF-8 JSON
(:func:`names_tensor`, :func:`names_from_tensor`: a tensor, so that code handling state
dicts as tensors keeps working), so a fresh layer that loads a trained layer's state dict
exports the same names; a state dict without the entry (written before, or by a layer that
was never given names) loads as before and leaves the layer's names as they are.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
import scipy.sparse
import scipy.sparse.csgraph
import torch

from ...systems.lds import LDS, as_lds
from ...systems.s4_recursion import S4Recursion
from ...systems.simulate import MODAL_FORCED_MAX_COND, modal_form


def interleave(z: torch.Tensor) -> torch.Tensor:
    """Complex (..., N/2) -> real (..., N): ``(Re z_0, Im z_0, Re z_1, ...)``."""
    return torch.view_as_real(z).flatten(-2)


def deinterleave(x: torch.Tensor) -> torch.Tensor:
    """Inverse of :func:`interleave`."""
    return torch.view_as_complex(x.unflatten(-1, (-1, 2)).contiguous())


def real_block_diag(a: torch.Tensor) -> torch.Tensor:
    """The real (..., N, N) matrix with the 2x2 blocks ``[[Re a_n, -Im a_n], [Im a_n, Re a_n]]``
    of the complex diagonal ``a`` (..., N/2) (differentiable)."""
    zero = torch.zeros_like(a.real)
    diag = interleave(torch.complex(a.real, a.real))
    sup = torch.stack([-a.imag, zero], -1).flatten(-2)[..., :-1]
    sub = torch.stack([a.imag, zero], -1).flatten(-2)[..., :-1]
    return (torch.diag_embed(diag) + torch.diag_embed(sup, offset=1)
            + torch.diag_embed(sub, offset=-1))


def real_realisation(a: torch.Tensor, b: torch.Tensor, c: torch.Tensor):
    """Real ``(A_r, B_r, C_r)`` (..., N, N), (..., N), (..., N) of the diagonal complex system
    ``(a, b, c)`` (..., N/2) with output ``2 Re(c z)`` (module docstring)."""
    return real_block_diag(a), interleave(b), interleave(2 * c.conj())


class ChannelBlocks(NamedTuple):
    """Per-channel real ``A (H, N, N), B (H, N), C (H, N), D (H,)`` of a layer, and the names
    of its channels; assembled into one block-diagonal system with ``H`` inputs and outputs
    (channel ``h`` on states ``h N .. (h+1) N - 1``)."""

    A: np.ndarray
    B: np.ndarray
    C: np.ndarray
    D: np.ndarray
    names: dict

    def matrices(self):
        H, N = self.B.shape
        Ab = np.zeros((H * N, H * N))
        Bb = np.zeros((H * N, H))
        Cb = np.zeros((H, H * N))
        for h in range(H):
            sl = slice(h * N, (h + 1) * N)
            Ab[sl, sl] = self.A[h]
            Bb[sl, h] = self.B[h]
            Cb[h, sl] = self.C[h]
        return Ab, Bb, Cb, np.diag(self.D)

    def lds(self, dt) -> LDS:
        """The block-diagonal system as an :class:`LDS` with timebase ``dt``."""
        return LDS(*self.matrices(), dt=dt, **self.names)

    def s4_recursion(self) -> S4Recursion:
        """The block-diagonal matrices as the S4 recursion, one sample per step."""
        return S4Recursion(*self.matrices(), dt=1.0, names=self.names)


def _labels(system) -> dict:
    """Input and output names (and the system name) of one system given to ``from_lds``."""
    if isinstance(system, S4Recursion):
        names = system.names or {}
        return {k: v for k, v in names.items() if k in ("inputs", "outputs", "name")}
    lds = as_lds(system)
    return {"inputs": list(lds.input_labels), "outputs": list(lds.output_labels),
            "name": lds.name}


def remember_names(module, system) -> None:
    """Store on ``module`` (a layer's SSM) the signal names of the ``system`` its modes came
    from (module docstring); :func:`export_names` gives them back."""
    if _is_system(system):
        names = _labels(system)
    else:  # a sequence of single-channel systems
        each = [_labels(s) for s in system]
        inputs = [n.get("inputs", [None])[0] for n in each]
        outputs = [n.get("outputs", [None])[0] for n in each]
        names = {}
        if None not in inputs and len(set(inputs)) == len(inputs):
            names["inputs"] = inputs
        if None not in outputs and len(set(outputs)) == len(outputs):
            names["outputs"] = outputs
    module.__dict__["_lds_names"] = names  # a plain attribute: not a parameter or buffer


#: The state-dict entry (under the SSM's prefix) that holds the names.
NAMES_KEY = "_lds_names"


def names_tensor(module) -> torch.Tensor | None:
    """The names :func:`remember_names` stored on ``module`` as a uint8 tensor of their UTF-8
    JSON (None when it holds none)."""
    names = module.__dict__.get("_lds_names")
    if not names:
        return None
    data = json.dumps(names, sort_keys=True).encode()
    return torch.tensor(list(data), dtype=torch.uint8)


def names_from_tensor(value, where: str) -> dict:
    """The names of a state dict's ``_lds_names`` entry (:func:`names_tensor`);
    ``ValueError`` naming ``where`` when it is not such an entry."""
    try:
        if not (torch.is_tensor(value) and value.dtype == torch.uint8 and value.dim() == 1):
            raise TypeError(f"a {type(value).__name__}")
        names = json.loads(bytes(value.tolist()).decode())
        if not isinstance(names, dict) or not all(
                k in ("inputs", "outputs", "name") for k in names):
            raise TypeError("not a mapping of inputs, outputs and name")
    except (TypeError, ValueError, UnicodeDecodeError) as exc:
        raise ValueError(f"{where} must be the signal names of a layer's state dict (a "
                         f"uint8 tensor of their JSON), got {exc}") from None
    return names


def export_names(module, channel: int | None) -> dict:
    """The LDS name keywords of an export of ``module`` (all ``d_model`` channels, or one):
    the names :func:`remember_names` stored, else ``u[h]``, ``y[h]``."""
    stored = module.__dict__.get("_lds_names") or {}
    H = module.d_model
    hs = range(H) if channel is None else [channel]
    inputs = stored.get("inputs") or [f"u[{h}]" for h in range(H)]
    outputs = stored.get("outputs") or [f"y[{h}]" for h in range(H)]
    names = {"inputs": [inputs[h] for h in hs], "outputs": [outputs[h] for h in hs]}
    if channel is None and stored.get("name"):
        names["name"] = stored["name"]
    return names


def s4_form(obj, owner: str):
    """A system given to ``from_lds`` as an LDS whose discrete matrices are read with the S4
    recursion: an :class:`S4Recursion` as it is, a discrete LDS / ``control.StateSpace`` (the
    standard recursion, what ``to_lds()`` exports) through :meth:`S4Recursion.from_lds`, a
    continuous one unchanged."""
    if getattr(obj, "dt", None) is True:  # python-control's "discrete, step unspecified"
        raise ValueError(f"{owner}: system has dt=True (discrete, sample time unspecified); "
                         "from_lds reads one sample per layer step and to_lds() gives it back "
                         "with dt=1.0, so state that step: pass system.with_matrices(dt=1.0) "
                         "(a control.StateSpace: control.ss(system, dt=1.0))")
    if isinstance(obj, S4Recursion):
        return LDS(obj.A_bar, obj.B_bar, obj.C, obj.D, dt=obj.dt, **(obj.names or {}))
    system = as_lds(obj)
    if system.is_continuous:
        return system
    try:
        rec = S4Recursion.from_lds(system)
    except ValueError as exc:
        raise ValueError(f"{owner}: {exc}") from None
    return LDS(rec.A_bar, rec.B_bar, rec.C, rec.D, dt=rec.dt, **(rec.names or {}))


# ----------------------------------------------------------------------------- inverse


def _is_system(obj) -> bool:
    if isinstance(obj, S4Recursion):
        return True
    try:
        as_lds(obj)
    except TypeError:
        return False
    return True


def _channel_systems(system, owner: str):
    """``(systems, H)``: a list of (A, B, C, D) SISO-or-MIMO pieces and the channel count.
    Each system may be an LDS or a ``control.StateSpace``."""
    if _is_system(system):
        system = s4_form(system, owner)
        if system.n_inputs != system.n_outputs:
            raise ValueError(
                f"{owner}: system must have as many inputs as outputs (one per channel), got "
                f"{system.n_inputs} inputs and {system.n_outputs} outputs"
            )
        return [system], system.n_inputs
    if isinstance(system, Sequence) and not isinstance(system, str) and len(system) > 0:
        pieces = []
        for i, s in enumerate(system):
            if not _is_system(s):
                raise TypeError(f"{owner}: system[{i}] must be an LDS, a control.StateSpace, a "
                                f"control.TransferFunction or an S4Recursion, got "
                                f"{type(s).__name__}")
            s = s4_form(s, owner)
            if (s.n_inputs, s.n_outputs) != (1, 1):
                raise ValueError(
                    f"{owner}: system[{i}] must be single-input single-output (one channel), "
                    f"got {s.n_inputs} inputs and {s.n_outputs} outputs"
                )
            pieces.append(s)
        kinds = {s.is_discrete for s in pieces}
        if len(kinds) > 1:
            raise ValueError(f"{owner}: the systems must be all discrete or all continuous")
        return pieces, len(pieces)
    raise TypeError(
        f"{owner}: system must be an LDS (or control.StateSpace, control.TransferFunction or "
        f"S4Recursion) or a non-empty sequence of single-channel ones, got "
        f"{type(system).__name__}"
    )


def _continuous_modes(lam_d: np.ndarray, b_d: np.ndarray, disc: str, dt: float, owner: str):
    """Invert the discretisation per mode: ``(λ, b)`` with ``disc(Δλ) = λ_d``, ``b̄(λ, b) = b_d``."""
    if disc == "bilinear":
        if np.any(np.abs(lam_d + 1) == 0):
            raise ValueError(
                f"{owner}: a discrete eigenvalue -1 has no continuous counterpart under the "
                "bilinear map (λ = (2/Δ)(λ_d - 1)/(λ_d + 1))"
            )
        lam = (2 / dt) * (lam_d - 1) / (lam_d + 1)
        return lam, 2 * b_d / (dt * (lam_d + 1))  # b̄ = Δ b / (1 - Δλ/2), 1 - Δλ/2 = 2/(λ_d+1)
    if np.any(lam_d == 0):
        raise ValueError(
            f"{owner}: a discrete eigenvalue 0 has no continuous counterpart under ZOH "
            "(λ = log(λ_d)/Δ)"
        )
    z = np.log(lam_d.astype(np.complex128))  # principal branch: exp(z) = λ_d
    with np.errstate(invalid="ignore", divide="ignore"):
        phi = np.where(z == 0, 1.0, np.expm1(z) / np.where(z == 0, 1.0, z))
    return z / dt, b_d / (dt * phi)  # b̄ = Δ φ(Δλ) b, φ(z) = (e^z - 1)/z


def diagonal_modes(system, *, disc: str, dt: float, owner: str):
    """Per-channel modes of a diagonalisable LDS (module docstring).

    Returns ``(lam, b, c, d)``: lists over the ``H`` channels of complex arrays (continuous
    eigenvalues in the layer's time unit, i.e. for step ``Δ = dt``, input and output weights of
    each stored mode) and the feed-through ``d (H,)``.
    """
    pieces, H = _channel_systems(system, owner)
    lam = [[] for _ in range(H)]
    bs = [[] for _ in range(H)]
    cs = [[] for _ in range(H)]
    d = np.zeros(H)
    offset = 0
    for piece in pieces:
        A, B, C, D = piece.A, piece.B, piece.C, piece.D
        chans = np.arange(offset, offset + B.shape[1])
        n_comp, labels = scipy.sparse.csgraph.connected_components(
            scipy.sparse.csr_matrix(A != 0), directed=True, connection="weak"
        )
        for k in range(n_comp):
            idx = np.flatnonzero(labels == k)
            ins = np.flatnonzero(np.any(B[idx] != 0, axis=0))
            outs = np.flatnonzero(np.any(C[:, idx] != 0, axis=1))
            touched = np.union1d(ins, outs)
            if touched.size == 0:
                continue  # neither driven nor read: no effect on any output
            if touched.size > 1:
                raise ValueError(
                    f"{owner}: states {idx.tolist()[:6]} couple channels {touched.tolist()}; a "
                    "diagonal SSM layer needs a realisation whose A is block-diagonal with each "
                    "block driven by one input and read by the same output (as to_lds() gives)"
                )
            h = int(touched[0])
            mf = modal_form(A[np.ix_(idx, idx)])
            if not mf.cond <= MODAL_FORCED_MAX_COND:
                raise ValueError(
                    f"{owner}: the state matrix of channel {int(chans[h])} is not (numerically) "
                    f"diagonalisable: eigenvector condition number {mf.cond:.3g} > "
                    f"{MODAL_FORCED_MAX_COND:g}"
                )
            lam_k = np.asarray(mf.lam, dtype=np.complex128)
            bt = mf.Vinv @ B[idx, h]
            ct = C[h, idx] @ mf.V
            keep = (lam_k.imag >= 0) & (bt != 0) & (ct != 0)
            real = lam_k.imag == 0
            if np.count_nonzero(lam_k.imag > 0) != np.count_nonzero(lam_k.imag < 0):
                raise ValueError(f"{owner}: complex eigenvalues must come in conjugate pairs")
            ct = np.where(real, ct / 2, ct)
            lam[int(chans[h])].extend(lam_k[keep])
            bs[int(chans[h])].extend(np.asarray(bt, dtype=np.complex128)[keep])
            cs[int(chans[h])].extend(np.asarray(ct, dtype=np.complex128)[keep])
        off_diag = D - np.diag(np.diag(D))  # after the states: coupled states say more
        if np.any(off_diag != 0):
            raise ValueError(f"{owner}: D must be diagonal (each channel's output sees only its "
                             "own input)")
        d[chans] = np.diag(D)
        offset += B.shape[1]
    discrete = pieces[0].is_discrete
    out_lam, out_b = [], []
    for h in range(H):
        lh, bh = np.asarray(lam[h], dtype=np.complex128), np.asarray(bs[h], dtype=np.complex128)
        if discrete and lh.size:
            lh, bh = _continuous_modes(lh, bh, disc, dt, owner)
        out_lam.append(lh)
        out_b.append(bh)
    return out_lam, out_b, [np.asarray(c, dtype=np.complex128) for c in cs], d
