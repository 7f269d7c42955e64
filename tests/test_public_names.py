"""The public names users have, and the import paths they reach them by, do not change.

``tests/public_names.json`` was written from the package *before* neural/ and experiments/
were split into rooms (issue 43): for every public package its ``__all__``, and for every
import path a user could have written, the names reachable there and the signature of each
callable. The test imports each path again and checks that

* every recorded name is still there (a name may be added, not removed),
* it is the same object as the one the package exports under that name, where it does,
* a callable's signature is the recorded one.

Regenerate only for a deliberate API change (and say so in the CHANGELOG):
``python -m tests.test_public_names --write``.
"""

from __future__ import annotations

import importlib
import inspect
import json
import re
import sys
from pathlib import Path

import pytest

SNAPSHOT = Path(__file__).with_name("public_names.json")

#: Packages whose ``__all__`` is the curated API.
PACKAGES = ["lds_toolkit", "lds_toolkit.systems", "lds_toolkit.control", "lds_toolkit.learning",
            "lds_toolkit.teaching", "lds_toolkit.experiments", "lds_toolkit.neural",
            "lds_toolkit.neural.tasks"]
#: Import paths users have written (the docs, tutorials and lessons use them): each keeps the
#: names of its ``__all__``, or, without one, the package-exported names it defined.
MODULE_PATHS = [
    "lds_toolkit.learning.river",
    "lds_toolkit.neural.training", "lds_toolkit.neural.s4", "lds_toolkit.neural.dplr",
    "lds_toolkit.neural.s4plus", "lds_toolkit.neural.stu", "lds_toolkit.neural.focus",
    "lds_toolkit.neural.las", "lds_toolkit.neural.blocks", "lds_toolkit.neural.run_group",
    "lds_toolkit.neural.recompute", "lds_toolkit.neural.training_config",
    "lds_toolkit.neural.checkpoints", "lds_toolkit.neural.divergence",
    "lds_toolkit.neural.evaluation", "lds_toolkit.neural.runtime",
    "lds_toolkit.neural.batching",
    "lds_toolkit.experiments.store", "lds_toolkit.experiments.claims",
    "lds_toolkit.experiments.runner", "lds_toolkit.experiments.base",
]


def _signature(obj) -> str | None:
    if not callable(obj):
        return None
    try:
        text = str(inspect.signature(obj))
    except (TypeError, ValueError):
        return None
    return re.sub(r" at 0x[0-9a-f]+", "", text)  # a default's address differs per process


def _exported() -> dict[int, str]:
    """id(object) -> 'package.name' for every name of a package's ``__all__``."""
    out = {}
    for pkg in PACKAGES:
        mod = importlib.import_module(pkg)
        for name in mod.__all__:
            out.setdefault(id(getattr(mod, name)), f"{pkg}.{name}")
    return out


def _names_of(path: str, exported: dict[int, str]) -> list[str]:
    mod = importlib.import_module(path)
    if hasattr(mod, "__all__"):
        return sorted(mod.__all__)
    return sorted(n for n, v in vars(mod).items()
                  if not n.startswith("_") and (inspect.isclass(v) or inspect.isfunction(v))
                  and getattr(v, "__module__", None) == path)


def snapshot() -> dict:
    exported = _exported()
    out: dict = {"packages": {}, "paths": {}}
    for pkg in PACKAGES:
        mod = importlib.import_module(pkg)
        out["packages"][pkg] = {n: _signature(getattr(mod, n)) for n in sorted(mod.__all__)}
    for path in MODULE_PATHS:
        mod = importlib.import_module(path)
        out["paths"][path] = {n: {"signature": _signature(getattr(mod, n)),
                                  "exported_as": exported.get(id(getattr(mod, n)))}
                              for n in _names_of(path, exported)}
    return out


RECORDED = json.loads(SNAPSHOT.read_text()) if SNAPSHOT.exists() else {"packages": {},
                                                                         "paths": {}}


def problems(where: str, mod) -> list[str]:
    """What ``mod`` (imported from ``where``) lost against the snapshot."""
    if where in RECORDED["packages"]:
        names = RECORDED["packages"][where]
    else:
        names = {n: rec["signature"] for n, rec in RECORDED["paths"][where].items()}
    found = [f"{where} lost {n}" for n in names if not hasattr(mod, n)]
    found += [f"{where}.{n}: signature {_signature(getattr(mod, n))}, recorded {sig}"
              for n, sig in names.items()
              if hasattr(mod, n) and _signature(getattr(mod, n)) != sig]
    if where in RECORDED["packages"]:
        found += [f"{where}.__all__ lost {n}" for n in names if n not in mod.__all__]
    return found


@pytest.mark.parametrize("where", sorted(RECORDED["packages"]) + sorted(RECORDED["paths"]))
def test_recorded_names_are_still_there_with_their_signatures(where):
    pytest.importorskip("torch") if ".neural" in where else None
    pytest.importorskip("river") if where.endswith(".river") else None
    found = problems(where, importlib.import_module(where))
    assert not found, "\n".join(found)


def test_the_check_sees_a_lost_name_and_a_changed_signature():
    import types

    real = importlib.import_module("lds_toolkit.systems")
    fake = types.SimpleNamespace(**{n: getattr(real, n) for n in real.__all__})
    fake.__all__ = list(real.__all__)
    assert problems("lds_toolkit.systems", fake) == []
    del fake.simulate
    fake.LDS = lambda a: a
    found = problems("lds_toolkit.systems", fake)
    assert any("lost simulate" in f for f in found)
    assert any("LDS: signature (a)" in f for f in found)


@pytest.mark.parametrize("path", sorted(RECORDED["paths"]))
def test_a_path_gives_the_objects_the_packages_export(path):
    """A name that was the package's exported object is still that object (not a copy)."""
    pytest.importorskip("torch") if ".neural" in path else None
    pytest.importorskip("river") if path.endswith(".river") else None
    mod = importlib.import_module(path)
    for name, rec in RECORDED["paths"][path].items():
        if rec["exported_as"]:
            pkg, _, exported = rec["exported_as"].rpartition(".")
            assert getattr(mod, name) is getattr(importlib.import_module(pkg), exported), (
                f"{path}.{name} is no longer {rec['exported_as']}")


def test_the_snapshot_covers_the_promised_paths():
    assert set(RECORDED["packages"]) == set(PACKAGES)
    assert set(RECORDED["paths"]) == set(MODULE_PATHS)
    assert "S4" in RECORDED["packages"]["lds_toolkit.neural"]
    assert "train" in RECORDED["paths"]["lds_toolkit.neural.training"]


if __name__ == "__main__":
    if "--write" in sys.argv:
        SNAPSHOT.write_text(json.dumps(snapshot(), indent=1, sort_keys=True) + "\n")
        print(f"wrote {SNAPSHOT}")
