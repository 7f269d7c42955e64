"""The environment that shaped a run's numbers, as ``run.json`` records it.

The same code and seed give the same ``summary.json`` bit for bit on one machine, and numbers
that differ by round-off (numpy experiments) or by a training path (torch, whose kernels
follow the CPU's instruction set) on another. :func:`environment` records what such a
difference can come from, so that ``lds-toolkit report --compare`` can name it:

* Python (version, implementation, compiler), the operating system and the C library;
* the CPU: model name, logical cores and instruction-set flags (``/proc/cpuinfo`` on Linux;
  elsewhere the model from :mod:`platform` and no flags);
* the versions of the libraries that compute (numpy, scipy, numba, torch, python-control)
  and of those that schedule (joblib, threadpoolctl), and the SIMD extensions numpy found;
* the BLAS/OpenMP libraries loaded in this process (threadpoolctl: implementation, version,
  threading layer, CPU architecture it dispatched for, thread count; not their file paths);
* for a run that uses torch: its threads, the kernels' CPU capability, the deterministic
  flags (``torch.are_deterministic_algorithms_enabled``, cuDNN's ``deterministic`` and
  ``benchmark``), CUDA's version and the device;
* the thread-count environment variables that are set (``OMP_NUM_THREADS``, ...).

Nothing here names a path of the machine (a committed ``run.json`` is published), and
nothing is changed: reading torch's flags imports torch only when the experiment needs it.
"""

from __future__ import annotations

import os
import platform
import sys
from importlib import metadata
from typing import Any

#: Distributions whose versions are recorded (import name -> distribution name).
LIBRARIES = {"numpy": "numpy", "scipy": "scipy", "numba": "numba", "torch": "torch",
             "control": "control", "matplotlib": "matplotlib", "joblib": "joblib",
             "threadpoolctl": "threadpoolctl"}
#: Environment variables that set thread counts or numerics, recorded when set.
ENV_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
                 "NUMBA_NUM_THREADS", "NUMBA_DISABLE_JIT", "VECLIB_MAXIMUM_THREADS",
                 "CUBLAS_WORKSPACE_CONFIG", "MKL_CBWR", "ATEN_CPU_CAPABILITY")
#: What threadpoolctl reports of a loaded BLAS/OpenMP library (its file path is left out).
_POOL_KEYS = ("user_api", "internal_api", "prefix", "version", "threading_layer",
              "architecture", "num_threads")


def environment(torch: bool | None = None) -> dict[str, Any]:
    """The environment of this process (see the module docstring), as JSON-ready data.

    ``torch``: record torch's settings (imports torch); ``None`` (default): only when torch
    is already imported.
    """
    if torch is None:
        torch = sys.modules.get("torch") is not None
    return {
        "python": {"version": platform.python_version(),
                   "implementation": platform.python_implementation(),
                   "compiler": platform.python_compiler()},
        "platform": {"system": platform.system(), "release": platform.release(),
                     "machine": platform.machine(), "libc": " ".join(platform.libc_ver()).strip()},
        "cpu": cpu_info(),
        "libraries": {name: _version(dist) for name, dist in LIBRARIES.items()},
        "numpy_simd": _numpy_simd(),
        "thread_pools": _thread_pools(),
        "torch": _torch_settings() if torch else None,
        "variables": {k: os.environ[k] for k in ENV_VARIABLES if k in os.environ},
    }


def cpu_info() -> dict[str, Any]:
    """``{"model", "cores", "flags"}``: the CPU's model name, logical cores and sorted
    instruction-set flags (``None`` where the system does not say)."""
    model, flags = None, None
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                key, _, value = line.partition(":")
                key = key.strip()
                if key == "model name" and model is None:
                    model = value.strip()
                elif key in ("flags", "Features") and flags is None:
                    flags = sorted(set(value.split()))
                if model is not None and flags is not None:
                    break
    except OSError:
        pass
    return {"model": model or platform.processor() or None, "cores": os.cpu_count(),
            "flags": flags}


def _version(dist: str) -> str | None:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def _numpy_simd() -> dict[str, Any] | None:
    import numpy as np

    simd = getattr(np, "__config__", None)
    simd = getattr(simd, "CONFIG", {}).get("SIMD Extensions") if simd is not None else None
    return dict(simd) if isinstance(simd, dict) else None


def _thread_pools() -> list[dict[str, Any]]:
    from threadpoolctl import threadpool_info

    pools = [{k: pool.get(k) for k in _POOL_KEYS} for pool in threadpool_info()]
    # in a stable order (threadpoolctl lists them in loading order, which varies by run)
    return sorted(pools, key=lambda p: tuple(str(p[k]) for k in _POOL_KEYS))


def _torch_settings() -> dict[str, Any]:
    import torch

    cuda = torch.cuda.is_available()
    cudnn = torch.backends.cudnn
    return {"version": torch.__version__,
            "threads": torch.get_num_threads(),
            "interop_threads": torch.get_num_interop_threads(),
            "cpu_capability": torch.backends.cpu.get_cpu_capability(),
            "deterministic_algorithms": torch.are_deterministic_algorithms_enabled(),
            "cudnn_deterministic": bool(cudnn.deterministic),
            "cudnn_benchmark": bool(cudnn.benchmark),
            "cuda": torch.version.cuda,
            "device": torch.cuda.get_device_name(0) if cuda else "cpu"}
