"""A Developer Knowledge look-alike MCP server built on the official ``mcp`` SDK, for tests.

It offers the service's three tools with the service's schemas (``devknow_jupyter.tools``) over the
small fixture documents in ``tests/fixtures/docs``. Run it as a subprocess::

    python -m tests.servers.sdk_server --port 8765 [--json] [--stateless] [--api-key K]
        [--answer-quota N] [--log calls.jsonl] [--delay 0.1]

``--docs DIR`` serves other pages, ``--fetch-only DIR`` more pages that ``get_documents`` serves and search
never scans (big pages for load tests); ``--json`` answers ``application/json`` (default: SSE); ``--stateless``
issues no session; with
``--api-key`` every request must carry ``X-Goog-Api-Key`` (401 when missing, 403 when wrong);
``--answer-quota N`` makes answer_query report RESOURCE_EXHAUSTED after N answers; ``--log`` appends
one JSON line per tool call (tool and arguments) so tests can count requests.

Options for protocol tests (wrappers in ``tests/servers/asgi.py``): ``--era legacy|modern`` answers like a
handshake-only or modern-only server (default: the SDK's dual era); ``--quota-shape iserror|jsonrpc|http``
picks how the quota is reported (an ``isError`` result, a JSON-RPC error with code 429, or HTTP 429 with
``--retry-after``); ``--fail-first N --fail-status 503`` fails the first N POSTs as a front end would;
``--notify`` sends a progress and a log notification before each tool result (so SSE mode really streams);
``--errors jsonrpc`` reports an unknown tool or too many names as JSON-RPC -32602 (default: ``isError``);
``--ping`` sends a ``ping`` request on the call's stream first (handshake era); ``--wire-log FILE`` logs every
HTTP request; ``--tls-cert/--tls-key`` serve HTTPS.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
from pathlib import Path
from typing import Any

import mcp_types as types
import uvicorn
import yaml
from mcp.server.lowlevel import Server
from mcp.server.transport_security import TransportSecuritySettings
from mcp.shared.exceptions import MCPError
from mcp.shared.message import ServerMessageMetadata
from starlette.responses import JSONResponse

from devknow_jupyter.registry import tool_definitions
from devknow_jupyter.tools import MAX_NAMES_PER_CALL
from tests.servers.asgi import EraGate, FailFirst, QuotaGate, WireLog

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "docs"
_WORD = re.compile(r"\w+", re.UNICODE)


def load_docs(folder: Path = FIXTURES) -> dict[str, dict[str, str]]:
    """The fixture documents by name, in the service's document shape."""
    docs = {}
    for path in sorted(folder.glob("*.md")):
        text = path.read_text(encoding="utf-8")
        _, front, body = text.split("---", 2)
        meta = yaml.safe_load(front)
        docs[meta["name"]] = {
            "name": meta["name"],
            "uri": meta["uri"],
            "title": meta["title"],
            "description": meta.get("description", ""),
            "content": body.lstrip("\n"),
        }
    return docs


def sections(content: str) -> list[str]:
    """Split a page at its level-2 headings: the passages search returns."""
    parts = re.split(r"\n(?=## )", content)
    return [part.strip() for part in parts if part.strip()]


def search(docs: dict[str, dict[str, str]], query: str, limit: int = 10) -> list[dict[str, str]]:
    terms = {word.lower() for word in _WORD.findall(query) if len(word) > 2}
    scored = []
    for name, doc in docs.items():
        for i, passage in enumerate(sections(doc["content"])):
            words = [w.lower() for w in _WORD.findall(passage + " " + doc["title"])]
            score = sum(words.count(term) for term in terms)
            if score:
                scored.append((-score, name, i, passage))
    scored.sort()
    return [{"parent": name, "id": f"{i}", "content": passage} for _, name, i, passage in scored[:limit]]


