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
# # Lesson 1 — Memory and eigenvalue regions
#
# *How long does a linear dynamical system remember its input, and why does that decide
# whether a predictor with a short context can learn it?*
#
# You will: compute an impulse response by running the recursion yourself, derive the memory
# of one eigenvalue in closed form, and place eigenvalues on the **Regions A and B** of the
# length-generalization paper (*Provable length generalization in sequence prediction via
# spectral filtering*, Section 4.1). Every exercise has a check cell: run it after your
# answer; it prints `pass` or `not yet` with a hint.
#
# *Time: about 75 min — the idea and the worked example ≈ 20 min, exercises 1–3 ≈ 15 min
# each, the interpretation question ≈ 5 min.*

# %%
import os

import matplotlib.pyplot as plt
import numpy as np

import lds_toolkit as lt
from lds_toolkit.teaching import lesson01, show_slider

QUICK = os.environ.get("LDS_LESSON_QUICK") == "1"  # smaller sizes, same code

# %% [markdown]
# ## The idea: a state that forgets geometrically
#
# A discrete-time LDS maps inputs $u_t$ to outputs $y_t$ through a state $x_t$:
#
# $$x_{t+1} = A x_t + B u_t, \qquad y_t = C x_t + D u_t, \qquad x_0 = 0 .$$
#
# Unrolling the recursion writes the output as a convolution of the inputs with the
# **impulse response** (the Markov parameters) $h$:
#
# $$y_t = \sum_{j=0}^{t} h_j\, u_{t-j}, \qquad h_0 = D, \quad h_j = C A^{j-1} B \ (j \ge 1).$$
#
# In the eigenbasis of $A$, $A^{j}$ multiplies each mode by $\lambda^{j}$: an eigenvalue
# $\lambda$ makes the input of $j$ steps ago count with weight $|\lambda|^{j}$. For
# $\lambda = 1 - \delta$ that weight falls by a factor $e$ every $\approx 1/\delta$ steps, so
# **an eigenvalue at distance $\delta$ from the unit circle remembers for about $1/\delta$
# steps**. The toolkit measures memory as the lag after which only a fraction $\varepsilon$
# of the response's energy is left:
#
# $$\ell_\varepsilon = \min\Big\{\ell \ge 0 : \sum_{t \ge \ell} \|h_t\|^2 \le \varepsilon
# \sum_{t \ge 0} \|h_t\|^2\Big\}.$$

# %% [markdown]
# ## Worked example
#
# `LDS(A, B, C, D, dt=1.0)` is a discrete system (a python-control `StateSpace`);
# `impulse_response(L)` returns $h_0, \dots, h_{L-1}$ with shape `(L, d_out, d_in)`, and
# `memory_length` computes $\ell_\varepsilon$ without simulating (from the observability
# Gramian, however long the memory).

# %%
for a in (0.5, 0.9, 0.99, 0.999):
    system = lt.LDS([[a]], [[1.0]], [[1.0]], dt=1.0)
    h = system.impulse_response(5)[:, 0, 0]
    m = lt.memory_length(system, eps=1e-3).length
    print(f"a = {a:5}: h_0..h_4 = {np.round(h, 4)}, 1/(1-a) = {1 / (1 - a):6.0f}, "
          f"memory length = {m:5d} lags")

# %% [markdown]
# The memory grows like $1/(1-a)$. The same holds for the simulated response: `simulate`
# with a unit impulse gives exactly these numbers (`output="standard"` is the recursion
# above, as in python-control and `scipy.signal.dlsim`).

# %%
T = 256 if QUICK else 2048
u = np.zeros((T, 1))
u[0] = 1.0
fig, ax = plt.subplots(figsize=(7, 3))
for a in (0.9, 0.99, 0.999):
    system = lt.LDS([[a]], [[1.0]], [[1.0]], dt=1.0)
    y = lt.simulate(system, u, output="standard").y[:, 0]
    assert np.allclose(y, system.impulse_response(T)[:, 0, 0])
    ax.plot(y, label=f"a = {a}")
ax.set_xscale("symlog", linthresh=1)
ax.set_xlabel("lag t")
ax.set_ylabel("$y_t$ after $u_0 = 1$")
ax.legend()
plt.show()

# %% [markdown]
# ## Exercise 1 — the impulse response by recursion (≈ 15 min)
#
# $h_t$ is what the system outputs at time $t$ after a unit impulse on its input at
# $t = 0$, from rest. Write `impulse_response(A, B, C, D, length)` that produces
# $h_0, \dots, h_{\text{length}-1}$ by running the recursion itself (not matrix powers),
# as an array of shape `(length, d_out, d_in)`: entry $[t, o, a]$ is output $o$'s response
# to an impulse on input $a$. How do you get every input's response at once?

# %% tags=["exercise"]
def impulse_response(A, B, C, D, length):
    A, B, C, D = (np.atleast_2d(np.asarray(M, dtype=float)) for M in (A, B, C, D))
    # BEGIN SOLUTION
    h = np.empty((length, C.shape[0], B.shape[1]))
    X = np.zeros((A.shape[0], B.shape[1]))  # one state column per input channel
    for t in range(length):
        U = np.eye(B.shape[1]) if t == 0 else np.zeros((B.shape[1], B.shape[1]))
        h[t] = C @ X + D @ U
        X = A @ X + B @ U
    return h
    # END SOLUTION


