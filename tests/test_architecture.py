"""The house rules of the package (README, "Architecture"), checked on the source.

* no import cycle between the package's modules, counting imports inside functions (lazy
  imports hide a cycle from Python, not from a reader) and ``TYPE_CHECKING`` blocks;
* no module over 700 lines.

The import graph is read with :mod:`ast` (nothing is imported): ``from .x import y`` is an edge
to the module ``x.y`` when that is a module of the package, else to ``x`` (a name defined in
``x`` or re-exported by its ``__init__``). Importing a submodule implicitly runs its parents'
``__init__``; those implicit edges are not counted (every package re-exports its children).
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

PACKAGE = "lds_toolkit"
ROOT = Path(__file__).resolve().parents[1] / PACKAGE
MAX_LINES = 700


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def package_modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(ROOT.rglob("*.py"))}


def _resolve(base: str, level: int, current: str, is_package: bool) -> str:
    """Absolute name of ``from {'.' * level}{base} import ...`` written in ``current``."""
    if level == 0:
        return base
    parts = current.split(".")
    if not is_package:
        parts = parts[:-1]
    parts = parts[: len(parts) - (level - 1)]
    return ".".join(parts + ([base] if base else []))


def import_edges(modules: dict[str, Path]) -> dict[str, set[str]]:
    """module -> the package modules it imports anywhere in its source."""
    edges: dict[str, set[str]] = {m: set() for m in modules}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(), filename=str(path))
        is_package = path.name == "__init__.py"
        for node in ast.walk(tree):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = _resolve(node.module or "", node.level, name, is_package)
                for alias in node.names:
                    sub = f"{base}.{alias.name}" if base else alias.name
                    targets.append(sub if sub in modules else base)
            for target in targets:
                # `import a.b.c` names the deepest module of the package it reaches
                while target and target not in modules:
                    target = target.rpartition(".")[0]
                if target.startswith(PACKAGE) and target != name:
                    edges[name].add(target)
    return edges


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def test_no_import_cycle_counting_lazy_imports():
    found = cycles(import_edges(package_modules()))
    assert not found, "import cycles (each line one strongly connected set):\n" + "\n".join(
        " <-> ".join(c) for c in found)


def test_the_cycle_finder_finds_a_lazy_cycle():
    """The checker itself: a function-level import that closes a loop is reported."""
    edges = {"p.a": {"p.b"}, "p.b": {"p.c"}, "p.c": {"p.a"}, "p.d": {"p.a"}}
    assert cycles(edges) == [["p.a", "p.b", "p.c"]]
    assert cycles({"p.a": {"p.b"}, "p.b": set()}) == []


def test_import_edges_see_function_level_and_relative_imports(tmp_path, monkeypatch):
    pkg = tmp_path / PACKAGE
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("from .low import f\n")
    (pkg / "sub" / "low.py").write_text("def f():\n    from ..top import g\n    return g\n")
    (pkg / "top.py").write_text("from .sub import low\n\ndef g():\n    pass\n")
    monkeypatch.setattr(sys.modules[__name__], "ROOT", pkg)
    edges = import_edges(package_modules())
    assert edges[f"{PACKAGE}.sub.low"] == {f"{PACKAGE}.top"}
    assert edges[f"{PACKAGE}.top"] == {f"{PACKAGE}.sub.low"}
    assert edges[f"{PACKAGE}.sub"] == {f"{PACKAGE}.sub.low"}
    assert cycles(edges) == [[f"{PACKAGE}.sub.low", f"{PACKAGE}.top"]]


@pytest.mark.parametrize("name", sorted(package_modules()))
def test_module_is_at_most_700_lines(name):
    lines = len(package_modules()[name].read_text().splitlines())
    assert lines <= MAX_LINES, f"{name} has {lines} lines (> {MAX_LINES}): split it along a seam"
