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
# # Lesson 8 — Capstone: an SSM is an LDS
#
# *A neural state-space layer, once trained, is a linear dynamical system. Then every tool of
# lessons 1–7 applies to it.*
#
# You will: train an **S4D** layer (PyTorch, CPU, a few seconds) on a stream from a Region A
# system, export it with `to_lds()`, compute its discrete modes from its continuous ones,
# **certify** its stability with a Lyapunov function, and place its modes on the
# **region plot** of lesson 1. The layer is the S4 of the S4++ paper (*S4++: State Memory
# Replay*, eqs. 1–6) in its diagonal form; the regions are the length-generalization paper's.
# This lesson needs torch (`pip install "lds_toolkit[nn]"`).
#
# *Time: about 90 min — the idea, the training and the worked example ≈ 30 min, exercises
# 1–3 ≈ 10, 25 and 15 min, the interpretation question ≈ 5 min.*

# %%
import os

import matplotlib.pyplot as plt
import numpy as np
import torch

import lds_toolkit as lt
from lds_toolkit.neural import S4, train
from lds_toolkit.neural.tasks import SequenceTask
from lds_toolkit.systems import S4Recursion
from lds_toolkit.teaching import lesson08, show_slider

QUICK = os.environ.get("LDS_LESSON_QUICK") == "1"  # smaller sizes, same code

# %% [markdown]
# ## The idea: a layer that is a system
#
# An S4D layer runs, per channel, a continuous-time system with a **diagonal** complex state
# matrix, $x'(t) = A x(t) + B u(t)$, $y(t) = C x(t) + D u(t)$, with
# $A = \mathrm{diag}(a_1, \dots, a_N)$, $\mathrm{Re}\,a_n < 0$ (S4D-Lin starts at
# $a_n = -\tfrac12 + i\pi n$). It samples that system with a learned step $\Delta$ by the
# **bilinear** (Tustin) rule (S4++ paper, eq. 3):
#
# $$\bar A = (I - \tfrac{\Delta}{2}A)^{-1}(I + \tfrac{\Delta}{2}A), \qquad
#   \bar B = (I - \tfrac{\Delta}{2}A)^{-1}\Delta B,$$
#
# and runs the recursion $x_k = \bar A x_{k-1} + \bar B u_k$, $y_k = C x_k + D u_k$ — in
# training as one long convolution with the kernel $\bar K_l = C\bar A^l\bar B$ (eq. 6).
# Modes come in conjugate pairs, so the output is real: each pair is a real $2\times 2$
# rotation-and-scaling block. In other words, **the trained layer is an LDS** with $N$ real
# states per channel, and `layer.to_lds()` writes it as one (a python-control
# `StateSpace`).
#
# Each diagonal entry maps on its own: $\bar\lambda_n = \frac{1 + \Delta a_n/2}
# {1 - \Delta a_n/2}$, which lies inside the unit disc whenever $\mathrm{Re}\,a_n < 0$ — an
# S4D layer is stable by construction, and what a certificate measures is **how fast** it
# forgets, the margin $1 - \rho$.

# %% [markdown]
# ## Worked example: train, export, compare
#
# The data: a symmetric system with 4 eigenvalues in Region A, white-noise input, the
# stream in the paper's convention $y_{t+1} = \sum_\ell CA^\ell B\,u_{t-\ell}$. The layer's
# output at position $k$ sees $u_k$; we train it to output $y_{k+1}$ from $u_0 \dots u_k$,
# so that its taps $C\bar A^l\bar B + D[l = 0]$ should equal $CA^lB$ (tutorial 4 explains
# the mapping). One channel, no activation and no output map: the layer *is* its SSM.

# %%
T = 1024 if QUICK else 2048
STEPS = 400 if QUICK else 1000
system, u, y = lesson08.capstone_stream(T)
task = SequenceTask(inputs=u[None, :-1], targets=y[None, 1:],
                    mask=np.ones((1, T - 1), bool), eval_mask=np.ones((1, T - 1), bool),
                    name="capstone")
layer = S4(1, 8, activation="identity", output_linear=False, seed=0).double()
fit = train(layer, task, steps=STEPS, batch_size=1, lr=0.05, warmup=20, schedule="cosine",
            weight_decay=0.0, seed=0, threads=1, progress=False)
power = float(np.mean(y**2))
print(f"{STEPS} Adam steps in {fit.seconds:.1f} s: training loss / mean y^2 "
      f"{fit.history['loss'][0] / power:.3g} -> {fit.history['loss'][-1] / power:.3g}")

learned = layer.to_lds()                     # discrete, dt = 1: a control.StateSpace
learned_c = layer.to_lds(continuous=True)    # (Delta A, Delta B, C, D), time in samples
print(f"to_lds(): {type(learned).__name__} with {learned.n_states} real states, dt = "
      f"{learned.dt}; A is block diagonal (2 x 2 blocks):")
print(np.array2string(learned.A[:4, :4], precision=5))

