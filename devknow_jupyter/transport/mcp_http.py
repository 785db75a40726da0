"""``McpHttpBackend``: the Developer Knowledge tools over MCP Streamable HTTP, on one ``httpx.Client``.

Layers, bottom up (each a method group below):

1. ``_post``: one HTTP exchange. Same-origin 307/308 redirects, a JSON or SSE reply, server pings
   answered (at most :data:`~.budget.MAX_SERVER_REQUESTS` a call), Ctrl-C turned into a cancel. Bodies and
   events are bounded while read (``max_reply_bytes``, :mod:`.decode`, :mod:`.sse`). After an SSE reply the
   stream's end is read briefly, so the connection stays alive (:mod:`.keepalive`).
2. ``_roundtrip``: retries. Connect errors, 502/503/504 and (for search/get only) 429, with capped
   backoff and ``Retry-After``; one re-send when an event stream ends without our reply. All within the
   call's one deadline (:mod:`.budget`): every exchange gets at most the time left.
3. ``_rpc``: the era. Discovered once (``server/discover`` first, ``initialize`` when the server is of
   the handshake era), then every request gets its era's envelope; an expired session is renewed once.
4. ``call_tool`` / ``list_tools`` / ``close``: the :class:`~devknow_jupyter.backend.Backend` contract.

The protocol rules come from ``shared/notes/mcp-protocol.md``. The key travels only in a header (one found
in the URL is moved there); it is registered with :func:`~devknow_jupyter.errors.register_secret` so no
message can show it.
"""

from __future__ import annotations

import itertools
import json
import logging
import os
import ssl
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import httpx

from .._version import __version__
from ..errors import (
    ConfigurationError,
    DevKnowError,
    ProtocolError,
    TransportError,
    register_secret,
    split_url_credentials,
)
from . import keepalive, wire
from .budget import CallBudget
from .decode import MAX_REPLY_BYTES, parse_json, read_capped
from .replies import error_member, http_failure, rpc_failure, tool_result
from .retry import RetryPolicy, parse_retry_after
from .sse import read_reply

__all__ = ["McpHttpBackend"]

log = logging.getLogger("devknow_jupyter.transport")

_ACCEPT = "application/json, text/event-stream"
_MAX_REDIRECTS = 5
_MAX_ERROR_BODY = 64 * 1024
_MAX_TOOL_PAGES = 50
_SECRET_HEADERS = frozenset({"x-goog-api-key", "authorization", "proxy-authorization", "cookie"})


@dataclass(frozen=True)
class _State:
    """What was discovered about the server: its era, the version in use and the session (handshake era)."""

    era: str | None = None
    version: str | None = None
    session_id: str | None = None


@dataclass
class _Reply:
    """One HTTP exchange's outcome, read completely."""

    status: int
    body: Any  # the parsed JSON-RPC message (or error body), or None
    text: str = ""  # the start of a non-JSON body, for messages
    retry_after: float | None = None
    session_id: str | None = None


class _StreamEnded(Exception):
    """Internal: the event stream ended without the reply (re-sent once by ``_roundtrip``)."""


