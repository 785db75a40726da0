"""The team service's front door: one ASGI middleware before the MCP app.

For every request to the MCP endpoint it (1) names the user from the token (``Authorization: Bearer`` or
``X-Goog-Api-Key``; a missing or unknown token is HTTP 401 with one line), (2) counts each tool call
against that user's quota (over it: HTTP 429 with ``Retry-After`` and a JSON-RPC error saying which quota
and when it resets, before the call reaches the backend), and (3) when the answer has gone out, counts it
in the metrics and writes the access log. ``/healthz``, ``/readyz`` and ``/metrics`` are answered here,
without a token (probes and scrapers carry none; nothing in them names a user).
"""

from __future__ import annotations

import hmac
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from starlette.datastructures import Headers
from starlette.responses import JSONResponse, Response

from .access_log import AccessLog
from .metrics import CONTENT_TYPE, ServiceMetrics
from .quotas import Quota, QuotaCounter, Refusal, kind_of_tool
from .users import UserDirectory

__all__ = ["GateSettings", "ServiceGate"]

#: The largest request body read (an MCP request is a few hundred bytes; 20 names a few KB).
MAX_REQUEST_BYTES = 1024 * 1024
_METHODS = {"initialize", "notifications/initialized", "tools/list", "ping", "server/discover"}
_TOOLS = {"search_documents", "get_documents", "answer_query"}
_QUOTA_ERROR = -32029  # a server-defined JSON-RPC code, with the 429 and RESOURCE_EXHAUSTED beside it


@dataclass
class GateSettings:
    """What the gate enforces and reports. All optional: no users and no token is an open server."""

    users: UserDirectory | None = None
    token: str | None = None
    quotas: dict[str, Quota] = field(default_factory=dict)
    counter: QuotaCounter | None = None
    metrics: ServiceMetrics | None = None
    access_log: AccessLog | None = None
    ready: Callable[[], bool] = lambda: True
    not_ready_reason: Callable[[], str] = lambda: "starting"


@dataclass
class _Call:
    """What a request asks for: the tool (or method) and, for the log, the query."""

    label: str
    tool: str | None = None
    query: str | None = None
    request_id: Any = None


