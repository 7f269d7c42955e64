"""The runs of ``assoc-recall``: the models, each seed's data, training (one run per task, or
every seed of a (model, length) stacked in one task) and the measurements at the query.

:func:`run_alone` is one task's run, :func:`run_stack` the runs of every seed of one model
and length trained together (:func:`~lds_toolkit.neural.training.run_group.train_group`: the seeds'
runs stacked under ``vmap``, each with the numbers it has alone, to round-off). Both give
each run the same seed, data and settings: a seed's data come from its task stream
(``task_rng(config["seed"], seed_index)``), every length's sets in order, so that the models
of one seed see the same sequences.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

import numpy as np

from ..runner.sweep import task_rng
from ._neural_common import (
    LOG_EVERY,
    plateau_rule,
    step_progress,
    task_device,
    task_threads,
    torch_seed,
    train_group_in_task,
    train_in_task,
    training_record,
)

if TYPE_CHECKING:  # pragma: no cover - torch is imported where a model is trained
    from ...neural import SequenceModel

LAYERS = {
    "focus": ("focus", {}),
    "focus-nc": ("focus", {}),
    "focus-st": ("focus", {"coefficients": "stable_triangle"}),
    "focus-h": ("focus", {"adaptive": False}),
    "las": ("las", {}),
    "s4++": ("s4plusplus", {}),
    "transformer": ("attention", {"n_heads": 1}),
}
#: Where the queried key last appeared, in chunks before the query's chunk.
SPLITS = ("same", "previous", "further")


def layer_kwargs(name: str, config: dict, length: int) -> dict:
    """The layer's keyword arguments for model ``name`` at sequence length ``length``."""
    layer, kwargs = LAYERS[name]
    kwargs = dict(kwargs)
    if layer == "focus":
        c = config["focus_chunk"]
        kwargs.update({"n_chunks": c} if name == "focus-nc" else {"chunk_size": c})
        if kwargs.get("adaptive", True):
            kwargs["hyper_kernel_size"] = length  # a global hyper-network convolution
    return kwargs


def length_plateau(config: dict, train_cfg: dict):
    """The config's plateau rule, with its ``window`` replaced by the length's own
    ``plateau_window`` where ``config["train"][L]`` sets one (None: no plateau rule)."""
    rule = plateau_rule(config)
    if rule is None or train_cfg.get("plateau_window") is None:
        return rule
    return dataclasses.replace(rule, window=int(train_cfg["plateau_window"]))


def build_model(name: str, config: dict, length: int, seed: int) -> SequenceModel:
    from ...neural import SequenceModel

    return SequenceModel(config["width"], config["n_layers"], LAYERS[name][0],
                         layer_kwargs=layer_kwargs(name, config, length),
                         vocab_size=config["vocab_size"], mlp_ratio=config["mlp_ratio"],
                         seed=seed)


