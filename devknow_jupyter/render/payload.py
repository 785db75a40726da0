"""The one payload of results that every face shows: hits and pages as plain dicts of sanitized HTML.

* :func:`hit_items`: the hits of a search, each ``{"name", "html", "truncated", "tell"}`` (``tell``: what
  tells it apart from hits with its title, :mod:`.labels`). The result widgets (:mod:`.widgets`), the static
  twin (``text/html``, :mod:`.views`), the explorer's passages and the JupyterLab panel's JSON API
  (:mod:`devknow_jupyter.labext.views`) all take their hits from here.
* :func:`page_item`: a page as a view shows it, ``{"name", "html", "truncated"}``.

A ``%devsearch`` shows the same hits twice, in the static twin and in the widget; the hits rendered for
one are reused by the other (the last search's items are kept, by weak reference), so each hit's HTML is
rendered once per display.
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from . import static
from .labels import tells_for

if TYPE_CHECKING:
    from ..models import Document, DocumentChunk

__all__ = ["hit_items", "page_item"]

# The last hits rendered: (a weak reference to their list, the rendering's settings, the items).
_last: tuple[weakref.ref[Any], tuple[Any, ...], list[dict[str, Any]]] | None = None


def hit_items(
    hits: Sequence[DocumentChunk],
    *,
    max_chars: int | None = None,
    preview_chars: int | None = None,
    start: int = 1,
    tells: Sequence[str] | None = None,
) -> list[dict[str, Any]]:
    """The hits as the views show them, numbered from ``start``: ``[{"name", "html", "truncated", "tell"}]``.

    ``tells`` default to those of ``hits`` alone (:func:`~.labels.tells_for`); pass them when the hits are a
    further page of a list. The same call for the same hits object again returns the same items (not
    rendered again).
    """
    global _last
    from .settings import options

    key = (max_chars, preview_chars, start, tuple(tells) if tells is not None else None, options.remote_images)
    if _last is not None and _last[0]() is hits and _last[1] == key:
        return _last[2]
    told = list(tells) if tells is not None else tells_for(hits)
    items = [
        {
            "name": hit.parent,
            "html": static.hit_html(hit, number, max_chars=max_chars, preview_chars=preview_chars, tell=tell),
            "truncated": False,
            "tell": tell,
        }
        for (number, hit), tell in zip(enumerate(hits, start), told, strict=True)
    ]
    try:
        _last = (weakref.ref(hits), key, items)
    except TypeError:  # a plain list (no weak references): nothing to reuse
        _last = None
    return items


def page_item(
    document: Document, *, max_chars: int | None, toc_min_headings: int = 0, raw: bool = False
) -> dict[str, Any]:
    """A page as a view shows it: header, contents, rendered body, and whether it was cut at ``max_chars``."""
    body, truncated = static.document_body_html(
        document,
        max_chars=max_chars,
        toc_min_headings=toc_min_headings,
        raw=raw,
        static=False,  # the note need not say how to see the rest: the view has "Show all"
    )
    head = static.document_header_html(document)
    return {"name": document.name, "html": f'<div class="devknow-doc">{head}{body}</div>', "truncated": truncated}
