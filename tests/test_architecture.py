"""The house rules of the package (docs/architecture.md), checked on the source.

* no import cycle between the package's modules, counting imports inside functions (lazy
  imports hide a cycle from Python, not from a reader) and ``TYPE_CHECKING`` blocks;
* no module over 500 lines.

The import graph is read with :mod:`ast` (nothing is imported): ``from .x import y`` is an edge
to the module ``x.y`` when that is a module of the package, else to ``x`` (a name defined in
``x`` or re-exported by its ``__init__``). Importing a submodule implicitly runs its parents'
``__init__``; those implicit edges are not counted (every package re-exports its children).
"""

from __future__ import annotations

import ast
import importlib.util
import sys
from pathlib import Path

import pytest

PACKAGE = "lds_toolkit"
ROOT = Path(__file__).resolve().parents[1] / PACKAGE
MAX_LINES = 500


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
def test_module_is_at_most_500_lines(name):
    lines = len(package_modules()[name].read_text().splitlines())
    assert lines <= MAX_LINES, f"{name} has {lines} lines (> {MAX_LINES}): split it along a seam"


# ---------------------------------------------------------------- docs/architecture.md
DOC = ROOT.parent / "docs" / "architecture.md"


def _build_architecture():
    spec = importlib.util.spec_from_file_location(
        "build_architecture", ROOT.parent / "docs" / "build_architecture.py")
    build = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(build)
    return build


#: The page's generator, which also reads its layer table (one parser for both).
BUILD = _build_architecture()
declared_layers, layer_of, _matches = BUILD.declared_layers, BUILD.layer_of, BUILD.matches


def test_imports_point_down_the_documented_layers():
    ranks = declared_layers(DOC.read_text())
    assert {f"{PACKAGE}._", f"{PACKAGE}.systems", f"{PACKAGE}.neural", PACKAGE} <= set(ranks)
    wrong = []
    for src, targets in import_edges(package_modules()).items():
        a = layer_of(src, ranks)
        for dst in targets:
            b = layer_of(dst, ranks)
            if a != b and not ranks[a] > ranks[b]:
                wrong.append(f"{src} (layer {ranks[a]}) imports {dst} (layer {ranks[b]})")
    assert not wrong, "imports against docs/architecture.md's layers:\n" + "\n".join(wrong)


def test_the_layer_check_catches_an_upward_import():
    ranks = declared_layers(DOC.read_text())
    sys_layer = layer_of(f"{PACKAGE}.systems.lds", ranks)
    exp_layer = layer_of(f"{PACKAGE}.experiments.claims", ranks)
    assert ranks[sys_layer] < ranks[exp_layer]
    assert layer_of(f"{PACKAGE}._validation", ranks) == f"{PACKAGE}._"
    assert _matches(f"{PACKAGE}.neural._cast", f"{PACKAGE}.neural._")
    assert not _matches(f"{PACKAGE}.neural.layers._fftconv", f"{PACKAGE}.neural._")
    assert not _matches(f"{PACKAGE}.neural.las", f"{PACKAGE}.neural._")
    assert _matches(f"{PACKAGE}.experiments", f"{PACKAGE}.experiments.__init__")
    assert not _matches(f"{PACKAGE}.experiments.base", f"{PACKAGE}.experiments.__init__")
    assert layer_of(f"{PACKAGE}.experiments", ranks) == f"{PACKAGE}.experiments.__init__"
    assert layer_of(f"{PACKAGE}.experiments.base", ranks) == f"{PACKAGE}.experiments"
    assert ranks[layer_of(f"{PACKAGE}.control.lyapunov", ranks)] == \
        ranks[layer_of(f"{PACKAGE}.learning.filters", ranks)]


def test_module_map_is_generated_from_the_current_docstrings():
    assert BUILD.committed_map(DOC.read_text()) == BUILD.module_map(ROOT), (
        "docs/architecture.md's module map is stale: run python docs/build_architecture.py")


def test_where_to_find_what_is_generated_from_the_rooms_and_the_layer_table():
    text = DOC.read_text()
    assert BUILD.committed_rooms(text) == BUILD.rooms_table(ROOT, page=text), (
        "docs/architecture.md's 'where to find what' is stale: run "
        "python docs/build_architecture.py")


def test_where_to_find_what_lists_every_room_with_its_rank():
    table = BUILD.rooms_table(ROOT, page=DOC.read_text())
    ranks = declared_layers(DOC.read_text())
    for init in ROOT.rglob("__init__.py"):
        folder = init.parent.relative_to(ROOT.parent).as_posix()
        row = next(r for r in table.splitlines() if f"| `{folder}/`" in r)
        name = module_name(init)
        rank = ranks[name] if name in ranks else ranks[layer_of(name, ranks)]
        assert row.startswith(f"| {rank} |"), row
