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
# # Memory and eigenvalue regions: why long memory makes learning hard
#
# A **linear dynamical system** (LDS) turns an input stream $u_t$ into an output stream
# $y_t$ through a hidden state $x_t$:
#
# $$x_{t+1} = A x_t + B u_t, \qquad y_t = C x_t + D u_t .$$
#
# Everything the system remembers about the past is in $x_t$, and how long it remembers is
# set by the eigenvalues of $A$. This tutorial measures that memory, shows how the
# length-generalization paper sorts systems into eigenvalue **Regions A and B** by it, and
# why a predictor that sees only the last $L$ inputs (its *context*) cannot predict a system
# whose memory is longer than $L$ — unless it is clever about it, which is the subject of
# the next tutorial.
#
# Everything here uses the public API of `lds_toolkit`.

# %%
import os

import matplotlib.pyplot as plt
import numpy as np

import lds_toolkit as lt

QUICK = os.environ.get("LDS_TUTORIAL_QUICK") == "1"  # smaller sizes, same code path
SAVE = os.environ.get("LDS_TUTORIAL_SAVE_FIGURES")   # a folder: write the figures as PNG


def show(fig, name):
    """Show a figure (and write it to $LDS_TUTORIAL_SAVE_FIGURES if set)."""
    if SAVE:
        os.makedirs(SAVE, exist_ok=True)
        fig.savefig(os.path.join(SAVE, f"tutorial01_{name}.png"), dpi=120, bbox_inches="tight")
    plt.show()


# %% [markdown]
# ## 1. One eigenvalue: the impulse response $a^t$
#
# Take a scalar system $x_{t+1} = a x_t + u_t$, $y_t = x_t$, and hit it with a unit impulse
# $u_0 = 1$. Its output is $y_t = a^{t-1}$ for $t \ge 1$: the input of time 0 is still
# present, scaled by $a^{t-1}$, $t-1$ steps later. `simulate` runs the recursion; the output
# convention `"standard"` is the one above ($y_t = C x_t + D u_t$, as in python-control).
# The impulse response decays by a factor $e$ every $1/(1-a)$ steps (since
# $a^{1/(1-a)} \approx e^{-1}$ for $a$ near 1), so an eigenvalue at distance $\delta = 1-a$
# from 1 remembers for about $1/\delta$ steps.

# %%
T = 2**9 if QUICK else 2**12
impulse = np.zeros((T, 1))
impulse[0] = 1.0

fig, ax = plt.subplots(1, 2, figsize=(10, 3.4))
for a in (0.5, 0.9, 0.99, 0.999):
    system = lt.LDS([[a]], [[1.0]], [[1.0]], dt=1.0)
    h = lt.simulate(system, impulse, output="standard").y[:, 0]
    ax[0].plot(np.arange(T), h, label=f"a = {a}")
    # memory_length: the lag after which only a fraction eps of the energy sum h_t^2 is left
    m = lt.memory_length(system, eps=1e-3)
    ax[1].bar(str(a), m.length)
    print(f"a = {a:5}: 1/(1-a) = {1 / (1 - a):7.0f}, memory length (99.9 % of the energy) "
          f"= {m.length:6d} steps")
ax[0].set_xscale("symlog", linthresh=1)
ax[0].set_xlabel("lag t")
ax[0].set_ylabel("impulse response $y_t$")
ax[0].legend()
ax[1].set_yscale("log")
ax[1].set_xlabel("eigenvalue a")
ax[1].set_ylabel("memory length (steps)")
fig.tight_layout()
show(fig, "impulse")