# %% [markdown]
# `to_lds()` is exact, not an approximation: simulating it reproduces the layer's own output
# (the difference is round-off), and discretising the continuous export by S4's rule gives
# the discrete one back.

# %%
with torch.no_grad():
    layer_out = layer(torch.from_numpy(u[None, :-1])).numpy()[0]
print("simulate(to_lds()) vs the layer:",
      f"{np.max(np.abs(lt.simulate(learned, u[:-1]).y - layer_out)):.1e}")
redisc = lt.discretize(learned_c, 1.0, "s4-bilinear")
print("discretize(to_lds(continuous=True), 1, 's4-bilinear') vs to_lds():",
      f"{np.max(np.abs(redisc.A - learned.A)):.1e}")

# %% [markdown]
# ## Exercise 1 — the discrete modes from the continuous ones (≈ 10 min)
#
# The eigenvalues of `learned_c.A` are $z_n = \Delta a_n$ (and their conjugates). Write
# `bilinear_modes(z)`: the discrete eigenvalue of each $z$ under S4's bilinear rule, an array
# in the order of `z`.

# %% tags=["exercise"]
def bilinear_modes(z):
    z = np.asarray(z, dtype=complex)
    return (1 + z / 2) / (1 - z / 2)  # SOLUTION


# %% tags=["check"]
lesson08.check_bilinear_modes(bilinear_modes)

# %% [markdown]
# On the trained layer (with the toolkit's answer): the mapped continuous modes are the
# discrete system's eigenvalues.

# %%
z = np.linalg.eigvals(learned_c.A)
mapped = np.sort_complex(lesson08.mapped_modes(z))
direct = np.sort_complex(np.linalg.eigvals(learned.A))
print(f"largest difference: {np.max(np.abs(mapped - direct)):.1e}; the moduli |λ|: "
      f"{np.array2string(np.unique(np.abs(direct).round(7)), precision=7)}")

# %% [markdown]
# ## Exercise 2 — certify it (≈ 25 min)
#
# Lesson 3 solved Lyapunov equations. For a discrete system, solve
# $A^\top P A - P = -I$; then $V(x) = x^\top P x$ decreases at every step. The certified rate
# is the smallest $\rho$ with $V(Ax) \le \rho^2 V(x)$ for **every** $x$, so that every free
# trajectory obeys $\|x_k\|_P \le \rho^k \|x_0\|_P$: write $V(Ax) / V(x)$ as a quotient of two
# quadratic forms and find its maximum over $x$ (a generalised eigenvalue problem). Write
# `certificate_rate(A)` returning $\rho$. `scipy.linalg.solve_discrete_lyapunov(a, q)` solves
# $a X a^\top - X + q = 0$ (mind which matrix to pass) and
# `scipy.linalg.eigh(M, P, eigvals_only=True)` gives the generalised eigenvalues of
# $M v = \lambda P v$.

# %% tags=["exercise"]
def certificate_rate(A):
    import scipy.linalg as sla

    A = np.asarray(A, dtype=float)
    # BEGIN SOLUTION
    P = sla.solve_discrete_lyapunov(A.T, np.eye(A.shape[0]))
    M = A.T @ P @ A
    return float(np.sqrt(sla.eigh(0.5 * (M + M.T), P, eigvals_only=True)[-1]))
    # END SOLUTION


# %% tags=["check"]
lesson08.check_certificate_rate(certificate_rate)

# %% [markdown]
# The toolkit's certificate of the trained layer and of the true system. For a normal
# matrix (the true symmetric $A$; the layer's rotation blocks) $\rho$ equals the spectral
# radius; the margin $1 - \rho$ says how fast each forgets.

# %%
for name, s in (("learned", learned), ("true", system)):
    cert = lt.discrete_certificate(s)
    print(f"{name:8s}: rho = {cert.rho:.7f}, spectral radius = {cert.spectral_radius:.7f}, "
          f"margin = {cert.margin:.3g}, proves stability: {cert.proves_stability}")

# %% [markdown]
# ## Exercise 3 — the modes on the regions (≈ 15 min)
#
# Lesson 1 placed one real eigenvalue on the regions. A learned system has complex modes:
# the regions are about how fast a mode is forgotten, $|\lambda^t| = |\lambda|^t$, so place
# each eigenvalue by its **modulus**. Write `region_counts(eigenvalues, T, q)` returning a
# dict with the four keys `"A-left"`, `"B"`, `"A-right"`, `"outside"` and the number of
# eigenvalues in each (0 for an empty one). You may use `lt.eigenvalue_regions(T, q)` and
# its `classify`.

# %% tags=["exercise"]
def region_counts(eigenvalues, T, q):
    # BEGIN SOLUTION
    labels = lt.eigenvalue_regions(T, q).classify(np.abs(np.asarray(eigenvalues)))
    return {key: int(np.sum(labels == key)) for key in ("A-left", "B", "A-right", "outside")}
    # END SOLUTION


# %% tags=["check"]
lesson08.check_region_counts(region_counts)

