"""A minimal, fast MCP Streamable HTTP server (plain ASGI on uvicorn) for latency benchmarks.

The SDK test server spends a few milliseconds per request in its own machinery, which would hide the
client's cost. This server answers the same three tools over the same documents (the helpers of
``tests/servers/sdk_server.py``) with as little work as possible, in both protocol eras:
``initialize`` + session header (handshake era) and ``server/discover`` / per-request ``_meta``
(2026-07-28). It checks nothing it does not need to; it is not a conformance reference. Run::

    python -m bench.fast_server --port 8766 [--json] [--stateless] [--delay 0.1] [--docs DIR]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import uuid
from pathlib import Path
from typing import Any

HANDSHAKE_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
MODERN_VERSION = "2026-07-28"
SERVER_INFO = {"name": "devknow-bench-server", "version": "1.0"}


class FastMcpApp:
    """ASGI app: POST /mcp answers JSON-RPC; GET gets 405; DELETE ends nothing and gets 200."""

    def __init__(self, docs: dict[str, dict[str, str]], *, json_response: bool, stateless: bool, delay: float) -> None:
        from devknow_jupyter.registry import tool_definitions
        from devknow_jupyter.tools import MAX_NAMES_PER_CALL

        self.docs = docs
        self.json_response = json_response
        self.stateless = stateless
        self.delay = delay
        self.max_names = MAX_NAMES_PER_CALL
        self.tools = tool_definitions()
        self._index_passages()

    def _index_passages(self) -> None:
        # Postings (term -> [(passage, count)]) so search costs the same for 6 pages or 5,000; the scores,
        # order and passages are those of the SDK test server's scan (tests/servers/sdk_server.py search).
        from collections import Counter

        from tests.servers.sdk_server import _WORD, sections

        self.passages: list[tuple[str, int, str]] = []
        self.postings: dict[str, list[tuple[int, int]]] = {}
        for name, doc in self.docs.items():
            for i, passage in enumerate(sections(doc["content"])):
                counts = Counter(w.lower() for w in _WORD.findall(passage + " " + doc["title"]))
                for term, count in counts.items():
                    self.postings.setdefault(term, []).append((len(self.passages), count))
                self.passages.append((name, i, passage))

    def search(self, query: str, limit: int = 10) -> list[dict[str, str]]:
        """Passages ranked by how often the query's words (longer than 2 letters) occur in them."""
        from tests.servers.sdk_server import _WORD

        scores: dict[int, int] = {}
        for term in {word.lower() for word in _WORD.findall(query) if len(word) > 2}:
            for passage, count in self.postings.get(term, ()):
                scores[passage] = scores.get(passage, 0) + count
        ranked = sorted((-score, self.passages[p][0], self.passages[p][1], p) for p, score in scores.items())
        return [
            {"parent": name, "id": f"{i}", "content": self.passages[p][2]} for _, name, i, p in ranked[:limit]
        ]

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                elif message["type"] == "lifespan.shutdown":
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        if scope["type"] != "http":
            return
        method = scope["method"]
        if method == "DELETE":
            await _reply(send, 200, b"", [])
            return
        if method != "POST":
            await _reply(send, 405, b"", [(b"allow", b"POST, DELETE")])
            return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        headers = dict(scope["headers"])
        try:
            request = json.loads(body)
        except ValueError:
            await _json(send, 400, {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}})
            return
        if "id" not in request or "method" not in request:
            await _reply(send, 202, b"", [])  # notification or response
            return
        modern = headers.get(b"mcp-protocol-version") == MODERN_VERSION.encode()
        extra_headers: list[tuple[bytes, bytes]] = []
        result, error = await self.dispatch(request["method"], request.get("params") or {}, modern)
        if request["method"] == "initialize" and not self.stateless:
            extra_headers.append((b"mcp-session-id", uuid.uuid4().hex.encode()))
        reply: dict[str, Any] = {"jsonrpc": "2.0", "id": request["id"]}
        if error is not None:
            reply["error"] = error
            await _json(send, 404 if error["code"] == -32601 else 400, reply)
            return
        reply["result"] = result
        payload = json.dumps(reply, separators=(",", ":")).encode()
        if self.json_response:
            await _reply(send, 200, payload, [(b"content-type", b"application/json"), *extra_headers])
        else:
            event = b"event: message\r\ndata: " + payload + b"\r\n\r\n"
            await _reply(send, 200, event, [(b"content-type", b"text/event-stream"), *extra_headers])

    async def dispatch(
        self, method: str, params: dict[str, Any], modern: bool
    ) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
        """The result (or JSON-RPC error) for one request."""
        extra = {"resultType": "complete"} if modern else {}
        if method == "initialize":
            offered = params.get("protocolVersion")
            version = offered if offered in HANDSHAKE_VERSIONS else HANDSHAKE_VERSIONS[-1]
            capabilities = {"tools": {"listChanged": False}}
            return {"protocolVersion": version, "capabilities": capabilities, "serverInfo": SERVER_INFO}, None
        if method == "server/discover":
            return {
                "supportedVersions": [MODERN_VERSION],
                "capabilities": {"tools": {"listChanged": False}},
                "ttlMs": 0,
                "cacheScope": "private",
                **extra,
                "_meta": {"io.modelcontextprotocol/serverInfo": SERVER_INFO},
            }, None
        if method == "ping":
            return {}, None
        if method == "tools/list":
            cache = {"ttlMs": 0, "cacheScope": "private"} if modern else {}
            return {"tools": self.tools, **cache, **extra}, None
        if method == "tools/call":
            return {**await self.call_tool(params.get("name", ""), params.get("arguments") or {}), **extra}, None
        return None, {"code": -32601, "message": f"Method not found: {method}"}

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """The same answers as the SDK test server (structured content plus its JSON as text)."""
        if self.delay:
            await asyncio.sleep(self.delay)
        if name == "search_documents":
            return _text_result({"results": self.search(str(arguments.get("query", "")))})
        if name == "get_documents":
            names = list(arguments.get("names") or [])
            if len(names) > self.max_names:
                return _error_result(f"INVALID_ARGUMENT: at most {self.max_names} names per call")
            unknown = [doc for doc in names if doc not in self.docs]
            if unknown:
                return _error_result(f"NOT_FOUND: document {unknown[0]} was not found")
            return _text_result({"documents": [self.docs[doc] for doc in names]})
        if name == "answer_query":
            hits = self.search(str(arguments.get("query", "")), limit=2)
            text = " ".join(hit["content"] for hit in hits) or "The documentation does not say."
            return _text_result({"answerText": text, "references": list(dict.fromkeys(h["parent"] for h in hits))})
        return _error_result(f"Unknown tool: {name}")


