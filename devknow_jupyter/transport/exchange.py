"""Layer 1 of the remote backend: one HTTP exchange with the MCP endpoint, read completely.

:class:`HttpExchange` POSTs one JSON-RPC message, follows same-origin 307/308 redirects, reads a JSON or SSE
reply (answering server pings, at most :data:`~.budget.MAX_SERVER_REQUESTS` a call), turns Ctrl-C into a
cancel, and maps httpx failures to short :class:`~devknow_jupyter.errors.TransportError` messages. Bodies and
events are bounded while read (``max_reply_bytes``, :mod:`.decode`, :mod:`.sse`); after an SSE reply the
stream's end is read briefly, so the connection stays alive (:mod:`.keepalive`).
"""

from __future__ import annotations

import json
import logging
import os
import ssl
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import httpx

from ..errors import ProtocolError, TransportError
from . import keepalive, wire
from .budget import CallBudget
from .decode import parse_json, read_capped
from .retry import parse_retry_after
from .sse import read_reply

__all__ = ["HttpExchange", "Reply", "State", "StreamEnded", "retryable"]

log = logging.getLogger("devknow_jupyter.transport")

_ACCEPT = "application/json, text/event-stream"
_MAX_REDIRECTS = 5
_MAX_ERROR_BODY = 64 * 1024
# Built once: json.dumps with options builds a new encoder on every call.
_encode_json = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


@dataclass(frozen=True)
class State:
    """What was discovered about the server: its era, the version in use and the session (handshake era)."""

    era: str | None = None
    version: str | None = None
    session_id: str | None = None


@dataclass
class Reply:
    """One HTTP exchange's outcome, read completely."""

    status: int
    body: Any  # the parsed JSON-RPC message (or error body), or None
    text: str = ""  # the start of a non-JSON body, for messages
    retry_after: float | None = None
    session_id: str | None = None


class StreamEnded(Exception):
    """Internal: the event stream ended without the reply (re-sent once by the retry layer)."""


