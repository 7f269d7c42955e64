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
# # Lesson 9 — The Kalman filter, the optimal predictor, beside spectral filtering
#
# *Who knows the model predicts best. When does the learner that does not know it catch up?*
#
# You will: add noise to the LDS streams of lessons 5–7, build the **Kalman predictor** (the
# best any predictor can do on such a stream, on average), run **spectral filtering**
# (Algorithm 1, which knows nothing of the system) on the same stream, and measure its
# **regret against the Kalman predictor**. The answer to "does it catch up?" depends on
# *where* the noise enters — and the reason is one line of Algorithm 1.
#
# *Time: about 120 min — the idea, the derivation and the worked example ≈ 30 min,
# exercises 1–3 ≈ 20, 25 and 20 min, the interpretation question ≈ 5 min, the slider
# ≈ 20 min.*

# %%
import math
import os

import matplotlib.pyplot as plt
import numpy as np
import scipy.linalg as sla

import lds_toolkit as lt
from lds_toolkit.teaching import lesson09, show_slider

QUICK = os.environ.get("LDS_LESSON_QUICK") == "1"  # smaller sizes, same code

# %% [markdown]
# ## A noisy linear system
#
# Lessons 5–7 predicted noiseless streams. Real streams carry two kinds of noise:
#
# $$s_{t+1} = A s_t + B u_t + w_t, \qquad y_t = C s_t + v_t,$$
#
# **process noise** $w_t \sim N(0, Q)$, which enters the state and is remembered by the
# system, and **measurement noise** $v_t \sim N(0, R)$, which sits on one output and is
# forgotten at once. (`lt.simulate(system, u, process_noise=σ_w, obs_noise=σ_v,
# output="lengen")` draws $Q = \sigma_w^2 I$, $R = \sigma_v^2$.) No predictor can foresee
# $w_{t-1}$'s effect or $v_t$: a part of every loss is irreducible.
#
# **The best predictor.** With $A, B, C, Q, R$ known, the prediction of $y_t$ from
# $u_{<t}, y_{<t}$ with the least expected squared error is the conditional mean, and the
# Kalman filter computes it recursively: keep an estimate $\hat s_t$ of the state, predict
# $\hat y_t = C\hat s_t$, and once $y_t$ arrives move the estimate by a gain times the
# surprise (the *innovation*) $y_t - \hat y_t$:
#
# $$\hat s_{t+1} = A\hat s_t + B u_t + L_t\,(y_t - \hat y_t).$$
#
# The gain trades the model against the measurement: with $P_t$ the covariance of the
# estimation error $s_t - \hat s_t$ and $S_t = C P_t C^\top + R$ that of the innovation,
#
# $$L_t = A P_t C^\top S_t^{-1}, \qquad
#   P_{t+1} = A P_t A^\top + Q - L_t S_t L_t^\top .$$
#
# $P_t$ converges (for a stable $A$) and so does the gain: the **stationary** predictor uses
# the limit $L$ from the first step. Its innovations are white with covariance
# $S = C P C^\top + R$, so its expected loss per step is $\operatorname{tr} S$.

# %% [markdown]
# ## Worked example: the stream and the toolkit's predictor
#
# The system: two real eigenvalues in Region A of lesson 1 (one of them very close to
# 1: a long memory), white-noise input, process noise $\sigma_w = 0.3$ and almost no
# measurement noise. `lt.KalmanPredictor` is an online learner like those of lesson 5 (its
# `losses_` per step), except that it learns nothing: it is handed the model.

# %%
T = 1024 if QUICK else 2048
SIGMA_W, SIGMA_V = 0.3, 1e-3
system, u, y = lesson09.noisy_stream(T, SIGMA_W, SIGMA_V)
print("eigenvalues:", np.array2string(np.linalg.eigvals(system.A).real, precision=7))

kalman = lt.KalmanPredictor(system, SIGMA_W**2, SIGMA_V**2)
kalman.fit_predict(u, y)
gain = lt.stationary_kalman(system, SIGMA_W**2, SIGMA_V**2)
print(f"expected loss tr S = {gain.expected_loss:.4g}; measured mean loss "
      f"{kalman.losses_.mean():.4g}; predictor poles |eig(A - LC)| = "
      f"{np.array2string(np.abs(gain.poles), precision=4)}")
oracle = lt.LDSOracle(system)  # the model without the correction
oracle.fit_predict(u, y)
print(f"the model run open loop (LDSOracle) loses {oracle.losses_.mean():.4g} per step")

