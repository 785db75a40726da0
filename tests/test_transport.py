"""McpHttpBackend against the real SDK test server: the conformance checklist of mcp-protocol.md §10.

Every test talks to a real MCP server (the official SDK, in a subprocess on 127.0.0.1), reshaped where
needed by the wrappers in ``tests/servers/asgi.py`` (``--era``, ``--fail-first``, ``--wire-log``, …).
The wire log records every HTTP request the server received, so the tests check the bytes we sent.
Faults a real server can't make on demand are in ``test_transport_faults.py``.
"""

from __future__ import annotations

import datetime
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest

from devknow_jupyter.errors import (
    AuthenticationError,
    ConfigurationError,
    ProtocolError,
    QuotaExceededError,
    RequestTimeout,
    ToolError,
    TransportError,
)
from devknow_jupyter.transport import McpHttpBackend
from tests.conftest import free_port
from tests.servers.asgi import read_wire_log

SECRET = "AIzaTest-transport-key-0123456789"
BUCKETS = "documents/docs.example.dev/storage/buckets"
QUOTAS = "documents/docs.example.dev/quotas"


@pytest.fixture
def start(sdk_server_factory, tmp_path: Path):
    """Start an SDK server with a wire log; ``server.wire()`` returns the HTTP requests it received."""

    def start(*args: str):
        wire = tmp_path / f"wire-{time.monotonic_ns()}.jsonl"
        server = sdk_server_factory("--wire-log", str(wire), *args)
        server.wire = lambda: read_wire_log(wire)
        return server

    return start


def backend(server, **options) -> McpHttpBackend:
    options.setdefault("backoff", 0.01)
    return McpHttpBackend(server.url, **options)


def posts(rows: list[dict], method: str | None = None) -> list[dict]:
    """The POSTs of a wire log (optionally of one JSON-RPC method)."""
    rows = [row for row in rows if row["method"] == "POST"]
    return [row for row in rows if method is None or (row["body"] or {}).get("method") == method]


def rpc_methods(rows: list[dict]) -> list[str | None]:
    return [(row["body"] or {}).get("method") if row["method"] == "POST" else row["method"] for row in rows]


# -- 1-4, 6-8: headers, the handshake, sessions -------------------------------------------------------


def test_every_request_carries_accept_content_type_and_key(start) -> None:
    server = start("--era", "legacy", "--api-key", SECRET)
    with backend(server, api_key=SECRET) as remote:
        remote.call_tool("search_documents", {"query": "bucket"})
    rows = server.wire()
    assert rpc_methods(rows) == [
        "server/discover",
        "initialize",
        "notifications/initialized",
        "tools/call",
        "DELETE",
    ]
    for row in rows:
        assert row["headers"]["x-goog-api-key"] == SECRET
        assert SECRET not in row["query"]
    for row in posts(rows):
        assert row["headers"]["accept"] == "application/json, text/event-stream"
        assert row["headers"]["content-type"] == "application/json"


def test_handshake_initialize_then_initialized_then_session_echoed(start) -> None:
    server = start("--era", "legacy")
    with backend(server) as remote:
        remote.call_tool("search_documents", {"query": "bucket"})
        remote.call_tool("get_documents", {"names": [BUCKETS]})
        assert remote.era == "handshake"
        assert remote.protocol_version == "2025-11-25"
        sid = remote.session_id
    rows = server.wire()
    init = posts(rows, "initialize")[0]
    assert "mcp-session-id" not in init["headers"] and "mcp-protocol-version" not in init["headers"]
    assert init["body"]["params"]["protocolVersion"] == "2025-11-25"
    assert init["session_id"] == sid and sid
    later = rows[rows.index(init) + 1 :]
    assert [(row["body"] or {}).get("method") for row in later[:1]] == ["notifications/initialized"]
    for row in later:  # notifications, calls and the DELETE: the sid byte for byte, and the version
        assert row["headers"]["mcp-session-id"] == sid
        assert row["headers"]["mcp-protocol-version"] == "2025-11-25"
        assert "_meta" not in ((row["body"] or {}).get("params") or {})
    assert rows[-1]["method"] == "DELETE" and rows[-1]["status"] == 200


def test_stateless_handshake_server_gets_no_invented_session(start) -> None:
    server = start("--era", "legacy", "--stateless", "--json")
    with backend(server) as remote:
        assert remote.call_tool("search_documents", {"query": "bucket"})["results"]
        assert remote.era == "handshake" and remote.session_id is None
    rows = server.wire()
    assert all("mcp-session-id" not in row["headers"] for row in rows)
    assert "DELETE" not in rpc_methods(rows)  # no session, nothing to end


