r"""What ``nss-s4`` measures on a trained one-layer model (the S4++ paper's Sec. 2.3).

The states of the model's single SSM layer (:func:`layer_states`, from the recurrent mode,
:func:`recurrent_states`), their volume (:func:`state_volume`, the paper's Total State Vol,
and the rescaling-invariant :func:`weighted_state_volume`), how much a perturbed input moves
them (:func:`relative_state_change`), the part a constant input builds up (:func:`dc_volume`),
the error floor of the perturbed sine (:func:`nominal_floor`), and the trained layer read as
one LDS per channel with what it says about non-stable states (:func:`lds_analysis`,
:func:`nss_threshold`). The experiment and its protocol are in :mod:`.nss_s4`.
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING

import numpy as np

from ...control import discrete_certificate
from ...systems import LDS, memory_length

if TYPE_CHECKING:  # pragma: no cover - torch is imported where a model is measured
    import torch

    from ...neural import SequenceModel

#: step-size multipliers of the NSS map (the layer's ``rate``)
RATES = [2.0 ** k for k in range(-6, 11)]


def layer_states(model: SequenceModel, u: np.ndarray):
    """The SSM's input, states and output weights of the model's single layer, in float64.

    ``u``: (length, 1) or a batch (batch, length, 1). Returns ``v`` (..., length, H) real, the
    input of the SSM (the encoder's output, after State Memory Replay for S4+), ``x``
    (..., length, H, N/2) complex, every state ``x_t`` after reading ``v_t``, and ``C``
    (H, N/2) complex, with the SSM output ``y_t = 2 Re(C x_t) + D v_t``.
    """
    import torch

    with torch.no_grad():
        m = copy.deepcopy(model).double().cpu()
        u = np.asarray(u, dtype=float)
        single = u.ndim == 2
        z = m.encoder(torch.as_tensor(u[None] if single else u))
        layer = m.blocks[0].layer
        v = layer.smr(z) if hasattr(layer, "smr") else z
        x = recurrent_states(layer.ssm, v)
        v, x = v.numpy(), x.numpy()
        if single:
            v, x = v[0], x[0]
        return v, x, layer.ssm._C(torch.float64).numpy()


def state_volume(x: np.ndarray) -> np.ndarray:
    r"""The paper's Total State Vol :math:`V_t = 2\sum_{h,n}|x_{t,h,n}|` of states ``x``
    (length, H, N/2) (each stored mode stands for a conjugate pair). Shape (length,).

    Not invariant to a rescaling of the state: :math:`x \to s x` with :math:`B \to sB`,
    :math:`C \to C/s` leaves every output unchanged and multiplies :math:`V_t` by
    :math:`|s|`."""
    return 2.0 * np.abs(x).sum(axis=(-2, -1))


def weighted_state_volume(x: np.ndarray, C: np.ndarray) -> np.ndarray:
    r""":math:`W_t = 2\sum_{h,n}|C_{h,n}||x_{t,h,n}|`, the state volume with every mode
    weighted by its output coefficient; shape (length,).

    Mode n of channel h contributes :math:`2\,\mathrm{Re}(C_{h,n}x_{t,h,n})` to the output, an
    oscillation of amplitude :math:`2|C_{h,n}x_{t,h,n}|`; :math:`W_t` sums these amplitudes
    before they cancel. Invariant to every rescaling that leaves the layer's outputs unchanged
    (:math:`x_n \to s_n x_n`, :math:`B_n \to s_n B_n`, :math:`C_n \to C_n/s_n`, any complex
    :math:`s_n \ne 0` per mode of a diagonal SSM; one real :math:`s_h` per channel for the DPLR
    SSM, whose modes and their conjugates are coupled by :math:`PP^*`)."""
    return 2.0 * (np.abs(C) * np.abs(x)).sum(axis=(-2, -1))


def relative_state_change(x: np.ndarray, x_pert: np.ndarray, C: np.ndarray | None = None
                          ) -> float:
    r""":math:`\sum_t\sum_{h,n} w|x'_{t,h,n} - x_{t,h,n}| / \sum_t\sum_{h,n} w|x_{t,h,n}|`
    with :math:`w = 1` (``C`` None: invariant to a common rescaling of the state only) or
    :math:`w = |C_{h,n}|` (invariant to per-mode rescaling)."""
    w = 1.0 if C is None else np.abs(C)
    return float((w * np.abs(x_pert - x)).sum() / (w * np.abs(x)).sum())


def nominal_floor(task) -> float:
    r"""MSE of the nominal next sample :math:`\sin(\omega t_{i+1})` as a prediction of the
    perturbed one :math:`\sin(\omega t'_{i+1})` (``task`` from :func:`sine_fit` with jitter):
    the error a predictor that knows the nominal grid but not the jitter of the next instant
    makes. With :math:`\delta \sim U(-jh, jh)` it is about
    :math:`\omega^2 (jh)^2/3 \cdot \overline{\cos^2} \approx 1.06\cdot10^{-3}` for the paper's
    sine (ω = 5π, h = 1/99, j = 1/2)."""
    info = task.info
    n = len(info["t"])
    t_nominal = info["grid_step"] * np.arange(1, n + 1)
    return float(np.mean((np.sin(info["frequency"] * t_nominal) - task.targets[0, :, 0]) ** 2))


def recurrent_states(ssm, v: torch.Tensor) -> torch.Tensor:
    """Every state of ``ssm`` (an S4 layer's SSM) on ``v`` (batch, length, H), from its
    recurrent mode ``ssm.step``: complex (batch, length, H, N/2). The same numbers as
    ``ssm.states(v)`` (pinned to 1e-10 in the layer tests), at O(L) steps of O(H N^2) for the
    DPLR SSM instead of the doubling scan's O(H N^2 L log L)."""
    import torch

    with torch.no_grad():
        state = ssm.initial_state(v.shape[0], dtype=v.dtype, device=v.device)
        xs = []
        for t in range(v.shape[1]):
            _, state = ssm.step(v[:, t], state)
            xs.append(state)
        return torch.stack(xs, dim=1)


def dc_volume(model: SequenceModel, v: np.ndarray, C: np.ndarray) -> np.ndarray:
    r"""The weighted state volume :math:`W_t` of the SSM's response to the per-channel time
    average :math:`\bar v` of its input ``v`` (length, H) alone. The SSM is linear in v, so
    its states split as x = x[v̄] + x[v - v̄]: this is the part a constant input builds up,
    which keeps rising for as long as the slowest modes remember. Shape (length,)."""
    import torch

    m = copy.deepcopy(model).double().cpu()
    vbar = torch.as_tensor(np.broadcast_to(v.mean(axis=0), v.shape).copy())[None]
    x_dc = recurrent_states(m.blocks[0].layer.ssm, vbar)[0].numpy()
    return weighted_state_volume(x_dc, C)


def lds_analysis(model: SequenceModel, rates=RATES) -> dict:
    r"""The trained SSM as one LDS per channel and what it says about NSS.

    The channels' systems are the diagonal blocks of ``layer.to_lds(rate=r)`` (the same as
    ``layer.to_lds(h, rate=r)``, computed once for all channels): the standard realisation
    :math:`(\bar A_h, \bar B_h, C_h\bar A_h, D_h + C_h\bar B_h)` of the layer's recursion.

    Returns a dict with, over channels h: ``moduli`` (every :math:`|\lambda(\bar A_h)|`),
    ``steps`` (:math:`\Delta_h`, one per modulus), ``spectral_radius``
    (:math:`\max |\lambda|`), ``unstable_modes`` (count with :math:`|\lambda| > 1`),
    ``unstable_channels`` (channels with a mode :math:`|\lambda| \ge 1`), ``certified_rho``
    and ``certificate_condition`` (max over the Schur-stable channels of the contraction
    :math:`\rho` proved by :math:`\bar A^\top P\bar A - P = -I` and of cond(P)),
    ``memory_length`` (per channel, ε = 1e-2, of the response
    :math:`D + C\bar B, C\bar A\bar B, \dots`; NaN when not Schur stable), and
    ``radius_at_rate`` (:math:`\max_h\rho(\bar A_h)` at the step :math:`r\Delta_h` for every
    r of ``rates``).
    """
    import torch

    layer = model.blocks[0].layer
    H, N = layer.ssm.d_model, layer.ssm.d_state

    def channel_blocks(rate):
        """(Ā_h, B̄_h, C_h Ā_h, D_h + C_h B̄_h) of every channel from the block-diagonal
        ``to_lds`` (standard realisation: its impulse response is the layer's kernel)."""
        full = layer.to_lds(rate=rate)
        return [(full.A[h * N:(h + 1) * N, h * N:(h + 1) * N],
                 full.B[h * N:(h + 1) * N, h:h + 1], full.C[h:h + 1, h * N:(h + 1) * N],
                 full.D[h:h + 1, h:h + 1]) for h in range(H)]

    moduli, steps, rho_c, cond, mem = [], [], [], [], []
    dt = torch.exp(layer.ssm.log_dt.detach().double()).numpy()
    for h, (A, B, C, D) in enumerate(channel_blocks(1.0)):
        lam = np.abs(np.linalg.eigvals(A))
        moduli.append(lam)
        steps.append(np.full(lam.size, dt[h]))
        if lam.max() < 1:
            cert = discrete_certificate(A)
            rho_c.append(cert.rho)
            cond.append(cert.condition)
            mem.append(memory_length(LDS(A, B, C, D, dt=1.0), 1e-2).length)
        else:
            rho_c.append(np.nan)
            cond.append(np.nan)
            mem.append(np.nan)
    # only Ā_h matters here: the layer's per-channel blocks, the same matrices as the diagonal
    # blocks of to_lds(rate=r), without assembling (and validating) the (HN, HN) system at
    # every rate
    radius_at_rate = [max(float(np.abs(np.linalg.eigvals(A)).max())
                          for A in layer.ssm._export(None, False, r).A) for r in rates]
    moduli = np.concatenate(moduli)
    return {"moduli": moduli, "steps": np.concatenate(steps),
            "spectral_radius": float(moduli.max()),
            "unstable_modes": int(np.sum(moduli > 1)),
            "unstable_channels": int(np.sum(np.isnan(rho_c))),
            "certified_rho": float(np.nanmax(rho_c)) if np.isfinite(rho_c).any() else np.nan,
            "certificate_condition": (float(np.nanmax(cond)) if np.isfinite(cond).any()
                                      else np.nan),
            "memory_length": np.asarray(mem, dtype=float),
            "radius_at_rate": np.asarray(radius_at_rate)}


def nss_threshold(length: int, growth: float = 1e6) -> float:
    r""":math:`|\lambda|` at which a mode multiplies a perturbation by ``growth`` within
    ``length`` steps, :math:`\text{growth}^{1/L}` (Fig. 1 reaches :math:`10^6`)."""
    return float(growth ** (1.0 / length))
