"""One registry of the tools: per tool its MCP name, schemas, model, view, retry rule and the two mappings
between the typed contract and the tool's JSON (request ↔ arguments, model ↔ result).

Every table keyed by a tool name reads it: the MCP backends (:mod:`.tool_backend`: requests → arguments,
results → models, what the schema says the server can filter), the transport (result shapes, which 429s are
retried), ``devknow serve``'s tool table and its dispatch (:func:`serve_tool`), the SDK test server and
:mod:`.testing`. Adding a tool is an entry here (with :func:`register`), its model, its view (registered for
the model in :mod:`.render.views`) and the method of each backend that serves it, named by ``operation``.

A tool without a hand-written face names a ``face`` verb: the magics register ``%dev<face>``, the CLI a
``devknow <face>`` command, the JupyterLab server extension a ``/devknow/tools/<face>`` route, each reading
one free-text argument (``text_field``) and showing the model through its view (see ``docs/architecture.md``).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from .contract import AnswerQuery, SearchQuery
from .errors import ConfigurationError, ToolError
from .models import Answer, Documents, SearchResults
from .names import normalize_source
from .tools import PAGING, SOURCE_FILTER, TOOLS

__all__ = [
    "REGISTRY",
    "ToolEntry",
    "entries",
    "entry_for",
    "face_entries",
    "find_entry",
    "invalid",
    "register",
    "serve_tool",
    "tool_definitions",
    "unregister",
]

INVALID_PARAMS = -32602


@dataclass(frozen=True)
class ToolEntry:
    """One tool, everything the package knows about it.

    Attributes:
        name: The MCP tool name.
        operation: The backend method that serves it (``search``, ``get``, ``answer``, ...), taking the request.
        definition: ``title``, ``description``, ``inputSchema``, ``outputSchema``, ``annotations``.
        model: The result's model class; its view is the one registered for it in :mod:`.render.views`.
        view: ``"module:Class"`` of that view (resolved lazily by :meth:`load_view`).
        retry_429: Whether a 429 is retried (a generous quota), or surfaces at once (answers: fall back).
        arguments: ``(request, input_names) -> dict``: the tool's arguments (the client side of MCP).
        request: ``(arguments) -> request``: the typed request from a call's arguments, checked (server side).
        model_from: ``(result, request) -> model``: a tool result as the model.
        result_from: ``(model) -> dict``: the model as the tool result (server side).
        check: ``(result) -> problem or None``: the result's shape, as far as the package reads it.
        local_inputs, local_outputs: What the local index's schema adds (``devknow serve``, ``LocalBackend``).
        face: The verb generic faces use; None for a tool whose faces are written by hand.
        text_field: The argument the faces' free text goes to.
    """

    name: str
    operation: str
    definition: dict[str, Any]
    model: type
    view: str
    retry_429: bool
    arguments: Callable[[Any, set[str]], dict[str, Any]]
    request: Callable[[dict[str, Any]], Any]
    model_from: Callable[[dict[str, Any], Any], Any]
    result_from: Callable[[Any], dict[str, Any]]
    check: Callable[[dict[str, Any]], str | None] = lambda result: None
    local_inputs: dict[str, Any] | None = None
    local_outputs: dict[str, Any] | None = None
    face: str | None = None
    text_field: str = "query"

    def tool_definition(self, *, local: bool = False) -> dict[str, Any]:
        """The tool as ``tools/list`` gives it; ``local``: with the local index's additions."""
        tool = {"name": self.name, **copy.deepcopy(self.definition)}
        if local:
            tool["inputSchema"].setdefault("properties", {}).update(copy.deepcopy(self.local_inputs or {}))
            tool["outputSchema"].setdefault("properties", {}).update(copy.deepcopy(self.local_outputs or {}))
        return tool

    def load_view(self) -> type:
        """The view class named by :attr:`view`."""
        import importlib

        module, _, name = self.view.partition(":")
        return getattr(importlib.import_module(module), name)


REGISTRY: dict[str, ToolEntry] = {}


def register(entry: ToolEntry) -> ToolEntry:
    """Add (or replace) ``entry``; every table keyed by a tool name sees it from then on."""
    REGISTRY[entry.name] = entry
    return entry


def unregister(name: str) -> None:
    """Remove the tool ``name`` (tests add tools for a while)."""
    REGISTRY.pop(name, None)


def entries() -> Iterator[ToolEntry]:
    """The tools, in registration order."""
    return iter(list(REGISTRY.values()))


def entry_for(name: str | None = None, *, operation: str | None = None) -> ToolEntry | None:
    """The tool called ``name``, or serving ``operation``; None when there is none."""
    for entry in entries():
        if entry.name == name or (operation is not None and entry.operation == operation):
            return entry
    return None


