"""Benchmark: discrete LDS simulation, ours against python-control, scipy and a per-step loop.

1. General A (non-symmetric, n = 128, spectral radius 0.95), T = 2^14, one input stream:
   ``simulate`` (``method="auto"``: the time-blocked dense route, for outputs only and for
   outputs + states; the latter also with one thread, and on the certified modal path)
   against ``control.forced_response`` (the anchor) and ``scipy.signal.dlsim``; the relative
   error against ``forced_response`` (outputs and states) is printed.
2. The same system, a batch of 64 streams, outputs only: ``simulate`` (auto and forced modal)
   against the obvious per-step BLAS loop ``X = X @ A.T + U_t @ B.T`` over the batch.
3. Symmetric A, n = 512, T = 2^14, batch 8 (the length-generalization experiments'
   workload), outputs only: ours against the per-step loop.
4. Continuous time on a grid with 2000 distinct random steps, n = 64: the modal path
   (elementwise exponentials) against the dense one (a matrix exponential per distinct step).

Every row gives the best-of-N wall time, the peak extra resident memory of one call
(``_harness.measure``) and the speed-up over the row's baseline. Run:
``python benchmarks/simulate.py [--quick]``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _harness import measure, table  # noqa: E402

from lds_toolkit import eigenvalue_regions, random_lds  # noqa: E402
from lds_toolkit.systems import LDS, simulate, simulate_continuous  # noqa: E402


def general_system(n: int, radius: float = 0.95, seed: int = 0) -> LDS:
    """A Gaussian A scaled to spectral radius ``radius``, one input and output."""
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((n, n)) / np.sqrt(n)
    A *= radius / np.max(np.abs(np.linalg.eigvals(A)))
    return LDS(A, rng.standard_normal((n, 1)), rng.standard_normal((1, n)), np.zeros((1, 1)),
               dt=1.0)


def blas_loop(system: LDS, u: np.ndarray) -> np.ndarray:
    """The per-step loop: one BLAS matrix product per step for the whole batch."""
    A, B, C, D = system.A, system.B, system.C, system.D
    batch, T, _ = u.shape
    X = np.zeros((batch, system.n_states))
    Y = np.empty((batch, T, system.n_outputs))
    AT, BT, CT, DT = A.T.copy(), B.T.copy(), C.T.copy(), D.T.copy()
    for t in range(T):
        Y[:, t] = X @ CT + u[:, t] @ DT
        X = X @ AT + u[:, t] @ BT
    return Y


def _rel(a, b) -> float:
    return float(np.max(np.abs(np.asarray(a) - np.asarray(b))) / np.max(np.abs(b)))


def section_general(quick: bool) -> list[dict]:
    import control
    import scipy.signal

    from lds_toolkit.systems import _blocked

    n, T = (64, 2**12) if quick else (128, 2**14)
    sys_ = general_system(n)
    u = np.random.default_rng(1).standard_normal((T, 1))
    ss = control.ss(sys_.A, sys_.B, sys_.C, sys_.D, 1.0)
    steps = np.arange(T)
    ref = control.forced_response(ss, steps, u[:, 0], return_x=True)
    ref_y, ref_x = ref.outputs, np.asarray(ref.states).T
    dl = (sys_.A, sys_.B, sys_.C, sys_.D, 1.0)
    threads = _blocked.STATE_THREADS

    def one_thread_states():
        _blocked.STATE_THREADS = 1
        try:
            return simulate(sys_, u)
        finally:
            _blocked.STATE_THREADS = threads

    ours_y = simulate(sys_, u, return_states=False)
    ours_x = simulate(sys_, u)
    ours_1 = one_thread_states()
    ours_m = simulate(sys_, u, method="modal")
    m_ctrl = measure(lambda: control.forced_response(ss, steps, u[:, 0]), repeat=3)
    m_dlsim = measure(lambda: scipy.signal.dlsim(dl, u), repeat=3)
    m_y = measure(lambda: simulate(sys_, u, return_states=False), repeat=7)
    m_x = measure(lambda: simulate(sys_, u), repeat=7)
    m_1 = measure(one_thread_states, repeat=7)
    m_m = measure(lambda: simulate(sys_, u, method="modal"), repeat=5)
    what = f"general A, n = {n}, T = 2^{int(np.log2(T))}, 1 stream"
    base = m_ctrl.seconds

    def err(res):
        return (f"rel. err vs forced_response: y {_rel(res.y[:, 0], ref_y):.1e}, "
                f"x {_rel(res.x, ref_x):.1e}")

    def row(method, m, note):
        return dict(section="simulation", workload=what, method=method, seconds=m.seconds,
                    peak_mb=m.peak_mb, ratio=base / m.seconds, note=note)

    return [
        row("control.forced_response (anchor)", m_ctrl, ""),
        row("scipy.signal.dlsim", m_dlsim, ""),
        row(f"simulate, outputs ({ours_y.path} path, blocked)", m_y,
            f"rel. err vs forced_response {_rel(ours_y.y[:, 0], ref_y):.1e}"),
        row(f"simulate, outputs + states ({ours_x.path} path, blocked, up to {threads} "
            "threads)", m_x, err(ours_x)),
        row(f"simulate, outputs + states ({ours_1.path} path, blocked, 1 thread)", m_1,
            err(ours_1)),
        row(f"simulate method='modal', outputs + states ({ours_m.path} path)", m_m,
            f"{err(ours_m)}, certificate {ours_m.certificate.error_estimate:.1e}"),
    ]


def section_batch(quick: bool) -> list[dict]:
    n, T, batch = (64, 2**12, 16) if quick else (128, 2**14, 64)
    sys_ = general_system(n)
    u = np.random.default_rng(2).standard_normal((batch, T, 1))
    ref = blas_loop(sys_, u)
    auto = simulate(sys_, u, return_states=False)
    modal = simulate(sys_, u, return_states=False, method="modal")
    m_loop = measure(lambda: blas_loop(sys_, u), repeat=2)
    m_auto = measure(lambda: simulate(sys_, u, return_states=False), repeat=5)
    m_modal = measure(lambda: simulate(sys_, u, return_states=False, method="modal"), repeat=5)
    what = f"general A, n = {n}, T = 2^{int(np.log2(T))}, batch {batch}, outputs"
    base = m_loop.seconds
    return [
        dict(section="simulation", workload=what, method="per-step BLAS loop (anchor)",
             seconds=base, peak_mb=m_loop.peak_mb, ratio=1.0, note=""),
        dict(section="simulation", workload=what, method=f"simulate ({auto.path} path, blocked)",
             seconds=m_auto.seconds, peak_mb=m_auto.peak_mb, ratio=base / m_auto.seconds,
             note=f"rel. err {_rel(auto.y, ref):.1e}"),
        dict(section="simulation", workload=what, method="simulate (modal path, blocked)",
             seconds=m_modal.seconds, peak_mb=m_modal.peak_mb, ratio=base / m_modal.seconds,
             note=f"rel. err {_rel(modal.y, ref):.1e}, certificate "
                  f"{modal.certificate.error_estimate:.1e}"),
    ]


def section_symmetric(quick: bool) -> list[dict]:
    n, T, batch = (128, 2**12, 8) if quick else (512, 2**14, 8)
    system = random_lds(n, eigenvalue_regions(2**14, 7 / 8).region_a, rng=0)
    u = np.random.default_rng(1).standard_normal((batch, T, 1))
    ref = blas_loop(system, u)
    ours = simulate(system, u, return_states=False)
    m_loop = measure(lambda: blas_loop(system, u), repeat=1)
    m_ours = measure(lambda: simulate(system, u, return_states=False), repeat=3)
    what = f"symmetric A, n = {n}, T = 2^{int(np.log2(T))}, batch {batch}, outputs"
    return [
        dict(section="simulation", workload=what, method="per-step BLAS loop (anchor)",
             seconds=m_loop.seconds, peak_mb=m_loop.peak_mb, ratio=1.0, note=""),
        dict(section="simulation", workload=what, method=f"simulate ({ours.path} path)",
             seconds=m_ours.seconds, peak_mb=m_ours.peak_mb,
             ratio=m_loop.seconds / m_ours.seconds, note=f"rel. err {_rel(ours.y, ref):.1e}"),
    ]


def section_continuous(quick: bool) -> list[dict]:
    n, K = (32, 500) if quick else (64, 2000)
    rng = np.random.default_rng(3)
    A = rng.standard_normal((n, n))
    A -= (np.max(np.linalg.eigvals(A).real) + 0.5) * np.eye(n)
    sys_ = LDS(A, rng.standard_normal((n, 1)), rng.standard_normal((1, n)), np.zeros((1, 1)))
    t = np.cumsum(rng.uniform(0.001, 0.01, K)) - 0.001
    u = rng.standard_normal((K, 1))
    dense = simulate_continuous(sys_, t, u, method="dense")
    modal = simulate_continuous(sys_, t, u)
    m_dense = measure(lambda: simulate_continuous(sys_, t, u, method="dense"), repeat=1)
    m_modal = measure(lambda: simulate_continuous(sys_, t, u), repeat=3)
    what = f"continuous, n = {n}, {K} distinct steps, states"
    return [
        dict(section="simulation", workload=what,
             method="simulate_continuous, dense (expm per step, anchor)",
             seconds=m_dense.seconds, peak_mb=m_dense.peak_mb, ratio=1.0, note=""),
        dict(section="simulation", workload=what,
             method=f"simulate_continuous ({modal.path} path)", seconds=m_modal.seconds,
             peak_mb=m_modal.peak_mb, ratio=m_dense.seconds / m_modal.seconds,
             note=f"rel. err {_rel(modal.y, dense.y):.1e}"),
    ]


def run(quick: bool = False) -> list[dict]:
    rows = []
    for section in (section_general, section_batch, section_symmetric, section_continuous):
        rows += section(quick)
    return rows


def print_rows(rows: list[dict]) -> None:
    print(table([(r["workload"], r["method"], r["seconds"], r["peak_mb"], r["ratio"], r["note"])
                 for r in rows],
                ("workload", "method", "wall s", "peak MB", "speed-up", "note")))


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="smaller sizes (seconds)")
    args = p.parse_args(argv)
    print_rows(run(args.quick))
    return 0


if __name__ == "__main__":
    sys.exit(main())
