"""The module paths of before the rooms (``lds_toolkit.neural.s4``, ``.training_config``, ...)
still import, in a fresh interpreter, and are the modules of the rooms, not copies.

``lds_toolkit.neural``'s ``__init__`` puts each moved module into ``sys.modules`` under its
old name. One subprocess checks every old path; before each, it drops ``lds_toolkit.neural``
and its submodules from ``sys.modules`` (torch stays loaded: importing it again per path would
cost seconds each), so that every old path is the first thing imported of the package, as in
a user's new session. Checked per path: ``import OLD`` (the statement, then the attribute
chain), ``from OLD import NAME``, and a pickle that names ``OLD.NAME``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")

ROOT = Path(__file__).resolve().parents[2]

#: old path -> (its module in the rooms, a name it defines or re-exports)
OLD_PATHS = {
    "s4": ("layers.s4", "S4"),
    "dplr": ("layers.dplr", "DPLRSSM"),
    "s4plus": ("layers.s4plus", "S4Plus"),
    "stu": ("layers.stu", "STU"),
    "focus": ("layers.focus", "Focus"),
    "las": ("layers.las", "LaSAttention"),
    "blocks": ("layers.blocks", "SequenceModel"),
    "_focus_hyper": ("layers._focus_hyper", "FocusHyperNetwork"),
    "run_group": ("training.run_group", "train_group"),
    "recompute": ("training.recompute", "set_recompute"),
    "training_config": ("training.config", "TrainConfig"),
    "checkpoints": ("training.checkpoints", "CheckpointError"),
    "divergence": ("training.divergence", "DivergenceReport"),
    "evaluation": ("training.evaluation", "evaluate"),
    "runtime": ("training.runtime", "resolve_device"),
    "batching": ("training.batching", "as_tensors"),
}

_SCRIPT = """
import importlib, json, pickle, sys
import torch  # noqa: F401  (loaded once; the package is dropped and imported again per path)

P = "lds_toolkit.neural"
out = {}
for old, (new, name) in json.loads(sys.argv[1]).items():
    for mod in [m for m in sys.modules if m == P or m.startswith(P + ".")]:
        del sys.modules[mod]
    found = out[old] = {}
    scope = {}
    try:
        exec(f"import {P}.{old}", scope)            # the statement, as a user writes it
        reached = getattr(scope["lds_toolkit"].neural, old)
        moved = importlib.import_module(f"{P}.{new}")
        found["import_gives_the_new_module"] = reached is moved
        found["sys_modules_entry_is_the_new_module"] = sys.modules[f"{P}.{old}"] is moved
        exec(f"from {P}.{old} import {name} as obj", scope)
        found["from_import_gives_its_object"] = scope["obj"] is getattr(moved, name)
        found["pickle_by_old_name"] = pickle.loads(f"c{P}.{old}\\n{name}\\n.".encode()) is \\
            getattr(moved, name)
    except Exception as exc:
        found[f"raised {type(exc).__name__}: {exc}"] = False
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def checked() -> dict:
    r = subprocess.run([sys.executable, "-c", _SCRIPT, json.dumps(OLD_PATHS)],
                       capture_output=True, text=True, cwd=ROOT, check=False)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("old", sorted(OLD_PATHS))
def test_an_old_path_imports_in_a_fresh_interpreter_as_the_moved_module(checked, old):
    failed = [what for what, ok in checked[old].items() if not ok]
    assert not failed, f"lds_toolkit.neural.{old}: {failed}"


def test_the_old_paths_are_the_ones_the_package_keeps():
    """Every old path this test checks is kept by the package, and the reverse."""
    from lds_toolkit import neural

    kept = {old: new for old, new in vars(neural)["_OLD_PATHS"].items()}
    assert kept == {old: new for old, (new, _) in OLD_PATHS.items()}


def test_training_kept_its_path_as_the_training_package():
    import lds_toolkit.neural.training as training
    from lds_toolkit import neural

    assert training.__path__ and training.train is neural.train
    assert training.TrainConfig is neural.TrainConfig
