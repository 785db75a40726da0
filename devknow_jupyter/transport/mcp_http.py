"""``McpHttpBackend``: the Developer Knowledge tools over MCP Streamable HTTP, on one ``httpx.Client``.

Layers, bottom up (one class each):

1. :class:`~.exchange.HttpExchange`: one HTTP exchange. Same-origin 307/308 redirects, a JSON or SSE reply,
   server pings answered (at most :data:`~.budget.MAX_SERVER_REQUESTS` a call), Ctrl-C turned into a cancel.
   Bodies and events are bounded while read (``max_reply_bytes``, :mod:`.decode`, :mod:`.sse`). After an SSE
   reply the stream's end is read briefly, so the connection stays alive (:mod:`.keepalive`).
2. :class:`~.era.Retrying`: retries. Connect errors, 502/503/504 and (for search/get only) 429, with capped
   backoff and ``Retry-After``; one re-send when an event stream ends without our reply. All within the
   call's one deadline (:mod:`.budget`): every exchange gets at most the time left.
3. :class:`~.era.EraSession`: the era. Discovered once (``server/discover`` first, ``initialize`` when the
   server is of the handshake era), then every request gets its era's envelope; an expired session is
   renewed once.
4. :class:`McpHttpBackend` (``call_tool`` / ``list_tools`` / ``close``): the tool calls, and the credentials;
   the typed :class:`~devknow_jupyter.backend.Backend` contract over them comes from
   :class:`~devknow_jupyter.tool_backend.ToolBackend` (requests to arguments by the tool registry).

The protocol rules are the MCP specification's Streamable HTTP transport. The key travels only in a header (one found
in the URL is moved there); it is registered with :func:`~devknow_jupyter.errors.register_secret` so no
message can show it.
"""

from __future__ import annotations

import os
import threading
import time
from typing import Any
from urllib.parse import urlsplit

import httpx

from .._version import __version__
from ..errors import ConfigurationError, ProtocolError, register_secret, split_url_credentials
from ..tool_backend import ToolBackend
from . import wire
from .budget import CallBudget
from .decode import MAX_REPLY_BYTES
from .encodings import ACCEPT_ENCODING
from .era import EraSession, Retrying
from .exchange import HttpExchange
from .replies import tool_result
from .retry import RetryPolicy

__all__ = ["McpHttpBackend"]

_MAX_TOOL_PAGES = 50
_SECRET_HEADERS = frozenset({"x-goog-api-key", "authorization", "proxy-authorization", "cookie"})


