"""No import cycle between the package's modules, counting the imports inside functions too.

A module that imports another inside a function still depends on it: such imports hide layering
mistakes (a renderer reaching up into the display layer, the explorer and the magics importing each
other) that a top-level-only check would miss. Only ``if TYPE_CHECKING:`` blocks are left out: they never run.
"""

from __future__ import annotations

import ast
from pathlib import Path

from tests.conftest import ROOT

PACKAGE = "devknow_jupyter"
#: Edges of cycles still to be cut (issue 14), each removed with the change that cuts it. The test fails when
#: one of them no longer exists, so the list can only shrink.
KNOWN_CYCLE_EDGES = {
    ("devknow_jupyter.render.twin", "devknow_jupyter.render.markdown"),  # safe_url lives in markdown.py
}


def _modules() -> dict[str, Path]:
    found = {}
    for path in sorted((ROOT / PACKAGE).rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _import_nodes(tree: ast.AST) -> list[ast.Import | ast.ImportFrom]:
    nodes: list[ast.Import | ast.ImportFrom] = []
    pending = [tree]
    while pending:
        node = pending.pop()
        if isinstance(node, ast.If) and _is_type_checking(node):
            pending.extend(node.orelse)
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            nodes.append(node)
        pending.extend(ast.iter_child_nodes(node))
    return nodes


def imports_of(module: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The package modules ``module`` imports anywhere in its code (``from . import x`` names module x)."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    targets: set[str] = set()
    for node in _import_nodes(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets.update(alias.name for alias in node.names)
            continue
        base = node.module or ""
        if node.level:
            anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
            base = ".".join([*anchor, *([base] if base else [])])
        for alias in node.names:
            sub = f"{base}.{alias.name}"
            targets.add(sub if sub in modules else base)
    return {target for target in targets if target in modules and target != module}


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle in ``graph`` as a list of modules (first == last), or None."""
    state: dict[str, int] = {}  # 1 on the current path, 2 done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for target in sorted(graph[node]):
            if state.get(target) == 1:
                return [*path[path.index(target) :], target]
            if target not in state and (cycle := visit(target)):
                return cycle
        path.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (cycle := visit(node)):
            return cycle
    return None


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def test_imports_inside_functions_count(tmp_path: Path) -> None:
    source = tmp_path / "mod.py"
    source.write_text("def f():\n    from .other import x\nif TYPE_CHECKING:\n    from .hidden import y\n")
    modules = {"pkg.mod": source, "pkg.other": source, "pkg.hidden": source}
    assert imports_of("pkg.mod", source, modules) == {"pkg.other"}


def test_no_import_cycle_between_package_modules() -> None:
    modules = _modules()
    # The package's __init__ imports its parts lazily for the public API; every part "imports" it as its
    # parent package, which is Python's doing, not a dependency of ours: only explicit imports count.
    graph = {name: imports_of(name, path, modules) for name, path in modules.items() if name != PACKAGE}
    graph = {name: targets - {PACKAGE} for name, targets in graph.items()}
    stale = {(source, target) for source, target in KNOWN_CYCLE_EDGES if target not in graph[source]}
    assert not stale, f"cut already: remove from KNOWN_CYCLE_EDGES: {stale}"
    for source, target in KNOWN_CYCLE_EDGES:
        graph[source].discard(target)
    assert find_cycle(graph) is None, " -> ".join(find_cycle(graph) or [])


#: What each layer must never import (each layer's home in the package): the renderer reads its settings from below.
FORBIDDEN = {
    "devknow_jupyter.render": ("display", "magics", "explorer", "cli", "session", "labext", "client"),
    "devknow_jupyter.models": ("display", "render", "magics", "explorer", "cli", "session", "labext", "client"),
}


def test_layers_never_import_above_themselves() -> None:
    modules = _modules()
    for layer, above in FORBIDDEN.items():
        for name, path in modules.items():
            if name == layer or name.startswith(layer + "."):
                targets = imports_of(name, path, modules)
                bad = {t for t in targets if t.removeprefix(PACKAGE + ".").split(".")[0] in above}
                assert not bad, f"{name} imports {bad}"
