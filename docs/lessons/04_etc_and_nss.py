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
# # Lesson 4 — Event-triggered control and the NSS perturbation
#
# *Sample a feedback loop only when its Lyapunov function asks for it; then replay the
# recorded samples a hair off their instants and watch the state explode.*
#
# You will: write the triggering function of the S4++ paper (Sec. 2.2, eq. 12), find the
# first event of a grid-monitored loop by flowing it exactly, and replay the recorded inputs
# open loop — the paper's "non-stable states" (NSS) example, its Fig. 1.
#
# *Time: about 90 min — the idea and the worked example ≈ 25 min, exercises 1–3 ≈ 10, 25
# and 25 min, the interpretation question ≈ 5 min.*

# %%
import os

import matplotlib.pyplot as plt
import numpy as np
from scipy.linalg import expm

import lds_toolkit as lt
from lds_toolkit.control import LyapunovRule
from lds_toolkit.control.nss import perturb_sample_times, replay_open_loop
from lds_toolkit.teaching import lesson04, show_slider

QUICK = os.environ.get("LDS_LESSON_QUICK") == "1"
system = lt.paper_system()       # A, B, K (u = K x), P, M: Tabuada (2007), see lesson 3
A, B, K, P, M = system.A, system.B, system.K, system.P, system.M

# %% [markdown]
# ## The idea: sample when the certificate asks
#
# A digital controller holds $u(t) = K x(t_i)$ on $[t_i, t_{i+1})$. With the sampling error
# $e(t) = x(t_i) - x(t)$ (eq. 9) the loop is $\dot x = (A + BK)x + BKe$ (eq. 10), and the
# Lyapunov function of lesson 3 changes at the rate
#
# $$\dot V = -x^\top M x + 2 x^\top P B K e . \tag{eq. 11}$$
#
# The second term is what sampling costs. The rule of eq. 12 samples as soon as it reaches a
# fraction $\kappa \in (0, 1)$ of the first:
#
# $$t_{i+1} = \inf\{t > t_i : \ g(t) = \kappa\, x^\top M x - 2 x^\top P B K e(t^-) \le 0\}.$$
#
# Between events $\dot V \le -(1-\kappa)\,x^\top M x$, hence
# $V(t) \le V(0)\,e^{-(1-\kappa)\iota t}$ (eq. 13). Small $\kappa$ asks for a fast decay and
# samples often.

# %% [markdown]
# ## Worked example
#
# `lt.simulate_etc(system, LyapunovRule(kappa), x0, mode="grid", grid_step=0.01)` checks the
# condition at $t = k h$ (the paper's grid); `mode="exact"` locates each crossing to 1e-10.

# %%
for mode in ("grid", "exact"):
    res = lt.simulate_etc(system, LyapunovRule(0.5), [1.0, 0.0], horizon=10.0, mode=mode)
    print(f"{mode:5s}: {res.n_events} events, first at {res.event_times[0]:.5f}, shortest "
          f"gap {res.min_inter_event:.4f}, V below the eq. 13 bound: {res.bound_satisfied}")
etc = lt.simulate_etc(system, LyapunovRule(0.5), [1.0, 0.0], horizon=10.0, mode="grid")

# %% [markdown]
# ## Exercise 1 — the trigger (≈ 10 min)
#
# Write `trigger(x, e, P, M, B, K, kappa)` returning $g = \kappa\,x^\top M x - 2\,x^\top P B K e$
# for one state `x` and one error `e` (1-D arrays).

# %% tags=["exercise"]
def trigger(x, e, P, M, B, K, kappa):
    x, e = np.asarray(x, dtype=float), np.asarray(e, dtype=float)
    return kappa * x @ M @ x - 2 * x @ P @ B @ K @ e  # SOLUTION


# %% tags=["check"]
lesson04.check_trigger(trigger)

# %% [markdown]
# ## Exercise 2 — the first event, by exact flow (≈ 25 min)
#
# Between two events the held state $x_i = x(t_i)$ does not move, so the loop is a linear
# system in $z = (x, x_i)$ with no input: find its matrix $A_z$ ($\dot z = A_z z$) and the
# exact map from $z(kh)$ to $z((k+1)h)$ (no Euler steps: the grid must be exact). Write
# `first_event(kappa, x0, h)` returning the first grid time $t = kh$, $k \ge 1$, at which your
# `trigger` is $\le 0$, for the paper's system started at $x(0) = x_0$ with $t_0 = 0$ an
# event (`np.inf` if none before $t = 10$).

# %% tags=["exercise"]
def first_event(kappa, x0, h):
    x0 = np.asarray(x0, dtype=float)
    n = x0.size
    # BEGIN SOLUTION
    Az = np.block([[A, B @ K], [np.zeros((n, 2 * n))]])
    step = expm(Az * h)
    z = np.concatenate([x0, x0])
    for k in range(1, int(round(10.0 / h)) + 1):
        z = step @ z
        x, e = z[:n], z[n:] - z[:n]
        if trigger(x, e, P, M, B, K, kappa) <= 0:
            return k * h
    return np.inf
    # END SOLUTION


# %% tags=["check"]
lesson04.check_first_event(first_event)

# %% [markdown]
# ## The NSS example: replaying the samples
#
# Record the ETC run's samples $(t_i, u_i = K x(t_i))$ and feed the inputs back **open
# loop**, $\dot x = A x + B u(t)$ with $u$ held between the instants. At the original
# instants the replay retraces the closed loop. The S4++ paper then shifts each instant by
# $\delta_i \sim U(-\varepsilon, \varepsilon)$ with $\varepsilon = h/2$ ("within the grid
# width") and the state reaches $10^6$ (its Fig. 1).