def test_expired_session_is_renewed_once_and_the_call_retried(start) -> None:
    server = start("--era", "legacy")
    with backend(server) as remote:
        remote.call_tool("search_documents", {"query": "bucket"})
        old = remote.session_id
        # End the session behind the backend's back, as an idle timeout or a server restart would.
        assert httpx.delete(server.url, headers={"Mcp-Session-Id": old}).status_code == 200
        hits = remote.call_tool("search_documents", {"query": "bucket region"})
        assert hits["results"]
        assert remote.session_id not in (None, old)
    rows = server.wire()
    assert [(rpc, row["status"]) for rpc, row in zip(rpc_methods(rows), rows, strict=True)][3:] == [
        ("tools/call", 200),
        ("DELETE", 200),  # ours, above
        ("tools/call", 404),
        ("initialize", 200),
        ("notifications/initialized", 202),
        ("tools/call", 200),
        ("DELETE", 200),  # close()
    ]
    renewal = posts(rows, "initialize")[1]
    assert "mcp-session-id" not in renewal["headers"]  # re-initialize without the old sid


# -- 9-12: replies ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("era", ["legacy", "dual"])
def test_json_and_sse_replies_give_identical_results(start, era: str) -> None:
    results = []
    for mode in (["--json"], ["--notify"]):
        server = start("--era", era, *mode)
        with backend(server) as remote:
            results.append(
                (
                    remote.call_tool("search_documents", {"query": "bucket"}),
                    remote.call_tool("get_documents", {"names": [BUCKETS, QUOTAS]}),
                )
            )
        types = {row["content_type"].split(";")[0] for row in posts(server.wire(), "tools/call")}
        assert types == ({"application/json"} if mode == ["--json"] else {"text/event-stream"})
    assert results[0] == results[1]
    assert [doc["name"] for doc in results[0][1]["documents"]] == [BUCKETS, QUOTAS]


@pytest.mark.parametrize("era", ["legacy", "dual"])
def test_sse_replies_keep_one_connection_alive(start, era: str) -> None:
    server = start("--era", era, "--notify")  # --notify: progress notifications, so SSE in either era
    with backend(server) as remote:
        for _ in range(6):
            assert remote.call_tool("search_documents", {"query": "bucket"})["results"]
    rows = server.wire()
    assert {row["content_type"].split(";")[0] for row in posts(rows, "tools/call")} == {"text/event-stream"}
    assert len(posts(rows, "tools/call")) == 6
    assert len({row["client_port"] for row in rows}) == 1  # every request, the DELETE too, on one TCP connection


def test_server_ping_on_the_stream_is_answered(start) -> None:
    server = start("--era", "legacy", "--ping")
    with backend(server) as remote:
        assert remote.call_tool("search_documents", {"query": "bucket"})["results"]
    replies = [row for row in posts(server.wire()) if "result" in (row["body"] or {})]
    assert len(replies) == 1 and replies[0]["body"]["result"] == {} and replies[0]["status"] == 202
    assert replies[0]["headers"]["mcp-session-id"]


def test_tool_errors_and_json_rpc_errors_are_tool_errors(start) -> None:
    names = [f"documents/x/{i}" for i in range(21)]
    server = start("--errors", "jsonrpc")
    with backend(server) as remote:
        with pytest.raises(ToolError) as unknown:
            remote.call_tool("nope", {})
        assert unknown.value.code == -32602 and "nope" in str(unknown.value)
        with pytest.raises(ToolError) as too_many:
            remote.call_tool("get_documents", {"names": names})
        assert too_many.value.code == -32602 and "20" in str(too_many.value)
    server = start()  # the same errors as isError results
    with backend(server) as remote:
        with pytest.raises(ToolError, match="Unknown tool: nope"):
            remote.call_tool("nope", {})
        with pytest.raises(ToolError, match="NOT_FOUND") as missing:
            remote.call_tool("get_documents", {"names": ["documents/docs.example.dev/nope"]})
        assert not isinstance(missing.value, QuotaExceededError)
        assert remote.call_tool("search_documents", {"query": "bucket"})["results"]  # still usable


