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
# # Tutorial 4 — Control meets machine learning: learn a system, then ask control questions
#
# This walk-through goes once around the loop that `lds_toolkit` is built for:
#
# 1. draw a linear dynamical system (LDS) whose eigenvalues lie in **Region A** of the
#    length-generalization paper, and simulate one stream of it;
# 2. learn the stream **online** with Algorithm 1 (spectral filtering);
# 3. train an **S4D** layer (torch, CPU) on the same stream;
# 4. export the trained layer as an LDS (`to_lds()`);
# 5. compare the learned system with the true one: **modes** on the region plot, **impulse
#    response**, **memory**, **Lyapunov certificate**;
# 6. run an **event-triggered sampler** on the learned system's continuous-time form,
#    closed with an LQR feedback.
#
# Run it as a plain script: `python docs/tutorials/04_control_meets_ml.py` (under 2 minutes on
# 2 CPU cores; figures open with `plt.show()`). `LDS_TUTORIAL_QUICK=1` runs the same code on
# smaller sizes (what the test suite does); `LDS_TUTORIAL_SAVE_FIGURES=DIR` also writes the
# figures to `DIR` (the ones in `docs/img/` were made that way). Only the public API is used.

# %%
import os
import time

import matplotlib.pyplot as plt
import numpy as np
import torch

import lds_toolkit as lt
from lds_toolkit.control import ETCSystem, LyapunovRule, simulate_etc
from lds_toolkit.learning import LearnerDivergedError
from lds_toolkit.neural import S4, train
from lds_toolkit.neural.tasks import SequenceTask
from lds_toolkit.systems import S4Recursion

QUICK = os.environ.get("LDS_TUTORIAL_QUICK", "0") not in ("", "0")
SAVE_DIR = os.environ.get("LDS_TUTORIAL_SAVE_FIGURES")
STARTED = time.perf_counter()

T = 512 if QUICK else 2048     # stream length = horizon of the regions and of the filters
N_HIDDEN = 8                   # hidden dimension of the true system
K_FILTERS = 16                 # spectral filters of Algorithm 1
D_STATE = 16                   # S4D state size (8 complex-conjugate pairs)
STEPS = 500 if QUICK else 1500  # optimizer steps of the S4D
ETC_RUNS = 2 if QUICK else 4   # random initial states for the inter-event statistics

rng = np.random.default_rng(2024)  # every numpy draw below comes from this generator
TORCH_SEED = 0                     # the layer's initialisation and the training loop


def show(fig, name):
    """Display a figure; with LDS_TUTORIAL_SAVE_FIGURES=DIR also save it as DIR/name.png."""
    fig.tight_layout()
    if SAVE_DIR:
        os.makedirs(SAVE_DIR, exist_ok=True)
        fig.savefig(os.path.join(SAVE_DIR, f"{name}.png"), dpi=130)
    plt.show()
    plt.close(fig)


def rel_err(estimate, truth):
    """||estimate - truth||_2 / ||truth||_2."""
    return float(np.linalg.norm(estimate - truth) / np.linalg.norm(truth))


print(f"mode: {'quick' if QUICK else 'full'}; T = {T}")

# %% [markdown]
# ## 1. A system from Region A, and its stream
#
# The length-generalization paper (Theorem 5) guarantees that Algorithm 1 with a context of
# $T^q$ steps predicts as well as with the full context when every eigenvalue of $A$ lies in
# $[0,\ 1 - \frac{\log T}{8T^q}]$ or in $[1 - \frac{1}{2T^{5/4}},\ 1]$. The gap between the two
# is **Region B**; **Region A** is the pair of intervals that hug it,
# $[0.9\,(1 - \frac{\log T}{8T^q}),\ 1 - \frac{\log T}{8T^q}] \cup [1 - \frac{1}{2T^{5/4}},\ 1]$
# (`eigenvalue_regions(T, q)`, with the paper's $q = 7/8$). `random_lds` draws a symmetric
# $A = Q\,\mathrm{diag}(\lambda)\,Q^\top$ with half of the $\lambda_i$ from each part,
# $B \sim \mathcal N(0, 1)$, $C \sim \mathcal N(0, 1/n)$ and $D = 0$.
#
# **The data convention.** The paper reads its eq. 1 as "$CA^\ell B$ is the coefficient of
# $u_{t-\ell}$ in $y_{t+1}$":
#
# $$x_{t+1} = A x_t + B u_t,\qquad y_t = C x_t,\qquad x_0 = 0
# \qquad\Longrightarrow\qquad y_{t+1} = \sum_{\ell \ge 0} C A^\ell B\, u_{t-\ell}.$$
#
# That is `simulate(sys, u, output="lengen")`: $y_t$ depends on the inputs strictly before
# $t$. The inputs are i.i.d. $u_t \sim \mathcal N(0, 1)$.

