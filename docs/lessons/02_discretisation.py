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
# # Lesson 2 — Discretisation conventions
#
# *A continuous-time system becomes a sequence model once it is sampled. Two formulas that
# are both called "bilinear" give different models; the step size decides where the poles
# land.*
#
# You will: hand-code S4's bilinear discretisation (S4++ paper, eqs. 3–6) and Tustin's method
# as scipy and python-control define it, find the exact relation between their outputs, and
# watch the poles of three methods move with the step $\Delta$.
#
# *Time: about 85 min — the idea and the worked example ≈ 25 min, exercises 1–3 ≈ 15, 25
# and 15 min, the interpretation question ≈ 5 min.*

# %%
import os

import control
import matplotlib.pyplot as plt
import numpy as np

import lds_toolkit as lt
from lds_toolkit.teaching import lesson02, show_slider

QUICK = os.environ.get("LDS_LESSON_QUICK") == "1"

# %% [markdown]
# ## The idea: one continuous system, several sequence models
#
# The state-space model of S4 and its relatives is continuous in time:
#
# $$\dot x(t) = A x(t) + B u(t), \qquad y(t) = C x(t) + D u(t).$$
#
# To run it on a sequence $u_0, u_1, \dots$ we pick a step $\Delta$ and a rule for what the
# input does between samples. **Zero-order hold** keeps $u$ constant on each step and is
# exact for such inputs: $A_d = e^{A\Delta}$, $B_d = \int_0^\Delta e^{As}\,ds\,B$.
# The **bilinear (trapezoidal) rule** integrates $\dot x$ over one step with the
# trapezoid of its two end values; S4 (S4++ paper eq. 3) holds the input $u_k$ over the
# step that ends at sample $k$:
#
# $$x_k - x_{k-1} = \tfrac{\Delta}{2} A\,(x_k + x_{k-1}) + \Delta B u_k ,$$
#
# an *implicit* step ($x_k$ on both sides) that you will solve for $x_k = \bar A x_{k-1} +
# \bar B u_k$ in exercise 1. For one pole $p$ it gives $z = \frac{1 + p\Delta/2}{1 -
# p\Delta/2}$, which maps the left half-plane exactly onto the unit disc, so a stable system
# stays stable for every $\Delta$. Forward Euler ($A_d = I + \Delta A$) does not.
#
# **Two readings of the same $\bar A, \bar B$.** S4 (S4++ paper eqs. 3–4) lets the input
# enter the state *before* the output is read,
#
# $$x_k = \bar A x_{k-1} + \bar B u_k, \qquad y_k = C x_k ,$$
#
# while Tustin's method (scipy's `cont2discrete(..., "bilinear")`, python-control's
# `sample_system(..., "tustin")`) keeps the standard recursion
# $x_{k+1} = A_d x_k + B_d u_k$, $y_k = C_d x_k + D_d u_k$ with the same $A_d = \bar A$,
# $B_d = \bar B$, and changes the output map $(C_d, D_d)$ so that its transfer function is
# the continuous one at $s = \frac{2}{\Delta}\frac{z - 1}{z + 1}$ (exercise 2). Same poles,
# different models.

# %% [markdown]
# ## Worked example
#
# `lt.discretize(sys, dt, method)` has every method of python-control's `sample_system`
# (and gives its matrices); `lt.s4_bilinear(sys, dt)` gives S4's $(\bar A, \bar B, C, D)$,
# to be simulated with `output="s4"`. The lesson's system is a lightly damped oscillator
# (poles $-0.2 \pm 3i$) driven through a slow real pole ($-0.5$).

# %%
sysc = lt.LDS(**lesson02.EXAMPLE)             # continuous: dt = 0
print("continuous poles:", np.round(np.linalg.eigvals(sysc.A), 4))
dt = 0.1
for method in ("zoh", "tustin", "euler"):
    d = lt.discretize(sysc, dt, method)
    print(f"{method:7s}: |z| = {np.round(np.abs(np.linalg.eigvals(d.A)), 5)}")
