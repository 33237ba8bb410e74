"""No import cycles between co_tui's modules.

Every `import` and `from … import` of a co_tui module in every file under src/co_tui is an
edge, read with `ast` (no module is imported): the ones at module level and the ones inside
functions and methods alike, since a function-level import only defers a cycle to the first
call. Imports under `if TYPE_CHECKING:` count too: they never run, but a type that only one
side may name still ties the two modules together for a reader and for the type checker.

An import of `co_tui.x.y` (or `from co_tui.x import y`, with `y` a module) depends on
`co_tui.x.y` and on the package `co_tui.x` (its `__init__` runs first), except on the
packages that contain the importing module itself: Python has started those already, and
a package's `__init__` importing its own submodules is normal.

A cycle is a strongly connected component of more than one module; the test lists each one
with the imports that close it.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
ROOT = "co_tui"


def _modules() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for path in sorted((SRC / ROOT).rglob("*.py")):
        parts = list(path.relative_to(SRC).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _is_type_checking(test: ast.expr) -> bool:
    if isinstance(test, ast.Name):
        return test.id == "TYPE_CHECKING"
    return isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"


def _imports(tree: ast.AST, *, type_only: bool) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import node; those in the body of an `if TYPE_CHECKING:` only when `type_only`."""
    for node in ast.iter_child_nodes(tree):
        if not type_only and isinstance(node, ast.If) and _is_type_checking(node.test):
            for child in node.orelse:
                yield from _imports_of(child, type_only=type_only)
            continue
        yield from _imports_of(node, type_only=type_only)


def _imports_of(node: ast.AST, *, type_only: bool) -> Iterator[ast.Import | ast.ImportFrom]:
    if isinstance(node, ast.Import | ast.ImportFrom):
        yield node
    else:
        yield from _imports(node, type_only=type_only)


def _absolute(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    base = module.split(".")
    if not is_package:
        base.pop()
    base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, node.module] if node.module else base)


def _targets(
    module: str, path: Path, modules: dict[str, Path], *, type_only: bool
) -> Iterator[tuple[str, int]]:
    """(imported co_tui module, line) for each import in `path`."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    is_package = path.name == "__init__.py"
    for node in _imports(tree, type_only=type_only):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno
            continue
        base = _absolute(module, is_package, node)
        yield base, node.lineno
        for alias in node.names:
            if f"{base}.{alias.name}" in modules:
                yield f"{base}.{alias.name}", node.lineno


def import_graph(*, type_only: bool = True) -> dict[str, dict[str, int]]:
    """{module: {module it depends on: line of the (first) import}}; `type_only=False` leaves
    out the imports under `if TYPE_CHECKING:`."""
    modules = _modules()
    graph: dict[str, dict[str, int]] = {name: {} for name in modules}
    for module, path in modules.items():
        own_packages = {".".join(module.split(".")[:i]) for i in range(1, module.count(".") + 1)}
        if path.name == "__init__.py":
            own_packages.add(module)
        for target, line in _targets(module, path, modules, type_only=type_only):
            if target.split(".")[0] != ROOT:
                continue
            parts = target.split(".")
            for i in range(1, len(parts) + 1):
                name = ".".join(parts[:i])
                if name in modules and name not in own_packages and name != module:
                    graph[module].setdefault(name, line)
    return graph


def strongly_connected(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """Tarjan's algorithm, iterative; each component sorted, components sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    components: list[list[str]] = []
    counter = 0
    for start in graph:
        if start in index:
            continue
        work: list[tuple[str, Iterator[str]]] = [(start, iter(graph[start]))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(graph[child])))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                components.append(sorted(component))
    return sorted(c for c in components if len(c) > 1)


def describe(component: list[str], graph: dict[str, dict[str, int]]) -> str:
    members = set(component)
    edges = [
        f"    {src} -> {dst} (line {line})"
        for src in component
        for dst, line in sorted(graph[src].items())
        if dst in members
    ]
    return f"  cycle of {len(component)}: {', '.join(component)}\n" + "\n".join(edges)


def test_the_graph_sees_function_level_imports() -> None:
    graph = import_graph()
    assert graph.get("co_tui.agent.build")
    assert all(target.startswith(ROOT) for edges in graph.values() for target in edges)


def test_the_graph_sees_type_only_imports() -> None:
    runtime, everything = import_graph(type_only=False), import_graph()
    added = {(src, dst) for src in everything for dst in everything[src]} - {
        (src, dst) for src in runtime for dst in runtime[src]
    }
    assert ("co_tui.context.deps", "co_tui.knowledge.notes_index") in added


def test_no_import_cycles() -> None:
    graph = import_graph()
    cycles = strongly_connected(graph)
    report = "\n".join(describe(c, graph) for c in cycles)
    assert not cycles, f"{len(cycles)} import cycle(s) between co_tui modules:\n{report}"
