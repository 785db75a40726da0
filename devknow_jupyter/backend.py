"""The contract every backend keeps: the remote MCP transport, the REST surface and the local index alike.

A backend takes typed requests (:mod:`.contract`) and returns the models (:mod:`.models`), or raises an error
from :mod:`devknow_jupyter.errors`; its :class:`~.contract.Capabilities` say which filters, pages and
citations it applies itself (the client does or says the rest). Tool names belong to the MCP code and
``devknow serve`` (:mod:`.registry`, :mod:`.tool_backend`), never to this contract. A backend must be safe to
call from several threads. Names, batching, caching and fallbacks are the client's job, not the backend's.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

from .contract import AnswerQuery, Capabilities, SearchQuery
from .models import Answer, Documents, SearchResults

__all__ = ["Backend"]


@runtime_checkable
class Backend(Protocol):
    """What :class:`~devknow_jupyter.DevKnowClient` needs from a backend."""

    #: ``"remote"`` (an MCP server or the REST surface) or ``"local"`` (the offline index).
    kind: str
    #: Where it points, for display and cache keys; never holds a secret.
    endpoint: str

    @property
    def capabilities(self) -> Capabilities:
        """What it applies itself: site and date filters, pages, citations, and the operations it serves."""
        ...

    def search(self, request: SearchQuery) -> SearchResults:
        """One page of hits; notices the backend has beside them go in ``info.notices``."""
        ...

    def get(self, names: Sequence[str]) -> Documents:
        """The documents of ``names`` (at most 20), in request order; unknown names are a ``ToolError`` with
        ``not_found`` or a ``DocumentNotFoundError`` carrying the others."""
        ...

    def answer(self, request: AnswerQuery) -> Answer:
        """An answer grounded in the documents, with their names as references."""
        ...

    def invoke(self, operation: str, request: Any) -> Any:
        """A registry tool's ``operation`` beyond the three (see :mod:`.registry`); its model."""
        ...

    def list_tools(self) -> list[dict[str, Any]]:
        """The tools it offers, as ``tools/list`` gives them (for display: the client never reads names)."""
        ...

    def details(self) -> dict[str, Any]:
        """What ``status()`` shows beyond the capabilities (the MCP era and version, a hint), possibly empty."""
        ...

    def close(self) -> None:
        """Release connections and end any session. Safe to call twice."""
        ...