def chunk_length(name: str, config: dict, length: int) -> int:
    """The attention chunk of model ``name`` at ``length``: a Focus variant's own, for the
    other models the chunk of ``focus`` (their split is reported on the same grid)."""
    c = config["focus_chunk"]
    if name == "focus-nc":
        return -(-length // c)
    return min(c, length)


def query_split(data, chunk: int) -> np.ndarray:
    """Per sequence: 0 when the queried key last appeared in the query's chunk, 1 in the
    previous chunk, 2 further back (chunks of ``chunk`` tokens starting at 0; the query is
    the last token)."""
    inputs, key = data.inputs, data.info["query_key"]
    length = inputs.shape[1]
    body = inputs[:, :length - 2]
    hit = body == key[:, None]  # value, prefix and no-op ids never equal a key id
    if not hit.any(axis=1).all():
        raise ValueError("query_split: a query key does not occur in its sequence")
    last = length - 3 - np.argmax(hit[:, ::-1], axis=1)
    back = (length - 1) // chunk - last // chunk
    return np.minimum(back, 2)


def query_predictions(model, data, *, batch_size: int, device) -> np.ndarray:
    """The model's answer (argmax id) at the last position of every sequence."""
    import torch

    with torch.no_grad():
        model.eval()
        x = torch.as_tensor(data.inputs, dtype=torch.int64)
        out = [model(x[i:i + batch_size].to(device))[:, -1].argmax(-1).cpu()
               for i in range(0, len(x), batch_size)]
        model.train()
        return torch.cat(out).numpy()


def eval_batch_size(length: int) -> int:
    """Sequences per evaluation batch at ``length``: 128 up to 256 tokens, else ~16K tokens.

    Larger batches of long sequences leave the CPU caches: a Focus forward over 1000 sequences
    of 4096 tokens took 55 s in batches of 4 and 76 s in batches of 16 (one thread)."""
    return 128 if length <= 256 else max(4, 16384 // length)


def seed_data(config: dict, length: int, rng: np.random.Generator):
    """``(train, valid, test, torch_seed)`` of the seed whose stream is ``rng`` at ``length``:
    every length's three sets drawn in order (identical for every model of the seed), then
    the torch seed."""
    from ...neural.tasks import associative_recall

    data = None
    for n in sorted(config["lengths"]):
        sets = [associative_recall(k, n, vocab_size=config["vocab_size"], rng=rng)
                for k in (config["n_train"], config["n_valid"], config["n_test"])]
        if n == length:
            data = sets
    seed = torch_seed(rng) + sorted(config["lengths"]).index(length)
    return (*data, seed)


def train_settings(config: dict, length: int) -> dict:
    """The ``train`` settings of every run at ``length`` (all but its seed)."""
    tcfg = config["train"][str(length)]
    return {"steps": tcfg["max_steps"], "batch_size": tcfg["batch_size"], "lr": config["lr"],
            "warmup": config["warmup"], "betas": tuple(config["betas"]),
            "weight_decay": config["weight_decay"], "eval_every": tcfg["eval_every"],
            "eval_batch_size": eval_batch_size(length),
            "target_accuracy": config["target_accuracy"],
            "plateau": length_plateau(config, tcfg), "log_every": LOG_EVERY,
            "device": task_device()}


def measure(config: dict, name: str, length: int, model, res, test_set) -> dict:
    """A run's result: test accuracy at the query, split by where the key last appeared,
    the held-out curves and how training ended."""
    pred = (query_predictions(model, test_set, batch_size=eval_batch_size(length),
                              device=task_device())
            if not res.diverged else None)
    chunk = chunk_length(name, config, length)
    where = query_split(test_set, chunk)
    correct = (pred == test_set.info["answer"]) if pred is not None else None
    split = {}
    for i, key in enumerate(SPLITS):
        sel = where == i
        split[key] = {"n": int(sel.sum()),
                      "correct": int(correct[sel].sum()) if correct is not None else 0}
    rec = training_record(res)
    return {"accuracy": float(correct.mean()) if correct is not None else float("nan"),
            "split": split, "chunk_length": chunk,
            "eval_steps": res.evals["step"], "eval_accuracy": res.evals["accuracy"],
            "eval_loss": res.evals["loss"],
            **{k: rec[k] for k in ("status", "plateaued", "steps_done", "divergence",
                                   "train_seconds")}}


def run_alone(config: dict, task: dict, rng: np.random.Generator) -> dict:
    """Task ``{"seed_index", "model", "length"}``: one run."""
    n, name = task["length"], task["model"]
    train_set, valid_set, test_set, seed = seed_data(config, n, rng)
    with task_threads(1):
        model = build_model(name, config, n, seed)
        res = train_in_task(model, train_set, config, eval_data=valid_set, seed=seed,
                            callback=step_progress(config["train"][str(n)]["max_steps"]),
                            **train_settings(config, n))
        return measure(config, name, n, model, res, test_set)


def run_stack(config: dict, task: dict) -> list[dict]:
    """Task ``{"seed_index": 0, "model", "length", "seeds"}``: the runs of seeds
    0 .. seeds - 1, trained together; their results in seed order (each as
    :func:`run_alone` gives it)."""
    from ...neural.training import RunSpec

    n, name = task["length"], task["model"]
    steps = config["train"][str(n)]["max_steps"]
    settings = train_settings(config, n)
    specs, tests = [], []
    with task_threads(1):
        for s in range(task["seeds"]):
            train_set, valid_set, test_set, seed = seed_data(
                config, n, task_rng(config["seed"], s))
            specs.append(RunSpec(build_model(name, config, n, seed), train_set,
                                 eval_data=valid_set, callback=step_progress(steps),
                                 overrides={**settings, "seed": seed}))
            tests.append(test_set)
        results = train_group_in_task(specs, config,
                                      [f"train-seed{s}" for s in range(task["seeds"])])
        return [measure(config, name, n, spec.model, res, test)
                for spec, res, test in zip(specs, results, tests)]
