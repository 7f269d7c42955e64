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
# # Lesson 10 — LQR on a trained layer's LDS
#
# *Learning hands control a model; control hands learning a certificate.*
#
# You will: train a tiny **S4D layer** (lesson 8's recipe, a few seconds on a CPU), export it
# as an LDS, design the **linear-quadratic regulator** (LQR) on it with python-control,
# compute what a feedback costs, and read the closed loop with lesson 3's tools: its poles,
# and the **Lyapunov certificate** that the LQR's own Riccati matrix is. A slider moves the
# price of the input. This lesson needs torch (`pip install "lds_toolkit[nn]"`).
#
# *Time: about 110 min — the idea, the training and the worked examples ≈ 30 min,
# exercises 1–2 ≈ 25 and 30 min, the interpretation question ≈ 5 min, the slider ≈ 20 min.*

# %%
import os

import control
import numpy as np
import scipy.linalg as sla

import lds_toolkit as lt
from lds_toolkit.teaching import lesson08, lesson10, show_slider

QUICK = os.environ.get("LDS_LESSON_QUICK") == "1"  # smaller sizes, same code

# %% [markdown]
# ## The regulator
#
# For $x_{k+1} = A x_k + B u_k$ from a state $x_0$, the LQR chooses the inputs that minimise
#
# $$J = \sum_{k \ge 0} x_k^\top Q x_k + u_k^\top R u_k, \qquad Q \succeq 0,\; R \succ 0:$$
#
# $Q$ prices the state (here the output's energy, $Q = C^\top C$, so that
# $x_k^\top Q x_k = y_k^2$), $R$ the input. Bellman's principle on the quadratic cost-to-go
# $V(x) = x^\top P x$ says: at every step pick $u$ to minimise
# $x^\top Q x + u^\top R u + V(Ax + Bu)$. The minimiser is a linear feedback,
# $u = -Kx$, and $P$ must reproduce itself: the **discrete algebraic Riccati equation**, the
# twin of lesson 9's filter equation ($A \to A^\top$, $C \to B^\top$). Its solution makes
# the loop stable whenever $(A, B)$ is stabilisable.
#
# **Both ways.** *Learning → control*: a trained layer is a model, and the LQR needs nothing
# more than $(A, B)$ and the prices. *Control → learning*: the value function $V$ is a
# Lyapunov function of the closed loop, a certificate of how fast the controlled layer
# forgets; and as the input's price grows, $V$ becomes the output energy a state leaves
# behind — the layer's memory in lesson 1's sense.

# %% [markdown]
# ## Worked example: a trained layer, exported
#
# Lesson 8's recipe (`lesson08.train_capstone`): an S4D layer, one channel, trained to
# predict a Region A stream; `to_lds()` writes it as a python-control `StateSpace`.

# %%
T, STEPS, N = (512, 300, 4) if QUICK else (1024, 400, 8)
layer, true_system, fit = lesson08.train_capstone(T=T, steps=STEPS, d_state=N)
learned = layer.to_lds()
A, B, C = learned.A, learned.B, learned.C
print(f"{STEPS} training steps: loss {fit.history['loss'][0]:.3g} -> "
      f"{fit.history['loss'][-1]:.3g}; the layer is an LDS with {learned.n_states} states, "
      f"|eig(A)| = {np.array2string(np.unique(abs(np.linalg.eigvals(A)).round(6)))}")

# %% [markdown]
# ## Exercise 1 — the LQR gain (≈ 25 min)
#
# Write `lqr_gain(A, B, Q, R)`: the gain $K$ (shape $(m, n)$) of the optimal feedback
# $u = -Kx$ for the infinite-horizon discrete-time cost above. Derive it from the
# Bellman step (minimise over $u$ with $V(x) = x^\top P x$; what must $P$ satisfy?), then
# compute $P$ — `scipy.linalg.solve_discrete_are` solves one equation of this family (lesson
# 9 used it for the filter: which arguments now?).

