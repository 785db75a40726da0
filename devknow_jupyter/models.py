"""Plain result types: what the three tools return, in the service's own JSON shapes.

``DocumentChunk`` and ``SearchResults`` (from ``search_documents``), ``Document`` and ``Documents``
(from ``get_documents``) and ``Answer`` (from ``answer_query``). They are plain, list-like data with
``to_dict()`` (the service's JSON), ``to_markdown()`` and ``from_dict()``; equal when their data are
equal, and picklable. They hold no client: what a view needs to act (open a page, the next page of hits)
comes from the actions its caller hands it (:mod:`devknow_jupyter.render.actions`).

In Jupyter they display themselves through ``_repr_mimebundle_``, which calls the display layer through
:mod:`.display_hook`, where the package root (above every layer) plugs it in: this module imports no
renderer and not the package root, and importing it stays cheap.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, overload

__all__ = [
    "Answer",
    "Citation",
    "Document",
    "DocumentChunk",
    "Documents",
    "ResultInfo",
    "SearchResults",
    "byte_offset_to_index",
    "resolve_citations",
]

DOCUMENT_PREFIX = "documents/"
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.+?)\s*#*\s*$", re.MULTILINE)


def name_to_uri(name: str) -> str:
    """``documents/developers.google.com/x`` → ``https://developers.google.com/x``."""
    rest = name[len(DOCUMENT_PREFIX) :] if name.startswith(DOCUMENT_PREFIX) else name
    return rest if rest.startswith(("http://", "https://")) else f"https://{rest}"


def title_from(content: str, name: str) -> str:
    """A readable title: the first Markdown heading, else the last path segment of the name."""
    match = _HEADING.search(content or "")
    if match:
        return match.group(1).strip().strip("*_`")
    last = name.rstrip("/").rsplit("/", 1)[-1] or name
    return last.replace("-", " ").replace("_", " ").strip().capitalize() or name


@dataclass
class ResultInfo:
    """Where a result came from: backend, endpoint, time taken, cache, notices for the user."""

    backend: str = ""
    endpoint: str = ""
    elapsed: float = 0.0
    from_cache: bool = False
    notices: list[str] = field(default_factory=list)


class _Displayable:
    """Mixin: the display protocol, through the display hook (no renderer is imported here)."""

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        from .display_hook import mimebundle

        return mimebundle(self, include=include, exclude=exclude)

    def to_markdown(self) -> str:
        """The result as Markdown: its view's one Markdown rendering (what ``text/markdown`` shows)."""
        return self._repr_mimebundle_(include=["text/markdown"]).get("text/markdown", repr(self))


@dataclass(frozen=True)
class DocumentChunk(_Displayable):
    """One search hit: a passage (``content``, Markdown) of the document named ``parent``."""

    parent: str
    id: str
    content: str

    @property
    def uri(self) -> str:
        """The page's https URL."""
        return name_to_uri(self.parent)

    @property
    def title(self) -> str:
        """A readable title for the hit (first heading of the passage, else from the URL)."""
        return title_from(self.content, self.parent)

    def to_dict(self) -> dict[str, str]:
        """The service's JSON shape: ``{"parent", "id", "content"}``."""
        return {"parent": self.parent, "id": self.id, "content": self.content}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> DocumentChunk:
        """Build from the service's JSON shape."""
        return cls(parent=str(data.get("parent", "")), id=str(data.get("id", "")), content=str(data.get("content", "")))


