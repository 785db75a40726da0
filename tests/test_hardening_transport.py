"""Hostile and broken servers against the transport (issue 12, items 1, 2, 5 and 7), on 127.0.0.1.

Each fault comes from a real loopback server (uvicorn serving a scripted ASGI handler,
``tests/servers/scripted.py``) and goes through the public interface: ``DevKnowClient`` and
``McpHttpBackend``, the CLI (``cli.main``) and the ``%devknow`` magic where the user sees the result.
Memory is measured where memory is the point (a child process under ``RLIMIT_AS``), time where time is.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import random
import re
import socket
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest
from starlette.responses import Response, StreamingResponse

import devknow_jupyter
from devknow_jupyter import DevKnowClient
from devknow_jupyter.cli import main as cli_main
from devknow_jupyter.errors import (
    AuthenticationError,
    DevKnowError,
    ProtocolError,
    RequestTimeout,
    ToolError,
    TransportError,
)
from devknow_jupyter.transport import McpHttpBackend
from devknow_jupyter.transport.retry import RetryPolicy
from tests.servers.scripted import MODERN, Call, ScriptedServer, event, modern_server, result, rpc_json, sse, tool_ok

SECRET = "AIzaHardening-0123456789abcdefXYZ"
HITS = {"results": [{"parent": "documents/a.example/x", "id": "0", "content": "hello"}]}
MIB = 1024 * 1024
PACKAGE_ROOT = Path(devknow_jupyter.__file__).resolve().parents[1]


def on_tools(reply: Callable[[Call], Response]) -> Callable[[Call], Response | None]:
    """Script only tools/call (and accept the client's answers to pings); the rest gets the default answer."""

    def handle(call: Call) -> Response | None:
        if call.rpc_method is None and isinstance(call.body, dict) and "id" in call.body:
            return Response(status_code=202)  # the client's reply to a ping
        return reply(call) if call.rpc_method == "tools/call" else None

    return handle


def tool_calls(server: ScriptedServer) -> int:
    return server.rpc_methods().count("tools/call")


def streaming(pieces: AsyncIterator[bytes], media_type: str) -> Response:
    return StreamingResponse(pieces, media_type=media_type)


# -- 1. bounded replies ----------------------------------------------------------------------------------


def endless(head: bytes, filler: bytes, total: int) -> Callable[[Call], Response]:
    """A reply of ``total`` bytes, chunked (no Content-Length): ``head`` then ``filler`` repeated."""

    def reply(call: Call) -> Response:
        async def body() -> AsyncIterator[bytes]:
            yield head
            sent = len(head)
            while sent < total:
                yield filler
                sent += len(filler)

        media = "text/event-stream" if head.startswith(b"event:") or head.startswith(b"data:") else "application/json"
        return streaming(body(), media)

    return reply


CHILD = textwrap.dedent(
    """
    import resource, sys
    resource.setrlimit(resource.RLIMIT_AS, (int(sys.argv[2]), int(sys.argv[2])))
    from devknow_jupyter.errors import DevKnowError
    from devknow_jupyter.transport import McpHttpBackend
    try:
        with McpHttpBackend(sys.argv[1], timeout=60, backoff=0.01) as remote:
            remote.call_tool("search_documents", {"query": "q"})
        print("RESULT no error")
    except DevKnowError as exc:
        print("RESULT", type(exc).__name__, exc)
    except MemoryError:
        print("RESULT MemoryError")
    """
)


def run_limited_client(url: str, limit_bytes: int) -> subprocess.CompletedProcess[str]:
    """One search call in a child process whose address space is capped at ``limit_bytes``."""
    env = {**os.environ, "PYTHONPATH": str(PACKAGE_ROOT)}
    return subprocess.run(
        [sys.executable, "-c", CHILD, url, str(limit_bytes)],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        check=False,
    )


@pytest.mark.parametrize(
    ("head", "filler"),
    [
        # A JSON body that never ends: 300 MB of one string.
        (b'{"jsonrpc":"2.0","id":1,"result":{"structuredContent":{"results":[{"content":"', b"x" * MIB),
        # A data: line that never ends.
        (b'event: message\r\ndata: {"jsonrpc":"2.0","id":1,"result":"', b"x" * MIB),
        # An event of 300 MB in short lines, none of them too long alone.
        (b"event: message\r\n", b"data: " + b"x" * 1000 + b"\r\n"),
    ],
    ids=["json-body", "sse-line", "sse-event"],
)
def test_a_300_mb_reply_is_a_protocol_error_in_bounded_memory_and_not_sent_again(head: bytes, filler: bytes) -> None:
    with ScriptedServer(modern_server(on_tools(endless(head, filler, 300 * MIB)))) as server:
        started = time.monotonic()
        child = run_limited_client(server.url, 400 * MIB)  # the reply alone would not fit, let alone 3× it
        elapsed = time.monotonic() - started
        assert child.returncode == 0, child.stderr[-2000:]
        line = [row for row in child.stdout.splitlines() if row.startswith("RESULT")]
        assert line and line[0].startswith("RESULT ProtocolError"), child.stdout + child.stderr[-2000:]
        assert "32 MiB limit (max_reply_bytes)" in line[0]
        assert tool_calls(server) == 1  # an over-limit reply is final: no resend
        assert elapsed < 10


def test_the_limit_is_configurable_and_can_be_switched_off() -> None:
    big = {"results": [{"parent": "documents/a.example/x", "id": "0", "content": "y" * 5000}]}

    def reply(call: Call) -> Response:
        if call.number % 2:
            return sse([event(result(call, tool_ok(big)))])
        return rpc_json(result(call, tool_ok(big)))

    with ScriptedServer(modern_server(on_tools(reply))) as server:
        for _ in range(2):  # once as JSON, once as an event stream
            client = DevKnowClient(server.url, cache=False, max_reply_bytes=4096)
            with client, pytest.raises(ProtocolError, match="4096 byte limit"):
                client.search_documents("q")
        with DevKnowClient(server.url, cache=False, max_reply_bytes=None) as client:
            assert client.search_documents("q")[0].content == "y" * 5000
        with DevKnowClient(server.url, cache=False) as client:  # the default: far above this reply
            assert client.search_documents("q")[0].content == "y" * 5000


def test_a_declared_content_length_past_the_limit_is_refused_before_reading() -> None:
    def reply(call: Call) -> Response:
        body = json.dumps(result(call, tool_ok({"results": [{"content": "z" * 20_000}]})))
        return Response(body, media_type="application/json")

    with ScriptedServer(modern_server(on_tools(reply))) as server:
        with McpHttpBackend(server.url, max_reply_bytes=10_000) as remote, pytest.raises(ProtocolError, match="10000"):
            remote.call_tool("search_documents", {"query": "q"})
        assert tool_calls(server) == 1


# -- 2. one deadline per call ----------------------------------------------------------------------------


def drip(call: Call) -> Response:
    """A valid JSON reply, one byte a second (whitespace first): no single read ever waits long."""

    async def body() -> AsyncIterator[bytes]:
        for _ in range(30):
            yield b" "
            await asyncio.sleep(1)
        yield json.dumps(result(call, tool_ok(HITS))).encode()

    return streaming(body(), "application/json")


def chatter(kind: str, pause: float, seconds: float = 8.0) -> Callable[[Call], Response]:
    """An event stream of notifications or pings (never our reply) every ``pause`` s for ``seconds``
    (``pause`` 0: 300 pings at once, then silence)."""

    def reply(call: Call) -> Response:
        async def body() -> AsyncIterator[bytes]:
            end = time.monotonic() + seconds
            number = 0
            while time.monotonic() < end:
                number += 1
                if kind == "ping":
                    message = {"jsonrpc": "2.0", "id": f"ping-{number}", "method": "ping"}
                else:
                    message = {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progress": number}}
                yield event(message).encode()
                await asyncio.sleep(pause if pause or number < 300 else seconds)

        return streaming(body(), "text/event-stream")

    return reply


@pytest.mark.parametrize(
    ("reply", "answers"),
    [(drip, 0), (chatter("notification", 0.1), 0), (chatter("ping", 0.005), None), (chatter("ping", 0), 100)],
    ids=["drip", "notifications", "pings", "ping-burst"],
)
def test_timeout_bounds_the_whole_call(reply: Callable[[Call], Response], answers: int | None) -> None:
    with ScriptedServer(modern_server(on_tools(reply))) as server:
        with DevKnowClient(server.url, cache=False, timeout=2) as client:
            started = time.monotonic()
            with pytest.raises(RequestTimeout) as caught:
                client.search_documents("q")
            elapsed = time.monotonic() - started
        assert 1.9 < elapsed < 4, elapsed
        assert "within 2 s" in str(caught.value) and "whole call" in str(caught.value)
        assert tool_calls(server) == 1  # no resend once the time is up
        answered = [call for call in server.calls if call.rpc_method is None and call.method == "POST"]
        assert len(answered) <= 100  # pings are answered a bounded number of times per call
        if answers is not None:  # 300 pings at once: exactly the first 100 answered
            assert len(answered) == answers


class HeaderDripServer:
    """A raw-socket HTTP/1.1 server: answers ``server/discover``, then sends the status line of a tools/call
    reply and its headers one byte every half second (what no ASGI server can be made to do)."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}/mcp"
        self.tool_calls = 0
        self.stop = threading.Event()

    def __enter__(self) -> HeaderDripServer:
        threading.Thread(target=self._accept, daemon=True).start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop.set()
        self.sock.close()

    def _accept(self) -> None:
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        with conn:
            buffer = b""
            while not self.stop.is_set():
                while b"\r\n\r\n" not in buffer:
                    data = conn.recv(65536)
                    if not data:
                        return
                    buffer += data
                head, _, buffer = buffer.partition(b"\r\n\r\n")
                length = int(re.search(rb"(?i)content-length: *(\d+)", head).group(1))
                while len(buffer) < length:
                    buffer += conn.recv(65536)
                message, buffer = json.loads(buffer[:length]), buffer[length:]
                if message.get("method") == "server/discover":
                    body = json.dumps(result(Call(0, "POST", {}, message), {"supportedVersions": [MODERN]})).encode()
                    conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n")
                    conn.sendall(b"content-length: %d\r\n\r\n%s" % (len(body), body))
                    continue
                self.tool_calls += 1
                conn.sendall(b"HTTP/1.1 200 OK\r\n")
                for byte in b"x-slow: " + b"a" * 60:
                    if self.stop.wait(0.5):
                        return
                    conn.sendall(bytes([byte]))
                return


def test_timeout_bounds_headers_that_drip() -> None:
    with HeaderDripServer() as server, McpHttpBackend(server.url, timeout=2) as remote:
        started = time.monotonic()
        with pytest.raises(RequestTimeout, match="whole call"):
            remote.call_tool("search_documents", {"query": "q"})
        assert time.monotonic() - started < 3.5
        assert server.tool_calls == 1


def test_retry_after_waits_count_against_the_timeout() -> None:
    def busy(call: Call) -> Response:
        body = {"error": {"code": 503, "message": "busy", "status": "UNAVAILABLE"}}
        return rpc_json(body, 503, {"retry-after": "1"})

    with ScriptedServer(modern_server(on_tools(busy))) as server:
        remote = McpHttpBackend(server.url, timeout=1.5, retry=RetryPolicy(attempts=10))
        started = time.monotonic()
        with remote, pytest.raises(TransportError, match="503"):
            remote.call_tool("search_documents", {"query": "q"})
        elapsed = time.monotonic() - started
        # One wait of 1 s fits in 1.5 s; the next would not, so the 503 is the answer, within the timeout.
        assert elapsed < 1.5, elapsed
        assert tool_calls(server) == 2


# -- 5. secrets in more shapes ---------------------------------------------------------------------------


def echoing(status: int) -> Callable[[Call], Response]:
    """A server that quotes the key it got back, cut and lowercased, in its error."""

    def reply(call: Call) -> Response:
        key = call.headers.get("x-goog-api-key", "")
        said = f"API key {key.lower()} is not valid (starts {key[:10]}, upper {key[:14].upper()})"
        if status == 200:
            return rpc_json(result(call, {"content": [{"type": "text", "text": said}], "isError": True}))
        return rpc_json({"error": {"code": status, "message": said, "status": "PERMISSION_DENIED"}}, status)

    return reply


def no_key_part(text: str) -> None:
    """``text`` holds no 8-character piece of the key's start, in any letter case."""
    assert SECRET[:8].lower() not in text.lower(), text


@pytest.mark.parametrize("status", [403, 200])
def test_a_key_read_from_a_file_is_stripped_and_never_shown(status: int, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)  # httpcore's and httpx's debug logs included
    with ScriptedServer(modern_server(on_tools(echoing(status)))) as server:
        with DevKnowClient(server.url, api_key=SECRET + "\n", cache=False) as client:
            with pytest.raises((AuthenticationError, ToolError)) as caught:
                client.search_documents("q")
            shown = [str(caught.value), caught.value.short_message(), repr(client), json.dumps(client.status())]
        assert server.calls[-1].headers["x-goog-api-key"] == SECRET  # sent without the newline
    for text in shown + [record.getMessage() for record in caplog.records]:
        no_key_part(text)


@pytest.mark.parametrize(
    "make_url",
    [
        lambda url: url.replace("http://", f"http://someone:{SECRET}@"),
        lambda url: url.replace("http://", f"http://{SECRET}@"),
        lambda url: f"{url}?key={SECRET}",
        lambda url: f"{url}?api_key={SECRET}&trace=1",
    ],
    ids=["userinfo", "user-only", "key-param", "api_key-param"],
)
def test_a_key_in_the_endpoint_url_moves_to_the_header(make_url: Callable[[str], str], caplog) -> None:
    caplog.set_level(logging.DEBUG)
    with ScriptedServer(modern_server(on_tools(lambda call: rpc_json(result(call, tool_ok(HITS)))))) as server:
        with DevKnowClient(make_url(server.url), cache=False) as client:
            assert client.search_documents("q")[0].content == "hello"
            shown = [repr(client), json.dumps(client.status()), repr(client.backend)]
            assert client.status()["key_source"] == "the endpoint URL"
        for call in server.calls:
            assert call.headers["x-goog-api-key"] == SECRET
            assert "authorization" not in call.headers  # not sent as basic auth as well
    for text in shown + [record.getMessage() for record in caplog.records]:
        no_key_part(text)


def test_a_key_in_the_endpoint_url_never_shows_in_the_devknow_magic(ip) -> None:
    with ScriptedServer(modern_server(on_tools(lambda call: rpc_json(result(call, tool_ok(HITS)))))) as server:
        url = server.url.replace("http://", f"http://me:{SECRET}@")
        outputs = []
        from IPython.utils.capture import capture_output

        with capture_output() as captured:
            ip.run_line_magic("devknow", f"--endpoint {url}")
            ip.run_line_magic("devsearch", "q")
            status = ip.run_line_magic("devknow", "")
        outputs += [captured.stdout, captured.stderr, *(json.dumps(o.data) for o in captured.outputs)]
        outputs += list(ip.display_formatter.format(status)[0].values())
        assert any("127.0.0.1" in text for text in outputs)
        assert server.calls[-1].headers["x-goog-api-key"] == SECRET
    for text in outputs:
        no_key_part(text)


# -- 7. odd but valid JSON -------------------------------------------------------------------------------

DEEP = "[" * 100_000 + "]" * 100_000


def raw_reply(template: str, *, status: int = 200, media: str = "application/json") -> Callable[[Call], Response]:
    """A reply whose text is ``template`` with ``ID`` replaced by the request id (for JSON no library writes)."""

    def reply(call: Call) -> Response:
        text = template.replace('"ID"', json.dumps(call.rpc_id))
        if media == "text/event-stream":
            text = f"event: message\r\ndata: {text}\r\n\r\n"
        return Response(text, status_code=status, media_type=media)

    return reply


def structured(value: object) -> Callable[[Call], Response]:
    return lambda call: rpc_json(result(call, {"content": [], "structuredContent": value}))


ODD = {
    "results a string": ("search", structured({"results": "abc"})),
    "results of numbers": ("search", structured({"results": [1, "x"]})),
    "a parent that is a list": ("search", structured({"results": [{"parent": ["a"], "id": "1", "content": ""}]})),
    "documents of null": ("get", structured({"documents": [None]})),
    "a title that is an object": ("get", structured({"documents": [{"name": "documents/a", "title": {"x": 1}}]})),
    "answer text a number": ("ask", structured({"answerText": 5, "references": []})),
    "references a string": ("ask", structured({"answerText": "a", "references": "documents/a"})),
    "a reference of lists": ("ask", structured({"answerText": "a", "references": [{"name": ["x"]}]})),
    "text a number": ("search", lambda call: rpc_json(result(call, {"content": [{"type": "text", "text": 5}]}))),
    "deep body": ("search", raw_reply('{"jsonrpc":"2.0","id":"ID","result":' + DEEP + "}")),
    "deep event": ("search", raw_reply('{"jsonrpc":"2.0","id":"ID","result":' + DEEP + "}", media="text/event-stream")),
    "deep structured content": (
        "search",
        raw_reply('{"jsonrpc":"2.0","id":"ID","result":{"structuredContent":{"results":' + DEEP + "}}}"),
    ),
    "deep text content": (
        "search",
        lambda call: rpc_json(result(call, {"content": [{"type": "text", "text": '{"results":' + DEEP + "}"}]})),
    ),
    "deep error body": ("search", raw_reply(DEEP[:30_000] + DEEP[-30_000:], status=500)),
}


@pytest.mark.parametrize("case", list(ODD), ids=list(ODD))
def test_odd_but_valid_json_is_one_protocol_error(case: str) -> None:
    tool, reply = ODD[case]
    with ScriptedServer(modern_server(on_tools(reply))) as server:
        client = DevKnowClient(server.url, cache=False, offline_store=False, timeout=5)
        call = {
            "search": lambda: client.search_documents("q"),
            "get": lambda: client.get_documents(["documents/a"]),
            "ask": lambda: client.answer_query("q"),
        }[tool]
        expected = TransportError if case == "deep error body" else ProtocolError  # an HTTP 500 stays one
        with client, pytest.raises(expected):
            call()


LONE = "bad \\ud800 text and a pair \\ud83d\\ude00 and \\udfff"


def surrogate_document(call: Call) -> Response:
    name = call.body["params"]["arguments"]["names"][0]
    doc = f'{{"name": {json.dumps(name)}, "title": "T \\ud800", "content": "{LONE}", "description": "{LONE}"}}'
    result_text = f'{{"structuredContent":{{"documents":[{doc}]}}}}'
    text = f'{{"jsonrpc":"2.0","id":{json.dumps(call.rpc_id)},"result":{result_text}}}'

    return Response(text, media_type="application/json")


def test_a_lone_surrogate_becomes_a_replacement_character(capsys: pytest.CaptureFixture[str]) -> None:
    name = "documents/a.example/odd"
    with ScriptedServer(modern_server(on_tools(surrogate_document))) as server:
        with DevKnowClient(server.url, cache=False, offline_store=False) as client:
            doc = client.get_documents([name])[0]
            assert doc.content == "bad \ufffd text and a pair \U0001f600 and \ufffd"
            assert doc.title == "T \ufffd"
            bundle = client.get_documents([name])._repr_mimebundle_()
            for value in bundle.values():
                (value if isinstance(value, str) else json.dumps(value)).encode("utf-8")  # notebook output encodes

        assert cli_main(["--endpoint", server.url, "get", "--json", name]) == 0
        out = capsys.readouterr().out
        assert json.loads(out)["documents"][0]["content"] == doc.content
        assert cli_main(["--endpoint", server.url, "get", name]) == 0
        assert "\ufffd" in capsys.readouterr().out


ODD_VALUES = [None, True, 0, 1.5, "", "x", "\ud800", [], [None], [1, "x"], {}, {"a": None}, [[[]]]]
VALID = {
    "search_documents": {"results": [{"parent": "documents/a.example/b", "id": "1", "content": "c"}]},
    "get_documents": {
        "documents": [{"name": "documents/a.example/b", "uri": "https://a.example/b", "content": "c", "title": "t"}]
    },
    "answer_query": {"answerText": "a", "references": ["documents/a.example/b", {"name": "documents/a.example/c"}]},
}


def mutated(value: object, rng: random.Random) -> object:
    """``value`` with one node somewhere in it replaced by an odd value."""
    if isinstance(value, dict) and value and rng.random() < 0.75:
        key = rng.choice(list(value))
        return {**value, key: mutated(value[key], rng)}
    if isinstance(value, list) and value and rng.random() < 0.75:
        index = rng.randrange(len(value))
        return [*value[:index], mutated(value[index], rng), *value[index + 1 :]]
    return rng.choice(ODD_VALUES)


def test_wrong_types_anywhere_in_the_three_shapes_are_protocol_errors() -> None:
    rng = random.Random(12)

    def reply(call: Call) -> Response:
        payload = VALID[call.body["params"]["name"]]
        wrapper = {"content": [{"type": "text", "text": json.dumps(payload)}], "structuredContent": payload}
        return rpc_json(result(call, mutated(wrapper, rng)))

    outcomes: dict[str, int] = {}
    with ScriptedServer(modern_server(on_tools(reply))) as server:
        client = DevKnowClient(server.url, cache=False, offline_store=False)
        calls = [
            lambda: client.search_documents("q"),
            lambda: client.get_documents(["documents/a.example/b"]),
            lambda: client.answer_query("q"),
        ]
        with client:
            for number in range(150):
                try:
                    value = calls[number % 3]()
                    json.dumps(value.to_dict(), ensure_ascii=False).encode("utf-8")
                    outcome = "ok"
                except ProtocolError:
                    outcome = "ProtocolError"
                except DevKnowError as exc:  # e.g. a name the mutation made unknown
                    outcome = type(exc).__name__
                outcomes[outcome] = outcomes.get(outcome, 0) + 1
    assert outcomes.get("ProtocolError", 0) >= 20 and outcomes.get("ok", 0) >= 20, outcomes
