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
clicks. Fetching stays in Python: the page sends a custom message (``{"do": "open", "name": …}``,
``{"do": "more"}``, ``{"do": "all", "name": …}``), the view acts through the :class:`~.actions.ResultActions`
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

from . import static
from .actions import ResultActions, as_actions
from .style import style_block

if TYPE_CHECKING:
    from ..models import Answer, Document, DocumentChunk, Documents, SearchResults
    from .settings import DisplayOptions

__all__ = ["AnswerView", "DocumentView", "DocumentsView", "HitList", "HitView", "ResultWidget", "error_line"]


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


def _shared_layout() -> ipywidgets.Layout:
    """The one Layout model of every view (made again if ``Widget.close_all()`` closed it)."""
    global _SHARED_LAYOUT
    if _SHARED_LAYOUT is None or getattr(_SHARED_LAYOUT, "comm", None) is None:
        _SHARED_LAYOUT = ipywidgets.Layout(width="100%")
    return _SHARED_LAYOUT


class ResultWidget(anywidget.AnyWidget):
    """The one model behind every view: what the page shows, as synced traits, and the requests it answers.

    Traits: ``kind`` (hits, hit, document, documents, answer); ``header`` (sanitized HTML with the stylesheet);
    ``items`` (the hits, references or documents: ``{"name", "html", "truncated"}``); ``page_size``;
    ``has_next`` (the service has another page of hits); ``can_open`` (actions were given); ``page`` (the
    page opened in place: ``{"name", "html", "truncated"}``, or ``{}``); ``error`` (one line, or ""); and
    ``replies``, counted up after each request is answered (so the page knows even when nothing changed).
    """

    _esm = _asset("results.js")
    _css = _asset("results.css")

    kind = traitlets.Unicode("").tag(sync=True)
    header = traitlets.Unicode("").tag(sync=True)
    items = traitlets.List(traitlets.Dict()).tag(sync=True)
    page_size = traitlets.Int(10).tag(sync=True)
    has_next = traitlets.Bool(False).tag(sync=True)
    can_open = traitlets.Bool(False).tag(sync=True)
    page = traitlets.Dict().tag(sync=True)
    error = traitlets.Unicode("").tag(sync=True)
    replies = traitlets.Int(0).tag(sync=True)

    def __init__(
        self, *, actions: ResultActions | Any | None = None, options: DisplayOptions | None = None, **traits: Any
    ) -> None:
        self.actions = as_actions(actions)
        self._opts = _options(options)
        self._documents: dict[str, Document] = {}  # opened pages, kept for "Show all" and their sections
        self._sections: dict[str, int] = {}  # a long page's output number, for the sections it sends later
        traits.setdefault("page_size", max(1, self._opts.page_size))
        super().__init__(layout=_shared_layout(), can_open=self.actions is not None, **traits)
        self.on_msg(self._on_message)

    def __repr__(self) -> str:
        # ipywidgets' repr serializes every trait (these hold whole pages); results end up in Out[] and logs.
        return f"<{type(self).__name__}>"

    # -- requests from the page ---------------------------------------------------------------------------

    def _on_message(self, _widget: Any, content: Any, _buffers: Any) -> None:
        """Answer one request of the page; whatever happens, count the reply (the page waits for it).

        The changed traits and the reply go to the page in one message (``hold_sync``), so it draws once.
        """
        if isinstance(content, dict) and content.get("do") == "section":
            self._send_section(str(content.get("name") or ""), content.get("index"))
            return
        with self.hold_sync():
            try:
                if isinstance(content, dict):
                    self._answer(str(content.get("do") or ""), str(content.get("name") or ""))
            except Exception as exc:  # never into ipywidgets' log console: one line in the view
                self.error = error_line(exc)
            finally:
                self.replies += 1

    def _answer(self, request: str, name: str) -> None:
        if request == "open" and name:
            self.open_page(name)
        elif request == "more":
            self.more()
        elif request == "all" and name:
            self.show_all(name)

    def _send_section(self, name: str, index: Any) -> None:
        """Render one pending section of a long page and send it to the page (``{"section", "name", "html"}``);
        no ``replies`` count: the page asks for sections as they scroll into view, beside its other requests."""
        from .sections import outline, section_html

        document, number = self._documents.get(name), self._sections.get(name)
        if document is None or number is None or not isinstance(index, int) or isinstance(index, bool):
            return
        page = outline(document.content, document.uri)
        if not 0 <= index < len(page.sections):
            return
        try:
            fragment = section_html(page, index, number)
        except Exception as exc:  # one line in the view, not a traceback in the log console
            fragment = f'<div class="devknow-error">{html.escape(error_line(exc))}</div>'
        self.send({"section": index, "name": name, "html": fragment})

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
    """A page as the view shows it: header, contents, rendered body, and whether it was cut."""
    body, truncated = static.document_body_html(
        document,
        max_chars=max_chars,
        toc_min_headings=opts.toc_min_headings,
        raw=opts.raw,
        static=False,  # the note need not say how to see the rest: the view has "Show all"
    )
    head = static.document_header_html(document)
    return {"name": document.name, "html": f'<div class="devknow-doc">{head}{body}</div>', "truncated": truncated}


