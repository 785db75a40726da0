"""A test-only tool added through the registry: ``outline_document`` (face ``outline``), a page's headings.

Everything a new tool needs, in the four parts the registry asks for and nothing else:

1. its model, :class:`Outline`;
2. its view, :class:`OutlineView` (registered for the model in ``render.views``);
3. its registry entry, :data:`ENTRY` (name, schemas, model, view, retry rule, the two mappings, the face);
4. the backend that serves it: ``LocalBackend.outline`` and the operation in its capabilities (in the product,
   a method in ``local/backend.py``; here set on the class by :func:`install` and taken off by :func:`uninstall`).

No face is touched: the magics, the CLI, the panel API and ``devknow serve`` offer it from the registry.
Also a Jupyter server extension (``jpserver_extensions={"tests.registry_tool": True}``), so a server in another
process offers it too.
"""

from __future__ import annotations

import dataclasses
import html
import re
from typing import Any

from devknow_jupyter import registry
from devknow_jupyter.local.backend import LocalBackend
from devknow_jupyter.render import views

NAME, FACE = "outline_document", "outline"
_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$", re.MULTILINE)


@dataclasses.dataclass
class Outline:
    """1. The model: a document's name and its headings, in page order."""

    name: str
    headings: list[str]

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "headings": list(self.headings)}


class OutlineView(views.View):
    """2. The view: the headings as a list, in each output the package makes."""

    def html(self, obj: Outline, options: Any) -> str:
        return self.fragment(obj)

    def markdown(self, obj: Outline, options: Any) -> str:
        return "\n".join(f"- {heading}" for heading in obj.headings)

    def plain(self, obj: Outline, options: Any) -> str:
        return self.cli(obj)

    def cli(self, obj: Outline) -> str:
        return "".join(f"{number}. {heading}\n" for number, heading in enumerate(obj.headings, 1))

    def fragment(self, obj: Outline, number: int | None = None) -> str:
        items = "".join(f"<li>{html.escape(heading)}</li>" for heading in obj.headings)
        return f'<ol class="devknow-outline">{items}</ol>'


def _request(arguments: dict[str, Any]) -> str:
    name = arguments.get("name")
    if not isinstance(name, str) or not name.startswith("documents/"):
        raise registry.invalid(NAME, "name must be a document name (documents/...)")
    return name


#: 3. The registry entry.
ENTRY = registry.ToolEntry(
    name=NAME,
    operation="outline",
    definition={
        "title": "Outline a document",
        "description": "The headings of one document, in page order.",
        "inputSchema": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]},
        "outputSchema": {
            "type": "object",
            "properties": {"name": {"type": "string"}, "headings": {"type": "array", "items": {"type": "string"}}},
            "required": ["name", "headings"],
        },
        "annotations": {"title": "Outline a document", "readOnlyHint": True},
    },
    model=Outline,
    view=f"{__name__}:OutlineView",
    retry_429=True,
    arguments=lambda name, inputs: {"name": name},
    request=_request,
    model_from=lambda data, name: Outline(str(data["name"]), [str(item) for item in data["headings"]]),
    result_from=lambda outline: outline.to_dict(),
    face=FACE,
    text_field="name",
)


def _outline(self: LocalBackend, name: str) -> Outline:
    """4. The backend: the local index serves it from the document's Markdown."""
    (document,) = self.get([name])
    return Outline(name, [match.group(2) for match in _HEADING.finditer(document.content)])


_saved: dict[str, Any] = {}


def install() -> None:
    """Add the tool: its view, its entry, and the local backend's method and capability."""
    views.register(Outline)(OutlineView)
    registry.register(ENTRY)
    if "capabilities" not in _saved:
        _saved["capabilities"] = LocalBackend.capabilities
    base = _saved["capabilities"]
    LocalBackend.capabilities = dataclasses.replace(base, operations=base.operations | {"outline"})
    LocalBackend.outline = _outline  # type: ignore[attr-defined]


def uninstall() -> None:
    """Take the tool off again."""
    registry.unregister(NAME)
    views._VIEWS.pop(Outline, None)
    if "capabilities" in _saved:
        LocalBackend.capabilities = _saved.pop("capabilities")
    if hasattr(LocalBackend, "outline"):
        del LocalBackend.outline  # type: ignore[attr-defined]


def _jupyter_server_extension_points() -> list[dict[str, str]]:
    return [{"module": __name__}]


def _load_jupyter_server_extension(serverapp: Any) -> None:
    install()
