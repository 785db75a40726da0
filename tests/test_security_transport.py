"""Security round 2 for the remote backends (issue 21, items 5, 6, 7 and 11): a gallery later changes keep passing.

Hostile servers on 127.0.0.1 (``tests/servers/scripted.py``, and a raw socket server for lying headers) against
the public interface: ``DevKnowClient`` over MCP and over REST, and the ``devknow`` CLI.

* 5: a redirect to another origin is never followed with the key (REST, every redirect status; MCP already).
* 6: a ``gzip, gzip`` reply (a few KB that inflate to 1 GiB) stays within ``max_reply_bytes`` and the deadline,
  measured in a child process under ``RLIMIT_AS``, the deadline by wall time.
* 7: malformed replies (truncated, too deep, wrong types, HTML, a lying ``Content-Length``, out-of-range
  numbers, odd ``Retry-After`` values, a non-ASCII session id) are one ``DevKnowError`` each.
* 11: a key in the endpoint URL under any parameter name is never shown, and goes in its header.
"""

from __future__ import annotations

import gzip
import json
import logging
import os
import socket
import struct
import subprocess
import sys
import textwrap
import threading
import time
import zlib
from collections.abc import Callable
from functools import cache
from pathlib import Path

import pytest
from starlette.responses import Response

import devknow_jupyter
from devknow_jupyter import DevKnowClient
from devknow_jupyter.cli import main as cli_main
from devknow_jupyter.errors import DevKnowError, ProtocolError, QuotaExceededError, TransportError
from devknow_jupyter.transport import McpHttpBackend
from tests.servers.scripted import (
    Call,
    ScriptedServer,
    event,
    legacy_server,
    modern_server,
    result,
    rpc_json,
    tool_ok,
)

# A Google-API-key-shaped secret: AIza and 35 more characters.
KEY = "AIza" + "SyTransport-Security_Round2-0123456"
assert len(KEY) == 39
HIT = {"parent": "documents/a.example/x", "id": "c0", "content": "A bucket holds objects."}
HITS = {"results": [HIT]}
MIB = 1024 * 1024
PACKAGE_ROOT = Path(devknow_jupyter.__file__).resolve().parents[1]

has_rest = pytest.mark.skipif(
    __import__("importlib").util.find_spec("google.developer_knowledge_v1") is None,
    reason="the rest extra is not installed",
)


def origin(server: ScriptedServer) -> str:
    return server.url.removesuffix("/mcp")


def rest_client(url: str, **options) -> DevKnowClient:
    options.setdefault("api_key", KEY)
    return DevKnowClient(url, protocol="rest", cache=False, offline_store=False, offline_fallback=False, **options)


def mcp_client(url: str, **options) -> DevKnowClient:
    options.setdefault("api_key", KEY)
    return DevKnowClient(url, cache=False, offline_store=False, offline_fallback=False, **options)


def json_reply(payload, status: int = 200, headers: dict | None = None) -> Response:
    return Response(json.dumps(payload), status_code=status, media_type="application/json", headers=headers)


def on_tools(reply: Callable[[Call], Response]) -> Callable[[Call], Response]:
    """A modern MCP server whose tools/call answers are ``reply``'s."""
    return modern_server(lambda call: reply(call) if call.rpc_method == "tools/call" else None)


def never_shows(text: str) -> None:
    assert KEY not in text and KEY[:8] not in text, text


# -- 5. redirects never carry the key to another origin --------------------------------------------------


@has_rest
@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
@pytest.mark.parametrize("tool", ["search", "answer"])
def test_rest_never_follows_a_redirect_to_another_origin(status: int, tool: str) -> None:
    with ScriptedServer(lambda call: json_reply(HITS)) as elsewhere:

        def redirect(call: Call) -> Response:
            target = origin(elsewhere) + call.path + (f"?{call.query}" if call.query else "")
            return Response(status_code=status, headers={"Location": target})

        with ScriptedServer(redirect) as server, rest_client(origin(server)) as client:
            with pytest.raises(TransportError, match="another site") as caught:
                client.search_documents("bucket") if tool == "search" else client.ask("what is a bucket?")
            assert len(server.calls) == 1
        assert elsewhere.calls == []  # the key never reached the other host
    never_shows(caught.value.short_message())


