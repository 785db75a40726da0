"""The team service's backend: the live service behind one key, one cache for every user, the packs offline.

:class:`UpstreamBackend` forwards each tool call to an upstream MCP endpoint with the server's own key
(users never send or see it), keeps what came back in one cache shared by all users (a second user's same
search costs the upstream nothing), and answers from the server's packs and folders when the upstream can't
be reached, with the same notice a notebook's offline fallback gives. A reply the upstream did give (a 401,
a quota, a tool error) is passed on as it is, never replaced.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from ..cache import ResultCache, cache_key
from ..errors import DevKnowError
from ..fallback import fallback_notice, is_unreachable
from ..registry import REGISTRY, tool_definitions

__all__ = ["UpstreamBackend"]

#: Tools whose results may be served from the cache: the read-only ones (all the registry's so far).
def _cacheable(name: str) -> bool:
    entry = REGISTRY.get(name)
    return entry is not None and bool(entry.definition.get("annotations", {}).get("readOnlyHint"))



class UpstreamBackend:
    """``devknow serve``'s tool calls (``call_tool``/``list_tools``, the registry's tools) forwarded to ``upstream``,
    with ``fallback`` for when it is unreachable.

    Args:
        upstream: The live service's backend (an ``McpHttpBackend`` holding the server's key).
        fallback: The local backend of the server's packs and folders.
        cache: The cache every user's calls share.
        on_event: Told ``"cache_hit"``, ``"upstream_error"`` or ``"fallback"`` (with the tool) for the metrics.
    """

    kind = "remote"

    def __init__(
        self,
        upstream: Any,
        fallback: Any,
        *,
        cache: ResultCache | None = None,
        on_event: Callable[[str, str], None] | None = None,
    ) -> None:
        self.upstream = upstream
        self.fallback = fallback
        self.endpoint = upstream.endpoint
        self.cache = cache if cache is not None else ResultCache(max_entries=4096, ttl=3600)
        self._on_event = on_event or (lambda event, tool: None)
        self._ready = threading.Event()
        self.last_upstream_error: str | None = None

    @property
    def index(self) -> Any:
        """The fallback's index (what ``devknow serve`` counts at start)."""
        return self.fallback.index

    @property
    def ready(self) -> bool:
        """Whether the upstream has answered once."""
        return self._ready.is_set()

    def probe(self) -> bool:
        """Ask the upstream for its tools; True (and ready from then on) when it answered."""
        try:
            self.upstream.list_tools()
        except DevKnowError as exc:
            self.last_upstream_error = str(exc)
            return False
        self._ready.set()
        return True

    def probe_until_ready(self, stop: threading.Event, every: float = 5.0) -> None:
        """Probe in the background until the upstream answers or ``stop`` is set (``/readyz`` waits for it)."""
        while not stop.is_set() and not self.probe():
            stop.wait(every)

    def list_tools(self) -> list[dict[str, Any]]:
        """The service's tools as the upstream takes them (so clients filter sites themselves, as they do for
        Google's), with the local shapes' ``notices`` among the results (the fallback's notice goes there)."""
        local = {tool["name"]: tool for tool in tool_definitions(local=True)}
        return [{**tool, "outputSchema": local[tool["name"]]["outputSchema"]} for tool in tool_definitions()]

    def call_tool(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        key = cache_key(("upstream", self.endpoint), name, arguments)
        if _cacheable(name):
            found = self.cache.get(key)
            if found is not None:
                self._on_event("cache_hit", name)
                return found
        try:
            result = self.upstream.call_tool(name, arguments)
        except DevKnowError as exc:
            self._on_event("upstream_error", name)
            if not is_unreachable(exc):
                raise
            self._on_event("fallback", name)
            result = dict(self.fallback.call_tool(name, arguments))
            if name != "get_documents":
                result["notices"] = [fallback_notice(exc), *(result.get("notices") or [])]
            return result  # not cached: the upstream's answer is wanted once it is back
        self._ready.set()
        if _cacheable(name):
            self.cache.set(key, result)
        return result

    def close(self) -> None:
        for backend in (self.upstream, self.fallback):
            backend.close()