# %% [markdown]
# The open-loop model knows $A, B, C$ too, but ignores the measurements: the process noise
# it cannot see accumulates in the slow mode. The Kalman predictor's correction puts it back.
#
# ## Exercise 1 — the stationary gain (≈ 20 min)
#
# Write `predictor_gain(A, C, Q, R)` returning the stationary predictor gain $L$, an array of
# shape $(n, d_\text{out})$. The recursion above defines it as a limit; find that limit
# (iterate, or recognise the fixed-point equation: `scipy.linalg.solve_discrete_are` solves
# one of this family — read its docstring for which).

# %% tags=["exercise"]
def predictor_gain(A, C, Q, R):
    A, C, Q, R = (np.atleast_2d(np.asarray(m, dtype=float)) for m in (A, C, Q, R))
    # BEGIN SOLUTION
    P = sla.solve_discrete_are(A.T, C.T, Q, R)  # the filter's Riccati equation: the dual
    S = C @ P @ C.T + R
    return np.linalg.solve(S, C @ P @ A.T).T
    # END SOLUTION


# %% tags=["check"]
lesson09.check_predictor_gain(predictor_gain)

# %% [markdown]
# ## Exercise 2 — run the predictor (≈ 25 min)
#
# Write `kalman_predictions(A, B, C, L, u, y)`: the predictions $\hat y_t$, $t = 0 \dots T-1$,
# of the predictor with gain `L` started at $\hat s_0 = 0$, an array of the shape of `y`.
# Mind the order within a step: $\hat y_t$ may use $u_{<t}$ and $y_{<t}$ only.

# %% tags=["exercise"]
def kalman_predictions(A, B, C, L, u, y):
    # BEGIN SOLUTION
    s = np.zeros(A.shape[0])
    out = np.empty_like(np.asarray(y, dtype=float))
    for t in range(len(u)):
        out[t] = C @ s
        s = A @ s + B @ u[t] + L @ (y[t] - out[t])
    return out
    # END SOLUTION


# %% tags=["check"]
lesson09.check_kalman_predictions(kalman_predictions)

# %% [markdown]
# ## The learner that does not know the model
#
# Algorithm 1 of lesson 6 predicts $\hat y_t = y_{t-1} + \sum_i M_i \sum_j
# \sigma_i^{1/4}\phi_i[j]\,u_{t-1-j}$ and learns the $M_i$ by online gradient descent
# (here without projection, at lesson 5's safe constant step). Its regret in the paper is
# against the best *fixed predictor of its own class*; here we measure it against the
# Kalman predictor, the best predictor of *any* class:
#
# $$R_t = \sum_{s=1}^{t} \big(\ell_s(\text{Algorithm 1}) - \ell_s(\text{Kalman})\big).$$
#
# The average regret $R_t/t$ is the excess loss per step. Three streams, same system and
# input: no noise to speak of, process noise, measurement noise.

# %%
settings = {"almost noiseless": (1e-3, 1e-3), "process noise σ_w = 0.3": (0.3, 1e-3),
            "measurement noise σ_v = 0.3": (1e-3, 0.3)}
regret = {}
fig, ax = plt.subplots(figsize=(7, 3.4))
for name, (sw, sv) in settings.items():
    _, _, y_s = lesson09.noisy_stream(T, sw, sv)
    k = lt.KalmanPredictor(system, sw**2, sv**2)
    k.fit_predict(u, y_s)
    sf_loss = np.sum((lesson09.spectral_run(u, y_s) - y_s) ** 2, axis=1)
    regret[name] = (sf_loss, k.losses_)
    avg = np.cumsum(sf_loss - k.losses_) / np.arange(1, T + 1)
    ax.loglog(np.arange(1, T + 1), np.abs(avg) / lt.stationary_kalman(system, sw**2, sv**2)
              .expected_loss, label=name)  # |.|: early on the average can dip below 0
    tr_s = lt.stationary_kalman(system, sw**2, sv**2).expected_loss
    print(f"{name:28s}: mean loss Kalman {k.losses_.mean():.3g} (tr S = {tr_s:.3g}), "
          f"Algorithm 1 {sf_loss.mean():.3g}; R_T/T = {avg[-1] / tr_s:.3g} tr S")
ax.axhline(lesson09.CATCH_UP_SHARE, color="0.5", ls=":")
ax.set(xlabel="t", ylabel="(R_t / t) / tr S", title="average regret against Kalman")
ax.legend(fontsize=8)
plt.show()