@has_rest
def test_rest_still_follows_a_redirect_within_its_origin() -> None:
    def handle(call: Call) -> Response:
        if "moved" not in call.query:
            return Response(status_code=307, headers={"Location": f"{call.path}?moved=1&{call.query}"})
        return json_reply(HITS)

    with ScriptedServer(handle) as server, rest_client(origin(server)) as client:
        assert client.search_documents("bucket").names == [HIT["parent"]]
    assert [call.headers.get("x-goog-api-key") for call in server.calls] == [KEY, KEY]


@has_rest
def test_rest_gives_up_on_a_redirect_loop_with_one_error() -> None:
    def handle(call: Call) -> Response:
        return Response(status_code=307, headers={"Location": f"{call.path}?n={call.number}"})

    with ScriptedServer(handle) as server, rest_client(origin(server)) as client:
        with pytest.raises(ProtocolError, match="redirected more than"):
            client.search_documents("bucket")
        assert len(server.calls) <= 6


# -- 6. compressed replies are bounded after every decoding layer ------------------------------------------

PIECE = 16 * MIB


@cache
def gzip_bomb(head: bytes, filler: bytes, total: int) -> bytes:
    """``head`` then ``filler`` repeated up to ``total`` bytes, gzipped twice: a few KB on the wire.

    Built without compressing ``total`` bytes: after a full flush the compressor starts afresh, so every
    later piece of the same bytes compresses to the same bytes, and only the trailer (CRC and size) is computed.
    """
    piece = filler * (PIECE // len(filler))
    count = total // len(piece)
    compressor = zlib.compressobj(9, zlib.DEFLATED, zlib.MAX_WBITS | 16)
    first = compressor.compress(head + piece) + compressor.flush(zlib.Z_FULL_FLUSH)
    again = compressor.compress(piece) + compressor.flush(zlib.Z_FULL_FLUSH)
    end = compressor.flush()[:-8]  # the last block; its trailer counted one piece where we send ``count``
    crc = zlib.crc32(head + piece)
    for _ in range(count - 1):
        crc = zlib.crc32(piece, crc)
    size = len(head) + count * len(piece)
    inner = first + again * (count - 1) + end + struct.pack("<II", crc, size & 0xFFFFFFFF)
    return gzip.compress(inner, 9)


def test_the_bomb_is_honest_gzip() -> None:
    small = gzip_bomb(b"[", b" ", 2 * PIECE)
    inner = zlib.decompress(small, zlib.MAX_WBITS | 16)
    assert zlib.decompress(inner, zlib.MAX_WBITS | 16) == b"[" + b" " * (2 * PIECE)


CHILD = textwrap.dedent(
    """
    import resource, sys, time
    limit = int(sys.argv[3])
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    from devknow_jupyter import DevKnowClient
    from devknow_jupyter.errors import DevKnowError
    url, protocol, timeout = sys.argv[1], sys.argv[2], float(sys.argv[4])
    options = dict(cache=False, offline_store=False, offline_fallback=False, timeout=timeout, api_key=sys.argv[5])
    started = time.monotonic()
    try:
        with DevKnowClient(url, protocol=protocol, **options) as client:
            client.search_documents("q")
        outcome = "no error"
    except DevKnowError as exc:
        outcome = f"{type(exc).__name__} {exc}"
    except MemoryError:
        outcome = "MemoryError"
    print("RESULT", f"{time.monotonic() - started:.2f}", outcome)
    """
)


def run_limited(url: str, protocol: str, *, limit: int, timeout: float) -> tuple[float, str]:
    """One search in a child process whose address space is capped at ``limit`` bytes: (seconds, outcome)."""
    env = {**os.environ, "PYTHONPATH": str(PACKAGE_ROOT)}
    child = subprocess.run(
        [sys.executable, "-c", CHILD, url, protocol, str(limit), str(timeout), KEY],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        check=False,
    )
    line = [row for row in child.stdout.splitlines() if row.startswith("RESULT")]
    assert line, child.stdout + child.stderr[-3000:]
    _, seconds, outcome = line[0].split(" ", 2)
    return float(seconds), outcome


def bomb_reply(body: bytes, media_type: str) -> Callable[[Call], Response]:
    headers = {"Content-Encoding": "gzip, gzip"}
    return lambda call: Response(body, media_type=media_type, headers=headers)


CASES = {
    # One JSON body of 1 GiB (mostly whitespace) over MCP and REST, and one event-stream line of 1 GiB.
    "mcp-json": ("mcp", b'{"jsonrpc":"2.0","id":1,"result":', b" ", "application/json", "max_reply_bytes", 1),
    "mcp-sse": ("mcp", b'event: message\ndata: {"jsonrpc":"2.0","id":1,"result":"', b"x", "text/event-stream", "line", 1),  # noqa: E501
    "rest-json": ("rest", b'{"results":', b" ", "application/json", "max_reply_bytes", 1),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_double_gzipped_reply_stays_within_the_limit_in_bounded_memory(case: str) -> None:
    protocol, head, filler, media_type, said, gib = CASES[case]
    if protocol == "rest":
        pytest.importorskip("google.developer_knowledge_v1", reason="the rest extra is not installed")
    body = gzip_bomb(head, filler, gib * 1024 * MIB)
    assert len(body) < 16 * 1024  # a few KB on the wire
    handler = bomb_reply(body, media_type)
    with ScriptedServer(on_tools(handler) if protocol == "mcp" else handler) as server:
        url = server.url if protocol == "mcp" else origin(server)
        # The inflated reply alone would not fit in the child's address space.
        seconds, outcome = run_limited(url, protocol, limit=768 * MIB, timeout=20)
    assert outcome.startswith("ProtocolError") and said in outcome, outcome
    assert seconds < 5, (seconds, outcome)


def test_the_deadline_holds_while_a_double_gzipped_stream_inflates() -> None:
    # 1 GiB of notifications (never our reply): only the call's deadline ends it.
    note = b'event: message\ndata: {"jsonrpc":"2.0","method":"notifications/message"}\n\n'
    body = gzip_bomb(b"", note, 1024 * MIB)
    with ScriptedServer(on_tools(bomb_reply(body, "text/event-stream"))) as server:
        started = time.monotonic()
        seconds, outcome = run_limited(server.url, "mcp", limit=768 * MIB, timeout=2)
        wall = time.monotonic() - started
    assert outcome.startswith("RequestTimeout"), outcome
    assert seconds < 3.5, (seconds, outcome)  # the 2 s deadline, plus one bounded piece and the exit
    assert wall < 15


@pytest.mark.parametrize("encoding", ["gzip", "deflate", "gzip, deflate", "identity"])
def test_ordinary_compressed_replies_are_read_as_before(encoding: str) -> None:
    payload = json.dumps({"results": [{**HIT, "content": "z" * 300_000}]}).encode()

    def encode(data: bytes) -> bytes:
        for name in [part.strip() for part in encoding.split(",")]:
            if name == "gzip":
                data = zlib.compress(data, 6, wbits=zlib.MAX_WBITS | 16)
            elif name == "deflate":
                data = zlib.compress(data, 6)
        return data

    def reply(call: Call) -> Response:
        message = json.dumps(result(call, tool_ok(json.loads(payload)))).encode()
        if call.number % 2:
            message = event(json.loads(message)).encode()
            return Response(encode(message), media_type="text/event-stream", headers={"Content-Encoding": encoding})
        return Response(encode(message), media_type="application/json", headers={"Content-Encoding": encoding})

    with ScriptedServer(on_tools(reply)) as server, mcp_client(server.url) as client:
        for _ in range(2):  # JSON, then an event stream
            assert client.search_documents("q", refresh=True)[0].content == "z" * 300_000


def test_an_encoding_the_client_did_not_ask_for_is_one_protocol_error() -> None:
    reply = lambda call: Response(b"\x00\x01", media_type="application/json", headers={"Content-Encoding": "br"})  # noqa: E731
    with ScriptedServer(on_tools(reply)) as server, mcp_client(server.url) as client:  # noqa: SIM117 (line length)
        with pytest.raises(ProtocolError, match="encoding"):
            client.search_documents("q")
    assert server.calls[-1].headers.get("accept-encoding") == "gzip, deflate"


# -- 7. malformed replies are one DevKnowError each ------------------------------------------------------

MALFORMED = {
    "truncated": b'{"results": [{"parent": "documents/a.example/x", "id": "c0", "content": "A buck',
    "deep": b'{"results": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
    "deep-objects": b'{"a":' * 50_000 + b"1" + b"}" * 50_000,
    "results-not-a-list": b'{"results": {"parent": 5}}',
    "parent-not-a-string": b'{"results": [{"parent": ["x"], "id": 1}]}',
    "not-an-object": b"[1, 2, 3]",
    "html": b"<!doctype html><html><body><h1>502 Bad Gateway</h1></body></html>",
    "not-utf8": b'{"results": [{"content": "\xff\xfe"}]}',
}


@has_rest
@pytest.mark.parametrize("case", list(MALFORMED))
def test_a_malformed_rest_reply_is_one_protocol_error(case: str) -> None:
    media = "text/html" if case == "html" else "application/json"
    with ScriptedServer(lambda call: Response(MALFORMED[case], media_type=media)) as server:  # noqa: SIM117
        with rest_client(origin(server)) as client, pytest.raises(ProtocolError) as caught:
            client.search_documents("bucket")
    assert len(str(caught.value)) < 400
    never_shows(str(caught.value))


@has_rest
@pytest.mark.parametrize("offset", ["99999999999999999999", "-99999999999999999999", '"lots"', "1e400", "[1]"])
def test_an_out_of_range_citation_offset_is_one_protocol_error(offset: str) -> None:
    body = '{"answer": {"answerText": "Buckets.", "citations": [{"startIndex": OFFSET, "endIndex": 3}]}}'
    body = body.replace("OFFSET", offset)
    with ScriptedServer(lambda call: Response(body, media_type="application/json")) as server:  # noqa: SIM117
        with rest_client(origin(server)) as client, pytest.raises(ProtocolError):
            client.ask("what is a bucket?")


@has_rest
@pytest.mark.parametrize("case", ["html", "deep", "truncated"])
def test_the_cli_prints_one_line_for_a_malformed_rest_reply(case: str, monkeypatch, capsys) -> None:
    monkeypatch.setenv("DEVKNOW_API_KEY", KEY)
    monkeypatch.setenv("DEVKNOW_CACHE_DIR", str(Path(os.environ.get("TMPDIR", "/tmp")) / f"devknow-sec-{os.getpid()}"))
    media = "text/html" if case == "html" else "application/json"
    with ScriptedServer(lambda call: Response(MALFORMED[case], media_type=media)) as server:
        code = cli_main(["--endpoint", origin(server), "--protocol", "rest", "search", "bucket"])
    out, err = capsys.readouterr()
    assert code != 0
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("devknow: "), err
    assert "Traceback" not in err + out
    never_shows(err + out)


class LyingServer:
    """A raw socket server on 127.0.0.1 that answers every request with ``reply`` (bytes, sent as they are)."""

    def __init__(self, reply: bytes) -> None:
        self.reply = reply
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.stop = threading.Event()

    def __enter__(self) -> LyingServer:
        self.sock.settimeout(0.2)
        self.thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop.set()
        self.thread.join(timeout=5)
        self.sock.close()

    def _serve(self) -> None:
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            with conn:
                conn.settimeout(2)
                try:
                    data = b""
                    while b"\r\n\r\n" not in data:
                        data += conn.recv(65536) or b"\r\n\r\n"
                    conn.sendall(self.reply)
                    conn.shutdown(socket.SHUT_WR)
                except OSError:
                    pass


def lying(declared: int, body: bytes) -> bytes:
    head = f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {declared}\r\n"
    return head.encode() + b"Connection: close\r\n\r\n" + body


@has_rest
@pytest.mark.parametrize("declared", [5000, 12], ids=["longer-than-the-body", "shorter-than-the-body"])
def test_a_lying_content_length_is_one_clear_error(declared: int) -> None:
    body = json.dumps(HITS).encode()
    with LyingServer(lying(declared, body)) as server, rest_client(server.url, timeout=5) as client:  # noqa: SIM117
        with pytest.raises(DevKnowError) as caught:
            client.search_documents("bucket")
    assert isinstance(caught.value, (ProtocolError, TransportError)), type(caught.value)
    assert not getattr(caught.value, "unreachable", False)  # a server that answered was reachable


RETRY_AFTERS = ["-5", "inf", "-inf", "nan", "1e400", "99999999999", "soon"]


@pytest.mark.parametrize("protocol", ["mcp", pytest.param("rest", marks=has_rest)])
@pytest.mark.parametrize("retry_after", RETRY_AFTERS)
def test_an_odd_retry_after_gives_a_quota_error_with_a_sane_delay(protocol: str, retry_after: str) -> None:
    quota = {"error": {"code": 429, "message": "Quota exceeded.", "status": "RESOURCE_EXHAUSTED"}}
    reply = lambda call: json_reply(quota, status=429, headers={"Retry-After": retry_after})  # noqa: E731
    with ScriptedServer(on_tools(reply) if protocol == "mcp" else reply) as server:
        url = server.url if protocol == "mcp" else origin(server)
        make = mcp_client if protocol == "mcp" else rest_client
        with make(url, timeout=10) as client, pytest.raises(QuotaExceededError) as caught:
            started = time.monotonic()
            client.search_documents("bucket")
        assert time.monotonic() - started < 5
    wait = caught.value.retry_after
    assert wait is None or 0 <= wait <= 24 * 3600, wait
    json.dumps({"retry_after": wait}, allow_nan=False)  # what the Jupyter extension sends the browser
    assert "inf" not in str(caught.value) and "nan" not in str(caught.value)


@has_rest
@pytest.mark.parametrize("delay", [{"seconds": [1]}, {"seconds": "soon"}, {"seconds": "1e400"}, {"nanos": {}}, "-5s"])
def test_an_odd_retry_info_gives_a_quota_error_with_a_sane_delay(delay) -> None:
    info = {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": delay}
    quota = {"error": {"code": 429, "message": "Quota exceeded.", "status": "RESOURCE_EXHAUSTED", "details": [info]}}
    with ScriptedServer(lambda call: json_reply(quota, status=429)) as server:  # noqa: SIM117 (line length)
        with rest_client(origin(server), timeout=10) as client, pytest.raises(QuotaExceededError) as caught:
            client.search_documents("bucket")
    wait = caught.value.retry_after
    assert wait is None or 0 <= wait <= 24 * 3600, wait


@pytest.mark.parametrize("session", ["sid-\u00e9t\u00e9", "sid with spaces", "s" * 5000])
def test_an_unusable_session_id_is_one_protocol_error(session: str) -> None:
    # The backend itself: a DevKnowClient would try the REST surface after a failed handshake.
    with ScriptedServer(legacy_server(lambda call: None, session=session)) as server, McpHttpBackend(server.url) as mcp:
        with pytest.raises(ProtocolError, match="session id"):
            mcp.call_tool("search_documents", {"query": "bucket"})
        assert server.rpc_methods()[-1] == "initialize"  # nothing sent with the id


# -- 11. keys in the endpoint URL never show --------------------------------------------------------------


@pytest.mark.parametrize("name", ["google_api_key", "GOOGLE_API_KEY", "apiKey", "k"])
def test_a_key_shaped_query_value_moves_to_the_header_and_never_shows(name: str, caplog) -> None:
    caplog.set_level(logging.DEBUG)
    with ScriptedServer(on_tools(lambda call: rpc_json(result(call, tool_ok(HITS))))) as server:
        with DevKnowClient(f"{server.url}?{name}={KEY}&region=eu", cache=False, offline_store=False) as client:
            shown = [repr(client), repr(client._backend), client.endpoint, json.dumps(client.status(), default=str)]
            assert client.search_documents("bucket").names == [HIT["parent"]]
        calls = [call for call in server.calls if call.method == "POST"]
    for text in [*shown, caplog.text]:
        never_shows(text)
    assert "region=eu" in client.endpoint  # other parameters stay
    assert all(call.headers.get("x-goog-api-key") == KEY for call in calls)
    assert all(KEY not in call.query for call in calls)


def test_a_registered_secret_in_any_query_parameter_never_shows() -> None:
    secret = "plain-secret-value-77"  # not key-shaped: masked because it is the key in use
    with ScriptedServer(on_tools(lambda call: rpc_json(result(call, tool_ok(HITS))))) as server:
        url = f"{server.url}?credential={secret}"
        with DevKnowClient(url, api_key=secret, cache=False, offline_store=False) as client:
            assert secret not in repr(client) and secret not in client.endpoint
            client.search_documents("bucket")
        assert all(secret not in call.query for call in server.calls)


@has_rest
def test_a_key_in_a_rest_endpoint_query_never_shows() -> None:
    with ScriptedServer(lambda call: json_reply(HITS)) as server:
        with DevKnowClient(f"{origin(server)}?google_api_key={KEY}", protocol="rest", cache=False) as client:
            never_shows(repr(client) + repr(client._backend) + client.endpoint)
            client.search_documents("bucket")
        assert [call.headers.get("x-goog-api-key") for call in server.calls] == [KEY]
        assert all(KEY not in call.query for call in server.calls)


def test_a_key_in_the_url_never_shows_in_an_error_or_the_cli(capsys) -> None:
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    url = f"http://127.0.0.1:{port}/mcp?google_api_key={KEY}"
    with DevKnowClient(url, cache=False, offline_store=False, offline_fallback=False) as client:  # noqa: SIM117
        with pytest.raises(TransportError) as caught:
            client.search_documents("bucket")
    never_shows(caught.value.short_message())
    cli_main(["--endpoint", url, "status"])
    out, err = capsys.readouterr()
    never_shows(out + err)
    assert f"127.0.0.1:{port}/mcp" in out  # the endpoint row is there, without the key