def find_entry(tool: str) -> ToolEntry | None:
    """The tool called ``tool``, or whose ``face`` verb it is; None when there is none."""
    return REGISTRY.get(tool) or next((entry for entry in entries() if entry.face == tool), None)


def face_entries() -> list[ToolEntry]:
    """The tools whose faces are made from the registry (they name a ``face``)."""
    return [entry for entry in entries() if entry.face]


def tool_definitions(*, local: bool = False) -> list[dict[str, Any]]:
    """Every tool as ``tools/list`` returns it: ``[{"name", "title", "description", "inputSchema", ...}]``.

    ``local=True``: as the local index offers them (``LocalBackend``, ``devknow serve``): ``search_documents``
    also takes ``source``, ``since``, ``page_size`` and ``page_token``, and may return ``notices`` and
    ``nextPageToken``; ``answer_query`` also takes ``source`` and ``since``, and may return ``notices``.
    Without it: exactly the service's shapes.
    """
    return [entry.tool_definition(local=local) for entry in entries()]


def serve_tool(backend: Any, name: str, arguments: Any) -> dict[str, Any]:
    """One tool call served by a typed backend: the arguments as the request, the backend's ``operation``
    method, the model as the tool's result. Unknown tools and bad arguments are ``ToolError``s (-32602)."""
    entry = REGISTRY.get(name)
    if entry is None or entry.operation not in backend.capabilities.operations:
        raise ToolError(f"Unknown tool: {name}", code=INVALID_PARAMS, tool=name)
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, dict):
        raise invalid(name, "the arguments must be an object")
    return entry.result_from(getattr(backend, entry.operation)(entry.request(arguments)))


def invalid(tool: str, message: str) -> ToolError:
    """The error the service gives for bad arguments (JSON-RPC -32602, INVALID_ARGUMENT)."""
    return ToolError(f"{tool} failed: INVALID_ARGUMENT: {message}", code=INVALID_PARAMS, tool=tool)


# -- the three tools: arguments ↔ requests ----------------------------------------------------------------


def source_field(inputs: set[str]) -> str | None:
    """The site filter argument among a tool's argument names, if it has one."""
    return next((field for field in ("source", "data_source", "site") if field in inputs), None)


def _filter_arguments(arguments: dict[str, Any], request: Any, inputs: set[str]) -> None:
    """Sites and date as the tool takes them: an AIP-160 ``filter``, else a site field and ``since``."""
    if "filter" in inputs and (request.sources or request.since):
        from .search_filters import build_filter

        arguments["filter"] = build_filter(list(request.sources), request.since)
        return
    field = source_field(inputs)
    if field and request.sources:
        arguments[field] = request.sources[0]
    if request.since and "since" in inputs:
        arguments["since"] = request.since


def _search_arguments(request: SearchQuery, inputs: set[str]) -> dict[str, Any]:
    arguments: dict[str, Any] = {"query": request.query}
    _filter_arguments(arguments, request, inputs)
    if request.page_size and "page_size" in inputs:
        arguments["page_size"] = request.page_size
    if request.page_token:
        arguments["page_token"] = request.page_token
    return arguments


def _answer_arguments(request: AnswerQuery, inputs: set[str]) -> dict[str, Any]:
    arguments: dict[str, Any] = {"query": request.query}
    _filter_arguments(arguments, request, inputs)
    return arguments


def _query_of(arguments: dict[str, Any], tool: str) -> str:
    query = arguments.get("query")
    if query is not None and not isinstance(query, str):
        raise invalid(tool, "query must be a string")
    if not query or not query.strip():
        raise ConfigurationError("The query is empty.", hint="Say what to look for, e.g. 'create a bucket'.")
    return query.strip()


def _sources_of(arguments: dict[str, Any], tool: str) -> tuple[str, ...]:
    source = arguments.get("source")
    if source is None:
        return ()
    if not isinstance(source, str):
        raise invalid(tool, "source must be a string, e.g. adk.dev")
    site = normalize_source(source)
    return (site,) if site else ()


def _since_of(arguments: dict[str, Any], tool: str) -> str | None:
    since = arguments.get("since")
    if since is not None and not isinstance(since, str):
        raise invalid(tool, "since must be an RFC 3339 time or a date")
    return since or None


def _search_request(arguments: dict[str, Any]) -> SearchQuery:
    tool = "search_documents"
    query = _query_of(arguments, tool)
    size = arguments.get("page_size")
    if size is not None and (not isinstance(size, int) or isinstance(size, bool) or size < 1):
        raise invalid(tool, "page_size must be a positive integer")
    token = arguments.get("page_token")
    if token is not None and not isinstance(token, str):
        raise invalid(tool, "page_token must be a string")
    sources, since = _sources_of(arguments, tool), _since_of(arguments, tool)
    return SearchQuery(query, sources, since, size, token or None)


