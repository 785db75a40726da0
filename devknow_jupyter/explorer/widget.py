"""The explorer's one widget model: an anywidget whose synced traits hold what it shows, as plain data.

The browser half is a small hand-written ES module (``esm/explorer.js``) and stylesheet (``esm/explorer.css``),
shipped in the package. It builds the app's DOM once, fills it from these traits, keeps keyboard focus and
the arrow keys in the browser, and sends the user's actions back as custom messages (``model.send``):

* ``{"event": "search", "query", "source"}``, ``{"event": "ask", "question"}``;
* ``{"event": "open", "hit": i}`` or ``{"event": "open", "reference": i}``;
* ``{"event": "back"}``, ``{"event": "forward"}``, ``{"event": "more"}`` (the next page of hits),
  ``{"event": "whole"}`` (the whole page, not cut at ``display.options.max_chars``).

Python answers by setting the traits. The ``*_html`` traits are HTML the package's renderers made and
sanitized (the module never renders Markdown); every other trait is text the module shows as text.
"""

from __future__ import annotations

from pathlib import Path

import anywidget
import traitlets as t

_ESM = Path(__file__).parent / "esm"
_KEYS = Path(__file__).parent.parent / "render" / "esm" / "keys.js"


class ExplorerWidget(anywidget.AnyWidget):
    """The explorer's state, synced to its ES module: one widget model per explorer."""

    # Text, not paths (anywidget would watch a path in a thread); keys.js: the keys every devknow view keeps.
    _esm = _KEYS.read_text(encoding="utf-8") + (_ESM / "explorer.js").read_text(encoding="utf-8")
    _css = (_ESM / "explorer.css").read_text(encoding="utf-8")

    #: The search box, the site filter and the ask box (the module sends what was typed with each action).
    query = t.Unicode("").tag(sync=True)
    source = t.Unicode("").tag(sync=True)
    question = t.Unicode("").tag(sync=True)
    #: The sites seen so far, offered by the site filter.
    sites = t.List(t.Unicode()).tag(sync=True)
    #: One status line: ``{"kind": "busy" | "ok" | "hint" | "warn" | "error", "text", "hint", "title"}``.
    status = t.Dict().tag(sync=True)
    #: The hit list: ``[{"label", "tooltip"}]``; ``selected`` is the hit whose page is shown (-1: none).
    hits = t.List(t.Dict()).tag(sync=True)
    selected = t.Int(-1).tag(sync=True)
    #: True when the hits listed have a next page (the "More hits" button).
    has_more = t.Bool(False).tag(sync=True)
    #: An answer's references: ``[{"label", "tooltip"}]``.
    references = t.List(t.Dict()).tag(sync=True)
    #: True when the page shown is cut (the "Show the whole page" button).
    truncated = t.Bool(False).tag(sync=True)
    can_back = t.Bool(False).tag(sync=True)
    can_forward = t.Bool(False).tag(sync=True)
    #: Sanitized HTML from the renderers: the hit list's header, the page's title, contents and body.
    hits_header_html = t.Unicode("").tag(sync=True)
    title_html = t.Unicode("").tag(sync=True)
    toc_html = t.Unicode("").tag(sync=True)
    page_html = t.Unicode("").tag(sync=True)
    #: The package's shared stylesheet (a ``<style>`` block of our own, not from any page).
    style_html = t.Unicode("").tag(sync=True)
