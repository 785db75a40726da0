"""The REST backend's bounds, as the MCP transport's: the reply size limit and one deadline per call.

Against a scripted loopback server (``tests/servers/scripted.py``) speaking the REST surface's paths: a body
past ``max_reply_bytes`` (declared, or chunked without a length), a body that drips a byte at a time,
503s then a success, and a batch split into many requests that together outlast the timeout.
"""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
from collections.abc import AsyncIterator

import pytest

pytest.importorskip("google.developer_knowledge_v1", reason="the rest extra is not installed")

from starlette.responses import Response, StreamingResponse

from devknow_jupyter import DevKnowClient, ProtocolError, RequestTimeout, TransportError
from tests.servers.scripted import Call, ScriptedServer

KEY = "k-rest-bounds-4411"
HIT = {"parent": "documents/example.dev/a", "id": "c0", "content": "A bucket holds objects."}


def client_for(server: ScriptedServer, **options) -> DevKnowClient:
    origin = server.url.removesuffix("/mcp")
    options.setdefault("api_key", KEY)
    return DevKnowClient(origin, protocol="rest", cache=False, offline_store=False, offline_fallback=False, **options)


def json_reply(payload: dict, status: int = 200, headers: dict | None = None) -> Response:
    return Response(json.dumps(payload), status_code=status, media_type="application/json", headers=headers)


def padded_hits(size: int) -> bytes:
    """A valid search reply of about ``size`` bytes."""
    return json.dumps({"results": [{**HIT, "content": "x" * size}]}).encode()


def chunked(data: bytes, *, piece: int = 64 * 1024, pause: float = 0.0) -> Response:
    """``data`` as a chunked body (no Content-Length), ``piece`` bytes at a time."""

    async def body() -> AsyncIterator[bytes]:
        for start in range(0, len(data), piece):
            yield data[start : start + piece]
            if pause:
                await asyncio.sleep(pause)

    return StreamingResponse(body(), media_type="application/json")


def test_a_declared_oversized_body_is_a_protocol_error_naming_the_limit_and_not_asked_again() -> None:
    big = padded_hits(3 * 1024 * 1024)
    with ScriptedServer(lambda call: Response(big, media_type="application/json")) as server:
        with client_for(server, max_reply_bytes=1024 * 1024) as client, pytest.raises(ProtocolError) as caught:
            client.search_documents("bucket")
        assert len(server.calls) == 1  # not resent
    assert "max_reply_bytes" in str(caught.value) and "1 MiB" in str(caught.value)


def test_a_chunked_oversized_body_is_cut_at_the_limit() -> None:
    big = padded_hits(4 * 1024 * 1024)
    with ScriptedServer(lambda call: chunked(big)) as server, client_for(server, max_reply_bytes=256 * 1024) as client:
        with pytest.raises(ProtocolError, match="max_reply_bytes"):
            client.search_documents("bucket")
        assert len(server.calls) == 1
        # The client stays usable: a reply within the limit comes through on the same client.
        server.handler = lambda call: json_reply({"results": [HIT]})
        assert client.search_documents("bucket").names == ["documents/example.dev/a"]


def test_a_small_gzip_body_that_inflates_past_the_limit_is_cut() -> None:
    import gzip

    bomb = gzip.compress(padded_hits(8 * 1024 * 1024))  # about 8 KB on the wire
    headers = {"Content-Encoding": "gzip"}
    reply = lambda call: Response(bomb, media_type="application/json", headers=headers)  # noqa: E731
    with ScriptedServer(reply) as server, client_for(server, max_reply_bytes=256 * 1024) as client:
        with pytest.raises(ProtocolError, match="max_reply_bytes"):
            client.search_documents("bucket")
        server.handler = lambda call: Response(gzip.compress(padded_hits(1000)), headers=headers)
        assert len(client.search_documents("bucket")[0].content) == 1000  # a small one is inflated as usual


def test_a_reply_within_the_limit_is_read_whole_and_none_means_no_limit() -> None:
    body = padded_hits(300 * 1024)
    with ScriptedServer(lambda call: chunked(body, piece=1000)) as server:  # noqa: SIM117 (line length)
        with client_for(server, max_reply_bytes=None) as client:
            hits = client.search_documents("bucket")
    assert len(hits[0].content) == 300 * 1024


