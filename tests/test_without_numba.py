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


@pytest.mark.parametrize("n, m, d_in, d_out, radius, lr", [
    (300, 12, 1, 1, np.inf, 0.01),   # the lessons' shape: the scalar path, no projection
    (300, 12, 1, 1, 0.3, 0.2),       # scalar path, blocks rescaled onto the ball
    (200, 6, 1, 1, np.inf, 40.0),    # scalar path, diverges: the loss overflows
    (300, 5, 2, 3, 0.5, 0.05),       # the general path, projected
    (200, 4, 3, 2, np.inf, 5.0),     # the general path, diverges
])
def test_the_plain_ogd_twin_is_the_loop_bit_for_bit(n, m, d_in, d_out, radius, lr):
    """``ogd_loop_plain`` (what runs without numba or with NUMBA_DISABLE_JIT=1) against the
    core's own Python source on numpy scalars: the same step of divergence, the same M, and
    the same predictions and losses up to it, bit for bit."""
    from lds_toolkit.learning._kernels import ogd_loop, ogd_loop_plain

    rng = np.random.default_rng(n + m + d_in)
    X = rng.standard_normal((n, m, d_in))
    base, y = rng.standard_normal((2, n, d_out))
    steps = np.full(n, lr)
    out = []
    for loop in (ogd_loop.py_func, ogd_loop_plain):
        M, pred, loss = np.zeros((m, d_out, d_in)), np.zeros((n, d_out)), np.zeros(n)
        with np.errstate(over="ignore", invalid="ignore"):
            bad = loop(X, base, y, steps, radius, M, pred, loss)
        k = n if bad < 0 else bad + 1
        out.append((bad, M, pred[:k], loss[:k]))
    (bad0, *ref), (bad1, *plain) = out
    assert bad0 == bad1 and ((bad0 >= 0) == (lr > 1.0))
    for a, b in zip(plain, ref):
        assert np.array_equal(a, b, equal_nan=True)


def test_numba_disable_jit_runs_the_plain_twin():
    """With NUMBA_DISABLE_JIT=1 (numba importable, compiling off) a core with a plain twin
    runs the twin, as without numba."""
    import subprocess
    import sys

    code = ("from lds_toolkit.learning._kernels import ogd_loop, ogd_loop_plain\n"
            "import numpy as np\n"
            "ogd_loop(np.zeros((2, 1, 1)), np.zeros((2, 1)), np.zeros((2, 1)), np.ones(2), "
            "1.0, np.zeros((1, 1, 1)), np.zeros((2, 1)), np.zeros(2))\n"
            "print(ogd_loop.compiled() is ogd_loop_plain, repr(ogd_loop))\n")
    import os
    from pathlib import Path

    env = dict(os.environ, NUMBA_DISABLE_JIT="1",
               PYTHONPATH=str(Path(__file__).resolve().parents[1]))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=env, check=True, timeout=120)
    assert done.stdout.split()[0] == "True" and "plain Python" in done.stdout
