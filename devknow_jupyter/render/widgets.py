"""Live ipywidgets views of results: hit lists with Open buttons, documents with "Show all", answers.

Building blocks, reusable by other views (e.g. an explorer):

* :class:`DocumentToggle`: an Open/Close button and the area below it; Open fetches one document through
  the actions the caller handed in (:mod:`.actions`; results hold no client) and shows it in place.
* :class:`DocumentView`: a document's header, contents list and rendered Markdown, with "Show all" when
  it was truncated.
* :class:`HitView`, :class:`HitList` (paged with "Show more"), :class:`DocumentsView`, :class:`AnswerView`.
* :func:`view_for`: the right view for any result object.

Every ``widgets.HTML`` value is built from sanitized or escaped pieces (:mod:`.static`); ipywidgets puts it
into the page with ``innerHTML`` unfiltered. Button handlers never let an exception escape into the log
console (where ipywidgets would send it): errors show as one line in the view itself.
"""

from __future__ import annotations

import html
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import ipywidgets as widgets

try:  # not exported at the top level of ipywidgets 8.1
    from ipywidgets.widgets.widget_string import HTMLStyle as _HTMLStyle
except ImportError:  # pragma: no cover - other ipywidgets versions: each HTML keeps its own style
    _HTMLStyle = None

from . import static
from .actions import ResultActions, as_actions
from .style import ROOT_CLASS, style_block

if TYPE_CHECKING:
    from ..models import Answer, Document, DocumentChunk, Documents, SearchResults
    from .settings import DisplayOptions

__all__ = [
    "AnswerView",
    "DocumentToggle",
    "DocumentView",
    "DocumentsView",
    "HitList",
    "HitView",
    "WidgetParts",
    "error_html",
]


def _options(options: DisplayOptions | None) -> DisplayOptions:
    if options is not None:
        return options
    from .settings import options as shared

    return shared


def _root(inner: str, *classes: str, style: bool = False) -> str:
    # Each HTML widget is its own DOM subtree, so each needs the .devknow root for the scoped CSS;
    # the <style> element itself is needed once per output (the top-level view adds it).
    names = " ".join((ROOT_CLASS, *classes))
    return f'{style_block() if style else ""}<div class="{names}">{inner}</div>'


class WidgetParts:
    """Layout and style models shared by the many small widgets of one view.

    Every ipywidgets widget otherwise brings its own Layout and Style models, each a comm to the frontend;
    sharing them halves what a page of hits costs (VS Code and remote kernels slow down with hundreds).
    Only parts that are never changed per widget are shared.
    """

    def __init__(self, *, button_layout: widgets.Layout | None = None) -> None:
        self.full = widgets.Layout(width="100%")
        self.html_style = _HTMLStyle() if _HTMLStyle is not None else None
        self.button = button_layout or widgets.Layout(width="auto", align_self="flex-start")
        self.button_style = widgets.ButtonStyle()

    def html(self, value: str) -> widgets.HTML:
        """A full-width HTML widget on the shared models."""
        return self.html_with(value, self.full)

    def html_with(self, value: str, layout: widgets.Layout) -> widgets.HTML:
        """An HTML widget on ``layout`` and the shared style."""
        extra = {"style": self.html_style} if self.html_style is not None else {}
        return widgets.HTML(value=value, layout=layout, **extra)


def _html(value: str) -> widgets.HTML:
    return widgets.HTML(value=value, layout=widgets.Layout(width="100%"))


def _button(description: str, *, hidden: bool = False, **kwargs: Any) -> widgets.Button:
    # A VBox stretches its children; keep buttons as wide as their label, on the left.
    layout = widgets.Layout(width="auto", align_self="flex-start", display="none" if hidden else None)
    return widgets.Button(description=description, layout=layout, **kwargs)


def error_html(exc: BaseException) -> str:
    """One escaped line describing ``exc`` (secrets masked), for showing inside a view."""
    from ..errors import DevKnowError, redact

    if isinstance(exc, DevKnowError):
        line = exc.short_message().splitlines()[0]
    else:
        line = redact(f"{type(exc).__name__}: {exc}".splitlines()[0])
    return _root(html.escape(line), "devknow-error")


def _guard(handler: Callable[[], None], report: Callable[[BaseException], None]) -> Callable[[Any], None]:
    """Wrap a click handler so that failures show in the view instead of ipywidgets' log."""

    def run(_widget: Any = None) -> None:
        try:
            handler()
        except Exception as exc:
            report(exc)

    return run


