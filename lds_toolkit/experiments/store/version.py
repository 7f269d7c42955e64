"""The code version of an experiment: what a stored task result was computed with.

``code_version(exp)`` is ``"<lds_toolkit version>+src.<16 hex digits>"``. The digits are a
SHA-256 over

* the source of the module defining the experiment's class,
* the source of every module of ``lds_toolkit`` (and of the experiment's own top-level
  package, e.g. a test package) that this module imports, followed transitively through
  their own ``import`` statements (read with :mod:`ast`, also inside functions), so the
  shared ``_lengen_common.py`` / ``_neural_common.py`` and the library code an experiment calls
  (filters, learners, layers, training loop, numba cores) are all covered,
* :mod:`lds_toolkit.experiments.runner.sweep` (it derives each task's random stream), and
* the versions of the numerical libraries the closure imports (numpy, scipy, numba, torch,
  python-control): they can change the numbers as much as our code can.

Why a source hash and not an explicit ``version`` attribute per experiment: an attribute has
to be remembered on every change, including changes to a shared helper two imports away, and
a forgotten bump silently reuses stale results, the failure this guards against. The hash
cannot be forgotten; its cost is that an edit to an imported module that does not change the
numbers (a docstring) also invalidates the stored tasks, which are then recomputed. Package
``__init__`` files are followed only where a module imports the package itself, not as a
side effect of importing a submodule: otherwise every experiment would depend on the whole
toolkit through ``lds_toolkit/__init__.py``.

Not covered: data read from disk at run time and libraries outside the list above; use
``--fresh`` after changing those. :func:`code_version_covers` lists what a hash covers (each
module with a digest of its source, each library with its version); ``run.json`` records it,
so that two runs with different code versions can say which module or library differs.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import importlib.machinery
import importlib.util
import sys
from importlib import metadata
from pathlib import Path

from ..._version import __version__

#: Distributions whose version enters the code version when the closure imports them.
NUMERIC_LIBRARIES = {"numpy": "numpy", "scipy": "scipy", "numba": "numba", "torch": "torch",
                     "control": "control"}

#: Always part of the closure: the sweep defines each task's random stream.
ALWAYS = ("lds_toolkit.experiments.runner.sweep",)


def code_version(experiment) -> str:
    """``"<package version>+src.<hash>"`` of an :class:`~lds_toolkit.experiments.Experiment`
    (see the module docstring for what the hash covers)."""
    if isinstance(experiment, str | type) or not callable(getattr(experiment, "run_task",
                                                                    None)):
        raise TypeError(f"experiment must be an Experiment instance (get_experiment(name) "
                        f"gives one), got {type(experiment).__name__} {experiment!r:.60}")
    sources, libraries = module_closure(type(experiment).__module__)
    h = hashlib.sha256()
    # by content only: the same file imported under another name (a test module run as a
    # script) is the same code
    for digest in sorted(hashlib.sha256(src).hexdigest() for src in sources.values()):
        h.update(f"{digest}\n".encode())
    for lib in sorted(libraries):
        h.update(f"lib {lib}=={_library_version(lib)}\n".encode())
    if type(experiment).__module__ not in sources:  # no source file (defined interactively)
        h.update(f"class {type(experiment).__module__}.{type(experiment).__qualname__}".encode())
    return f"{__version__}+src.{h.hexdigest()[:16]}"


def code_version_covers(experiment) -> dict[str, dict[str, str]]:
    """What :func:`code_version` hashes for ``experiment``: ``{"modules": {name: first 16 hex
    digits of the SHA-256 of its source}, "libraries": {name: version}}``, sorted by name."""
    sources, libraries = module_closure(type(experiment).__module__)
    return {"modules": {name: hashlib.sha256(src).hexdigest()[:16]
                        for name, src in sorted(sources.items())},
            "libraries": {lib: _library_version(lib) for lib in sorted(libraries)}}


def module_closure(module: str) -> tuple[dict[str, bytes], set[str]]:
    """``(sources, libraries)``: the source bytes of ``module`` and of every first-party
    module it imports transitively (by module name), and the :data:`NUMERIC_LIBRARIES` among
    the third-party packages they import."""
    first_party = {"lds_toolkit", module.split(".")[0]}
    sources: dict[str, bytes] = {}
    libraries: set[str] = set()
    todo = [module, *ALWAYS]
    while todo:
        name = todo.pop()
        if name in sources:
            continue
        path = _source_path(name)
        if path is None:
            continue
        src = path.read_bytes()
        sources[name] = src
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for imported in _imports(src, package, str(path), first_party):
            top = imported.split(".")[0]
            if top in first_party:
                todo.append(imported)
            elif top in NUMERIC_LIBRARIES:
                libraries.add(top)
    return sources, libraries


def _source_path(name: str) -> Path | None:
    mod = sys.modules.get(name)
    file = getattr(mod, "__file__", None) if mod is not None else None
    if file is None:
        spec = _find_spec(name)
        file = spec.origin if spec is not None else None
    if not file or not str(file).endswith(".py") or not Path(file).is_file():
        return None
    return Path(file)


def _find_spec(name: str) -> importlib.machinery.ModuleSpec | None:
    """The spec of module ``name`` (``None`` when there is none), found without running
    anything: ``importlib.util.find_spec`` imports a submodule's parent packages, and
    ``lds_toolkit.neural``'s ``__init__`` imports torch (seconds), which hashing the code of
    a neural experiment does not need. A loaded module's own spec is used; otherwise the
    parent's ``submodule_search_locations`` are searched with the path finder."""
    mod = sys.modules.get(name)
    if mod is not None:
        return getattr(mod, "__spec__", None)
    parent, _, _ = name.rpartition(".")
    try:
        if not parent:
            return importlib.util.find_spec(name)  # a top-level name: nothing is imported
        parent_spec = _find_spec(parent)
        locations = getattr(parent_spec, "submodule_search_locations", None)
        if locations is None:
            return None
        return importlib.machinery.PathFinder.find_spec(name, list(locations))
    except (ImportError, ValueError):
        return None