class ServiceGate:
    """ASGI middleware: users, quotas, metrics, access log and the health endpoints in front of ``app``."""

    def __init__(self, app: Any, settings: GateSettings) -> None:
        self.app = app
        self.settings = settings
        self._token = settings.token.encode("utf-8") if settings.token else None

    async def __call__(self, scope: dict[str, Any], receive: Callable, send: Callable) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path = scope.get("path", "")
        if path in ("/healthz", "/readyz", "/metrics"):
            await self._operations(path)(scope, receive, send)
            return
        started = time.monotonic()
        headers = Headers(scope=scope)
        user, refusal = self._user(headers)
        if refusal is not None:
            await refusal(scope, receive, send)
            self._record(None, _Call("unauthenticated"), 401, started)
            return
        body, more = await _read_body(receive)
        if more:
            await JSONResponse(_error_body(413, "The request is too large.", "INVALID_ARGUMENT"), 413)(
                scope, receive, send
            )
            return
        calls = _calls(body) if scope.get("method") == "POST" else [_Call(scope.get("method", "GET").lower())]
        over = self._take_quotas(user, calls)
        if over is not None:
            refused, call = over
            await self._quota_response(refused, call)(scope, receive, send)
            for each in calls:
                self._record(user, each, 429, started)
            return
        status = {"code": 500}

        async def replay() -> dict[str, Any]:
            nonlocal body
            if body is not None:
                message, body = {"type": "http.request", "body": body, "more_body": False}, None
                return message
            return await receive()

        async def watch(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                status["code"] = message["status"]
            await send(message)

        try:
            await self.app(scope, replay, watch)
        finally:
            for each in calls:
                self._record(user, each, status["code"], started)

    # -- the parts ---------------------------------------------------------------------------------

    def _user(self, headers: Headers) -> tuple[str | None, Response | None]:
        """The user's name (None on an open server), or the 401 to send."""
        settings = self.settings
        if settings.users is None and self._token is None:
            return None, None
        given = _token(headers)
        if not given:
            return None, _unauthorized("A token is required: send Authorization: Bearer TOKEN.")
        if settings.users is not None:
            user = settings.users.authenticate(given)
            if user is not None:
                return user.name, None
        if self._token is not None and hmac.compare_digest(given.encode("utf-8", "surrogatepass"), self._token):
            return "token", None
        return None, _unauthorized("The token is not one this server knows.")

    def _quotas_of(self, user: str | None) -> dict[str, Quota]:
        quotas = dict(self.settings.quotas)
        if user is not None and self.settings.users is not None:
            for found in self.settings.users.find(user):
                quotas.update(found.quotas)  # the user's own table overrides the server's quotas
        return quotas

    def _take_quotas(self, user: str | None, calls: list[_Call]) -> tuple[Refusal, _Call] | None:
        counter = self.settings.counter
        if counter is None or (not self.settings.quotas and self.settings.users is None):
            return None
        quotas = self._quotas_of(user)
        for call in calls:
            kind = kind_of_tool(call.tool or "")
            quota = quotas.get(kind or "")
            if quota is None:
                continue
            refused = counter.take(user or "anonymous", quota)
            if refused is not None:
                if self.settings.metrics is not None:
                    self.settings.metrics.refusal(quota.kind)
                return refused, call
        return None

    def _quota_response(self, refused: Refusal, call: _Call) -> Response:
        resets = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + refused.retry_after))
        body = {
            "jsonrpc": "2.0",
            "id": call.request_id,
            "error": {
                "code": _QUOTA_ERROR,
                "message": refused.message,
                "data": {
                    "status": "RESOURCE_EXHAUSTED",
                    "quota": str(refused.quota),
                    "retry_after": refused.retry_after,
                    "resets_at": resets,
                },
            },
        }
        return JSONResponse(body, status_code=429, headers={"Retry-After": str(refused.retry_after)})

    def _operations(self, path: str) -> Response:
        settings = self.settings
        if path == "/healthz":
            return JSONResponse({"status": "ok"})
        if path == "/readyz":
            if settings.ready():
                return JSONResponse({"status": "ready"})
            return JSONResponse({"status": "not ready", "reason": settings.not_ready_reason()}, status_code=503)
        if settings.metrics is None:
            return JSONResponse(_error_body(404, "Metrics are off.", "NOT_FOUND"), status_code=404)
        return Response(settings.metrics.exposition(), media_type=CONTENT_TYPE)

    def _record(self, user: str | None, call: _Call, status: int, started: float) -> None:
        seconds = time.monotonic() - started
        if self.settings.metrics is not None:
            self.settings.metrics.request(call.label, status, seconds)
        if self.settings.access_log is not None and call.tool is not None:
            self.settings.access_log.write(user=user, tool=call.label, status=status, seconds=seconds, query=call.query)


def _token(headers: Headers) -> str:
    scheme, _, credentials = headers.get("authorization", "").partition(" ")
    if scheme.lower() == "bearer" and credentials.strip():
        return credentials.strip()
    return headers.get("x-goog-api-key", "").strip()


def _error_body(code: int, message: str, status: str) -> dict[str, Any]:
    return {"error": {"code": code, "message": message, "status": status}}


def _unauthorized(message: str) -> Response:
    return JSONResponse(
        _error_body(401, message, "UNAUTHENTICATED"),
        status_code=401,
        headers={"WWW-Authenticate": 'Bearer realm="devknow"'},
    )


async def _read_body(receive: Callable) -> tuple[bytes, bool]:
    """The request body, and whether it was longer than :data:`MAX_REQUEST_BYTES` (then not all read)."""
    chunks, size = [], 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return b"".join(chunks), False
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > MAX_REQUEST_BYTES:
            return b"", True
        chunks.append(chunk)
        if not message.get("more_body"):
            return b"".join(chunks), False


def _calls(body: bytes) -> list[_Call]:
    """The tool calls (and other methods) a JSON-RPC body holds; what isn't JSON-RPC is left to the app."""
    try:
        data = json.loads(body) if body else None
    except (ValueError, RecursionError):
        return [_Call("other")]
    messages = data if isinstance(data, list) else [data]
    calls = []
    for message in messages[:100]:
        if not isinstance(message, dict):
            continue
        method = message.get("method")
        params = message.get("params") if isinstance(message.get("params"), dict) else {}
        if method == "tools/call":
            name = params.get("name")
            tool = name if name in _TOOLS else None
            arguments = params.get("arguments") if isinstance(params.get("arguments"), dict) else {}
            query = arguments.get("query") if isinstance(arguments.get("query"), str) else None
            calls.append(_Call(tool or "other", tool, query, message.get("id")))
        elif isinstance(method, str):
            calls.append(_Call(method if method in _METHODS else "other", request_id=message.get("id")))
    return calls or [_Call("other")]
