"""The explorer's widgets: building the app and showing a result in it (no requests, no history).

::

    ┌ ◀ ▶ [site filter] [search box ……………………………………] [Search] ┐
    │ status line: spinner while a request runs, notices, errors (one line) │
    ├ hits (one button per hit) ┬ title · link · contents · rendered page ─┤
    │                           │ (or the answer, with its references)     │
    └ [ask box ……………………………………………………………………………………………………] [Ask] ┘

In a narrow output the site filter shrinks first, then the toolbar wraps onto a second line, so no
control is cut or overlaps another (checked at a 900 px wide window). Heading ids of the pages shown
get a prefix of this view's own, so the contents links of one explorer never jump into another output
showing the same page.
"""

from __future__ import annotations

import html
import re
import secrets
import threading
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import urlsplit

from ..errors import DevKnowError, redact
from ..models import Answer, Document, SearchResults, name_to_uri

#: At most this many hits get a button (a bounded number of widgets keeps the frontend quick).
MAX_HITS = 20

_CSS = """
.devknow-explorer { width: 100%; box-sizing: border-box; }
.devknow-explorer .dkx-toolbar { flex-wrap: wrap; gap: 4px 0; }
.devknow-explorer .dkx-toolbar > .widget-button { flex-shrink: 0; }
.devknow-explorer .dkx-status { white-space: nowrap; overflow: hidden; text-overflow: ellipsis;
  min-height: 1.6em; color: var(--jp-content-font-color2, inherit); font-size: 0.92em; }
.devknow-explorer .dkx-error { color: var(--jp-error-color1, #d0393e); }
.devknow-explorer .dkx-warn { color: var(--jp-warn-color1, #b07a10); }
.devknow-explorer .dkx-hint { color: var(--jp-content-font-color2, inherit); }
.devknow-explorer .dkx-spin { display: inline-block; width: 0.8em; height: 0.8em; margin-right: 0.45em;
  vertical-align: -0.1em; border: 2px solid var(--jp-border-color2, rgba(128, 128, 128, 0.35));
  border-top-color: var(--jp-brand-color1, #2f8fc4); border-radius: 50%; animation: dkx-spin 0.8s linear infinite; }
@keyframes dkx-spin { to { transform: rotate(360deg); } }
.devknow-explorer .dkx-hits .widget-toggle-buttons, .devknow-explorer .dkx-refs .widget-toggle-buttons {
  width: 100%; }
.devknow-explorer .dkx-hits .widget-toggle-buttons > div, .devknow-explorer .dkx-refs .widget-toggle-buttons > div {
  display: flex; flex-direction: column; width: 100%; }
.devknow-explorer .dkx-hits button.widget-toggle-button, .devknow-explorer .dkx-refs button.widget-toggle-button {
  width: 100% !important; height: auto; min-height: var(--jp-widgets-inline-height, 28px); margin: 0 0 3px 0;
  padding: 4px 8px; white-space: normal; text-align: left; line-height: 1.3; overflow-wrap: break-word; }
.devknow-explorer .dkx-hits button.widget-toggle-button:focus-visible,
.devknow-explorer .dkx-refs button.widget-toggle-button:focus-visible {
  outline: 2px solid var(--jp-brand-color1, #2f8fc4); outline-offset: -2px; }
/* ipyevents marks the list that takes the keys (pointer over it); ring it so the user sees where keys go. */
.devknow-explorer .dkx-hits.ipyevents-watched, .devknow-explorer .dkx-refs.ipyevents-watched {
  outline: 1px dashed var(--jp-brand-color1, #2f8fc4); outline-offset: 2px; }
.devknow-explorer .dkx-page { max-height: 70vh; overflow: auto; padding-right: 0.5em; }
.devknow-explorer .widget-html-content { min-width: 0; }
.devknow-explorer .dkx-empty { color: var(--jp-content-font-color2, inherit); font-style: italic; }
/* The static twin (the output after the widget) is for saved notebooks: hidden while the widget is live. */
.jp-OutputArea-child:has(.devknow-explorer) ~ .jp-OutputArea-child:has(.dkx-twin) { display: none; }
""".strip()

# The renderer's heading ids and the in-page links to them (id="dk-…", href="#dk-…").
# The renderer numbers each output's ids (dk-<page>-<n>-slug); the contents and the page are two renderings
# here, so the view's own prefix replaces both numbers.
_HEADING_IDS = re.compile(r'\b(id="|href="#)dk-(?:[0-9a-f]{6}-[0-9a-f]+-)?')


