r"""Triggering rules of the event-triggered loop: when to sample ``x`` again.

``t_0 = 0`` is always a sample (the loop starts with ``u = K x(0)``) and

    t_{i+1} = inf { t > t_i : g(t) <= 0 }

for the rule's function ``g`` of the time since the last event ``τ = t - t_i``, the state
``x`` and the error ``e = x(t_i) - x`` (eq. 9), and, for a dynamic rule, an internal
variable ``η``. The rules here:

* :class:`TriggerRule` — the base class (subclass it for a rule of your own);
* :class:`LyapunovRule` — the paper's rule, eq. 12, ``g = κ xᵀMx - 2 xᵀPBKe``;
* :class:`RelativeErrorRule` — ``|e| >= σ |x|`` (Tabuada 2007);
* :class:`PeriodicRule` — every ``period`` (time-triggered, for reference);
* :class:`DynamicRule` — Girard's (2015) dynamic rule on eq. 12's function.

Each reports its guaranteed bound on ``V(t)`` (:meth:`TriggerRule.decay_bound`) where it has
one. The loop they act on is :class:`~lds_toolkit.control.etc_system.ETCSystem`; the sampler
that applies them is :func:`~lds_toolkit.control.etc_simulation.simulate_etc`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

import numpy as np

from .._validation import check_real
from .etc_system import ETCSystem

__all__ = ["DynamicRule", "LyapunovRule", "PeriodicRule", "RelativeErrorRule", "TriggerRule"]

_EPS = np.finfo(float).eps


class TriggerRule(ABC):
    """Base class of a triggering rule: the next event is the first ``t > t_i`` with g <= 0.

    Subclass and implement :meth:`function`; optionally :meth:`internal` (an internal
    variable ``dη/dt = -λ η + zᵀ W z`` with ``z = (x, x_i)``, flowed exactly),
    :meth:`decay_bound` (a guaranteed bound on V(t)) and :meth:`params`. ``g`` must be
    positive right after an event (``e = 0``), or the rule fires again at once (reported
    as Zeno behaviour).
    """

    name = "custom"

    @abstractmethod
    def function(self, system: ETCSystem, tau: np.ndarray, x: np.ndarray, e: np.ndarray,
                 eta: np.ndarray | None) -> np.ndarray:
        """``g`` at k points: ``tau`` (k,) time since the last event, ``x`` and ``e`` (k, n),
        ``eta`` (k,) or None. Returns shape (k,)."""

    def internal(self, system: ETCSystem) -> tuple[float, np.ndarray, float] | None:
        """``(λ, W, η0)`` of ``dη/dt = -λη + zᵀWz`` (W is 2n x 2n), or None."""
        return None

    def decay_bound(self, system: ETCSystem, t: np.ndarray, V0: float,
                    eta0: float | None) -> np.ndarray | None:
        """A guaranteed upper bound on V(t) under continuous monitoring, or None."""
        return None

    def params(self) -> dict:
        """The rule's name and parameters (JSON-friendly; ``ETCResult.rule`` holds them)."""
        return {"rule": self.name}

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.params().items() if k != "rule")
        return f"{type(self).__name__}({args})"


def _quad(x, Q, y):
    return np.einsum("ki,ij,kj->k", x, Q, y)


def _eq12(system: ETCSystem, kappa: float, x: np.ndarray, e: np.ndarray) -> np.ndarray:
    """Eq. 12's function ``κ xᵀMx - 2 xᵀPBKe`` at k points (x, e of shape (k, n))."""
    PBK = system.P @ system.B @ system.K
    return kappa * _quad(x, system.M, x) - 2.0 * _quad(x, PBK, e)


def _z_forms(system: ETCSystem, kappa: float) -> np.ndarray:
    """W with zᵀWz = κ xᵀMx - 2 xᵀPBKe for z = (x, x_i), e = x_i - x."""
    n = system.n
    Jx = np.hstack([np.eye(n), np.zeros((n, n))])
    Je = np.hstack([-np.eye(n), np.eye(n)])
    cross = Jx.T @ (system.P @ system.B @ system.K) @ Je
    return kappa * Jx.T @ system.M @ Jx - (cross + cross.T)


class LyapunovRule(TriggerRule):
    r"""The paper's rule (eq. 12): trigger when ``κ xᵀMx - 2 xᵀPBK e(t⁻) <= 0``.

    Between events ``dV/dt <= -(1-κ) xᵀMx``, hence (eq. 13, continuous monitoring)
    ``V(t) <= V(0) e^{-(1-κ) ι t}`` with ``ι = λ_min(M)/λ_max(P)``.

    Parameters
    ----------
    kappa : float in (0, 1)
    """

    name = "lyapunov"

    def __init__(self, kappa: float = 0.5):
        self.kappa = check_real("kappa", kappa, low=0.0, high=1.0, low_inclusive=False,
                                high_inclusive=False)

    def function(self, system, tau, x, e, eta):
        return _eq12(system, self.kappa, x, e)

    def decay_bound(self, system, t, V0, eta0):
        return V0 * np.exp(-(1.0 - self.kappa) * system.decay_rate * np.asarray(t))

    def params(self):
        return {"rule": self.name, "kappa": self.kappa}


