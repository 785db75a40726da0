"""The transport package stays in small parts: no class over 400 lines, no function over 60 (issue 14)."""

from __future__ import annotations

import ast
from pathlib import Path

import devknow_jupyter.transport as package

CLASS_LIMIT = 400
FUNCTION_LIMIT = 60


def too_long(source: str) -> list[str]:
    """The classes and functions of ``source`` longer than their limit, as ``name (lines)``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ClassDef):
            limit = CLASS_LIMIT
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            limit = FUNCTION_LIMIT
        else:
            continue
        lines = node.end_lineno - node.lineno + 1
        if lines > limit:
            found.append(f"{node.name} ({lines})")
    return found


def test_the_check_catches_a_long_function_and_a_long_class() -> None:
    body = "".join(f"    x{i} = {i}\n" for i in range(FUNCTION_LIMIT))
    methods = "".join(f"    def m{i}(self):\n        return {i}\n\n" for i in range(CLASS_LIMIT // 3 + 1))
    assert too_long(f"def long():\n{body}") == [f"long ({FUNCTION_LIMIT + 1})"]
    assert [name.split()[0] for name in too_long(f"class Big:\n{methods}")] == ["Big"]
    assert too_long("def short():\n    return 1\n") == []


def test_no_class_of_the_transport_is_over_400_lines_and_no_function_over_60() -> None:
    paths = sorted(Path(package.__file__).parent.glob("*.py"))
    assert len(paths) > 5
    found = [f"{path.name}:{name}" for path in paths for name in too_long(path.read_text(encoding="utf-8"))]
    assert found == []
