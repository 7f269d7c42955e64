# ---
# jupyter:
#   jupytext:
#     formats: py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Tutorial 5 — python-control users start here
#
# If you work in [python-control](https://python-control.readthedocs.io), you already have
# everything the toolkit needs: a `control.StateSpace` goes wherever an `LDS` goes, an `LDS`
# **is** a `control.StateSpace` (every python-control function takes it), and where a
# python-control object goes in, a python-control object with the same signal names comes
# out. This tutorial takes one plant around the loop:
#
# 1. build it in python-control, with signal names;
# 2. simulate it with the toolkit, and read the result back as python-control's
#    `TimeResponseData` (labels, `.plot()`, pandas);
# 3. discretise it with every method python-control has;
# 4. certify it with a Lyapunov function;
# 5. close the loop with LQR and sample it only when needed (event-triggered control);
# 6. train an S4D layer on its output, export the layer, and give the export back to
#    `control.bode` and `control.forced_response`.
#
# Each step says where the toolkit's convention differs from python-control's and how to get
# python-control's. Run it as a plain script: `python docs/tutorials/05_python_control.py`
# (under a minute on 2 CPU cores); `LDS_TUTORIAL_QUICK=1` for smaller sizes,
# `LDS_TUTORIAL_SAVE_FIGURES=DIR` to write the figures. Only the public API is used.

# %%
import os

import control as ct
import matplotlib.pyplot as plt
import numpy as np
import torch

import lds_toolkit as lt
from lds_toolkit.control import ETCSystem, LyapunovRule
from lds_toolkit.neural import S4, train
from lds_toolkit.neural.tasks import SequenceTask

QUICK = os.environ.get("LDS_TUTORIAL_QUICK", "0") not in ("", "0")
SAVE_DIR = os.environ.get("LDS_TUTORIAL_SAVE_FIGURES")
STEPS = 300 if QUICK else 1000       # optimizer steps of the S4D
N_SEQ, SEQ_LEN = 8, 400              # training sequences of the plant's output
rng = np.random.default_rng(5)


def show(fig, name):
    """Display a figure; with LDS_TUTORIAL_SAVE_FIGURES=DIR also save it as DIR/name.png."""
    fig.tight_layout()
    if SAVE_DIR:
        os.makedirs(SAVE_DIR, exist_ok=True)
        fig.savefig(os.path.join(SAVE_DIR, f"{name}.png"), dpi=130)
    plt.show()
    plt.close(fig)


# %% [markdown]
# ## 1. A plant in python-control
#
# A mass on a spring with a damper, $m\ddot p + c\dot p + kp = F$, with position and
# velocity as states, the force as input and the position as output:
#
# $$\frac{d}{dt}\begin{bmatrix}p\\ v\end{bmatrix} =
# \begin{bmatrix}0 & 1\\ -k/m & -c/m\end{bmatrix}\begin{bmatrix}p\\ v\end{bmatrix} +
# \begin{bmatrix}0\\ 1/m\end{bmatrix}F,\qquad y = p.$$
#
# `lt.LDS.from_statespace` converts it (keeping every name) and the result is still a
# `StateSpace`; the toolkit's functions also take `G` as it is.

# %%
m, c, k = 1.0, 0.4, 4.0
G = ct.ss([[0.0, 1.0], [-k / m, -c / m]], [[0.0], [1.0 / m]], [[1.0, 0.0]], 0,
          inputs="force", outputs="position", states=["p", "v"], name="msd")
plant = lt.LDS.from_statespace(G)
print(repr(plant), "| a StateSpace:", isinstance(plant, ct.StateSpace))
print("names kept:", plant.input_labels, plant.output_labels, plant.state_labels, plant.name)
print("python-control on the LDS: poles", np.round(ct.poles(plant), 4),
      "DC gain", float(ct.dcgain(plant)))

