"""Showing a result in the explorer: what its widget model (:mod:`.widget`) holds, as plain data and
sanitized HTML (no requests, no history).

::

    ┌ ◀ ▶ [site filter] [search box ……………………………………] [Search] ┐
    │ status line: spinner while a request runs, notices, errors (one line) │
    ├ hits (one button per hit) ┬ title · link · contents · rendered page ─┤
    │ [More hits]               │ (or the answer, with its references)     │
    └ [ask box ……………………………………………………………………………………………………] [Ask] ┘

The browser lays it out (``esm/explorer.css``): in a narrow output the site filter shrinks first, then the
toolbar wraps onto a second line, so no control is cut or overlaps another (checked at a 900 px wide
window). Heading ids of the pages shown get a prefix of this view's own, so the contents links of one
explorer never jump into another output showing the same page.
"""

from __future__ import annotations

import html
import re
import secrets
import traceback
from typing import Any
from urllib.parse import urlsplit

from ..errors import DevKnowError, redact
from ..models import Answer, Document, SearchResults, name_to_uri
from ..render.labels import tells_for
from .widget import ExplorerWidget

#: At most this many hits are listed (the "More hits" button stops there: a bounded page in the browser).
MAX_HITS = 100

# The renderer's heading ids and the in-page links to them (id="dk-…", href="#dk-…").
# The renderer numbers each output's ids (dk-<page>-<n>-slug); the contents and the page are two renderings
# here, so the view's own prefix replaces both numbers.
_HEADING_IDS = re.compile(r'\b(id="|href="#)dk-(?:[0-9a-f]{6}-[0-9a-f]+-)?')


