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
# # Lesson 5 — Online gradient descent and regret
#
# *A learner that must predict before it sees the answer: how does it learn, how do we
# measure it, and what makes it blow up?*
#
# You will: write the **projected gradient step** that every online learner of the toolkit
# takes, compute the **best fixed predictor in hindsight** that regret compares against, and
# derive the **largest safe step size** from one line of algebra. The slider then shows what
# happens beyond it. The setting is Section 2 and Algorithm 1 of *Provable length
# generalization in sequence prediction via spectral filtering*; the filters themselves are
# lesson 6.
#
# *Time: about 90 min — the idea and the worked example ≈ 25 min, exercises 1–3 ≈ 20, 20
# and 20 min, the interpretation question ≈ 5 min.*

# %%
import os

import matplotlib.pyplot as plt
import numpy as np

import lds_toolkit as lt
from lds_toolkit.teaching import lesson05, show_slider

QUICK = os.environ.get("LDS_LESSON_QUICK") == "1"  # smaller sizes, same code

# %% [markdown]
# ## The idea: predict, suffer, update
#
# **Online prediction** is a game of $T$ rounds. At round $t$ the learner receives the input
# $u_t$, predicts $\hat y_t$ from what it has seen so far, then the true $y_t$ is revealed and
# it suffers the loss $\ell_t = \|\hat y_t - y_t\|^2$. No assumption is made on how the data
# are generated: the learner is judged against a class $\Pi$ of fixed predictors by its
# **regret**
#
# $$\mathrm{Regret}_T = \sum_{t=1}^{T} \ell_t(\hat y_t) - \min_{\pi \in \Pi}
#   \sum_{t=1}^{T} \ell_t(\hat y^{\pi}_t),$$
#
# the price of not knowing the future. A regret that grows sublinearly, $o(T)$, means the
# average loss approaches that of the best fixed predictor chosen *in hindsight*.
#
# The learners of the paper are **linear in their parameters**: with features
# $x_{t,i} \in \mathbb{R}^{d_\text{in}}$ computed from past inputs and an autoregressive part
# $b_t$ computed from past outputs (for Algorithm 1, $b_t = y_{t-1}$),
#
# $$\hat y_t = b_t + \sum_{i=1}^{k} M_i\, x_{t,i}, \qquad M_i \in
#   \mathbb{R}^{d_\text{out} \times d_\text{in}} .$$
#
# The loss is convex in $M = (M_1, \dots, M_k)$. **Online gradient descent** (OGD) takes one
# step per round against the gradient $\nabla_{M_i} \ell_t$ and projects back on the convex
# set $\mathcal K_r = \{M : \|M_i\|_F \le r \text{ for every } i\}$ (the nearest point of
# $\mathcal K_r$ in the Frobenius norm); exercise 1 derives both.
#
# For convex losses with gradients bounded by $G$ on a set of diameter $D$, the step
# $\eta_t = D / (G\sqrt t)$ gives $\mathrm{Regret}_T \le \tfrac32 G D \sqrt T$ (Hazan,
# *Introduction to Online Convex Optimization*, Theorem 3.1): the $O(\sqrt T)$ that the
# paper's Theorems 5 and 6 build on. The projection is what keeps $D$ finite.

# %% [markdown]
# ## Worked example
#
# A symmetric LDS with 16 eigenvalues in Region A (lesson 1), white-noise input, and the
# stream in the paper's convention, $y_{t+1} = \sum_{\ell \ge 0} C A^\ell B\, u_{t-\ell}$
# (`simulate(..., output="lengen")`). `SpectralFiltering` is Algorithm 1; `design(u, y)`
# returns its features $x_{t,i}$ as an array `X` of shape `(T, k, d_in)` and the
# autoregressive part $b_t$ as `base`, `fit_predict` runs the online game and keeps the
# per-round losses in `losses_`, and `BestInHindsight` solves for the best fixed $M$.

# %%
T = 512 if QUICK else 1024
system, u, y, r = lesson05.lesson_stream(T)
print(f"T = {T}, eigenvalues of A in [{system.eigenvalues().real.min():.4f}, "
      f"{system.eigenvalues().real.max():.7f}], r = ||B|| ||C|| = {r:.3f}")

