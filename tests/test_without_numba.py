"""lds_toolkit without numba: it imports, and every compiled core runs as plain Python with
the numbers of the compiled one.

A fresh interpreter whose import system refuses ``numba`` (``tests/_no_numba.py``) imports the
package, checks that numba was never imported and that a one-line ``NumbaMissingWarning``
names the slower path, and runs every core (each simulation path, the continuous-time cores
on a non-uniform grid, the online learner's OGD loop and streaming steps, exact and through
the filters' LDS, the extended-precision Gram product);
the arrays come back in an ``.npz`` and are compared with the same calls compiled by numba in
this process. The lessons' code without numba: ``tests/teaching/test_lessons.py``.
"""

from __future__ import annotations

import json
import textwrap

import numpy as np
import pytest

from tests._no_numba import run_blocked

CORES = """
    import json, sys, warnings
    import numpy as np

    def core_results():
        import lds_toolkit as lt
        from lds_toolkit.learning._extended import gram_dot2

        rng = np.random.default_rng(0)
        out, paths = {}, {}
        general = lt.random_stable_lds(6, radius=0.97, rng=1)            # non-symmetric
        sym = lt.random_lds(6, [lt.eigenvalue_regions(512).region_b], rng=2)
        u = rng.standard_normal((600, general.n_inputs))
        for name, system, kw in [
            ("dense_recursion", general, dict(method="dense", process_noise=0.1, rng=3)),
            ("modal", sym, dict(method="modal", process_noise=0.1, rng=3)),
            ("dense_blocked", general, dict(method="dense", return_states=False)),
            ("dense_blocked_states", general, dict(method="dense")),
            ("modal_blocked", sym, dict(method="modal", return_states=False)),
        ]:
            uu = u[:, :system.n_inputs]
            res = lt.simulate(system, uu, **kw)
            out[name] = res.y
            paths[name] = res.path
        sysc = lt.random_stable_lds(4, continuous=True, rng=4)
        t = np.cumsum(rng.uniform(0.01, 0.1, 300))
        uc = rng.standard_normal((300, sysc.n_inputs))
        for method in ("dense", "modal"):
            res = lt.simulate_continuous(sysc, t, uc, method=method)
            out[f"continuous_{method}"] = res.y
            paths[f"continuous_{method}"] = res.path
        y = lt.simulate(sym, u[:, :1], output="lengen").y
        learner = lt.SpectralFiltering(horizon=512, k=8, lr=0.05)
        out["ogd"] = learner.fit_predict(u[:512, :1], y[:512])
        # the streaming step (exact window and the LDS route) and the bank's batch recursion
        for route, horizon in (("exact", 64), ("lds", 512)):
            streamed = lt.SpectralFiltering(horizon=horizon, k=6, lr=0.05, filters=route)
            preds = []
            for t in range(150):
                preds.append(streamed.predict_one(u[t, :1]))
                streamed.learn_one(u[t, :1], y[t])
            out[f"stream_{route}"] = np.array(preds)
        out["bank_design"] = streamed.design(u[:300, :1], y[:300])[0]
        X, Z = rng.standard_normal((2, 300, 5))
        out["gram_dot2"] = gram_dot2(X, Z)
        return out, paths
"""

DRIVER = CORES + """
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        import lds_toolkit
        imported_at_import = "numba" in sys.modules
        out, paths = core_results()
    from lds_toolkit._jit import NumbaMissingWarning, numba_available
    notes = [str(w.message) for w in caught if issubclass(w.category, NumbaMissingWarning)]
    np.savez(sys.argv[1], **out)
    print(json.dumps({"numba_imported": "numba" in sys.modules or imported_at_import,
                      "available": numba_available(), "notes": notes, "paths": paths}))
"""


@pytest.fixture(scope="module")
def blocked(tmp_path_factory):
    path = tmp_path_factory.mktemp("nonumba") / "cores.npz"
    done = run_blocked(DRIVER, str(path))
    report = json.loads(done.stdout.strip().splitlines()[-1])
    with np.load(path, allow_pickle=False) as data:
        arrays = {k: data[k] for k in data.files}
    return report, arrays


def test_imports_and_runs_without_numba_with_one_note(blocked):
    report, _ = blocked
    assert report["numba_imported"] is False and report["available"] is False
    assert len(report["notes"]) == 1 and "slower" in report["notes"][0]


def test_every_path_ran(blocked):
    report, _ = blocked
    paths = report["paths"]
    assert paths["dense_recursion"] == "dense" and paths["modal"] == "modal"
    assert paths["dense_blocked"] == paths["dense_blocked_states"] == "dense"
    assert paths["continuous_dense"] == "dense" and paths["continuous_modal"] == "modal"


def test_same_numbers_as_the_compiled_cores(blocked):
    _, plain = blocked
    namespace: dict = {}
    exec(compile(textwrap.dedent(CORES), "cores", "exec"), namespace)  # noqa: S102 - the driver's own code
    compiled, _ = namespace["core_results"]()
    assert set(compiled) == set(plain)
    # modal_core is compiled with fastmath "reassoc"/"contract" (LLVM may reorder its sums and
    # fuse multiply-adds) and the continuous dense core's matrix-vector products are numba's
    # np.dot: those two may differ from plain Python in the last bits (measured: 4e-15 and
    # 1.4e-16 of the largest output); every other core is bitwise the same arithmetic
    last_bits = {"modal", "continuous_dense"}
    for name, value in compiled.items():
        diff = float(np.abs(plain[name] - value).max())
        assert diff <= (1e-13 * np.abs(value).max() if name in last_bits else 0.0), \
            f"{name}: max difference {diff:.3g}"