# %% [markdown]
# With process noise, Algorithm 1's average excess loss falls to a small share of the
# optimum's loss; with measurement noise it stays about as large as the optimum's loss
# itself. (Almost noiseless, the optimum's loss is tiny, and the learner's own learning
# error is what remains.)
#
# ## Exercise 3 — from when on has it caught up? (≈ 20 min)
#
# Write `catch_up_time(losses, best_losses, tol)`: the smallest $t$ (steps counted from 1,
# `losses[t - 1]` being step $t$) such that the average regret $R_s/s$ is at most `tol` for
# **every** $s \ge t$ up to the end of the stream; `math.inf` when the average at the end is
# still above `tol`.

# %% tags=["exercise"]
def catch_up_time(losses, best_losses, tol):
    # BEGIN SOLUTION
    d = np.asarray(losses, dtype=float) - np.asarray(best_losses, dtype=float)
    avg = np.cumsum(d) / np.arange(1, len(d) + 1)
    t = math.inf
    for s in range(len(d), 0, -1):  # walk back from the end while the average is below
        if avg[s - 1] > tol:
            break
        t = s
    return t
    # END SOLUTION


# %% tags=["check"]
lesson09.check_catch_up_time(catch_up_time)

# %% [markdown]
# The slider below reports the catch-up time at a tolerance of a fifth of the optimum's loss
# ($0.2\operatorname{tr} S$, `lesson09.CATCH_UP_SHARE`) for any noise levels.

# %% [markdown]
# ## Interpretation question (≈ 5 min)
#
# Why does measurement noise keep the gap open? Algorithm 1's prediction starts from
# $y_{t-1}$. Take a stream with measurement noise only ($Q = 0$, $R = \sigma_v^2$); the
# Kalman predictor then loses $\sigma_v^2$ per step on average (the state is a function of
# the inputs: it is the model run open loop). What is the least expected loss per step of
# *any* predictor of the form $\hat y_t = y_{t-1} + f(u_{<t})$ — even one that knows the
# model? Set `interpretation` to one letter:
#
# * **a** — $\sigma_v^2$: knowing the model, it can match the Kalman predictor;
# * **b** — $2\sigma_v^2$: $y_{t-1}$ brings $v_{t-1}$ along, and $v_t$ comes on top;
# * **c** — $\sqrt2\,\sigma_v^2$: the two noises partly cancel;
# * **d** — $0$: with enough data any predictor learns the noise away.

# %% tags=["exercise"]
interpretation = "b"  # SOLUTION

# %% tags=["check"]
lesson09.check_interpretation(interpretation)

# %% [markdown]
# ## Why: the one line of Algorithm 1 that sees the noise
#
# With process noise only, $y_{t-1}$ carries what the system remembers of $w_{<t-1}$; for a
# slow mode, $y_t - y_{t-1}$ is mostly the input's effect plus the fresh noise, so starting
# from $y_{t-1}$ is nearly what the Kalman predictor does. With measurement noise,
# $y_{t-1} = C s_{t-1} + v_{t-1}$ hands the prediction the whole of $v_{t-1}$, which the
# Kalman predictor averages away. So the per-step gap never closes: Algorithm 1's regret
# against the optimum grows linearly, whatever its regret against its own class. Sublinear
# regret is a statement about a comparator; "catching up with the best predictor" needs the
# best predictor to lie in (or near) the learner's class.
#
# ## Slider — noise levels and the horizon
#
# Move $\sigma_w$, $\sigma_v$ and the horizon $t$ at which the regret is read. Left: the
# average regret in units of $\operatorname{tr} S$ (dotted: a fifth); right: the two losses.
# Watch the curve fall below the dotted line with process noise, stay above it as soon as
# $\sigma_v$ is comparable to $\sigma_w$, and the horizon at which it crosses.

# %% tags=["slider"]
show_slider("lesson09.regret")

# %% [markdown]
# ## What to take away
#
# * The Kalman predictor is the optimal one-step predictor of a noisy LDS: a gain from a
#   Riccati equation (the dual of lesson 10's), loss $\operatorname{tr} S$ per step.
# * A learner that does not know the model pays regret against it; whether that regret is
#   sublinear depends on whether the optimum is in the learner's class. Algorithm 1's
#   autoregressive term $y_{t-1}$ suits process noise on slow modes and passes measurement
#   noise straight into the prediction.
# * Next lesson: the other Riccati equation, LQR, on a model that was learnt.

# %% tags=["check"]
lesson09.summary(predictor_gain=predictor_gain, kalman_predictions=kalman_predictions,
                 catch_up_time=catch_up_time, interpretation=interpretation)
