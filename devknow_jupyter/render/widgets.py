"""Live views of results: each output is ONE anywidget model with a small hand-written ES module.

* :class:`HitList` (``%devsearch``): the hits, ``options.page_size`` at a time behind "More" (which fetches
  the service's next page once the hits in hand are all shown); ↑/↓ move through them, Enter or Open shows
  the hit's page in place of the list, Back returns to the list.
* :class:`HitView`: one hit alone (``display(_devsearch[0])``), with its Open.
* :class:`DocumentView` (``%devget``): a page, with "Show all" when it was cut at ``options.max_chars``.
* :class:`DocumentsView`: several pages, ``options.page_size`` at a time.
* :class:`AnswerView` (``%%devask``): the answer, then its references, each with Open.

Data flows as synced traits: plain data and HTML that Python rendered and sanitized (:mod:`.static`);
the browser code (``esm/results.js``) never renders Markdown, it places that HTML and handles keys and
clicks. Fetching stays in Python: the page invokes an anywidget command (``open_hit`` with ``{"name": …}``,
``more_hits``, ``whole_page`` with ``{"name": …}``), the view acts through the :class:`~.actions.ResultActions`
its caller handed in and answers by setting traits; a failure shows as one short line in the view.

One model per output instead of tens of core widgets: every model is a comm to the frontend, and VS Code
and remote kernels slow down with hundreds. The Layout that every DOM widget carries is one model shared by
all views (nothing ever changes it).
"""

from __future__ import annotations

import html
from importlib import resources
from typing import TYPE_CHECKING, Any

import anywidget
import ipywidgets
import traitlets
from anywidget.experimental import command

from . import static
from .actions import ResultActions, as_actions
from .labels import tells_for
from .payload import hit_items, page_item
from .style import CSS

if TYPE_CHECKING:
    from ..models import Answer, Document, DocumentChunk, Documents, SearchResults
    from .settings import DisplayOptions

__all__ = [
    "AnswerView", "DocumentView", "DocumentsView", "HitList", "HitView", "ResultWidget", "StyleSheet", "error_line",
]


def _asset(name: str) -> str:
    # Read here, not handed to anywidget as a path: a path would make anywidget watch the file in a thread.
    return resources.files(__package__).joinpath("esm", name).read_text(encoding="utf-8")


def _options(options: DisplayOptions | None) -> DisplayOptions:
    if options is not None:
        return options
    from .settings import options as shared

    return shared


def error_line(exc: BaseException) -> str:
    """One line of plain text describing ``exc`` (secrets masked), for showing inside a view."""
    from ..errors import DevKnowError, redact

    if isinstance(exc, DevKnowError):
        return exc.short_message().splitlines()[0]
    return redact(f"{type(exc).__name__}: {exc}".splitlines()[0] if str(exc) else type(exc).__name__)


_SHARED_LAYOUT: ipywidgets.Layout | None = None
_SHARED_STYLE: StyleSheet | None = None


def _shared_layout() -> ipywidgets.Layout:
    """The one Layout model of every view (made again if ``Widget.close_all()`` closed it)."""
    global _SHARED_LAYOUT
    if _SHARED_LAYOUT is None or getattr(_SHARED_LAYOUT, "comm", None) is None:
        _SHARED_LAYOUT = ipywidgets.Layout(width="100%")
    return _SHARED_LAYOUT


class StyleSheet(anywidget.AnyWidget):
    """The views' stylesheet (:data:`~.style.CSS` and ``esm/results.css``) in one model per kernel, shown nowhere.

    anywidget puts a model's ``_css`` into the page when the page creates the model (also from a saved
    notebook's widget state), once per model class: so the stylesheet reaches the page once, however many
    result views the notebook holds, and each view carries only its content.
    """

    _esm = "export default {};"
    _css = CSS + "\n" + _asset("results.css")


def _shared_style() -> StyleSheet:
    """The one :class:`StyleSheet` model (made again if ``Widget.close_all()`` closed it)."""
    global _SHARED_STYLE
    if _SHARED_STYLE is None or getattr(_SHARED_STYLE, "comm", None) is None:
        _SHARED_STYLE = StyleSheet(layout=_shared_layout())
    return _SHARED_STYLE


