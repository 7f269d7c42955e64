"""Run code in a fresh interpreter where numba cannot be imported (shared by the tests of
lds_toolkit without numba).

:data:`BLOCKER` is a meta path finder that raises ``ModuleNotFoundError`` for ``numba`` and
``numba.*``, as when numba is not installed; :func:`run_blocked` prepends it to a script and
runs that in a subprocess.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

BLOCKER = textwrap.dedent("""
    import sys

    class NoNumba:
        def find_spec(self, name, path=None, target=None):
            if name == "numba" or name.startswith("numba."):
                raise ModuleNotFoundError(f"No module named {name!r}", name=name)
            return None

    sys.meta_path.insert(0, NoNumba())
""")


def run_blocked(script: str, *args: str, block: bool = True,
                timeout: int = 600) -> subprocess.CompletedProcess:
    """Run ``script`` (Python source) with numba blocked (``block``), one BLAS thread."""
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1",
               MPLBACKEND="Agg", PYTHONPATH=str(ROOT))
    source = (BLOCKER if block else "") + textwrap.dedent(script)
    done = subprocess.run([sys.executable, "-c", source, *args], capture_output=True,
                          text=True, timeout=timeout, cwd=ROOT, env=env)
    assert done.returncode == 0, done.stderr[-4000:]
    return done