# %% [markdown]
# ## Exercise 3 — the open-loop replay (≈ 25 min)
#
# Write `replay(sample_times, inputs, t_end)`: $x(0) = (1, 0)$, input `inputs[i]` held on
# `[sample_times[i], sample_times[i+1])` (the last to `t_end`), return $x(t_\text{end})$,
# exactly. Between switching instants $\dot x = Ax + Bu$ with a constant $u$: the trick of
# exercise 2 works again (which quantity is constant now, and what is the augmented
# state?).

# %% tags=["exercise"]
def replay(sample_times, inputs, t_end):
    sample_times = np.asarray(sample_times, dtype=float)
    inputs = np.atleast_2d(np.asarray(inputs, dtype=float))
    # BEGIN SOLUTION
    n, m = A.shape[0], B.shape[1]
    big = np.block([[A, B], [np.zeros((m, n + m))]])
    x = np.array([1.0, 0.0])
    ends = np.append(sample_times[1:], t_end)
    for start, end, u in zip(sample_times, ends, inputs):
        end = min(end, t_end)
        if end > start:
            x = (expm(big * (end - start)) @ np.concatenate([x, u]))[:n]
    return x
    # END SOLUTION


# %% tags=["check"]
lesson04.check_replay(replay)

# %% [markdown]
# The toolkit's `replay_open_loop` does the same on a whole output grid. Perturbing the
# instants by at most half a grid step:

# %%
t = np.linspace(0, 10, 201 if QUICK else 1001)
x_orig = replay_open_loop(A, B, etc.sample_times, etc.inputs, np.array([1.0, 0.0]), t)
shifted = perturb_sample_times(etc.sample_times, 0.005, rng=0, grid_step=0.01)
x_pert = replay_open_loop(A, B, shifted, etc.inputs, np.array([1.0, 0.0]), t)
fig, ax = plt.subplots(figsize=(7, 3))
ax.semilogy(t, np.linalg.norm(x_orig, axis=1), label="replay at the original instants")
ax.semilogy(t, np.linalg.norm(x_pert, axis=1), label="replay at perturbed instants")
ax.set_xlabel("t")
ax.set_ylabel("|x(t)|")
ax.legend()
plt.show()
slope = np.polyfit(t[t >= 5], np.log(np.linalg.norm(x_pert[t >= 5], axis=1)), 1)[0]
print(f"max |x|: original {np.abs(x_orig).max():.3g}, perturbed {np.abs(x_pert).max():.3g}; "
      f"growth rate of log|x| on [5, 10]: {slope:.2f} (A's eigenvalues: "
      f"{np.round(np.linalg.eigvals(A).real, 3)})")

# %% [markdown]
# ## Slider — κ and ε
#
# Left: the grid-monitored loop and its events as κ moves (more events for small κ, the
# shortest gap shrinking). Right: the replay at the original and at perturbed instants as ε
# moves from $10^{-8}$ to $0.009$: the final $|x|$ grows in proportion to ε — there is no
# threshold below which the replay is safe.

# %% tags=["slider"]
show_slider("lesson04.etc")

# %% [markdown]
# ## Interpretation question (≈ 5 min)
#
# Move ε from $10^{-8}$ to $0.009$: the replay at perturbed instants reaches a max $|x|$ of
# about 8 at $\varepsilon = 10^{-8}$ and about $8 \cdot 10^3$ at $\varepsilon = 10^{-5}$, while the
# recorded loop stays near 1. What is going on? Set `interpretation` to one letter:
#
# * **a** — the open-loop plant is unstable: a switching instant shifted by $\delta$ injects
#   an error proportional to $\delta$, which then grows like $e^{\lambda_{\max} t}$; the closed
#   loop corrects such errors, a replay of recorded inputs cannot (the NSS example);
# * **b** — round-off: the replay integrates with too coarse a step;
# * **c** — the event-triggered loop itself is unstable; the replay only shows it;
# * **d** — the loop has too few events: a smaller κ (more events) makes the replay robust.

# %% tags=["exercise"]
interpretation = "a"  # SOLUTION

# %% tags=["check"]
lesson04.check_interpretation(interpretation)

# %% [markdown]
# **Why.** The replay is open loop and $A$ has eigenvalues 1 and 2: shifting a switch by
# $\delta_i$ applies a wrong input for $|\delta_i|$ seconds, a state error of size about
# $|B(u_i - u_{i-1})\,\delta_i|$ that $e^{A(t-s)}$ then multiplies by up to $e^{2(t-s)}$ —
# nothing corrects it. The growth rate of $\log|x|$ is the unstable eigenvalue, 2. The same
# shifted instants *with* feedback stay stable (`lt.nss_experiment` runs both); so the
# blow-up is a property of open-loop replay through an unstable $A$, and an SSM whose $A$ is
# Hurwitz damps such timing errors instead.

# %% [markdown]
# ## What to take away
#
# * Eq. 12 samples when the cost of sampling, $2x^\top PBKe$, reaches a fraction κ of the
#   certified decrease $x^\top M x$; eq. 13 then bounds $V$.
# * Exact flows ($e^{A_z h}$) make a grid-monitored loop computable to round-off.
# * Replaying recorded inputs open loop through an unstable plant amplifies any timing error
#   by $e^{\lambda_{\max} t}$: the S4++ paper's NSS phenomenon.

# %% tags=["check"]
lesson04.summary(trigger=trigger, first_event=first_event, replay=replay,
                 interpretation=interpretation)