def _text_result(payload: dict[str, Any]) -> dict[str, Any]:
    # The SDK test server sends the JSON twice (indented text plus structured content): keep sizes equal.
    text = json.dumps(payload, indent=2)
    return {"content": [{"type": "text", "text": text}], "structuredContent": payload, "isError": False}


def _error_result(message: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": message}], "isError": True}


async def _json(send: Any, status: int, body: dict[str, Any]) -> None:
    await _reply(send, status, json.dumps(body).encode(), [(b"content-type", b"application/json")])


async def _reply(send: Any, status: int, body: bytes, headers: list[tuple[bytes, bytes]]) -> None:
    headers = [*headers, (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def main(argv: list[str] | None = None) -> None:
    """Serve on 127.0.0.1 until terminated."""
    import uvicorn

    from tests.servers.sdk_server import FIXTURES, load_docs

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--json", action="store_true", help="answer application/json instead of SSE")
    parser.add_argument("--stateless", action="store_true", help="issue no session id")
    parser.add_argument("--delay", type=float, default=0.0)
    parser.add_argument("--docs", default=str(FIXTURES))
    parser.add_argument("--log", default=None, help="accepted for symmetry with the SDK server; ignored")
    args = parser.parse_args(argv)
    app = FastMcpApp(load_docs(Path(args.docs)), json_response=args.json, stateless=args.stateless, delay=args.delay)
    uvicorn.run(app, host="127.0.0.1", port=args.port, log_level="warning", access_log=False, lifespan="off")


if __name__ == "__main__":
    main()