def _names_request(arguments: dict[str, Any]) -> tuple[str, ...]:
    names = arguments.get("names")
    if not isinstance(names, list) or not all(isinstance(item, str) for item in names):
        raise invalid("get_documents", "names must be a list of strings")
    return tuple(names)


def _answer_request(arguments: dict[str, Any]) -> AnswerQuery:
    tool = "answer_query"
    return AnswerQuery(_query_of(arguments, tool), _sources_of(arguments, tool), _since_of(arguments, tool))


# -- the three tools: results ↔ models --------------------------------------------------------------------


def _search_model(data: dict[str, Any], request: SearchQuery) -> SearchResults:
    results = SearchResults.from_dict(data, query=request.query)
    said = data.get("notices") if isinstance(data.get("notices"), list) else []
    results.info.notices.extend(str(notice) for notice in said if str(notice).strip())
    return results


def _search_result(results: SearchResults) -> dict[str, Any]:
    data = results.to_dict()
    if results.info.notices:
        data["notices"] = list(results.info.notices)
    return data


def _answer_result(answer: Answer) -> dict[str, Any]:
    data = answer.to_dict()
    if answer.extractive:
        data["extractive"] = True
    if answer.info.notices:
        data["notices"] = list(answer.info.notices)
    return data


_TEXT = (str, type(None))
_REFERENCE_FIELDS = ("name", "document", "uri")


def _items_check(member: str, fields: dict[str, tuple[type, ...]]) -> Callable[[dict[str, Any]], str | None]:
    """A shape check of a result holding a list of objects under ``member``, with these fields' types."""

    def check(data: dict[str, Any]) -> str | None:
        items = data.get(member)
        if items is not None and not isinstance(items, list):
            return f"{member!r} is not a list"
        for index, item in enumerate(items or ()):
            if not isinstance(item, dict):
                return f"{member}[{index}] is not an object"
            for name, types in fields.items():
                if name in item and (not isinstance(item[name], types) or isinstance(item[name], bool)):
                    return f"{member}[{index}].{name} is not a string"
        return None

    return check


def _answer_check(data: dict[str, Any]) -> str | None:
    for name in ("answerText", "answer_text"):
        if not isinstance(data.get(name), _TEXT):
            return f"{name!r} is not a string"
    references = data.get("references")
    if references is not None and not isinstance(references, list):
        return "'references' is not a list"
    for index, ref in enumerate(references or ()):
        fine = isinstance(ref, _TEXT) or (
            isinstance(ref, dict) and all(isinstance(ref.get(name), _TEXT) for name in _REFERENCE_FIELDS)
        )
        if not fine:
            return f"references[{index}] is neither a name nor an object of names"
    return None


_NEXT_PAGE = {"type": "string", "description": "Pass as page_token for the next page; absent on the last page."}
_NOTICES = {
    "type": "array",
    "items": {"type": "string"},
    "description": "One-line remarks about the results, such as a weak match.",
}
_VIEWS = "devknow_jupyter.render.views"

register(
    ToolEntry(
        name="search_documents",
        operation="search",
        definition=TOOLS["search_documents"],
        model=SearchResults,
        view=f"{_VIEWS}:SearchResultsView",
        retry_429=True,
        arguments=_search_arguments,
        request=_search_request,
        model_from=_search_model,
        result_from=_search_result,
        check=_items_check("results", {"parent": (str,), "id": (str, int), "content": (str,)}),
        local_inputs={"source": SOURCE_FILTER, **PAGING},
        local_outputs={"notices": _NOTICES, "nextPageToken": _NEXT_PAGE},
    )
)
register(
    ToolEntry(
        name="get_documents",
        operation="get",
        definition=TOOLS["get_documents"],
        model=Documents,
        view=f"{_VIEWS}:DocumentsView",
        retry_429=True,
        arguments=lambda names, inputs: {"names": list(names)},
        request=_names_request,
        model_from=lambda data, names: Documents.from_dict(data),
        result_from=lambda documents: documents.to_dict(),
        check=_items_check(
            "documents", {"name": (str,), "uri": _TEXT, "content": _TEXT, "description": _TEXT, "title": _TEXT}
        ),
    )
)
register(
    ToolEntry(
        name="answer_query",
        operation="answer",
        definition=TOOLS["answer_query"],
        model=Answer,
        view=f"{_VIEWS}:AnswerView",
        retry_429=False,  # the answer quota is small: surface it at once, so the caller falls back to search
        arguments=_answer_arguments,
        request=_answer_request,
        model_from=lambda data, request: Answer.from_dict(data, query=request.query),
        result_from=_answer_result,
        check=_answer_check,
        local_inputs={"source": SOURCE_FILTER, "since": PAGING["since"]},
        local_outputs={"notices": _NOTICES},
    )
)