ct_tustin = control.sample_system(control.ss(sysc.A, sysc.B, sysc.C, sysc.D), dt, "tustin")
print("same as python-control's Tustin:", np.allclose(lt.discretize(sysc, dt, "tustin").A,
                                                      ct_tustin.A))

# %% [markdown]
# A step response, sampled three ways, against the exact continuous one. Tustin's output
# $y_k$ approximates $y((k+\tfrac12)\Delta)$ and S4's $y((k+1)\Delta)$ (the input is held from
# $t = 0$): compare each at the time it approximates.

# %%
dt = 0.25
K = 40 if QUICK else 80
u = np.ones((K, 1))
t_fine = np.linspace(0, K * dt, 20 * K + 1)
y_exact = lt.simulate_continuous(sysc, t_fine, np.ones((t_fine.size, 1))).y[:, 0]
y_s4 = lt.simulate(lt.s4_bilinear(sysc, dt), u, output="s4").y[:, 0]
y_tu = lt.simulate(lt.discretize(sysc, dt, "tustin"), u).y[:, 0]
k = np.arange(K)
fig, ax = plt.subplots(figsize=(7, 3))
ax.plot(t_fine, y_exact, color="k", lw=1, label="continuous (exact, input held)")
ax.plot((k + 1) * dt, y_s4, "o", ms=3, label="S4 bilinear, at (k+1)Δ")
ax.plot((k + 0.5) * dt, y_tu, "x", ms=4, label="Tustin, at (k+1/2)Δ")
ax.set_xlabel("t")
ax.legend(fontsize=8)
plt.show()

# %% [markdown]
# ## Exercise 1 — S4's bilinear form (≈ 15 min)
#
# Solve the trapezoidal step above for $x_k$: collect the $x_k$ terms on the left, and read
# off $\bar A$ and $\bar B$ (on paper first; which matrix do you have to invert, and does it
# multiply $B$ too?). Write `s4_discretize(A, B, dt)` returning `(A_bar, B_bar)`. Use
# `np.linalg.solve` rather than an explicit inverse.

# %% tags=["exercise"]
def s4_discretize(A, B, dt):
    A, B = np.atleast_2d(A), np.atleast_2d(B)
    I = np.eye(A.shape[0])
    # BEGIN SOLUTION
    left = I - dt / 2 * A
    return np.linalg.solve(left, I + dt / 2 * A), np.linalg.solve(left, B * dt)
    # END SOLUTION


# %% tags=["check"]
lesson02.check_s4_bilinear(s4_discretize)

# %% [markdown]
# ## Exercise 2 — Tustin, as python-control does it (≈ 25 min)
#
# Tustin's model keeps $A_d = \bar A$, $B_d = \bar B$ and chooses $C_d, D_d$ so that
# $C_d (zI - \bar A)^{-1} \bar B + D_d = C (sI - A)^{-1} B + D$ at
# $s = \frac{2}{\Delta}\frac{z - 1}{z + 1}$. Derive them: with
# $M = (I - \tfrac{\Delta}{2}A)^{-1}$, write $zI - \bar A$ as $M$ times a matrix that is
# linear in $z$, compare it with $sI - A$ (a factor $\frac{2}{z + 1} = 1 - \frac{s\Delta}{2}$
# is left over), and split off the constant part (that part goes into $D_d$). Write
# `tustin(A, B, C, D, dt)` returning
# `(Ad, Bd, Cd, Dd)`; check your $C_d, D_d$ against `lt.discretize(..., "tustin")` on the
# example if you like.

# %% tags=["exercise"]
def tustin(A, B, C, D, dt):
    A, B, C, D = (np.atleast_2d(M) for M in (A, B, C, D))
    # BEGIN SOLUTION
    I = np.eye(A.shape[0])
    Ad, Bd = s4_discretize(A, B, dt)
    CM = np.linalg.solve((I - dt / 2 * A).T, C.T).T      # C M
    return Ad, Bd, CM, D + CM @ B * dt / 2
    # END SOLUTION


