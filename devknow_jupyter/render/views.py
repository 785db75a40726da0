"""One view per result type, registered in this one place.

A view turns its result into each output the package makes: the live widget, the sanitized HTML, the
Markdown, the plain text (``text/plain``), the ``devknow`` command's text and the JupyterLab panel's HTML
fragment. ``display.mimebundle``, ``render.widgets.view_for``, the CLI's printers and
``labext/views.html_for`` all look the view up here with :func:`view_for`, so:

* a new result type (a new tool) is a model, a view registered with ``@register(Model)``, and a client method;
* a new output format is one method on :class:`View` and one per view.

Views read their settings from :mod:`.settings` (passed in as ``options``) and act only through the
actions their caller hands in (:mod:`.actions`); they never fetch on their own.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..models import Answer, Document, DocumentChunk, Documents, SearchResults, name_to_uri
from ..terminal import terminal_safe
from . import static
from .settings import DisplayOptions

if TYPE_CHECKING:
    from .actions import ResultActions

__all__ = ["View", "register", "view_for", "widget_for"]

_VIEWS: dict[type, View] = {}
#: Characters of a passage in the JupyterLab panel's hit list (the page has the rest).
FRAGMENT_PREVIEW_CHARS = 400


class View:
    """What every view makes of its result; subclasses implement each method for their type."""

    def widget(self, obj: Any, *, options: DisplayOptions, actions: ResultActions | None) -> Any:
        """The live view: one anywidget model (needs ipywidgets and anywidget)."""
        raise NotImplementedError

    def html(self, obj: Any, options: DisplayOptions) -> str:
        """Sanitized HTML with its stylesheet (``text/html``)."""
        raise NotImplementedError

    def markdown(self, obj: Any, options: DisplayOptions) -> str:
        """Safe Markdown (``text/markdown``): the one Markdown rendering of the type."""
        raise NotImplementedError

    def plain(self, obj: Any, options: DisplayOptions) -> str:
        """Short text for ``text/plain`` (terminals, IPython's console)."""
        raise NotImplementedError

    def cli(self, obj: Any) -> str:
        """What ``devknow`` prints for it (the printer escapes control characters)."""
        raise NotImplementedError

    def fragment(self, obj: Any, number: int | None = None, tell: str = "") -> str:
        """Inner HTML for the JupyterLab panel, which adds the stylesheet once (``tell``: a hit's, see
        :func:`~.labels.tell_apart`)."""
        raise NotImplementedError


def register(model: type) -> Callable[[type[View]], type[View]]:
    """Class decorator: make the decorated view the one for ``model`` (and its subclasses)."""

    def decorate(cls: type[View]) -> type[View]:
        _VIEWS[model] = cls()
        return cls

    return decorate


def view_for(obj: Any) -> View | None:
    """The view registered for ``obj``'s type (or the nearest base type), or None."""
    for kind in type(obj).__mro__:
        if kind in _VIEWS:
            return _VIEWS[kind]
    return None


def widget_for(obj: Any, *, options: DisplayOptions | None = None, actions: Any = None) -> Any:
    """The live view of ``obj`` (None when its type has no view): one anywidget model whose Open and More
    act through ``actions`` (a ResultActions or a client; None disables them)."""
    from .actions import as_actions
    from .settings import options as shared

    view = view_for(obj)
    return view.widget(obj, options=options or shared, actions=as_actions(actions)) if view is not None else None


def _limit(options: DisplayOptions) -> int | None:
    return options.max_chars or None


def _one_line(text: str) -> str:
    # A title or name from a server is one line: a newline in it would fake a line of our own.
    return terminal_safe(text, one_line=True)


def _indent(text: str, prefix: str = "   ") -> str:
    return "\n".join(prefix + line if line.strip() else "" for line in text.strip().splitlines())


def _cli_passage(content: str, title: str) -> str:
    # A passage often starts with its own heading path, which is the title already shown above it.
    first, _, rest = content.strip().partition("\n")
    if first.lstrip("#").strip().strip("*_`") == title:
        return rest.strip()
    return content.strip()


@register(SearchResults)
class SearchResultsView(View):
    """Hits: a header (query, count, provenance), notices, then each hit."""

    def widget(self, obj: SearchResults, *, options: DisplayOptions, actions: ResultActions | None) -> Any:
        from .widgets import HitList

        return HitList(obj, actions=actions, options=options)

    def html(self, obj: SearchResults, options: DisplayOptions) -> str:
        from .payload import hit_items

        # The widget's items are these (rendered once for both): the same limits as HitList's.
        items = hit_items(obj, max_chars=_limit(options), preview_chars=options.preview_chars or None)
        return static.hits_html(obj, items=items)

    def markdown(self, obj: SearchResults, options: DisplayOptions) -> str:
        return static.hits_markdown(obj, max_chars=_limit(options), preview_chars=options.preview_chars or None)

    def plain(self, obj: SearchResults, options: DisplayOptions) -> str:
        return static.hits_plain(obj)

    def cli(self, obj: SearchResults) -> str:
        if not len(obj):
            return f"No results for {obj.query!r}.\n"
        parts = []
        for number, hit in enumerate(obj, 1):
            title, uri, parent = (_one_line(text) for text in (hit.title, hit.uri, hit.parent))
            passage = _cli_passage(hit.content, hit.title)
            body = f"\n{_indent(passage)}\n\n" if passage else "\n"
            parts.append(f"{number}. {title}\n   {uri}\n   {parent}\n{body}")
        return "".join(parts)

    def fragment(self, obj: SearchResults, number: int | None = None, tell: str = "") -> str:
        return static.hits_header_html(obj)


@register(DocumentChunk)
class ChunkView(View):
    """One hit alone: its whole passage, and an Open button for its page."""

    def widget(self, obj: DocumentChunk, *, options: DisplayOptions, actions: ResultActions | None) -> Any:
        from .widgets import HitView

        return HitView(obj, actions=actions, options=options)

    def html(self, obj: DocumentChunk, options: DisplayOptions) -> str:
        return static.page(static.hit_html(obj, max_chars=_limit(options)), "devknow-hit")

    def markdown(self, obj: DocumentChunk, options: DisplayOptions) -> str:
        return static.hit_markdown(obj, max_chars=_limit(options))

    def plain(self, obj: DocumentChunk, options: DisplayOptions) -> str:
        return static.hit_plain(obj)

    def cli(self, obj: DocumentChunk) -> str:
        return SearchResultsView().cli(SearchResults("", [obj]))

    def fragment(self, obj: DocumentChunk, number: int | None = None, tell: str = "") -> str:
        return static.hit_html(obj, number, preview_chars=FRAGMENT_PREVIEW_CHARS, tell=tell)


@register(Document)
class DocumentView(View):
    """A whole page: header, contents (when it has enough headings) and its rendered Markdown."""

    def widget(self, obj: Document, *, options: DisplayOptions, actions: ResultActions | None) -> Any:
        from .widgets import DocumentView as DocumentWidget

        return DocumentWidget(obj, options=options)

    def html(self, obj: Document, options: DisplayOptions) -> str:
        body = static.document_html(
            obj, max_chars=_limit(options), toc_min_headings=options.toc_min_headings, raw=options.raw
        )
        return static.page(body, "devknow-docs")

    def markdown(self, obj: Document, options: DisplayOptions) -> str:
        return static.document_markdown(obj, max_chars=_limit(options), raw=options.raw)

    def plain(self, obj: Document, options: DisplayOptions) -> str:
        return static.document_plain(obj, max_chars=options.plain_chars)

    def cli(self, obj: Document) -> str:
        from .markdown import absolute_links  # relative links would point nowhere once printed

        content = absolute_links(obj.content.rstrip(), obj.uri)
        return f"<!-- {_one_line(obj.name)} | {_one_line(obj.uri)} -->\n{content}\n"

    def fragment(self, obj: Document, number: int | None = None, tell: str = "") -> str:
        return static.document_html(obj, toc_min_headings=2)


@register(Documents)
class DocumentsView(View):
    """Several pages, one after the other."""

    def widget(self, obj: Documents, *, options: DisplayOptions, actions: ResultActions | None) -> Any:
        from .widgets import DocumentsView as DocumentsWidget

        return DocumentsWidget(obj, options=options)

    def html(self, obj: Documents, options: DisplayOptions) -> str:
        return static.documents_html(
            obj, max_chars=_limit(options), toc_min_headings=options.toc_min_headings, raw=options.raw
        )

    def markdown(self, obj: Documents, options: DisplayOptions) -> str:
        return static.documents_markdown(obj, max_chars=_limit(options), raw=options.raw)

    def plain(self, obj: Documents, options: DisplayOptions) -> str:
        return static.documents_plain(obj, max_chars=options.plain_chars)

    def cli(self, obj: Documents) -> str:
        return "\n---\n\n".join(DocumentView().cli(doc) for doc in obj)

    def fragment(self, obj: Documents, number: int | None = None, tell: str = "") -> str:
        return "".join(DocumentView().fragment(doc) for doc in obj)


@register(Answer)
class AnswerView(View):
    """An answer (cited segments marked), then its numbered references, each with an Open button."""

    def widget(self, obj: Answer, *, options: DisplayOptions, actions: ResultActions | None) -> Any:
        from .widgets import AnswerView as AnswerWidget

        return AnswerWidget(obj, actions=actions, options=options)

    def html(self, obj: Answer, options: DisplayOptions) -> str:
        return static.answer_html(obj, max_chars=_limit(options))

    def markdown(self, obj: Answer, options: DisplayOptions) -> str:
        return static.answer_markdown(obj, max_chars=_limit(options))

    def plain(self, obj: Answer, options: DisplayOptions) -> str:
        return static.answer_plain(obj, max_chars=options.plain_chars)

    def cli(self, obj: Answer) -> str:
        from .citations import cited_plain  # [1], [2] after cited segments, as in the list below

        lines = [cited_plain(obj).strip()]
        if obj.references:
            lines.append("\n**References**\n")
            lines += [f"{i}. [{name_to_uri(ref)}]({name_to_uri(ref)})" for i, ref in enumerate(obj.references, 1)]
        return "\n".join(lines) + "\n"

    def fragment(self, obj: Answer, number: int | None = None, tell: str = "") -> str:
        refs = [static.reference_html(name, i) for i, name in enumerate(obj.references, 1)]
        heading = '<div class="devknow-refs">References</div>' if refs else ""
        return static.answer_header_html(obj) + static.answer_text_html(obj) + heading + "".join(refs)