# %% [markdown]
# ## 2. Simulate, and get python-control's objects back
#
# **Timebase.** Continuous time is `dt = 0`, as in python-control (`LDS(..., dt=None)` is
# accepted and stored as 0); `dt=True` is "discrete, step unspecified". python-control's own
# `dt=None` ("not yet specified") is refused: the toolkit will not guess.
#
# **Inputs between samples.** `lt.simulate_continuous(G, t, u)` holds each $u_k$ constant on
# $[t_k, t_{k+1})$ (zero-order hold, exact: the sampled system of section 3 with `"zoh"`);
# `ct.forced_response(G, t, u)` interpolates linearly between samples (exact for the `"foh"`
# system). Both are exact for their own reading of the samples; they differ by the input
# between samples, not by numerical error.
#
# **Discrete time.** `lt.simulate(sys, u)` runs $x_{t+1} = Ax_t + Bu_t$, $y_t = Cx_t + Du_t$
# — python-control's recursion — with `u` of shape `(T, d_in)`, time first, or a 1-D `u` for
# a single-input system (python-control is channel first: `(d_in, T)`). `.to_time_response()`
# transposes back and carries the signal names, so `.plot()` and `.to_pandas()` work.

# %%
dt = 0.1
t = np.arange(300) * dt
u = np.sin(1.3 * t) + 0.3 * rng.standard_normal(t.size)
held = lt.simulate_continuous(G, t, u[:, None])
print("simulate_continuous vs forced_response of the zoh system:",
      f"{np.abs(held.y[:, 0] - ct.forced_response(ct.c2d(G, dt, 'zoh'), t, u).y[0]).max():.1e}")
print("simulate_continuous vs forced_response of the continuous system (linear between "
      f"samples): {np.abs(held.y[:, 0] - ct.forced_response(G, t, u).y[0]).max():.1e}")

Gd = lt.discretize(G, dt, "zoh")        # a StateSpace came in: a StateSpace comes out
res = lt.simulate(Gd, u)                 # 1-D input of a single-input system
resp = res.to_time_response()
print(type(Gd).__name__, Gd.name, "| response labels:", resp.input_labels, resp.output_labels)
print("simulate vs control.forced_response (discrete):",
      f"{np.abs(resp.outputs - ct.forced_response(Gd, t, u).outputs).max():.1e}")
cplt = resp.plot()
show(cplt.figure, "tutorial05_response")
try:
    print(res.to_pandas().head(3))
except ImportError:
    print("pandas is not installed: res.to_pandas() needs it")

# %% [markdown]
# ## 3. Every discretisation python-control has
#
# `lt.discretize(sys, dt, method)` takes python-control's methods — `"zoh"`, `"foh"`,
# `"impulse"`, `"bilinear"`/`"tustin"` (with `prewarp_frequency=`), `"gbt"` (with `alpha=`),
# `"euler"`, `"backward_diff"`, `"matched"` (single-input single-output) — and its keywords
# (`name=`, `copy_names=`, `inputs=`, `outputs=`, `states=`), and gives the matrices and names of
# `ct.sample_system` (computed by scipy/python-control where they implement the method). The
# toolkit adds S4's bilinear recursion, `"s4-bilinear"`: the same $\bar A, \bar B$ as Tustin,
# but the input enters the state in the same step, $x_k = \bar Ax_{k-1} + \bar Bu_k$,
# $y_k = Cx_k + Du_k$, realised so that python-control runs it as S4 does.
#
# Below: how far each discrete frequency response is from the continuous one at the
# resonance $\omega_r \approx 2$, and the agreement with `ct.sample_system`. Tustin warps
# frequencies, $\omega \mapsto \tfrac2{dt}\tan\tfrac{\omega dt}{2}$; prewarping at $\omega_r$
# makes it exact there.

# %%
w_r = np.sqrt(k / m - (c / m) ** 2 / 2)
H_c = complex(G(1j * w_r))
z_r = np.exp(1j * w_r * dt)
cases = [("zoh", {}), ("foh", {}), ("impulse", {}), ("tustin", {}),
         ("tustin", {"prewarp_frequency": w_r}),
         ("gbt", {"alpha": 0.3}), ("euler", {}), ("backward_diff", {}), ("matched", {})]
disc_agreement = 0.0
for method, opts in cases:
    ours = lt.discretize(G, dt, method, **opts)
    # python-control matches poles and zeros of transfer functions only: give it G's
    theirs = ct.sample_system(G if method != "matched" else ct.tf([1 / m], [1, c / m, k / m]),
                              dt, method, **opts)
    same = max(np.abs(complex(ours(z)) - complex(theirs(z))) for z in (z_r, 1.0, -1.0))
    disc_agreement = max(disc_agreement, float(same))
    label = method + "".join(f" {key}={val:.3g}" for key, val in opts.items())
    print(f"{label:32s} |H_d(e^(i w_r dt)) - H_c(i w_r)| = "
          f"{abs(complex(ours(z_r)) - H_c):.2e}")
