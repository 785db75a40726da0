"""No module reaches into another module's private names (issue 23): ``from x import _name``, ``x._name``
on an imported module of the package, and ``obj._name`` where ``_name`` belongs to another module.

A private name (one leading underscore) is its module's own business: a part that needs it from elsewhere
shows a second job sharing a home, and the name should become public or move. Inside ``devknow_jupyter/local``
none is left (all three kinds are looked for there); elsewhere the imports still to cut are listed in
:data:`KNOWN`, and any reach not listed fails the test.
"""

from __future__ import annotations

import ast
from pathlib import Path

from tests.conftest import ROOT

PACKAGE = "devknow_jupyter"
#: ``"path/in/repo.py: what"`` reaches that other work still has to cut (outside ``local/``).
KNOWN = {
    "devknow_jupyter/deverror.py: from devknow_jupyter.magics import _Progress",
    "devknow_jupyter/deverror.py: from devknow_jupyter.magics import _display",
    "devknow_jupyter/deverror.py: from devknow_jupyter.magics import _message",
    "devknow_jupyter/deverror.py: from devknow_jupyter.magics import _parse",
    "devknow_jupyter/deverror.py: from devknow_jupyter.magics import _strip_silencing_semicolon",
    "devknow_jupyter/deverror.py: from devknow_jupyter.magics import _variable_name",
    "devknow_jupyter/models.py: from devknow_jupyter import _display_bundle",
}


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _target(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    """The absolute module a ``from ... import`` names."""
    if not node.level:
        return node.module or ""
    base = module.split(".") if is_package else module.split(".")[:-1]
    base = base[: len(base) - node.level + 1]
    return ".".join(base + ([node.module] if node.module else []))


def _defined(tree: ast.AST) -> set[str]:
    """The private names a module defines: functions, classes, variables and attributes it assigns."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            names.add(node.attr)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
    return {name for name in names if _private(name)}


def reaches(sources: dict[str, tuple[str, bool]], attributes_in: str = PACKAGE) -> list[str]:
    """Every reach into another module's private names in ``sources`` (``{module: (source, is_package)}``),
    as ``module: what``. ``obj._name`` of another module's ``_name`` is looked for only in the modules under
    ``attributes_in`` (elsewhere a common name such as a named tuple's ``_replace`` would be taken for one)."""
    trees = {module: ast.parse(source) for module, (source, _) in sources.items()}
    defined = {module: _defined(tree) for module, tree in trees.items()}
    elsewhere: dict[str, set[str]] = {}
    for module, names in defined.items():
        for name in names:
            elsewhere.setdefault(name, set()).add(module)
    found = []
    for module, tree in trees.items():
        is_package = sources[module][1]
        aliases: dict[str, str] = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                target = _target(module, is_package, node)
                if target.split(".")[0] != PACKAGE or target == module:
                    continue
                for alias in node.names:
                    if _private(alias.name):
                        found.append(f"{module}: from {target} import {alias.name}")
                    if f"{target}.{alias.name}" in sources:
                        aliases[alias.asname or alias.name] = f"{target}.{alias.name}"
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name.split(".")[0] == PACKAGE:
                        aliases[alias.asname or alias.name] = alias.name
        for node in ast.walk(tree):
            if not isinstance(node, ast.Attribute) or not _private(node.attr):
                continue
            if isinstance(node.value, ast.Name) and node.value.id in aliases:
                found.append(f"{module}: {node.value.id}.{node.attr}")
            elif not (module + ".").startswith(attributes_in + "."):
                continue
            elif node.attr not in defined[module] and elsewhere.get(node.attr, set()) - {module}:
                found.append(f"{module}: .{node.attr} (of {', '.join(sorted(elsewhere[node.attr]))})")
    return sorted(set(found))


def _package_sources() -> dict[str, tuple[str, bool]]:
    return {
        _module_name(path, ROOT): (path.read_text(encoding="utf-8"), path.name == "__init__.py")
        for path in sorted((ROOT / PACKAGE).rglob("*.py"))
    }


def _as_path(found: str) -> str:
    module, what = found.split(": ", 1)
    path = ROOT / Path(*module.split("."))
    path = path / "__init__.py" if path.is_dir() else path.with_suffix(".py")
    return f"{path.relative_to(ROOT).as_posix()}: {what}"


def test_the_check_catches_each_kind_of_reach() -> None:
    sources = {
        f"{PACKAGE}.a": ("_hidden = 1\nclass A:\n    def __init__(self):\n        self._db = None\n", False),
        f"{PACKAGE}.b": (
            f"from .a import _hidden\nfrom {PACKAGE} import a\nx = a._hidden\ndef f(store):\n    return store._db\n",
            False,
        ),
        f"{PACKAGE}.c": ("import os\nclass C:\n    def f(self):\n        self._own = os._exit\n", False),
    }
    assert reaches(sources) == [
        f"{PACKAGE}.b: .{'_db'} (of {PACKAGE}.a)",
        f"{PACKAGE}.b: a._hidden",
        f"{PACKAGE}.b: from {PACKAGE}.a import _hidden",
    ]


def test_no_module_of_the_local_backend_reaches_into_another_modules_private_names() -> None:
    local = f"{PACKAGE}.local"
    assert [found for found in reaches(_package_sources(), local) if found.startswith(local)] == []


def test_no_new_reach_into_private_names_anywhere_in_the_package() -> None:
    found = {_as_path(item) for item in reaches(_package_sources(), f"{PACKAGE}.local")}
    assert found - KNOWN == set()
