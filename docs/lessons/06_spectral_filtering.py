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
# # Lesson 6 — Spectral filtering
#
# *How can a few fixed filters summarise an input history of any length, for every
# eigenvalue in $[0, 1]$ at once?*
#
# You will: derive the matrix $H_T$ of the length-generalization paper (eq. 3) in closed
# form, compute its top eigenvectors — the **spectral filters** — with the right order and
# sign, measure how well they represent every decaying impulse response, and find where
# float64 arithmetic stops resolving them. The slider then runs Algorithm 1 with $k$ filters
# and a short context.
#
# *Time: about 100 min — the idea and the worked example ≈ 25 min, exercises 1–4 ≈ 20, 15,
# 20 and 10 min, the interpretation question ≈ 5 min.*

# %%
import os
import textwrap
import warnings

import matplotlib.pyplot as plt
import numpy as np

import lds_toolkit as lt
from lds_toolkit.learning import FilterPrecisionWarning
from lds_toolkit.teaching import lesson06, show_slider

QUICK = os.environ.get("LDS_LESSON_QUICK") == "1"  # smaller sizes, same code

# %% [markdown]
# ## The idea: one subspace for all impulse responses
#
# Lesson 5's learner predicts with features $x_{t,i}$ of the past inputs. Which features? A
# symmetric LDS with eigenvalues $\alpha \in [0, 1]$ responds to an input with a sum of
# decaying exponentials; one eigenvalue contributes (weighted by $1 - \alpha$) the vector
#
# $$\mu_\alpha = (1 - \alpha)\,[1, \alpha, \alpha^2, \dots, \alpha^{T-1}] \in \mathbb{R}^T .$$
#
# If a fixed $k$-dimensional subspace of $\mathbb{R}^T$ contained every $\mu_\alpha$ up to a
# small error, then $k$ inner products of the input history with a basis of that subspace
# would be all a predictor needs, **whatever the eigenvalues and however long the memory**.
# The subspace that is best on average over $\alpha$ is spanned by the top eigenvectors of
#
# $$H_T = \int_0^1 \mu_\alpha \mu_\alpha^\top \, d\alpha \qquad \text{(eq. 3)},$$
#
# a positive semi-definite $T \times T$ matrix: for a unit vector $v$,
# $v^\top H_T v = \int_0^1 (v^\top \mu_\alpha)^2 d\alpha$ is the average energy of the
# $\mu_\alpha$ along $v$. Its eigenvalues $\sigma_1 \ge \sigma_2 \ge \dots$ fall off
# exponentially, so a handful of eigenvectors $\phi_1, \dots, \phi_k$ capture nearly all of
# it; the paper's Theorem 4 (from Hazan et al., 2017) turns that into an approximation error
# $\sim e^{-k/\log T}$ for every LDS with $0 \preceq A \preceq I$. Algorithm 1 then feeds the
# filtered inputs $x_{t,i} = \sigma_i^{1/4} \sum_j \phi_i[j]\, u_{t-1-j}$ to lesson 5's OGD.

# %% [markdown]
# ## Worked example
#
# `lt.spectral_filters(T, k)` returns $(\sigma_{1..k}, \phi_{1..k})$ without forming the
# $T \times T$ matrix (an FFT Hankel product; the exercises below build it densely, which is
# fine for small $T$). `filter_matrix(T)` forms $H_T$ itself.

# %%
T = 256 if QUICK else 1024
sigma, phi = lt.spectral_filters(T, 12)
print(f"T = {T}: sigma_1 = {sigma[0]:.4f}; sigma_i / sigma_1 for i = 1..12:")
print(np.array2string(sigma / sigma[0], precision=1))

fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 3.2))
ax1.semilogy(np.arange(1, 13), sigma / sigma[0], "o-")
ax1.set(xlabel="i", title=r"$\sigma_i / \sigma_1$")
for i in range(4):
    ax2.plot(phi[:, i], label=rf"$\phi_{i + 1}$")
ax2.set_xscale("symlog", linthresh=10)
ax2.set(xlabel="lag j", title="the first filters")
ax2.legend()
plt.show()

