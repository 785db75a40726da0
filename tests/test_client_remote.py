"""DevKnowClient over the remote backend, against the real SDK test server in each of its modes.

JSON and SSE replies, with and without sessions, modern and handshake era: search, get, answer and
list_tools give the service's shapes; get_documents batches, keeps order and drops duplicates; the
cache saves requests; quota and auth failures surface as our errors without the key.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from devknow_jupyter import DevKnowClient
from devknow_jupyter.client import GOOGLE_ENDPOINT, QUOTA_FALLBACK_NOTICE
from devknow_jupyter.errors import AuthenticationError, DocumentNotFoundError, QuotaExceededError
from devknow_jupyter.models import Answer, SearchResults
from tests.conftest import start_sdk_server
from tests.servers.asgi import read_wire_log

SECRET = "AIzaTest-client-remote-key-0123456789"
BUCKETS = "documents/docs.example.dev/storage/buckets"
QUOTAS = "documents/docs.example.dev/quotas"
KEYS = "documents/docs.example.dev/keys/restrict"

MODES = {
    "modern-sse": ["--notify"],  # notifications make the modern entry really stream
    "modern-json": ["--json"],
    "legacy-sse-sessions": ["--era", "legacy"],
    "legacy-json-stateless": ["--era", "legacy", "--json", "--stateless"],
}


@pytest.fixture(scope="module", params=list(MODES))
def server(request, tmp_path_factory):
    """One server per mode for the whole module (tests count calls as differences)."""
    folder = tmp_path_factory.mktemp(request.param)
    running = start_sdk_server(folder, "--wire-log", str(folder / "wire.jsonl"), *MODES[request.param])
    running.wire = lambda: read_wire_log(folder / "wire.jsonl")
    yield running
    running.stop()


@pytest.fixture
def start(sdk_server_factory, tmp_path: Path):
    """Start a server for one test, with a wire log."""

    def start(*args: str):
        wire = tmp_path / f"wire-{time.monotonic_ns()}.jsonl"
        running = sdk_server_factory("--wire-log", str(wire), *args)
        running.wire = lambda: read_wire_log(wire)
        return running

    return start


def tool_posts(rows: list[dict], tool: str) -> list[dict]:
    return [
        row
        for row in rows
        if row["method"] == "POST"
        and (row["body"] or {}).get("method") == "tools/call"
        and row["body"]["params"]["name"] == tool
    ]


def test_search_get_answer_and_tools_in_the_service_shapes(server) -> None:
    with DevKnowClient(server.url) as client:
        hits = client.search_documents("bucket")
        assert hits.info.backend == "remote" and hits.info.endpoint == server.url and not hits.info.from_cache
        shape = hits.to_dict()
        assert list(shape) == ["results"] and shape["results"]
        assert all(set(item) == {"parent", "id", "content"} for item in shape["results"])
        docs = client.get_documents(hits)
        assert [doc.name for doc in docs] == list(dict.fromkeys(hit.parent for hit in hits))
        assert set(docs.to_dict()["documents"][0]) == {"name", "uri", "content", "description", "title"}
        answer = client.answer_query("How do I create a bucket?")
        assert answer.answer_text and set(answer.to_dict()) == {"answerText", "references"}
        assert BUCKETS in answer.references
        tools = client.list_tools()
        assert [tool["name"] for tool in tools] == ["search_documents", "get_documents", "answer_query"]
        assert tools[1]["inputSchema"]["properties"]["names"]["maxItems"] == 20
        status = client.status()
        assert status["backend"] == "remote"
        legacy = "legacy" in server.args  # the dual-era server is found modern by server/discover
        expected = ("handshake", "2025-11-25") if legacy else ("modern", "2026-07-28")
        assert (status["era"], status["protocol_version"]) == expected
        session = client.backend.session_id
        assert (session is not None) == (legacy and "--stateless" not in server.args)
        assert session is None or session not in repr(status)  # the era, never the session id


def test_status_names_no_era_before_the_first_call_nor_for_the_local_backend(server) -> None:
    with DevKnowClient(server.url) as client:
        assert (client.status()["era"], client.status()["protocol_version"]) == (None, None)
    folder = Path(__file__).parent / "fixtures" / "docs"
    with DevKnowClient(f"local:{folder}") as local:
        assert local.search_documents("bucket")
        status = local.status()
        assert status["backend"] == "local" and (status["era"], status["protocol_version"]) == (None, None)


def test_unicode_documents_round_trip(server) -> None:
    with DevKnowClient(server.url) as client:
        (doc,) = client.get_documents("documents/docs.example.dev/i18n/strings")
    source = (Path(__file__).parent / "fixtures" / "docs" / "unicode.md").read_text(encoding="utf-8")
    assert doc.content.strip() in source


def test_cache_hits_make_no_request_and_refresh_bypasses(server) -> None:
    with DevKnowClient(server.url) as client:
        before = len(server.calls())
        client.search_documents("firebase auth")
        client.get_documents([KEYS])
        client.answer_query("restrict a key")
        assert len(server.calls()) == before + 3
        again = client.search_documents("firebase  auth")  # same query, normalised
        assert again.info.from_cache
        client.get_documents([KEYS])
        client.answer_query("restrict a key")
        assert len(server.calls()) == before + 3  # all three from the cache
        client.search_documents("firebase auth", refresh=True)
        client.get_documents([KEYS], refresh=True)
        client.answer_query("restrict a key", refresh=True)
        assert len(server.calls()) == before + 6


def test_unknown_name_raises_naming_it_and_keeps_the_found_documents(server) -> None:
    unknown = "documents/docs.example.dev/no/such/page"
    with DevKnowClient(server.url) as client:
        with pytest.raises(DocumentNotFoundError) as caught:
            client.get_documents([BUCKETS, unknown, QUOTAS])
        error = caught.value
        assert error.missing == [unknown] and unknown in str(error)
        assert [doc.name for doc in error.documents] == [BUCKETS, QUOTAS]
        before = len(server.calls())
        assert [doc.name for doc in client.get_documents([QUOTAS, BUCKETS])] == [QUOTAS, BUCKETS]
        assert len(server.calls()) == before  # the found ones were cached


def write_docs(folder: Path, count: int) -> list[str]:
    """``count`` small generated documents in the fixture format; returns their names."""
    folder.mkdir(parents=True, exist_ok=True)
    names = []
    for i in range(count):
        name = f"documents/gen.example.dev/page-{i:02d}"
        names.append(name)
        front = f"---\nname: {name}\nuri: https://gen.example.dev/page-{i:02d}\ntitle: Page {i}\n---\n"
        (folder / f"page-{i:02d}.md").write_text(front + f"# Page {i}\n\n## About\n\nGenerated page {i}.\n")
    return names


@pytest.mark.parametrize("era", ["dual", "legacy"])
def test_45_names_go_in_3_batches_in_order_without_duplicates(start, tmp_path: Path, era: str) -> None:
    names = write_docs(tmp_path / "docs", 45)
    wanted = names[::-1] + names[:5] + ["https://gen.example.dev/page-07"]  # reversed, then duplicates
    server = start("--docs", str(tmp_path / "docs"), "--era", era)
    with DevKnowClient(server.url, max_workers=3) as client:
        docs = client.get_documents(wanted)
    assert [doc.name for doc in docs] == names[::-1]
    batches = [call["arguments"]["names"] for call in server.calls("get_documents")]
    assert len(batches) == 3 and all(len(batch) <= 20 for batch in batches)
    assert sorted(name for batch in batches for name in batch) == sorted(names)
    methods = [(row["body"] or {}).get("method") for row in server.wire() if row["method"] == "POST"]
    assert methods.count("server/discover") == 1  # three threads, one discovery
    assert methods.count("initialize") == (1 if era == "legacy" else 0)


@pytest.mark.parametrize("shape", ["iserror", "jsonrpc", "http"])
@pytest.mark.parametrize("era", ["dual", "legacy"])
def test_answer_quota_in_every_shape_is_quota_exceeded_at_once(start, shape: str, era: str) -> None:
    server = start("--answer-quota", "1", "--quota-shape", shape, "--retry-after", "0", "--era", era)
    with DevKnowClient(server.url) as client:
        assert client.answer_query("bucket location").answer_text
        with pytest.raises(QuotaExceededError) as caught:
            client.answer_query("restrict a key")
        assert "RESOURCE_EXHAUSTED" in str(caught.value)
        assert client.search_documents("restrict a key")  # search still works: the fallback
    assert len(tool_posts(server.wire(), "answer_query")) == 2  # no retry storm


def test_key_header_is_sent_and_never_shown(start, monkeypatch) -> None:
    server = start("--api-key", SECRET)
    monkeypatch.setenv("DEVKNOW_API_KEY", SECRET)
    with DevKnowClient(server.url) as client:
        assert client.search_documents("bucket")
        shown = f"{client!r} {client.backend!r} {client.status()}"
        assert SECRET not in shown and "DEVKNOW_API_KEY" in shown
    rows = server.wire()
    assert rows and all(row["headers"]["x-goog-api-key"] == SECRET for row in rows)
    assert all(SECRET not in row["query"] for row in rows)


@pytest.mark.parametrize(("key", "status"), [(None, 401), ("AIzaWrong-0123456789", 403)])
def test_auth_errors_name_the_key_source_never_the_key(start, monkeypatch, key, status) -> None:
    server = start("--api-key", SECRET)
    if key:
        monkeypatch.setenv("GOOGLE_API_KEY", key)
    with DevKnowClient(server.url) as client:
        with pytest.raises(AuthenticationError) as caught:
            client.search_documents("bucket")
        text = f"{caught.value} {caught.value.short_message()} {caught.value!r} {client!r}"
    assert caught.value.status == status
    assert SECRET not in text and (not key or key not in text)
    assert ("GOOGLE_API_KEY" in str(caught.value)) if key else ("DEVKNOW_API_KEY" in str(caught.value))
    assert len(server.wire()) == 1  # refused once; not retried, no initialize


def test_no_key_for_googles_endpoint_fails_before_any_request() -> None:
    seen: list[httpx.Request] = []

    def record(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(500)

    with DevKnowClient(GOOGLE_ENDPOINT, http_transport=httpx.MockTransport(record)) as client:
        assert client.backend_kind == "remote"
        with pytest.raises(AuthenticationError):
            client.search_documents("bucket")
        with pytest.raises(AuthenticationError):
            client.get_documents([BUCKETS])
        with pytest.raises(AuthenticationError):
            client.search_documents("bucket", source="firebase.google.com")  # asks list_tools first
        with pytest.raises(AuthenticationError):
            client.list_tools()
    assert seen == []


def test_our_client_alone_no_mcp_sdk(sdk_server) -> None:
    code = (
        "import sys; sys.modules['mcp'] = None; sys.modules['mcp_types'] = None\n"
        "from devknow_jupyter import DevKnowClient\n"
        f"c = DevKnowClient({sdk_server.url!r}, offline_store=False)\n"
        "hits = c.search_documents('bucket'); docs = c.get_documents(hits)\n"
        "print(len(hits), len(docs), c.answer_query('bucket').references[0]); c.close()\n"
        "print('mcp' in sys.modules and sys.modules['mcp'] is not None)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=90, check=False)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["3", "1", BUCKETS, "False"]  # three passages of one page


def test_ask_answers_or_falls_back_to_search_when_the_quota_is_used_up(sdk_server_factory) -> None:
    server = sdk_server_factory("--answer-quota", "1")
    with DevKnowClient(server.url) as client:
        assert isinstance(client.ask("restrict an API key"), Answer)
        fallback = client.ask("pick a region for the bucket")
        assert isinstance(fallback, SearchResults) and len(fallback) > 0
        assert fallback.info.notices[0] == QUOTA_FALLBACK_NOTICE
        with pytest.raises(QuotaExceededError):
            client.ask("something else entirely", fallback=False)
    assert [call["tool"] for call in server.calls()] == [
        "answer_query", "answer_query", "search_documents", "answer_query"
    ]


def test_a_source_filter_done_here_says_how_many_hits_it_scanned(sdk_server) -> None:
    # The test server's search has no site filter: the client filters its hits and says how many it saw.
    with DevKnowClient(sdk_server.url, cache=False) as client:
        everything = client.search_documents("key token users")
        none = client.search_documents("key token users", source="adk.dev")
        some = client.search_documents("key token users", source="https://firebase.example.dev/")
    assert len(everything) > 0 and len(none) == 0
    assert none.info.notices == [
        f"No adk.dev hits among the first {len(everything)}: the server's search has no source filter, "
        "so its hits were filtered here. Try other words, or drop the source."
    ]
    kept = sum(hit.uri.startswith("https://firebase.example.dev/") for hit in everything)
    assert 0 < len(some) == kept < len(everything)
    assert some.info.notices == [
        f"Filtered here to firebase.example.dev: the server's search has no source filter "
        f"({kept} of {len(everything)} hits kept)."
    ]
    mine = [call["arguments"] for call in sdk_server.calls("search_documents") if "key token" in str(call)]
    assert mine and all(arguments == {"query": "key token users"} for arguments in mine)  # no filter was sent