# %%
regions = lt.eigenvalue_regions(T, 7 / 8)
true_sys = lt.random_lds(N_HIDDEN, regions.region_a, rng=rng)
true_map = lt.eigenvalue_map(true_sys, T)
print(f"Region A = [{regions.region_a[0].low:.6f}, {regions.region_a[0].high:.6f}] ∪ "
      f"[{regions.region_a[1].low:.7f}, 1];  Region B = ({regions.region_b.low:.6f}, "
      f"{regions.region_b.high:.7f})")
for lam, label in zip(true_map.eigenvalues.real, true_map.labels):
    print(f"  eigenvalue {lam:.7f}  ({label})")
print("Theorem 5's condition holds:", true_map.theorem_condition)

# one stream to learn from, one to choose Algorithm 1's step size on, one to test the S4D on
u_train, u_val, u_test = (rng.standard_normal((T, 1)) for _ in range(3))
y_train, y_val, y_test = (lt.simulate(true_sys, u, output="lengen").y
                          for u in (u_train, u_val, u_test))
y_power = float(np.mean(y_train**2))
print(f"mean y² on the training stream: {y_power:.4g}")

# %% [markdown]
# ## 2. Algorithm 1: learn the stream online
#
# Algorithm 1 (`lt.SpectralFiltering`) predicts, at step $t$, before seeing $y_t$,
#
# $$\hat y_t = y_{t-1} + \sum_{i=1}^{k} M_i \sum_{j=0}^{L-1} \sigma_i^{1/4}\,\phi_i[j]\,u_{t-1-j},$$
#
# with $(\sigma_i, \phi_i)$ the top-$k$ eigenpairs of the Hankel matrix $H_T$ (the filter tap
# $\phi_i[0]$ multiplies $u_{t-1}$), and updates the $M_i$ by online gradient descent on
# $\|\hat y_t - y_t\|^2$, projected on $\|M_i\|_F \le r$. We use the full context $L = T$,
# $r = \|B\|\,\|C\|$ (the theorems ask for $r \ge \|B\|\|C\|$) and a constant step chosen on the
# validation stream (mean loss over its last quarter), never on the stream we report.
#
# Algorithm 1 never estimates $A$, $B$, $C$. With the true data,
# $y_t - y_{t-1} = CB\,u_{t-1} + \sum_{j \ge 1} C A^{j-1}(A - I)B\,u_{t-1-j}$, so the learned
# coefficient of $u_{t-1-j}$, $g_j = \sum_i M_i \sigma_i^{1/4} \phi_i[j]$, estimates
# $h_j - h_{j-1}$ with $h_j = CA^jB$, and its running sum $\sum_{i \le j} g_i$ is the
# algorithm's estimate of the impulse response (used in section 5).

# %%
radius = float(np.linalg.norm(true_sys.B, 2) * np.linalg.norm(true_sys.C, 2))


def algorithm1(lr):
    return lt.SpectralFiltering(horizon=T, k=K_FILTERS, context=None, radius=radius, lr=lr,
                                lr_schedule="constant")