# %% [markdown]
# The memory length grows like $1/(1-a)$: an eigenvalue at $0.999$ remembers thousands of
# steps. A system with state dimension $n$ and a symmetric $A$ is a sum of $n$ such scalar
# systems (one per eigenvalue, in the eigenbasis), so its memory is that of its eigenvalue
# closest to 1.
#
# ## 2. The eigenvalue regions of the length-generalization paper
#
# Section 4.1 of *Provable length generalization in sequence prediction via spectral
# filtering* defines, for a horizon $T$ and a context exponent $q$ (context
# $L = T^q$), two regions of eigenvalues:
#
# * **Region B**$(q) = \left(1 - \frac{\log T}{8 T^q},\; 1 - \frac{1}{2T^{5/4}}\right)$:
#   eigenvalues whose memory ($\approx 1/\delta$ with $\delta$ between $1/(2T^{5/4})$ and
#   $\log T/(8T^q)$) is longer than the context but not so long that the response is flat
#   over the horizon. Theorem 5 gives no length generalization there.
# * **Region A** hugs Region B$(7/8)$ from both sides: a left part of eigenvalues that
#   forget within about $T^{7/8}$ steps, and a right part $[1 - 1/(2T^{5/4}), 1]$ of
#   eigenvalues so close to 1 that the response barely changes over $T$ steps.
#
# `eigenvalue_regions(T, q)` returns them; `random_lds(n, intervals)` draws a symmetric
# system with its eigenvalues spread over the given intervals (half in each part for
# Region A), $B \sim N(0, 1)$ and $C \sim N(0, 1/n)$.

# %%
regions = lt.eigenvalue_regions(T, q=7 / 8)
(a_left, a_right), b = regions.region_a, regions.region_b
print(f"T = {T}:")
print(f"  Region A, left part : [{a_left.low:.6f}, {a_left.high:.6f}]")
print(f"  Region B(7/8)       : ({b.low:.6f}, {b.high:.6f})")
print(f"  Region A, right part: [{a_right.low:.8f}, {a_right.high:.1f}]")

n = 16 if QUICK else 64
systems = {
    "A-left": lt.random_lds(n, [a_left], rng=0),
    "B": lt.random_lds(n, [b], rng=0),
    "A-right": lt.random_lds(n, [a_right], rng=0),
}
for name, system in systems.items():
    emap = lt.eigenvalue_map(system, T, q=7 / 8)
    print(f"  {name:8s} system: eigenvalues per region {emap.counts}, "
          f"spectral radius {emap.spectral_radius:.8f}")

# %% [markdown]
# ## 3. What a short context cannot see
#
# A predictor of $y_t$ with context $L$ sees $u_{t-1}, \dots, u_{t-L}$ (and past outputs).
# With unit white-noise inputs, the part of $y_t$ driven by inputs older than $L$ steps is
# invisible to it, and its variance is the **tail energy** $\sum_{j > L} h_j^2$ of the
# impulse response $h$.
#
# Raw tails are misleading, though: an eigenvalue very close to 1 has a long but almost
# *flat* response, and a predictor that starts from $\hat y_t = y_{t-1}$ (as Algorithm 1 of
# the paper does) gets that part for free. What such a predictor must still explain is
# $y_t - y_{t-1}$, whose impulse response is the difference $h_j - h_{j-1}$; differencing
# multiplies each eigenvalue's contribution by $(1-a)$. So we measure both, for contexts
# $L = T^q$, $q \in \{1/2, 5/8, 3/4, 7/8, 1\}$:

# %%
qs = [1 / 2, 5 / 8, 3 / 4, 7 / 8, 1.0]
contexts = [int(np.ceil(T**q)) for q in qs]


def impulse_response(system, length):
    """h_1, ..., h_length of a single-input single-output system (standard convention)."""
    u = np.zeros((length + 1, 1))
    u[0] = 1.0
    return lt.simulate(system, u, output="standard", return_states=False).y[1:, 0]


def tail_energy(h, L):
    """The sum of h_j^2 over the lags j > L (0 when L covers the whole response)."""
    return float(np.sum(h[L:] ** 2))


tail_drop = {}
fig, ax = plt.subplots(1, 2, figsize=(10, 3.4))
for name, system in systems.items():
    h = impulse_response(system, T)
    dh = np.diff(h, prepend=0.0)  # what is left to predict after "predict y_{t-1}"
    ax[0].plot(qs[:-1], [tail_energy(h, L) / tail_energy(h, 0) for L in contexts[:-1]],
               "o-", label=name)
    tails = [tail_energy(dh, L) for L in contexts]
    ax[1].plot(qs[:-1], tails[:-1], "o-", label=name)
    tail_drop[name] = tails[0] / tails[3]
    print(f"{name:8s}: differenced tail energy beyond T^(1/2) = {tails[0]:.2e}, "
          f"beyond T^(7/8) = {tails[3]:.2e} ({tails[0] / tails[3]:.0f}x less)")