class SearchResults(Sequence[DocumentChunk], _Displayable):
    """The hits of one ``search_documents`` call: a sequence of :class:`DocumentChunk`, with ``.query``.

    ``next_page_token`` is set when the server has more hits (the REST backend pages);
    ``client.next_page(results)`` (or ``results.next_page(client)``) fetches them with the same filters.
    """

    #: The search's options besides the query (source, since, page_size), for :meth:`next_page`.
    _request: dict[str, Any] | None = None

    def __init__(
        self,
        query: str,
        chunks: Iterable[DocumentChunk] = (),
        info: ResultInfo | None = None,
        next_page_token: str | None = None,
    ) -> None:
        self.query = query
        self._chunks: tuple[DocumentChunk, ...] = tuple(chunks)
        self.info = info or ResultInfo()
        self.next_page_token = next_page_token or None

    @property
    def has_next_page(self) -> bool:
        """True when the server said there are more hits."""
        return bool(self.next_page_token)

    def next_page(self, client: Any, *, refresh: bool = False) -> SearchResults:
        """The next page of hits through ``client`` (a DevKnowClient), with the same query and filters."""
        return client.next_page(self, refresh=refresh)

    @property
    def request(self) -> dict[str, Any]:
        """The search's options besides the query (source, since, page_size), as plain data."""
        return dict(self._request or {})

    @property
    def from_cache(self) -> bool:
        """True when no request was made for this result."""
        return self.info.from_cache

    @property
    def names(self) -> list[str]:
        """The distinct document names of the hits, in hit order (ready for ``get_documents``)."""
        return list(dict.fromkeys(chunk.parent for chunk in self._chunks))

    @overload
    def __getitem__(self, index: int) -> DocumentChunk: ...
    @overload
    def __getitem__(self, index: slice) -> SearchResults: ...
    def __getitem__(self, index: int | slice) -> DocumentChunk | SearchResults:
        if isinstance(index, slice):
            return self._derive(self._chunks[index])
        return self._chunks[index]

    def __len__(self) -> int:
        return len(self._chunks)

    def __iter__(self) -> Iterator[DocumentChunk]:
        return iter(self._chunks)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, SearchResults):
            mine = (self.query, self._chunks, self.next_page_token)
            return mine == (other.query, other._chunks, other.next_page_token)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"<SearchResults query={self.query!r} hits={len(self)}>"

    def followed_by(self, page: SearchResults) -> SearchResults:
        """These hits, then ``page``'s (the page after them): one list that carries ``page``'s token and request,
        so ``next_page`` of it fetches the page after ``page``."""
        return page._derive((*self._chunks, *page._chunks))

    def _derive(self, chunks: Iterable[DocumentChunk]) -> SearchResults:
        derived = SearchResults(self.query, chunks, self.info, self.next_page_token)
        derived._request = self._request
        return derived

    def to_dict(self) -> dict[str, Any]:
        """The service's JSON shape: ``{"results": [{"parent", "id", "content"}, ...]}``, plus ``"nextPageToken"``
        when there are more."""
        data: dict[str, Any] = {"results": [chunk.to_dict() for chunk in self._chunks]}
        if self.next_page_token:
            data["nextPageToken"] = self.next_page_token
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any], query: str = "") -> SearchResults:
        """Build from the service's JSON shape."""
        chunks = (DocumentChunk.from_dict(item) for item in data.get("results") or [])
        return cls(query, chunks, next_page_token=data.get("nextPageToken") or None)


