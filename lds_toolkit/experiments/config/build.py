"""The config of one run (:func:`build_config`): the experiment's own at a scale, the
``--set`` overrides, the derived entries and the checks of every declared range, before any
task runs; and the scale asked for (:func:`resolve_scale`). Shared by
:func:`~lds_toolkit.experiments.reproduce`, ``lds-toolkit report`` (the standard config a run
is compared with) and the command line."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..._jsonable import to_jsonable
from ..._validation import check_int
from ..base import Experiment
from ..scales import check_experiment_scale, check_scale
from .overrides import apply_overrides
from .ranges import Int, check_config

__all__ = ["COMMON_RANGES", "build_config", "resolve_scale"]

#: Ranges declared for every experiment.
COMMON_RANGES = {"seeds": Int(1, 10_000)}


def build_config(exp: Experiment, *, scale: str = "paper", seeds: int | None = None,
                 seed: int = 0, overrides: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The full config of one run: ``exp.config(scale, seeds)``, the overrides, the derived
    entries, the base ``seed`` and the ``scale``. Raises on a bad argument, an entry outside
    its declared range or a largest array that cannot fit in memory
    (:func:`~lds_toolkit.experiments.config.ranges.check_config`), before any task runs."""
    check_experiment_scale(exp, scale)
    seeds = None if seeds is None else check_int("seeds", seeds, 1)
    seed = check_int("seed", seed, 0)
    config = to_jsonable(dict(exp.config(scale, seeds)))
    if "seeds" not in config:
        raise ValueError(f"{exp.name}.config() must return 'seeds'")
    config = apply_overrides(config, overrides, experiment=exp.name)
    check_int("seeds", config["seeds"], 1)
    ranges = {**COMMON_RANGES, **exp.ranges}
    # the entries as given (so that derive() never sees, e.g., an empty list), then the
    # derived ones, the relations between entries and the largest array
    check_config(exp.name, config, ranges, overrides=config.get("overrides"))
    config = exp.derive(config)
    check_config(exp.name, config, ranges, relations=exp.relations,
                 largest_array=exp.largest_array,  # type: ignore[arg-type]  # takes the dict
                 overrides=config.get("overrides"))
    config["seed"] = int(seed)
    config["scale"] = scale
    return to_jsonable(config)


def resolve_scale(scale: str | None, quick: bool = False) -> str:
    """The scale asked for: ``scale``, or ``"quick"`` when only ``quick`` is set, else
    ``"paper"``; a contradiction (``scale="paper", quick=True``) is an error."""
    if scale is None:
        return "quick" if quick else "paper"
    check_scale(scale)
    if quick and scale != "quick":
        raise ValueError(f"quick=True contradicts scale={scale!r}; give one of them")
    return scale
