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
# # Lesson 3 — Lyapunov certificates
#
# *Eigenvalues say whether a linear system is stable; a Lyapunov function says so in a form
# that survives sampling, perturbations and learning — and it gives a rate.*
#
# You will: solve the Lyapunov equation by Kronecker products, compute the decay rate a
# certificate guarantees, do the same in discrete time, and watch a certificate appear and
# vanish as a feedback gain moves. The system is the S4++ paper's event-triggered-control
# example (Sec. 2.2, eqs. 7–8) — as it comes from Tabuada (2007): the matrices printed in
# the paper do not satisfy its own eq. 8 (`lds_toolkit.control.printed_matrices_check()`).
#
# *Time: about 85 min — the idea and the worked example ≈ 25 min, exercises 1–3 ≈ 20, 15
# and 20 min, the interpretation question ≈ 5 min.*

# %%
import os

import matplotlib.pyplot as plt
import numpy as np
from scipy.linalg import expm

import lds_toolkit as lt
from lds_toolkit.control import level_set, lyapunov_values, printed_matrices_check
from lds_toolkit.teaching import lesson03, show_slider

QUICK = os.environ.get("LDS_LESSON_QUICK") == "1"

# %% [markdown]
# ## The idea: an energy that always decreases
#
# For $\dot x = A x$, a quadratic $V(x) = x^\top P x$ with $P \succ 0$ is a **Lyapunov
# function** when it decreases along every trajectory:
#
# $$\dot V = x^\top (A^\top P + P A)\, x = -x^\top M x, \qquad M \succ 0. \tag{eq. 8}$$
#
# If $A$ is Hurwitz (every eigenvalue has $\mathrm{Re}\,\lambda < 0$), eq. 8 has exactly one
# solution $P$ for each $M$, and it is positive definite; if not, no $P \succ 0$ exists.
# A certificate also gives a **rate**: any $\iota > 0$ with $x^\top M x \ge \iota\,
# x^\top P x$ for every $x$ turns eq. 8 into $\dot V \le -\iota V$, so
#
# $$V(x(t)) \le V(x(0))\, e^{-\iota t};$$
#
# exercise 2 finds the rate that the eigenvalues of $P$ and $M$ guarantee.
#
# In discrete time, $x_{k+1} = A x_k$, the equation is $A^\top P A - P = -M$ and it has a
# solution $P \succ 0$ exactly when every $|\lambda| < 1$.

# %% [markdown]
# ## Worked example
#
# The plant $\dot x = A x + B u$ has eigenvalues 1 and 2 (unstable); the feedback $u = Kx$
# makes the closed loop $A + BK$ Hurwitz. `lt.continuous_lyapunov(A, M)` solves
# $A^\top P + P A = -M$ (python-control's `lyap(A, Q)` solves $AX + XA^\top + Q = 0$: a
# different equation, see the control page), and `lt.verify` checks a certificate.

# %%
system = lt.paper_system()                      # A, B, K, P, M of Tabuada (2007)
A_cl = system.A + system.B @ system.K
print("closed-loop eigenvalues:", np.round(np.linalg.eigvals(A_cl), 4))
P = lt.continuous_lyapunov(A_cl, system.M)
print("P =", np.round(P, 6).tolist(), " (the paper's P:", system.P.tolist(), ")")
check = lt.verify(A_cl, P, system.M)
print(f"residual {check.relative_residual:.1e}, P ≻ 0: {check.P_positive_definite}, "
      f"guaranteed decay rate {check.decay_rate:.4f}")
print("the printed matrices satisfy eq. 8:", printed_matrices_check()["printed_satisfies_eq8"])

# %%
t = np.linspace(0, 8, 200 if QUICK else 800)
x = np.array([expm(A_cl * s) @ [1.0, 0.0] for s in t])
V = lyapunov_values(P, x)
fig, ax = plt.subplots(1, 2, figsize=(9, 3.2))
for c in (0.25, 0.5, 1.0):
    pts = level_set(P, c * V[0])
    ax[0].plot(pts[:, 0], pts[:, 1], color="C0", lw=0.8)
ax[0].plot(x[:, 0], x[:, 1], color="k")
ax[0].set_aspect("equal")
ax[0].set_title("level sets of V and a trajectory")
ax[1].semilogy(t, V / V[0], color="k", label="V(t)/V(0)")
ax[1].semilogy(t, np.exp(-check.decay_rate * t), "--", color="C3", label="$e^{-ιt}$")
ax[1].legend()
plt.show()

# %% [markdown]
# ## Exercise 1 — the Lyapunov equation by Kronecker products (≈ 20 min)
#
# With $\mathrm{vec}$ stacking columns, $\mathrm{vec}(XYZ) = (Z^\top \otimes X)\,\mathrm{vec}(Y)$.
# Write each of the two terms of $A^\top P + P A$ as a product $XYZ$ with $Y = P$ (one of
# the factors is the identity), and turn eq. 8 into one linear system
# $L\,\mathrm{vec}(P) = -\mathrm{vec}(M)$. Write `lyapunov_kron(A, M)` that builds the
# $n^2 \times n^2$ matrix $L$ with `np.kron` and solves it (`vec` with `order="F"`; $O(n^6)$
# work: fine for small $n$, which is why libraries use Bartels–Stewart instead).

# %% tags=["exercise"]
def lyapunov_kron(A, M):
    A, M = np.asarray(A, dtype=float), np.asarray(M, dtype=float)
    n = A.shape[0]
    # BEGIN SOLUTION
    I = np.eye(n)
    L = np.kron(I, A.T) + np.kron(A.T, I)
    return np.linalg.solve(L, -M.reshape(-1, order="F")).reshape(n, n, order="F")
    # END SOLUTION