ax[0].set_title("share of the response beyond the context")
ax[1].set_title(r"tail energy of the differenced response $h_j - h_{j-1}$")
for a in ax:
    a.set_yscale("log")
    a.set_xlabel("context exponent q ($L = T^q$)")
    a.legend()
fig.tight_layout()
show(fig, "tails")

# %% [markdown]
# Left: judged by its raw response, every system except A-left keeps most of its energy
# beyond every short context. Right: after differencing, the picture the paper's theory
# predicts appears.
#
# * **A-right** (eigenvalues within $1/(2T^{5/4})$ of 1): almost nothing is left to
#   predict — its long memory is carried by $y_{t-1}$.
# * **A-left** (memory up to about $T^{7/8}$ steps): a short context misses a lot, but the
#   tail collapses as the context approaches $T^{7/8}$. Context $T^{7/8}$ is enough;
#   $T^{1/2}$ is not.
# * **B** (eigenvalues too far from 1 to be flat, too close to be forgotten): the tail
#   shrinks only slowly, and at $T^{7/8}$ it is still far above A-left's. No context shorter
#   than the horizon is enough: Theorem 5 gives no length generalization here.
#
# A system whose eigenvalues are spread over both parts of Region A behaves like A-left
# (the right part costs nothing), which is what the paper's Figure 2 tests.
#
# ## 4. The same effect in the data
#
# The tail fraction is a statement about the best possible predictor. To see it in data,
# simulate each system on a white-noise input and fit the best linear predictor of
# $y_t - y_{t-1}$ from the last $L$ inputs by least squares (the predictor that knows the
# whole stream: an upper bound on what any online learner with that context can do).
# The data follow the paper's convention (`output="lengen"`: the coefficient of $u_{t-\ell}$
# in $y_{t+1}$ is $C A^\ell B$).

# %%
rng = np.random.default_rng(1)
u = rng.standard_normal((T, 1))


def best_context_loss(y, u, L):
    """Mean squared error of the least-squares fit of y_t - y_{t-1} on u_{t-1..t-L}."""
    X = np.column_stack([np.concatenate([np.zeros(j + 1), u[: T - j - 1, 0]])
                         for j in range(L)])
    target = np.diff(y[:, 0], prepend=0.0)
    coef, *_ = np.linalg.lstsq(X, target, rcond=None)
    return np.mean((X @ coef - target) ** 2)


Ls = [int(np.ceil(T**q)) for q in (1 / 4, 3 / 8, 1 / 2, 5 / 8, 3 / 4)]
fit_gain = {}
fig, ax = plt.subplots(figsize=(5.5, 3.4))
for name, system in systems.items():
    y = lt.simulate(system, u, output="lengen", return_states=False).y
    losses = [best_context_loss(y, u, L) for L in Ls]
    ax.loglog(Ls, losses, "o-", label=name)
    fit_gain[name] = losses[0] / losses[-1]
    print(f"{name:8s}: least-squares loss with context {Ls[0]}: {losses[0]:.2e}, "
          f"with {Ls[-1]}: {losses[-1]:.2e}")
ax.set_xlabel("context L")
ax.set_ylabel(r"mean $(\hat y_t - y_t)^2$, best fit")
ax.set_title("best linear predictor of $y_t - y_{t-1}$ with context L")
ax.legend()
fig.tight_layout()
show(fig, "best_context")

# %% [markdown]
# The same ordering appears: the A-left system's loss falls by orders of magnitude as the
# context grows, the B system's barely moves, and the A-right system is easy at every
# context. (These are in-sample fits with $L$ coefficients on $T$ samples, which flatter the
# long contexts; they are shown only up to $T^{3/4}$.)
#
# **Where next.** [Tutorial 2](02_spectral_filtering.md) shows how spectral filtering
# compresses a long context into a few fixed filters, and how Algorithm 2 removes the
# Region B obstacle altogether; [Systems and simulation](../systems.md) documents `LDS`,
# the four output conventions and the regions in full.

# %%
print("summary")
print(f"T = {T}")
slow = lt.LDS([[0.999]], [[1.0]], [[1.0]], dt=1.0)
print(f"memory_length_0999 = {lt.memory_length(slow).length}")
for name in systems:
    print(f"tail_drop_{name} = {tail_drop[name]:.6g}")
    print(f"fit_gain_{name} = {fit_gain[name]:.6g}")