print(f"largest difference from control.sample_system: {disc_agreement:.1e}")

# %% [markdown]
# ## 4. A Lyapunov certificate
#
# python-control's `lyap(A, Q)` solves $AX + XA^\top + Q = 0$; the toolkit's
# `continuous_lyapunov(A, M)` solves the transposed equation $A^\top P + PA = -M$, the one
# whose $P$ makes $V(x) = x^\top Px$ decrease along $\dot x = Ax$ ($\dot V = -x^\top Mx$).
# `convention="control"` solves python-control's. Unlike python-control, the toolkit refuses
# an unstable $A$ (no positive-definite solution exists) and accepts a non-symmetric
# right-hand side (the solution is then unique and non-symmetric). A system stands for
# its $A$; the discrete versions are `dlyap` and `discrete_lyapunov` ($A^\top PA - P = -M$).

# %%
Q = np.eye(2)
P = lt.continuous_lyapunov(G, Q)                               # Aᵀ P + P A = -Q
X = lt.continuous_lyapunov(G, Q, convention="control")         # A X + X Aᵀ + Q = 0
lyap_agreement = float(np.abs(X - ct.lyap(G.A, Q)).max())
print("P =", P.round(4).tolist(), "| convention='control' vs ct.lyap:", f"{lyap_agreement:.1e}")
check = lt.verify(G, P, Q)
print(f"certificate: residual {check.relative_residual:.1e}, P ≻ 0: {check.P_positive_definite}, "
      f"V decays at least as e^(-{check.decay_rate:.3f} t)")
cert = lt.discrete_certificate(Gd)
print(f"discrete certificate of the sampled plant: rho = {cert.rho:.4f} "
      f"(spectral radius {cert.spectral_radius:.4f})")

# %% [markdown]
# ## 5. LQR, then sample only when needed
#
# `ETCSystem.from_lqr(sys, Q, R)` is called like `ct.lqr` and uses it. Sign convention:
# python-control's `lqr` returns $K$ for $u = -Kx$; event-triggered control here writes
# $u = Kx$, so the loop gets $K = -K_{lqr}$ (closed loop $A - BK_{lqr}$). The controller holds
# $u = Kx(t_i)$ between events and samples when the Lyapunov decrease is at risk
# (S4++ paper eq. 12); `simulate_etc` flows the loop exactly between events.

# %%
K_lqr, _, _ = ct.lqr(G, np.eye(2), np.eye(1))
loop = ETCSystem.from_lqr(G, np.eye(2), np.eye(1))
print("K = -K_lqr:", np.allclose(loop.K, -K_lqr))
etc = lt.simulate_etc(loop, LyapunovRule(kappa=0.5), [1.0, 0.0], horizon=10.0,
                      bracket_step=0.01)
print(f"{etc.n_events} events in 10 s (periodic sampling at dt would take {int(10 / dt)}), "
      f"shortest gap {etc.min_inter_event:.3f} s, Lyapunov bound holds: "
      f"{bool(np.all(etc.V <= etc.V_bound * (1 + 1e-9)))}")

# %% [markdown]
# ## 6. Train an S4D on the plant's output, and give the layer back to python-control
#
# An S4 layer runs $x_k = \bar Ax_{k-1} + \bar Bu_k$, $y_k = Cx_k + Du_k$: the input enters
# the state in the same step. Its `to_lds()` exports the standard realisation
# $(\bar A, \bar B, C\bar A, D + C\bar B)$ (state $s_k = x_{k-1}$) — an `LDS`, so a
# `StateSpace` with `dt = 1` (one sample) that `control.forced_response` and `control.bode`
# run as the layer does. The S4 matrices themselves come from `s4_recursion()`, an
# `S4Recursion`, which python-control refuses: the two cannot be mixed up.
#
# The layer learns the sampled plant's map from force to position on random inputs
# ($u_k$ at position $k$, $y_k$ as its target: the plant's $D = 0$, so the layer must learn
# $D + C\bar B \approx 0$).

# %%
U = rng.standard_normal((N_SEQ, SEQ_LEN))
Y = np.stack([lt.simulate(Gd, u_seq).y[:, 0] for u_seq in U])
y_power = float(np.mean(Y ** 2))
task = SequenceTask(inputs=U[..., None], targets=Y[..., None],
                    mask=np.ones((N_SEQ, SEQ_LEN), bool), eval_mask=np.ones((N_SEQ, SEQ_LEN), bool),
                    name="msd")
