"""The contract every backend keeps: the remote MCP transport and the local index alike.

A backend calls one tool and returns its structured result (the service's JSON shape as a dict), or
raises an error from :mod:`devknow_jupyter.errors`. It must be safe to call from several threads.
Names, batching, caching and result types are the client's job, not the backend's.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

__all__ = ["Backend"]


@runtime_checkable
class Backend(Protocol):
    """What :class:`~devknow_jupyter.DevKnowClient` needs from a backend."""

    #: ``"remote"`` (an MCP server) or ``"local"`` (the offline index).
    kind: str
    #: Where it points, for display and cache keys; never holds a secret.
    endpoint: str

    def call_tool(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """Call tool ``name`` and return its structured result, or raise a ``DevKnowError``."""
        ...

    def list_tools(self) -> list[dict[str, Any]]:
        """The tools the server offers, as ``tools/list`` returns them (name, schemas, annotations)."""
        ...

    def close(self) -> None:
        """Release connections and end any session. Safe to call twice."""
        ...
