"""Shared pieces of the length-generalization experiments (Figures 2-4 and regret scaling).

One task = one seed: draw a random symmetric LDS of hidden dimension n whose eigenvalues lie
in Region A (half from each part) or Region B of :func:`lds_toolkit.systems.eigenvalue_regions`
(defined with q = 7/8, as in the paper's Section 4.1), feed i.i.d. N(0, I) inputs, simulate
with the paper's convention (``simulate(..., output="lengen")``: C A^l B is the coefficient of
u_{t-l} in y_{t+1}, as the sentence below eq. 1 says; D = 0), and run the learner with context
T^q for every q of the sweep on that same stream.

Choices the paper leaves open (documented in docs/learning/spectral_filtering.md):

* inputs u_t ~ N(0, I), d_in = d_out = 1, B ~ N(0, 1), C ~ N(0, 1/n), D = 0
  (:func:`~lds_toolkit.systems.random_lds`); ``data_convention`` = ``"lengen"`` (the
  paper's reading) or ``"eq1-literal"`` (eq. 1 as printed, one step more delay: for the
  erratum's measurement);
* radius r = ||B||_2 ||C||_2 (Theorems 5 and 6 ask for r >= ||B|| ||C||);
* step size: chosen per task on a held-out validation stream of the same system (an
  independent input sequence) as the (schedule, lr) that gives the **full-context** learner
  the smallest mean loss over the last quarter (:func:`choose_step_size`: the grid
  ``lr_grid`` of each schedule is widened at an edge until the best value is interior, then
  refined by factors sqrt(2)); the shorter contexts use the same step size.  The choice never
  looks at q < 1 nor at the test stream;
* context length L = ceil(T^q) (q = 1: L = T, the full-context learner);
* ``final_loss`` = mean loss over the last quarter of the steps; curves are smoothed with a
  trailing moving average of ``smooth`` steps before plotting;
* the step size as a result (:func:`step_size_sweep`): for every constant step of
  ``sensitivity_lrs`` (a factor-2 grid, widened upwards until it finds the edge), the
  test-stream final loss at the shortest and at the full context, per seed.  The *stability
  edge* of a seed is the smallest step of the grid at which the full-context learner, on the
  validation stream, does no better than the trivial predictor y_{t-1} (or diverges); the
  *safe step* is ``safe_step_factor`` (1/8: three octaves) times the edge, a grid point well
  inside the stable range.  The summary gives the effect (short / full final loss) at the
  chosen step and at the safe step, per seed.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from ...learning import (
    BestInHindsight,
    FilterPrecisionWarning,
    LastValue,
    LearnerDivergedError,
    SpectralFiltering,
    SpectralFilteringAR2,
)
from ...systems import eigenvalue_regions, random_lds, simulate

Q_VALUES = [1 / 2, 5 / 8, 3 / 4, 7 / 8, 1.0]
ALGORITHMS = {1: SpectralFiltering, 2: SpectralFilteringAR2}
#: starting step-size grid per schedule (widened/refined by :func:`choose_step_size`)
LR_GRID = {"constant": [0.025, 0.05, 0.1, 0.2, 0.4, 0.8],
           "inv_sqrt": [0.25, 0.5, 1.0, 2.0, 4.0, 8.0]}
#: constant step sizes at which the effect size is measured on the test stream (factor 2;
#: widened upwards by :func:`step_size_sweep` until the stability edge is inside)
SENSITIVITY_LRS = [0.0125, 0.025, 0.05, 0.1, 0.2, 0.4, 0.8, 1.6]
#: the safe step is this factor times the stability edge (three octaves below it)
SAFE_STEP_FACTOR = 1 / 8
#: seeds per scale: enough that another base seed does not flip a claim's verdict
SEEDS = {"quick": 16, "paper": 16}


def context_length(T: int, q: float) -> int:
    """L = ceil(T^q), at most T (round-off guarded: 2^14 ** 0.5 is exactly 128)."""
    return int(min(T, math.ceil(T**q - 1e-9)))


def qkey(q: float) -> str:
    return f"{q:g}"


def scale_config(scale: str, seeds: int | None, **extra) -> dict:
    # medium = paper: Figures 2-4 at T = 2^14, n = 512 run on a CPU in minutes
    if scale == "quick":
        cfg = {"T": 2**10, "k": 16, "n": 64, "seeds": SEEDS["quick"]}
    else:
        cfg = {"T": 2**14, "k": 24, "n": 512, "seeds": SEEDS["paper"]}
    cfg.update(region_q=7 / 8, q_values=Q_VALUES, d_in=1, d_out=1, lr_grid=LR_GRID,
               sensitivity_lrs=SENSITIVITY_LRS, safe_step_factor=SAFE_STEP_FACTOR,
               data_convention="lengen", filter_precision="double", filters="exact")
    cfg.update(extra)
    if seeds is not None:
        cfg["seeds"] = seeds
    return cfg


def derive_config(config: dict) -> dict:
    """Entries computed from others: the smoothing window T/64 of the figures."""
    config["smooth"] = max(config["T"] // 64, 1)
    return config


def draw_system(config, region: str, rng):
    T = config["T"]
    regions = eigenvalue_regions(T, config["region_q"])
    intervals = list(regions.region_a) if region == "A" else [regions.region_b]
    return random_lds(config["n"], intervals, d_in=config["d_in"], d_out=config["d_out"],
                      symmetric=True, rng=rng)


def streams(system, T, rng, convention: str = "lengen"):
    """Validation and test streams (u, y) of the same system, independent inputs.

    Each comes from its own child of ``rng``, so the stream of length T is a prefix of the
    stream of length 2T drawn from the same state (the horizons of ``regret-scaling`` are
    nested)."""
    val, test = rng.spawn(2)
    u = np.stack([g.standard_normal((T, system.n_inputs)) for g in (val, test)])
    y = simulate(system, u, output=convention, return_states=False).y
    return (u[0], y[0]), (u[1], y[1])


def final_loss(losses) -> float:
    """Mean loss over the last quarter of the steps."""
    n = len(losses)
    return float(np.mean(losses[n - max(n // 4, 1):]))


class _Refits:
    """One learner's feature map on one stream ``(u, y)``, run with many step sizes: the
    features do not depend on the step, so they are built once (``design``), not once per
    fit (the FFT convolution was ~60 % of a fit at T = 2^10). Same numbers as a fresh
    ``fit_predict`` per step."""

    def __init__(self, learner, u, y):
        self.learner, self.u, self.y = learner, u, y
        self.design = learner.design(u, y)

    def losses(self, lr: float, schedule: str) -> np.ndarray | None:
        """Per-step losses of the learner with step ``lr`` and ``schedule`` (None: diverged)."""
        run = self.learner.clone(lr=lr, lr_schedule=schedule)
        try:
            run.fit_predict(self.u, self.y, design=self.design)
        except LearnerDivergedError:
            return None
        return run.losses_


def _validation_loss(refits: _Refits, schedule, lr, criterion):
    losses = refits.losses(lr, schedule)
    if losses is None:
        return math.inf
    val = final_loss(losses) if criterion == "final" else float(np.sum(losses))
    return val if np.isfinite(val) else math.inf


def _argbest(vals: dict) -> float:
    """The step size with the smallest loss (the smaller step on a tie)."""
    return min(vals, key=lambda lr: (vals[lr], lr))


def _filters_option(config: dict) -> dict:
    """``filters=`` from the config where the experiment has the entry (regret-scaling and the
    lengen experiments; lds-streams and older configs keep the learners' default)."""
    return {"filters": config["filters"]} if "filters" in config else {}


def choose_step_size(cls, config, radius, u, y, criterion: str = "final",
                     max_extend: int = 8, context: int | None = None):
    """(schedule, lr) minimising the learner's loss on the stream (u, y): the full-context
    learner by default, the learner with context ``context`` if given.

    For each schedule of ``config["lr_grid"]``: evaluate the grid; while the best value sits
    at an edge, add the next value beyond it (factor 2, at most ``max_extend`` times); then
    try the geometric midpoints (factor sqrt(2)) on both sides of the best.  A diverged
    learner counts as infinitely bad.  The chosen value is then *interior*: evaluated
    neighbours on both sides are worse (``search["interior"]`` says so, and is False only if
    the extension limit was hit).  ``criterion``: ``"final"`` (mean loss over the last
    quarter) or ``"total"`` (summed loss).

    Returns
    -------
    (schedule, lr), search : tuple, dict
        ``search`` maps each schedule to its evaluated ``[[lr, loss], ...]`` (sorted by lr;
        ``None`` for a diverged run) and holds ``"chosen"`` and ``"interior"``.
    """
    search, best, best_val = {}, None, math.inf
    interior_of = {}
    refits = _Refits(cls(horizon=config["T"], k=config["k"], context=context, radius=radius,
                         filter_precision=config["filter_precision"],
                         **_filters_option(config)), u, y)

    def loss(schedule, lr):
        return _validation_loss(refits, schedule, lr, criterion)

    for schedule, grid in config["lr_grid"].items():
        vals = {float(lr): loss(schedule, lr) for lr in grid}

        for _ in range(max_extend):
            lrs = sorted(vals)
            b = _argbest(vals)
            if b == lrs[0] and np.isfinite(vals[b]):
                new = lrs[0] / 2
            elif b == lrs[-1] and np.isfinite(vals[b]):
                new = lrs[-1] * 2
            else:
                break
            vals[new] = loss(schedule, new)
        b = _argbest(vals)
        for new in (b / math.sqrt(2), b * math.sqrt(2)):
            if new not in vals:
                vals[new] = loss(schedule, new)
        b = _argbest(vals)
        lrs = sorted(vals)
        interior_of[schedule] = (np.isfinite(vals[b]) and lrs[0] < b < lrs[-1])
        search[schedule] = [[lr, vals[lr] if np.isfinite(vals[lr]) else None] for lr in lrs]
        if vals[b] < best_val:
            best, best_val = (schedule, b), vals[b]
    if best is None:
        raise RuntimeError("every step size of lr_grid diverged on the validation stream")
    search["chosen"] = list(best)
    search["interior"] = bool(interior_of[best[0]])
    return best, search


def _constant_final_loss(refits: _Refits, lr) -> float:
    """Final loss of the learner of ``refits`` with the constant step ``lr``; inf if
    diverged."""
    losses = refits.losses(lr, "constant")
    if losses is None:
        return math.inf
    val = final_loss(losses)
    return val if np.isfinite(val) else math.inf


def step_size_sweep(make, lrs, L_short, val, test, trivial_val: float,
                    safe_factor: float = SAFE_STEP_FACTOR, max_extend: int = 4) -> dict:
    """The effect size against the constant step size, and the stability edge.

    For every step of ``lrs`` (increasing; widened by factors 2, at most ``max_extend``
    times, until the edge is inside): the full-context learner's final loss on the
    validation stream ``val`` and, on the test stream ``test``, the final losses at context
    ``L_short`` and at full context.  ``make(L, **kw)`` builds the learner.

    The *edge* is the smallest step whose validation loss is no better than ``trivial_val``
    (the trivial predictor's) or diverged; the *safe step* is the largest step of the grid
    at most ``safe_factor`` times the edge (None when no edge or no such step was found).

    Returns
    -------
    dict
        ``lrs``, ``validation_full``, ``test_short``, ``test_full`` (lists, inf for a
        diverged run), ``edge``, ``safe_lr``.
    """
    lrs = [float(x) for x in lrs]
    val_full_fits = _Refits(make(None), *val)
    val_full = [_constant_final_loss(val_full_fits, lr) for lr in lrs]

    def unstable(v):
        return not v < trivial_val

    for _ in range(max_extend):
        if any(unstable(v) for v in val_full):
            break
        lrs.append(lrs[-1] * 2.0)
        val_full.append(_constant_final_loss(val_full_fits, lrs[-1]))
    edge = next((lr for lr, v in zip(lrs, val_full) if unstable(v)), None)
    safe = None
    if edge is not None:
        below = [lr for lr in lrs if lr <= edge * safe_factor * (1 + 1e-9)]
        safe = below[-1] if below else None
    test_short, test_full = _Refits(make(L_short), *test), _Refits(make(None), *test)
    return {"lrs": lrs, "validation_full": val_full,
            "test_short": [_constant_final_loss(test_short, lr) for lr in lrs],
            "test_full": [_constant_final_loss(test_full, lr) for lr in lrs],
            "edge": edge, "safe_lr": safe}


def run_learning_task(config, rng, *, region: str, algorithm: int) -> dict:
    """Learner losses for every q on one system (see module docstring)."""
    cls = ALGORITHMS[algorithm]
    T, k = config["T"], config["k"]
    precision = config["filter_precision"]
    system = draw_system(config, region, rng)
    (u_val, y_val), (u, y) = streams(system, T, rng, config["data_convention"])
    radius = float(np.linalg.norm(system.B, 2) * np.linalg.norm(system.C, 2))

    def learner(c, L, **kw):
        return c(horizon=T, k=k, context=L, radius=radius, filter_precision=precision,
                 **_filters_option(config), **kw)

    trivial_val, trivial = LastValue(), LastValue()
    trivial_val.fit_predict(u_val, y_val)
    trivial.fit_predict(u, y)
    q_short = min(config["q_values"])
    L_short = context_length(T, q_short)
    out = {}
    with warnings.catch_warnings(record=True) as caught:
        # a filter below the float64 floor is reported once per task in the summary (not
        # silenced): precision="extended" resolves them
        warnings.simplefilter("always", FilterPrecisionWarning)
        (schedule, lr), search = choose_step_size(cls, config, radius, u_val, y_val)
        full = BestInHindsight(learner(cls, None))
        full.fit_predict(u, y)
        bench_total = float(full.losses_.sum())  # min over Pi_T of the total loss
        losses, finals, regrets, hindsight = [], [], [], []
        for q in config["q_values"]:
            L = context_length(T, q)
            run = learner(cls, L, lr=lr, lr_schedule=schedule)
            run.fit_predict(u, y)
            losses.append(run.losses_)
            finals.append(final_loss(run.losses_))
            regrets.append(float(run.losses_.sum()) - bench_total)
            best_l = BestInHindsight(learner(cls, L))
            best_l.fit_predict(u, y)
            hindsight.append(final_loss(best_l.losses_))
        # the effect size against the step size, and the stability edge
        sweep = step_size_sweep(lambda L, **kw: learner(cls, L, **kw),
                                config["sensitivity_lrs"], L_short, (u_val, y_val), (u, y),
                                final_loss(trivial_val.losses_),
                                config.get("safe_step_factor", SAFE_STEP_FACTOR))
        if algorithm == 2:
            # Algorithm 1 on the same system and streams, its own step-size search: the
            # paper's "contrast with Figure 3" (full and shortest context, overlaid on Fig. 4)
            (s1, lr1), _ = choose_step_size(SpectralFiltering, config, radius, u_val, y_val)
            a1 = []
            for L in (L_short, None):
                r1 = learner(SpectralFiltering, L, lr=lr1, lr_schedule=s1)
                r1.fit_predict(u, y)
                a1.append(r1.losses_)
            out["alg1_losses"] = np.asarray(a1)  # (2, T): shortest, full context
            out["alg1_full_final_loss"] = final_loss(a1[1])
            out["alg1_short_final_loss"] = final_loss(a1[0])
            out["alg1_step_size"] = [s1, lr1]
    below_floor = sorted({str(w.message).split(":")[0] for w in caught
                          if issubclass(w.category, FilterPrecisionWarning)})
    for w in caught:  # everything else is passed on, not swallowed
        if not issubclass(w.category, FilterPrecisionWarning):
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    out.update({
        "losses": np.asarray(losses),
        "final_loss": finals,
        "asymmetric_regret": regrets,
        "hindsight_final_loss": hindsight,
        "benchmark_total_loss": bench_total,
        "trivial_final_loss": final_loss(trivial.losses_),
        "lr": lr,
        "lr_schedule": schedule,
        "step_size_search": search,
        "step_sweep": sweep,
        "filter_warnings": below_floor,
        "radius": radius,
        "eigenvalues": np.linalg.eigvalsh(system.A),
    })
    return out


def _ratio(a, b):
    """a / b as a float, None when not finite (a diverged run)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        r = float(a) / float(b)
    return r if np.isfinite(r) else None


def _median(values):
    ok = [v for v in values if v is not None and np.isfinite(v)]
    return float(np.median(ok)) if ok else None


def summarize_step_sizes(config, results) -> dict:
    """Per seed: the effect (shortest / full final loss) at every step of the grid, at the
    chosen step and at the safe step; the edge and the safe step (see
    :func:`step_size_sweep`)."""
    lrs = sorted({lr for r in results for lr in r["step_sweep"]["lrs"]})
    per_seed, edge, safe, at_safe = [], [], [], []
    for r in results:
        sw = r["step_sweep"]
        row = dict(zip(sw["lrs"], zip(sw["test_short"], sw["test_full"])))
        per_seed.append([_ratio(*row[lr]) if lr in row else None for lr in lrs])
        edge.append(sw["edge"])
        safe.append(sw["safe_lr"])
        at_safe.append(_ratio(*row[sw["safe_lr"]]) if sw["safe_lr"] in row else None)
    at_chosen = [None] * len(results)
    if 1.0 in config["q_values"]:  # the effect at the step the validation search chose
        j = config["q_values"].index(1.0)
        i = config["q_values"].index(min(config["q_values"]))
        at_chosen = [_ratio(r["final_loss"][i], r["final_loss"][j]) for r in results]
    cols = list(zip(*per_seed))
    return {
        "q": min(config["q_values"]), "lrs": lrs,
        "ratio_per_seed": per_seed,
        "ratio_median": [_median(c) for c in cols],
        "ratio_min": [min((v for v in c if v is not None), default=None) for c in cols],
        "ratio_max": [max((v for v in c if v is not None), default=None) for c in cols],
        "edge_per_seed": edge, "safe_lr_per_seed": safe,
        "chosen_lr_per_seed": [r["lr"] for r in results],
        "chosen_schedule_per_seed": [r["lr_schedule"] for r in results],
        "ratio_at_safe_per_seed": at_safe, "ratio_at_safe_median": _median(at_safe),
        "ratio_at_chosen_per_seed": at_chosen, "ratio_at_chosen_median": _median(at_chosen),
        "safe_step_factor": config.get("safe_step_factor", SAFE_STEP_FACTOR),
    }


def summarize_learning(config, results) -> tuple[dict, dict]:
    """Per q: final loss (mean, min, max, per seed), its ratio to the full-context learner
    (per seed, their median, and the ratio of the seed means), Asymmetric-Regret and
    best-in-hindsight loss; the step sizes chosen per seed with their search; the effect
    against the step size (:func:`summarize_step_sizes`)."""
    qs = config["q_values"]
    T = config["T"]
    finals = np.array([r["final_loss"] for r in results])  # (seeds, q)
    hind_all = np.array([r["hindsight_final_loss"] for r in results])  # (seeds, q)
    full_j = qs.index(1.0) if 1.0 in qs else None
    short_j = qs.index(min(qs))
    per_q = {}
    for j, q in enumerate(qs):
        fl = finals[:, j]
        rg = np.array([r["asymmetric_regret"][j] for r in results])
        hs = hind_all[:, j]
        entry = {
            "context": context_length(T, q),
            "final_loss": float(fl.mean()),
            "final_loss_min": float(fl.min()),
            "final_loss_max": float(fl.max()),
            "final_loss_per_seed": fl.tolist(),
            "asymmetric_regret": float(rg.mean()),
            "asymmetric_regret_per_seed": rg.tolist(),
            "hindsight_final_loss": float(hs.mean()),
            "hindsight_final_loss_per_seed": hs.tolist(),
        }
        if full_j is not None:
            per_seed = fl / finals[:, full_j]
            entry["final_loss_ratio_to_full"] = float(fl.mean() / finals[:, full_j].mean())
            entry["final_loss_ratio_per_seed"] = per_seed.tolist()
            entry["final_loss_ratio_median"] = float(np.median(per_seed))
            entry["seeds_worse_than_full"] = int(np.sum(per_seed > 1.0))
        per_q[qkey(q)] = entry
    summary = {
        "T": T, "k": config["k"], "n": config["n"], "seeds": config["seeds"],
        "data_convention": config["data_convention"],
        "per_q": per_q,
        "trivial_final_loss": float(np.mean([r["trivial_final_loss"] for r in results])),
        "step_sizes": [[r["lr_schedule"], r["lr"]] for r in results],
        "step_sizes_interior": all(r["step_size_search"]["interior"] for r in results),
        "step_size_search": [r["step_size_search"] for r in results],
        "filters_below_float64_floor": sorted({w for r in results
                                               for w in r["filter_warnings"]}),
    }
    if full_j is not None:
        ratios = [per_q[qkey(q)]["final_loss_ratio_to_full"] for q in qs]
        summary["ratio_to_full_by_q"] = ratios
        summary["ratio_to_full_short"] = ratios[short_j]
        summary["ratio_by_q_per_seed"] = (finals / finals[:, [full_j]]).tolist()
        hind = [per_q[qkey(q)]["hindsight_final_loss"] for q in qs]
        summary["hindsight_short_over_full"] = hind[short_j] / hind[full_j]
        summary["hindsight_short_over_full_per_seed"] = (
            hind_all[:, short_j] / hind_all[:, full_j]).tolist()
    summary["step_size_sensitivity"] = summarize_step_sizes(config, results)
    if "alg1_full_final_loss" in results[0]:
        a1 = np.array([r["alg1_full_final_loss"] for r in results])
        a1s = np.array([r["alg1_short_final_loss"] for r in results])
        mine = finals[:, full_j] if full_j is not None else finals[:, -1]
        summary["alg1_full_final_loss"] = float(a1.mean())
        summary["alg1_full_final_loss_per_seed"] = a1.tolist()
        summary["alg1_short_final_loss_per_seed"] = a1s.tolist()
        summary["alg1_over_alg2_full"] = float(a1.mean() / mine.mean())
        summary["alg1_over_alg2_full_per_seed"] = (a1 / mine).tolist()
        summary["alg1_step_sizes"] = [r["alg1_step_size"] for r in results]
    arrays = {
        "losses": np.stack([r["losses"] for r in results]),  # (seeds, q, T)
        "q_values": np.asarray(qs),
        "contexts": np.asarray([context_length(T, q) for q in qs]),
        "eigenvalues": np.stack([r["eigenvalues"] for r in results]),
    }
    if "alg1_losses" in results[0]:
        arrays["alg1_losses"] = np.stack([r["alg1_losses"] for r in results])  # (seeds, 2, T)
    return summary, arrays