def test_large_documents_over_one_mebibyte_in_one_event(start, tmp_path: Path) -> None:
    folder = tmp_path / "big"
    folder.mkdir()
    paragraph = "Buckets hold objects. " * 40 + "\n\n"
    for i in range(20):
        body = f"# Page {i}\n\n## Part\n\n" + paragraph * 90  # about 80 KB each
        text = f"---\nname: documents/big.example.dev/p{i}\nuri: https://big.example.dev/p{i}\ntitle: Page {i}\n---\n"
        (folder / f"p{i}.md").write_text(text + body, encoding="utf-8")
    names = [f"documents/big.example.dev/p{i}" for i in range(20)]
    for era in ("dual", "legacy"):
        server = start("--docs", str(folder), "--notify", "--era", era)
        with backend(server) as remote:
            docs = remote.call_tool("get_documents", {"names": names})["documents"]
        assert [doc["name"] for doc in docs] == names
        assert sum(len(doc["content"]) for doc in docs) > 1024 * 1024
        assert posts(server.wire(), "tools/call")[0]["content_type"].startswith("text/event-stream")


# -- 2: authentication ----------------------------------------------------------------------------------


@pytest.mark.parametrize(("key", "status"), [(None, 401), ("wrong-key-0123456789", 403)])
def test_auth_failures_are_not_retried_nor_an_era_verdict(start, key, status, monkeypatch) -> None:
    server = start("--api-key", SECRET)
    monkeypatch.setenv("DEVKNOW_API_KEY", key or "")
    with backend(server, api_key=key) as remote:
        with pytest.raises(AuthenticationError) as caught:
            remote.call_tool("search_documents", {"query": "bucket"})
        assert remote.era is None  # not read as "legacy"
    error = caught.value
    assert error.status == status
    text = f"{error} {error.short_message()} {error!r} {remote!r}"
    assert SECRET not in text and (key is None or key not in text)
    assert ("DEVKNOW_API_KEY" in str(error)) if key else ("none was sent" in str(error))
    assert rpc_methods(server.wire()) == ["server/discover"]  # one request: no retry, no initialize


def test_access_token_goes_in_authorization(start) -> None:
    server = start()
    token = "ya29.token-0123456789"
    with backend(server, access_token=token, headers={"X-Trace": "1"}) as remote:
        remote.call_tool("search_documents", {"query": "bucket"})
        assert token not in repr(remote)
    for row in server.wire():
        assert row["headers"]["authorization"] == f"Bearer {token}"
        assert row["headers"]["x-trace"] == "1"
        assert "x-goog-api-key" not in row["headers"]


def test_a_key_in_the_url_moves_to_the_header_and_a_different_one_is_refused() -> None:
    with McpHttpBackend(f"https://example.invalid/mcp?key={SECRET}", api_key=SECRET) as remote:
        assert remote.endpoint == "https://example.invalid/mcp"
        assert SECRET not in repr(remote)
    with pytest.raises(ConfigurationError) as caught:
        McpHttpBackend(f"https://example.invalid/mcp?key={SECRET}", api_key="another-key-entirely")
    assert SECRET not in str(caught.value)


# -- 13-16: retries and timeouts --------------------------------------------------------------------------


def test_503_on_the_probe_is_retried_and_not_read_as_legacy(start) -> None:
    server = start("--fail-first", "2", "--retry-after", "0")
    with backend(server) as remote:
        assert remote.call_tool("search_documents", {"query": "bucket"})["results"]
        assert remote.era == "modern"
    assert [row["status"] for row in server.wire()] == [503, 503, 200, 200]
    assert "initialize" not in rpc_methods(server.wire())


def test_503_gives_up_after_three_attempts(start) -> None:
    server = start("--fail-first", "10", "--retry-after", "0")
    with backend(server) as remote, pytest.raises(TransportError, match="503"):
        remote.call_tool("search_documents", {"query": "bucket"})
    assert len(server.wire()) == 3


def test_quota_of_answer_query_is_not_retried(start) -> None:
    server = start("--answer-quota", "0", "--quota-shape", "http", "--retry-after", "0")
    with backend(server) as remote:
        with pytest.raises(QuotaExceededError) as caught:
            remote.call_tool("answer_query", {"query": "bucket"})
        assert caught.value.retry_after == 0
    assert len(posts(server.wire(), "tools/call")) == 1


def test_slow_call_within_the_timeout_and_a_clean_timeout_error(start) -> None:
    server = start("--delay", "1.0", "--json")
    with backend(server, timeout=20) as remote:
        assert remote.call_tool("search_documents", {"query": "bucket"})["results"]
    with backend(server, timeout=0.2) as remote:
        with pytest.raises(RequestTimeout) as caught:
            remote.call_tool("search_documents", {"query": "bucket"})
        assert "0.2 s" in str(caught.value)
        assert remote.list_tools()  # usable after a timeout (tools/list is not delayed)