class ResultWidget(anywidget.AnyWidget):
    """The one model behind every view: what the page shows, as synced traits, and the requests it answers.

    Traits: ``kind`` (hits, hit, document, documents, answer); ``header`` (sanitized HTML; the stylesheet is
    the one :class:`StyleSheet` model's);
    ``items`` (the hits, references or documents: ``{"name", "html", "truncated"}``); ``page_size``;
    ``has_next`` (the service has another page of hits); ``can_open`` (actions were given); ``page`` (the
    page opened in place: ``{"name", "html", "truncated"}``, or ``{}``); ``error`` (one line, or "").
    The page's requests are anywidget commands (:meth:`open_hit`, :meth:`more_hits`, :meth:`whole_page`),
    which the page awaits with ``invoke``.
    """

    _esm = _asset("keys.js") + _asset("results.js")  # keys.js: the keys every view keeps (the explorer's too)

    kind = traitlets.Unicode("").tag(sync=True)
    header = traitlets.Unicode("").tag(sync=True)
    items = traitlets.List(traitlets.Dict()).tag(sync=True)
    page_size = traitlets.Int(10).tag(sync=True)
    has_next = traitlets.Bool(False).tag(sync=True)
    can_open = traitlets.Bool(False).tag(sync=True)
    page = traitlets.Dict().tag(sync=True)
    error = traitlets.Unicode("").tag(sync=True)

    def __init__(
        self, *, actions: ResultActions | Any | None = None, options: DisplayOptions | None = None, **traits: Any
    ) -> None:
        self.actions = as_actions(actions)
        self._opts = _options(options)
        self._documents: dict[str, Document] = {}  # opened pages, kept for "Show all" and their sections
        self._sections: dict[str, int] = {}  # a long page's output number, for the sections it sends later
        traits.setdefault("page_size", max(1, self._opts.page_size))
        _shared_style()  # before this view's model, so the page has the stylesheet when the view renders
        super().__init__(layout=_shared_layout(), can_open=self.actions is not None, **traits)

    def __repr__(self) -> str:
        # ipywidgets' repr serializes every trait (these hold whole pages); results end up in Out[] and logs.
        return f"<{type(self).__name__}>"

    # -- requests from the page (anywidget commands: the page awaits ``invoke(name, msg)``) ------------------

    def _answer(self, act: Any) -> tuple[dict[str, Any], list[bytes]]:
        """Run ``act()`` for the page and answer it; a failure is one line in the view, never a traceback.

        The changed traits go to the page in one message (``hold_sync``) before the answer, so once the
        page's ``invoke`` resolves it draws once, from the new state.
        """
        with self.hold_sync():
            try:
                act()
            except Exception as exc:  # never into ipywidgets' log console: one line in the view
                self.error = error_line(exc)
        return {"error": self.error}, []

    @command
    def open_hit(self, msg: Any, _buffers: Any) -> tuple[dict[str, Any], list[bytes]]:
        """The page's Open (or Enter) on ``{"name"}``: :meth:`open_page`."""
        name = str(msg.get("name") or "") if isinstance(msg, dict) else ""
        return self._answer(lambda: self.open_page(name) if name else None)

    @command
    def more_hits(self, _msg: Any, _buffers: Any) -> tuple[dict[str, Any], list[bytes]]:
        """The page's "More" once every item in hand is shown: :meth:`more`."""
        return self._answer(self.more)

    @command
    def whole_page(self, msg: Any, _buffers: Any) -> tuple[dict[str, Any], list[bytes]]:
        """The page's "Show all" on ``{"name"}``: :meth:`show_all`."""
        name = str(msg.get("name") or "") if isinstance(msg, dict) else ""
        return self._answer(lambda: self.show_all(name) if name else None)

    @command
    def page_section(self, msg: Any, _buffers: Any) -> tuple[dict[str, Any], list[bytes]]:
        """The page asks for one pending section of a long page as it nears the view (``{"name", "index"}``):
        the answer is ``{"section", "name", "html"}``, or ``{}`` when there is no such section."""
        from .sections import outline, section_html

        name = str(msg.get("name") or "") if isinstance(msg, dict) else ""
        index = msg.get("index") if isinstance(msg, dict) else None
        document, number = self._documents.get(name), self._sections.get(name)
        if document is None or number is None or not isinstance(index, int) or isinstance(index, bool):
            return {}, []
        page = outline(document.content, document.uri)
        if not 0 <= index < len(page.sections):
            return {}, []
        try:
            fragment = section_html(page, index, number)
        except Exception as exc:  # one line in the view, not a traceback in the log console
            fragment = f'<div class="devknow-error">{html.escape(error_line(exc))}</div>'
        return {"section": index, "name": name, "html": fragment}, []

    def page_item(self, document: Document) -> dict[str, Any]:
        """``document`` as the view shows it; a long page comes in sections, filled as they are asked for."""
        if self._opts.raw or len(document.content) <= static.FIRST_CHARS:
            return _page_item(document, self._opts, self._opts.max_chars or None)
        inner, parts = static.sectioned_page_html(document, toc_min_headings=self._opts.toc_min_headings)
        if parts is not None:
            self._sections[document.name] = parts.number
        pending = len(parts.pending) if parts else 0
        return {"name": document.name, "html": inner, "truncated": False, "sections": pending}

    def open_page(self, name: str) -> None:
        """Fetch the page ``name`` through the actions and show it in place (what Open and Enter do)."""
        if self.actions is None:
            self.error = "No client to fetch with (no actions given)."
            return
        document = self._documents.get(name) or self.actions.open(name)
        self._documents[name] = document
        self.page = self.page_item(document)
        self.error = ""

    def more(self) -> None:
        """The page asks for more once every item in hand is shown: only a hit list has a next page to fetch."""

    def show_all(self, name: str) -> None:
        """Render the whole of page ``name`` (what "Show all" does)."""
        document = self._documents.get(name)
        if document is not None and self.page.get("name") == name:
            self.page = _page_item(document, self._opts, None)
            self.error = ""

