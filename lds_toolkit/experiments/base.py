"""The :class:`Experiment` contract and the registry.

An experiment is a sweep over (seed × parameter) tasks plus a summary and figures:

1. ``config(scale, seeds)`` returns every parameter as a JSON-serialisable dict for one of
   the :data:`SCALES` (it keys the result store: change a parameter and stored tasks no
   longer match). ``reproduce`` then applies the user's ``--set KEY=VALUE`` overrides
   (:func:`lds_toolkit.experiments.config.overrides.apply_overrides`) and calls ``derive(config)``
   for entries computed from others (so that an override of ``T`` also moves what depends
   on it);
2. ``tasks(config)`` lists the tasks, each a JSON-serialisable dict with a ``"seed_index"``;
3. ``run_task(config, task, rng)`` computes one task and returns a dict of numbers/arrays.
   ``rng`` is ``Generator(SeedSequence(config["seed"]).spawn(n)[task["seed_index"]])``: tasks
   sharing a seed index share a stream (common random numbers across parameters), and no
   number depends on how many workers ran or in which order tasks finished;
4. ``summarize(config, tasks, results)`` returns ``(summary, arrays)``: the numbers the
   figure shows (written to ``summary.json``, results only: the same seed gives the same
   bytes) and raw arrays (written to ``arrays.npz``); wall times the tasks measured go to
   ``run.json`` through ``timings(config, tasks, results)``;
5. ``plot(config, summary, arrays, outdir)`` writes figures with
   :func:`lds_toolkit.experiments.plotting.save_figure` (PNG and PDF) and returns the paths.

An experiment also declares the paper claims it tests (``claims``, a tuple of
:class:`~lds_toolkit.experiments.claims.Claim`): the tests, ``lds-toolkit report`` and the
docs' reproduction table all read them.

Register with the :func:`register` decorator in a module of ``lds_toolkit/experiments/catalog/``
named after the experiment and listed in its ``EXPERIMENT_MODULES`` (see
:mod:`lds_toolkit.experiments.catalog`). :func:`get_experiment` imports only the module of the
experiment asked for; :func:`list_experiments` imports every listed module (:func:`discover`).
Catalog modules import without their optional dependencies (torch is imported inside the
functions that train): an experiment names what it needs to *run* in ``requires``, and
:func:`missing_requirements` says what is absent, so that ``lds-toolkit list``, ``report``
and every numpy experiment work without torch.
"""

from __future__ import annotations

import difflib
import importlib
import importlib.util
from abc import ABC, abstractmethod
from typing import Any

import numpy as np

from .catalog import EXPERIMENT_MODULES
from .claims import evaluate_claim
from .scales import COMMON_SCALES
from .scales import SCALES as SCALES  # re-exported: the scales' historical home
from .scales import by_scale as by_scale
from .scales import check_scale as check_scale

_CATALOG = f"{__package__}.catalog"
_REGISTRY: dict[str, Experiment] = {}
_UNAVAILABLE: dict[str, str] = {}
_DISCOVERED = False

#: Optional dependency -> the extra of ``lds_toolkit`` that installs it.
EXTRAS = {"torch": "nn", "dask": "dist", "distributed": "dist"}


class UnknownExperimentError(ValueError):
    """No experiment of that name; ``suggestions`` holds the close registered names."""

    def __init__(self, name: str, suggestions: list[str], known: list[str]):
        self.name, self.suggestions = name, suggestions
        if suggestions:
            hint = f"did you mean {' or '.join(repr(s) for s in suggestions)}?"
        else:
            hint = f"known: {', '.join(known)}"
        super().__init__(f"unknown experiment {name!r}; {hint}")


class MissingDependencyError(ImportError):
    """An experiment needs an optional dependency that is not installed."""


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
    scales : tuple of str
        The scales it defines: ``("quick", "medium", "paper")``, plus ``"gpu"`` for the
        experiments with a configuration sized for one GPU.
    requires : tuple of str
        Optional packages (import names) the experiment needs to run, e.g. ``("torch",)``;
        see :func:`missing_requirements`. Its module imports without them.
    ranges : dict
        Entry name -> :class:`~lds_toolkit.experiments.config.ranges.Spec` for every config entry
        (``seeds`` is declared for all experiments).
    relations : tuple of Relation
        Orderings between entries (``k <= T``).
    """

    name: str = ""
    description: str = ""
    paper: str = ""
    single_threaded: bool = True
    claims: tuple = ()
    scales: tuple = COMMON_SCALES
    requires: tuple[str, ...] = ()
    #: What each config entry may hold (see :mod:`lds_toolkit.experiments.config.ranges`); checked,
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
        with its number, verdict and margin (see :mod:`lds_toolkit.experiments.claims`)."""
        lines = []
        for claim in self.claims:
            res = evaluate_claim(claim, summary)
            if res.verdict == "not run":
                continue
            expected = "" if res.expected else f", not expected at {res.scale}"
            sep = "; test: " if claim.per_seed else " "
            margin = res.describe_margin()
            lines.append(f"{claim.where} [{claim.id}]: {res.describe_value()}{sep}"
                         f"{claim.describe_test()} -> {res.verdict}{expected}"
                         + (f" ({margin})" if margin else ""))
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

    def timings(self, config, tasks, results) -> dict[str, Any]:
        """Wall times measured by the tasks (training seconds per model and seed, ...), for
        ``run.json``: they change from run to run, so they never enter ``summary.json``, which
        holds results only (default: none)."""
        return {}

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


