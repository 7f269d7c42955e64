r"""``nss-s4``: the S4++ paper's non-stable-states example (Sec. 2.3, Figs. 2 and 4).

100 equidistant samples of sin(5πt) on [0, 1] train one-layer models. The sampling instants
are then perturbed by less than the grid step (``t'_i = t_i + δ_i``, ``|δ_i| < jitter · h``),
and the trained models run on the perturbed samples u'. Training: the paper's 2000 epochs of
its single sequence at paper scale (250 steps at quick scale), cosine decay; at medium scale a
constant learning rate after warm-up until the error on ``n_validation`` held-out perturbation
draws (never the measured ones) has flattened (the config's ``plateau``).

Models (the same block around each layer, :func:`build_model`):

* ``s4`` — S4 with HiPPO-LegS in diagonal-plus-low-rank form (``S4(d, mode="dplr")``), the
  S4++ paper's baseline;
* ``s4d`` — S4D-Lin (``Re A < 0`` forced, as every S4 variant by default);
* ``s4+`` — S4+ (State Memory Replay, eq. 15) on the same S4-LegS;
* ``s4d-free`` — S4D-Lin with ``Re A`` unconstrained (``real_transform="none"``): the only
  parameterisation here in which training *can* produce a growing mode (``|Ā| > 1``).

**Training target (our choice; the paper does not say).** Next-sample prediction: the output at
position i must give sin(5π t_{i+1}) (:func:`lds_toolkit.neural.tasks.sine_fit`). On u' the
target is the next *perturbed* sample.

Measured per model and seed (states from the layer's ``states``, every state ``x_t`` of every
channel; each stored complex mode stands for a conjugate pair and counts twice):

* ``state_volume`` — the paper's "Total State Vol" :math:`V_t = 2\sum_{h,n}|x_{t,h,n}|`
  (:func:`state_volume`). **Not** comparable across models: the state of a diagonal SSM can
  be rescaled (:math:`x \to s x`, :math:`B \to s B`, :math:`C \to C/s`, per mode) without
  changing any output, which scales :math:`V_t` freely;
* ``weighted_volume`` — the rescaling-invariant :math:`W_t = 2\sum_{h,n}|C_{h,n}||x_{t,h,n}|`
  (:func:`weighted_state_volume`): each mode's amplitude as it reaches the output;
* ``state_change`` — :math:`\sum_t\sum|x'_t - x_t| / \sum_t\sum|x_t|` (how much u' moves the
  states; invariant to one common rescaling of the state), and ``weighted_state_change``, the
  same with every mode weighted by :math:`|C|` (invariant to per-mode rescaling);
* ``perturbed_error`` (MSE on u' against the next perturbed samples), ``floor`` (the MSE of the
  nominal next sample sin(5π t_{i+1}) as a prediction of sin(5π t'_{i+1}), what a model that
  ignores the unknowable jitter of the next instant cannot avoid), ``above_floor`` (their
  difference), and ``output_effect`` :math:`\overline{(\hat y(u') - \hat y(u))^2}` with
  ``output_gain`` :math:`= \mathrm{rms}(\hat y(u')-\hat y(u)) / \mathrm{rms}(u'-u)`;
* **the rising volume curve**: :math:`W_t` split (the SSM is linear in its input v) into the
  response to the per-channel time average of v (``dc``) and to the rest, on the nominal input
  and on ``long_factor`` times as many samples of the same sine (``long_*``), with the layer's
  memory lengths (:func:`lds_toolkit.memory_length`, ε = 1e-2, per channel);
* **where NSS would appear** — from ``layer.to_lds(h)`` (the trained recursion of every
  channel h, realised as (Ā, B̄, CĀ, D + CB̄)): the moduli :math:`|\lambda(\bar A)|` at the
  trained step and at ``rates`` times it, the spectral radius, and the contraction
  :math:`\rho` certified by a discrete Lyapunov function
  (:func:`lds_toolkit.control.discrete_certificate`, with cond(P)). A perturbation of the
  input at step j reaches step k multiplied by :math:`\bar A^{k-j}`; it grows (NSS) only for
  :math:`|\lambda| > 1`, and reaches Fig. 1's :math:`10^6` within the sequence only for
  :math:`|\lambda| \ge 10^{6/L}` (``nss_threshold``);
* training-loss curve, gradient norm and the **sum of parameter gradients**
  :math:`\sum_\theta \partial\mathcal L/\partial\theta` (what Fig. 4 plots: "the sum of
  parameter gradients"), all before any clipping (none is applied).

Model: linear encoder 1 -> d, one residual block with the SSM layer and no MLP or normalisation
(a LayerNorm across the channels of a lifted scalar would divide its value out), linear head.
The measurements are computed by :mod:`._nss_s4_measures`, the figures drawn by
:mod:`._nss_s4_plots`.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from ..base import register
from ..claims import Claim
from ..scales import by_scale
from ._config_ranges import TRAINING_RANGES, Int, Real, activations, model_names
from ._neural_common import (
    PLATEAU,
    TRAINING_DEFAULTS,
    NeuralExperiment,
    by_model,
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
from ._nss_s4_measures import (
    RATES,
    dc_volume,
    layer_states,
    lds_analysis,
    nominal_floor,
    nss_threshold,
    relative_state_change,
    state_volume,
    weighted_state_volume,
)

# LABELS and COLORS (each model's in the figures) were defined here until the figures moved
from ._nss_s4_plots import COLORS, LABELS, plot_analysis, plot_paper  # noqa: F401

if TYPE_CHECKING:  # pragma: no cover - torch is imported where a model is trained
    from ...neural import SequenceModel
    from ...neural.tasks import SequenceTask

MODELS = ("s4", "s4d", "s4+", "s4d-free")
#: layer name and keyword arguments of each model
LAYERS = {"s4": ("s4", {"mode": "dplr"}),
          "s4d": ("s4", {}),
          "s4+": ("s4plus", {"mode": "dplr"}),
          "s4d-free": ("s4", {"real_transform": "none"})}


def build_model(name: str, config: dict, seed: int) -> SequenceModel:
    """Encoder 1 -> d_model, one residual block around the model's SSM layer, head d -> 1."""
    from ...neural import SequenceModel

    layer, kwargs = LAYERS[name]
    return SequenceModel(config["d_model"], 1, layer,
                         layer_kwargs={"d_state": config["d_state"], **kwargs},
                         d_input=1, d_output=1, norm="none", mlp_ratio=0.0, seed=seed)


