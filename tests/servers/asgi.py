"""ASGI wrappers around the SDK test server, each switched on by a ``sdk_server`` option.

They make a real MCP server behave like the servers we meet in the field without faking the MCP
part: a handshake-only or modern-only server (``--era``), a quota that answers HTTP 429
(``--quota-shape http``), a front end that fails the first requests (``--fail-first``), and a
wire log of every HTTP request for the conformance tests (``--wire-log``).
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

HANDSHAKE_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
MODERN_VERSIONS = ("2026-07-28",)


async def _buffered(receive: Any) -> tuple[bytes, Any]:
    """Read the whole request body, and return a ``receive`` that replays it to the wrapped app."""
    chunks = []
    while True:
        message = await receive()
        if message["type"] != "http.request":
            break
        chunks.append(message.get("body", b""))
        if not message.get("more_body"):
            break
    body = b"".join(chunks)
    sent = False

    async def replay() -> dict[str, Any]:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return body, replay


def _json(body: bytes) -> Any:
    try:
        return json.loads(body) if body else None
    except ValueError:
        return None


async def _send_json(send: Any, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
    data = json.dumps(payload).encode()
    raw = [(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode())]
    raw += [(k.lower().encode(), v.encode()) for k, v in (headers or {}).items()]
    await send({"type": "http.response.start", "status": status, "headers": raw})
    await send({"type": "http.response.body", "body": data})


def _header(scope: dict[str, Any], name: bytes) -> str | None:
    return next((v.decode("latin-1") for k, v in scope["headers"] if k == name), None)


class WireLog:
    """Append one JSON line per HTTP request: method, headers, JSON body, status, content type and the
    client's port (one per TCP connection)."""

    def __init__(self, app: Any, path: str) -> None:
        self.app, self.path = app, Path(path)
        self.lock = threading.Lock()

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        body, receive = await _buffered(receive)
        row: dict[str, Any] = {
            "method": scope["method"],
            "headers": {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]},
            "query": scope.get("query_string", b"").decode("latin-1"),
            "body": _json(body),
            "client_port": (scope.get("client") or (None, None))[1],
        }

        async def watch(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in message["headers"]}
                row["status"] = message["status"]
                row["content_type"] = headers.get("content-type", "")
                row["session_id"] = headers.get("mcp-session-id")
                with self.lock, self.path.open("a", encoding="utf-8") as log:
                    log.write(json.dumps(row) + "\n")
            await send(message)

        await self.app(scope, receive, watch)


class EraGate:
    """Make the dual-era SDK server answer like a single-era one.

    ``legacy``: a request with a modern ``MCP-Protocol-Version`` gets 400 "Unsupported protocol version"
    (what handshake-only servers such as SDK 1.x send). ``modern``: a request without a modern version
    header (``initialize`` included) gets 400 -32022 naming the supported versions, and GET/DELETE 405.
    """

    def __init__(self, app: Any, era: str) -> None:
        self.app, self.era = app, era

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        version = _header(scope, b"mcp-protocol-version")
        modern = version is not None and version not in HANDSHAKE_VERSIONS
        if self.era == "legacy" and modern:
            message = f"Bad Request: Unsupported protocol version: {version}. Supported versions: 2025-11-25"
            await _send_json(send, 400, {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": message}})
            return
        if self.era == "modern" and not modern:
            if scope["method"] != "POST":
                await send({"type": "http.response.start", "status": 405, "headers": [(b"allow", b"POST")]})
                await send({"type": "http.response.body", "body": b""})
                return
            body, receive = await _buffered(receive)
            message = _json(body) or {}
            error = {
                "code": -32022,
                "message": "Unsupported protocol version",
                "data": {"supported": list(MODERN_VERSIONS), "requested": version},
            }
            await _send_json(send, 400, {"jsonrpc": "2.0", "id": message.get("id"), "error": error})
            return
        await self.app(scope, receive, send)


class QuotaGate:
    """answer_query's quota as Google's front end reports it: HTTP 429, Retry-After, a Google error body."""

    def __init__(self, app: Any, allowed: int, retry_after: str | None) -> None:
        self.app, self.allowed, self.retry_after = app, allowed, retry_after
        self.answers = 0

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        body, receive = await _buffered(receive)
        message = _json(body) or {}
        params = message.get("params") if isinstance(message, dict) else None
        if message.get("method") == "tools/call" and (params or {}).get("name") == "answer_query":
            if self.answers >= self.allowed:
                error = {
                    "code": 429,
                    "message": "Quota exceeded for quota metric 'AnswerQuery requests' and limit 'per day'.",
                    "status": "RESOURCE_EXHAUSTED",
                }
                headers = {"retry-after": self.retry_after} if self.retry_after is not None else {}
                await _send_json(send, 429, {"error": error}, headers)
                return
            self.answers += 1
        await self.app(scope, receive, send)


class FailFirst:
    """Answer the first ``count`` POSTs with ``status`` (and ``Retry-After``), as an overloaded front end."""

    def __init__(self, app: Any, count: int, status: int, retry_after: str | None) -> None:
        self.app, self.count, self.status, self.retry_after = app, count, status, retry_after

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope["method"] == "POST" and self.count > 0:
            self.count -= 1
            headers = {"retry-after": self.retry_after} if self.retry_after is not None else {}
            body = {
                "error": {
                    "code": self.status,
                    "message": "The service is currently unavailable.",
                    "status": "UNAVAILABLE",
                }
            }
            await _send_json(send, self.status, body, headers)
            return
        await self.app(scope, receive, send)


def read_wire_log(path: Path) -> list[dict[str, Any]]:
    """The rows a :class:`WireLog` wrote, oldest first."""
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