def _import_catalog_module(module: str) -> None:
    try:
        importlib.import_module(f"{_CATALOG}.{module}")
    except ModuleNotFoundError as exc:  # a catalog module that still imports an extra
        top = (exc.name or "").split(".")[0]
        if top not in EXTRAS:
            raise
        _UNAVAILABLE[module] = _install_hint(top)


def _install_hint(package: str) -> str:
    extra = EXTRAS.get(package)
    if extra is None:
        return f"needs {package}, which is not installed"
    return (f"needs {package}, which is not installed: install the {extra!r} extra, "
            f"pip install 'lds_toolkit[{extra}]'")


def discover() -> None:
    """Import every module listed in
    :data:`lds_toolkit.experiments.catalog.EXPERIMENT_MODULES` (once)."""
    global _DISCOVERED
    if _DISCOVERED:
        return
    for module in EXPERIMENT_MODULES.values():
        _import_catalog_module(module)
    _DISCOVERED = True


def known_names() -> list[str]:
    """Every experiment name: the catalog's, cheapest quick run first (the order of
    :data:`~lds_toolkit.experiments.catalog.EXPERIMENT_MODULES`, which ``reproduce all``
    follows), then any registered outside the catalog, by name. Imports nothing."""
    return list(EXPERIMENT_MODULES) + sorted(set(_REGISTRY) - set(EXPERIMENT_MODULES))


def get_experiment(name: str) -> Experiment:
    """The registered experiment ``name``, importing only its catalog module.

    Raises
    ------
    UnknownExperimentError
        (a ``ValueError``) no such experiment; the message suggests close names.
    MissingDependencyError
        its module could not be imported for lack of an optional dependency.
    """
    if not isinstance(name, str):
        raise TypeError(f"name must be an experiment's name (a string; lds-toolkit list shows "
                        f"them) or an Experiment, got {type(name).__name__} {name!r:.60}")
    if name not in _REGISTRY and name in EXPERIMENT_MODULES:
        module = EXPERIMENT_MODULES[name]
        _import_catalog_module(module)
        if module in _UNAVAILABLE:
            raise MissingDependencyError(f"{name} {_UNAVAILABLE[module]}")
    if name not in _REGISTRY:
        known = known_names()
        raise UnknownExperimentError(str(name), suggest(str(name), known), known)
    return _REGISTRY[name]


def suggest(name: str, known: list[str]) -> list[str]:
    """Names in ``known`` close to ``name`` (a misspelling, a missing dash), best first."""
    close = difflib.get_close_matches(name, known, n=3, cutoff=0.6)
    prefix = [k for k in known if k.startswith(name) and k not in close] if name else []
    return (close + prefix)[:3]


def list_experiments() -> dict[str, Experiment]:
    """All registered experiments, by name."""
    discover()
    return dict(sorted(_REGISTRY.items()))


def missing_requirements(exp: Experiment) -> list[str]:
    """The packages of ``exp.requires`` that cannot be found (``find_spec``, without
    importing them; a package blocked with ``sys.modules[name] = None`` counts as missing)."""
    missing = []
    for package in exp.requires:
        try:
            found = importlib.util.find_spec(package) is not None
        except (ImportError, ValueError):
            found = False
        if not found:
            missing.append(package)
    return missing


def check_requirements(exp: Experiment) -> None:
    """``MissingDependencyError`` naming the package and the extra that installs it when one
    of ``exp.requires`` is missing."""
    missing = missing_requirements(exp)
    if missing:
        raise MissingDependencyError(f"{exp.name} {_install_hint(missing[0])}")


def unavailable_experiments() -> dict[str, str]:
    """Experiments that cannot run here, by name, with the reason: a missing optional
    dependency (:attr:`Experiment.requires`), or a catalog module that could not be imported
    without one."""
    discover()
    out = {name: _install_hint(missing_requirements(exp)[0])
           for name, exp in sorted(_REGISTRY.items()) if missing_requirements(exp)}
    by_module = {m: n for n, m in EXPERIMENT_MODULES.items()}
    out.update({by_module.get(m, m): why for m, why in _UNAVAILABLE.items()})
    return out
