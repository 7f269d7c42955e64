"""The task store: pickle-free exact round trip, integrity checks, code version."""

from __future__ import annotations

import importlib
import json
import math
import os
import pickle
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

from lds_toolkit.experiments import list_experiments, reproduce
from lds_toolkit.experiments.config import build_config
from lds_toolkit.experiments.runner.sweep import StoreWarning, task_rng
from lds_toolkit.experiments.store import StoredTaskRejected, TaskStore, task_key
from lds_toolkit.experiments.store._codec import decode, encode
from lds_toolkit.experiments.store.version import code_version, module_closure

from ._identical import assert_identical


@pytest.fixture(autouse=True)
def _private_filter_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("LDS_TOOLKIT_CACHE", str(tmp_path / "filter_cache"))


def _nan_with_payload() -> float:
    return np.frombuffer(bytes.fromhex("7ff8000000000123")[::-1], dtype=np.float64)[0].item()


SYNTHETIC = {
    "int": 3, "big_int": -(2**80), "float": 0.1, "neg_zero": -0.0, "nan": _nan_with_payload(),
    "inf": -math.inf, "tiny": 5e-324, "bool": False, "none": None, "str": "ü\n\"$\"",
    "complex": complex(1.5, -math.nan),
    "list": [1, 2.0, "3", None, [True]], "tuple": (1, (2.5, "x"), []),
    "curves": {"64": (np.arange(4, dtype=np.int64), np.array([0.5, np.nan, 1.0, 1.0]))},
    "int_keys": {3: "a", (1, 2): "b", 0.5: "c"}, "dollar": {"$": 1, "array": 2},
    "f32": np.linspace(0, 1, 7, dtype=np.float32), "empty": np.zeros((0, 3)),
    "fortran": np.asfortranarray(np.arange(12.0).reshape(3, 4)),
    "view": np.arange(10.0)[::3], "c128": np.array([1 + 2j, np.nan]),
    "u8": np.array([0, 255], dtype=np.uint8), "bools": np.array([True, False]),
    "strings": np.array(["ab", "c"]), "3d": np.random.default_rng(0).standard_normal((2, 3, 4)),
    "scalars": [np.float64(0.1), np.float32(2.5), np.int32(-7), np.int64(2**40), np.bool_(True),
                np.complex64(1 - 1j), np.str_("s"), np.uint16(9)],
}


def test_codec_round_trips_every_supported_value_exactly():
    tree, arrays = encode(SYNTHETIC)
    text = json.dumps(tree, allow_nan=False)  # valid strict JSON
    back = decode(json.loads(text), arrays)
    assert_identical(SYNTHETIC, back)
    assert all(type(a) is np.ndarray and not a.dtype.hasobject for a in arrays.values())


def test_codec_keeps_shared_arrays_shared():
    a = np.arange(3.0)
    back = decode(*encode({"x": a, "y": [a]}))
    assert back["x"] is back["y"][0]


@pytest.mark.parametrize("value, where", [
    ({"x": [object()]}, r"result\['x'\]\[0\]: .* got builtins.object"),
    ({"a": np.array([None, 1])}, r"result\['a'\]: arrays of dtype object"),
    ({"p": Path("x")}, r"result\['p'\]: .* got pathlib"),
    ((np.ma.masked_array([1.0]),), r"result\[0\]: .* got numpy.ma.MaskedArray"),
])
def test_codec_refuses_values_that_would_need_pickle(value, where):
    with pytest.raises(TypeError, match=where):
        encode(value)


# tiny configs of every quick experiment: the real run_task code paths, seconds in all
TINY = {
    "assoc-recall": {"n_train": 64, "n_valid": 16, "n_test": 16, "train.30.max_steps": 4,
                     "train.30.eval_every": 2},
    "cloze": {"epochs": 1, "n_samples": 40},
    "induction-heads": {"max_steps": 4, "n_train": 64, "n_eval": 32, "eval_every": 2},
    "las-ablation": {"max_steps": 4, "eval_every": 2, "n_train": 64, "n_valid": 16,
                     "n_test": 32},
    "lds-streams": {"steps": 4, "n_train": 16, "n_eval": 4},
    "nss-s4": {"steps": 4, "n_perturbations": 2},
    "nss-etc": {"horizon": 1.0},
    "regret-scaling": {"T_values": [64, 128]},
}