# %% tags=["check"]
lesson03.check_lyapunov_kron(lyapunov_kron)

# %% [markdown]
# ## Exercise 2 — the rate a certificate proves (≈ 15 min)
#
# Bound $x^\top M x$ from below and $V(x) = x^\top P x$ from above by $|x|^2$ times an
# eigenvalue of each (Rayleigh quotients of symmetric matrices), and combine the two bounds
# into the largest $\iota$ they guarantee with $x^\top M x \ge \iota V(x)$ for every $x$.
# Write `decay_rate(P, M)` returning it (`np.linalg.eigvalsh` returns the eigenvalues of a
# symmetric matrix; read its documentation for their order).

# %% tags=["exercise"]
def decay_rate(P, M):
    return np.linalg.eigvalsh(M)[0] / np.linalg.eigvalsh(P)[-1]  # SOLUTION


# %% tags=["check"]
lesson03.check_decay_rate(decay_rate)

# %% [markdown]
# The certified rate is conservative: the true decay of $V$ along the slowest mode is
# $2|\mathrm{Re}\,\lambda| = 1$ here, against $\iota \approx 0.353$. A different $M$ gives a
# different $P$ and a different $\iota$; the certificate is a choice.

# %% [markdown]
# ## Exercise 3 — discrete time (≈ 20 min)
#
# For $x_{k+1} = A x_k$ the equation is $A^\top P A - P = -M$. Turn it into a linear system
# for $\mathrm{vec}(P)$ with the same identity as in exercise 1 (which are $X$ and $Z$ in
# $A^\top P A$, and what multiplies $\mathrm{vec}(P)$ in the term $-P$?). Write
# `discrete_lyapunov_kron(A, M)`.

# %% tags=["exercise"]
def discrete_lyapunov_kron(A, M):
    A, M = np.asarray(A, dtype=float), np.asarray(M, dtype=float)
    n = A.shape[0]
    # BEGIN SOLUTION
    L = np.kron(A.T, A.T) - np.eye(n * n)
    return np.linalg.solve(L, -M.reshape(-1, order="F")).reshape(n, n, order="F")
    # END SOLUTION


# %% tags=["check"]
lesson03.check_discrete_lyapunov_kron(discrete_lyapunov_kron)

# %% [markdown]
# `lt.discrete_certificate(sys)` uses the discrete equation to prove a contraction factor
# per step for any discrete `LDS` — a trained S4 layer's exported system included (lesson 8).

# %%
sysd = lt.discretize(lt.LDS(A_cl, system.B, np.eye(2)), 0.1)
cert = lt.discrete_certificate(sysd)
print(f"ρ(A_d) = {cert.spectral_radius:.6f}, certified contraction ρ_P = {cert.rho:.6f}")

# %% [markdown]
# ## Slider — a gain that makes or breaks the certificate
#
# The feedback is scaled, $K(g) = g\,[1, -4]$, so $A + BK(g) =
# \begin{bmatrix}0 & 1\\ g - 2 & 3 - 4g\end{bmatrix}$: Hurwitz exactly for $0.75 < g < 2$
# (trace $< 0$, determinant $> 0$). Inside that range the certificate exists: its level sets
# are ellipses the trajectory crosses inwards, and $V(t)/V(0)$ stays under $e^{-\iota t}$.
# Outside, `continuous_lyapunov` refuses (the equation still has a solution, but it is
# indefinite) and the trajectory leaves.

# %% tags=["slider"]
show_slider("lesson03.gain")

# %% [markdown]
# ## Interpretation question (≈ 5 min)
#
# At $g = 1.9$ the closed loop is still Hurwitz, but the slider shows $\iota \approx 0.037$
# (against 0.35 at $g = 1$) and $\max \mathrm{Re}\,\lambda \approx -0.022$. What does the small
# $\iota$ say? Set `interpretation` to one letter:
#
# * **a** — the certificate has failed: $V(x(t))$ may now grow;
# * **b** — the loop is barely stable: an eigenvalue approaches the imaginary axis as
#   $g \to 2$, so $V$ itself decays slowly (at most like $e^{2 \max \mathrm{Re}\,\lambda\,
#   t}$) and any certified rate must be small; the bound $V \le V(0) e^{-\iota t}$ still
#   holds;
# * **c** — $\iota$ is the exact decay rate of $|x(t)|$, so $|x|$ halves every
#   $\ln 2 / 0.037$ time units;
# * **d** — a larger gain always makes a loop faster; $\iota$ is small only because $M$ was
#   chosen badly.

# %% tags=["exercise"]
interpretation = "b"  # SOLUTION

# %% tags=["check"]
lesson03.check_interpretation(interpretation)

# %% [markdown]
# ## What to take away
#
# * $A^\top P + PA = -M$ has a positive-definite solution exactly when $A$ is Hurwitz; the
#   solution certifies a decay rate $\lambda_{\min}(M)/\lambda_{\max}(P)$.
# * Conventions differ between libraries (which side $A^\top$ sits on, the sign of the right
#   side): check yours against an independent solve, as the exercises did.
# * Next: lesson 4 samples the feedback only when $V$ threatens to stop decreasing.

# %% tags=["check"]
lesson03.summary(lyapunov_kron=lyapunov_kron, decay_rate=decay_rate,
                 discrete_lyapunov_kron=discrete_lyapunov_kron, interpretation=interpretation)