# %% tags=["exercise"]
def lqr_gain(A, B, Q, R):
    A, B, Q, R = (np.atleast_2d(np.asarray(m, dtype=float)) for m in (A, B, Q, R))
    # BEGIN SOLUTION
    P = sla.solve_discrete_are(A, B, Q, R)
    return np.linalg.solve(R + B.T @ P @ B, B.T @ P @ A)
    # END SOLUTION


# %% tags=["check"]
lesson10.check_lqr_gain(lqr_gain)

# %% [markdown]
# On the trained layer, with python-control (`control.dlqr` returns $K$, the Riccati
# solution $S$ and the closed-loop poles): the output's energy against an input price
# $r = 10^{-2}$.

# %%
Q, R = C.T @ C, np.array([[1e-2]])
K, S, poles = control.dlqr(learned, Q, R)
print("open-loop |poles|:  ", np.array2string(np.sort(abs(np.linalg.eigvals(A))), precision=6))
print("closed-loop |poles|:", np.array2string(np.sort(abs(poles)), precision=6))

# %% [markdown]
# ## The Riccati matrix is a certificate
#
# At the optimum, $V(x) = x^\top S x$ satisfies
# $V(x_{k+1}) - V(x_k) = -(x_k^\top Q x_k + u_k^\top R u_k) \le 0$ along the loop: it is a
# Lyapunov function of $A - BK$ (lesson 3), with $M = Q + K^\top R K$. Check the identity,
# and compare the rate it proves with the toolkit's certificate (`M = I`) of the loop.

# %%
Acl = A - B @ K
M = Q + K.T @ R @ K
print("Acl' S Acl - S + M, largest entry:", f"{np.max(abs(Acl.T @ S @ Acl - S + M)):.1e}")
cert = lt.discrete_certificate(Acl)
print(f"closed loop: spectral radius {max(abs(poles)):.6f}, certified rho {cert.rho:.6f}; "
      f"the layer alone: {lt.discrete_certificate(A).rho:.6f}")

# %% [markdown]
# ## Exercise 2 — what a feedback costs (≈ 30 min)
#
# The LQR's $K$ is the best gain; what does *another* gain cost? Write
# `feedback_cost(A, B, K, Q, R, x0)`: the cost $J$ of the feedback $u_k = -K x_k$ from
# $x_0$ (a number, every term from $k = 0$ on). Two routes lead there: sum the series
# along a simulation until the terms no longer matter (to a relative $10^{-8}$), or find
# the matrix $X$ with $J = x_0^\top X x_0$ (which equation of lesson 3 does it solve?).

# %% tags=["exercise"]
def feedback_cost(A, B, K, Q, R, x0):
    A, B, K, Q, R = (np.atleast_2d(np.asarray(m, dtype=float)) for m in (A, B, K, Q, R))
    x0 = np.asarray(x0, dtype=float).reshape(-1)
    # BEGIN SOLUTION
    Acl = A - B @ K
    X = sla.solve_discrete_lyapunov(Acl.T, Q + K.T @ R @ K)
    return float(x0 @ X @ x0)
    # END SOLUTION


# %% tags=["check"]
lesson10.check_feedback_cost(feedback_cost)

# %% [markdown]
# ## The price of the input, and the layer's memory
#
# The optimal cost from the state an input impulse leaves ($x_0 = B$) is $B^\top S B$
# (dlqr's $S$). As $r$ grows, the gain shrinks and the cost tends to the **output energy**
# the layer itself leaves after the impulse, $\sum_k (C A^k B)^2 = B^\top W B$ with the
# observability Gramian $W$ ($A^\top W A - W = -C^\top C$, lesson 3's equation).

# %%
x0 = B[:, 0]
W = lt.discrete_lyapunov(A, C.T @ C)
print(f"output energy of the layer's impulse response: {x0 @ W @ x0:.6g}")
for r in (1e-4, 1e-2, 1.0, 1e2, 1e4, 1e6):
    K_r, S_r, E_r = control.dlqr(learned, Q, [[r]])
    print(f"r = {r:8.0e}: optimal cost {x0 @ S_r @ x0:.6g}, |K| = "
          f"{np.linalg.norm(K_r):.3g}, closed-loop spectral radius {max(abs(E_r)):.6f}")

