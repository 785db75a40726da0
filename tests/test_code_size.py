"""The package stays in small parts: no class over 400 lines, no function over 60, in any module (issue 14).

A class or function allowed to be longer must say why in :data:`ALLOWED`, with its length: the entry
fails once the code is short again, so the list can only shrink.
"""

from __future__ import annotations

import ast
from pathlib import Path

import devknow_jupyter as package

CLASS_LIMIT = 400
FUNCTION_LIMIT = 60
ROOT = Path(package.__file__).parent
#: ``"path/in/package.py:Qualified.name"`` -> why it is longer than its limit. Empty: nothing is.
ALLOWED: dict[str, str] = {}


def too_long(source: str) -> list[str]:
    """The classes and functions of ``source`` longer than their limit, as ``Qualified.name (lines)``.

    Lines are counted from the ``class``/``def`` line to the last line of the body (decorators left out).
    """
    found: list[str] = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                name = f"{prefix}{child.name}"
                limit = CLASS_LIMIT if isinstance(child, ast.ClassDef) else FUNCTION_LIMIT
                lines = child.end_lineno - child.lineno + 1
                if lines > limit:
                    found.append(f"{name} ({lines})")
                visit(child, f"{name}.")
            else:
                visit(child, prefix)

    visit(ast.parse(source), "")
    return found


def offenders() -> list[str]:
    """Every class and function of the package over its limit, as ``path:Qualified.name (lines)``."""
    return [
        f"{path.relative_to(ROOT).as_posix()}:{name}"
        for path in sorted(ROOT.rglob("*.py"))
        for name in too_long(path.read_text(encoding="utf-8"))
    ]


def test_the_check_catches_a_long_function_a_long_class_and_a_long_method() -> None:
    body = "".join(f"    x{i} = {i}\n" for i in range(FUNCTION_LIMIT))
    methods = "".join(f"    def m{i}(self):\n        return {i}\n\n" for i in range(CLASS_LIMIT // 3 + 1))
    assert too_long(f"def long():\n{body}") == [f"long ({FUNCTION_LIMIT + 1})"]
    assert [name.split()[0] for name in too_long(f"class Big:\n{methods}")] == ["Big"]
    method = "".join(f"        x{i} = {i}\n" for i in range(FUNCTION_LIMIT))
    assert too_long(f"class Small:\n    def long(self):\n{method}") == [f"Small.long ({FUNCTION_LIMIT + 1})"]
    assert too_long("def short():\n    return 1\n") == []


def test_no_class_of_the_package_is_over_400_lines_and_no_function_over_60() -> None:
    found = offenders()
    unexplained = [item for item in found if item.rsplit(" (", 1)[0] not in ALLOWED]
    assert unexplained == [], "over the limit (split it, or say why in ALLOWED): " + ", ".join(unexplained)


def test_every_allowed_exception_is_still_needed() -> None:
    still_long = {item.rsplit(" (", 1)[0] for item in offenders()}
    assert sorted(set(ALLOWED) - still_long) == []
