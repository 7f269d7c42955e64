"""The catalog's layout: an experiment's code is found from its name.

``lds-toolkit reproduce NAME`` runs the experiment defined in
``lds_toolkit/experiments/catalog/NAME_with_underscores.py``; the catalog's
``EXPERIMENT_MODULES`` lists every such module and nothing else, and shared code lives in
private ``_*.py`` modules that register nothing.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import lds_toolkit.experiments.catalog as catalog
from lds_toolkit.experiments import list_experiments, unavailable_experiments
from lds_toolkit.experiments.catalog import EXPERIMENT_MODULES

CATALOG_DIR = Path(catalog.__file__).resolve().parent
PACKAGE = catalog.__name__


def module_name(name: str) -> str:
    """The module an experiment called ``name`` must live in."""
    return name.replace("-", "_")


def toolkit_experiments() -> dict:
    """Registered experiments defined inside the package (the tests register their own)."""
    return {name: exp for name, exp in list_experiments().items()
            if type(exp).__module__.split(".")[0] == "lds_toolkit"}


def test_every_registered_experiment_lives_in_the_module_named_after_it():
    experiments = toolkit_experiments()
    assert experiments
    for name, exp in experiments.items():
        module = module_name(name)
        assert (CATALOG_DIR / f"{module}.py").is_file(), name
        assert type(exp).__module__ == f"{PACKAGE}.{module}", (name, type(exp).__module__)
        assert EXPERIMENT_MODULES.get(name) == module, name


def test_every_listed_module_defines_its_experiment():
    # registered whether or not its optional dependencies are installed (modules import
    # without torch); those it lacks make it unavailable, by name, with the reason
    registered = toolkit_experiments()
    assert set(unavailable_experiments()) <= set(registered)
    for name, module in EXPERIMENT_MODULES.items():
        assert module == module_name(name), (name, module)
        assert (CATALOG_DIR / f"{module}.py").is_file(), module
        assert type(registered[name]).__module__ == f"{PACKAGE}.{module}", name
    # one module per experiment, and nothing registered that the mapping does not list
    assert len(set(EXPERIMENT_MODULES.values())) == len(EXPERIMENT_MODULES)
    assert set(registered) <= set(EXPERIMENT_MODULES)


def test_every_public_catalog_module_is_listed():
    public = {p.stem for p in CATALOG_DIR.glob("*.py") if not p.name.startswith("_")}
    assert public == set(EXPERIMENT_MODULES.values())
    # the private modules hold shared code only
    for exp in list_experiments().values():
        assert not type(exp).__module__.rpartition(".")[2].startswith("_"), exp


def test_the_mapping_is_read_without_importing_an_experiment():
    """The catalog's ``__init__`` (and the registry that reads it) imports no experiment
    module, so that the mapping can decide which one to load."""
    code = ("import sys\n"
            f"from {PACKAGE} import EXPERIMENT_MODULES\n"
            "import lds_toolkit.experiments\n"
            f"loaded = sorted(m for m in sys.modules if m.startswith('{PACKAGE}.'))\n"
            "assert EXPERIMENT_MODULES and not loaded, loaded\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr


def test_reproduce_all_runs_the_cheap_numpy_experiments_before_the_torch_ones():
    """``reproduce all`` follows EXPERIMENT_MODULES (cheapest quick run first): every numpy
    experiment (seconds) before any torch one (tens of seconds)."""
    from lds_toolkit.experiments.base import get_experiment, known_names

    names = [n for n in known_names() if n in EXPERIMENT_MODULES]
    assert names == list(EXPERIMENT_MODULES)
    needs_torch = [bool(get_experiment(n).requires) for n in names]
    assert needs_torch == sorted(needs_torch) and any(needs_torch) and not all(needs_torch)