class _CheapRepr:
    """``repr()`` without ipywidgets' trait serialization (widgets end up in ``Out[]`` and logs)."""

    def __repr__(self) -> str:
        return f"<{type(self).__name__}>"


# -- documents ----------------------------------------------------------------------------------------------


class DocumentView(_CheapRepr, widgets.VBox):
    """A document: header (title, description, link), contents for long documents, rendered Markdown.

    Long documents are cut at ``options.max_chars`` with a note and a "Show all" button that renders
    the whole text in place.
    """

    def __init__(
        self,
        document: Document,
        *,
        options: DisplayOptions | None = None,
        header: bool = True,
        style: bool = True,
    ) -> None:
        super().__init__(layout=widgets.Layout(width="100%"))
        self.document = document
        self._opts = _options(options)
        self._header = header
        self._style = style
        self.html = _html("")
        self.show_all_button = _button(
            "Show all", hidden=True, tooltip=f"Render all {len(document.content):,} characters"
        )
        self.show_all_button.on_click(_guard(self.show_all, self._report))
        self.children = (self.html, self.show_all_button)
        self._render(self._opts.max_chars or None)

    @property
    def truncated(self) -> bool:
        """True while only part of the document is shown."""
        return self._truncated

    def show_all(self) -> None:
        """Render the whole document (what the "Show all" button does)."""
        self.show_all_button.description = "Rendering…"
        self.show_all_button.disabled = True
        try:
            self._render(None)
        finally:
            self.show_all_button.description = "Show all"
            self.show_all_button.disabled = False

    def _render(self, max_chars: int | None) -> None:
        body, self._truncated = static.document_body_html(
            self.document,
            max_chars=max_chars,
            toc_min_headings=self._opts.toc_min_headings,
            raw=self._opts.raw,
            static=False,
        )
        head = static.document_header_html(self.document) if self._header else ""
        self.html.value = _root(f'<div class="devknow-doc">{head}{body}</div>', "devknow-docs", style=self._style)
        self.show_all_button.layout.display = None if self._truncated else "none"

    def _report(self, exc: BaseException) -> None:
        self.children = (self.html, self.show_all_button, _html(error_html(exc)))


class DocumentToggle(_CheapRepr):
    """An **Open** button and the area below it: Open fetches the document and shows it; Close folds it.

    The document is fetched through ``actions.open(name)`` on the first click only (a client's cache serves
    other views of the same document); a failure shows as one line in the area and the button offers Open
    again. ``actions`` may be a :class:`~.actions.ResultActions`, a client, or None (the button is disabled).

    The area is made on first use (:attr:`area`), so a list of closed hits costs no widget for it. A view
    holding the toggle passes ``place``, called once with the new area to put it on screen, and may pass
    ``on_change``, called with :attr:`is_open` after every Open and Close.
    """

    def __init__(
        self,
        name: str,
        actions: ResultActions | Any | None,
        *,
        options: DisplayOptions | None = None,
        label: str = "Open",
        parts: WidgetParts | None = None,
        place: Callable[[widgets.VBox], None] | None = None,
        on_change: Callable[[bool], None] | None = None,
    ) -> None:
        self.name = name
        self.actions = as_actions(actions)
        self.label = label
        self._opts = _options(options)
        self._parts = parts
        self._place = place
        self._on_change = on_change
        self._area: widgets.VBox | None = None
        self.view: DocumentView | None = None
        self.error: BaseException | None = None
        disabled = self.actions is None
        tooltip = f"Show {name} here" if not disabled else "No client to fetch with (no actions given)"
        if parts is None:
            self.button = _button(label, tooltip=tooltip, icon="book", disabled=disabled)
        else:
            self.button = widgets.Button(
                description=label,
                tooltip=tooltip,
                icon="book",
                disabled=disabled,
                layout=parts.button,
                style=parts.button_style,
            )
        self.button.on_click(_guard(self.toggle, self._report))

    @property
    def area(self) -> widgets.VBox:
        """The box below the button that shows the document or an error line, made (and placed) on first use."""
        if self._area is None:
            self._area = widgets.VBox(layout=self._parts.full if self._parts else widgets.Layout(width="100%"))
            self._area.add_class("devknow-opened")  # a bar on the left sets the opened page apart from the hits
            if self._place is not None:
                self._place(self._area)
        return self._area

    @property
    def has_area(self) -> bool:
        """True once the area exists (after the first Open, or after :attr:`area` was asked for)."""
        return self._area is not None

    @property
    def is_open(self) -> bool:
        """True while the document (or an error line) is shown."""
        return self._area is not None and bool(self._area.children)

    def toggle(self) -> None:
        """Open when folded, fold when open (what a click does)."""
        if self.is_open:
            self.close()
        else:
            self.open()

    def open(self) -> None:
        """Fetch the document (first time only) and show it below the button."""
        if self.actions is None:
            return
        if self.view is None:
            self.button.description = "Opening…"
            self.button.disabled = True
            try:
                document = self.actions.open(self.name)
                self.view = DocumentView(document, options=self._opts, header=False, style=False)
            except Exception as exc:
                self._report(exc)
                return
            finally:
                self.button.disabled = False
        self.error = None
        self.area.children = (self.view,)
        self.button.description = "Close"
        self._changed()

    def close(self) -> None:
        """Fold the document away (it stays loaded for the next Open)."""
        if self._area is not None:
            self._area.children = ()
        self.button.description = self.label
        self._changed()

    def _changed(self) -> None:
        if self._on_change is not None:
            self._on_change(self.is_open)

    def _report(self, exc: BaseException) -> None:
        self.error = exc
        self.area.children = (_html(error_html(exc)),)
        self.button.description = self.label
        self.button.disabled = self.actions is None
        self._changed()