# %% [markdown]
# ## Learning → control, tested: the regulator on the true system
#
# The layer was trained to predict the stream of `true_system`. Run the LQR designed on the
# layer on that system: an input impulse hits both, and from then on the input is
# $u_k = -K\hat x_k$, with the layer running beside the plant as an *internal model* of its
# state (fed the same inputs, no measurement needed). The layer predicts the cost
# $\sum_{k\ge1}\hat y_k^2 + r u_k^2$ of its own outputs; the true system's outputs give
# the cost achieved (`lesson10.internal_model_costs`, both in closed form by Lyapunov
# equations, checked against a simulation in the tests).

# %%
for r in (1e-4, 1e-2, 1.0, 1e2, 1e4):
    costs = lesson10.internal_model_costs(learned, true_system, r)
    ratio = costs["achieved"] / costs["predicted"]
    print(f"r = {r:6.0e}: predicted on the layer {costs['predicted']:.4g}, achieved on the "
          f"true system {costs['achieved']:.4g} (ratio {ratio:.3g})")

# %% [markdown]
# Where the feedback is strong (small $r$), the cost is spent in the first steps after the
# impulse, well inside the training length, and the cost achieved is close to the
# prediction. Where the input is dear the loop runs for thousands of steps, beyond the $T$
# the layer was trained on, and the true system's slow modes — which the layer imitated
# only over $T$ lags (lesson 8) — carry
# energy the layer never predicted. A model is as good for control as it is over the
# horizon the controller leaves to it.
#
# ## Interpretation question (≈ 5 min)
#
# The LQR on the trained layer weighs the output's energy ($Q = C^\top C$) against the
# input's ($R = r$). As $r$ grows without bound, where do the closed-loop poles go? Set
# `interpretation` to one letter:
#
# * **a** — to the origin: the controller cancels the dynamics;
# * **b** — to the layer's own poles: it is stable, and when input is dear the best control
#   is almost none;
# * **c** — onto the unit circle: expensive input leaves the loop marginally stable;
# * **d** — outside the unit disc: with too little input the loop becomes unstable.

# %% tags=["exercise"]
interpretation = "b"  # SOLUTION

# %% tags=["check"]
lesson10.check_interpretation(interpretation)

# %% [markdown]
# ## Slider — the price of the input
#
# Move $r$ over eight decades. Left: the layer's poles (×) and the loop's (○) by their
# distance to the unit circle and their angle; right: the output and the input after an
# input impulse. Cheap input pulls poles in and costs large gains; dear input leaves the
# layer to itself. Watch the certified rate follow the spectral radius, and the ratio of the
# cost achieved on the true system to the cost the layer predicts.

# %%
lesson10.use_layer(learned, true_system)  # the slider shows this layer (and the true system)

# %% tags=["slider"]
show_slider("lesson10.weight")

# %% [markdown]
# ## What to take away
#
# * A trained SSM layer is a model that control can use as it is: `to_lds()` and
#   `control.dlqr` are the whole bridge.
# * The LQR's Riccati matrix is a Lyapunov function of the loop it makes: the controller
#   comes with its certificate.
# * The price of the input moves the loop between the layer itself (its memory, the output
#   energy of lesson 1) and a loop that forgets fast at the cost of large gains.
# * A regulator designed on a learned model keeps its promise over the horizon the model
#   learnt: run on the true system, its cost matches the prediction when the loop settles
#   within the training length, not when it leaves the slow modes to themselves.
# * Lessons 9 and 10 are the two Riccati equations: the best predictor and the best
#   regulator of a linear system, duals of each other.

# %% tags=["check"]
lesson10.summary(lqr_gain=lqr_gain, feedback_cost=feedback_cost, interpretation=interpretation)