def _hit_item(hit: DocumentChunk, number: int | None, opts: DisplayOptions, preview: bool) -> dict[str, Any]:
    preview_chars = (opts.preview_chars or None) if preview else None
    inner = static.hit_html(hit, number, max_chars=opts.max_chars or None, preview_chars=preview_chars)
    return {"name": hit.parent, "html": inner, "truncated": False}


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
        self.fetched: list[DocumentChunk] = list(results)
        opts = _options(options)
        items = [_hit_item(hit, number, opts, True) for number, hit in enumerate(results, 1)]
        super().__init__(
            actions=actions,
            options=opts,
            kind="hits",
            header=style_block() + static.hits_header_html(results),
            items=items,
            has_next=results.has_next_page,
        )

    def more(self) -> None:
        """Fetch the service's next page of hits through the actions and add it to the list."""
        if self.actions is None or not self.results.has_next_page:
            return
        page = self.actions.next_page(self.results)
        start = len(self.items)
        added = [_hit_item(hit, number, self._opts, True) for number, hit in enumerate(page, start + 1)]
        self.results = page
        self.fetched.extend(page)
        self.items = [*self.items, *added]
        self.has_next = page.has_next_page
        self.twin = self._static_copy()
        self.error = ""

    def _static_copy(self) -> dict[str, str]:
        """The static views of every hit fetched so far, under the first page's query and notices."""
        from ..models import SearchResults

        shown = SearchResults(self.first.query, self.fetched, info=self.first.info)
        limits = {"max_chars": self._opts.max_chars or None, "preview_chars": self._opts.preview_chars or None}
        return {"text/html": static.hits_html(shown, **limits), "text/markdown": static.hits_markdown(shown, **limits),
                "text/plain": static.hits_plain(shown)}


class HitView(ResultWidget):
    """One hit alone: its whole passage and an Open for its page."""

    def __init__(
        self, hit: DocumentChunk, *, actions: ResultActions | Any | None = None, options: DisplayOptions | None = None
    ) -> None:
        self.hit = hit
        opts = _options(options)
        super().__init__(actions=actions, options=opts, kind="hit", header=style_block(),
                         items=[_hit_item(hit, None, opts, False)])


class DocumentView(ResultWidget):
    """A page: header (title, description, link), contents for long pages, the rendered Markdown; a page cut
    at ``options.max_chars`` says so and offers "Show all"."""

    def __init__(self, document: Document, *, options: DisplayOptions | None = None) -> None:
        self.document = document
        opts = _options(options)
        super().__init__(options=opts, kind="document", header=style_block())
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
        header = f'{style_block()}<div class="devknow-header">{head}</div>{static.notices_html(info)}'
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
        super().__init__(actions=actions, options=opts, kind="answer", header=style_block() + inner, items=items,
                         page_size=max(1, len(items)))