# %% tags=["check"]
lesson02.check_tustin(tustin)

# %% [markdown]
# ## Exercise 3 — the two outputs, exactly (≈ 15 min)
#
# From rest and with $D = 0$, Tustin's output is a fixed combination of S4's outputs. Find
# it: compare the two state recursions (which S4 state is Tustin's $x_k$?), then use your
# $C_d, D_d$ and the identity $M = \tfrac12(I + \bar A)$ (check it). What is $y^{s4}$ before
# the first sample? Write `tustin_from_s4(y_s4)` (an array `(T, d_out)`) returning Tustin's
# output.

# %% tags=["exercise"]
def tustin_from_s4(y_s4):
    y_s4 = np.asarray(y_s4, dtype=float)
    # BEGIN SOLUTION
    previous = np.concatenate([np.zeros_like(y_s4[:1]), y_s4[:-1]])
    return 0.5 * (y_s4 + previous)
    # END SOLUTION


# %% tags=["check"]
lesson02.check_tustin_from_s4(tustin_from_s4)

# %% [markdown]
# Read against the continuous step response, S4's $y_k$ is the trapezoidal rule at
# $(k+1)\Delta$ and Tustin's the average of two such values: a model trained with one
# reading and evaluated with the other is off by half a step — an error of order $\Delta$,
# not $\Delta^2$.

# %% [markdown]
# ## Slider — the step size
#
# Move $\Delta$. Zero-order hold puts each pole at $e^{p\Delta}$ (exact), Tustin at
# $\frac{1 + p\Delta/2}{1 - p\Delta/2}$, forward Euler at $1 + p\Delta$; the numbers under
# the figure give each method's largest $|z|$. Right: each method's frequency-response error
# against
# python-control's continuous response; Tustin's grows towards the Nyquist frequency, where
# its frequency warping $\omega \mapsto \tfrac{2}{\Delta}\tan(\omega\Delta/2)$ bites.

# %% tags=["slider"]
show_slider("lesson02.step")

# %% [markdown]
# ## Interpretation question (≈ 5 min)
#
# Move $\Delta$ from 0.01 to 1 on the slider (poles $-0.2 \pm 3i$ and $-0.5$). Which method
# puts a pole outside the unit circle, and from which step on? Set `interpretation` to one
# letter:
#
# * **a** — zero-order hold, once $\Delta$ passes about 0.5: $e^{p\Delta}$ grows with $\Delta$;
# * **b** — Tustin, once $\Delta$ passes the Nyquist limit $\pi/3$ of the resonance;
# * **c** — forward Euler, from $\Delta \approx 2|\mathrm{Re}\,p|/|p|^2 \approx 0.044$ on:
#   $|1 + p\Delta|^2 = 1 - 0.4\Delta + 9.04\Delta^2$ exceeds 1 for the lightly damped pair;
# * **d** — forward Euler, but only beyond $\Delta = 2/|p| \approx 0.66$, the limit of a real
#   pole.

# %% tags=["exercise"]
interpretation = "c"  # SOLUTION

# %% tags=["check"]
lesson02.check_interpretation(interpretation)

# %% [markdown]
# ## What to take away
#
# * "Bilinear" names a map of poles, not a model: S4's form and Tustin share $\bar A, \bar B$
#   and differ in when the output reads the state. `lt.s4_bilinear` + `output="s4"` is S4;
#   `lt.discretize(..., "tustin")` is scipy/python-control.
# * The bilinear map keeps stability for every $\Delta$; forward Euler does not.
# * Next: lesson 3 certifies stability with a Lyapunov function instead of eigenvalues.

# %% tags=["check"]
lesson02.summary(s4_discretize=s4_discretize, tustin=tustin, tustin_from_s4=tustin_from_s4,
                 interpretation=interpretation)