# %% [markdown]
# Each eigenvalue costs a roughly constant factor: the spectrum decays geometrically. The
# $i$-th filter changes sign $i - 1$ times (a property of this "totally positive" matrix),
# which is why the sign convention $\phi_i[0] > 0$ is well defined.
#
# ## Exercise 1 — the matrix H_T in closed form (≈ 20 min)
#
# Compute the entries of eq. 3: $(H_T)_{ij} = \int_0^1 (1-\alpha)^2 \alpha^{i+j}\, d\alpha$,
# with $i, j = 0, \dots, T - 1$, in closed form, on paper first: expand $(1 - \alpha)^2$ and
# integrate term by term, or integrate by parts twice; bring the result to a single fraction
# in $n = i + j$. Write `hankel_matrix(T)` returning the $T \times T$ array. The entries depend
# on $i + j$ only: a **Hankel** matrix.

# %% tags=["exercise"]
def hankel_matrix(T):
    # BEGIN SOLUTION
    n = np.add.outer(np.arange(T), np.arange(T)).astype(float)
    return 2.0 / ((n + 1) * (n + 2) * (n + 3))
    # END SOLUTION


# %% tags=["check"]
lesson06.check_hankel_matrix(hankel_matrix)

# %% [markdown]
# ## Exercise 2 — the spectral filters (≈ 15 min)
#
# Write `top_filters(H, k)` returning `(sigma, phi)`: the $k$ largest eigenvalues of the
# symmetric matrix `H`, **largest first**, and the matching unit eigenvectors as the columns
# of `phi` (shape `(T, k)`), each with the sign that makes its first entry positive.
# `np.linalg.eigh` is the right tool for a symmetric matrix; read its documentation for the
# order in which it returns them.

# %% tags=["exercise"]
def top_filters(H, k):
    # BEGIN SOLUTION
    w, v = np.linalg.eigh(H)
    w, v = w[::-1][:k], v[:, ::-1][:, :k]
    return w, v * np.sign(v[0])
    # END SOLUTION


# %% tags=["check"]
lesson06.check_top_filters(top_filters)

# %% [markdown]
# ## Exercise 3 — how well do k filters represent every impulse response? (≈ 20 min)
#
# The filters in the columns of `phi` (length $T$) are orthonormal. The best approximation
# of $\mu_\alpha$ by a combination of them is its orthogonal projection on their span; what
# is left over is the part they miss. Write `projection_residual(phi, alpha)` returning the
# size of that leftover relative to the size of $\mu_\alpha$ (Euclidean norms).
# `lesson06.impulse_vector(alpha, T)` gives $\mu_\alpha$.

# %% tags=["exercise"]
def projection_residual(phi, alpha):
    # BEGIN SOLUTION
    mu = lesson06.impulse_vector(alpha, phi.shape[0])
    return np.linalg.norm(mu - phi @ (phi.T @ mu)) / np.linalg.norm(mu)
    # END SOLUTION


# %% tags=["check"]
lesson06.check_projection_residual(projection_residual)

# %% [markdown]
# The toolkit's answer over the whole range of $\alpha$, for several $k$: the residual is small
# everywhere except within about $1/T$ of $\alpha = 1$, where $\mu_\alpha$ is nearly constant
# and weighted by $1 - \alpha \approx 0$ (the $y_{t-1}$ term of the algorithms takes care of
# those), and it falls by orders of magnitude with every few filters.

# %%
deltas = np.logspace(-6, 0, 40)  # 1 - alpha
_, phi16 = lt.spectral_filters(T, 16)
fig, ax = plt.subplots(figsize=(6, 3.2))
for k in (2, 4, 8, 16):
    res = lesson06.projection_residuals(phi16[:, :k], 1 - deltas)
    ax.loglog(deltas, res, label=f"k = {k}")
ax.axvline(1 / T, color="0.5", ls=":")
ax.set(xlabel=r"$1 - \alpha$", ylabel="relative residual", title=f"T = {T}")
ax.legend()
plt.show()

# %% [markdown]
# ## The float64 floor
#
# The exponential decay has a numerical consequence. A computed eigenvalue of $H_T$ carries
# an absolute error of about $\varepsilon\,\sigma_1$ ($\varepsilon = 2.2 \times 10^{-16}$,
# float64's unit round-off), whatever its size. Once $\sigma_i / \sigma_1$ falls below about
# $100\,\varepsilon$, $\sigma_i$ has fewer than two correct digits and $\phi_i$ is dominated by
# round-off: it differs between machines and BLAS libraries. The toolkit warns when asked
# for such filters:

