r"""``lds-streams``: neural sequence layers and the online learners on the same LDS streams.

For each seed and region (A: half the eigenvalues from each part of Region A; B: all in
Region B; regions of :func:`lds_toolkit.systems.eigenvalue_regions` with q = 7/8 and horizon
T = 4 × the training length), one random symmetric LDS is drawn as in the
length-generalization experiments (:mod:`._lengen_common`). Then:

* **Neural models** (S4, S4+, STU, Focus, LaS and a causal transformer) are trained on
  next-output prediction (:func:`lds_toolkit.neural.tasks.lds_next_output`, outputs by
  ``simulate(..., output="lengen")``: C A^l B is the coefficient of u_{t-l} in y_{t+1}): at
  position t they read (u_t, y_t) and predict y_{t+1}; ``n_train`` streams of length
  ``train_length``; a fixed number of steps with cosine decay (quick, paper) or until the
  loss on ``n_validation`` fresh streams of the training length has flattened (medium: the
  config's ``plateau``, constant learning rate after warm-up, at most ``steps``).
  They are evaluated on ``n_eval`` fresh streams of length 4 × train_length; the loss at
  evaluation length E is the mean squared error over the first E positions (the models are
  causal, so this is the loss on streams of length E).
* **Algorithms 1 and 2** (:class:`~lds_toolkit.learning.SpectralFiltering`,
  :class:`~lds_toolkit.learning.SpectralFilteringAR2`) run online from scratch on each of the
  same evaluation streams, with filters of length T, context = the neural training length,
  radius ||B|| ||C||, filters resolved below the float64 floor (``filter_precision``) and a
  step size chosen on a separate validation stream until interior (as in ``lengen-*``).
  Their prediction of y_{t+1} uses exactly what the neural model's output at position t
  uses. ``last-value`` (ŷ_{t+1} = y_t) is listed for scale.

All losses are divided by the variance scale of the training outputs (mean of y² over the
training streams), so that regions and seeds are comparable; the learners are not given the
training streams (they learn online), the neural models never see the evaluation streams.

``summary.json``: ``loss[model][eval_length]`` (mean over seeds), ``loss_seeds``,
``loss_by_region[region][model][eval_length]``, the learners' step sizes, and
``training[model]`` (steps, plateaued, status per region and seed).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ...learning import LastValue, LearnerDivergedError
from ..base import register
from ..plotting import figure, save_figure, smooth
from ..scales import by_scale
from ._config_ranges import (
    F64,
    LENGEN_RANGES,
    TRAINING_RANGES,
    Choice,
    Int,
    ListOf,
    Relation,
    activations,
    lengen_relations,
    model_names,
)
from ._lengen_common import ALGORITHMS, LR_GRID, choose_step_size, draw_system
from ._neural_common import (
    PLATEAU,
    TRAINING_DEFAULTS,
    NeuralExperiment,
    plateau_rule,
    spread,
    stack_ragged,
    step_progress,
    task_device,
    task_threads,
    torch_seed,
    train_in_task,
    training_record,
)

if TYPE_CHECKING:  # pragma: no cover - torch is imported where a model is trained
    from ...neural import SequenceModel
    from ...neural.tasks import SequenceTask

NEURAL = ("s4", "s4+", "stu", "focus", "las", "transformer")
LEARNERS = ("alg1", "alg2", "last-value")
LAYERS = {"s4": ("s4", {}), "s4+": ("s4plus", {}), "focus": ("focus", {}),
          "las": ("las", {}), "transformer": ("attention", {"n_heads": 4})}


def build_model(name: str, config: dict, seed: int) -> SequenceModel:
    from ...neural import SequenceModel

    layer, kwargs = LAYERS.get(name, ("stu", None))
    if name == "stu":
        kwargs = {"seq_len": config["T"], "num_filters": config["k"]}
    d = config["d_in"] + config["d_out"]
    return SequenceModel(config["d_model"], config["n_layers"], layer, layer_kwargs=kwargs,
                         d_input=d, d_output=config["d_out"], norm=config["norm"],
                         mlp_ratio=config["mlp_ratio"], seed=seed)


def _normalised(task: SequenceTask, scale: float) -> SequenceTask:
    """Outputs (in inputs and targets) divided by ``scale``; inputs u unchanged."""
    from ...neural.tasks import SequenceTask

    d_in = task.info["u"].shape[-1]
    inputs = task.inputs.copy()
    inputs[..., d_in:] /= scale
    return SequenceTask(inputs, task.targets / scale, task.mask, task.eval_mask,
                        name=task.name, info=task.info)


@register
class LDSStreams(NeuralExperiment):
    name = "lds-streams"
    description = "S4, S4+, STU, Focus, LaS, transformer vs Algorithms 1/2 on LDS streams"
    paper = "toolkit comparison (length-generalization setting, Regions A and B)"

    # what each config entry may hold, checked before any task (experiments/config/ranges.py)
    ranges = {**TRAINING_RANGES, **{k: LENGEN_RANGES[k] for k in (
        "n", "k", "region_q", "d_in", "d_out", "lr_grid", "filter_precision", "T")},
        "train_length": Int(1, 2**30), "n_train": Int(1, 10**8), "n_eval": Int(1, 10**8),
        "d_model": Int(1, 2**16), "steps": Int(1, 10**9),
        "eval_factors": ListOf(Int(1, 2**20), unique=True),
        "regions": ListOf(Choice("A", "B"), unique=True), "n_layers": Int(1, 1024),
        "norm": Choice("layer", "rms", "none"), "models": model_names(*NEURAL, *LEARNERS)}
    relations = (Relation("k", "<=", "T"), *lengen_relations()[1:])

    def largest_array(self, config):
        T, d = config["T"], config["d_in"] + config["d_out"]
        width = config["d_model"] * max(config["mlp_ratio"], 1.0)
        out = [(F64 * config["n_train"] * config["train_length"] * d,
                f"the ({config['n_train']}, {config['train_length']}, {d}) training streams"),
               (F64 * config["n_eval"] * T * d,
                f"the ({config['n_eval']}, T={T}, {d}) evaluation streams"),
               activations(64, T, width), (F64 * T * config["k"], f"the (T={T}, k) filters")]
        return max(out)  # (attention runs through SDPA, which need not hold L x L scores)

    def config(self, scale, seeds):
        if scale == "quick":
            # the pipeline and the shape of the comparison (no claim is declared) in ~15 s on
            # 2 cores: streams of 64 (evaluated to 256), 100 training steps per layer; the
            # medium scale trains on 128 to a plateau. The picture of 150 steps on 128 (the
            # quick scale before, at ~2x the time): every neural layer 7x or more below
            # Algorithms 1 and 2 at the training length, S4, S4+ and STU rising 7-20x by 4x
            # the training length (base seed 0)
            cfg = {"train_length": 64, "n": 32, "k": 16, "n_train": 256, "n_eval": 16,
                   "d_model": 32, "steps": 100, "seeds": 1}
        elif scale == "medium":
            cfg = {"train_length": 128, "n": 64, "k": 16, "n_train": 512, "n_eval": 32,
                   "d_model": 32, "steps": 4000, "seeds": 2}
        else:
            cfg = {"train_length": 1024, "n": 512, "k": 24, "n_train": 2048, "n_eval": 64,
                   "d_model": 64, "steps": 5000, "seeds": 3}
        cfg.update(eval_factors=[1, 2, 4], region_q=7 / 8, regions=["A", "B"], d_in=1,
                   d_out=1, n_layers=2, norm="none", mlp_ratio=2.0, batch_size=16, lr=2e-3,
                   warmup=50, weight_decay=0.0, lr_grid=LR_GRID, filter_precision="extended",
                   schedule=by_scale(scale, quick="cosine", medium="constant", paper="cosine"),
                   n_validation=by_scale(scale, quick=0, medium=32, paper=0),
                   eval_every=by_scale(scale, quick=0, medium=50, paper=0),
                   plateau=by_scale(scale, quick=None, medium=PLATEAU, paper=None),
                   models=list(NEURAL) + list(LEARNERS))
        cfg.update(TRAINING_DEFAULTS)
        if seeds is not None:
            cfg["seeds"] = seeds
        return cfg

    def derive(self, config):
        config["T"] = max(config["eval_factors"]) * config["train_length"]
        return config

    def tasks(self, config):
        return [{"seed_index": s, "region": r, "model": m} for s in range(config["seeds"])
                for r in config["regions"] for m in config["models"]]

    def run_task(self, config, task, rng):
        from ...neural.tasks import lds_next_output
        from ...neural.training import predict

        # the same draws for every model of a (seed, region): system, streams, torch seed
        system = draw_system(config, task["region"], rng)
        L, T = config["train_length"], config["T"]
        train_raw = lds_next_output(system, config["n_train"], L, rng=rng)
        eval_raw = lds_next_output(system, config["n_eval"], T, rng=rng)
        val_raw = lds_next_output(system, 1, T, rng=rng)
        seed = torch_seed(rng)
        # held-out curve of the neural models (medium): fresh streams at the training length
        held_raw = (lds_next_output(system, config["n_validation"], L, rng=rng)
                    if config["n_validation"] else None)
        scale = float(np.sqrt(np.mean(train_raw.targets**2)))
        name = task["model"]
        if name in NEURAL:
            with task_threads(1):
                model = build_model(name, config, seed)
                held = None if held_raw is None else _normalised(held_raw, scale)
                res = train_in_task(model, _normalised(train_raw, scale), config,
                                    eval_data=held,
                                    steps=config["steps"], batch_size=config["batch_size"],
                                    lr=config["lr"], warmup=config["warmup"],
                                    schedule=config["schedule"],
                                    weight_decay=config["weight_decay"],
                                    eval_every=config["eval_every"] if held_raw is not None else 0,
                                    plateau=plateau_rule(config), seed=seed, device=task_device(),
                                    callback=step_progress(config["steps"]))
                if res.diverged:
                    curve = np.full(T, np.nan)
                else:
                    ev = _normalised(eval_raw, scale)
                    err = (predict(model, ev) - ev.targets) ** 2  # (n_eval, T, d_out)
                    curve = err.mean(axis=(0, 2))
            return {"curve": curve, "eval_steps": res.evals["step"],
                    "eval_loss": res.evals["loss"], **training_record(res)}
        u, y = eval_raw.info["u"], eval_raw.info["y"]
        extra = {}
        if name == "last-value":
            learner = LastValue()
        else:
            cls = ALGORITHMS[1 if name == "alg1" else 2]
            radius = float(np.linalg.norm(system.B, 2) * np.linalg.norm(system.C, 2))
            (schedule, lr), search = choose_step_size(cls, config, radius,
                                                      val_raw.info["u"][0],
                                                      val_raw.info["y"][0])
            learner = cls(horizon=T, k=config["k"], context=L, radius=radius, lr=lr,
                          lr_schedule=schedule, filter_precision=config["filter_precision"])
            extra = {"lr": lr, "lr_schedule": schedule, "lr_interior": search["interior"]}
        losses = []
        try:
            for b in range(u.shape[0]):
                learner.fit_predict(u[b], y[b])
                # losses_[t] = ||yhat_t - y_t||^2; index t + 1 <-> neural position t
                losses.append(learner.losses_[1:] / config["d_out"])
            curve = np.mean(losses, axis=0) / scale**2
            diverged = None
        except LearnerDivergedError as exc:
            curve, diverged = np.full(T, np.nan), str(exc)
        return {"curve": curve, "divergence": diverged, **extra}

    def summarize(self, config, tasks, results):
        L = config["train_length"]
        lengths = [f * L for f in config["eval_factors"]]
        models = config["models"]
        by_region, seeds_loss = {}, {m: {str(E): [] for E in lengths} for m in models}
        curves = {}
        for region in config["regions"]:
            by_region[region] = {}
            for m in models:
                rs = [r for t, r in zip(tasks, results)
                      if t["region"] == region and t["model"] == m]
                cs = np.stack([r["curve"] for r in rs])
                curves[f"{region}/{m}"] = cs
                by_region[region][m] = {str(E): float(np.mean(cs[:, :E])) for E in lengths}
                for E in lengths:
                    seeds_loss[m][str(E)].extend(cs[:, :E].mean(axis=1).tolist())
        summary = {
            "loss": {m: {E: spread(v)["mean"] for E, v in seeds_loss[m].items()}
                     for m in models},
            "loss_seeds": seeds_loss,
            "loss_by_region": by_region,
            "train_length": L, "eval_lengths": lengths, "T": config["T"],
            "diverged": [f"{t['region']}/{t['model']}/seed {t['seed_index']}: {r['divergence']}"
                         for t, r in zip(tasks, results) if r.get("divergence")],
            "learner_step_sizes": {f"{t['region']}/{t['model']}/{t['seed_index']}":
                                   [r["lr_schedule"], r["lr"]]
                                   for t, r in zip(tasks, results) if "lr" in r},
            "learner_step_sizes_interior": all(r["lr_interior"] for r in results
                                               if "lr_interior" in r),
            "training": {m: {key: [r[field] for t, r in zip(tasks, results)
                                   if t["model"] == m]
                             for key, field in (("steps", "steps_done"),
                                                ("plateaued", "plateaued"),
                                                ("status", "status"))}
                         for m in models if m in NEURAL},
        }
        arrays = {f"curve/{k}": v for k, v in curves.items()}
        for m in models:
            if m in NEURAL:
                rs = [r for t, r in zip(tasks, results) if t["model"] == m]
                arrays[f"eval_steps/{m}"] = stack_ragged([r["eval_steps"] for r in rs])
                arrays[f"eval_loss/{m}"] = stack_ragged([r["eval_loss"] for r in rs])
        return summary, arrays

    def plot(self, config, summary, arrays, outdir):
        regions = config["regions"]
        L = config["train_length"]
        held_out = any(arrays[f"eval_steps/{m}"].size for m in config["models"] if m in NEURAL)
        n_ax = len(regions) + held_out
        fig, axes = figure(1, n_ax, width=5.5 * n_ax, height=3.6)
        axes = np.atleast_1d(axes)
        colors = dict(zip(config["models"], ["#1f77b4", "#d62728", "#2ca02c", "#9467bd",
                                              "#ff7f0e", "#8c564b", "k", "0.4", "0.7"]))
        window = max(L // 16, 1)
        for ax, region in zip(axes, regions):
            for m in config["models"]:
                c = np.nanmean(arrays[f"curve/{region}/{m}"], axis=0)
                if not np.all(np.isfinite(c)):
                    continue
                sm = smooth(c, window)[window - 1:]  # full windows only
                ls = "--" if m in LEARNERS else "-"
                ax.plot(np.arange(window - 1, len(c)), sm, ls=ls, color=colors[m], lw=1.2,
                        label=m)
            ax.axvline(L, color="0.5", lw=0.8, ls=":")
            ax.set_yscale("log")
            ax.set_xlabel(f"position t (dotted: training length {L})")
            ax.set_ylabel("normalised squared error (smoothed)")
            ax.set_title(f"Region {region}")
        if held_out:
            ax = axes[-1]
            for m in config["models"]:
                if m not in NEURAL:
                    continue
                st, ev = arrays[f"eval_steps/{m}"], arrays[f"eval_loss/{m}"]
                for i in range(st.shape[0]):
                    ax.plot(st[i], ev[i], color=colors[m], lw=0.8, alpha=0.8,
                            label=m if i == 0 else None)
            ax.set_yscale("log")
            ax.set_xlabel("step")
            ax.set_ylabel(f"held-out loss at length {L}")
            ax.set_title("training to a plateau (every region and seed)")
        axes[len(regions) - 1].legend(loc="upper left", fontsize=7)
        return save_figure(fig, outdir, "lds_streams")
