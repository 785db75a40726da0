"""In-process backends for fast tests, as httpx's ``MockTransport`` is for httpx.

Hand one to :class:`~devknow_jupyter.DevKnowClient` and no server, socket or SQLite file is involved::

    from devknow_jupyter import DevKnowClient
    from devknow_jupyter.testing import StaticBackend

    backend = StaticBackend(documents=[{"name": "documents/docs.lantern.test/setup",
                                        "content": "# Set up Lantern\\n\\nInstall the relay first."}])
    client = DevKnowClient(backend=backend, cache=False)
    client.search_documents("install relay")

* :class:`InProcessBackend` calls ``handler(tool, arguments)`` for every tool call and returns what it
  returns (the service's JSON shape); the handler raises a ``DevKnowError`` for a failure, as a server would.
* :class:`StaticBackend` answers the three tools from a list of documents: a search returns their passages
  ranked by shared words, unknown names fail the whole ``get_documents`` call with ``NOT_FOUND`` (as the
  service does), and ``answer_query`` returns the best passage with its page as the reference.

Both keep the :class:`~devknow_jupyter.backend.Backend` contract (``search``, ``get``, ``answer``,
``capabilities``: from :class:`~devknow_jupyter.tool_backend.ToolBackend`, as the MCP transport has them) and
count their tool calls in ``calls``, so a test can tell a cached result from a request. ``StaticBackend`` reads
its tool table from the registry (:func:`~devknow_jupyter.registry.serve_tool`).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterable
from typing import Any

from .contract import AnswerQuery, Capabilities, SearchQuery
from .errors import ConfigurationError, ToolError
from .models import Answer, Document, DocumentChunk, Documents, SearchResults
from .registry import serve_tool, tool_definitions
from .tool_backend import ToolBackend
from .tools import MAX_NAMES_PER_CALL

__all__ = ["InProcessBackend", "StaticBackend"]

Handler = Callable[[str, dict[str, Any]], dict[str, Any]]
_WORD = re.compile(r"\w+")


class InProcessBackend(ToolBackend):
    """A backend that answers each tool call with ``handler(tool, arguments)``, in the calling thread.

    Args:
        handler: Returns the tool's structured result (e.g. ``{"results": [...]}``) or raises a DevKnowError.
        endpoint: What the client shows as its endpoint (and keys its cache by).
        tools: What ``list_tools`` returns; by default the service's three tool definitions.
    """

    kind = "local"  # no key, no offline copy: what the client does for an in-process index

    def __init__(
        self, handler: Handler, *, endpoint: str = "memory://devknow", tools: list[dict[str, Any]] | None = None
    ) -> None:
        self.endpoint = endpoint
        self._handler = handler
        self._tools = tools if tools is not None else tool_definitions()
        self._lock = threading.Lock()
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.closed = False

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.endpoint!r} calls={len(self.calls)}>"

    def call_tool(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """Record the call and return the handler's result."""
        if self.closed:
            raise ConfigurationError("This backend is closed.")
        with self._lock:
            self.calls.append((name, dict(arguments)))
        return self._handler(name, dict(arguments))

    def list_tools(self) -> list[dict[str, Any]]:
        """The tool definitions given (a copy)."""
        return [dict(tool) for tool in self._tools]

    def close(self) -> None:
        """Mark the backend closed; safe to call twice."""
        self.closed = True


def _words(text: str) -> set[str]:
    return {word.lower() for word in _WORD.findall(text)}


def _passages(document: Document) -> list[str]:
    # A passage per Markdown section: a heading starts a new one, as the service's chunks do.
    parts = re.split(r"\n(?=#{1,6} )", document.content.strip())
    return [part.strip() for part in parts if part.strip()]


class StaticBackend(InProcessBackend):
    """A backend serving the three tools from ``documents`` (``Document`` objects or the service's dicts).

    Args:
        documents: The pages it knows.
        answers: Optional answer text per exact question; other questions get the best passage.
        endpoint: As for :class:`InProcessBackend`.
    """

    def __init__(
        self,
        documents: Iterable[Document | dict[str, Any]] = (),
        *,
        answers: dict[str, str] | None = None,
        endpoint: str = "memory://devknow",
    ) -> None:
        super().__init__(self._answer_tool, endpoint=endpoint)
        docs = [doc if isinstance(doc, Document) else Document.from_dict(doc) for doc in documents]
        self.documents = {doc.name: doc for doc in docs}
        self.answers = dict(answers or {})
        #: What the typed side serves: the three tools, no filters (the client filters the hits by site).
        self.capabilities_served = Capabilities(operations=frozenset({"search", "get", "answer"}))

    def _answer_tool(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        return serve_tool(_Served(self), name, arguments)  # the registry's tool table, as `devknow serve` has it

    def _search(self, query: str) -> list[dict[str, str]]:
        wanted = _words(query)
        if not wanted:
            raise ToolError("search_documents failed: INVALID_ARGUMENT: query is empty", tool="search_documents")
        scored = []
        for doc in self.documents.values():
            for number, passage in enumerate(_passages(doc)):
                score = len(wanted & _words(passage))
                if score:
                    scored.append((-score, doc.name, number, passage))
        scored.sort()
        return [{"parent": name, "id": f"{name}#{n}", "content": text} for _, name, n, text in scored[:10]]

    def _get(self, names: Any) -> dict[str, Any]:
        tool = "get_documents"
        if not isinstance(names, list) or not names or len(names) > MAX_NAMES_PER_CALL:
            raise ToolError(f"{tool} failed: INVALID_ARGUMENT: 1 to {MAX_NAMES_PER_CALL} names", tool=tool)
        missing = [item for item in names if item not in self.documents]
        if missing:  # like the service: the whole call fails, and the client splits the batch
            raise ToolError(f"{tool} failed: NOT_FOUND: {', '.join(missing)}", tool=tool, not_found=True)
        return {"documents": [self.documents[item].to_dict() for item in names]}

    def _answer(self, query: str) -> dict[str, Any]:
        if query in self.answers:
            best = self._search(query) if _words(query) else []
            return {"answerText": self.answers[query], "references": [hit["parent"] for hit in best[:3]]}
        hits = self._search(query)
        if not hits:
            return {"answerText": "The documents say nothing about that.", "references": []}
        # Built from a passage, not by a model: extractive, as the local index's answers are.
        return {"answerText": hits[0]["content"], "references": [hits[0]["parent"]], "extractive": True}


class _Served:
    """A :class:`StaticBackend`'s documents behind the typed contract, for :func:`~.registry.serve_tool`."""

    def __init__(self, static: StaticBackend) -> None:
        self.static = static
        self.capabilities = static.capabilities_served

    def search(self, request: SearchQuery) -> SearchResults:
        return SearchResults(request.query, map(DocumentChunk.from_dict, self.static._search(request.query)))

    def get(self, names: tuple[str, ...]) -> Documents:
        return Documents.from_dict(self.static._get(list(names)))

    def answer(self, request: AnswerQuery) -> Answer:
        return Answer.from_dict(self.static._answer(request.query), query=request.query)