def last_quarter(losses):
    return float(np.mean(losses[-(len(losses) // 4):]))


val_loss = {}
for lr in (0.05, 0.1, 0.2, 0.4, 0.8):
    learner = algorithm1(lr)
    try:
        learner.fit_predict(u_val, y_val)
        val_loss[lr] = last_quarter(learner.losses_)
    except LearnerDivergedError:  # a step that is too large diverges: it is not chosen
        val_loss[lr] = np.inf
lr_alg1 = min(val_loss, key=val_loss.get)

alg1 = algorithm1(lr_alg1)
alg1.fit_predict(u_train, y_train)
last_value = lt.LastValue()  # baseline: yhat_t = y_{t-1}
last_value.fit_predict(u_train, y_train)
alg1_loss = last_quarter(alg1.losses_) / y_power
last_value_loss = last_quarter(last_value.losses_) / y_power
print(f"step size chosen on the validation stream: {lr_alg1}")
print(f"loss / mean y² over the last quarter of the stream: Algorithm 1 {alg1_loss:.3g}, "
      f"last value {last_value_loss:.3g}")

# the learned coefficients g_j of u_{t-1-j}, and their running sum: an impulse response
sigma, phi = lt.spectral_filters(T, K_FILTERS, "H")
g = (phi * np.abs(sigma) ** 0.25) @ alg1.coef_[:, 0, 0]
h_alg1 = np.cumsum(g)

# %%
def smooth(values, window):
    """Trailing moving average (shorter at the start)."""
    c = np.cumsum(np.insert(values, 0, 0.0))
    t = np.arange(1, len(values) + 1)
    return (c[t] - c[np.maximum(t - window, 0)]) / np.minimum(t, window)


fig, axes = plt.subplots(1, 2, figsize=(11, 3.6))
axes[0].plot(y_train[:, 0], lw=0.8, label="$y_t$")
axes[0].plot(u_train[:, 0], lw=0.4, alpha=0.5, label="$u_t$")
axes[0].set(xlabel="t", title="the training stream (one Region-A system)")
axes[0].legend(loc="upper left")
window = T // 32
for losses, name in ((alg1.losses_, f"Algorithm 1 (lr = {lr_alg1})"),
                     (last_value.losses_, r"last value $\hat y_t = y_{t-1}$")):
    axes[1].semilogy(smooth(losses, window) / y_power, label=name)
axes[1].set(xlabel="t", ylabel=r"$(\hat y_t - y_t)^2$ / mean $y^2$",
            title=f"online loss (moving average over {window} steps)")
axes[1].legend()
show(fig, "tutorial04_online")

# %% [markdown]
# ## 3. An S4D layer on the same stream
#
# An S4 layer runs a different recursion (`simulate(..., output="s4")`): the input enters the
# state **in the same step** and the output sees it,
#
# $$x_k = \bar A x_{k-1} + \bar B u_k,\qquad \hat y_k = C x_k + D u_k,\qquad x_{-1} = 0
# \qquad\Longrightarrow\qquad \hat y_k = \sum_{l \ge 0} C\bar A^{l}\bar B\, u_{k-l} + D u_k,$$
#
# with $\bar A, \bar B$ the bilinear discretisation of a diagonal continuous-time
# $(A_c, B_c)$ at a learned step $\Delta$ (S4D-Lin initialisation).
#
# **How we map one convention onto the other.** Position $k$ of the layer reads $u_k$ and is
# trained to output $y_{k+1}$ (inputs $u_0 \dots u_{T-2}$, targets $y_1 \dots y_{T-1}$).
# Then both sides are sums over the same inputs, $u_k, u_{k-1}, \dots$: the layer is exact
# when its taps equal the true Markov parameters, $C\bar A^l\bar B + D\,[l = 0] = CA^lB$, and
# the true system itself, read with the S4 recursion, $(\bar A, \bar B, C, D) = (A, B, C, 0)$,
# is an exact solution. Training the layer to output $y_k$ at position $k$ instead would ask
# for $D + C\bar B = 0$ and every other tap one step later: a system with an extra one-step
# delay, not the $(A, B, C)$ that generated the data. (Algorithm 1's
# $\hat y_t$ uses $u_{<t}$, the same inputs as the layer's output at position $t - 1$; it also
# reads $y_{t-1}$, which the layer does not.)
#
# The layer is `S4(1, 16, activation="identity", output_linear=False)`: one channel, and
# without the activation and the output map it *is* its SSM, $u \mapsto \bar K * u + Du$,
# so the system exported in section 4 is the whole learned map.
# `S4.from_lds(S4Recursion(A, B, C))` builds the exact solution as a layer (an `S4Recursion`
# says "read these matrices with the S4 recursion"; a plain `LDS` would be read with the
# standard one); it reproduces the targets to round-off, which checks the mapping above in
# code.

# %%
stream = SequenceTask(inputs=u_train[None, :-1], targets=y_train[None, 1:],
                      mask=np.ones((1, T - 1), bool), eval_mask=np.ones((1, T - 1), bool),
                      name="lds-stream")
true_as_s4 = S4Recursion(true_sys.A, true_sys.B, true_sys.C)  # (A, B, C, 0) read by S4
exact = S4.from_lds(true_as_s4, activation="identity", output_linear=False)  # float64
with torch.no_grad():
    exact_out = exact(torch.from_numpy(stream.inputs)).numpy()
exact_err = float(np.max(np.abs(exact_out - stream.targets)) / np.max(np.abs(stream.targets)))
print(f"S4.from_lds(true system) against the targets: max error {exact_err:.1e} (relative)")

s4 = S4(1, D_STATE, activation="identity", output_linear=False, seed=TORCH_SEED).double()
fit = train(s4, stream, steps=STEPS, batch_size=1, lr=0.05, warmup=50, schedule="cosine",
            weight_decay=0.0, seed=TORCH_SEED, threads=1, progress=False)
with torch.no_grad():
    pred_test = s4(torch.from_numpy(u_test[None, :-1])).numpy()[0]
s4_test_loss = float(np.mean((pred_test - y_test[1:]) ** 2)) / y_power
print(f"S4D: {STEPS} steps in {fit.seconds:.1f} s; training loss / mean y² "
      f"{fit.history['loss'][0] / y_power:.3g} -> {fit.history['loss'][-1] / y_power:.3g}; "
      f"on a fresh test stream {s4_test_loss:.3g}")
assert fit.status == "completed", fit.divergence

# %% [markdown]
# ## 4. The trained layer is an LDS
#
# `s4.s4_recursion()` gives the layer's recursion as real matrices $(\bar A_r, \bar B_r, C_r, D)$
# with `dt = 1`: each complex mode $\bar\lambda = a + ib$ becomes a $2\times2$ block
# $\begin{bmatrix}a & -b\\ b & a\end{bmatrix}$ on the coordinates
# $(\mathrm{Re}\,x, \mathrm{Im}\,x)$, so the real system has `D_STATE` = 16 states.
# `s4.to_lds()` exports the same recursion as an `LDS` (a `control.StateSpace`) in the
# standard convention, $(\bar A_r, \bar B_r, C_r\bar A_r, D + C_r\bar B_r)$ with the state
# $s_k = x_{k-1}$, so `simulate(learned, u)` (and python-control's `forced_response`) gives the
# layer's output. `s4.to_lds(continuous=True)` is the system **before** discretisation,
# $(\Delta A_c, \Delta B_c, C, D)$ with time measured in samples, so that the layer's
# discretisation at step 1, `discretize(learned_c, 1.0, "s4-bilinear")`, gives `to_lds()`
# back.

# %%
learned = s4.to_lds()
learned_c = s4.to_lds(continuous=True)
bridge_err = float(np.max(np.abs(lt.simulate(learned, u_test[:-1]).y - pred_test)))
redisc = lt.discretize(learned_c, 1.0, "s4-bilinear")
redisc_err = float(max(np.max(np.abs(getattr(redisc, m) - getattr(learned, m))) for m in "ABCD"))
print(learned)
print(f"simulate(to_lds(), u) against the layer's output: max error {bridge_err:.1e}")
print(f"discretize(to_lds(continuous=True), 1, 's4-bilinear') against to_lds(): max error "
      f"{redisc_err:.1e}")

# %% [markdown]
# ## 5. The learned system against the true one
#
# **Modes.** `eigenvalue_map(sys, T)` places every eigenvalue by its modulus $|\lambda|$ (the
# regions are real intervals; $|\lambda^t| = |\lambda|^t$ is how fast a mode is forgotten).
# The learned modes come in complex pairs (S4D-Lin starts with $\mathrm{Im}\,A_c = \pi n$), the
# true ones are real.
#
# **Impulse response.** Both systems are read as the S4 recursion (the true one through
# `S4Recursion(A, B, C)`, the layer's through `to_lds()`, its standard realisation), so their
# responses to $u = (1, 0, 0, \dots)$ are $h_l = CA^lB$ (true) and
# $C\bar A^l\bar B + D[l=0]$ (layer): the
# coefficient of $u_{t-l}$ in the prediction of $y_{t+1}$. Algorithm 1's estimate is the
# running sum of section 2 (it has taps only up to $T$). The layer was fitted on $T - 1$
# positions: beyond $l = T$ its response is an extrapolation by its modes.
#
# **Memory.** `memory_length(sys, eps)` is the number of taps that carry a fraction
# $1 - \varepsilon$ of the response's energy $\sum_l h_l^2$ (computed from Gramians, however
# long). It counts the taps of the standard convention ($h_0 = D$, $h_t = CA^{t-1}B$), so
# the S4 reading of the true system is passed as `S4Recursion(A, B, C).to_lds()`, i.e.
# $(A, B, CA, CB)$, whose standard taps are the S4 ones; `to_lds()` already is that form.
#
# **Lyapunov certificate.** `discrete_certificate(sys)` solves $A^\top P A - P = -I$ and reports
# the smallest $\rho$ with $A^\top P A \preceq \rho^2 P$ for that $P$: along every free trajectory
# $x_{k+1} = Ax_k$, $V(x) = x^\top P x$ obeys $V(x_k) \le \rho^{2k} V(x_0)$ and
# $\|x_k\| \le \sqrt{\mathrm{cond}\,P}\;\rho^k\|x_0\|$. Always $\rho \ge$ the spectral radius
# $\rho(A)$; for a normal $A$ (the symmetric true $A$; the layer's rotation blocks) they are
# equal. The S4D parameterisation ($\mathrm{Re}\,A_c = -e^{a} < 0$, $\Delta > 0$) makes
# $|\bar\lambda| < 1$ for every parameter value, so the certificate can only confirm stability;
# what it measures is the **margin** $1 - \rho$, i.e. how fast the learned system forgets.

# %%
learned_map = lt.eigenvalue_map(learned, T)
for lam, label in zip(learned_map.eigenvalues[::2], learned_map.labels[::2]):
    print(f"  learned pair {lam.real:.7f} ± {abs(lam.imag):.3g}i, |λ| = {abs(lam):.7f}  ({label})")
print("learned modes per region:", learned_map.counts, "— Theorem 5's condition holds:",
      learned_map.theorem_condition)

n_lags = 16 * T
impulse = np.zeros((n_lags, 1))
impulse[0] = 1.0
h_true = true_as_s4.simulate(impulse).y[:, 0]
h_s4 = lt.simulate(learned, impulse).y[:, 0]
impulse_err_T = rel_err(h_s4[:T], h_true[:T])
impulse_err_16T = rel_err(h_s4, h_true)
alg1_impulse_err_T = rel_err(h_alg1, h_true[:T])
print(f"relative impulse-response error over the first T taps: S4D {impulse_err_T:.3g}, "
      f"Algorithm 1 {alg1_impulse_err_T:.3g}; S4D over 16 T taps: {impulse_err_16T:.3g}")

memory_true = lt.memory_length(true_as_s4.to_lds(), 1e-3).length
memory_learned = lt.memory_length(learned, 1e-3).length
print(f"memory (99.9 % of the energy): true {memory_true} taps, learned {memory_learned} taps")

cert_true, cert_learned = lt.discrete_certificate(true_sys), lt.discrete_certificate(learned)
for name, c in (("true", cert_true), ("learned", cert_learned)):
    print(f"certificate ({name}): ρ = {c.rho:.7f}, ρ(A) = {c.spectral_radius:.7f}, "
          f"margin 1 - ρ = {c.margin:.3g}, cond P = {c.condition:.3g}, "
          f"proves stability: {c.proves_stability}")

# %%
fig, axes = plt.subplots(1, 2, figsize=(11, 3.8))
ax = axes[0]
lags = np.arange(n_lags)
ax.semilogx(lags + 1, h_true, "k", lw=2, label="true $CA^lB$")
ax.semilogx(lags + 1, h_s4, "C0--", lw=1.5, label="S4D (to_lds)")
ax.semilogx(lags[:T] + 1, h_alg1, "C1:", lw=1.5, label="Algorithm 1 (running sum)")
ax.axvline(T, color="0.6", lw=0.8)
ax.text(T, ax.get_ylim()[1], " T", va="top", color="0.4")
ax.set(xlabel="lag l + 1", ylabel="impulse response", title="impulse responses")
ax.legend()
ax = axes[1]
ax.loglog(lags + 1, np.abs(h_s4 - h_true) + 1e-16, "C0", lw=0.8, label="S4D")
ax.loglog(lags[:T] + 1, np.abs(h_alg1 - h_true[:T]) + 1e-16, "C1", lw=0.8,
          label="Algorithm 1")
ax.axvline(T, color="0.6", lw=0.8)
ax.set(xlabel="lag l + 1", ylabel="|error|", title="distance from the true response")
ax.legend()
show(fig, "tutorial04_impulse")

# %% [markdown]
# The figure below is the analysis of the trained layer in one picture. **Left:** the moduli
# of the true and the learned modes on the regions of `eigenvalue_regions(T, 7/8)`, plotted
# as $1 - |\lambda|$ on a log axis (slower modes to the left; Region A's right part reaches
# $|\lambda| = 1$, drawn down to $10^{-7}$). **Right:** what the learned system's certificate
# proves against what its free trajectories $x_k = \bar A^k x_0$ do, from five random unit
# initial states: $V(x_k)/V(x_0)$ (blue) under $\rho^{2k}$, and the state norm
# $\|x_k\|/\|x_0\|$ (orange) under $\sqrt{\mathrm{cond}\,P}\,\rho^k$; the grey line is the
# true system's certified $\rho^{2k}$.

# %%
decay_steps = int(min(6.0 / cert_learned.margin, 64 * T))
k = np.arange(decay_steps)
x0 = rng.standard_normal((5, learned.n_states))
x0 /= np.linalg.norm(x0, axis=1, keepdims=True)
x_free = lt.simulate(learned, np.zeros((5, decay_steps, 1)), x0=x0).x  # x_k = Ā^k x_0
v_free = np.einsum("rki,ij,rkj->rk", x_free, cert_learned.P, x_free)
v_ratio = v_free / v_free[:, :1]
norm_ratio = np.linalg.norm(x_free, axis=2)  # ||x_0|| = 1
certificate_holds = bool(np.all(v_ratio <= cert_learned.rho ** (2 * k) * (1 + 1e-9))
                         and np.all(norm_ratio <= cert_learned.norm_bound(k) * (1 + 1e-9)))
print(f"V(x_k) <= ρ^(2k) V(x_0) and ||x_k|| <= sqrt(cond P) ρ^k ||x_0|| on every learned "
      f"free trajectory: {certificate_holds}")

fig, axes = plt.subplots(1, 2, figsize=(11.5, 4.0))
ax = axes[0]
lo, hi = 1e-7, 1.0
gap, edge = 1 - regions.region_b.low, 1 - regions.region_b.high  # log T/(8T^q), 1/(2T^(5/4))
for a, b, color, text in ((lo, edge, "C2", "A (right)"), (edge, gap, "C3", "B"),
                          (gap, 1 - regions.region_a[0].low, "C2", "A (left)")):
    ax.axvspan(a, b, color=color, alpha=0.22, lw=0)
    ax.text(np.sqrt(a * b), 1.62, text, ha="center", va="center", fontsize=9)
for row, emap, marker in ((1, true_map, "ko"), (0, learned_map, "C0s")):
    counts = emap.counts
    ax.plot(np.clip(1 - emap.modulus, lo, hi), np.full(emap.modulus.size, row), marker,
            ms=7, mfc="none")
    ax.text(1.5 * lo, row - 0.3, f"{counts['A-left'] + counts['A-right']} in A, "
            f"{counts['B']} in B, {counts['outside']} outside", fontsize=8)
ax.set(xscale="log", xlim=(lo, hi), ylim=(-0.7, 1.8), yticks=[0, 1],
       yticklabels=["learned", "true"], xlabel=r"$1 - |\lambda|$",
       title=f"modes on the regions of T = {T}, q = 7/8")
ax = axes[1]
for r in range(len(x0)):
    ax.loglog(k[1:], v_ratio[r, 1:], color="C0", lw=0.7, alpha=0.7,
              label=r"$V(x_k)/V(x_0)$" if r == 0 else None)
    ax.loglog(k[1:], norm_ratio[r, 1:], color="C1", lw=0.7, alpha=0.7,
              label=r"$\|x_k\|/\|x_0\|$" if r == 0 else None)
ax.loglog(k[1:], cert_learned.rho ** (2 * k[1:]), "C0--", lw=2,
          label=fr"$\rho^{{2k}}$ (bounds $V$), $1 - \rho$ = {cert_learned.margin:.2e}")
ax.loglog(k[1:], cert_learned.norm_bound(k[1:]), "C1--", lw=2,
          label=r"$\sqrt{\mathrm{cond}\,P}\,\rho^k$ (bounds $\|x_k\|$)")
ax.loglog(k[1:], cert_true.rho ** (2 * k[1:]), color="0.5", ls=":", lw=2,
          label=fr"true system's $\rho^{{2k}}$, $1 - \rho$ = {cert_true.margin:.2e}")
ax.axvline(T, color="0.6", lw=0.8)
ax.text(T, 2 * np.sqrt(cert_learned.condition), " T", va="top", color="0.4")
ax.set(xlabel="step k", ylim=(1e-4, 3 * np.sqrt(cert_learned.condition)),
       title="learned system: certified vs actual decay")
ax.legend(loc="lower left", fontsize=8)
show(fig, "tutorial04_modes_lyapunov")

# %% [markdown]
# What to read from it. The layer fits the impulse response over the $T$ lags it was trained
# on, but $T$ samples cannot tell a mode at $|\lambda| = 1 - 10^{-7}$ from one at
# $1 - 10^{-4}$: both barely move over the window. So the learned slowest pair lands far from
# the true slowest mode (often inside Region B, as in the full run), the certificate's margin
# $1 - \rho$ is orders of magnitude larger than the true system's, the memory is far shorter,
# and beyond $l = T$ the two impulse responses part. The certificate is tight here
# ($\rho = \rho(\bar A)$ because the realisation, made of rotation blocks, is normal): $V$
# follows $\rho^{2k}$ once the fast modes have died out. The norm bound
# $\sqrt{\mathrm{cond}\,P}\,\rho^k$ is looser by up to $\sqrt{\mathrm{cond}\,P}$, the price of a
# $P$ that weights the slow coordinates far more than the fast ones.

# %% [markdown]
# ## 6. An event-triggered sampler on the learned system
#
# Suppose we want to drive the state of the learned system to zero — erase the memory it
# holds at the end of the stream — with a digital controller that updates its input only when
# needed. Take the continuous-time system of section 4, $\dot x = A_c x + B_c u$ (time in
# samples of the stream), and the LQR feedback $u = Kx$ for $Q = I$, $R = 1$
# (`ETCSystem.from_lqr` converts python-control's $u = -K_{lqr}x$ into the toolkit's $u = Kx$).
# The Lyapunov rule (eq. 12 of the S4++ paper, `LyapunovRule(kappa=0.5)`) holds the input
# $u = Kx(t_i)$ until $\kappa\, x^\top M x - 2 x^\top P B K e \le 0$ with $e = x(t_i) - x(t)$,
# which guarantees $V(t) \le V(0)\,e^{-(1-\kappa)\iota t}$ with $\iota = \lambda_{\min}(M) /
# \lambda_{\max}(P)$ (eq. 13). The run starts from the layer's state after the training stream.
#
# The exact mode scans the trigger function on steps of `bracket_step` and locates each sign
# change to $10^{-10}$; we scan on 0.05 samples (the default $10^{-3}$ is meant for time scales
# of order 1; the fastest closed-loop time constant is printed below). State-feedback ETC is
# a property of the *realisation*: $P$, $M$, $Q$ and $K$ act on the state coordinates, so
# these numbers describe the exported realisation with this feedback, not the input–output
# map alone.

# %%
loop = ETCSystem.from_lqr(learned_c, np.eye(learned_c.n_states), np.eye(1))
closed = np.linalg.eigvals(loop.A + loop.B @ loop.K)
print(f"closed loop: slowest eigenvalue {closed.real.max():.3g} (open loop "
      f"{np.linalg.eigvals(learned_c.A).real.max():.3g}), fastest time constant "
      f"{1 / np.abs(closed.real).max():.3g} samples")
rule = LyapunovRule(kappa=0.5)
x_end = lt.simulate(learned, u_train[:-1]).final_state  # s_T = x_{T-1}: after the stream
etc = simulate_etc(loop, rule, x_end, horizon=float(T), bracket_step=0.05)
etc_bound_holds = bool(np.all(etc.V <= etc.V_bound * (1 + 1e-9)))
stats = lt.inter_event_statistics(loop, rule, ETC_RUNS, rng=rng, horizon=float(T),
                                  bracket_step=0.05)
print(f"from the end-of-stream state: {etc.n_events} events in {T} samples, inter-event time "
      f"min {etc.min_inter_event:.3g}, median {np.median(etc.inter_event_times):.3g}; "
      f"V(T)/V(0) = {etc.V[-1] / etc.V[0]:.3g}, eq. 13 bound {etc.V_bound[-1] / etc.V[0]:.3g}, "
      f"V below the bound throughout: {etc_bound_holds}")
print(f"over {ETC_RUNS} random unit initial states: {stats.events.sum()} events, "
      f"inter-event time min {stats.times.min():.3g}, median {np.median(stats.times):.3g}, "
      f"max {stats.times.max():.3g} samples")

# %%
fig, axes = plt.subplots(1, 2, figsize=(11, 3.6))
ax = axes[0]
ax.semilogy(etc.t, etc.V / etc.V[0], label=r"$V(x(t))/V(x(0))$")
ax.semilogy(etc.t, etc.V_bound / etc.V[0], "k--", lw=1, label="eq. 13 bound")
for ti in etc.event_times:
    ax.axvline(ti, ymin=0, ymax=0.04, color="C3", lw=0.6)
ax.set(xlabel="t (samples)", title=f"ETC on the learned system: {etc.n_events} events "
       "(red ticks)")
ax.legend()
ax = axes[1]
ax.hist(stats.times, bins=30, color="C0", alpha=0.8)
ax.set(xlabel="inter-event time (samples)", ylabel="count",
       title=f"inter-event times, {ETC_RUNS} random initial states")
show(fig, "tutorial04_etc")

# %% [markdown]
# What to read from it. The LQR gain barely moves the slowest mode (it is weakly reachable
# through $B_c$, and $R = 1$ makes input costly), so the guarantee of eq. 13, whose rate
# $\iota = \lambda_{\min}(M)/\lambda_{\max}(P)$ is set by that mode, promises little over $T$
# samples; the actual $V$ falls much faster while the fast modes die out, then decays at the
# slow rate. The sampler updates the input every few tens of samples instead of at every sample of
# the stream, and the gaps never shrink towards zero (no Zeno behaviour): the Lyapunov rule
# spends samples only when the state has moved enough to threaten the decay of $V$.

# %% [markdown]
# ## 7. Summary
#
# The numbers this run found (the test suite runs the quick mode and checks several of them:
# the learned system is stable and certified, the exported LDS reproduces the layer, and its
# impulse response is close to the true one over the training window).

# %%
summary = {
    "T": T,
    "alg1_loss": alg1_loss,
    "last_value_loss": last_value_loss,
    "exact_layer_error": exact_err,
    "s4_test_loss": s4_test_loss,
    "bridge_error": bridge_err,
    "rediscretisation_error": redisc_err,
    "true_spectral_radius": true_map.spectral_radius,
    "learned_spectral_radius": learned_map.spectral_radius,
    "learned_in_region_a": int(learned_map.in_region_a.sum()),
    "learned_in_region_b": int(learned_map.in_region_b.sum()),
    "impulse_error_T": impulse_err_T,
    "impulse_error_16T": impulse_err_16T,
    "alg1_impulse_error_T": alg1_impulse_err_T,
    "memory_true": memory_true,
    "memory_learned": memory_learned,
    "certificate_rho_true": cert_true.rho,
    "certificate_rho_learned": cert_learned.rho,
    "certificate_proves_stability": cert_learned.proves_stability,
    "certificate_holds_on_trajectories": certificate_holds,
    "etc_events": etc.n_events,
    "etc_min_inter_event": etc.min_inter_event,
    "etc_bound_holds": etc_bound_holds,
    "seconds": time.perf_counter() - STARTED,
}
print("summary")
for key, value in summary.items():
    print(f"  {key} = {value:.10g}" if isinstance(value, float) else f"  {key} = {value}")