# -- search hits --------------------------------------------------------------------------------------------


class HitView(_CheapRepr, widgets.VBox):
    """One hit: numbered title linking to the page, the passage, and an Open button for the whole page.

    ``preview_chars`` shows only the start of the passage (hit lists pass ``options.preview_chars``); while
    the page is open below, the passage is hidden, since the page shows it in full. Three widgets per hit
    (this box, its HTML, the button); the page's area is added on the first Open.
    """

    def __init__(
        self,
        hit: DocumentChunk,
        number: int | None = None,
        *,
        actions: ResultActions | Any | None = None,
        options: DisplayOptions | None = None,
        style: bool = False,
        parts: WidgetParts | None = None,
        preview_chars: int | None = None,
    ) -> None:
        parts = parts or WidgetParts()
        super().__init__(layout=parts.full)
        opts = _options(options)
        self.hit = hit
        inner = static.hit_html(hit, number, max_chars=opts.max_chars or None, preview_chars=preview_chars)
        self.html = parts.html(_root(inner, style=style))
        self.toggle = DocumentToggle(
            hit.parent, actions, options=opts, parts=parts, place=self._place_area, on_change=self._opened
        )
        self.children = (self.html, self.toggle.button)
        self.add_class("devknow-hit-widget")

    def _place_area(self, area: widgets.VBox) -> None:
        self.children = (*self.children, area)

    def _opened(self, is_open: bool) -> None:
        # A class rather than a layout change: the HTML widget shares its Layout with every other hit.
        if is_open and self.toggle.view is not None:
            self.add_class("devknow-hit-open")
        else:
            self.remove_class("devknow-hit-open")


class HitList(_CheapRepr, widgets.VBox):
    """Search results: a header line (query, count, backend, time, cache), notices, and the hits,
    ``options.page_size`` at a time with a "Show more" button."""

    def __init__(
        self,
        results: SearchResults,
        *,
        actions: ResultActions | Any | None = None,
        options: DisplayOptions | None = None,
    ) -> None:
        super().__init__(layout=widgets.Layout(width="100%"))
        self.results = results
        self.actions = as_actions(actions)
        self._opts = _options(options)
        self.header = _html(_root(static.hits_header_html(results), "devknow-hits", style=True))
        self.items = widgets.VBox(layout=widgets.Layout(width="100%"))
        self.more_button = _button("Show more")
        self.more_button.on_click(_guard(self.show_more, self._report))
        self.hit_views: list[HitView] = []
        self._parts = WidgetParts()
        self.children = (self.header, self.items, self.more_button)
        self.show_more()

    @property
    def remaining(self) -> int:
        """How many hits are not shown yet."""
        return len(self.results) - len(self.hit_views)

    def show_more(self) -> None:
        """Add the next page of hits (what "Show more" does)."""
        start = len(self.hit_views)
        page = [
            HitView(
                hit,
                number,
                actions=self.actions,
                options=self._opts,
                parts=self._parts,
                preview_chars=self._opts.preview_chars or None,
            )
            for number, hit in enumerate(self.results[start : start + self._opts.page_size], start + 1)
        ]
        self.hit_views.extend(page)
        self.items.children = (*self.items.children, *page)
        left = self.remaining
        self.more_button.description = f"Show more ({left} left)"
        self.more_button.layout.display = None if left else "none"

    def _report(self, exc: BaseException) -> None:
        self.items.children = (*self.items.children, _html(error_html(exc)))


