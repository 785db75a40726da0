"""Layers 2 and 3 of the remote backend: retries (:class:`Retrying`) and the era (:class:`EraSession`).

Layer 2 retries connect errors, 502/503/504 and (for search/get only) 429, with capped backoff and
``Retry-After``, and re-sends once when an event stream ends without our reply; all within the call's one
deadline (:mod:`.budget`). Layer 3 discovers the server's era once (``server/discover`` first, ``initialize``
when the server is of the handshake era), gives every request its era's envelope, and renews an expired
session once.
"""

from __future__ import annotations

import itertools
import logging
import threading
import time
from collections.abc import Callable
from typing import Any

import httpx

from ..errors import ConfigurationError, DevKnowError, ProtocolError
from . import wire
from .budget import CallBudget
from .exchange import HttpExchange, Reply, State, StreamEnded, retryable
from .replies import error_member, http_failure, rpc_failure
from .retry import RetryPolicy

__all__ = ["EraSession", "Retrying"]

log = logging.getLogger("devknow_jupyter.transport")


class Retrying:
    """Layer 2: one request in a given era's envelope, sent (and sent again) until an answer or the deadline."""

    def __init__(self, exchange: HttpExchange, retry: RetryPolicy) -> None:
        self.exchange = exchange
        self.retry = retry
        self._ids = itertools.count(1)
        self._ids_lock = threading.Lock()

    def _next_id(self) -> int:
        with self._ids_lock:
            return next(self._ids)

    def _envelope(
        self, state: State, method: str, params: dict[str, Any] | None, *, notify: bool
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

    def roundtrip(
        self,
        state: State,
        method: str,
        params: dict[str, Any] | None,
        budget: CallBudget,
        *,
        tool: str | None,
        headers: dict[str, str] | None = None,
        notify: bool = False,
    ) -> Reply:
        """One request with retries, within ``budget``: returns the final reply (any status) or raises.

        A retry whose wait would end past the deadline is not made: the last failure is the answer.
        """
        attempt = 1
        resent = False
        while True:
            budget.check()
            message, envelope_headers = self._envelope(state, method, params, notify=notify)
            try:
                reply = self.exchange.post(message, {**envelope_headers, **(headers or {})}, state=state, budget=budget)
            except StreamEnded:
                if resent:
                    raise ProtocolError(
                        f"{self.exchange.url}: the event stream for {method} ended twice without the reply."
                    ) from None
                resent = True  # every call we make is idempotent, so sending it again is safe
                log.debug("event stream ended early; sending %s again", method)
                continue
            except httpx.HTTPError as exc:
                if retryable(exc) and self.retry.may_retry(attempt):
                    delay = self.retry.delay(attempt) or 0.0
                    if budget.allows_wait(delay):
                        _wait(delay)
                        attempt += 1
                        continue
                raise self.exchange.transport_error(exc, budget) from exc
            if reply.status >= 300 and self.retry.retries_status(reply.status, tool) and self.retry.may_retry(attempt):
                delay = self.retry.delay(attempt, reply.retry_after)
                if delay is not None and budget.allows_wait(delay):
                    log.debug("HTTP %s for %s; retrying in %.2f s", reply.status, method, delay)
                    _wait(delay)
                    attempt += 1
                    continue
            return reply


class EraSession:
    """Layer 3: the server's era and session, discovered once under a lock, and requests sent in it.

    Args:
        retrying: Layer 2, which sends each request.
        modern_versions: The modern protocol versions to offer, most preferred first.
        credentials: What credentials were sent, for auth messages (never the secret).
    """

    def __init__(
        self, retrying: Retrying, modern_versions: tuple[str, ...], credentials: Callable[[], str | None]
    ) -> None:
        self.retrying = retrying
        self.modern_versions = modern_versions
        self._credentials = credentials
        self._lock = threading.RLock()
        self.state = State()
        self.closed = False

    @property
    def _endpoint(self) -> str:
        return self.retrying.exchange.url

    def shut(self) -> State | None:
        """Mark the session closed and return the state it had; None if it was closed already."""
        with self._lock:
            if self.closed:
                return None
            self.closed = True
            state, self.state = self.state, State()
            return state

    def end_session(self, state: State) -> None:
        """``DELETE`` the handshake-era session of ``state``, if any (best effort)."""
        self.retrying.exchange.end_session(state)

    def rpc(
        self,
        method: str,
        params: dict[str, Any] | None,
        budget: CallBudget,
        *,
        tool: str | None = None,
        extra: Callable[[], dict[str, str]] | None = None,
    ) -> Any:
        """Send one request in the server's era and return its ``result``, or raise the mapped error."""
        if self.closed:
            raise ConfigurationError("This connection to the MCP server is closed; create a new client.")
        state = self._connected(budget)
        renewed = reprobed = False
        while True:
            headers = extra() if extra is not None and state.era == "modern" else {}
            reply = self.retrying.roundtrip(state, method, params, budget, tool=tool, headers=headers)
            if reply.status == 404 and state.era == "handshake" and state.session_id is not None:
                if renewed:
                    raise ProtocolError(f"{self._endpoint} lost the MCP session again right after a new one started.")
                log.debug("session expired (404); initializing again")
                state, renewed = self._renew(state, budget), True
                continue
            error = error_member(reply.body)
            if state.era == "modern" and error and error.get("code") == wire.UNSUPPORTED_VERSION and not reprobed:
                state, reprobed = self._rediscover(state, budget), True  # the server changed its versions
                continue
            return self._result(reply, method, tool)

    def _connected(self, budget: CallBudget) -> State:
        state = self.state
        if state.era is not None:
            return state
        with self._lock:
            if self.state.era is None:
                self.state = self._discover(budget)
                log.debug("era %s, version %s", self.state.era, self.state.version)
            return self.state

    def _renew(self, stale: State, budget: CallBudget) -> State:
        with self._lock:
            if self.state == stale:  # not renewed meanwhile by another thread
                self.state = State()
                self.state = self._initialize(budget)
            return self._connected(budget)

    def _rediscover(self, stale: State, budget: CallBudget) -> State:
        with self._lock:
            if self.state == stale:
                self.state = State()
            return self._connected(budget)

    def _discover(self, budget: CallBudget) -> State:
        """Find the server's era the spec's way: a modern ``server/discover`` first, else ``initialize``.

        Only a well-formed MCP answer is an era verdict: 401/403/429/5xx and network errors raise.
        """
        tried: list[str] = []
        version = self.modern_versions[0]
        while True:
            tried.append(version)
            reply = self.retrying.roundtrip(State("modern", version), "server/discover", {}, budget, tool=None)
            error = error_member(reply.body)
            if reply.status < 300 and isinstance(reply.body, dict) and isinstance(reply.body.get("result"), dict):
                supported = _strings(reply.body["result"].get("supportedVersions")) or [version]
                mutual = [v for v in self.modern_versions if v in supported]
                if mutual:
                    return State("modern", version if version in mutual else mutual[0])
                return self._initialize(budget)  # a discover-answering server that offers only handshake versions
            if reply.status in (401, 403, 429) or reply.status >= 500 or 300 <= reply.status < 400:
                raise self._failure(reply, "server/discover", None)
            code = error.get("code") if error else None
            if code == wire.UNSUPPORTED_VERSION:
                data = error.get("data") if isinstance(error.get("data"), dict) else {}
                supported = _strings(data.get("supported"))
                mutual = [v for v in self.modern_versions if v in supported and v not in tried]
                if mutual:
                    version = mutual[0]
                    continue
                if supported and not any(v in wire.KNOWN_HANDSHAKE_VERSIONS for v in supported):
                    raise ProtocolError(
                        f"{self._endpoint} speaks MCP {', '.join(supported)} only; this client speaks "
                        f"{', '.join((*self.modern_versions, *wire.HANDSHAKE_VERSIONS))}. Update devknow-jupyter."
                    )
            elif code in (wire.HEADER_MISMATCH, -32021) and reply.status == 400:
                raise ProtocolError(f"{self._endpoint} refused our request envelope: {error.get('message')}")
            return self._initialize(budget)  # 400 "Unsupported protocol version", 404/-32601, 405, …: handshake era

    def _initialize(self, budget: CallBudget) -> State:
        """The handshake: ``initialize`` (no session, no version header), then ``notifications/initialized``."""
        reply = self.retrying.roundtrip(State("handshake"), "initialize", wire.initialize_params(), budget, tool=None)
        result = self._result(reply, "initialize", None)
        version = result.get("protocolVersion") if isinstance(result, dict) else None
        version = version if isinstance(version, str) else None
        state = State("handshake", version, reply.session_id)
        if version not in wire.HANDSHAKE_VERSIONS:
            self.end_session(state)
            raise ProtocolError(
                f"{self._endpoint} chose MCP version {version!r}, which this client does not speak "
                f"({', '.join(wire.HANDSHAKE_VERSIONS)})."
            )
        notified = self.retrying.roundtrip(state, "notifications/initialized", None, budget, tool=None, notify=True)
        if notified.status >= 300:
            raise self._failure(notified, "notifications/initialized", None)
        return state

    def _result(self, reply: Reply, method: str, tool: str | None) -> Any:
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

    def _failure(self, reply: Reply, method: str, tool: str | None) -> DevKnowError:
        return http_failure(
            reply.status,
            reply.body,
            text=reply.text,
            retry_after=reply.retry_after,
            endpoint=self._endpoint,
            method=method,
            tool=tool,
            credentials=self._credentials(),
        )


def _wait(seconds: float | None) -> None:
    if seconds:
        time.sleep(seconds)  # interruptible: Ctrl-C during a backoff stops the call


def _strings(value: Any) -> list[str]:
    """The strings of a list the server sent (a version list), ignoring anything else it holds."""
    return [item for item in value if isinstance(item, str)] if isinstance(value, list) else []