def _round_trip_all_tasks(exp, config, tmp_path):
    store = TaskStore(tmp_path / "store", code_version="v")
    tasks = exp.tasks(config)
    results, loaded = [], []
    for task in tasks:
        result = exp.run_task(config, task, task_rng(config["seed"], task["seed_index"]))
        key = task_key(exp.name, config, task)
        store.save(key, result)
        results.append(result)
        loaded.append(store.load(key))
    for task, a, b in zip(tasks, results, loaded):
        assert_identical(a, b, f"{exp.name} {task}")
    # and the summary computed from stored results is the same, byte for byte
    s1, arr1 = exp.summarize(config, tasks, results)
    s2, arr2 = exp.summarize(config, tasks, loaded)
    assert json.dumps(s1, default=repr) == json.dumps(s2, default=repr)
    assert_identical(dict(arr1), dict(arr2))


@pytest.mark.parametrize("name", sorted(list_experiments()))
def test_store_round_trips_the_real_results_of_every_experiment(name, tmp_path):
    exp = list_experiments()[name]
    config = build_config(exp, scale="quick", seeds=1, overrides=TINY.get(name))
    _round_trip_all_tasks(exp, config, tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(list_experiments()))
def test_store_round_trips_quick_results_unshrunk(name, tmp_path):
    exp = list_experiments()[name]
    _round_trip_all_tasks(exp, build_config(exp, scale="quick", seeds=1), tmp_path)


# ------------------------------------------------------------------------- integrity


def _summary_bytes(out, name="lds-impulse"):
    return (Path(out) / name / "summary.json").read_bytes()


def _flip_bit(path: Path, position: float, bit: int = 0):
    data = bytearray(path.read_bytes())
    i = int(position * (len(data) - 1))
    data[i] ^= 1 << bit
    path.write_bytes(bytes(data))


def test_truncated_flipped_swapped_and_empty_task_files_are_recomputed(tmp_path):
    first = reproduce("lds-impulse", quick=True, out=tmp_path, progress=False)
    original = _summary_bytes(tmp_path)
    root = tmp_path / "lds-impulse" / ".tasks"
    digests = TaskStore(root).keys()
    assert len(digests) == first.stats.n_tasks == 9
    j = [root / f"{d}.json" for d in digests]
    z = [root / f"{d}.npz" for d in digests]
    j[0].write_bytes(j[0].read_bytes()[:100])                # truncated record
    j[1].write_bytes(b"")                                    # empty record
    _flip_bit(j[2], 0.5)                                     # one flipped bit in the record
    _flip_bit(z[3], 0.7, bit=3)                              # one flipped bit in the arrays
    z[4].write_bytes(z[4].read_bytes()[:-16])                # truncated arrays
    z[5].write_bytes(z[6].read_bytes())                      # arrays of another task
    j[7].write_bytes(j[8].read_bytes())                      # record of another task
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        again = reproduce("lds-impulse", quick=True, out=tmp_path, progress=False)
    reports = [w for w in caught if issubclass(w.category, StoreWarning)]
    assert len(reports) == 1, "every rejected file is reported, in one warning"
    text = str(reports[0].message)
    assert text.startswith("7 stored task result(s)")
    for why in ("not a valid JSON", "checksum mismatch", "array file checksum mismatch",
                "holds the result of another task"):
        assert why in text, why
    assert (again.stats.n_rejected, again.stats.n_computed, again.stats.n_cached) == (7, 7, 2)
    assert _summary_bytes(tmp_path) == original
    run = json.loads((tmp_path / "lds-impulse" / "run.json").read_text())
    assert run["tasks_rejected"] == 7
    third = reproduce("lds-impulse", quick=True, out=tmp_path, progress=False)
    assert (third.stats.n_rejected, third.stats.n_cached) == (0, 9)