class McpHttpBackend:
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
        url, url_key, url_token = split_url_credentials(url)
        if (url_key and (api_key or "").strip() not in ("", url_key)) or (
            url_token and (access_token or "").strip() not in ("", url_token)
        ):
            raise ConfigurationError("The endpoint URL holds a credential and another one was given; pass one only.")
        self.endpoint = url
        self._url = url
        self._api_key = (api_key or "").strip() or url_key
        self._access_token = (access_token or "").strip() or url_token
        self.max_reply_bytes = max_reply_bytes
        register_secret(self._api_key)
        register_secret(self._access_token)
        self.timeout = float(timeout)
        self.connect_timeout = float(connect_timeout)
        self.retry = retry or RetryPolicy(base=backoff)
        self._modern_versions = tuple(modern_versions or wire.MODERN_VERSIONS)
        default_headers = {"User-Agent": f"devknow-jupyter/{__version__} httpx/{httpx.__version__}"}
        for name, value in (headers or {}).items():
            if name.lower() in _SECRET_HEADERS:
                register_secret(value.split(" ", 1)[-1])
                register_secret(value)
            default_headers[name] = value
        self._user_credentials = any(name.lower() in _SECRET_HEADERS for name in headers or {})
        if self._api_key:
            default_headers["X-Goog-Api-Key"] = self._api_key
        if self._access_token:
            default_headers["Authorization"] = f"Bearer {self._access_token}"
        self._http = httpx.Client(
            headers=default_headers,
            timeout=httpx.Timeout(
                connect=self.connect_timeout, read=self.timeout, write=self.timeout, pool=self.timeout
            ),
            follow_redirects=False,  # followed by hand: same origin only, so the key never leaves it
            transport=http_transport,
        )
        self._ids = itertools.count(1)
        self._ids_lock = threading.Lock()
        self._connect_lock = threading.RLock()
        self._tools_lock = threading.Lock()
        self._state = _State()
        self._tools: list[dict[str, Any]] | None = None
        self._tools_expire: float | None = None
        self._closed = False
        # How long to wait for an event stream's end after our reply. Short once a server left a stream
        # open, so such a server costs the full wait once, not on every call; a prompt end restores it.
        self._drain_seconds = keepalive.DRAIN_SECONDS

    # -- introspection ----------------------------------------------------------------------------

    @property
    def era(self) -> str | None:
        """``"modern"`` (2026-07-28, no session) or ``"handshake"`` (initialize + session); None until known."""
        return self._state.era

    @property
    def protocol_version(self) -> str | None:
        """The protocol version in use, once discovered."""
        return self._state.version

    @property
    def session_id(self) -> str | None:
        """The handshake-era session id, if the server issued one (for diagnostics and tests; not a secret
        of the user's, but not shown anywhere either)."""
        return self._state.session_id

    def __repr__(self) -> str:
        era = f" era={self.era} version={self.protocol_version}" if self.era else ""
        return f"<McpHttpBackend endpoint={self.endpoint!r}{era}{' closed' if self._closed else ''}>"

    # -- the Backend contract ---------------------------------------------------------------------

    def call_tool(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """Call tool ``name`` and return its structured result, or raise a ``DevKnowError``."""
        params = {"name": name, "arguments": dict(arguments or {})}
        budget = self._budget()
        extra = lambda: self._param_headers(name, params)  # noqa: E731
        result = self._rpc("tools/call", params, budget, tool=name, extra=extra)
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
                result = self._rpc("tools/list", params, budget)
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
        with self._connect_lock:
            if self._closed:
                return
            self._closed = True
            state, self._state = self._state, _State()
        try:
            if state.era == "handshake":
                self._end_session(state)
        finally:
            self._http.close()

    def __enter__(self) -> McpHttpBackend:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- layer 3: eras, sessions ------------------------------------------------------------------

    def _budget(self) -> CallBudget:
        return CallBudget(self.timeout, urlsplit(self._url).netloc)

    def _rpc(
        self,
        method: str,
        params: dict[str, Any] | None,
        budget: CallBudget,
        *,
        tool: str | None = None,
        extra: Callable[[], dict[str, str]] | None = None,
    ) -> Any:
        """Send one request in the server's era and return its ``result``, or raise the mapped error."""
        if self._closed:
            raise ConfigurationError("This connection to the MCP server is closed; create a new client.")
        state = self._connected(budget)
        renewed = reprobed = False
        while True:
            headers = extra() if extra is not None and state.era == "modern" else {}
            reply = self._roundtrip(state, method, params, budget, tool=tool, headers=headers)
            if reply.status == 404 and state.era == "handshake" and state.session_id is not None:
                if renewed:
                    raise ProtocolError(f"{self.endpoint} lost the MCP session again right after a new one started.")
                log.debug("session expired (404); initializing again")
                state, renewed = self._renew(state, budget), True
                continue
            error = error_member(reply.body)
            if state.era == "modern" and error and error.get("code") == wire.UNSUPPORTED_VERSION and not reprobed:
                state, reprobed = self._rediscover(state, budget), True  # the server changed its versions
                continue
            return self._result(reply, method, tool)

    def _connected(self, budget: CallBudget) -> _State:
        state = self._state
        if state.era is not None:
            return state
        with self._connect_lock:
            if self._state.era is None:
                self._state = self._discover(budget)
                log.debug("era %s, version %s", self._state.era, self._state.version)
            return self._state

    def _renew(self, stale: _State, budget: CallBudget) -> _State:
        with self._connect_lock:
            if self._state == stale:  # not renewed meanwhile by another thread
                self._state = _State()
                self._state = self._initialize(budget)
            return self._connected(budget)

    def _rediscover(self, stale: _State, budget: CallBudget) -> _State:
        with self._connect_lock:
            if self._state == stale:
                self._state = _State()
            return self._connected(budget)

    def _discover(self, budget: CallBudget) -> _State:
        """Find the server's era the spec's way: a modern ``server/discover`` first, else ``initialize``.

        Only a well-formed MCP answer is an era verdict: 401/403/429/5xx and network errors raise.
        """
        tried: list[str] = []
        version = self._modern_versions[0]
        while True:
            tried.append(version)
            reply = self._roundtrip(_State("modern", version), "server/discover", {}, budget, tool=None)
            error = error_member(reply.body)
            if reply.status < 300 and isinstance(reply.body, dict) and isinstance(reply.body.get("result"), dict):
                supported = _strings(reply.body["result"].get("supportedVersions")) or [version]
                mutual = [v for v in self._modern_versions if v in supported]
                if mutual:
                    return _State("modern", version if version in mutual else mutual[0])
                return self._initialize(budget)  # a discover-answering server that offers only handshake versions
            if reply.status in (401, 403, 429) or reply.status >= 500 or 300 <= reply.status < 400:
                raise self._failure(reply, "server/discover", None)
            code = error.get("code") if error else None
            if code == wire.UNSUPPORTED_VERSION:
                data = error.get("data") if isinstance(error.get("data"), dict) else {}
                supported = _strings(data.get("supported"))
                mutual = [v for v in self._modern_versions if v in supported and v not in tried]
                if mutual:
                    version = mutual[0]
                    continue
                if supported and not any(v in wire.KNOWN_HANDSHAKE_VERSIONS for v in supported):
                    raise ProtocolError(
                        f"{self.endpoint} speaks MCP {', '.join(supported)} only; this client speaks "
                        f"{', '.join((*self._modern_versions, *wire.HANDSHAKE_VERSIONS))}. Update devknow-jupyter."
                    )
            elif code in (wire.HEADER_MISMATCH, -32021) and reply.status == 400:
                raise ProtocolError(f"{self.endpoint} refused our request envelope: {error.get('message')}")
            return self._initialize(budget)  # 400 "Unsupported protocol version", 404/-32601, 405, …: handshake era

    def _initialize(self, budget: CallBudget) -> _State:
        """The handshake: ``initialize`` (no session, no version header), then ``notifications/initialized``."""
        reply = self._roundtrip(_State("handshake"), "initialize", wire.initialize_params(), budget, tool=None)
        result = self._result(reply, "initialize", None)
        version = result.get("protocolVersion") if isinstance(result, dict) else None
        version = version if isinstance(version, str) else None
        state = _State("handshake", version, reply.session_id)
        if version not in wire.HANDSHAKE_VERSIONS:
            self._end_session(state)
            raise ProtocolError(
                f"{self.endpoint} chose MCP version {version!r}, which this client does not speak "
                f"({', '.join(wire.HANDSHAKE_VERSIONS)})."
            )
        notified = self._roundtrip(state, "notifications/initialized", None, budget, tool=None, notify=True)
        if notified.status >= 300:
            raise self._failure(notified, "notifications/initialized", None)
        return state

    def _end_session(self, state: _State) -> None:
        """``DELETE`` the session, if there is one; any answer (200, 404, 405) or failure is fine."""
        if state.session_id is None:
            return
        try:
            self._http.delete(
                self._url,
                headers=wire.handshake_headers(state.version, state.session_id),
                timeout=httpx.Timeout(min(5.0, self.timeout), connect=min(5.0, self.connect_timeout)),
            )
        except httpx.HTTPError as exc:  # the session times out on its own; nothing to do
            log.debug("DELETE of the session failed: %s", type(exc).__name__)

    def _result(self, reply: _Reply, method: str, tool: str | None) -> Any:
        if reply.status >= 300:
            raise self._failure(reply, method, tool)
        body = reply.body
        if not isinstance(body, dict) or body.get("jsonrpc") != "2.0":
            raise ProtocolError(f"{method}: the reply is not a JSON-RPC 2.0 message.")
        if isinstance(body.get("error"), dict):
            raise rpc_failure(body["error"], tool=tool, method=method)
        if "result" not in body:
            raise ProtocolError(f"{method}: the reply has neither a result nor an error.")
        return body["result"]

    def _failure(self, reply: _Reply, method: str, tool: str | None) -> DevKnowError:
        return http_failure(
            reply.status,
            reply.body,
            text=reply.text,
            retry_after=reply.retry_after,
            endpoint=self.endpoint,
            method=method,
            tool=tool,
            credentials=self._credentials(),
        )

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

    # -- layer 2: envelopes and retries ------------------------------------------------------------

    def _next_id(self) -> int:
        with self._ids_lock:
            return next(self._ids)

    def _envelope(
        self, state: _State, method: str, params: dict[str, Any] | None, *, notify: bool
    ) -> tuple[dict[str, Any], dict[str, str]]:
        if state.era == "modern":
            assert state.version is not None
            name = params.get("name") if method == "tools/call" and params else None
            body = wire.modern_params(state.version, params)
            headers = wire.modern_headers(state.version, method, name)
        else:
            body = params
            headers = wire.handshake_headers(state.version, state.session_id)
        if notify:
            return wire.notification(method, body), headers
        return wire.request(self._next_id(), method, body), headers

    def _roundtrip(
        self,
        state: _State,
        method: str,
        params: dict[str, Any] | None,
        budget: CallBudget,
        *,
        tool: str | None,
        headers: dict[str, str] | None = None,
        notify: bool = False,
    ) -> _Reply:
        """One request with retries, within ``budget``: returns the final reply (any status) or raises.

        A retry whose wait would end past the deadline is not made: the last failure is the answer.
        """
        attempt = 1
        resent = False
        while True:
            budget.check()
            message, envelope_headers = self._envelope(state, method, params, notify=notify)
            try:
                reply = self._post(message, {**envelope_headers, **(headers or {})}, state=state, budget=budget)
            except _StreamEnded:
                if resent:
                    raise ProtocolError(
                        f"{self.endpoint}: the event stream for {method} ended twice without the reply."
                    ) from None
                resent = True  # every call we make is idempotent, so sending it again is safe
                log.debug("event stream ended early; sending %s again", method)
                continue
            except httpx.HTTPError as exc:
                if _retryable(exc) and self.retry.may_retry(attempt):
                    delay = self.retry.delay(attempt) or 0.0
                    if budget.allows_wait(delay):
                        self._wait(delay)
                        attempt += 1
                        continue
                raise self._transport_error(exc, budget) from exc
            if reply.status >= 300 and self.retry.retries_status(reply.status, tool) and self.retry.may_retry(attempt):
                delay = self.retry.delay(attempt, reply.retry_after)
                if delay is not None and budget.allows_wait(delay):
                    log.debug("HTTP %s for %s; retrying in %.2f s", reply.status, method, delay)
                    self._wait(delay)
                    attempt += 1
                    continue
            return reply

    @staticmethod
    def _wait(seconds: float | None) -> None:
        if seconds:
            time.sleep(seconds)  # interruptible: Ctrl-C during a backoff stops the call

    # -- layer 1: one HTTP exchange ----------------------------------------------------------------

    def _timeouts(self, budget: CallBudget) -> httpx.Timeout:
        """This exchange's httpx timeouts: none longer than the time the call has left."""
        left = max(budget.remaining(), 0.001)
        return httpx.Timeout(connect=min(self.connect_timeout, left), read=left, write=left, pool=left)

    def _post(self, message: dict[str, Any], headers: dict[str, str], *, state: _State, budget: CallBudget) -> _Reply:
        """POST one JSON-RPC message and read the reply completely (following same-origin redirects)."""
        request_id = message.get("id")
        url = self._url
        all_headers = {"Content-Type": "application/json", "Accept": _ACCEPT, **headers}
        content = json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        response: httpx.Response | None = None
        try:
            for _ in range(_MAX_REDIRECTS + 1):
                request = self._http.build_request(
                    "POST",
                    url,
                    content=content,
                    headers=all_headers,
                    timeout=self._timeouts(budget),
                    extensions={"trace": keepalive.trace},
                )
                with keepalive.reads_bounded(budget.deadline):
                    response = self._http.send(request, stream=True)
                if response.status_code in (307, 308) and response.headers.get("location"):
                    target = response.url.join(response.headers["location"])
                    response.close()
                    if (target.scheme, target.host, target.port) != (
                        request.url.scheme,
                        request.url.host,
                        request.url.port,
                    ):
                        raise TransportError(
                            f"{self.endpoint} redirected to another site ({target.scheme}://{target.host}); "
                            "not followed, so that the key is not sent there. Use the final URL as the endpoint."
                        )
                    url = str(target)
                    continue
                keepalive.watch(response)
                with keepalive.reads_bounded(budget.deadline):
                    return self._read(response, request_id, state, budget)
            raise ProtocolError(f"{self.endpoint} redirected more than {_MAX_REDIRECTS} times.")
        except KeyboardInterrupt:
            if response is not None:
                response.close()
            if request_id is not None and state.era == "handshake" and message.get("method") != "initialize":
                self._cancel(request_id, state)
            raise
        finally:
            if response is not None:
                response.close()

    def _read(self, response: httpx.Response, request_id: Any, state: _State, budget: CallBudget) -> _Reply:
        """Read a reply completely: an event stream or JSON for a request, else (errors, 202s) the body."""
        status = response.status_code
        content_type = response.headers.get("content-type", "").partition(";")[0].strip().lower()
        reply = _Reply(
            status,
            None,
            retry_after=parse_retry_after(response.headers.get("retry-after")),
            session_id=response.headers.get(wire.SESSION_HEADER),
        )
        log.debug("%s %s -> %s %s", response.request.method, request_id, status, content_type or "-")
        wants_reply = request_id is not None and status < 300
        if wants_reply and content_type == "text/event-stream":
            reply.body = read_reply(
                response,
                request_id,
                lambda request: self._answer(request, state, budget),
                max_bytes=self.max_reply_bytes,
                budget=budget,
                after=self._drain(response),
            )
            if reply.body is None:
                raise _StreamEnded()
            return reply
        if wants_reply:
            if status != 202 and content_type not in ("application/json", ""):  # not worth reading
                raise ProtocolError(f"{self.endpoint} replied with {content_type}, not JSON or an event stream.")
            raw = read_capped(response, self.max_reply_bytes, budget, cut=False)
            if status == 202 or not raw:
                raise ProtocolError(f"{self.endpoint} sent no reply to a request (HTTP {status}).")
            if content_type != "application/json":
                raise ProtocolError(f"{self.endpoint} replied with no content type, not JSON or an event stream.")
            reply.body = parse_json(raw)
            self._check_id(reply.body, request_id)
            return reply
        # An error body (JSON-RPC, Google's, or text) or a notification's acknowledgement: its start is enough.
        raw = read_capped(response, _MAX_ERROR_BODY, budget, cut=True)
        try:
            reply.body = parse_json(raw) if raw else None
        except ProtocolError:
            reply.text = raw[:300].decode("utf-8", "replace")
        return reply

    def _drain(self, response: httpx.Response) -> Callable[[Any], None]:
        def after(events: Any) -> None:
            ended = keepalive.drain(response, events, seconds=self._drain_seconds)
            self._drain_seconds = keepalive.DRAIN_SECONDS if ended else keepalive.SHORT_DRAIN_SECONDS

        return after

    def _check_id(self, body: Any, request_id: Any) -> None:
        if not isinstance(body, dict):
            raise ProtocolError(f"{self.endpoint} sent a reply that is not a JSON-RPC object.")
        if body.get("id") != request_id and not (body.get("id") is None and "error" in body):
            raise ProtocolError(f"{self.endpoint} answered another request (id {body.get('id')!r}).")

    def _answer(self, request: dict[str, Any], state: _State, budget: CallBudget) -> None:
        """Reply to a request the server sent on our stream: ``ping`` gets ``{}``, anything else -32601.

        At most :data:`~.budget.MAX_SERVER_REQUESTS` a call: a server that only pings gets no more answers,
        and the call's deadline ends the wait.
        """
        if not budget.may_answer():
            log.debug("not answering %s: this call answered its share of server requests", request.get("method"))
            return
        if request.get("method") == "ping":
            reply: dict[str, Any] = {"jsonrpc": "2.0", "id": request["id"], "result": {}}
        else:
            error = {"code": wire.METHOD_NOT_FOUND, "message": f"Method not supported: {request.get('method')}"}
            reply = {"jsonrpc": "2.0", "id": request["id"], "error": error}
        self._post_quietly(reply, state, seconds=min(2.0, max(budget.remaining(), 0.001)))

    def _cancel(self, request_id: Any, state: _State) -> None:
        """Tell a handshake-era server we gave up on ``request_id`` (best effort, never raises)."""
        params = {"requestId": request_id, "reason": "interrupted"}
        self._post_quietly(wire.notification("notifications/cancelled", params), state, seconds=min(2.0, self.timeout))

    def _post_quietly(self, message: dict[str, Any], state: _State, *, seconds: float) -> None:
        headers = {
            "Content-Type": "application/json",
            "Accept": _ACCEPT,
            **wire.handshake_headers(state.version, state.session_id),
        }
        try:
            self._http.post(self._url, json=message, headers=headers, timeout=seconds)
        except httpx.HTTPError as exc:
            log.debug("could not post %s: %s", message.get("method", "a reply"), type(exc).__name__)

    def _transport_error(self, exc: httpx.HTTPError, budget: CallBudget) -> TransportError:
        """A short, useful message for an httpx failure (which never carries our headers)."""
        host = urlsplit(self._url).netloc
        reason = _reason(exc)
        if isinstance(exc, httpx.TimeoutException) and budget.remaining() <= 0.01:
            return budget.expired()  # the call's own deadline, whichever phase it cut short
        if isinstance(exc, httpx.ConnectTimeout):
            return TransportError(
                f"Could not connect to {host} within {self.connect_timeout:g} s.{_proxy_note()}", unreachable=True
            )
        if isinstance(exc, httpx.TimeoutException):
            return budget.expired()
        if isinstance(exc, httpx.ProxyError):
            return TransportError(
                f"The proxy would not connect us to {host} ({reason}); check HTTPS_PROXY, HTTP_PROXY and NO_PROXY."
            )
        if _is_tls(exc):
            return TransportError(
                f"The TLS connection to {host} failed ({reason}). Behind a corporate proxy or CA, set "
                "SSL_CERT_FILE to its certificate bundle (and HTTPS_PROXY to the proxy)."
            )
        if isinstance(exc, httpx.ConnectError):
            return TransportError(f"Could not connect to {host} ({reason}).{_proxy_note()}", unreachable=True)
        return TransportError(f"The connection to {host} failed ({reason}).")


def _strings(value: Any) -> list[str]:
    """The strings of a list the server sent (a version list), ignoring anything else it holds."""
    return [item for item in value if isinstance(item, str)] if isinstance(value, list) else []


def _retryable(exc: httpx.HTTPError) -> bool:
    """Connection failures that happened before the request went out (and are not TLS verdicts)."""
    return isinstance(exc, (httpx.ConnectError, httpx.ConnectTimeout)) and not _is_tls(exc)


def _is_tls(exc: BaseException) -> bool:
    seen: BaseException | None = exc
    for _ in range(10):
        if seen is None:
            break
        if isinstance(seen, ssl.SSLError):
            return True
        seen = seen.__cause__ or seen.__context__
    text = str(exc)
    return "SSL" in text or "CERTIFICATE" in text.upper()


def _reason(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) <= 160 else text[:159] + "…"


def _proxy_note() -> str:
    names = [n for n in ("HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY") if os.environ.get(n) or os.environ.get(n.lower())]
    return f" A proxy is configured ({', '.join(names)}); check it and NO_PROXY." if names else ""