def test_a_dripping_body_ends_at_the_calls_deadline() -> None:
    body = padded_hits(2000)
    dripping = ScriptedServer(lambda call: chunked(body, piece=1, pause=0.05))  # 100 s to send it all
    with dripping as server, client_for(server, timeout=1.5) as client:
        started = time.monotonic()
        with pytest.raises(RequestTimeout, match="bounds the whole call"):
            client.search_documents("bucket")
        took = time.monotonic() - started
    assert took < 4.0, took


class DrippingHeaders:
    """A raw socket server whose reply's status line comes at once and whose headers then drip, one byte
    every 50 ms, for ever (no ASGI server can send headers this way)."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.stop = threading.Event()
        self.requests = 0
        self.thread = threading.Thread(target=self._serve, daemon=True)

    def __enter__(self) -> DrippingHeaders:
        self.thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop.set()
        self.sock.close()
        self.thread.join(timeout=5)

    def _serve(self) -> None:
        try:
            conn, _ = self.sock.accept()
        except OSError:
            return
        with conn:
            conn.recv(65536)
            self.requests += 1
            try:
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n")
                while not self.stop.wait(0.05):
                    conn.sendall(b"X")  # a header line that never ends
            except OSError:
                pass  # the client hung up: what it should do at its deadline


def test_dripping_headers_end_at_the_calls_deadline() -> None:
    with DrippingHeaders() as server:
        with DevKnowClient(server.url, protocol="rest", api_key=KEY, timeout=1.5, offline_fallback=False) as client:
            started = time.monotonic()
            with pytest.raises(RequestTimeout, match="bounds the whole call"):
                client.search_documents("bucket")
            assert time.monotonic() - started < 4.0
        assert server.requests == 1


def test_a_server_that_never_replies_ends_at_the_deadline() -> None:
    async def hang(call: Call) -> Response:
        await asyncio.sleep(10)
        return json_reply({"results": []})

    with ScriptedServer(hang) as server, client_for(server, timeout=1.0) as client:
        started = time.monotonic()
        with pytest.raises(RequestTimeout):
            client.search_documents("bucket")
        assert time.monotonic() - started < 3.0


def test_503_is_retried_within_the_deadline() -> None:
    def flaky(call: Call) -> Response:
        if call.number < 2:
            return json_reply({"error": {"code": 503, "message": "busy", "status": "UNAVAILABLE"}}, 503)
        return json_reply({"results": [HIT]})

    with ScriptedServer(flaky) as server, client_for(server) as client:
        assert client.search_documents("bucket").names == ["documents/example.dev/a"]
        assert len(server.calls) == 3


def test_a_retry_that_would_pass_the_deadline_is_not_made() -> None:
    def busy(call: Call) -> Response:
        body = {"error": {"code": 503, "message": "busy", "status": "UNAVAILABLE"}}
        return json_reply(body, 503, headers={"Retry-After": "5"})

    with ScriptedServer(busy) as server, client_for(server, timeout=2.0) as client:
        started = time.monotonic()
        with pytest.raises(TransportError, match="unavailable"):
            client.search_documents("bucket")
        assert time.monotonic() - started < 1.5 and len(server.calls) == 1


def test_the_deadline_bounds_every_request_of_a_batch_split() -> None:
    # The service fails a batch for one unknown name without saying which: the backend splits it in halves,
    # one request after another. Each takes 0.4 s here, so twenty names cannot be told apart in 1.5 s.
    async def slow_not_found(call: Call) -> Response:
        await asyncio.sleep(0.4)
        return json_reply({"error": {"code": 404, "message": "not found", "status": "NOT_FOUND"}}, 404)

    names = [f"documents/example.dev/p{i}" for i in range(20)]
    with ScriptedServer(slow_not_found) as server, client_for(server, timeout=1.5) as client:
        started = time.monotonic()
        with pytest.raises(RequestTimeout, match="bounds the whole call"):
            client.get_documents(names)
        assert time.monotonic() - started < 3.0
        assert 2 <= len(server.calls) <= 5
