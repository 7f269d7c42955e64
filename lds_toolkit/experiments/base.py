"""The :class:`Experiment` contract and the registry.

An experiment is a sweep over (seed × parameter) tasks plus a summary and figures:

1. ``config(scale, seeds)`` returns every parameter as a JSON-serialisable dict for one of
   the :data:`SCALES` (it keys the result store: change a parameter and stored tasks no
   longer match). ``reproduce`` then applies the user's ``--set KEY=VALUE`` overrides
   (:func:`lds_toolkit.experiments.overrides.apply_overrides`) and calls ``derive(config)``
   for entries computed from others (so that an override of ``T`` also moves what depends
   on it);
2. ``tasks(config)`` lists the tasks, each a JSON-serialisable dict with a ``"seed_index"``;
3. ``run_task(config, task, rng)`` computes one task and returns a dict of numbers/arrays.
   ``rng`` is ``Generator(SeedSequence(config["seed"]).spawn(n)[task["seed_index"]])``: tasks
   sharing a seed index share a stream (common random numbers across parameters), and no
   number depends on how many workers ran or in which order tasks finished;
4. ``summarize(config, tasks, results)`` returns ``(summary, arrays)``: the numbers the
   figure shows (written to ``summary.json``) and raw arrays (written to ``arrays.npz``);
5. ``plot(config, summary, arrays, outdir)`` writes figures with
   :func:`lds_toolkit.experiments.plotting.save_figure` (PNG and PDF) and returns the paths.

An experiment also declares the paper claims it tests (``claims``, a tuple of
:class:`~lds_toolkit.experiments.claims.Claim`): the tests, ``lds-toolkit report`` and the
docs' reproduction table all read them.

Register with the :func:`register` decorator in a module of ``lds_toolkit/experiments/catalog/``
named after the experiment and listed in its ``EXPERIMENT_MODULES`` (see
:mod:`lds_toolkit.experiments.catalog`); :func:`discover` imports the listed modules (a module
whose optional dependency, e.g. torch, is missing is listed as unavailable with the reason).
"""

from __future__ import annotations

import importlib
from abc import ABC, abstractmethod
from typing import Any

import numpy as np

from .catalog import EXPERIMENT_MODULES
from .claims import evaluate_claim, format_value
from .scales import SCALES as SCALES  # re-exported: the scales' historical home
from .scales import by_scale as by_scale
from .scales import check_scale as check_scale

_CATALOG = f"{__package__}.catalog"
_REGISTRY: dict[str, Experiment] = {}
_UNAVAILABLE: dict[str, str] = {}
_DISCOVERED = False


