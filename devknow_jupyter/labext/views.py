"""The HTML the panel shows for each result, from the package's one renderer (sanitized on the server).

Kept to one small function so that the views registry planned for the renderer can replace its body
without touching the handlers.
"""

from __future__ import annotations

from typing import Any

from ..models import Answer, Document, DocumentChunk, SearchResults
from ..render import static

__all__ = ["html_for"]

#: Characters of a passage shown in a hit list (the page has the rest).
PREVIEW_CHARS = 400


def html_for(obj: Any, number: int | None = None) -> str:
    """Inner HTML for a hit, a results header, a page or an answer (the panel adds the stylesheet once)."""
    if isinstance(obj, DocumentChunk):
        return static.hit_html(obj, number, preview_chars=PREVIEW_CHARS)
    if isinstance(obj, SearchResults):
        return static.hits_header_html(obj)
    if isinstance(obj, Document):
        return static.document_html(obj, toc_min_headings=2)
    if isinstance(obj, Answer):
        refs = [static.reference_html(name, i) for i, name in enumerate(obj.references, 1)]
        heading = '<div class="devknow-refs">References</div>' if refs else ""
        return static.answer_header_html(obj) + static.answer_text_html(obj) + heading + "".join(refs)
    raise TypeError(f"no view for {type(obj).__name__}")
