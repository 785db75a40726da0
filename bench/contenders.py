"""The clients compared in the latency bench: a raw ``httpx`` floor and the official ``mcp`` SDK client.

Both are driven synchronously from the benchmark loop, like ``DevKnowClient``:

* :class:`RawHttpx` POSTs one prepared JSON-RPC request on a kept-alive ``httpx.Client`` and decodes
  the reply (JSON, or the ``data:`` of an SSE event) - the least work any client must do.
* :class:`SdkClient` keeps an SDK ``ClientSession`` over ``streamable_http_client`` open in its own event
  loop; each call runs that loop until the call's task is done (no thread hop).
"""

from __future__ import annotations

import asyncio
import itertools
import json
from typing import Any

import httpx

__all__ = ["RawHttpx", "RequestRecorder", "SdkClient"]

ACCEPT = "application/json, text/event-stream"


class RequestRecorder(httpx.BaseTransport):
    """An ``httpx`` transport that forwards to a real one and remembers each request's headers and body.

    Handed to ``DevKnowClient(http_transport=...)`` so the raw floor can send exactly what the
    devknow transport sends (protocol era, session and version headers, ``_meta``).
    """

    def __init__(self) -> None:
        self.inner = httpx.HTTPTransport()
        self.requests: list[tuple[dict[str, str], bytes]] = []
        self.responses: list[str] = []  # content types of the replies
        self.streams: list[int] = []  # identity of the connection each reply came on

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        """Record, then send for real."""
        body = request.read()
        self.requests.append((dict(request.headers), body))
        del self.requests[:-20]  # only the last few are ever looked at
        response = self.inner.handle_request(request)
        self.responses.append(response.headers.get("content-type", ""))
        del self.responses[:-20]
        self.streams.append(id(response.extensions.get("network_stream")))
        return response

    def connections(self, last: int) -> int:
        """How many distinct connections the last ``last`` replies came on (1 when kept alive)."""
        return len(set(self.streams[-last:]))

    def close(self) -> None:
        """Close the real transport."""
        self.inner.close()

    def last_tool_call(self, tool: str) -> tuple[dict[str, str], dict[str, Any]]:
        """Headers and JSON body of the most recent ``tools/call`` of ``tool``."""
        for headers, body in reversed(self.requests):
            try:
                message = json.loads(body)
            except ValueError:
                continue
            if message.get("method") == "tools/call" and message.get("params", {}).get("name") == tool:
                return headers, message
        raise LookupError(f"no tools/call of {tool} was recorded")


class RawHttpx:
    """The floor: one JSON-RPC POST per call on a kept-alive connection, reply decoded, nothing else."""

    _SKIP = frozenset({"content-length", "host", "accept-encoding", "connection", "user-agent"})

    def __init__(self, url: str, headers: dict[str, str], message: dict[str, Any]) -> None:
        self.url = url
        self.headers = {k: v for k, v in headers.items() if k.lower() not in self._SKIP}
        self.headers.setdefault("accept", ACCEPT)
        self.headers.setdefault("content-type", "application/json")
        self.message = message
        self.ids = itertools.count(10_000)
        self.client = httpx.Client(timeout=30.0)

    def call(self) -> dict[str, Any]:
        """POST the request with a fresh id and return the JSON-RPC result."""
        message = {**self.message, "id": next(self.ids)}
        response = self.client.post(self.url, content=json.dumps(message).encode(), headers=self.headers)
        response.raise_for_status()
        if response.headers.get("content-type", "").startswith("text/event-stream"):
            for line in response.text.splitlines():
                if line.startswith("data:") and len(line) > 6:
                    reply = json.loads(line[5:])
                    if reply.get("id") == message["id"]:
                        return reply["result"]
            raise RuntimeError("no reply in the event stream")
        return response.json()["result"]

    def close(self) -> None:
        """Close the connection."""
        self.client.close()


class SdkClient:
    """An open SDK ``ClientSession`` (handshake era, Streamable HTTP), called from synchronous code."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.loop = asyncio.new_event_loop()
        self._ready = asyncio.Event()
        self._stop = asyncio.Event()
        self.session: Any = None
        self._owner = self.loop.create_task(self._own())
        # The session's task groups must be entered and left by one task: the owner holds them open.
        self.loop.run_until_complete(self._wait_ready())

    async def _wait_ready(self) -> None:
        waiter = asyncio.ensure_future(self._ready.wait())
        done, _ = await asyncio.wait({waiter, self._owner}, return_when=asyncio.FIRST_COMPLETED)
        if self._owner in done:
            waiter.cancel()
            self._owner.result()  # re-raise why the session could not start

    async def _own(self) -> None:
        from mcp.client.session import ClientSession
        from mcp.client.streamable_http import streamable_http_client

        async with streamable_http_client(self.url) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            self.session = session
            self._ready.set()
            await self._stop.wait()

    def call(self, tool: str, arguments: dict[str, Any]) -> Any:
        """One ``tools/call``; returns the structured content."""
        result = self.loop.run_until_complete(self.session.call_tool(tool, arguments))
        if result.is_error:
            raise RuntimeError(str(result.content))
        return result.structured_content

    def close(self) -> None:
        """End the session and close the loop."""
        self._stop.set()
        try:
            self.loop.run_until_complete(asyncio.wait_for(self._owner, 10))
        finally:
            self.loop.close()
