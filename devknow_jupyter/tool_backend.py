"""The typed backend contract over MCP tools: what every backend that speaks in tool calls shares.

A subclass supplies ``call_tool(name, arguments)`` and ``list_tools()`` (the MCP transport, the in-process
test backends, an old-style backend of a user's, wrapped by :func:`typed_backend`); :class:`ToolBackend`
turns each typed request into the registry tool's arguments, and each result into its model. Its
:attr:`~ToolBackend.capabilities` come from the server's input schemas: a ``filter`` argument (AIP-160) means
any hosts and dates, a ``source``/``data_source``/``site`` argument one site, ``since`` dates, ``page_size``
and ``page_token`` pages. This module and the registry are where tool names meet the typed contract.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .contract import AnswerQuery, Capabilities, SearchQuery
from .errors import ToolError
from .models import Answer, Documents, SearchResults
from .registry import REGISTRY, entry_for, source_field

__all__ = ["LegacyBackend", "ToolBackend", "capabilities_from_tools", "typed_backend"]


def _inputs(tools: Sequence[dict[str, Any]], name: str) -> set[str] | None:
    for item in tools:
        if item.get("name") == name:
            return set((item.get("inputSchema") or {}).get("properties") or {})
    return None


def _sites(inputs: set[str]) -> str:
    return "hosts" if "filter" in inputs else "one" if source_field(inputs) else "none"


def capabilities_from_tools(tools: Sequence[dict[str, Any]]) -> Capabilities:
    """What a server whose ``tools/list`` gave ``tools`` applies itself, read from the input schemas."""
    search = _inputs(tools, "search_documents") or set()
    answer = _inputs(tools, "answer_query") or set()
    offered = {entry.operation for entry in REGISTRY.values() if _inputs(tools, entry.name) is not None}
    return Capabilities(
        search_sites=_sites(search),
        search_dates=bool({"filter", "since"} & search),
        paging="page_size" in search or "page_token" in search,
        answer_sites=_sites(answer),
        answer_dates=bool({"filter", "since"} & answer),
        citations=False,
        operations=frozenset(offered),
    )


class ToolBackend:
    """The typed contract (``search``, ``get``, ``answer``, ``invoke``, ``capabilities``) over tool calls."""

    def call_tool(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:  # pragma: no cover - abstract
        """Call tool ``name``; its structured result, or a ``DevKnowError``."""
        raise NotImplementedError

    def list_tools(self) -> list[dict[str, Any]]:  # pragma: no cover - abstract
        """The server's tools, as ``tools/list`` gives them."""
        raise NotImplementedError

    @property
    def capabilities(self) -> Capabilities:
        """What the server applies itself, from its tools' schemas (asked once; again after a failure)."""
        return capabilities_from_tools(self._tool_list())

    def details(self) -> dict[str, Any]:
        """What ``status()`` shows of this backend beyond its capabilities: its protocol."""
        return {"protocol": "mcp"}

    def search(self, request: SearchQuery) -> SearchResults:
        """One page of hits for ``request``."""
        return self.invoke("search", request)

    def get(self, names: Sequence[str]) -> Documents:
        """The documents of ``names`` (at most 20), in request order."""
        return self.invoke("get", tuple(names))

    def answer(self, request: AnswerQuery) -> Answer:
        """An answer to ``request``'s question."""
        return self.invoke("answer", request)

    def invoke(self, operation: str, request: Any) -> Any:
        """The registry tool serving ``operation``, called with ``request``; its model."""
        entry = entry_for(operation=operation)
        if entry is None:
            raise ToolError(f"No tool serves {operation!r}.", tool=operation)
        # The schema matters only for filters and page sizes (which the client sends after asking capabilities).
        wanted = any(getattr(request, field, None) for field in ("sources", "since", "page_size"))
        inputs = (_inputs(self._tool_list(), entry.name) or set()) if wanted else set()
        return entry.model_from(self.call_tool(entry.name, entry.arguments(request, inputs)), request)

    def _tool_list(self) -> list[dict[str, Any]]:
        """The server's tools, asked once (a failure is not kept: the next call asks again)."""
        tools = self.__dict__.get("_tools_seen")
        if tools is None:
            tools = self.__dict__["_tools_seen"] = self.list_tools()
        return tools


class LegacyBackend(ToolBackend):
    """An old-style backend (``call_tool``/``list_tools`` only) behind the typed contract. Deprecated: give a
    backend ``search``/``get``/``answer`` (or subclass :class:`ToolBackend`)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.kind = inner.kind
        self.endpoint = inner.endpoint

    def call_tool(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """The wrapped backend's tool call."""
        return self.inner.call_tool(name, arguments)

    def list_tools(self) -> list[dict[str, Any]]:
        """The wrapped backend's tools."""
        return self.inner.list_tools()

    def close(self) -> None:
        """Close the wrapped backend."""
        self.inner.close()


def typed_backend(backend: Any) -> Any:
    """``backend`` itself when it keeps the typed contract, else wrapped in :class:`LegacyBackend`."""
    if hasattr(backend, "search") and hasattr(backend, "capabilities"):
        return backend
    return LegacyBackend(backend)