class McpHttpBackend(ToolBackend):
    """The remote backend: an MCP Streamable HTTP client for the Developer Knowledge tools.

    Thread-safe: calls from several threads share one connection pool; the era is discovered (and a
    handshake-era session opened) once, under a lock.

    Args:
        url: The MCP endpoint, e.g. ``https://developerknowledge.googleapis.com/mcp``.
        api_key: Sent in ``X-Goog-Api-Key`` on every request (never in the URL: a key found in ``url``,
            as userinfo or a ``key=`` parameter, is moved to this header). Surrounding whitespace is dropped.
        access_token: An OAuth token, sent as ``Authorization: Bearer``.
        timeout: Seconds one call may take in all: discovery, retries, backoff and ``Retry-After`` waits,
            and reading the reply (however slowly it drips, however many pings and notifications come
            first). Each HTTP read gets at most the time left; past it, ``RequestTimeout``.
        connect_timeout: Seconds to wait for a connection (within ``timeout``).
        headers: Extra headers for every request.
        http_transport: An ``httpx`` transport (tests, custom proxies). Environment proxies and
            ``SSL_CERT_FILE`` apply only without one, as httpx does.
        backoff: Seconds before the first retry (doubling, with jitter, capped).
        retry: A full :class:`~devknow_jupyter.transport.retry.RetryPolicy` instead of ``backoff``.
        modern_versions: The modern protocol versions to offer, most preferred first.
        max_reply_bytes: The largest JSON reply body, SSE line or SSE event read, in bytes (default
            :data:`~devknow_jupyter.transport.decode.MAX_REPLY_BYTES`, 32 MiB); past it, a ``ProtocolError``
            naming the limit, and the request is not sent again. ``None`` disables the limit.
    """

    kind = "remote"

    def __init__(
        self,
        url: str,
        *,
        api_key: str | None = None,
        access_token: str | None = None,
        timeout: float = 30.0,
        connect_timeout: float = 10.0,
        headers: dict[str, str] | None = None,
        http_transport: Any = None,
        backoff: float = 0.5,
        retry: RetryPolicy | None = None,
        modern_versions: tuple[str, ...] | list[str] | None = None,
        max_reply_bytes: int | None = MAX_REPLY_BYTES,
    ) -> None:
        register_secret(api_key)  # first, so that the URL loses it under any parameter name
        register_secret(access_token)
        url, url_key, url_token = split_url_credentials(url)
        if (url_key and (api_key or "").strip() not in ("", url_key)) or (
            url_token and (access_token or "").strip() not in ("", url_token)
        ):
            raise ConfigurationError("The endpoint URL holds a credential and another one was given; pass one only.")
        self.endpoint = url
        self._host = urlsplit(url).netloc  # named in timeout messages
        self._api_key = (api_key or "").strip() or url_key
        self._access_token = (access_token or "").strip() or url_token
        register_secret(self._api_key)
        register_secret(self._access_token)
        self._user_credentials = any(name.lower() in _SECRET_HEADERS for name in headers or {})
        timeout, connect_timeout = float(timeout), float(connect_timeout)
        http = httpx.Client(
            headers=self._default_headers(headers),
            timeout=httpx.Timeout(connect=connect_timeout, read=timeout, write=timeout, pool=timeout),
            follow_redirects=False,  # followed by hand: same origin only, so the key never leaves it
            transport=http_transport,
        )
        self._exchange = HttpExchange(
            http, url, timeout=timeout, connect_timeout=connect_timeout, max_reply_bytes=max_reply_bytes
        )
        retrying = Retrying(self._exchange, retry or RetryPolicy(base=backoff))
        self._session = EraSession(retrying, tuple(modern_versions or wire.MODERN_VERSIONS), self._credentials)
        self._tools_lock = threading.Lock()
        self._tools: list[dict[str, Any]] | None = None
        self._tools_expire: float | None = None

    def _default_headers(self, headers: dict[str, str] | None) -> dict[str, str]:
        """Every request's headers: ours, the caller's (their secrets registered), then the credentials."""
        default_headers = {
            "User-Agent": f"devknow-jupyter/{__version__} httpx/{httpx.__version__}",
            "Accept-Encoding": ACCEPT_ENCODING,  # only what .encodings undoes in bounded pieces
        }
        for name, value in (headers or {}).items():
            if name.lower() in _SECRET_HEADERS:
                register_secret(value.split(" ", 1)[-1])
                register_secret(value)
            default_headers[name] = value
        if self._api_key:
            default_headers["X-Goog-Api-Key"] = self._api_key
        if self._access_token:
            default_headers["Authorization"] = f"Bearer {self._access_token}"
        return default_headers

    # -- settings and introspection ---------------------------------------------------------------

    @property
    def timeout(self) -> float:
        """Seconds one call may take in all."""
        return self._exchange.timeout

    @timeout.setter
    def timeout(self, value: float) -> None:
        self._exchange.timeout = float(value)

    @property
    def connect_timeout(self) -> float:
        """Seconds to wait for a connection (within ``timeout``)."""
        return self._exchange.connect_timeout

    @connect_timeout.setter
    def connect_timeout(self, value: float) -> None:
        self._exchange.connect_timeout = float(value)

    @property
    def max_reply_bytes(self) -> int | None:
        """The largest JSON reply body, SSE line or SSE event read, in bytes; ``None`` for no limit."""
        return self._exchange.max_reply_bytes

    @max_reply_bytes.setter
    def max_reply_bytes(self, value: int | None) -> None:
        self._exchange.max_reply_bytes = value

    @property
    def retry(self) -> RetryPolicy:
        """When to retry and how long to wait."""
        return self._session.retrying.retry

    @retry.setter
    def retry(self, value: RetryPolicy) -> None:
        self._session.retrying.retry = value

    @property
    def era(self) -> str | None:
        """``"modern"`` (2026-07-28, no session) or ``"handshake"`` (initialize + session); None until known."""
        return self._session.state.era

    @property
    def protocol_version(self) -> str | None:
        """The protocol version in use, once discovered."""
        return self._session.state.version

    @property
    def session_id(self) -> str | None:
        """The handshake-era session id, if the server issued one (for diagnostics and tests; not a secret
        of the user's, but not shown anywhere either)."""
        return self._session.state.session_id

    def details(self) -> dict[str, Any]:
        """The era and protocol version, once the server told them (None until then)."""
        return {"protocol": "mcp", "era": self.era, "protocol_version": self.protocol_version}

    def __repr__(self) -> str:
        era = f" era={self.era} version={self.protocol_version}" if self.era else ""
        return f"<McpHttpBackend endpoint={self.endpoint!r}{era}{' closed' if self._session.closed else ''}>"

    # -- the Backend contract ---------------------------------------------------------------------

    def call_tool(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """Call tool ``name`` and return its structured result, or raise a ``DevKnowError``."""
        params = {"name": name, "arguments": dict(arguments or {})}
        budget = self._budget()
        extra = lambda: self._param_headers(name, params)  # noqa: E731
        result = self._session.rpc("tools/call", params, budget, tool=name, extra=extra)
        return tool_result(result, tool=name)

    def list_tools(self) -> list[dict[str, Any]]:
        """The server's tools (``tools/list``, all pages), cached for this backend's life.

        A positive ``ttlMs`` hint from a modern server bounds the cache. Tools whose ``x-mcp-header``
        annotations are invalid are dropped, as the spec asks.
        """
        with self._tools_lock:
            fresh = self._tools_expire is None or time.monotonic() < self._tools_expire
            if self._tools is not None and fresh:
                return [dict(tool) for tool in self._tools]
            tools: list[dict[str, Any]] = []
            params: dict[str, Any] = {}
            result: dict[str, Any] = {}
            budget = self._budget()  # one deadline for all the pages
            for _ in range(_MAX_TOOL_PAGES):
                result = self._session.rpc("tools/list", params, budget)
                page = result.get("tools") if isinstance(result, dict) else None
                if not isinstance(page, list):
                    raise ProtocolError("tools/list: the result has no list of tools.")
                tools.extend(tool for tool in page if isinstance(tool, dict) and isinstance(tool.get("name"), str))
                cursor = result.get("nextCursor")
                if not cursor:
                    break
                params = {"cursor": cursor}
            tools = [tool for tool in tools if wire.param_headers(tool.get("inputSchema"), {}) is not None]
            ttl = result.get("ttlMs")
            ttl_ok = isinstance(ttl, (int, float)) and not isinstance(ttl, bool) and ttl > 0
            self._tools_expire = time.monotonic() + ttl / 1000 if ttl_ok else None
            self._tools = tools
            return [dict(tool) for tool in tools]

    def close(self) -> None:
        """End the session (handshake era: ``DELETE`` with its id) and close the connections. Idempotent."""
        state = self._session.shut()
        if state is None:
            return
        try:
            if state.era == "handshake":
                self._session.end_session(state)
        finally:
            self._exchange.close()

    def __enter__(self) -> McpHttpBackend:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- helpers ----------------------------------------------------------------------------------

    def _budget(self) -> CallBudget:
        return CallBudget(self.timeout, self._host)

    def _credentials(self) -> str | None:
        """What credentials were sent and where they came from, for auth messages (never the secret)."""
        if self._access_token:
            return "the access token"
        if self._api_key:
            for variable in ("DEVKNOW_API_KEY", "GOOGLE_API_KEY"):
                if os.environ.get(variable, "").strip() == self._api_key:
                    return f"the API key from {variable}"
            return "the API key passed as api_key="
        return "the credentials in headers=" if self._user_credentials else None

    def _param_headers(self, name: str, params: dict[str, Any]) -> dict[str, str]:
        # Mcp-Param-* mirrors need the tool's schema; use it when the tool list is at hand.
        for tool in self._tools or ():
            if tool.get("name") == name:
                return wire.param_headers(tool.get("inputSchema"), params["arguments"]) or {}
        return {}