class ExplorerView:
    """The explorer's widget model (:attr:`widget`, one per explorer) and the ways to show a result in it.

    Whatever it shows, it shows now, on the calling thread; each ``show_*`` sends one state update.
    """

    def __init__(self, source: str | None = None) -> None:
        self.hits_result: SearchResults | None = None  # the hits in the list
        self.refs: list[str] = []  # the references listed (document names)
        self.domains: list[str] = []  # the sites seen, offered by the filter box
        self._id_prefix = f"dk-x{secrets.token_hex(3)}-"
        self.widget = ExplorerWidget(source=source or "", style_html=_style_block())

    # -- showing results ---------------------------------------------------------------------------------

    def show_hits(self, results: SearchResults) -> None:
        """Put ``results`` in the hit list (the first :data:`MAX_HITS`), none highlighted."""
        shown = results[:MAX_HITS]
        for hit in shown:
            site = host(hit.uri).lower()
            if site and site not in self.domains:
                self.domains.append(site)
        self.hits_result = results
        more = f'<div class="devknow-meta">The first {MAX_HITS} of {len(results)} hits are listed.</div>'
        header = _static().hits_header_html(results) + (more if len(results) > MAX_HITS else "")
        tells = tells_for(shown)  # look-alike titles (sibling packages' reference pages) get their paths' difference
        with self.widget.hold_sync():
            self.widget.hits = [
                {
                    "label": f"{number}. {one_line(hit.title, 90)}{f' ({tell})' if tell else ''} — {host(hit.uri)}",
                    "tooltip": f"{hit.title}\n{hit.uri}",
                }
                for (number, hit), tell in zip(enumerate(shown, 1), tells, strict=True)
            ]
            self.widget.selected = -1
            self.widget.has_more = results.has_next_page and len(results) < MAX_HITS
            self.widget.sites = sorted(self.domains)
            self.widget.hits_header_html = root(header)

    def clear_hits(self, note: str) -> None:
        """Empty the hit list (an answer replaces the search beside it); ``note`` says so in its header."""
        self.hits_result = None
        with self.widget.hold_sync():
            self.widget.hits = []
            self.widget.selected = -1
            self.widget.has_more = False
            self.widget.hits_header_html = root(f'<div class="devknow-header">{html.escape(note)}</div>')

    def highlight_hit(self, name: str | None) -> None:
        """Highlight the hit of document ``name`` (keeping the one picked among several of one page)."""
        index = -1
        if name and self.hits_result is not None:
            hits = self.hits_result[:MAX_HITS]
            selected = self.widget.selected
            if 0 <= selected < len(hits) and hits[selected].parent == name:
                index = selected
            else:
                index = next((number for number, hit in enumerate(hits) if hit.parent == name), -1)
        self.widget.selected = index

    def select_hit(self, index: int) -> None:
        """Highlight hit ``index`` (the one the user picked)."""
        self.widget.selected = index

    def show_welcome(self) -> None:
        """What a new explorer with no history shows."""
        self._show_pane(
            page=root(
                "Type a search above and press Enter. ↓ goes to the hits; there ↑ and ↓ move and Enter opens"
                " (Tab also reaches them). Ask a question below.",
                "dkx-empty",
            )
        )
        self.widget.hits_header_html = root('<div class="devknow-header">No search yet.</div>')

    def show_passages(self, results: SearchResults) -> None:
        """The right pane for a search: each hit's passage."""
        from ..render.payload import hit_items

        passages = "".join(
            f'<div class="devknow-hit">{item["html"]}</div>' for item in hit_items(results[:MAX_HITS],
                                                                                   max_chars=page_chars())
        )
        with self.widget.hold_sync():
            self.highlight_hit(None)
            self._show_pane(page=root(passages, "dkx-page"))

    def show_document(self, document: Document, *, whole: bool = False) -> None:
        """The right pane for a page: title, contents, the page (cut at ``max_chars`` unless ``whole``)."""
        from ..render.markdown import render_markdown, toc_html

        views = _static()
        limit = None if whole else page_chars()
        # The contents sit above the scrolling page so they stay in reach; links are #heading-id anchors.
        toc = render_markdown(document.content, base_url=document.uri, max_chars=limit).toc
        body, truncated = views.document_body_html(document, max_chars=limit, toc_min_headings=0, static=False)
        with self.widget.hold_sync():
            self.highlight_hit(document.name)
            self._show_pane(
                title=root(views.document_header_html(document)),
                toc=self._own_ids(root(toc_html(toc).replace("<details", "<details open", 1))) if toc else "",
                page=self._own_ids(root(body, "dkx-page")),
                truncated=truncated,
            )

    def show_answer(self, answer: Answer) -> None:
        """The right pane for an answer: its text, and its references as a list to open."""
        views = _static()
        refs = list(dict.fromkeys(answer.references))
        heading = '<div class="devknow-refs">References (Tab or ↓ to one, Enter opens it)</div>' if refs else ""
        with self.widget.hold_sync():
            self.highlight_hit(None)
            self._show_pane(
                title=root(views.answer_header_html(answer)),
                page=root(views.answer_text_html(answer, max_chars=page_chars()) + heading, "dkx-page"),
            )
            self.refs = refs
            self.widget.references = [
                {"label": f"{i}. {name_to_uri(ref)}", "tooltip": f"{name_to_uri(ref)}\n{ref}"}
                for i, ref in enumerate(refs, 1)
            ]

    def _show_pane(self, *, title: str = "", toc: str = "", page: str = "", truncated: bool = False) -> None:
        # The right pane as a whole: what a visit does not set is emptied (references too).
        self.refs = []
        self.widget.references = []
        self.widget.title_html, self.widget.toc_html, self.widget.page_html = title, toc, page
        self.widget.truncated = truncated

    def set_back_forward(self, can_go_back: bool, can_go_forward: bool) -> None:
        """Enable the Back and Forward buttons as the history allows."""
        self.widget.can_back = can_go_back
        self.widget.can_forward = can_go_forward

    def set_inputs(self, **values: str) -> None:
        """Put text into the search box (``query``), the site filter (``source``) or the ask box (``question``)."""
        for name, value in values.items():
            setattr(self.widget, name, value)

    def _own_ids(self, markup: str) -> str:
        # The renderer's ids are per document: the same page in two outputs would share them, and a
        # contents link would jump to the first output. This view's prefix makes them its own.
        return _HEADING_IDS.sub(lambda match: match.group(1) + self._id_prefix, markup)

    # -- status line -------------------------------------------------------------------------------------

    def say(self, text: str, kind: str = "ok") -> None:
        """Put one line in the status bar: ``busy`` (with spinner), ``ok``, ``hint``, ``warn`` or ``error``."""
        self.widget.status = {"kind": kind, "text": one_line(text, 400), "title": text}

    def say_error(self, exc: BaseException) -> None:
        """One status line for ``exc``: an expected error with its hint, or "Unexpected error: …" for a bug."""
        if isinstance(exc, DevKnowError):
            message, _, hint = exc.short_message().partition("\n")
            line = {"kind": "error", "text": one_line(message, 400), "title": exc.short_message()}
            if hint.strip():
                line["hint"] = one_line(hint, 300)
            self.widget.status = line
        elif isinstance(exc, KeyboardInterrupt):
            self.say("Interrupted.", "warn")
        else:
            # A bug, not an expected error: say so in one line (the explorer keeps it as `last_error`).
            detail = "".join(traceback.format_exception_only(type(exc), exc)).strip()
            self.say(redact(f"Unexpected error: {detail}"), "error")

    def close(self) -> None:
        """Close the widget model (and its Layout model, which ipywidgets leaves open)."""
        self.widget.layout.close()
        self.widget.close()


def _style_block() -> str:
    from ..render.style import style_block

    return style_block()


def _static() -> Any:
    """The shared static renderer (:mod:`devknow_jupyter.render.static`), imported on first use."""
    from ..render import static as views

    return views


def root(inner: str, *classes: str) -> str:
    """``inner`` in a ``.devknow`` root: each pane is filled on its own and needs it for the shared CSS."""
    from ..render.style import ROOT_CLASS

    return f'<div class="{" ".join((ROOT_CLASS, *classes))}">{inner}</div>'


def page_chars() -> int | None:
    """How much of a page to show (``display.options.max_chars``; None: all)."""
    from ..display import options

    return options.max_chars or None


def host(uri: str) -> str:
    """The host of a page's URL, or "" for URLs without one or that ``urlsplit`` refuses (``http://[::1``)."""
    try:
        return urlsplit(uri).hostname or ""
    except ValueError:
        return ""


def one_line(text: str, width: int) -> str:
    """``text`` on one line, cut to ``width`` characters with an ellipsis."""
    line = " ".join(str(text).split())
    return line if len(line) <= width else line[: width - 1].rstrip() + "…"