class ExplorerView:
    """The explorer's widgets (public attributes, see :class:`~devknow_jupyter.explorer.Explorer`) and
    the ways to show a result in them. Whatever it shows, it shows now, on the calling thread."""

    def __init__(self, source: str | None = None) -> None:
        import ipywidgets as w

        self.hits_result: SearchResults | None = None  # the hits in the list
        self.refs: list[str] = []  # the references listed (document names)
        self.domains: list[str] = []  # the sites seen, offered by the filter box
        # Set (per thread) while the app itself changes a widget, so observers know it was not the user.
        self._quiet = threading.local()
        self._id_prefix = f"dk-x{secrets.token_hex(3)}-"
        self._build_toolbar(w, source)
        self._build_panes(w)
        style = w.HTML(f"<style>{_CSS}</style>{_style_block()}", layout=w.Layout(height="0px", margin="0"))
        ask = w.HBox([self.ask_box, self.ask_button], layout=w.Layout(width="100%", align_items="center"))
        self.widget = w.VBox([style, self.toolbar, self.status, self.body, ask], layout=w.Layout(width="100%"))
        self.widget.add_class("devknow-explorer")
        self._name_parts()

    def _build_toolbar(self, w: Any, source: str | None) -> None:
        self.back_button = w.Button(icon="arrow-left", tooltip="Back", layout=w.Layout(width="36px"))
        self.forward_button = w.Button(icon="arrow-right", tooltip="Forward", layout=w.Layout(width="36px"))
        self.source_box = w.Combobox(
            value=source or "",
            placeholder="all sites",
            options=[],
            ensure_option=False,
            tooltip="Only hits from this site, e.g. firebase.google.com (Enter searches)",
            layout=w.Layout(width="auto", flex="0 1 160px", min_width="7em"),
        )
        # continuous_update keeps the kernel's copy current, so Enter ("submit") searches what was typed.
        self.search_box = w.Text(
            placeholder="Search the docs",
            continuous_update=True,
            layout=w.Layout(flex="1 1 8em", width="auto", min_width="8em"),
        )
        # Not a Tab stop (Enter in the box searches): Tab goes from the search box straight to the hits.
        self.search_button = w.Button(
            description="Search", icon="search", tabbable=False, layout=w.Layout(width="auto")
        )
        # The filter sits before the search box so that Tab goes search box → Search → first hit.
        self.toolbar = w.HBox(
            [self.back_button, self.forward_button, self.source_box, self.search_box, self.search_button],
            layout=w.Layout(width="100%", align_items="center", flex_flow="row wrap"),
        )
        self.toolbar.add_class("dkx-toolbar")

    def _build_panes(self, w: Any) -> None:
        self.status = w.HTML(layout=w.Layout(width="100%", overflow="hidden"))
        self.hits_header = w.HTML()
        self.hits = w.ToggleButtons(
            options=[], index=None, style={"button_width": "100%"}, layout=w.Layout(width="100%")
        )
        self.title, self.toc = w.HTML(), w.HTML()
        self.page = w.HTML(layout=w.Layout(width="100%"))
        self.more_button = w.Button(
            description="Show the whole page", icon="expand", layout=w.Layout(width="auto", display="none")
        )
        self.references = w.ToggleButtons(
            options=[], index=None, style={"button_width": "100%"}, layout=w.Layout(width="100%", display="none")
        )
        self.ask_box = w.Text(
            placeholder="Ask a question (empty: the search above), press Enter",
            continuous_update=True,
            layout=w.Layout(flex="1 1 auto", width="auto", min_width="8em"),
        )
        self.ask_button = w.Button(description="Ask", icon="comment", tabbable=False, layout=w.Layout(width="auto"))
        self.hit_panel = w.VBox(
            [self.hits_header, self.hits],
            layout=w.Layout(flex="0 1 32%", min_width="220px", max_width="100%", padding="0 10px 0 0"),
        )
        self.hit_panel.add_class("dkx-hits")
        self.reference_panel = w.VBox([self.references])
        self.reference_panel.add_class("dkx-refs")
        right = w.VBox(
            [self.title, self.toc, self.page, self.more_button, self.reference_panel],
            layout=w.Layout(flex="1 1 420px", min_width="0", max_width="100%"),
        )
        right.add_class("dkx-doc")
        self.body = w.HBox(
            [self.hit_panel, right], layout=w.Layout(width="100%", flex_flow="row wrap", align_items="flex-start")
        )

    def _name_parts(self) -> None:
        # Stable class names for styling, and for tests that find the parts in a browser.
        for part, name in (
            (self.status, "dkx-status-box"),
            (self.back_button, "dkx-back"),
            (self.forward_button, "dkx-forward"),
            (self.source_box, "dkx-source"),
            (self.search_box, "dkx-search"),
            (self.search_button, "dkx-search-button"),
            (self.hits, "dkx-hit-list"),
            (self.title, "dkx-title"),
            (self.toc, "dkx-toc"),
            (self.page, "dkx-page-box"),
            (self.references, "dkx-reference-list"),
            (self.ask_box, "dkx-ask"),
            (self.ask_button, "dkx-ask-button"),
        ):
            part.add_class(name)

    # -- showing results ---------------------------------------------------------------------------------

    def show_hits(self, results: SearchResults) -> None:
        """Put ``results`` in the hit list (the first :data:`MAX_HITS` as buttons), none highlighted."""
        shown = results[:MAX_HITS]
        labels = [
            (f"{number}. {one_line(hit.title, 90)} — {host(hit.uri)}", number - 1)
            for number, hit in enumerate(shown, 1)
        ]
        for hit in shown:
            site = host(hit.uri).lower()
            if site and site not in self.domains:
                self.domains.append(site)
        with self.quietly():
            self.hits.index = None
            self.hits.options = labels
            self.hits.tooltips = [f"{hit.title}\n{hit.uri}" for hit in shown]
            self.hits.index = None
            self.source_box.options = sorted(self.domains)
        # ipywidgets' ToggleButtons view rebuilds its buttons only for a non-empty list: with 0 hits the
        # old buttons would stay in the browser under "0 hits". Hide the list then (a new list shows it).
        self.hits.layout.display = "" if labels else "none"
        self.hits_result = results
        more = f'<div class="devknow-meta">The first {MAX_HITS} of {len(results)} hits have buttons.</div>'
        self.hits_header.value = root(_static().hits_header_html(results) + (more if len(results) > MAX_HITS else ""))

    def highlight_hit(self, name: str | None) -> None:
        """Highlight the hit of document ``name`` (keeping the one picked among several of one page)."""
        index = None
        if name and self.hits_result is not None:
            hits = self.hits_result[:MAX_HITS]
            selected = self.hits.index
            if selected is not None and selected < len(hits) and hits[selected].parent == name:
                index = selected
            else:
                index = next((number for number, hit in enumerate(hits) if hit.parent == name), None)
        self.set_quietly(self.hits, index, trait="index")

    def show_welcome(self) -> None:
        """What a new explorer with no history shows."""
        self.hits_header.value = root('<div class="devknow-header">No search yet.</div>')
        self.title.value = ""
        self.toc.value = ""
        self.page.value = root(
            "Type a search above and press Enter. With the pointer over the hits, ↑ and ↓ move and Enter opens;"
            " Tab also reaches them. Ask a question below.",
            "dkx-empty",
        )
        self.hide_references()
        self.more_button.layout.display = "none"

    def show_passages(self, results: SearchResults) -> None:
        """The right pane for a search: each hit's passage."""
        self.highlight_hit(None)
        self.title.value = ""
        self.toc.value = ""
        passages = "".join(
            f'<div class="devknow-hit">{_static().hit_html(hit, i, max_chars=page_chars())}</div>'
            for i, hit in enumerate(results[:MAX_HITS], 1)
        )
        self.page.value = root(passages, "dkx-page")
        self.hide_references()
        self.more_button.layout.display = "none"

    def show_document(self, document: Document, *, whole: bool = False) -> None:
        """The right pane for a page: title, contents, the page (cut at ``max_chars`` unless ``whole``)."""
        from ..render.markdown import render_markdown, toc_html

        views = _static()
        limit = None if whole else page_chars()
        self.highlight_hit(document.name)
        self.title.value = root(views.document_header_html(document))
        # The contents sit above the scrolling page so they stay in reach; links are #heading-id anchors.
        toc = render_markdown(document.content, base_url=document.uri, max_chars=limit).toc
        self.toc.value = self._own_ids(root(toc_html(toc).replace("<details", "<details open", 1))) if toc else ""
        body, truncated = views.document_body_html(document, max_chars=limit, toc_min_headings=0, static=False)
        self.page.value = self._own_ids(root(body, "dkx-page"))
        self.more_button.layout.display = "" if truncated else "none"
        self.hide_references()

    def show_answer(self, answer: Answer) -> None:
        """The right pane for an answer: its text, and its references as a list to open."""
        views = _static()
        self.highlight_hit(None)
        self.title.value = root(views.answer_header_html(answer))
        self.toc.value = ""
        refs = list(dict.fromkeys(answer.references))
        heading = '<div class="devknow-refs">References (Tab to one, Enter opens it)</div>' if refs else ""
        self.page.value = root(views.answer_text_html(answer, max_chars=page_chars()) + heading, "dkx-page")
        self.more_button.layout.display = "none"
        self.refs = refs
        with self.quietly():
            self.references.index = None
            self.references.options = [(f"{i}. {name_to_uri(ref)}", i - 1) for i, ref in enumerate(refs, 1)]
            self.references.tooltips = [f"{name_to_uri(ref)}\n{ref}" for ref in refs]
            self.references.index = None
        self.references.layout.display = "" if refs else "none"

    def hide_references(self) -> None:
        """Empty and hide the references list."""
        self.refs = []
        with self.quietly():
            self.references.index = None
            self.references.options = []
        self.references.layout.display = "none"

    def set_back_forward(self, can_go_back: bool, can_go_forward: bool) -> None:
        """Enable the Back and Forward buttons as the history allows."""
        self.back_button.disabled = not can_go_back
        self.forward_button.disabled = not can_go_forward

    def _own_ids(self, markup: str) -> str:
        # The renderer's ids are per document: the same page in two outputs would share them, and a
        # contents link would jump to the first output. This view's prefix makes them its own.
        return _HEADING_IDS.sub(lambda match: match.group(1) + self._id_prefix, markup)

    # -- status line -------------------------------------------------------------------------------------

    def say(self, text: str, kind: str = "ok") -> None:
        """Put one line in the status bar: ``busy`` (with spinner), ``ok``, ``hint``, ``warn`` or ``error``."""
        line = html.escape(one_line(text, 400))
        if kind == "busy":
            content = f'<span class="dkx-spin" role="progressbar" aria-label="working"></span>{line}'
        elif kind in ("error", "warn", "hint"):
            content = f'<span class="dkx-{kind}">{line}</span>'
        else:
            content = line
        self.status.value = f'<div class="dkx-status" title="{html.escape(text, quote=True)}">{content}</div>'

    def say_error(self, exc: BaseException) -> None:
        """One status line for ``exc``: an expected error with its hint, or "Unexpected error: …" for a bug."""
        if isinstance(exc, DevKnowError):
            message, _, hint = exc.short_message().partition("\n")
            self.status.value = (
                f'<div class="dkx-status" title="{html.escape(exc.short_message(), quote=True)}">'
                f'<span class="dkx-error">{html.escape(message)}</span>'
                + (f' <span class="dkx-hint">— {html.escape(hint.strip())}</span>' if hint.strip() else "")
                + "</div>"
            )
        elif isinstance(exc, KeyboardInterrupt):
            self.say("Interrupted.", "warn")
        else:
            # A bug, not an expected error: say so in one line (the explorer keeps it as `last_error`).
            detail = "".join(traceback.format_exception_only(type(exc), exc)).strip()
            self.say(redact(f"Unexpected error: {detail}"), "error")

    # -- setting widgets without triggering the user's callbacks -----------------------------------------

    def set_quietly(self, widget: Any, value: Any, *, trait: str = "value") -> None:
        """Set ``widget.<trait>`` as the app, not the user (observers see :meth:`is_quiet`)."""
        with self.quietly():
            setattr(widget, trait, value)

    @contextmanager
    def quietly(self) -> Iterator[None]:
        """Within this block, widget changes on this thread are the app's own."""
        depth = getattr(self._quiet, "depth", 0)
        self._quiet.depth = depth + 1
        try:
            yield
        finally:
            self._quiet.depth = depth

    def is_quiet(self) -> bool:
        """True inside :meth:`quietly` on this thread."""
        return getattr(self._quiet, "depth", 0) > 0

    def close(self) -> None:
        """Close every widget of the app."""
        _close_tree(self.widget)


def _style_block() -> str:
    from ..render.style import style_block

    return style_block()


def _static() -> Any:
    """The shared static renderer (:mod:`devknow_jupyter.render.static`), imported on first use."""
    from ..render import static as views

    return views


def root(inner: str, *classes: str) -> str:
    """``inner`` in a ``.devknow`` root: each HTML widget is its own DOM subtree and needs it for the CSS."""
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


def _close_tree(widget: Any) -> None:
    for child in getattr(widget, "children", ()):
        _close_tree(child)
    widget.close()