learner = lt.SpectralFiltering(horizon=T, k=12, radius=r, lr=0.2, lr_schedule="constant")
X, base = learner.design(u, y)
learner.fit_predict(u, y, design=(X, base))  # the features do not depend on the step size

last_value = lt.LastValue()  # the trivial predictor  yhat_t = y_{t-1}
last_value.fit_predict(u, y)
best = lt.BestInHindsight(learner)  # the best M in K_r, knowing the whole stream
best.fit_predict(u, y, design=(X, base))

for name, m in (("Algorithm 1 (OGD)", learner), ("last value", last_value),
                ("best fixed M", best)):
    print(f"{name:18s} cumulative loss {m.losses_.sum():10.4g}")
print(f"regret of OGD against the best fixed M: "
      f"{learner.losses_.sum() - best.losses_.sum():.4g}")

# %% [markdown]
# The best fixed $M$ predicts this stream almost perfectly (the system lies in the class, up
# to the filters' approximation), so the regret is nearly all of OGD's loss, paid while it
# learns. `asymmetric_regret` recomputes the best-in-hindsight loss at every horizon $t$
# (here with the same context for learner and class, so it is the ordinary regret):

# %%
curve = lt.asymmetric_regret(learner, u, y, losses=learner.losses_, n_points=12)
fig, ax = plt.subplots(figsize=(6, 3))
ax.loglog(curve.t, curve.regret, "o-", label="regret of OGD, lr = 0.2")
ax.loglog(curve.t, curve.regret[-1] * np.sqrt(curve.t / curve.t[-1]), "k:",
          label=r"$\propto \sqrt{t}$")
ax.set_xlabel("t")
ax.legend()
plt.show()

# %% [markdown]
# The regret flattens once the learner has found $M$: far below the $\sqrt t$ worst case,
# because this stream is easy (noiseless, generated by a system in the class).
#
# ## Exercise 1 — the projected step (≈ 20 min)
#
# On paper first: differentiate $\ell_t = \|\hat y_t - y_t\|^2$ with respect to the block
# $M_i$ (write $\hat y_t$ entry by entry if the matrix calculus is new), and find the nearest
# point of $\mathcal K_r$ to a given $M$ (the constraint acts on each block on its own; what
# is the nearest point of a ball?). Write `projected_step(M, x, err, eta, r)`: `M` has shape
# `(k, d_out, d_in)` (the blocks $M_i$), `x` shape `(k, d_in)` (the features $x_{t,i}$),
# `err` shape `(d_out,)` (the error $e_t = \hat y_t - y_t$), `eta` is the step and `r` the
# radius (`np.inf` for no projection). Return the $M$ after one round of OGD. Do not modify
# `M` in place.

# %% tags=["exercise"]
def projected_step(M, x, err, eta, r):
    M, x, err = (np.asarray(a, dtype=float) for a in (M, x, err))
    # BEGIN SOLUTION
    M_new = M - eta * 2.0 * err[None, :, None] * x[:, None, :]  # grad_i = 2 e x_i^T
    norms = np.linalg.norm(M_new, axis=(1, 2))
    scale = np.minimum(1.0, r / np.maximum(norms, 1e-300))
    return M_new * scale[:, None, None]
    # END SOLUTION


# %% tags=["check"]
lesson05.check_projected_step(projected_step)

# %% [markdown]
# ## Exercise 2 — the best fixed predictor in hindsight (≈ 20 min)
#
# Without the constraint ($r = \infty$), the best fixed $M$ minimises
# $\sum_t \|b_t + \sum_i M_i x_{t,i} - y_t\|^2$. It is linear in the entries of $M$, so one
# least-squares solve finds them all: decide what the rows of the design matrix and of the
# target are, how the $k\,d_\text{in}\,d_\text{out}$ unknowns are arranged, and how you get
# the blocks $M_i$ (shape `(d_out, d_in)`) back out. Write `best_in_hindsight(X, base, y)`
# returning `M` of shape `(k, d_out, d_in)`.

# %% tags=["exercise"]
def best_in_hindsight(X, base, y):
    X, base, y = (np.asarray(a, dtype=float) for a in (X, base, y))
    # BEGIN SOLUTION
    n, k, d_in = X.shape
    W = np.linalg.lstsq(X.reshape(n, k * d_in), y - base, rcond=None)[0]
    return W.reshape(k, d_in, -1).transpose(0, 2, 1)
    # END SOLUTION