def stack_tasks(tasks: list) -> SequenceTask | None:
    """One :class:`SequenceTask` holding the sequences of several (None for none)."""
    from ...neural.tasks import SequenceTask

    if not tasks:
        return None
    return SequenceTask(*(np.concatenate([getattr(t, k) for t in tasks])
                          for k in ("inputs", "targets", "mask", "eval_mask")),
                        name=tasks[0].name)


class GradientSum:
    """Training callback recording :math:`\\sum_\\theta \\partial L/\\partial\\theta` (every
    entry of every parameter's gradient, signed) after each step; ``train`` calls it after the
    optimizer step, before the next step clears the gradients."""

    def __init__(self, model):
        self.model = model
        self.values: list[float] = []

    def __call__(self, step, record):
        total = sum(float(p.grad.sum()) for p in self.model.parameters() if p.grad is not None)
        self.values.append(total)
        return False

    def state_dict(self) -> dict:
        """The sums so far (JSON), for training checkpoints."""
        return {"values": list(self.values)}

    def load_state_dict(self, state: dict) -> None:
        self.values = [float(v) for v in state["values"]]


# ------------------------------------------------------------------------------- experiment

@register
class NssS4(NeuralExperiment):
    name = "nss-s4"
    description = "S4-LegS, S4D, S4+ on sin(5 pi t): states and errors under perturbed sampling"
    paper = "S4++ Sec. 2.3 / Figs. 2 and 4"
    claims = (
        Claim("nss", "S4++", "Sec. 2.3, Fig. 2",
              "S4 trained on u has non-stable states on u': the perturbation changes the "
              "states by as much as the states themselves",
              "weighted_state_change/s4", ">=", 1.0, scales=(),
              spread="weighted_state_change_seeds/s4",
              note="Measured change 2-3 % for every model: the trained layers are Schur "
                   "stable with a Lyapunov certificate (spectral radius < 1 at every step "
                   "size, see lds_analysis); the perturbation passes to the output with a "
                   "gain of about 1 (output_gain)."),
        Claim("unstable-prediction", "S4++", "Sec. 2.3, Fig. 2",
              "S4 predicts u' with numerical instability: its error there is dominated by the "
              "model (error above the nominal floor at least 10x the floor)",
              "above_floor_over_floor/s4", ">=", 10.0, scales=(),
              spread="above_floor_over_floor_seeds/s4",
              note="Measured: about 1x. The models pass the input perturbation u' - u to the "
                   "output with a gain near 1 (output_gain); the floor is the error of the "
                   "nominal next sample, ~1.06e-3."),
        Claim("volume-shrinks", "S4++", "Sec. 3.1, Fig. 4",
              "S4+ shrinks the state volume from 2e2 to 3e1 (a factor 0.15)",
              "weighted_volume_ratio/s4+", "<=", 0.15, scales=(),
              spread="weighted_volume_ratio_seeds/s4+",
              note="Rescaling-invariant volume (|C|-weighted) of S4+ over S4 on u'; the "
                   "raw volume is reported too but can be rescaled at will."),
        Claim("error-reduced", "S4++", "Sec. 3.1, Fig. 4",
              "S4+ substantially reduces the prediction error on u' (at most half of S4's "
              "error above the nominal floor)",
              "above_floor_ratio/s4+", "<=", 0.5, scales=(),
              spread="above_floor_ratio_seeds/s4+",
              note="'Substantial' read as a factor 2 or more."),
        Claim("fit-improved", "S4++", "Sec. 3.1, Fig. 4",
              "SMR diminishes the fitting error: S4+'s final training loss is below S4's",
              "final_loss_ratio/s4+", "<", 1.0, scales=(),
              spread="final_loss_ratio_seeds/s4+",
              note="Per seed against S4 on the same data; mean of the last 100 steps."),
    )

    # what each config entry may hold, checked before any task (experiments/config/ranges.py)
    ranges = {**TRAINING_RANGES, "n_points": Int(2, 10**7),
              "frequency": Real(0.0, 1e6, low_open=True), "jitter": Real(0.0, 1e3),
              "n_perturbations": Int(1, 10**6), "long_factor": Int(1, 10**4),
              "steps": Int(1, 10**9), "d_model": Int(1, 2**16), "d_state": Int(1, 2**16),
              "models": model_names(*MODELS)}

    def largest_array(self, config):
        L = config["n_points"] * config["long_factor"]
        return max(activations(1, L, config["d_model"]),
                   (8.0 * config["d_model"] * config["d_state"] * L,
                    f"the ({config['d_model']}, {config['d_state']}, {L}) SSM kernel terms"))

    def config(self, scale, seeds):
        cfg = {"n_points": 100, "frequency": float(5 * np.pi), "jitter": 0.5,
               "n_perturbations": 10, "long_factor": 10,
               # quick: the pipeline and the shape of the result (no claim is declared for
               # it): one seed, 250 steps, warm-up 50. The training loss ends at 1-4e-4, below
               # the nominal floor ~1e-3 the error on u' is measured against, and the error
               # above the floor is 0.85-1.4x the floor (base seeds 0, 1; 500 steps: ~3e-5
               # and ~1.1x, at twice the time)
               "steps": by_scale(scale, quick=250, medium=4000, paper=2000),
               "schedule": by_scale(scale, quick="cosine", medium="constant", paper="cosine"),
               "n_validation": by_scale(scale, quick=0, medium=5, paper=0),
               "eval_every": by_scale(scale, quick=0, medium=50, paper=0),
               "plateau": by_scale(scale, quick=None, medium=PLATEAU, paper=None),
               "lr": 3e-3, "warmup": by_scale(scale, quick=50, medium=100, paper=100),
               "d_model": 16, "d_state": 64,
               "seeds": by_scale(scale, quick=1, medium=8, paper=10),
               "models": list(MODELS)}
        cfg.update(TRAINING_DEFAULTS)
        if seeds is not None:
            cfg["seeds"] = seeds
        return cfg

    def run_task(self, config, task, rng):
        from ...neural.tasks import sine_fit

        n, freq, jit = config["n_points"], config["frequency"], config["jitter"]
        data = sine_fit(n, frequency=freq)
        seed = torch_seed(rng)
        perturbed = [sine_fit(n, frequency=freq, jitter=jit, rng=rng)
                     for _ in range(config["n_perturbations"])]
        # held-out curve (medium): fresh perturbation draws, never the measured ones
        validation = stack_tasks([sine_fit(n, frequency=freq, jitter=jit, rng=rng)
                                  for _ in range(config["n_validation"])])
        with task_threads(1):
            model = build_model(task["model"], config, seed)
            grads = GradientSum(model)
            res = train_in_task(model, data, config, eval_data=validation, steps=config["steps"],
                                batch_size=1, lr=config["lr"], warmup=config["warmup"],
                                schedule=config["schedule"], grad_clip=None,
                                divergence_factor=None,
                                eval_every=config["eval_every"] if validation is not None else 0,
                                plateau=plateau_rule(config), seed=seed, device=task_device(),
                                callback=step_progress(config["steps"], grads))
            record = {**training_record(res), "grad_sum_curve": np.asarray(grads.values),
                      "eval_steps": res.evals["step"], "eval_loss": res.evals["loss"]}
            if res.diverged:
                return {"diverged": True, **record}
            model.cpu()
            return {"diverged": False, "seed_index": task["seed_index"], **record,
                    **self._measure(model, data, perturbed, config)}

    @staticmethod
    def _measure(model, data, perturbed, config):
        from ...neural.training import evaluate, predict

        u = data.inputs[0]
        pred = predict(model, data)[0, :, 0]
        v, x, C = layer_states(model, u)
        out = {"original_error": evaluate(model, data)["loss"]}
        pert_err = [evaluate(model, p)["loss"] for p in perturbed]
        floors = [nominal_floor(p) for p in perturbed]
        u_pert = np.stack([p.inputs[0] for p in perturbed])  # (draws, length, 1)
        pred_pert = np.stack([predict(model, p)[0, :, 0] for p in perturbed])
        out_eff = np.mean((pred_pert - pred) ** 2, axis=1)
        in_eff = np.mean((u_pert[..., 0] - u[:, 0]) ** 2, axis=1)
        _, x_pert, _ = layer_states(model, u_pert)
        change = [relative_state_change(x, xp) for xp in x_pert]
        wchange = [relative_state_change(x, xp, C) for xp in x_pert]
        n_long = config["long_factor"] * config["n_points"]
        h = 1.0 / (config["n_points"] - 1)
        u_long = np.sin(config["frequency"] * h * np.arange(n_long))[:, None]
        v_long, x_long, _ = layer_states(model, u_long)
        analysis = lds_analysis(model)
        out.update({
            "perturbed_error": float(np.mean(pert_err)),
            "perturbed_error_draws": np.asarray(pert_err),
            "floor": float(np.mean(floors)),
            "above_floor": float(np.mean(pert_err) - np.mean(floors)),
            "output_effect": float(np.mean(out_eff)),
            "output_gain": float(np.sqrt(np.mean(out_eff) / np.mean(in_eff))),
            "state_change": float(np.mean(change)),
            "weighted_state_change": float(np.mean(wchange)),
            "volume_original": state_volume(x),
            "volume_perturbed": state_volume(x_pert).mean(axis=0),
            "weighted_original": weighted_state_volume(x, C),
            "weighted_perturbed": weighted_state_volume(x_pert, C).mean(axis=0),
            "weighted_dc": dc_volume(model, v, C),
            "long_weighted": weighted_state_volume(x_long, C),
            "long_weighted_dc": dc_volume(model, v_long, C),
            "prediction_original": pred,
            "prediction_perturbed": pred_pert[0],
            "t_perturbed": perturbed[0].info["t"],
            "target_perturbed": perturbed[0].targets[0, :, 0],
            **{f"lds_{k}": v for k, v in analysis.items()},
        })
        return out

    def summarize(self, config, tasks, results):
        models = config["models"]
        L = config["n_points"]
        by = by_model(config, tasks, results)
        ok = {m: [r for r in by[m] if not r["diverged"]] for m in models}
        S: dict = {"diverged": {m: [r["divergence"] for r in by[m] if r["diverged"]]
                                for m in models},
                   "training": {m: {"steps": [r["steps_done"] for r in by[m]],
                                    "plateaued": [r["plateaued"] for r in by[m]],
                                    "status": [r["status"] for r in by[m]]} for m in models},
                   "nss_threshold": nss_threshold(L), "rates": RATES, "length": L}

        def put(key, values_by_model, seeds=True):
            S[key] = {m: spread(v)["mean"] for m, v in values_by_model.items()}
            if seeds:
                S[f"{key}_seeds"] = values_by_model

        def per(key, fn=None):
            return {m: [float(fn(r) if fn else r[key]) for r in ok[m]] for m in models}

        for key in ("original_error", "perturbed_error", "floor", "above_floor",
                    "output_effect", "output_gain", "state_change", "weighted_state_change"):
            put(key, per(key))
        put("state_volume", per(None, lambda r: r["volume_perturbed"].mean()))
        put("state_volume_original", per(None, lambda r: r["volume_original"].mean()))
        put("weighted_volume", per(None, lambda r: r["weighted_perturbed"].mean()))
        put("weighted_volume_original", per(None, lambda r: r["weighted_original"].mean()))
        put("final_train_loss", per(None, lambda r: r["loss_curve"][-100:].mean()))
        put("above_floor_over_floor", per(None, lambda r: r["above_floor"] / r["floor"]))
        # each model against S4 on the same seed (common random numbers: the same data and
        # perturbations)
        if "s4" in models:
            base = {r["seed_index"]: r for r in ok["s4"]}

            def against_s4(fn):
                return {m: [float(fn(r) / fn(base[r["seed_index"]])) for r in ok[m]
                            if r["seed_index"] in base] for m in models}

            put("weighted_volume_ratio", against_s4(lambda r: r["weighted_perturbed"].mean()))
            put("volume_ratio", against_s4(lambda r: r["volume_perturbed"].mean()))
            put("above_floor_ratio", against_s4(lambda r: r["above_floor"]))
            put("final_loss_ratio", against_s4(lambda r: np.mean(r["loss_curve"][-100:])))
        # the rising curve: share of the last position's weighted volume that the DC part
        # alone gives, growth of W beyond the training length, and memory lengths
        put("rise_dc_share", per(None, lambda r: r["weighted_dc"][-1] / r["weighted_original"][-1]))
        put("rise_first_to_last", per(None, lambda r: r["weighted_original"][-1]
                                      / r["weighted_original"][L // 10]))
        put("long_over_nominal", per(None, lambda r: r["long_weighted"][-L:].mean()
                                     / r["long_weighted"][L - 10:L].mean()))
        put("memory_length_median", per(None, lambda r: np.nanmedian(r["lds_memory_length"])))
        put("memory_length_max", per(None, lambda r: np.nanmax(r["lds_memory_length"])))
        put("slow_mode_fraction", per(None, lambda r: np.mean(
            r["lds_moduli"] > math.exp(-1.0 / L))))
        for key in ("spectral_radius", "unstable_modes", "unstable_channels", "certified_rho",
                    "certificate_condition"):
            put(key, per(f"lds_{key}"))
        S["max_radius_over_rates"] = {m: float(np.max([r["lds_radius_at_rate"] for r in ok[m]]))
                                      if ok[m] else float("nan") for m in models}
        arrays = {}
        for m in models:
            for key in ("loss_curve", "grad_norm_curve", "grad_sum_curve", "eval_steps",
                        "eval_loss"):
                arrays[f"{key}/{m}"] = stack_ragged([r[key] for r in by[m]])
            for key in ("volume_original", "volume_perturbed", "weighted_original",
                        "weighted_perturbed", "weighted_dc", "long_weighted",
                        "long_weighted_dc", "prediction_original", "prediction_perturbed",
                        "t_perturbed", "target_perturbed", "lds_radius_at_rate",
                        "lds_memory_length"):
                if ok[m]:
                    arrays[f"{key}/{m}"] = np.stack([r[key] for r in ok[m]])
            if ok[m]:
                arrays[f"lds_moduli/{m}"] = np.concatenate([r["lds_moduli"] for r in ok[m]])
                arrays[f"lds_steps/{m}"] = np.concatenate([r["lds_steps"] for r in ok[m]])
        return S, arrays

    def plot(self, config, summary, arrays, outdir):
        return plot_paper(config, summary, arrays, outdir) + plot_analysis(config, summary,
                                                                           arrays, outdir)