class Experiment(ABC):
    """Base class of a registered experiment (see the module docstring for the contract).

    Class attributes
    ----------------
    name : str
        Registry name used on the command line (``lds-toolkit reproduce NAME``).
    description : str
        One line shown by ``lds-toolkit list``.
    paper : str
        Which paper figure/table it reproduces.
    claims : tuple of Claim
        The paper claims it tests (see :mod:`lds_toolkit.experiments.claims`).
    single_threaded : bool
        Run each task with BLAS/OpenMP limited to one thread (default). Keeps numbers
        bit-identical whatever ``--jobs`` is; experiments that parallelise internally (torch
        training) set it to False and are meant for ``--jobs 1``.
    ranges : dict
        Entry name -> :class:`~lds_toolkit.experiments.ranges.Spec` for every config entry
        (``seeds`` is declared for all experiments).
    relations : tuple of Relation
        Orderings between entries (``k <= T``).
    """

    name: str = ""
    description: str = ""
    paper: str = ""
    single_threaded: bool = True
    claims: tuple = ()
    #: What each config entry may hold (see :mod:`lds_toolkit.experiments.ranges`); checked,
    #: with ``relations`` and :meth:`largest_array`, before any task runs.
    ranges: dict = {}
    relations: tuple = ()

    def largest_array(self, config: dict[str, Any]) -> tuple[float, str] | None:
        """``(bytes, description)`` of the largest single array a task of ``config``
        allocates, checked against the memory available before any task runs (default:
        no estimate)."""
        return None

    @abstractmethod
    def config(self, scale: str, seeds: int | None) -> dict[str, Any]:
        """All parameters (JSON-serialisable) at ``scale`` (one of :data:`SCALES`),
        including ``"seeds"``."""

    def derive(self, config: dict[str, Any]) -> dict[str, Any]:
        """Entries computed from others, after overrides (default: none). Return the config."""
        return config

    def headline(self, summary: dict[str, Any]) -> list[str]:
        """A few lines the command line prints after a run: by default each declared claim
        with its number and verdict (see :mod:`lds_toolkit.experiments.claims`)."""
        lines = []
        for claim in self.claims:
            res = evaluate_claim(claim, summary)
            if res.verdict == "not run":
                continue
            expected = "" if res.expected else f", not expected at {res.scale}"
            lines.append(f"{claim.where} [{claim.id}]: {format_value(res.value)} "
                         f"{claim.describe_test()} -> {res.verdict}{expected}")
        return lines

    def tasks(self, config: dict[str, Any]) -> list[dict[str, Any]]:
        """Default: one task per seed."""
        return [{"seed_index": i} for i in range(config["seeds"])]

    @abstractmethod
    def run_task(self, config: dict[str, Any], task: dict[str, Any],
                 rng: np.random.Generator) -> dict[str, Any]:
        """Compute one task; return a dict of numbers and numpy arrays."""

    @abstractmethod
    def summarize(self, config, tasks, results) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        """Reduce task results (in task order) to (summary dict, arrays dict)."""

    def plot(self, config, summary, arrays, outdir) -> list:
        """Write figures into ``outdir``; return their paths."""
        return []

    def __repr__(self) -> str:
        return f"<Experiment {self.name!r}>"


def register(cls):
    """Class decorator: instantiate and register an :class:`Experiment` subclass."""
    if not (isinstance(cls, type) and issubclass(cls, Experiment)):
        raise TypeError(f"register expects an Experiment subclass, got {cls!r}")
    if not cls.name:
        raise ValueError(f"{cls.__name__} must set a non-empty `name`")
    existing = _REGISTRY.get(cls.name)
    if existing is not None and type(existing).__qualname__ != cls.__qualname__:
        raise ValueError(f"experiment name {cls.name!r} is already registered by "
                         f"{type(existing).__module__}.{type(existing).__qualname__}")
    _REGISTRY[cls.name] = cls()
    return cls


def discover() -> None:
    """Import every module listed in
    :data:`lds_toolkit.experiments.catalog.EXPERIMENT_MODULES` (once)."""
    global _DISCOVERED
    if _DISCOVERED:
        return
    for module in EXPERIMENT_MODULES.values():
        try:
            importlib.import_module(f"{_CATALOG}.{module}")
        except ModuleNotFoundError as exc:  # optional dependency missing (e.g. torch)
            if exc.name and exc.name.split(".")[0] in ("torch", "dask", "distributed", "cvxpy"):
                _UNAVAILABLE[module] = f"needs {exc.name} (pip install 'lds_toolkit[nn]')"
            else:
                raise
    _DISCOVERED = True


def get_experiment(name: str) -> Experiment:
    """Look up a registered experiment by name."""
    discover()
    if name not in _REGISTRY:
        known = ", ".join(sorted(_REGISTRY)) or "none"
        extra = ""
        if _UNAVAILABLE:
            extra = "; unavailable: " + ", ".join(f"{k} ({v})" for k, v in _UNAVAILABLE.items())
        raise ValueError(f"unknown experiment {name!r}; registered: {known}{extra}")
    return _REGISTRY[name]


def list_experiments() -> dict[str, Experiment]:
    """All registered experiments, by name."""
    discover()
    return dict(sorted(_REGISTRY.items()))


def unavailable_experiments() -> dict[str, str]:
    """Catalog modules that could not be imported for lack of an optional dependency."""
    discover()
    return dict(_UNAVAILABLE)