def test_connection_refused_is_a_short_transport_error() -> None:
    remote = McpHttpBackend(f"http://127.0.0.1:{free_port()}/mcp", api_key=SECRET, backoff=0.01)
    with pytest.raises(TransportError) as caught:
        remote.call_tool("search_documents", {"query": "bucket"})
    assert "Could not connect" in str(caught.value) and SECRET not in str(caught.value)
    assert len(str(caught.value)) < 200
    remote.close()


# -- 17: interrupts -------------------------------------------------------------------------------------


def _interrupt_soon(seconds: float) -> threading.Timer:
    main = threading.main_thread().ident
    timer = threading.Timer(seconds, lambda: signal.pthread_kill(main, signal.SIGINT))
    timer.start()
    return timer


@pytest.mark.timeout(60)
@pytest.mark.parametrize("era", ["legacy", "dual"])
def test_ctrl_c_stops_the_call_and_cancels_in_the_handshake_era(start, era: str) -> None:
    server = start("--era", era, "--delay", "120", "--delay-only", "search_documents")
    remote = backend(server, timeout=300)
    remote.list_tools()  # connected first, so the interrupt hits the call
    timer = _interrupt_soon(0.5)
    with pytest.raises(KeyboardInterrupt):
        remote.call_tool("search_documents", {"query": "bucket"})  # would take 120 s
    timer.join()
    assert remote.call_tool("get_documents", {"names": [BUCKETS]})["documents"]  # still usable
    remote.close()
    rows = server.wire()
    call_id = posts(rows, "tools/call")[0]["body"]["id"]
    cancels = posts(rows, "notifications/cancelled")
    if era == "legacy":
        assert [row["body"]["params"]["requestId"] for row in cancels] == [call_id]
        assert cancels[0]["headers"]["mcp-session-id"] == remote_session(rows)
    else:
        assert cancels == []  # modern: closing the stream is the cancel


def remote_session(rows: list[dict]) -> str:
    return posts(rows, "initialize")[0]["session_id"]


# -- 18-20: eras ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("era", "expected", "version"),
    [("dual", "modern", "2026-07-28"), ("modern", "modern", "2026-07-28"), ("legacy", "handshake", "2025-11-25")],
)
def test_era_is_discovered_once_and_cached(start, era: str, expected: str, version: str) -> None:
    server = start("--era", era)
    with backend(server) as remote:
        assert remote.era is None
        threads = [
            threading.Thread(target=remote.call_tool, args=("search_documents", {"query": f"bucket {i}"}))
            for i in range(6)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        remote.call_tool("get_documents", {"names": [BUCKETS]})
        assert (remote.era, remote.protocol_version) == (expected, version)
    methods = rpc_methods(server.wire())
    assert methods.count("server/discover") == 1
    assert methods.count("initialize") == (1 if expected == "handshake" else 0)
    assert methods.count("tools/call") == 7


def test_modern_requests_carry_meta_and_routing_headers(start) -> None:
    server = start("--era", "modern")
    with backend(server) as remote:
        remote.call_tool("search_documents", {"query": "bucket"})
        remote.list_tools()
        remote.list_tools()  # cached
        assert remote.session_id is None
    rows = server.wire()
    assert rpc_methods(rows) == ["server/discover", "tools/call", "tools/list"]
    for row in rows:
        headers, body = row["headers"], row["body"]
        meta = body["params"]["_meta"]
        assert meta["io.modelcontextprotocol/protocolVersion"] == "2026-07-28"
        assert meta["io.modelcontextprotocol/clientCapabilities"] == {}
        assert meta["io.modelcontextprotocol/clientInfo"]["name"] == "devknow-jupyter"
        assert headers["mcp-protocol-version"] == "2026-07-28"
        assert headers["mcp-method"] == body["method"]
        assert "mcp-session-id" not in headers
    assert rows[1]["headers"]["mcp-name"] == "search_documents"


def test_unsupported_version_error_is_honoured(start) -> None:
    server = start()
    with backend(server, modern_versions=("2099-01-01", "2026-07-28")) as remote:
        remote.call_tool("search_documents", {"query": "bucket"})
        assert (remote.era, remote.protocol_version) == ("modern", "2026-07-28")
    first, second = posts(server.wire(), "server/discover")
    assert (
        first["status"] == 400
        and first["body"]["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] == "2099-01-01"
    )
    assert second["status"] == 200 and second["headers"]["mcp-protocol-version"] == "2026-07-28"


def test_modern_only_server_with_no_common_version_is_a_clear_error(start) -> None:
    server = start("--era", "modern")
    with backend(server, modern_versions=("2099-01-01",)) as remote, pytest.raises(ProtocolError, match="2026-07-28"):
        remote.call_tool("search_documents", {"query": "bucket"})
    assert "initialize" not in rpc_methods(server.wire())


# -- TLS and proxies ---------------------------------------------------------------------------------------


def _self_signed(tmp_path: Path) -> tuple[Path, Path]:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.timezone.utc)
    import ipaddress

    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=2))
        .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = tmp_path / "cert.pem", tmp_path / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    return cert_path, key_path