class RelativeErrorRule(TriggerRule):
    r"""Relative-error rule (Tabuada 2007): trigger when ``|e| >= σ |x|``.

    Evaluated as ``g = σ²|x|² - |e|²`` (same zero set, smooth). With
    ``σ < σ* = λ_min(M) / (2 ||PBK||_2)`` it guarantees
    ``V(t) <= V(0) e^{-r t}``, ``r = (λ_min(M) - 2σ||PBK||_2) / λ_max(P)``; for larger σ no
    bound is reported.

    Parameters
    ----------
    sigma : float in (0, 1)
    """

    name = "relative"

    def __init__(self, sigma: float = 0.1):
        self.sigma = check_real("sigma", sigma, low=0.0, high=1.0, low_inclusive=False,
                                high_inclusive=False)

    @staticmethod
    def sigma_star(system: ETCSystem) -> float:
        """Largest σ covered by the Lyapunov argument."""
        PBK = system.P @ system.B @ system.K
        return float(np.linalg.eigvalsh(system.M)[0] / (2.0 * np.linalg.norm(PBK, 2)))

    def function(self, system, tau, x, e, eta):
        return self.sigma**2 * np.einsum("ki,ki->k", x, x) - np.einsum("ki,ki->k", e, e)

    def decay_bound(self, system, t, V0, eta0):
        PBK = system.P @ system.B @ system.K
        lm = np.linalg.eigvalsh(system.M)[0]
        rate = (lm - 2 * self.sigma * np.linalg.norm(PBK, 2)) / np.linalg.eigvalsh(system.P)[-1]
        if rate <= 0:
            return None
        return V0 * np.exp(-rate * np.asarray(t))

    def params(self):
        return {"rule": self.name, "sigma": self.sigma}


class PeriodicRule(TriggerRule):
    """Periodic sampling: an event every ``period`` (time-triggered control, for reference).

    ``g = period (1 - 8 eps) - τ``: the tiny margin makes a period that is a multiple of
    the grid step fire on that grid point despite rounding of ``k h``.
    """

    name = "periodic"

    def __init__(self, period: float = 0.1):
        self.period = check_real("period", period, low=0.0, low_inclusive=False)

    def function(self, system, tau, x, e, eta):
        return self.period * (1.0 - 8 * _EPS) - np.asarray(tau, dtype=float)

    def params(self):
        return {"rule": self.name, "period": self.period}


class DynamicRule(TriggerRule):
    r"""Dynamic triggering after Girard (2015), built on the paper's static function.

    With ``S(x, e) = κ xᵀMx - 2 xᵀPBKe`` (eq. 12's function) and an internal variable
    ``dη/dt = -λ η + S``, ``η(0) = η0 >= 0`` (continuous across events), trigger when
    ``η + θ S <= 0``. Then ``η(t) >= 0`` and ``W = V + η`` obeys
    ``dW/dt = -(1-κ) xᵀMx - λη``, so ``V(t) <= (V(0) + η0) e^{-min((1-κ)ι, λ) t}``.
    As ``θ -> ∞`` the rule becomes the static one; finite θ gives fewer events.

    Parameters
    ----------
    kappa : float in (0, 1)
    theta : float > 0
    lam : float > 0
        Decay rate of η (Girard's β(η) = λη).
    eta0 : float >= 0
    """

    name = "dynamic"

    def __init__(self, kappa: float = 0.5, theta: float = 1.0, lam: float = 1.0,
                 eta0: float = 0.0):
        self.kappa = check_real("kappa", kappa, low=0.0, high=1.0, low_inclusive=False,
                                high_inclusive=False)
        self.theta = check_real("theta", theta, low=0.0, low_inclusive=False)
        self.lam = check_real("lam", lam, low=0.0, low_inclusive=False)
        self.eta0 = check_real("eta0", eta0, low=0.0)

    def function(self, system, tau, x, e, eta):
        return eta + self.theta * _eq12(system, self.kappa, x, e)

    def internal(self, system):
        return self.lam, _z_forms(system, self.kappa), self.eta0

    def decay_bound(self, system, t, V0, eta0):
        rate = min((1.0 - self.kappa) * system.decay_rate, self.lam)
        return (V0 + self.eta0) * np.exp(-rate * np.asarray(t))

    def params(self):
        return {"rule": self.name, "kappa": self.kappa, "theta": self.theta,
                "lam": self.lam, "eta0": self.eta0}