def _page_item(document: Document, opts: DisplayOptions, max_chars: int | None) -> dict[str, Any]:
    """A page as the view shows it (:func:`~.payload.page_item`)."""
    return page_item(document, max_chars=max_chars, toc_min_headings=opts.toc_min_headings, raw=opts.raw)


def _hit_limits(opts: DisplayOptions) -> dict[str, int | None]:
    """How much of each hit a list shows (the static twin's settings too: its items are reused)."""
    return {"max_chars": opts.max_chars or None, "preview_chars": opts.preview_chars or None}


def _hit_item(hit: DocumentChunk, opts: DisplayOptions) -> dict[str, Any]:
    """One hit alone, its whole passage (no preview, no number)."""
    inner = static.hit_html(hit, None, max_chars=opts.max_chars or None)
    return {"name": hit.parent, "html": inner, "truncated": False, "tell": ""}


class HitList(ResultWidget):
    """Search results: the header line (query, count, backend, time, cache), notices, and the hits.

    ``twin`` (synced) is the static copy of every hit fetched so far (``text/html``, ``text/markdown``,
    ``text/plain``) once "More" has fetched a next page, else ``{}``: the JupyterLab extension writes it into
    the output, so a saved notebook shows what More had shown, not only the first page.
    """

    twin = traitlets.Dict().tag(sync=True)

    def __init__(
        self,
        results: SearchResults,
        *,
        actions: ResultActions | Any | None = None,
        options: DisplayOptions | None = None,
    ) -> None:
        self.results = results  # the last page fetched: where "More" goes on from
        self.first = results  # the first page: its query, header and notices head the static copy
        self._hits = list(results)  # every hit listed, for telling look-alikes apart across pages
        opts = _options(options)
        # The same items as the static twin's (rendered once for both when the twin came first).
        items = hit_items(results, **_hit_limits(opts))
        super().__init__(
            actions=actions,
            options=opts,
            kind="hits",
            header=static.hits_header_html(results),
            items=items,
            has_next=results.has_next_page,
        )

    def more(self) -> None:
        """Fetch the service's next page of hits through the actions and add it to the list."""
        if self.actions is None or not self.results.has_next_page:
            return
        page = self.actions.next_page(self.results)
        self._hits += list(page)
        tells = tells_for(self._hits)
        limits = _hit_limits(self._opts)
        # A hit listed before gets its HTML again only when the new page gave its title a look-alike.
        items = [
            item if item.get("tell") == tell else hit_items([hit], **limits, start=number, tells=[tell])[0]
            for (number, hit), item, tell in zip(enumerate(self._hits, 1), self.items, tells, strict=False)
        ]
        start = len(items)
        items += hit_items(page, **limits, start=start + 1, tells=tells[start:])
        self.results = page
        self.items = items
        self.has_next = page.has_next_page
        self.twin = self._static_copy()
        self.error = ""

    def _static_copy(self) -> dict[str, str]:
        """The static views of every hit fetched so far, under the first page's query and notices."""
        from ..models import SearchResults

        shown = SearchResults(self.first.query, self._hits, info=self.first.info)
        limits = _hit_limits(self._opts)
        return {"text/html": static.hits_html(shown, **limits), "text/markdown": static.hits_markdown(shown, **limits),
                "text/plain": static.hits_plain(shown)}