class HttpExchange:
    """One endpoint's HTTP exchanges on one ``httpx.Client`` (owned: :meth:`close` closes it).

    Args:
        http: The client (its headers carry the credentials; redirects are not followed by it).
        url: The MCP endpoint, without credentials.
        timeout: Seconds a call may take in all (bounds cancels and session ends).
        connect_timeout: Seconds to wait for a connection.
        max_reply_bytes: The largest JSON body, SSE line or SSE event read; ``None`` for no limit.
    """

    def __init__(
        self, http: httpx.Client, url: str, *, timeout: float, connect_timeout: float, max_reply_bytes: int | None
    ) -> None:
        self.http = http
        self.url = url
        self.timeout = timeout
        self.connect_timeout = connect_timeout
        self.max_reply_bytes = max_reply_bytes
        # How long to wait for an event stream's end after our reply. Short once a server left a stream
        # open, so such a server costs the full wait once, not on every call; a prompt end restores it.
        self.drain_seconds = keepalive.DRAIN_SECONDS

    def close(self) -> None:
        """Close the connections."""
        self.http.close()

    def _extensions(self, budget: CallBudget) -> dict[str, Any]:
        """This exchange's request extensions: httpcore's ``timeout`` (none longer than the time the call has
        left; given as the extension, so httpx need not build and copy a ``Timeout``) and our ``trace``."""
        left = max(budget.remaining(), 0.001)
        timeouts = {"connect": min(self.connect_timeout, left), "read": left, "write": left, "pool": left}
        return {"timeout": timeouts, "trace": keepalive.trace}

    def post(self, message: dict[str, Any], headers: dict[str, str], *, state: State, budget: CallBudget) -> Reply:
        """POST one JSON-RPC message and read the reply completely (following same-origin redirects)."""
        request_id = message.get("id")
        url = self.url
        all_headers = {"Content-Type": "application/json", "Accept": _ACCEPT, **headers}
        content = _encode_json(message).encode("utf-8")
        response: httpx.Response | None = None
        try:
            # One bounded block for every exchange of the loop: all of them end by the call's one deadline.
            with keepalive.reads_bounded(budget.deadline):
                for _ in range(_MAX_REDIRECTS + 1):
                    request = self.http.build_request(
                        "POST",
                        url,
                        content=content,
                        headers=all_headers,
                        extensions=self._extensions(budget),
                    )
                    response = self.http.send(request, stream=True)
                    if response.status_code in (307, 308) and response.headers.get("location"):
                        url = self._redirect_target(response, request)
                        continue
                    keepalive.watch(response)
                    return self._read(response, request_id, state, budget)
            raise ProtocolError(f"{self.url} redirected more than {_MAX_REDIRECTS} times.")
        except KeyboardInterrupt:
            if response is not None:
                response.close()
            if request_id is not None and state.era == "handshake" and message.get("method") != "initialize":
                self._cancel(request_id, state)
            raise
        finally:
            if response is not None:
                response.close()

    def _redirect_target(self, response: httpx.Response, request: httpx.Request) -> str:
        """Where a 307/308 points, if on the same origin (else refused, so that the key is not sent there)."""
        target = response.url.join(response.headers["location"])
        response.close()
        if (target.scheme, target.host, target.port) != (request.url.scheme, request.url.host, request.url.port):
            raise TransportError(
                f"{self.url} redirected to another site ({target.scheme}://{target.host}); "
                "not followed, so that the key is not sent there. Use the final URL as the endpoint."
            )
        return str(target)

    def _read(self, response: httpx.Response, request_id: Any, state: State, budget: CallBudget) -> Reply:
        """Read a reply completely: an event stream or JSON for a request, else (errors, 202s) the body."""
        status = response.status_code
        headers = response.headers
        content_type = headers.get("content-type", "").partition(";")[0].strip().lower()
        # Retry-After only counts on a failure (the retries and the error messages read it).
        retry_after = parse_retry_after(headers.get("retry-after")) if status >= 300 else None
        reply = Reply(status, None, retry_after=retry_after, session_id=self._session_id(headers))
        log.debug("POST %s -> %s %s", request_id, status, content_type or "-")
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
                raise StreamEnded()
            return reply
        if wants_reply:
            reply.body = self._read_json(response, request_id, status, content_type, budget)
            return reply
        # An error body (JSON-RPC, Google's, or text) or a notification's acknowledgement: its start is enough.
        try:
            raw = read_capped(response, _MAX_ERROR_BODY, budget, cut=True)
        except ProtocolError:  # an error body in an encoding we can't undo: the status still says enough
            raw = b""
        try:
            reply.body = parse_json(raw) if raw else None
        except ProtocolError:
            reply.text = raw[:300].decode("utf-8", "replace")
        return reply

    def _session_id(self, headers: httpx.Headers) -> str | None:
        """The reply's ``Mcp-Session-Id``, if it is one we can echo: visible ASCII (as the spec requires), of a
        sane length. Anything else would fail only when sent back, so it is refused here."""
        value = headers.get(wire.SESSION_HEADER)
        if value is None or wire.valid_session_id(value):
            return value
        raise ProtocolError(
            f"{self.url} sent an unusable session id (Mcp-Session-Id must be visible ASCII, at most "
            f"{wire.MAX_SESSION_ID} characters)."
        )

    def _read_json(
        self, response: httpx.Response, request_id: Any, status: int, content_type: str, budget: CallBudget
    ) -> Any:
        """A request's JSON reply, checked to answer ``request_id``."""
        if status != 202 and content_type not in ("application/json", ""):  # not worth reading
            raise ProtocolError(f"{self.url} replied with {content_type}, not JSON or an event stream.")
        raw = read_capped(response, self.max_reply_bytes, budget, cut=False)
        if status == 202 or not raw:
            raise ProtocolError(f"{self.url} sent no reply to a request (HTTP {status}).")
        if content_type != "application/json":
            raise ProtocolError(f"{self.url} replied with no content type, not JSON or an event stream.")
        body = parse_json(raw)
        self._check_id(body, request_id)
        return body

    def _drain(self, response: httpx.Response) -> Callable[[Any], None]:
        def after(events: Any) -> None:
            ended = keepalive.drain(response, events, seconds=self.drain_seconds)
            self.drain_seconds = keepalive.DRAIN_SECONDS if ended else keepalive.SHORT_DRAIN_SECONDS

        return after

    def _check_id(self, body: Any, request_id: Any) -> None:
        if not isinstance(body, dict):
            raise ProtocolError(f"{self.url} sent a reply that is not a JSON-RPC object.")
        if body.get("id") != request_id and not (body.get("id") is None and "error" in body):
            raise ProtocolError(f"{self.url} answered another request (id {body.get('id')!r}).")

    def _answer(self, request: dict[str, Any], state: State, budget: CallBudget) -> None:
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

    def _cancel(self, request_id: Any, state: State) -> None:
        """Tell a handshake-era server we gave up on ``request_id`` (best effort, never raises)."""
        params = {"requestId": request_id, "reason": "interrupted"}
        self._post_quietly(wire.notification("notifications/cancelled", params), state, seconds=min(2.0, self.timeout))

    def _post_quietly(self, message: dict[str, Any], state: State, *, seconds: float) -> None:
        headers = {
            "Content-Type": "application/json",
            "Accept": _ACCEPT,
            **wire.handshake_headers(state.version, state.session_id),
        }
        try:
            self.http.post(self.url, json=message, headers=headers, timeout=seconds)
        except httpx.HTTPError as exc:
            log.debug("could not post %s: %s", message.get("method", "a reply"), type(exc).__name__)

    def end_session(self, state: State) -> None:
        """``DELETE`` the session, if there is one; any answer (200, 404, 405) or failure is fine."""
        if state.session_id is None:
            return
        try:
            self.http.delete(
                self.url,
                headers=wire.handshake_headers(state.version, state.session_id),
                timeout=httpx.Timeout(min(5.0, self.timeout), connect=min(5.0, self.connect_timeout)),
            )
        except httpx.HTTPError as exc:  # the session times out on its own; nothing to do
            log.debug("DELETE of the session failed: %s", type(exc).__name__)

    def transport_error(self, exc: httpx.HTTPError, budget: CallBudget) -> TransportError:
        """A short, useful message for an httpx failure (which never carries our headers)."""
        host = urlsplit(self.url).netloc
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


def retryable(exc: httpx.HTTPError) -> bool:
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