def _imports(src: bytes, package: str, filename: str, first_party: set[str]) -> set[str]:
    """Module names imported anywhere in ``src`` (relative imports resolved; a first-party
    ``from X import Y`` counts as ``X.Y`` when that is a submodule, else as ``X``)."""
    out: set[str] = set()
    for module, level, names in _import_statements(src, filename):
        if names is None:  # import X, Y
            out.update(module)
            continue
        if level:
            try:
                base = importlib.util.resolve_name("." * level + module, package)
            except ImportError:
                continue
        else:
            base = module
        if not base:
            continue
        if base.split(".")[0] not in first_party:
            out.add(base)
            continue
        for name in names:
            sub = f"{base}.{name}"
            # Y is a submodule: its code provides Y; otherwise X's own code does
            out.add(sub if name != "*" and _is_module(sub) else base)
    return out


@functools.lru_cache(maxsize=1024)
def _import_statements(src: bytes, filename: str) -> tuple:
    """The import statements of ``src`` as ``(modules, 0, None)`` for ``import X, Y`` and
    ``(module, level, names)`` for ``from ...module import names``, anywhere in the file.

    Parsing and walking the syntax tree is most of the cost of :func:`code_version`
    (``reproduce all`` hashes thirteen closures that share most modules), and it depends on
    the source bytes alone, so it is kept per source; resolving the names (which depends on
    the files present) is done at every call.
    """
    out: list = []
    for node in ast.walk(ast.parse(src, filename=filename)):
        if isinstance(node, ast.Import):
            out.append((tuple(alias.name for alias in node.names), 0, None))
        elif isinstance(node, ast.ImportFrom):
            out.append((node.module or "", node.level, tuple(a.name for a in node.names)))
    return tuple(out)


def _is_module(name: str) -> bool:
    return name in sys.modules or _find_spec(name) is not None


def _library_version(lib: str) -> str:
    try:
        return metadata.version(NUMERIC_LIBRARIES[lib])
    except metadata.PackageNotFoundError:
        return "absent"