# %%
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always", FilterPrecisionWarning)
    lt.spectral_filters(T, 30)
for w in caught:
    print(textwrap.fill(str(w.message), 90))

# %% [markdown]
# ## Exercise 4 — where to stop (≈ 10 min)
#
# Write `resolvable_count(sigma)`: given eigenvalues in descending order, return how many
# satisfy $\sigma_i / \sigma_1 \ge 100\,\varepsilon$ (`np.finfo(float).eps` is
# $\varepsilon$).

# %% tags=["exercise"]
def resolvable_count(sigma):
    sigma = np.asarray(sigma, dtype=float)
    return int(np.sum(sigma / sigma[0] >= 100 * np.finfo(float).eps))  # SOLUTION


# %% tags=["check"]
lesson06.check_resolvable_count(resolvable_count)

# %% [markdown]
# The count grows only slowly with $T$ (each eigenvalue costs a roughly constant factor and
# the floor is fixed), as the cell below shows: a few more filters for every factor 4 in $T$.
# Beyond the floor, `spectral_filters(..., precision="extended")` computes them in a wider
# arithmetic.

# %%
for n in (64, 256) if QUICK else (64, 256, 1024):
    print(f"T = {n:5d}: {lesson06.filters_above_floor(n)} filters above the float64 floor")

# %% [markdown]
# ## Slider — filters, context and the loss ratio
#
# Algorithm 1 on lesson 5's Region A stream ($T = 1024$), with $k$ filters and the context
# $L = \lceil T^q \rceil$: only the first $L$ taps of each filter are used (the history beyond
# them is cut off). The number shown is the last-quarter loss with context $T^q$ divided by
# the one with full context, at the same $k$ and step size. The $k$ slider stops at the last
# filter above the float64 floor. Things to find:
#
# * with one or two filters, read the loss ratio *and* the full-context loss; a handful of
#   filters reaches the plateau where more filters no longer help (here the learner's speed,
#   not the filters, limits the loss);
# * at $q = 7/8$ the short context is as good as the full one; at $q = 1/2$ it is tens of
#   times worse: some of Region A's eigenvalues are "bad" for $q = 1/2$ (lesson 7 explains
#   which).

# %% tags=["slider"]
show_slider("lesson06.filters")

# %% [markdown]
# ## Interpretation question (≈ 5 min)
#
# With context $T^{1/2} = 32$ the last-quarter loss ratio (short over full context) is about
# 34 with $k = 8$ filters and about 1.0 with $k = 1$. Does one filter length-generalize
# better? Set `interpretation` to one letter:
#
# * **a** — yes: fewer filters, less to learn, so a short context suffices;
# * **b** — no: with one filter both runs are equally poor (the full-context loss is about
#   $4 \cdot 10^{-3}$ of mean $y^2$, against $6 \cdot 10^{-7}$ with 8 filters); a ratio near 1
#   means nothing without the loss it divides;
# * **c** — the ratio 34 is a float64 artefact of the filters beyond the floor;
# * **d** — yes: Theorem 4 asks for a single filter per eigenvalue.

# %% tags=["exercise"]
interpretation = "b"  # SOLUTION

# %% tags=["check"]
lesson06.check_interpretation(interpretation)

# %% [markdown]
# ## What to take away
#
# * $H_T = \int_0^1 \mu_\alpha\mu_\alpha^\top d\alpha$ has entries $2/((n+1)(n+2)(n+3))$,
#   $n = i + j$; its top eigenvectors (largest first, $\phi_i[0] > 0$) are the spectral
#   filters.
# * $k$ filters represent every $\mu_\alpha$ with an error that falls exponentially in $k$,
#   except for $\alpha$ within $\sim 1/T$ of 1, handled by the autoregressive term.
# * Only a couple of dozen filters lie above float64's floor (23 at $T = 1024$); beyond it
#   they are round-off.
# * Next: lesson 7 asks which eigenvalues break a short context, and how a second
#   autoregressive term repairs it.

# %% tags=["check"]
lesson06.summary(hankel_matrix=hankel_matrix, top_filters=top_filters,
                 projection_residual=projection_residual, resolvable_count=resolvable_count,
                 interpretation=interpretation)