def test_tls_failure_names_ssl_cert_file_and_ssl_cert_file_is_honoured(start, tmp_path, monkeypatch) -> None:
    cert, key = _self_signed(tmp_path)
    server = start("--tls-cert", str(cert), "--tls-key", str(key), "--json")
    url = server.url.replace("http://", "https://")
    remote = McpHttpBackend(url, api_key=SECRET, backoff=0.01)
    with pytest.raises(TransportError) as caught:
        remote.call_tool("search_documents", {"query": "bucket"})
    remote.close()
    assert "SSL_CERT_FILE" in str(caught.value) and SECRET not in str(caught.value)
    assert server.wire() == []  # no request got through (and it was not retried into the server)
    monkeypatch.setenv("SSL_CERT_FILE", str(cert))  # trusting the test CA, as a corporate CA would be
    with McpHttpBackend(url, api_key=SECRET) as trusted:
        assert trusted.call_tool("search_documents", {"query": "bucket"})["results"]


def test_a_refusing_proxy_names_https_proxy(monkeypatch) -> None:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(5)

    def refuse() -> None:  # a proxy that refuses every CONNECT
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            with conn:
                conn.recv(4096)
                conn.sendall(b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n")

    thread = threading.Thread(target=refuse, daemon=True)
    thread.start()
    monkeypatch.setenv("HTTPS_PROXY", f"http://127.0.0.1:{listener.getsockname()[1]}")
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    remote = McpHttpBackend("https://docs-proxy.example.test/mcp", api_key=SECRET, backoff=0.01)
    try:
        with pytest.raises(TransportError) as caught:
            remote.call_tool("search_documents", {"query": "bucket"})
    finally:
        remote.close()
        listener.close()
    assert "HTTPS_PROXY" in str(caught.value) and SECRET not in str(caught.value)


# -- our client alone -----------------------------------------------------------------------------------------


def test_the_backend_needs_no_mcp_sdk(sdk_server) -> None:
    code = (
        "import sys; sys.modules['mcp'] = None; sys.modules['mcp_types'] = None\n"
        "from devknow_jupyter.transport import McpHttpBackend\n"
        f"b = McpHttpBackend({sdk_server.url!r})\n"
        "print(len(b.call_tool('search_documents', {'query': 'bucket'})['results']), b.era); b.close()\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.split() == ["3", "modern"], out.stderr


def test_concurrent_calls_on_an_expired_session_renew_it_once(start) -> None:
    server = start("--era", "legacy", "--json")
    with backend(server) as remote:
        remote.call_tool("search_documents", {"query": "bucket"})
        assert httpx.delete(server.url, headers={"Mcp-Session-Id": remote.session_id}).status_code == 200
        results: list[object] = []
        threads = [
            threading.Thread(target=lambda: results.append(remote.call_tool("get_documents", {"names": [BUCKETS]})))
            for _ in range(5)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert len(results) == 5
    assert rpc_methods(server.wire()).count("initialize") == 2  # the first, and one renewal for all five


def test_the_backend_keeps_the_backend_contract(sdk_server) -> None:
    from devknow_jupyter.backend import Backend

    remote = McpHttpBackend(sdk_server.url, api_key=SECRET)
    assert isinstance(remote, Backend) and remote.kind == "remote" and remote.endpoint == sdk_server.url
    assert [tool["name"] for tool in remote.list_tools()] == ["search_documents", "get_documents", "answer_query"]
    remote.close()
    with pytest.raises(ConfigurationError, match="closed"):
        remote.call_tool("search_documents", {"query": "bucket"})


def test_httpx_is_imported_only_by_the_transport_package() -> None:
    package = Path(__file__).resolve().parent.parent / "devknow_jupyter"
    offenders = [
        path.relative_to(package).as_posix()
        for path in package.rglob("*.py")
        if "transport" not in path.relative_to(package).parts
        and any(line.lstrip().startswith(("import httpx", "from httpx")) for line in path.read_text().splitlines())
    ]
    assert offenders == []
