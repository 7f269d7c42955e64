"""Private helper: the installed distribution's version (pyproject.toml), one source of truth.

Its own module so that code below the package's ``__init__`` (the experiments' code version)
reads it without importing the public API upwards.
"""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__: str = version("lds_toolkit")
except PackageNotFoundError:  # pragma: no cover - running from a tree that was never installed
    __version__ = "0+unknown"