# -- documents list and answers ----------------------------------------------------------------------------


class DocumentsView(_CheapRepr, widgets.VBox):
    """Several documents, each a :class:`DocumentView`, ``options.page_size`` at a time."""

    def __init__(self, documents: Documents | list[Document], *, options: DisplayOptions | None = None) -> None:
        super().__init__(layout=widgets.Layout(width="100%"))
        self.documents = list(documents)
        self._opts = _options(options)
        info = getattr(documents, "info", None)
        head = f"<b>{len(self.documents)} document{'' if len(self.documents) == 1 else 's'}</b>"
        extra = static.info_summary(info)
        if extra:
            head += " · " + " · ".join(html.escape(part) for part in extra)
        header = f'<div class="devknow-header">{head}</div>{static.notices_html(info)}'
        self.header = _html(_root(header, style=True))
        self.items = widgets.VBox(layout=widgets.Layout(width="100%"))
        self.more_button = _button("Show more")
        self.more_button.on_click(_guard(self.show_more, self._report))
        self.document_views: list[DocumentView] = []
        self.children = (self.header, self.items, self.more_button)
        self.show_more()

    def show_more(self) -> None:
        """Add the next page of documents."""
        start = len(self.document_views)
        page = [
            DocumentView(doc, options=self._opts, style=False)
            for doc in self.documents[start : start + self._opts.page_size]
        ]
        self.document_views.extend(page)
        self.items.children = (*self.items.children, *page)
        left = len(self.documents) - len(self.document_views)
        self.more_button.description = f"Show more ({left} left)"
        self.more_button.layout.display = None if left else "none"

    def _report(self, exc: BaseException) -> None:
        self.items.children = (*self.items.children, _html(error_html(exc)))


class AnswerView(_CheapRepr, widgets.VBox):
    """An answer rendered from Markdown ("extractive" label when built offline), then numbered references,
    each with its link and an Open button like a hit's."""

    def __init__(
        self,
        answer: Answer,
        *,
        actions: ResultActions | Any | None = None,
        options: DisplayOptions | None = None,
    ) -> None:
        super().__init__(layout=widgets.Layout(width="100%"))
        opts = _options(options)
        self.answer = answer
        self.actions = as_actions(actions)
        inner = static.answer_header_html(answer) + static.answer_text_html(answer, max_chars=opts.max_chars or None)
        if answer.references:
            inner += '<div class="devknow-refs">References</div>'
        self.html = _html(_root(inner, "devknow-answer", style=True))
        self.toggles: list[DocumentToggle] = []
        rows: list[widgets.Widget] = [self.html]
        # Button first, so it lines up for every reference whatever the length of the link.
        parts = WidgetParts(button_layout=widgets.Layout(width="auto", flex="0 0 auto", margin="0 0.8em 0 0"))
        line_layout = widgets.Layout(flex="1 1 auto")
        row_layout = widgets.Layout(align_items="center", width="100%")
        for number, name in enumerate(answer.references, 1):
            line = widgets.HTML(_root(static.reference_html(name, number)), layout=line_layout, style=parts.html_style)
            head = widgets.HBox(layout=row_layout)
            # The reference's page area goes right below its row, made on the first Open.
            toggle = DocumentToggle(name, self.actions, options=opts, parts=parts, place=self._placer(head))
            head.children = (toggle.button, line)
            self.toggles.append(toggle)
            rows.append(head)
        self.children = tuple(rows)

    def _placer(self, head: widgets.Widget) -> Callable[[widgets.VBox], None]:
        def place(area: widgets.VBox) -> None:
            rows = list(self.children)
            rows.insert(rows.index(head) + 1, area)
            self.children = tuple(rows)

        return place