def test_every_single_bit_flip_is_rejected_or_harmless(tmp_path):
    """Flip bits all over a record and its arrays: load either refuses with
    StoredTaskRejected or returns the identical value (a flip JSON reads back the same, e.g.
    ``1e-05`` -> ``1E-05``); never another exception, never a different value."""
    store = TaskStore(tmp_path, code_version="v")
    key = task_key("x", {"seed": 0}, {"seed_index": 0})
    value = {"a": np.arange(5.0), "b": [1, 2.5e-05, "s"], "c": (None, True)}
    store.save(key, value)
    rng = np.random.default_rng(1)
    for path in (tmp_path / f"{key.digest}.json", tmp_path / f"{key.digest}.npz"):
        pristine = path.read_bytes()
        for _ in range(150):
            _flip_bit(path, rng.random(), int(rng.integers(8)))
            try:
                assert_identical(value, store.load(key))
            except StoredTaskRejected:
                pass
            path.write_bytes(pristine)


def test_a_stored_file_of_another_version_is_rejected(tmp_path):
    key = task_key("x", {"seed": 0}, {"seed_index": 0})
    TaskStore(tmp_path, code_version="1.0+src.aaaa").save(key, {"v": 1.0})
    with pytest.raises(StoredTaskRejected, match="computed by code version 1.0\\+src.aaaa, "
                                                 "the current one is 1.0\\+src.bbbb"):
        TaskStore(tmp_path, code_version="1.0+src.bbbb").load(key)


EXPERIMENT_MODULE = '''
import numpy as np
from lds_toolkit.experiments import Experiment
from .helper import SCALE


class Versioned(Experiment):
    name = "versioned"

    def config(self, scale, seeds):
        return {"seeds": seeds or 3}

    def run_task(self, config, task, rng):
        return {"x": SCALE * float(rng.standard_normal())}

    def summarize(self, config, tasks, results):
        return {"x": [r["x"] for r in results]}, {}
'''


def _import_versioned(pkg: Path):
    for mod in [m for m in sys.modules if m.startswith(pkg.name)]:
        del sys.modules[mod]
    importlib.invalidate_caches()
    return importlib.import_module(f"{pkg.name}.exp").Versioned()