# %% [markdown]
# The whole picture with the toolkit (`eigenvalue_map` places each mode by its modulus):
# the true modes and the learned ones on the regions of $(T, 7/8)$, and the two impulse
# responses read with the S4 recursion (for the true system `S4Recursion(A, B, C)`).

# %%
regions = lt.eigenvalue_regions(T, 7 / 8)
maps = {"true": lt.eigenvalue_map(system, T), "learned": lt.eigenvalue_map(learned, T)}
for name, m in maps.items():
    print(f"{name:8s}: {m.counts}")

fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 3.4))
lo = 1e-7
gap, edge = 1 - regions.region_b.low, 1 - regions.region_b.high
bands = ((lo, edge, "C2"), (edge, gap, "C3"), (gap, 1 - regions.region_a[0].low, "C2"))
for a, b, color in bands:
    ax1.axvspan(a, b, color=color, alpha=0.2, lw=0)
for row, m in enumerate(maps.values()):
    ax1.plot(np.clip(1 - m.modulus, lo, 1), np.full(m.modulus.size, row), "o", mfc="none")
ax1.set(xscale="log", xlim=(lo, 1), yticks=[0, 1], yticklabels=list(maps), ylim=(-0.6, 1.6),
        xlabel=r"$1 - |\lambda|$ (green: Region A, red: Region B)")
impulse = np.zeros((4 * T, 1))
impulse[0] = 1.0
h_true = S4Recursion(system.A, system.B, system.C).simulate(impulse).y[:, 0]
h_learned = lt.simulate(learned, impulse).y[:, 0]
ax2.semilogx(np.arange(1, 4 * T + 1), h_true, "k", label="true")
ax2.semilogx(np.arange(1, 4 * T + 1), h_learned, "--", label="learned")
ax2.axvline(T, color="0.6")
ax2.set(xlabel="lag l + 1", title="impulse responses (grey: T)")
ax2.legend()
plt.show()
err = np.linalg.norm(h_learned[:T] - h_true[:T]) / np.linalg.norm(h_true[:T])
print(f"relative impulse-response error over the first T lags: {err:.3g}")

# %% [markdown]
# The layer follows the true response over the lags it was trained on (the relative error
# above), with modes of its own: it has 8 states for the true system's 4, and nothing makes
# them the true eigenvalues. Where
# the learned modes land decides what the layer does *beyond* the training length — the
# length-generalization question, seen from the system side.
#
# ## Slider — run the layer at another step
#
# `to_lds(rate=r)` multiplies every step $\Delta$ by $r$: the layer resampled, as if the
# same continuous system were read $r$ times slower. Move $r$ and watch the modes slide
# along the regions ($|\bar\lambda| \approx 1 + \Delta\,\mathrm{Re}\,a$ shrinks as $\Delta$
# grows), the certified $\rho$ follow them, and the impulse response stretch or shrink
# against the true one. At $r = 1$ the layer is the trained one.

# %%
lesson08.use_layer(layer, system, T)  # the slider shows this layer (and the true system)

# %% tags=["slider"]
show_slider("lesson08.rate")

# %% [markdown]
# ## Interpretation question (≈ 5 min)
#
# Run the trained layer at ten times its step (rate 10). The certificate still proves
# $\rho < 1$, with a margin $1 - \rho$ about ten times larger than at rate 1, but the impulse
# response is far from the true one. What does that say? Set `interpretation` to one letter:
#
# * **a** — the certificate is wrong at rate 10: $\rho < 1$ cannot hold for a layer that is
#   off;
# * **b** — a larger step makes the layer more accurate, because it is more stable;
# * **c** — stability is not accuracy: the bilinear map keeps every mode inside the unit
#   circle for any $\Delta$ ($1 - \rho$ grows about like $\Delta$), but the modes move to
#   where the true system's are not, so the layer is a stable model of another system;
# * **d** — the modes left the unit circle, so the response diverges.

# %% tags=["exercise"]
interpretation = "c"  # SOLUTION

# %% tags=["check"]
lesson08.check_interpretation(interpretation)

# %% [markdown]
# ## What to take away
#
# * An S4D layer is an LDS: diagonal modes $\bar\lambda = \frac{1 + \Delta a/2}{1 - \Delta a/2}$,
#   real $2\times2$ blocks per conjugate pair; `to_lds()` exports it exactly, and python-control
#   and every tool of the toolkit take it from there.
# * A Lyapunov certificate turns "stable by construction" into a number: the decay rate
#   $\rho$ and the margin $1 - \rho$, i.e. the layer's memory.
# * On the region plot a learned layer and the system it imitates can disagree: it matches the
#   data it saw with whatever modes fit, which is why what a model does beyond its training
#   length is a property of its modes.
# * This closes the course: lessons 1–4 built the control side, 5–7 the learning side, and
#   here the two meet on one object.

# %% tags=["check"]
lesson08.summary(bilinear_modes=bilinear_modes, certificate_rate=certificate_rate,
                 region_counts=region_counts, interpretation=interpretation)