def build_server(
    docs: dict[str, dict[str, str]], args: argparse.Namespace, unsearched: frozenset[str] = frozenset()
) -> Server:
    answers_given = 0
    searchable = {name: doc for name, doc in docs.items() if name not in unsearched}
    log_path = Path(args.log) if args.log else None

    def text_result(payload: dict[str, Any]) -> types.CallToolResult:
        return types.CallToolResult(
            content=[types.TextContent(text=json.dumps(payload, indent=2))], structured_content=payload
        )

    def error_result(message: str) -> types.CallToolResult:
        return types.CallToolResult(content=[types.TextContent(text=message)], is_error=True)

    def bad_params(message: str) -> types.CallToolResult:
        # --errors jsonrpc: invalid arguments and unknown tools as JSON-RPC -32602 (the spec's shape).
        if args.errors == "jsonrpc":
            raise MCPError(-32602, message)
        return error_result(message)

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[types.Tool.model_validate(tool) for tool in tool_definitions()])

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        nonlocal answers_given
        arguments = params.arguments or {}
        if log_path:
            with log_path.open("a", encoding="utf-8") as log:
                log.write(json.dumps({"tool": params.name, "arguments": arguments}) + "\n")
        if args.ping:
            try:  # a server request on this call's stream; the client must answer it
                meta = ServerMessageMetadata(related_request_id=ctx.request_id)
                await ctx.session.send_request(types.PingRequest(), types.EmptyResult, metadata=meta)
            except Exception:  # no back channel (modern era, stateless): nothing to ping
                pass
        if args.notify:
            progress = types.ProgressNotificationParams(progress_token="devknow", progress=0.5, total=1.0)
            await ctx.session.send_notification(types.ProgressNotification(params=progress), ctx.request_id)
            log = types.LoggingMessageNotificationParams(level="info", logger="test", data="working\non it")
            await ctx.session.send_notification(types.LoggingMessageNotification(params=log), ctx.request_id)
        if args.delay and args.delay_only in (None, params.name):
            await asyncio.sleep(args.delay)
        if params.name == "search_documents":
            return text_result({"results": search(searchable, str(arguments.get("query", "")))})
        if params.name == "get_documents":
            names = list(arguments.get("names") or [])
            if len(names) > MAX_NAMES_PER_CALL:
                return bad_params(f"INVALID_ARGUMENT: at most {MAX_NAMES_PER_CALL} names per call")
            unknown = [name for name in names if name not in docs]
            if unknown:
                return error_result(f"NOT_FOUND: document {unknown[0]} was not found")
            return text_result({"documents": [docs[name] for name in names]})
        if params.name == "answer_query":
            if args.answer_quota is not None and answers_given >= args.answer_quota and args.quota_shape != "http":
                message = "RESOURCE_EXHAUSTED: quota exceeded for AnswerQuery requests per day"
                if args.quota_shape == "jsonrpc":
                    raise MCPError(429, message, {"status": "RESOURCE_EXHAUSTED"})
                return error_result(message)
            answers_given += 1
            hits = search(searchable, str(arguments.get("query", "")), limit=2)
            if not hits:
                return text_result({"answerText": "The documentation does not say.", "references": []})
            text = " ".join(hit["content"].split("\n\n", 1)[-1] for hit in hits)
            return text_result({"answerText": text, "references": list(dict.fromkeys(h["parent"] for h in hits))})
        return bad_params(f"Unknown tool: {params.name}")

    return Server("devknow-test-server", version="1.0", on_list_tools=list_tools, on_call_tool=call_tool)


class KeyCheck:
    """ASGI middleware: 401 without X-Goog-Api-Key, 403 with the wrong one (as Google's front end)."""

    def __init__(self, app: Any, key: str) -> None:
        self.app, self.key = app, key

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            headers = dict(scope["headers"])
            given = headers.get(b"x-goog-api-key", b"").decode()
            if given != self.key:
                status = 401 if not given else 403
                reason = "UNAUTHENTICATED" if status == 401 else "PERMISSION_DENIED"
                body = {"error": {"code": status, "message": "API key not valid.", "status": reason}}
                await JSONResponse(body, status_code=status)(scope, receive, send)
                return
        await self.app(scope, receive, send)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--json", action="store_true", help="answer application/json instead of SSE")
    parser.add_argument("--stateless", action="store_true", help="issue no session id")
    parser.add_argument("--api-key", default=None)
    parser.add_argument("--answer-quota", type=int, default=None)
    parser.add_argument("--log", default=None)
    parser.add_argument("--delay", type=float, default=0.0)
    parser.add_argument("--docs", default=str(FIXTURES))
    parser.add_argument("--fetch-only", default=None, help="a folder of more pages, served but never searched")
    parser.add_argument("--delay-only", default=None, help="apply --delay to this tool only")
    parser.add_argument("--era", choices=["dual", "legacy", "modern"], default="dual")
    parser.add_argument("--quota-shape", choices=["iserror", "jsonrpc", "http"], default="iserror")
    parser.add_argument("--retry-after", default=None, help="Retry-After of --quota-shape http and --fail-first")
    parser.add_argument("--fail-first", type=int, default=0)
    parser.add_argument("--fail-status", type=int, default=503)
    parser.add_argument("--errors", choices=["iserror", "jsonrpc"], default="iserror")
    parser.add_argument("--notify", action="store_true")
    parser.add_argument("--ping", action="store_true")
    parser.add_argument("--wire-log", default=None)
    parser.add_argument("--tls-cert", default=None)
    parser.add_argument("--tls-key", default=None)
    args = parser.parse_args(argv)
    fetch_only = load_docs(Path(args.fetch_only)) if args.fetch_only else {}
    server = build_server({**load_docs(Path(args.docs)), **fetch_only}, args, frozenset(fetch_only))
    security = TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=["127.0.0.1:*", "localhost:*"],
        allowed_origins=["http://127.0.0.1:*", "http://localhost:*"],
    )
    app: Any = server.streamable_http_app(
        json_response=args.json, stateless_http=args.stateless, transport_security=security
    )
    if args.era != "dual":
        app = EraGate(app, args.era)
    if args.quota_shape == "http" and args.answer_quota is not None:
        app = QuotaGate(app, args.answer_quota, args.retry_after)
    if args.fail_first:
        app = FailFirst(app, args.fail_first, args.fail_status, args.retry_after)
    if args.api_key:
        app = KeyCheck(app, args.api_key)
    if args.wire_log:
        app = WireLog(app, args.wire_log)
    tls = {"ssl_certfile": args.tls_cert, "ssl_keyfile": args.tls_key} if args.tls_cert else {}
    uvicorn.run(app, host="127.0.0.1", port=args.port, log_level="warning", **tls)


if __name__ == "__main__":
    main()