class HitView(ResultWidget):
    """One hit alone: its whole passage and an Open for its page."""

    def __init__(
        self, hit: DocumentChunk, *, actions: ResultActions | Any | None = None, options: DisplayOptions | None = None
    ) -> None:
        self.hit = hit
        opts = _options(options)
        super().__init__(actions=actions, options=opts, kind="hit",
                         items=[_hit_item(hit, opts)])


class DocumentView(ResultWidget):
    """A page: header (title, description, link), contents for long pages, the rendered Markdown; a page cut
    at ``options.max_chars`` says so and offers "Show all"."""

    def __init__(self, document: Document, *, options: DisplayOptions | None = None) -> None:
        self.document = document
        opts = _options(options)
        super().__init__(options=opts, kind="document")
        self._documents[document.name] = document
        self.page = self.page_item(document)

    @property
    def truncated(self) -> bool:
        """True while only part of the page is shown."""
        return bool(self.page.get("truncated"))


class DocumentsView(ResultWidget):
    """Several pages, one after the other, ``options.page_size`` at a time; each cut page has "Show all"."""

    def __init__(self, documents: Documents | list[Document], *, options: DisplayOptions | None = None) -> None:
        self.documents = list(documents)
        opts = _options(options)
        info = getattr(documents, "info", None)
        count = len(self.documents)
        head = f"<b>{count} document{'' if count == 1 else 's'}</b>"
        extra = static.info_summary(info)
        if extra:
            head += " · " + " · ".join(html.escape(part) for part in extra)
        header = f'<div class="devknow-header">{head}</div>{static.notices_html(info)}'
        super().__init__(options=opts, kind="documents", header=header)
        self._documents = {doc.name: doc for doc in self.documents}
        self.items = [self.page_item(doc) for doc in self.documents]

    def show_all(self, name: str) -> None:
        """Render the whole of page ``name`` in the list."""
        document = self._documents.get(name)
        if document is not None:
            whole = _page_item(document, self._opts, None)
            self.items = [whole if item["name"] == name else item for item in self.items]
            self.error = ""


class AnswerView(ResultWidget):
    """An answer rendered from Markdown (cited segments marked; "extractive" label when built offline),
    then its numbered references, each with its link and an Open like a hit's."""

    def __init__(
        self, answer: Answer, *, actions: ResultActions | Any | None = None, options: DisplayOptions | None = None
    ) -> None:
        self.answer = answer
        opts = _options(options)
        inner = static.answer_header_html(answer) + static.answer_text_html(answer, max_chars=opts.max_chars or None)
        if answer.references:
            inner += '<div class="devknow-refs">References</div>'
        items = [
            {"name": name, "html": static.reference_html(name, number), "truncated": False}
            for number, name in enumerate(answer.references, 1)
        ]
        super().__init__(actions=actions, options=opts, kind="answer", header=inner, items=items,
                         page_size=max(1, len(items)))