def test_a_changed_code_version_invalidates_stored_tasks(tmp_path, monkeypatch):
    """Editing the experiment's module, or a module it imports, recomputes every task."""
    pkg = tmp_path / "versioned_pkg_for_store_test"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "helper.py").write_text("SCALE = 1.0\n")
    (pkg / "exp.py").write_text(EXPERIMENT_MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    out = tmp_path / "out"

    exp = _import_versioned(pkg)
    assert f"{pkg.name}.helper" in module_closure(type(exp).__module__)[0]
    v1 = code_version(exp)
    a = reproduce(exp, out=out, progress=False)
    assert reproduce(exp, out=out, progress=False).stats.n_cached == 3

    (pkg / "helper.py").write_text("SCALE = 2.0\n")  # a change two modules away
    exp = _import_versioned(pkg)
    assert code_version(exp) != v1
    with pytest.warns(StoreWarning, match="3 stored task result.*computed by code version"):
        b = reproduce(exp, out=out, progress=False)
    assert (b.stats.n_computed, b.stats.n_rejected) == (3, 3)
    assert b.summary["x"] == [2 * x for x in a.summary["x"]]

    (pkg / "exp.py").write_text(EXPERIMENT_MODULE.replace("float(rng", "1 + float(rng"))
    exp = _import_versioned(pkg)
    with pytest.warns(StoreWarning):
        c = reproduce(exp, out=out, progress=False)
    assert c.stats.n_computed == 3 and c.summary["x"] != b.summary["x"]


def test_code_version_covers_the_shared_modules_of_the_catalog():
    closure = module_closure("lds_toolkit.experiments.catalog.regret_scaling")[0]
    for mod in ("lds_toolkit.experiments.catalog._lengen_common", "lds_toolkit.learning.filters",
                "lds_toolkit.learning.learners", "lds_toolkit.experiments.runner.sweep"):
        assert mod in closure, mod
    neural = list_experiments().get("nss-s4")
    if neural is not None:
        closure = module_closure(type(neural).__module__)[0]
        for mod in ("lds_toolkit.experiments.catalog._neural_common",
                    "lds_toolkit.neural.training", "lds_toolkit.neural.training._loop",
                    "lds_toolkit.neural.layers.s4", "lds_toolkit.neural.layers.s4d"):
            assert mod in closure, mod


def test_code_version_follows_submodules_without_running_their_packages(tmp_path,
                                                                      monkeypatch):
    """A neural experiment's closure reaches lds_toolkit.neural.* without importing torch:
    submodules are found through their parent's search path, a package's ``__init__`` is
    not run (here it would write a marker, like lds_toolkit.neural's imports torch)."""
    pkg = tmp_path / "closure_pkg_for_store_test"
    (pkg / "heavy").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    marker = tmp_path / "heavy_init_ran"
    (pkg / "heavy" / "__init__.py").write_text(
        f"open({str(marker)!r}, 'w').close()\n")
    (pkg / "heavy" / "layer.py").write_text("from .deep import K\n")
    (pkg / "heavy" / "deep.py").write_text("K = 3\n")
    (pkg / "exp.py").write_text(EXPERIMENT_MODULE.replace(
        "from .helper import SCALE", "SCALE = 1.0\n\n\ndef train():\n"
        "    from .heavy.layer import K\n    return K"))
    monkeypatch.syspath_prepend(str(tmp_path))
    exp = _import_versioned(pkg)
    closure = module_closure(type(exp).__module__)[0]
    for mod in ("heavy.layer", "heavy.deep"):
        assert f"{pkg.name}.{mod}" in closure, mod
    assert not marker.exists() and f"{pkg.name}.heavy" not in sys.modules
    v1 = code_version(exp)
    (pkg / "heavy" / "deep.py").write_text("K = 4\n")  # reached only through the package
    assert code_version(_import_versioned(pkg)) != v1
    assert not marker.exists()


# ------------------------------------------------------------- planted pickle payloads


class _Payload:
    def __init__(self, marker: Path):
        self.marker = str(marker)

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


def test_planted_pickle_payloads_never_run_and_the_summary_is_unchanged(tmp_path):
    out = tmp_path / "out"
    reproduce("lds-impulse", quick=True, out=out, progress=False)
    original = _summary_bytes(out)
    root = out / "lds-impulse" / ".tasks"
    files = sorted(p for p in root.iterdir() if p.is_file())
    assert len(files) == 18  # 9 records + 9 array files
    marker = tmp_path / "pwned"
    payload = pickle.dumps(_Payload(marker))
    pickle.loads(payload)  # the payload works ...
    assert marker.exists()
    marker.unlink()  # ... when unpickled
    for p in files:
        p.write_bytes(payload)
        p.with_suffix(".pkl").write_bytes(payload)  # the old store's file names too
    with pytest.warns(StoreWarning, match="9 stored task result"):
        again = reproduce("lds-impulse", quick=True, out=out, progress=False)
    assert not marker.exists()
    assert (again.stats.n_computed, again.stats.n_rejected) == (9, 9)
    assert _summary_bytes(out) == original


def test_store_never_writes_pickles(tmp_path):
    store = TaskStore(tmp_path, code_version="v")
    store.save(task_key("x", {"seed": 0}, {"seed_index": 0}), SYNTHETIC)
    for p in tmp_path.iterdir():
        data = p.read_bytes()
        if p.suffix == ".npz":
            with np.load(p, allow_pickle=False) as z:
                [z[k] for k in z.files]  # loads without pickle
        else:
            json.loads(data)
        assert not data.startswith(b"\x80"), p  # no pickle protocol header


def test_stored_record_is_readable_json_with_its_full_key(tmp_path):
    reproduce("lds-impulse", quick=True, seeds=1, out=tmp_path, progress=False)
    root = tmp_path / "lds-impulse" / ".tasks"
    record = json.loads(next(root.glob("*.json")).read_text())
    assert set(record["key"]) == {"experiment", "config_sha256", "task", "seed",
                                  "code_version"}
    assert record["key"]["experiment"] == "lds-impulse"
    assert len(record["sha256"]) == len(record["arrays"]["sha256"]) == 64
    assert record["result"]["h"] == {"$": "array", "ref": "a0"}  # arrays in the .npz
    assert "tail_fraction" in record["result"]  # the rest in plain JSON


# --------------------------------------------------------------------------- partial tasks


def test_the_store_knows_partial_tasks_and_drops_their_checkpoints_once_complete(tmp_path):
    """A task with a training checkpoint and no record is partial; storing its result
    removes its checkpoints (a diverged state beside them too), clearing removes them all;
    the notes saved with a result come back with it and are covered by its checksum."""
    store = TaskStore(tmp_path / "store", code_version="v")
    done, running, other = (task_key("e", {"seed": 0}, {"seed_index": i}) for i in range(3))
    store.save(done, {"x": 1})
    store.root.joinpath(f"{running.digest}.train.ckpt").write_bytes(b"ck")
    store.root.joinpath(f"{running.digest}.train.diverged.ckpt").write_bytes(b"ck")
    store.root.joinpath(f"{other.digest}.train.ckpt").write_bytes(b"ck")
    assert str(store.checkpoint_prefix(running)) == str(store.root / running.digest)
    assert store.partial_keys() == sorted([running.digest, other.digest])
    assert [p.name for p in store.checkpoints(running)] == [
        f"{running.digest}.train.ckpt", f"{running.digest}.train.diverged.ckpt"]
    store.save(running, {"x": 2}, notes={"resumed_from": {"train": 7}})
    assert store.partial_keys() == [other.digest] and not store.checkpoints(running)
    assert store.load(running, with_notes=True) == ({"x": 2}, {"resumed_from": {"train": 7}})
    assert store.load(done, with_notes=True) == ({"x": 1}, {})
    record = json.loads((store.root / f"{running.digest}.json").read_text())
    record["notes"]["resumed_from"]["train"] = 8
    (store.root / f"{running.digest}.json").write_text(json.dumps(record))
    with pytest.raises(StoredTaskRejected, match="checksum mismatch"):
        store.load(running)
    store.clear()
    assert not store.partial_keys() and not list(store.root.glob("*.ckpt"))


def test_a_sweep_past_its_deadline_starts_no_task(tmp_path):
    """The deadline stops the sweep before any task starts: every task is listed as stopped,
    none is stored or run, and a later sweep without a deadline computes them."""
    import time

    from lds_toolkit.experiments.runner.sweep import run_sweep

    ran = []

    def task(config, t, rng):
        ran.append(t["seed_index"])
        return {"i": t["seed_index"]}

    store = TaskStore(tmp_path / "store", code_version="v")
    config = {"seed": 0}
    tasks = [{"seed_index": i} for i in range(3)]
    keys = [task_key("e", config, t) for t in tasks]
    results, stats = run_sweep(task, config, tasks, keys, store=store, progress=False,
                               deadline=time.time() - 1)
    assert results == [None] * 3 and ran == [] and not store.keys()
    assert stats.stopped == [k.digest for k in keys] and stats.partial == []
    results, stats = run_sweep(task, config, tasks, keys, store=store, progress=False)
    assert results == [{"i": i} for i in range(3)] and not stats.stopped
