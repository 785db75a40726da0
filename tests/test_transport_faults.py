"""McpHttpBackend against faults a real server can't make on demand, from a scripted loopback server.

The scripted server (``tests/servers/scripted.py``) is a real HTTP server (uvicorn on 127.0.0.1); only
its replies are scripted: odd SSE framing, streams that end early or hang, 429/503 with Retry-After,
sessions that vanish, version errors, redirects.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest
from starlette.responses import Response, StreamingResponse

from devknow_jupyter.errors import (
    AuthenticationError,
    ProtocolError,
    QuotaExceededError,
    RequestTimeout,
    ToolError,
    TransportError,
)
from devknow_jupyter.transport import McpHttpBackend
from devknow_jupyter.transport.retry import RetryPolicy, parse_retry_after
from tests.servers.scripted import (
    Call,
    ScriptedServer,
    error,
    event,
    legacy_server,
    modern_server,
    result,
    rpc_json,
    sse,
    tool_ok,
)

SECRET = "AIzaTest-faults-key-0123456789"
HITS = {"results": [{"parent": "documents/a.example/x", "id": "0", "content": "hello"}]}


def search(url: str, **options) -> dict:
    options.setdefault("backoff", 0.01)
    with McpHttpBackend(url, api_key=SECRET, **options) as remote:
        return remote.call_tool("search_documents", {"query": "q"})


def on_tools(reply: Callable[[Call], Response]) -> Callable[[Call], Response | None]:
    """Script only tools/call; everything else gets the default answer."""
    return lambda call: reply(call) if call.rpc_method == "tools/call" else None


# -- SSE framing (checklist 10) --------------------------------------------------------------------------


@pytest.mark.parametrize("newline", ["\r\n", "\n", "\r"])
def test_sse_skips_priming_comments_notifications_and_stops_at_our_id(newline: str) -> None:
    def reply(call: Call) -> Response:
        answer = json.dumps(result(call, tool_ok(HITS)), indent=1)  # JSON over several data: lines
        events = [
            f"id: prime-0{newline}data:{newline}{newline}",  # a priming event
            f": keepalive{newline}{newline}",
            event({"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progress": 1}}, newline=newline),
            event({"jsonrpc": "2.0", "id": 999, "result": {}}, newline=newline),  # someone else's reply
            "event: message" + newline + "".join(f"data: {line}{newline}" for line in answer.splitlines()) + newline,
        ]
        # The stream stays open: we must stop at our reply, not wait for the end. (With bare CR line ends
        # a final CR can't be told from the start of a CRLF until more bytes come, so that stream ends.)
        return sse(events, hang=0 if newline == "\r" else 60)

    with ScriptedServer(modern_server(on_tools(reply))) as server:
        assert search(server.url, timeout=10) == HITS


def test_sse_split_into_tiny_chunks_still_parses() -> None:
    def reply(call: Call) -> Response:
        text = event(result(call, tool_ok(HITS)))
        return sse([text[i : i + 3] for i in range(0, len(text), 3)])

    with ScriptedServer(modern_server(on_tools(reply))) as server:
        assert search(server.url) == HITS


def test_a_two_mebibyte_event_is_accepted() -> None:
    big = {"documents": [{"name": f"documents/a.example/{i}", "content": "x" * 200_000} for i in range(11)]}

    def reply(call: Call) -> Response:
        return sse([event(result(call, tool_ok(big, text="")))])

    with ScriptedServer(modern_server(on_tools(reply))) as server:
        assert search(server.url) == big


def test_malformed_sse_is_a_protocol_error() -> None:
    def reply(call: Call) -> Response:
        return sse(["event: message\r\ndata: {not json\r\n\r\n"])

    with ScriptedServer(modern_server(on_tools(reply))) as server, pytest.raises(ProtocolError, match="not valid JSON"):
        search(server.url)


def test_a_stream_ending_without_the_reply_is_sent_again_once() -> None:
    def reply(call: Call) -> Response:
        if len([c for c in server.calls if c.rpc_method == "tools/call"]) == 1:
            return sse([": nothing for you\r\n\r\n"])
        return sse([event(result(call, tool_ok(HITS)))])

    with ScriptedServer(modern_server(on_tools(reply))) as server:
        assert search(server.url) == HITS
        calls = [c for c in server.calls if c.rpc_method == "tools/call"]
        assert len(calls) == 2 and calls[0].rpc_id != calls[1].rpc_id


def test_a_stream_ending_twice_is_a_protocol_error() -> None:
    with ScriptedServer(modern_server(on_tools(lambda call: sse([])))) as server:
        with pytest.raises(ProtocolError, match="ended"):
            search(server.url)
        assert server.rpc_methods().count("tools/call") == 2


@pytest.mark.parametrize(
    ("reply", "match"),
    [
        (lambda call: Response(status_code=202), "no reply"),
        (lambda call: Response("<html>hi</html>", media_type="text/html"), "text/html"),
        (lambda call: rpc_json({"jsonrpc": "2.0", "id": 12345, "result": {}}), "another request"),
        (lambda call: Response("{oops", media_type="application/json"), "not valid JSON"),
        (lambda call: rpc_json(result(call, {"content": [{"type": "text", "text": "plain words"}]})), "neither"),
        (lambda call: rpc_json(result(call, {**tool_ok(HITS), "resultType": "input_required"})), "input_required"),
    ],
)
def test_malformed_replies_are_protocol_errors(reply, match: str) -> None:
    with ScriptedServer(modern_server(on_tools(reply))) as server, pytest.raises(ProtocolError, match=match):
        search(server.url)


# -- kept-alive connections after SSE replies -------------------------------------------------------------

CALLS = 5


def sse_whole(events: list[str]) -> Response:
    """An event stream sent as one body with a Content-Length (no chunked encoding), as some servers do."""
    return Response("".join(events), media_type="text/event-stream")


def chatter_after(answer: str) -> Response:
    """Our reply, then keep-alive comments for ever: the stream never ends on its own."""

    async def body():
        yield answer.encode()
        while True:
            yield b": still here\r\n\r\n" * 64
            await asyncio.sleep(0.001)

    return StreamingResponse(body(), media_type="text/event-stream")


@pytest.mark.parametrize("era", ["modern", "handshake"])
@pytest.mark.parametrize("framing", ["chunked", "content-length", "priming and a trailing notification"])
def test_sse_replies_reuse_one_connection(era: str, framing: str) -> None:
    def reply(call: Call) -> Response:
        answer = event(result(call, tool_ok(HITS)))
        if framing == "chunked":
            return sse([answer])
        if framing == "content-length":
            return sse_whole([answer])
        notice = event({"jsonrpc": "2.0", "method": "notifications/message", "params": {"data": "bye"}})
        return sse(["id: p-0\r\ndata:\r\n\r\n", answer, notice], pause=0.001)

    handler = modern_server(on_tools(reply)) if era == "modern" else legacy_server(on_tools(reply))
    with ScriptedServer(handler) as server:
        with McpHttpBackend(server.url, api_key=SECRET) as remote:
            for _ in range(CALLS):
                assert remote.call_tool("search_documents", {"query": "q"}) == HITS
            assert remote.era == era
        assert len(server.connections("tools/call")) == CALLS
        assert len(set(server.connections())) == 1  # discovery, handshake, every call (and DELETE): one connection


@pytest.mark.timeout(60)  # a client that waited for this stream's end would wait 300 s
def test_a_stream_left_open_after_the_reply_returns_at_once_and_its_connection_is_dropped() -> None:
    def reply(call: Call) -> Response:
        return sse([event(result(call, tool_ok(HITS)))], hang=600)

    with ScriptedServer(modern_server(on_tools(reply))) as server:
        with McpHttpBackend(server.url, timeout=300) as remote:
            for _ in range(3):
                assert remote.call_tool("search_documents", {"query": "q"}) == HITS
        # Each open stream's connection was closed, not kept busy: every call came on a new one.
        assert len(set(server.connections("tools/call"))) == 3


@pytest.mark.timeout(60)
def test_a_stream_that_keeps_talking_after_the_reply_is_cut_off() -> None:
    def reply(call: Call) -> Response:
        return chatter_after(event(result(call, tool_ok(HITS))))

    with ScriptedServer(modern_server(on_tools(reply))) as server:
        with McpHttpBackend(server.url, timeout=300) as remote:
            for _ in range(2):
                assert remote.call_tool("search_documents", {"query": "q"}) == HITS
        assert len(set(server.connections("tools/call"))) == 2


def test_a_connection_kept_from_an_sse_reply_serves_concurrent_calls() -> None:
    # Threads share the pool: a connection handed back while one thread drains must serve another cleanly.
    with ScriptedServer(modern_server(on_tools(lambda call: sse([event(result(call, tool_ok(HITS)))])))) as server:
        with McpHttpBackend(server.url) as remote, ThreadPoolExecutor(4) as pool:
            answers = list(pool.map(lambda _: remote.call_tool("search_documents", {"query": "q"}), range(40)))
        assert answers == [HITS] * 40
        assert len(set(server.connections("tools/call"))) <= 4 < len(server.connections("tools/call"))


# -- results (checklist 11) -----------------------------------------------------------------------------


def test_structured_content_is_preferred_then_text_json() -> None:
    other = {"results": []}

    def reply(call: Call) -> Response:
        if call.body["params"]["arguments"]["query"] == "structured":
            return rpc_json(result(call, tool_ok(HITS, text=json.dumps(other))))
        return rpc_json(result(call, {"content": [{"type": "text", "text": json.dumps(HITS)}]}))

    with ScriptedServer(modern_server(on_tools(reply))) as server, McpHttpBackend(server.url) as remote:
        assert remote.call_tool("search_documents", {"query": "structured"}) == HITS
        assert remote.call_tool("search_documents", {"query": "text only"}) == HITS


@pytest.mark.parametrize(
    ("text", "quota"),
    [
        ("RESOURCE_EXHAUSTED: quota exceeded", True),
        ("429 Too Many Requests", True),
        ("Quota exceeded for AnswerQuery", True),
        ("NOT_FOUND: document documents/docs.example.dev/quotas was not found", False),
        ("INVALID_ARGUMENT: bad", False),
    ],
)
def test_is_error_results_are_tool_or_quota_errors(text: str, quota: bool) -> None:
    def reply(call: Call) -> Response:
        return rpc_json(result(call, {"content": [{"type": "text", "text": text}], "isError": True}))

    with ScriptedServer(modern_server(on_tools(reply))) as server:
        with pytest.raises(ToolError if not quota else QuotaExceededError) as caught:
            search(server.url)
        assert text.split(":")[0] in str(caught.value)
        assert server.rpc_methods().count("tools/call") == 1  # no retry for a tool error


@pytest.mark.parametrize(
    ("reply", "expected", "code"),
    [
        (lambda call: rpc_json(error(call, -32602, "Unknown tool: nope")), ToolError, -32602),
        (lambda call: rpc_json(error(call, 429, "Too many")), QuotaExceededError, None),
        (lambda c: rpc_json(error(c, -32000, "quota", {"status": "RESOURCE_EXHAUSTED"})), QuotaExceededError, None),
        (lambda call: rpc_json(error(call, -32603, "RESOURCE_EXHAUSTED: daily")), QuotaExceededError, None),
        (lambda call: rpc_json(error(call, -32602, "Too many names"), 400), ToolError, -32602),
        (
            lambda call: rpc_json({"error": {"code": 429, "message": "x", "status": "RESOURCE_EXHAUSTED"}}, 400),
            QuotaExceededError,
            None,
        ),
    ],
)
def test_json_rpc_error_shapes(reply, expected, code) -> None:
    with ScriptedServer(modern_server(on_tools(reply))) as server:
        with pytest.raises(expected) as caught:
            search(server.url)
        if code is not None:
            assert caught.value.code == code
        assert server.rpc_methods().count("tools/call") == 1


# -- retries (checklist 14-15) ---------------------------------------------------------------------------


def unavailable(status: int, retry_after: str | None = "0", count: int = 1) -> Callable[[Call], Response | None]:
    """Fail the first ``count`` tool calls with ``status``."""
    seen = []

    def reply(call: Call) -> Response | None:
        if call.rpc_method != "tools/call":
            return None
        seen.append(call)
        if len(seen) <= count:
            headers = {"retry-after": retry_after} if retry_after is not None else {}
            return rpc_json({"error": {"code": status, "message": "busy", "status": "UNAVAILABLE"}}, status, headers)
        return rpc_json(result(call, tool_ok(HITS)))

    return reply


@pytest.mark.parametrize("status", [502, 503, 504])
def test_gateway_errors_are_retried_then_succeed(status: int) -> None:
    with ScriptedServer(modern_server(unavailable(status, retry_after=None, count=2))) as server:
        assert search(server.url) == HITS
        assert server.rpc_methods().count("tools/call") == 3


def test_429_with_retry_after_is_retried_for_search_but_not_for_answers() -> None:
    with ScriptedServer(modern_server(unavailable(429, "0"))) as server:
        assert search(server.url) == HITS
    with ScriptedServer(modern_server(unavailable(429, "0"))) as server:
        with McpHttpBackend(server.url, backoff=0.01) as remote, pytest.raises(QuotaExceededError) as caught:
            remote.call_tool("answer_query", {"query": "q"})
        assert caught.value.retry_after == 0
        assert server.rpc_methods().count("tools/call") == 1


def test_a_long_retry_after_ends_the_retries_at_once() -> None:
    with ScriptedServer(modern_server(unavailable(429, "3600"))) as server:
        with pytest.raises(QuotaExceededError) as caught:
            search(server.url)
        assert caught.value.retry_after == 3600
        assert server.rpc_methods().count("tools/call") == 1
    with ScriptedServer(modern_server(unavailable(503, "3600"))) as server:
        with pytest.raises(TransportError, match="3600"):
            search(server.url)
        assert server.rpc_methods().count("tools/call") == 1


@pytest.mark.parametrize("status", [400, 401, 403])
def test_client_errors_are_never_retried(status: int) -> None:
    with ScriptedServer(modern_server(unavailable(status, count=5))) as server:
        with pytest.raises((AuthenticationError, ProtocolError, ToolError)) as caught:
            search(server.url)
        assert server.rpc_methods().count("tools/call") == 1
        assert SECRET not in str(caught.value)
        if status in (401, 403):
            assert isinstance(caught.value, AuthenticationError) and caught.value.status == status
            assert "api_key=" in str(caught.value)  # where the key came from, never the key


def test_a_hang_past_the_read_timeout_is_a_clean_timeout() -> None:
    with ScriptedServer(modern_server(on_tools(lambda call: sse([": working\r\n\r\n"], hang=30)))) as server:
        with pytest.raises(RequestTimeout, match=r"within 0\.5 s"):
            search(server.url, timeout=0.5)
        assert server.rpc_methods().count("tools/call") == 1  # a read timeout is not retried


# -- sessions and versions (checklist 5, 7, 8, 20) -------------------------------------------------------


def test_a_second_404_after_renewal_is_an_error_not_a_loop() -> None:
    handler = legacy_server(lambda call: rpc_json(error(None, -32600, "Session not found"), 404))
    with ScriptedServer(handler) as server:
        with pytest.raises(ProtocolError, match="session"):
            search(server.url)
        assert server.rpc_methods() == [
            "server/discover",
            "initialize",
            "notifications/initialized",
            "tools/call",
            "initialize",
            "notifications/initialized",
            "tools/call",
        ]


def test_an_older_handshake_version_is_accepted_and_used() -> None:
    with ScriptedServer(legacy_server(lambda call: None, version="2025-03-26")) as server:
        with McpHttpBackend(server.url) as remote:
            remote.call_tool("search_documents", {"query": "q"})
            assert remote.protocol_version == "2025-03-26"
        tool_call = next(c for c in server.calls if c.rpc_method == "tools/call")
        assert tool_call.headers["mcp-protocol-version"] == "2025-03-26"


def test_an_unknown_handshake_version_is_refused_clearly() -> None:
    with ScriptedServer(legacy_server(lambda call: None, version="2024-11-05")) as server:
        with pytest.raises(ProtocolError, match="2024-11-05"):
            search(server.url)
        assert [c.method for c in server.calls][-1] == "DELETE"  # the half-open session is ended
        assert "tools/call" not in server.rpc_methods()


@pytest.mark.parametrize("status", [405, 404, 500])
def test_close_tolerates_any_delete_answer(status: int) -> None:
    base = legacy_server(lambda call: None)

    def handler(call: Call) -> Response:
        return Response(status_code=status) if call.method == "DELETE" else base(call)

    with ScriptedServer(handler) as server:
        remote = McpHttpBackend(server.url, api_key=SECRET)
        remote.call_tool("search_documents", {"query": "q"})
        remote.close()
        delete = server.calls[-1]
        assert delete.method == "DELETE" and delete.headers["mcp-session-id"] == "sid-1"
        assert delete.headers["x-goog-api-key"] == SECRET


def test_close_tolerates_a_vanished_server() -> None:
    with ScriptedServer(legacy_server(lambda call: None)) as server:
        remote = McpHttpBackend(server.url)
        remote.call_tool("search_documents", {"query": "q"})
    remote.close()  # the server is gone: the DELETE fails quietly


@pytest.mark.parametrize(
    ("supported", "outcome"),
    [(["2025-11-25", "2025-06-18"], "handshake"), (["2099-01-01"], ProtocolError), (None, "handshake")],
)
def test_unsupported_version_answers_on_the_probe(supported, outcome) -> None:
    base = legacy_server(lambda call: None)

    def handler(call: Call) -> Response:
        if call.rpc_method == "server/discover":
            data = {"supported": supported, "requested": "2026-07-28"} if supported else None
            return rpc_json(error(call, -32022, "Unsupported protocol version", data), 400)
        return base(call)

    with ScriptedServer(handler) as server, McpHttpBackend(server.url) as remote:
        if outcome == "handshake":
            remote.call_tool("search_documents", {"query": "q"})
            assert remote.era == "handshake"
        else:
            with pytest.raises(outcome, match="2099-01-01"):
                remote.call_tool("search_documents", {"query": "q"})
            assert "initialize" not in server.rpc_methods()


@pytest.mark.parametrize(
    "probe_reply",
    [
        lambda call: rpc_json(error(None, -32600, "Bad Request: Missing session ID"), 400),
        lambda call: rpc_json(error(call, -32601, "Method not found")),  # stateless, 200
        lambda call: Response("Not Found", status_code=404),
        lambda call: Response(status_code=405),
        lambda call: rpc_json(result(call, {"supportedVersions": ["2025-11-25"]})),
    ],
)
def test_legacy_signals_on_the_probe_lead_to_initialize(probe_reply) -> None:
    base = legacy_server(lambda call: None)

    def handler(call: Call) -> Response:
        return probe_reply(call) if call.rpc_method == "server/discover" else base(call)

    with ScriptedServer(handler) as server, McpHttpBackend(server.url) as remote:
        remote.call_tool("search_documents", {"query": "q"})
        assert remote.era == "handshake"


def test_modern_server_changing_versions_mid_life_is_reprobed() -> None:
    state = {"rejected": False}

    def on_call(call: Call) -> Response | None:
        if call.rpc_method == "tools/call" and not state["rejected"]:
            state["rejected"] = True
            data = {"supported": ["2026-07-28"], "requested": "2026-07-28"}
            return rpc_json(error(call, -32022, "Unsupported protocol version", data), 400)
        return None

    with ScriptedServer(modern_server(on_call)) as server, McpHttpBackend(server.url) as remote:
        remote.call_tool("search_documents", {"query": "q"})
        assert server.rpc_methods() == ["server/discover", "tools/call", "server/discover", "tools/call"]


# -- headers and redirects ------------------------------------------------------------------------------


def test_non_ascii_tool_names_are_base64_in_mcp_name() -> None:
    with ScriptedServer(modern_server(lambda call: None)) as server, McpHttpBackend(server.url) as remote:
        remote.call_tool("recherche_données", {"query": "q"})
        header = server.calls[-1].headers["mcp-name"]
        assert header.startswith("=?base64?") and header.endswith("?=")


def test_x_mcp_header_arguments_are_mirrored_and_bad_annotations_dropped() -> None:
    tools = [
        {
            "name": "search_documents",
            "inputSchema": {
                "type": "object",
                "properties": {"query": {"type": "string"}, "site": {"type": "string", "x-mcp-header": "Site"}},
            },
        },
        {
            "name": "broken",
            "inputSchema": {"type": "object", "properties": {"q": {"type": "string", "x-mcp-header": "bad header"}}},
        },
    ]

    def on_call(call: Call) -> Response | None:
        if call.rpc_method == "tools/list":
            return rpc_json(result(call, {"tools": tools}))
        return None

    with ScriptedServer(modern_server(on_call)) as server, McpHttpBackend(server.url) as remote:
        assert [tool["name"] for tool in remote.list_tools()] == ["search_documents"]
        remote.call_tool("search_documents", {"query": "q", "site": "firebase.google.com"})
        assert server.calls[-1].headers["mcp-param-site"] == "firebase.google.com"


def test_tools_list_pages_are_joined_and_cached() -> None:
    def on_call(call: Call) -> Response | None:
        if call.rpc_method == "tools/list":
            cursor = (call.body.get("params") or {}).get("cursor")
            page = {"tools": [{"name": "b"}]} if cursor else {"tools": [{"name": "a"}], "nextCursor": "2"}
            return rpc_json(result(call, page))
        return None

    with ScriptedServer(modern_server(on_call)) as server, McpHttpBackend(server.url) as remote:
        assert [tool["name"] for tool in remote.list_tools()] == ["a", "b"]
        assert [tool["name"] for tool in remote.list_tools()] == ["a", "b"]
        assert server.rpc_methods().count("tools/list") == 2  # two pages, once


def test_same_origin_redirect_is_followed() -> None:
    hops: list[Call] = []
    modern = modern_server(lambda call: None)

    def handler(call: Call) -> Response:
        hops.append(call)
        return Response(status_code=307, headers={"location": "/mcp/v2"}) if len(hops) == 1 else modern(call)

    with ScriptedServer(handler) as server:
        assert search(server.url) == {"results": []}
        assert [call.headers["x-goog-api-key"] for call in server.calls] == [SECRET] * 3
        assert server.rpc_methods() == ["server/discover", "server/discover", "tools/call"]


def test_a_redirect_to_another_origin_is_not_followed() -> None:
    with ScriptedServer(modern_server(lambda call: None)) as target:
        bounce = ScriptedServer(lambda call: Response(status_code=307, headers={"location": target.url}))
        with bounce as moved, pytest.raises(TransportError, match="another site"):
            search(moved.url)
        assert target.calls == []  # the key never went to the other origin


# -- the httpx seam and the retry policy --------------------------------------------------------------


def test_an_httpx_transport_can_be_given() -> None:
    seen = []

    def handle(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        seen.append(body["method"])
        if body["method"] == "server/discover":
            return httpx.Response(
                200, json={"jsonrpc": "2.0", "id": body["id"], "result": {"supportedVersions": ["2026-07-28"]}}
            )
        return httpx.Response(200, json={"jsonrpc": "2.0", "id": body["id"], "result": tool_ok(HITS)})

    with McpHttpBackend("http://mock.invalid/mcp", http_transport=httpx.MockTransport(handle)) as remote:
        assert remote.call_tool("search_documents", {"query": "q"}) == HITS
    assert seen == ["server/discover", "tools/call"]


def test_retry_policy_bounds() -> None:
    policy = RetryPolicy(attempts=3, base=1.0, cap=3.0, max_retry_after=10)
    assert [policy.may_retry(n) for n in (1, 2, 3)] == [True, True, False]
    assert 0.5 <= policy.delay(1) <= 1.0 and 1.0 <= policy.delay(2) <= 2.0 and 1.5 <= policy.delay(5) <= 3.0
    assert policy.delay(1, retry_after=4) == 4 and policy.delay(1, retry_after=11) is None
    assert policy.retries_status(429, "search_documents") and not policy.retries_status(429, "answer_query")
    assert not policy.retries_status(400, "search_documents") and policy.retries_status(503, None)
    assert parse_retry_after("7") == 7 and parse_retry_after("soon") is None and parse_retry_after(None) is None
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT") == 0
