"""The remote backend: MCP Streamable HTTP over ``httpx`` (synchronous; no MCP SDK needed).

``McpHttpBackend`` is what :class:`~devknow_jupyter.DevKnowClient` builds for an ``http(s)`` endpoint.
``httpx`` is imported only inside this package, and no httpx type appears in a public signature, so a
move to another HTTP library stays a change to this package alone.

Modules: ``mcp_http`` (the backend: the Backend contract, credentials), ``era`` (retries; eras and sessions),
``exchange`` (one HTTP exchange: redirects, JSON or SSE replies, pings, cancels), ``sse`` (reading one reply from an
event stream, bounded), ``decode`` (reply bytes to JSON: size limits, odd JSON, lone surrogates),
``budget`` (one deadline per call), ``keepalive`` (reading a stream's end briefly, so its connection is
reused; every read within the deadline), ``wire`` (versions, headers and envelopes), ``replies``
(results, their shapes, and error mapping), ``retry`` (when to retry and how long to wait).
"""

from __future__ import annotations

from .mcp_http import McpHttpBackend
from .retry import RetryPolicy

__all__ = ["McpHttpBackend", "RetryPolicy"]
