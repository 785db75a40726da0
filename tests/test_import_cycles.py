"""No import cycle between the package's modules, the package root and lazy imports included.

A module that imports another inside a function still depends on it: such imports hide layering
mistakes (a renderer reaching up into the display layer, the explorer and the magics importing each
other) that a top-level-only check would miss. Only ``if TYPE_CHECKING:`` blocks are left out: they never run.

The package root (``devknow_jupyter/__init__.py``) is a node like any other, with its lazy exports (the
``_LAZY`` table its ``__getattr__`` imports from) as edges: a module that imports a name from the root
(``from . import helper``) depends on everything the root reaches. Only the implicit edge from a module
to its parent package, which Python's import system adds, is not counted.
"""

from __future__ import annotations

import ast
from pathlib import Path

from tests.conftest import ROOT

PACKAGE = "devknow_jupyter"


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


def _lazy_exports(tree: ast.AST) -> list[ast.ImportFrom]:
    """A package's lazy export table (``_LAZY = {"Name": ".module"}``) as the imports its ``__getattr__`` makes."""
    found: list[ast.ImportFrom] = []
    for node in ast.walk(tree):
        targets = node.targets if isinstance(node, ast.Assign) else []
        targets = [node.target] if isinstance(node, ast.AnnAssign) else targets
        if any(isinstance(t, ast.Name) and t.id == "_LAZY" for t in targets) and isinstance(node.value, ast.Dict):
            for key, value in zip(node.value.keys, node.value.values, strict=True):
                if isinstance(value, ast.Constant) and isinstance(value.value, str) and isinstance(key, ast.Constant):
                    level = len(value.value) - len(value.value.lstrip("."))
                    module = value.value[level:] or None
                    found.append(ast.ImportFrom(module=module, names=[ast.alias(str(key.value))], level=level))
    return found


def imports_of(module: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The package modules ``module`` imports anywhere in its code (``from . import x`` names module x), and
    the modules of its lazy export table."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    targets: set[str] = set()
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in [*_import_nodes(tree), *_lazy_exports(tree)]:
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


def test_the_package_root_and_its_lazy_exports_are_in_the_graph(tmp_path: Path) -> None:
    root = tmp_path / "pkg" / "__init__.py"
    part = tmp_path / "pkg" / "part.py"
    root.parent.mkdir()
    root.write_text('_LAZY = {"Thing": ".part"}\ndef __getattr__(name):\n    return name\n')
    part.write_text("def show():\n    from . import helper\n")
    modules = {"pkg": root, "pkg.part": part}
    graph = {name: imports_of(name, path, modules) for name, path in modules.items()}
    assert graph == {"pkg": {"pkg.part"}, "pkg.part": {"pkg"}}
    assert find_cycle(graph) == ["pkg", "pkg.part", "pkg"]


def import_graph() -> dict[str, set[str]]:
    """Every module of the package, the root included, with the package modules it imports."""
    modules = _modules()
    return {name: imports_of(name, path, modules) for name, path in modules.items()}


def test_no_import_cycle_between_package_modules() -> None:
    graph = import_graph()
    assert PACKAGE in graph and f"{PACKAGE}.client" in graph[PACKAGE]  # the root and its lazy exports count
    cycle = find_cycle(graph)
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


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


def test_results_reach_the_display_layer_only_through_the_hook_the_root_plugs() -> None:
    graph = import_graph()
    hook = f"{PACKAGE}.display_hook"
    assert graph[hook] == set()  # a leaf: anything may import it without a cycle
    assert hook in graph[f"{PACKAGE}.models"] and PACKAGE not in graph[f"{PACKAGE}.models"]
    assert not [name for name, targets in graph.items() if PACKAGE in targets]  # no module imports the root
    assert hook in graph[PACKAGE]