# %% tags=["check"]
lesson01.check_impulse_response(impulse_response)

# %% [markdown]
# ## Exercise 2 — the memory of one eigenvalue (≈ 15 min)
#
# For the scalar system $(a, 1, 1, 0)$ with $|a| < 1$, $h_0 = 0$ and $h_t = a^{t-1}$ for
# $t \ge 1$. Write the tail $\sum_{t \ge \ell} h_t^2$ and the total energy as geometric
# series, take their ratio, and solve for the smallest whole $\ell$ whose tail fraction is
# at most $\varepsilon$ (on paper first: which factors cancel? which way do you round?).
# Write `memory_of(a, eps)` returning that number; $a$ may be negative.

# %% tags=["exercise"]
def memory_of(a, eps):
    return 1 + int(np.ceil(np.log(eps) / (2 * np.log(abs(a)))))  # SOLUTION


# %% tags=["check"]
lesson01.check_memory_formula(memory_of)

# %% [markdown]
# ## The eigenvalue regions
#
# A predictor with **context** $L = T^q$ sees the last $L$ inputs. Theorem 5 of the paper
# shows that Algorithm 1 trained with context $T^q$ competes with the full-context one
# (it *length-generalizes*) when every eigenvalue lies outside
#
# $$\text{Region B}(q) = \Big(1 - \frac{\log T}{8 T^{q}},\; 1 - \frac{1}{2T^{5/4}}\Big):$$
#
# eigenvalues left of it are forgotten within the context; eigenvalues right of it are so
# close to 1 that the response is almost flat over the horizon $T$ (and predicting
# $\hat y_t = y_{t-1}$ takes care of them). **Region A** hugs Region B from both sides:
# $[0.9(1 - \frac{\log T}{8T^{q}}),\, 1 - \frac{\log T}{8T^{q}}] \cup
# [1 - \frac{1}{2T^{5/4}},\, 1]$, end points included. `eigenvalue_regions(T, q)` returns
# them (natural log); the paper fixes $q = 7/8$ for the regions.

# %%
regions = lt.eigenvalue_regions(1024, q=7 / 8)
print("Region A, left :", tuple(regions.region_a[0]))
print("Region B       :", tuple(regions.region_b))
print("Region A, right:", tuple(regions.region_a[1]))
print(regions.classify([0.5, 0.99, 0.999, 0.999999]))

# %% [markdown]
# ## Exercise 3 — which region? (≈ 15 min)
#
# Write `region_of(lam, T, q)` for a real eigenvalue: return `"A-left"`, `"B"`, `"A-right"`
# or `"outside"`, from the formulas above (not by calling `eigenvalue_regions`). Mind the end
# points: Region B is open.

# %% tags=["exercise"]
def region_of(lam, T, q):
    # BEGIN SOLUTION
    good = 1 - np.log(T) / (8 * T**q)
    marginal = 1 - 1 / (2 * T**1.25)
    if 0.9 * good <= lam <= good:
        return "A-left"
    if good < lam < marginal:
        return "B"
    if marginal <= lam <= 1:
        return "A-right"
    return "outside"
    # END SOLUTION


# %% tags=["check"]
lesson01.check_region(region_of)

# %% [markdown]
# ## Slider — memory and region of an eigenvalue pair
#
# The system below has the complex pair $|\lambda| e^{\pm i\theta}$ (a rotation by $\theta$
# scaled by $|\lambda|$). Move $|\lambda|$ towards 1 and watch the memory grow like
# $1/(1 - |\lambda|)$ and the eigenvalue cross from Region A's left part through Region B
# into Region A's right part (for $T = 1024$). The angle makes the response oscillate but
# hardly changes its memory: the regions and the memory depend on the modulus.

# %% tags=["slider"]
show_slider("lesson01.memory")

# %% [markdown]
# ## Interpretation question (≈ 5 min)
#
# Three systems have one real eigenvalue each: $0.99$, $0.999$ and $0.99999$. A predictor
# sees the last $T^q = 1024^{7/8}$ (about 430) inputs of a stream of $T = 1024$. Which
# eigenvalue is the hard one for it, and why? Use your `memory_of` and `region_of` (or the
# slider) to decide, then set `interpretation` to one letter:
#
# * **a** — 0.99: its response is the largest at short lags;
# * **b** — 0.999: its memory (about 3450 lags) is longer than the context, yet its response
#   still decays within $T$: Region B;
# * **c** — 0.99999: its memory is the longest of the three, so it is the hardest;
# * **d** — none: a linear system is equally easy to predict whatever its eigenvalue.

# %% tags=["exercise"]
interpretation = "b"  # SOLUTION

# %% tags=["check"]
lesson01.check_interpretation(interpretation)

# %% [markdown]
# ## What to take away
#
# * The impulse response $h_j = C A^{j-1} B$ is the whole input–output behaviour; its decay
#   is set by the eigenvalues' moduli, and memory $\approx 1/(1 - |\lambda|)$.
# * Region B holds the eigenvalues whose memory is longer than the context $T^q$ but not
#   so long that the response is flat: the hard case for a short-context predictor.
# * Next: lesson 2 asks where the eigenvalues of a *sampled* continuous system land, which
#   depends on how it is discretised.

# %% tags=["check"]
lesson01.summary(impulse_response=impulse_response, memory_of=memory_of, region_of=region_of,
                 interpretation=interpretation)