# %% tags=["check"]
lesson05.check_best_in_hindsight(best_in_hindsight)

# %% [markdown]
# ## Exercise 3 — how large may the step be? (≈ 20 min)
#
# The squared loss is convex but its gradient is not bounded: a step that is too large
# *overshoots*. Take one unprojected step on round $t$ and recompute the error $e_t'$ on the
# same round with the new $M$: derive $e_t'$ as a multiple of $e_t$ (the multiple depends on
# $\eta$ and on the features of round $t$ only). The step does not increase that error when
# the multiple has modulus at most 1. Write `safe_step(X)`: the largest constant $\eta$ for
# which this holds at **every** round of the stream with features `X` (shape
# `(T, k, d_in)`).

# %% tags=["exercise"]
def safe_step(X):
    return 1.0 / np.max(np.sum(np.asarray(X) ** 2, axis=(1, 2)))  # SOLUTION


# %% tags=["check"]
lesson05.check_safe_step(safe_step)

# %% [markdown]
# The bound is sufficient, not necessary: one round's overshoot can be undone by the next
# rounds, whose features point elsewhere. Where the learner really starts to diverge is an
# empirical question. Here is the toolkit's answer on our stream, from $\eta_\text{safe}$
# computed as in the exercise:

# %%
eta_safe = lesson05.eta_safe(X)
for factor in (1, 2, 4, 8):
    losses, diverged = lesson05.run_constant_step(learner, u, y, (X, base),
                                                  factor * eta_safe, np.inf)
    finite = losses[np.isfinite(losses)]
    print(f"eta = {factor} x eta_safe = {factor * eta_safe:.3f}: cumulative loss "
          f"{finite.sum():.4g}" + (f", overflow at t = {diverged}" if diverged is not None
                                   else ""))

# %% [markdown]
# ## Slider — step size, projection and regret
#
# Move the step size $\eta$ (in units of $\eta_\text{safe}$) and the radius $r$ (in units of
# $\|B\|\|C\|$, the radius the theorems ask for). Left: the online loss; right: the
# cumulative losses, whose gap to the black curve is the regret. Things to find:
#
# * below $\eta_\text{safe}$ the learner is slow (large regret), a few times above it the
#   regret is smallest, and somewhat further the unprojected learner **blows up**;
# * with the projection the iterates stay in $\mathcal K_r$, so even a step that is far too
#   large gives a bounded (if bad) loss: that boundedness is what the regret theorem needs;
# * shrink the radius well below $\|B\|\|C\|$ and compare the regret with and without the
#   projection (the question below asks why it changes).

# %% tags=["slider"]
show_slider("lesson05.step_size")

# %% [markdown]
# ## Interpretation question (≈ 5 min)
#
# At $\eta = 2\,\eta_\text{safe}$ with $r = \|B\|\|C\|$ the regret is about 4.4; shrink $r$
# to $0.1\,\|B\|\|C\|$ and it jumps to about 656. Why? Set `interpretation` to one letter:
#
# * **a** — the smaller radius makes the step diverge;
# * **b** — projection adds noise to every step;
# * **c** — the comparator (the best fixed $M$ in hindsight, unconstrained) lies outside the
#   small ball $\mathcal K_r$: the projected learner can never reach it, so its regret grows
#   linearly in $T$;
# * **d** — regret is always larger with a projection, whatever the radius.

# %% tags=["exercise"]
interpretation = "c"  # SOLUTION

# %% tags=["check"]
lesson05.check_interpretation(interpretation)

# %% [markdown]
# ## What to take away
#
# * OGD is one line: a gradient step $2 e_t x_{t,i}^\top$ on every block, then a projection
#   on $\|M_i\|_F \le r$. Regret compares it with the best fixed predictor in hindsight, a
#   least-squares problem.
# * The squared loss punishes large steps: $\eta \le 1/\max_t \|x_t\|^2$ is always safe, and
#   the stable range ends a few times above it. The projection turns a blow-up into a bounded
#   loss; a radius below $\|B\|\|C\|$ costs accuracy.
# * Next: lesson 6 builds the features $x_{t,i}$ — spectral filters.

# %% tags=["check"]
lesson05.summary(projected_step=projected_step, best_in_hindsight=best_in_hindsight,
                 safe_step=safe_step, interpretation=interpretation)