s4d = S4(1, 8, activation="identity", output_linear=False, dt_min=0.05, dt_max=0.2,
         seed=0).double()
fit = train(s4d, task, steps=STEPS, batch_size=N_SEQ, lr=0.1, warmup=30, schedule="cosine",
            weight_decay=0.0, seed=0, threads=1, progress=False)
print(f"S4D: {STEPS} steps in {fit.seconds:.1f} s, loss / mean y² "
      f"{fit.history['loss'][0] / y_power:.2e} -> {fit.history['loss'][-1] / y_power:.2e}")

learned = s4d.to_lds()
u_test = rng.standard_normal(SEQ_LEN)
with torch.no_grad():
    layer_out = s4d(torch.from_numpy(u_test)[None, :, None]).numpy()[0, :, 0]
steps = np.arange(SEQ_LEN, dtype=float)                  # the export's time is in samples
exported = ct.forced_response(learned, steps, u_test).outputs
export_err = float(np.abs(exported - layer_out).max() / np.abs(layer_out).max())
fit_err = float(np.linalg.norm(exported - lt.simulate(Gd, u_test).y[:, 0])
                / np.linalg.norm(lt.simulate(Gd, u_test).y[:, 0]))
print(f"control.forced_response(s4d.to_lds()) against the layer's output: {export_err:.1e}")
print(f"... against the plant on a fresh input: relative error {fit_err:.2e}")

w = np.logspace(-1.5, np.log10(np.pi / dt) - 0.01, 200)
resp_plant = ct.frequency_response(Gd, w)
resp_layer = ct.frequency_response(learned, w * dt)      # rad/sample: one sample = dt
bode_err = float(np.max(np.abs(resp_layer.complex - resp_plant.complex))
                 / np.max(np.abs(resp_plant.complex)))
fig, ax = plt.subplots(2, 1, figsize=(7, 5), sharex=True)
ax[0].loglog(w, np.abs(resp_plant.complex).ravel(), label="plant (zoh, dt = 0.1)")
ax[0].loglog(w, np.abs(resp_layer.complex).ravel(), "--", label="S4D, to_lds()")
ax[1].semilogx(w, np.unwrap(np.angle(resp_plant.complex).ravel()))
ax[1].semilogx(w, np.unwrap(np.angle(resp_layer.complex).ravel()), "--")
ax[0].set(ylabel="|H|", title="control.frequency_response of the plant and the trained layer")
ax[1].set(xlabel="ω (rad per time unit)", ylabel="phase (rad)")
ax[0].legend()
show(fig, "tutorial05_bode")
print(f"frequency-response error of the layer, relative to the peak: {bode_err:.2e}")
print("python-control's poles of the export (moduli, slowest first):",
      np.round(np.sort(np.abs(ct.poles(learned)))[::-1][:4], 4), "| plant:",
      np.round(np.abs(ct.poles(Gd)), 4))

# %% [markdown]
# ## Conventions at a glance
#
# | | python-control | lds_toolkit |
# | --- | --- | --- |
# | signal arrays | channel first, `(d, T)` | time first, `(T, d)` (1-D for one input) |
# | continuous timebase | `dt = 0` | `dt = 0` (`None` accepted) |
# | inputs between samples (continuous) | linear interpolation | held (zero-order hold) |
# | discrete impulse response | pulse of area 1 | unit sample; `convention="control"` |
# | Lyapunov equation | $AX + XA^\top + Q = 0$ | $A^\top P + PA = -M$; `convention="control"` |
# | LQR gain | $u = -Kx$ | $u = Kx$ (`ETCSystem.from_lqr` converts) |
# | S4 layers | — | `to_lds()`: standard realisation; `s4_recursion()`: S4's matrices |
#
# The details are in [Systems and simulation](../systems.md#python-control-conventions) and
# [Control](../control.md#7-working-with-python-control).

# %%
print("summary")
for key, value in {
    "export_error": export_err,
    "plant_fit_error": fit_err,
    "bode_error": bode_err,
    "discretisation_agreement": disc_agreement,
    "lyapunov_agreement": lyap_agreement,
    "etc_events": etc.n_events,
    "etc_bound_holds": bool(np.all(etc.V <= etc.V_bound * (1 + 1e-9))),
    "certificate_satisfied": check.satisfied,
}.items():
    print(f"{key} = {value}")
