"""The panel's replies: each result in the service's JSON shape, with the HTML fragment its view makes.

These render (a whole page can take seconds of CPU), so the handlers call them in a worker lane, never on
tornado's event loop; :func:`as_json` encodes there too. Whole pages render in a worker process, so every
function here is module-level and takes and returns what pickles.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from ..render.payload import hit_items
from ..render.views import FRAGMENT_PREVIEW_CHARS, view_for

__all__ = ["answer_reply", "as_json", "documents_reply", "html_for", "search_reply", "section_reply"]


def html_for(obj: Any, number: int | None = None, tell: str = "") -> str:
    """Inner HTML for a hit, a results header, a page or an answer (the panel adds the stylesheet once);
    ``tell``: what tells a hit apart from look-alikes (:func:`~devknow_jupyter.render.labels.tell_apart`)."""
    view = view_for(obj)
    if view is None:
        raise TypeError(f"no view for {type(obj).__name__}")
    return view.fragment(obj, number, tell) if tell else view.fragment(obj, number)


def search_reply(results: Any) -> dict[str, Any]:
    """Search results in the service's shape, each hit with its title, page URL, tell (what tells it apart from
    hits with its title, or "") and HTML added."""
    items = hit_items(results, preview_chars=FRAGMENT_PREVIEW_CHARS)  # the payload the widgets show too
    hits = [
        {**hit.to_dict(), "title": hit.title, "uri": hit.uri, "tell": item["tell"], "html": item["html"]}
        for hit, item in zip(results, items, strict=True)
    ]
    return {
        "kind": "search",
        "query": results.query,
        "results": hits,
        "header_html": html_for(results),
        "notices": list(results.info.notices),
        "info": {"backend": results.info.backend, "elapsed": results.info.elapsed, "from_cache": results.from_cache},
    }


def documents_reply(docs: Any) -> dict[str, Any]:
    """Whole pages, each with its HTML (contents list and heading anchors included). A long page comes with
    its first sections rendered and the others as placeholders: ``sections`` says which (``pending``) and the
    ``number`` to ask ``devknow/api/section`` for each with (:func:`section_reply`)."""
    return {"documents": [_document_item(doc) for doc in docs], "notices": list(docs.info.notices)}


def _document_item(doc: Any) -> dict[str, Any]:
    from ..render.static import sectioned_page_html

    page, parts = sectioned_page_html(doc, toc_min_headings=2, sources=False)  # less for the lab to sanitize
    item = {**doc.to_dict(), "html": page}
    if parts is not None and parts.pending:
        item["sections"] = {"number": parts.number, "pending": list(parts.pending)}
    return item


def section_reply(doc: Any, index: int, number: int) -> dict[str, Any]:
    """Section ``index`` of the long page ``doc`` rendered for the output ``number`` its page was sent with."""
    from ..errors import ConfigurationError
    from ..render.sections import outline, section_html

    page = outline(doc.content, doc.uri)
    if not 0 <= index < len(page.sections):
        raise ConfigurationError(f"{doc.name} has sections 0 to {len(page.sections) - 1}, not {index}.")
    return {"name": doc.name, "index": index, "html": section_html(page, index, number)}


def answer_reply(result: Any) -> dict[str, Any]:
    """A grounded answer with its references; or, once the answer quota is out, the hits ``ask`` fell back to."""
    if not hasattr(result, "answer_text"):  # the quota fallback: search results with a notice
        return {**search_reply(result), "fallback": True}
    return {
        "kind": "answer",
        **result.to_dict(),
        "query": result.query,
        "extractive": result.extractive,
        "notices": list(result.info.notices),
        "html": html_for(result),
    }


def as_json(build: Callable[[Any], dict[str, Any]], result: Any) -> str:
    """``build(result)`` as JSON text, to send as it is."""
    return json.dumps(build(result))