@dataclass(frozen=True)
class Document(_Displayable):
    """A whole page: ``content`` is its Markdown."""

    name: str
    uri: str = ""
    content: str = ""
    description: str = ""
    title: str = ""

    def to_dict(self) -> dict[str, str]:
        """The service's JSON shape: ``{"name", "uri", "content", "description", "title"}``."""
        return {
            "name": self.name,
            "uri": self.uri,
            "content": self.content,
            "description": self.description,
            "title": self.title,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Document:
        """Build from the service's JSON shape, filling a missing ``uri`` or ``title`` from the name."""
        name = str(data.get("name", ""))
        content = str(data.get("content") or "")
        return cls(
            name=name,
            uri=str(data.get("uri") or name_to_uri(name)),
            content=content,
            description=str(data.get("description") or ""),
            title=str(data.get("title") or title_from(content, name)),
        )


class Documents(list[Document], _Displayable):
    """The documents of one ``get_documents`` call, in request order (a ``list`` of :class:`Document`)."""

    def __init__(self, documents: Iterable[Document] = (), info: ResultInfo | None = None) -> None:
        super().__init__(documents)
        self.info = info or ResultInfo()

    @property
    def from_cache(self) -> bool:
        """True when every document came from the cache."""
        return self.info.from_cache

    def to_dict(self) -> dict[str, Any]:
        """The service's JSON shape: ``{"documents": [...]}``."""
        return {"documents": [doc.to_dict() for doc in self]}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Documents:
        """Build from the service's JSON shape."""
        return cls(Document.from_dict(item) for item in data.get("documents") or [])


    def __repr__(self) -> str:
        return f"<Documents {[doc.name for doc in self]!r}>"

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        # IPython pretty-prints list subclasses itself, which would win over the bundle's text/plain.
        printer.text(self._repr_mimebundle_(include=["text/plain"]).get("text/plain", repr(self)))


def byte_offset_to_index(data: bytes, offset: int, *, round_up: bool = False) -> int:
    """The string index of UTF-8 byte ``offset`` into ``data`` (the text's UTF-8 encoding).

    An offset inside a multi-byte character snaps to a character boundary: back to the character's start,
    or with ``round_up`` forward past its end, so a span never splits a character. Offsets beyond either
    end are clamped to it.
    """
    offset = max(0, min(int(offset), len(data)))
    if round_up:
        while offset < len(data) and 0x80 <= data[offset] < 0xC0:  # a continuation byte: inside a character
            offset += 1
    # Decoding with errors="ignore" drops a character cut at the end, which is snapping back.
    return len(data[:offset].decode("utf-8", errors="ignore"))


@dataclass
class Citation:
    """A cited segment of an answer: ``answer_text[start:end] == text``, backed by ``references``.

    ``start``/``end`` are Python string indexes; ``byte_start``/``byte_end`` are the UTF-8 byte offsets
    the service sent (start inclusive, end exclusive); ``references`` are document names.
    """

    text: str
    start: int
    end: int
    byte_start: int
    byte_end: int
    references: list[str] = field(default_factory=list)


def _as_int(value: Any) -> int | None:
    try:
        return int(value)  # int64 fields travel as JSON strings
    except (TypeError, ValueError):
        return None


def resolve_citations(
    text: str, raw: Iterable[Any], references: Sequence[str]
) -> tuple[list[Citation], list[str]]:
    """Citations in the service's shape (``{"startIndex", "endIndex", "sources": [{"referenceIndex"}]}``, UTF-8
    byte offsets) as :class:`Citation` objects in text order, plus notes on what had to be fixed.

    Never raises: offsets beyond the text are clamped to it, reversed, empty or unreadable spans and
    citations of no known reference are dropped, and an overlap is trimmed to start where the previous
    citation ends (a segment inside another adds its references to that one).
    """
    data = text.encode("utf-8")
    notes: list[str] = []
    placed: list[Citation] = []
    for number, item in enumerate(raw if isinstance(raw, (list, tuple)) else [], 1):
        if not isinstance(item, dict):
            notes.append(f"citation {number} dropped (not a citation object)")
            continue
        # proto3 JSON leaves out zero values: a missing startIndex or referenceIndex is 0.
        byte_start, byte_end = _as_int(item.get("startIndex", 0)), _as_int(item.get("endIndex", 0))
        if byte_start is None or byte_end is None:
            notes.append(f"citation {number} dropped (offsets are not numbers)")
            continue
        if byte_end < byte_start:
            notes.append(f"citation {number} dropped (it ends before it starts)")
            continue
        if byte_start >= len(data) or byte_end <= 0:
            notes.append(f"citation {number} dropped (outside the answer's {len(data)} bytes)")
            continue
        if byte_start < 0 or byte_end > len(data):
            notes.append(f"citation {number} clamped to the answer's {len(data)} bytes")
        sources = item.get("sources") if isinstance(item.get("sources"), list) else []
        indexes = [_as_int((src if isinstance(src, dict) else {}).get("referenceIndex", 0)) for src in sources]
        valid = [i for i in indexes if i is not None and 0 <= i < len(references) and references[i]]
        names = list(dict.fromkeys(references[i] for i in valid))
        if not names:
            notes.append(f"citation {number} dropped (it cites no listed reference)")
            continue
        start = byte_offset_to_index(data, byte_start)
        end = byte_offset_to_index(data, byte_end, round_up=True)
        if end <= start:
            notes.append(f"citation {number} dropped (empty)")
            continue
        placed.append(Citation(text[start:end], start, end, byte_start, byte_end, names))
    placed.sort(key=lambda citation: (citation.start, -citation.end))
    kept: list[Citation] = []
    for citation in placed:
        previous = kept[-1] if kept else None
        if previous is not None and citation.start < previous.end:
            if citation.end <= previous.end:
                previous.references.extend(n for n in citation.references if n not in previous.references)
                notes.append(f"a citation inside another was merged into it ({previous.text[:30]!r})")
                continue
            citation.start = previous.end
            citation.text = text[citation.start : citation.end]
            notes.append(f"an overlapping citation was trimmed to start at {citation.text[:30]!r}")
        kept.append(citation)
    return kept, notes


@dataclass
class Answer(_Displayable):
    """A grounded answer (Markdown) and the names of the documents it is based on.

    ``extractive`` is True when the offline backend built it from the best passages rather than a model.
    ``citations`` (REST backend only; the MCP tool sends none) mark the segments each reference backs.
    """

    answer_text: str
    references: list[str] = field(default_factory=list)
    query: str = ""
    extractive: bool = False
    citations: list[Citation] = field(default_factory=list)
    info: ResultInfo = field(default_factory=ResultInfo, compare=False, repr=False)

    @property
    def from_cache(self) -> bool:
        """True when no request was made for this answer."""
        return self.info.from_cache

    def to_dict(self) -> dict[str, Any]:
        """The service's JSON shape: ``{"answerText", "references"}``, plus ``"citations"`` (byte offsets, as
        the service sent them) when there are any."""
        data: dict[str, Any] = {"answerText": self.answer_text, "references": list(self.references)}
        if self.citations:
            data["citations"] = [
                {
                    "startIndex": citation.byte_start,
                    "endIndex": citation.byte_end,
                    "sources": [{"referenceIndex": self.references.index(name)} for name in citation.references],
                }
                for citation in self.citations
            ]
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any], query: str = "") -> Answer:
        """Build from the service's JSON shape (references may be names, ``{"name": ...}`` objects or the REST
        surface's ``{"documentReference": {"documentChunk": {"parent": ...}}}``). Citations that cannot be
        placed are dropped or clamped, with a note in ``info.notices``."""
        listed = []  # every reference, named or not: citations point into this list by position
        for ref in data.get("references") or []:
            if isinstance(ref, dict) and isinstance(ref.get("documentReference"), dict):
                ref = (ref["documentReference"].get("documentChunk") or {}).get("parent") or ""
            name = ref.get("name") or ref.get("document") or ref.get("uri") if isinstance(ref, dict) else ref
            listed.append(str(name or ""))
        refs = [name for name in listed if name]
        text = str(data.get("answerText") or data.get("answer_text") or "")
        citations, notes = resolve_citations(text, data.get("citations") or [], listed)
        info = ResultInfo()
        said = data.get("notices") if isinstance(data.get("notices"), list) else []  # the local index's remarks
        info.notices.extend(str(notice) for notice in said if str(notice).strip())
        if notes:
            info.notices.append("Some citations could not be placed as sent: " + "; ".join(notes) + ".")
        return cls(
            answer_text=text,
            references=refs,
            query=query,
            extractive=bool(data.get("extractive", False)),
            citations=citations,
            info=info,
        )

