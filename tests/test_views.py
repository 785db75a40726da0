"""The views registry: one view per result type, and every front end goes through it.

A made-up tool's result (a glossary entry) gets a model and a view, and nothing else: display, the
widgets, the ``devknow`` printers and the JupyterLab panel's HTML all show it.
"""

from __future__ import annotations

import argparse
import io
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from devknow_jupyter import display
from devknow_jupyter.models import Answer, Document, DocumentChunk, Documents, SearchResults, _Displayable
from devknow_jupyter.render import views


@dataclass(frozen=True)
class GlossaryEntry(_Displayable):
    """A made-up tool's result."""

    term: str
    meaning: str

    def to_dict(self) -> dict[str, str]:
        return {"term": self.term, "meaning": self.meaning}


class GlossaryView(views.View):
    def widget(self, obj: GlossaryEntry, *, options: Any, actions: Any) -> Any:
        import ipywidgets

        return ipywidgets.HTML(self.fragment(obj))

    def html(self, obj: GlossaryEntry, options: Any) -> str:
        return f"<dl>{self.fragment(obj)}</dl>"

    def markdown(self, obj: GlossaryEntry, options: Any) -> str:
        return f"**{obj.term}**: {obj.meaning}\n"

    def plain(self, obj: GlossaryEntry, options: Any) -> str:
        return f"{obj.term} = {obj.meaning}"

    def cli(self, obj: GlossaryEntry) -> str:
        return f"{obj.term}\n   {obj.meaning}\n"

    def fragment(self, obj: GlossaryEntry, number: int | None = None) -> str:
        return f"<dt>{obj.term}</dt><dd>{obj.meaning}</dd>"


@pytest.fixture
def glossary() -> Iterator[GlossaryEntry]:
    views.register(GlossaryEntry)(GlossaryView)
    yield GlossaryEntry("quota", "how much you may ask for")
    views._VIEWS.pop(GlossaryEntry)


def test_a_new_result_type_needs_only_a_model_and_a_view(glossary: GlossaryEntry) -> None:
    from devknow_jupyter.cli import _emit
    from devknow_jupyter.labext.views import html_for
    from devknow_jupyter.render.views import widget_for as view_for

    bundle = display.mimebundle(glossary, widgets_outside_kernel=True)
    assert bundle["text/plain"] == "quota = how much you may ask for"
    assert bundle["text/markdown"] == glossary.to_markdown() == "**quota**: how much you may ask for\n"
    assert bundle["text/html"] == "<dl><dt>quota</dt><dd>how much you may ask for</dd></dl>"
    assert display.WIDGET_MIME in bundle
    assert view_for(glossary).value == "<dt>quota</dt><dd>how much you may ask for</dd>"
    assert html_for(glossary) == "<dt>quota</dt><dd>how much you may ask for</dd>"
    out = io.StringIO()
    _emit(glossary, argparse.Namespace(json=False), out)
    assert out.getvalue() == "quota\n   how much you may ask for\n"


RESULTS = {
    "hits": SearchResults("lantern", [DocumentChunk("documents/docs.lantern.test/setup", "1", "# Set up\n\nRelay.")]),
    "hit": DocumentChunk("documents/docs.lantern.test/setup", "1", "# Set up\n\nRelay first."),
    "document": Document.from_dict({"name": "documents/docs.lantern.test/setup", "content": "# Set up\n\nRelay."}),
    "documents": Documents([Document.from_dict({"name": "documents/docs.lantern.test/a", "content": "# A\n\nx"})]),
    "answer": Answer("Install the relay.", ["documents/docs.lantern.test/setup"], "how?"),
}


@pytest.mark.parametrize("kind", sorted(RESULTS))
def test_every_result_type_has_one_view_and_one_markdown(kind: str) -> None:
    result = RESULTS[kind]
    view = views.view_for(result)
    assert view is not None
    bundle = display.mimebundle(result, widgets=False)
    assert bundle["text/markdown"] == view.markdown(result, display.options) == result.to_markdown()
    assert bundle["text/plain"] == view.plain(result, display.options)
    numbered = re.compile(r"(dk-[0-9a-f]{6})-[0-9a-f]+-")  # heading ids are numbered per output
    assert numbered.sub(r"\1-", bundle["text/html"]) == numbered.sub(r"\1-", view.html(result, display.options))


def test_objects_without_a_view_show_their_repr() -> None:
    assert views.view_for(object()) is None
    assert display.mimebundle(42) == {"text/plain": "42"}
