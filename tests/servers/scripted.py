"""A tiny scripted HTTP server on 127.0.0.1 (uvicorn in a thread), for faults a real MCP server can't make.

Each test passes a handler that gets the :class:`Call` (method, headers, JSON body, its number) and
returns a Starlette response: a 503 then a success, a 429 with ``Retry-After``, a malformed or
CRLF event stream, a stream that ends early, a hang past the timeout. Everything received is kept
in :attr:`ScriptedServer.calls`, with the client's address (one port per TCP connection).
"""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Any

import uvicorn
from starlette.responses import Response, StreamingResponse

MODERN = "2026-07-28"


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class Call:
    """One request the scripted server received."""

    number: int  # 0 for the first request
    method: str
    headers: dict[str, str]  # lowercase names
    body: Any  # the JSON body, or None
    client: tuple[str, int] | None = None  # the peer's (host, port): one port per TCP connection
    path: str = ""  # the request's path, e.g. /mcp
    query: str = ""  # the raw query string, without the "?"

    @property
    def rpc_method(self) -> str | None:
        """The JSON-RPC method, if the body is a request or notification."""
        return self.body.get("method") if isinstance(self.body, dict) else None

    @property
    def rpc_id(self) -> Any:
        """The JSON-RPC id, if any."""
        return self.body.get("id") if isinstance(self.body, dict) else None


Handler = Callable[[Call], "Response | Awaitable[Response]"]


class ScriptedServer:
    """Serve ``handler`` on a free loopback port while the ``with`` block runs."""

    def __init__(self, handler: Handler, *, port: int | None = None, **uvicorn_options: Any) -> None:
        self.handler = handler
        self.calls: list[Call] = []
        self.port = port or free_port()  # a port of its own: e.g. a server back where one was stopped
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        config = uvicorn.Config(
            self._app,
            host="127.0.0.1",
            port=self.port,
            log_level="warning",
            lifespan="off",
            interface="asgi3",
            timeout_graceful_shutdown=1,
            **uvicorn_options,
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, daemon=True)

    def __enter__(self) -> ScriptedServer:
        self._thread.start()
        deadline = time.monotonic() + 20
        while not self._server.started:
            if time.monotonic() > deadline or not self._thread.is_alive():
                raise RuntimeError("the scripted server did not start")
            time.sleep(0.01)
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._server.should_exit = True
        self._thread.join(timeout=10)

    def connections(self, method: str | None = None) -> list[tuple[str, int] | None]:
        """The client address of each request (of JSON-RPC ``method`` only, if given), in order."""
        return [call.client for call in self.calls if method is None or call.rpc_method == method]

    def rpc_methods(self) -> list[str | None]:
        """The JSON-RPC method of each POST, in order (None for a response or a non-JSON body)."""
        return [call.rpc_method for call in self.calls if call.method == "POST"]

    async def _app(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        chunks = []
        while True:
            message = await receive()
            chunks.append(message.get("body", b""))
            if not message.get("more_body"):
                break
        raw = b"".join(chunks)
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        client = tuple(scope["client"]) if scope.get("client") else None
        query = scope.get("query_string", b"").decode("latin-1")
        call = Call(len(self.calls), scope["method"], headers, body, client, scope.get("path", ""), query)
        self.calls.append(call)
        response = self.handler(call)
        if asyncio.iscoroutine(response):
            response = await response
        await response(scope, receive, send)


# -- replies ---------------------------------------------------------------------------------------


def rpc_json(message: dict[str, Any], status: int = 200, headers: dict[str, str] | None = None) -> Response:
    """A JSON reply."""
    return Response(json.dumps(message), status_code=status, media_type="application/json", headers=headers)


def result(call: Call, value: Any) -> dict[str, Any]:
    """The JSON-RPC response to ``call`` with ``value`` as result."""
    return {"jsonrpc": "2.0", "id": call.rpc_id, "result": value}


def error(call: Call | None, code: int, message: str, data: Any = None) -> dict[str, Any]:
    """A JSON-RPC error response (id null when ``call`` is None)."""
    body: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        body["data"] = data
    return {"jsonrpc": "2.0", "id": call.rpc_id if call else None, "error": body}


def tool_ok(payload: dict[str, Any], text: str | None = None) -> dict[str, Any]:
    """A successful tool result with structured content (and its text twin)."""
    return {
        "content": [{"type": "text", "text": json.dumps(payload) if text is None else text}],
        "structuredContent": payload,
        "isError": False,
    }


def sse(events: Iterable[str | bytes], *, pause: float = 0.0, hang: float = 0.0, status: int = 200) -> Response:
    """An event stream sending ``events`` (raw text, exactly as given), then optionally hanging open."""

    async def body() -> AsyncIterator[bytes]:
        for event in events:
            yield event.encode() if isinstance(event, str) else event
            if pause:
                await asyncio.sleep(pause)
        if hang:
            await asyncio.sleep(hang)

    return StreamingResponse(body(), status_code=status, media_type="text/event-stream")


def event(message: dict[str, Any], *, event_id: str | None = None, newline: str = "\r\n") -> str:
    """One SSE ``message`` event carrying ``message``."""
    lines = ["event: message"]
    if event_id is not None:
        lines.append(f"id: {event_id}")
    lines.append("data: " + json.dumps(message))
    return newline.join(lines) + newline + newline


def modern_server(on_call: Callable[[Call], Response | None]) -> Handler:
    """A modern-era handler: answers ``server/discover``, and passes other requests to ``on_call``.

    ``on_call`` may return None for "a normal empty search result".
    """

    def handle(call: Call) -> Response:
        if call.rpc_method == "server/discover":
            return rpc_json(result(call, {"supportedVersions": [MODERN], "capabilities": {"tools": {}}}))
        reply = on_call(call)
        if reply is None:
            return rpc_json(result(call, tool_ok({"results": []})))
        return reply

    return handle


def legacy_server(
    on_call: Callable[[Call], Response | None], *, session: str | None = "sid-1", version: str = "2025-11-25"
) -> Handler:
    """A handshake-era handler: refuses modern requests, answers ``initialize`` (issuing ``session``),
    accepts notifications and DELETE, and passes other requests to ``on_call``."""

    def handle(call: Call) -> Response:
        if call.headers.get("mcp-protocol-version") == MODERN:
            return rpc_json(error(None, -32600, f"Bad Request: Unsupported protocol version: {MODERN}"), 400)
        if call.method == "DELETE":
            return Response(status_code=200)
        if call.rpc_method == "initialize":
            headers = {"mcp-session-id": session} if session else None
            value = {"protocolVersion": version, "capabilities": {"tools": {}}, "serverInfo": {"name": "x"}}
            return rpc_json(result(call, value), headers=headers)
        if call.rpc_id is None:
            return Response(status_code=202)
        reply = on_call(call)
        if reply is None:
            return rpc_json(result(call, tool_ok({"results": []})))
        return reply

    return handle
