"""The REST backend (``protocol="rest"``) against a loopback server speaking the REST surface's JSON.

Through the public interface: :class:`DevKnowClient`, the ``devknow`` CLI (``main([...])``) and the
``%devknow`` magic in a real IPython shell. The server (``tests/servers/rest_server.py``) checks the key,
filters and pages hits, fails a whole batch for one unknown name and runs out of quota on demand.
"""

from __future__ import annotations

import re

import pytest

pytest.importorskip("google.developer_knowledge_v1", reason="the rest extra is not installed")

from devknow_jupyter import DevKnowClient
from devknow_jupyter.errors import (
    AuthenticationError,
    ConfigurationError,
    DocumentNotFoundError,
    QuotaExceededError,
    ToolError,
    TransportError,
)
from tests.conftest import free_port
from tests.servers.rest_server import ANSWER_TEXT, RestServer

KNOWN = [
    "documents/web.dev/articles/storage-for-the-web",
    "documents/docs.cloud.google.com/storage/docs/buckets",
    "documents/firebase.google.com/docs/storage",
]
UNKNOWN = "documents/docs.cloud.google.com/no/such/page"


@pytest.fixture
def server():
    with RestServer() as running:
        yield running


def rest_client(server: RestServer, **options) -> DevKnowClient:
    options.setdefault("api_key", server.api_key)
    return DevKnowClient(server.url, protocol="rest", cache=False, offline_store=False, **options)


def test_search_sends_the_key_in_a_header_and_returns_hits(server: RestServer) -> None:
    with rest_client(server) as client:
        hits = client.search_documents("bucket")
        assert client.status()["protocol"] == "rest"
    assert hits.info.backend == "remote"
    assert len(hits) == 5  # the service's default page size
    assert all(hit.parent.startswith("documents/") and hit.content for hit in hits)
    call = server.calls_to("searchDocumentChunks")[0]
    assert call.headers["x-goog-api-key"] == server.api_key
    assert server.api_key not in call.path + str(call.query)
    assert call.query["query"] == ["bucket"]


def test_batch_get_keeps_order_and_names_the_missing_one(server: RestServer) -> None:
    with rest_client(server) as client:
        docs = client.get_documents(KNOWN)
        assert [doc.name for doc in docs] == KNOWN
        assert docs[0].title == "Storage for the web" and "storage buckets" in docs[0].content
        with pytest.raises(DocumentNotFoundError) as caught:
            client.get_documents([KNOWN[0], UNKNOWN, KNOWN[1], KNOWN[2]])
    assert caught.value.missing == [UNKNOWN]
    assert [doc.name for doc in caught.value.documents] == KNOWN  # the found ones, in request order
    assert UNKNOWN in str(caught.value)


def test_answer_carries_citations_over_multibyte_text(server: RestServer) -> None:
    with rest_client(server) as client:
        answer = client.answer_query("How do I create a bucket?")
    assert answer.answer_text == ANSWER_TEXT
    assert answer.references[0] == "documents/docs.cloud.google.com/storage/docs/buckets"
    assert len(answer.references) == 3
    assert [(c.text, c.references) for c in answer.citations] == [
        ("Créez un bucket 📦 avec un nom unique.", [answer.references[0]]),
        ("東京 est une région.", [answer.references[1], answer.references[0]]),
        ("upload objects", [answer.references[2]]),
    ]
    # The service counts bytes: the second segment starts 4 bytes later than its string index
    # (é: +1, 📦: +3) and CJK adds 2 bytes per character to its end.
    second = answer.citations[1]
    assert (second.byte_start - second.start, second.byte_end - second.end) == (4, 4 + 2 * 2 + 1)
    assert answer.info.notices == []
    assert answer.to_dict()["citations"][1]["startIndex"] == second.byte_start
    body = server.calls_to(":answerQuery")[0].body
    assert body["query"] == "How do I create a bucket?"


@pytest.mark.parametrize(("delay", "expected"), [("7s", 7.0), ("1.5s", 1.5), (None, None)])
def test_quota_is_quota_exceeded_with_the_retry_delay(delay: str | None, expected: float | None) -> None:
    with RestServer(retry_delay=delay) as server:
        server.quota_left["answer"] = 0
        with rest_client(server) as client, pytest.raises(QuotaExceededError) as caught:
            client.answer_query("How do I create a bucket?")
    assert caught.value.retry_after == expected
    assert "quota" in str(caught.value).lower()


def test_quota_falls_back_to_search_for_ask(server: RestServer) -> None:
    server.quota_left["answer"] = 0
    with rest_client(server) as client:
        result = client.ask("create a bucket")
    assert len(result) > 0 and "quota" in result.info.notices[0].lower()


def test_wrong_key_is_an_authentication_error_without_the_key() -> None:
    wrong = "wrong-key-9d2f1a77"
    with RestServer() as server:
        client = rest_client(server, api_key=wrong)
        with client, pytest.raises(AuthenticationError) as caught:
            client.search_documents("bucket")
    message = caught.value.short_message()
    assert wrong not in message and "API key" in message
    assert "passed as api_key=" in message


def test_a_rejected_token_is_an_authentication_error() -> None:
    with RestServer(token="ya29.good-token-81") as server:
        client = rest_client(server, api_key=None, access_token="ya29.stale-token-82", offline_fallback=False)
        with client, pytest.raises(AuthenticationError) as caught:
            client.search_documents("bucket")
    assert "rejected the access token" in caught.value.short_message() and "stale-token" not in str(caught.value)


def test_no_credentials_is_an_authentication_error(server: RestServer) -> None:
    with DevKnowClient(server.url, protocol="rest", cache=False) as client, pytest.raises(AuthenticationError):
        client.search_documents("bucket")


def test_oauth_token_and_user_project_headers() -> None:
    token = "ya29.test-token-5e8a"
    with RestServer(token=token) as server:
        client = DevKnowClient(
            server.url,
            protocol="rest",
            access_token=token,
            headers={"X-Goog-User-Project": "my-project"},
            cache=False,
            offline_store=False,
        )
        with client:
            assert len(client.search_documents("bucket")) > 0
    call = server.calls_to("searchDocumentChunks")[0]
    assert call.headers["authorization"] == f"Bearer {token}"
    assert call.headers["x-goog-user-project"] == "my-project"
    assert "x-goog-api-key" not in call.headers


def test_the_environment_chooses_rest(server: RestServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DEVKNOW_PROTOCOL", "rest")
    monkeypatch.setenv("DEVKNOW_API_KEY", server.api_key)
    monkeypatch.setenv("DEVKNOW_ENDPOINT", server.url + "/mcp")  # an MCP URL means its host's REST surface
    with DevKnowClient(cache=False, offline_store=False) as client:
        assert type(client.backend).__name__ == "RestBackend"
        assert client.backend.endpoint == server.url
        assert client.search_documents("bucket")
    assert server.calls_to("searchDocumentChunks")


def test_an_unknown_protocol_is_a_configuration_error() -> None:
    with pytest.raises(ConfigurationError, match="protocol"):
        DevKnowClient("https://example.test", protocol="grpc")


def test_unreachable_server_is_a_transport_error() -> None:
    url = f"http://127.0.0.1:{free_port()}"
    client = DevKnowClient(url, protocol="rest", api_key="k-unreachable-1", cache=False, offline_fallback=False)
    with client, pytest.raises(TransportError) as caught:
        client.search_documents("bucket")
    assert caught.value.unreachable and "Traceback" not in caught.value.short_message()
    # With the offline fallback (the default), the local index answers instead, and says so.
    with DevKnowClient(url, protocol="rest", api_key="k-unreachable-1", cache=False) as client:
        hits = client.search_documents("answer quota")
    assert hits.names and hits.info.backend == "local" and "could not be reached" in hits.info.notices[0]


def test_missing_extra_names_it(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    # The extra is installed here; a None entry makes Python treat the package as not installed.
    monkeypatch.setitem(sys.modules, "google.developer_knowledge_v1", None)
    with pytest.raises(ConfigurationError) as caught:
        DevKnowClient("https://example.test", protocol="rest", api_key="k-extra-1")
    assert "devknow-jupyter[rest]" in caught.value.short_message()


def test_cli_protocol_rest(server: RestServer, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    from devknow_jupyter.cli import main

    monkeypatch.setenv("DEVKNOW_API_KEY", server.api_key)
    assert main(["--endpoint", server.url, "--protocol", "rest", "search", "bucket"]) == 0
    out = capsys.readouterr().out
    assert "https://" in out and server.api_key not in out
    assert server.calls_to("searchDocumentChunks")


def test_magic_switches_the_protocol(server: RestServer, ip, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DEVKNOW_API_KEY", server.api_key)
    monkeypatch.setenv("DEVKNOW_ENDPOINT", server.url)
    monkeypatch.setenv("DEVKNOW_PROTOCOL", "mcp")  # restored by monkeypatch after the magic sets it
    ip.run_line_magic("devknow", "--protocol rest")
    hits = ip.run_line_magic("devsearch", "bucket")
    assert len(hits) > 0
    assert server.calls_to("searchDocumentChunks")


# -- filters and paging ------------------------------------------------------------------------------------


def test_sources_and_since_become_one_server_filter(server: RestServer) -> None:
    with rest_client(server) as client:
        hits = client.search_documents("bucket", source=["firebase.google.com", "https://web.dev/"], since="2026-01-01")
    sent = server.calls_to("searchDocumentChunks")[0].query["filter"]
    assert sent == [
        '(data_source = "firebase.google.com" OR data_source = "web.dev") AND update_time >= "2026-01-01T00:00:00Z"'
    ]
    # web.dev's page is from 2024, so only Firebase's two pages are left.
    assert hits.names == [
        "documents/firebase.google.com/docs/storage",
        "documents/firebase.google.com/docs/storage/web/start",
    ]
    assert hits.info.notices == []


def test_pages_follow_each_other_with_the_same_filter(server: RestServer) -> None:
    seen: list[str] = []
    with rest_client(server) as client:
        sites = "docs.cloud.google.com, developer.chrome.com, web.dev"
        page = client.search_documents("bucket", source=sites, page_size=2)
        while True:
            assert len(page) <= 2
            seen += page.names
            if not page.has_next_page:
                break
            page = client.next_page(page) if len(seen) < 3 else page.next_page(client)
        with pytest.raises(ConfigurationError, match="no next page"):
            client.next_page(page)
    assert len(seen) == len(set(seen)) == 4
    assert all(not name.startswith("documents/firebase") for name in seen)
    tokens = [call.query.get("pageToken") for call in server.calls_to("searchDocumentChunks")]
    assert tokens == [None, ["p2"]]
    assert all(call.query["filter"][0].count("data_source") == 3 for call in server.calls_to("searchDocumentChunks"))


def test_page_size_is_capped_at_the_service_maximum(server: RestServer) -> None:
    with rest_client(server) as client:
        hits = client.search_documents("storage", page_size=250)
    assert server.calls_to("searchDocumentChunks")[0].query["pageSize"] == ["100"]
    assert "at most 100" in hits.info.notices[0]
    assert hits.to_dict().keys() == {"results"}  # everything fitted in one page: no token


def test_a_filter_the_service_refuses_is_a_configuration_error(server: RestServer) -> None:
    with rest_client(server) as client, pytest.raises(ConfigurationError, match="filter"):
        client.backend.search_chunks({"query": "bucket", "filter": 'title = "Buckets"'})


def test_a_bad_date_is_refused_before_any_request(server: RestServer) -> None:
    with rest_client(server) as client, pytest.raises(ConfigurationError, match="Not a date"):
        client.search_documents("bucket", since="last tuesday")
    assert not server.calls_to("searchDocumentChunks")


def test_cli_sends_filters_and_prints_the_next_page_token(server: RestServer, monkeypatch, capsys) -> None:
    import json

    from devknow_jupyter.cli import main

    monkeypatch.setenv("DEVKNOW_API_KEY", server.api_key)
    sites = ["--source", "docs.cloud.google.com", "--source", "firebase.google.com"]
    argv = ["--endpoint", server.url, "--protocol", "rest", "--json", "search", "bucket", "-n", "1", *sites]
    argv += ["--since", "2026-01-01"]
    assert main(argv) == 0
    data = json.loads(capsys.readouterr().out)
    assert len(data["results"]) == 1 and data["nextPageToken"] == "p1"
    assert server.calls_to("searchDocumentChunks")[0].query["pageSize"] == ["1"]


def test_magic_since_and_several_sources(server: RestServer, ip, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DEVKNOW_API_KEY", server.api_key)
    monkeypatch.setenv("DEVKNOW_ENDPOINT", server.url)
    monkeypatch.setenv("DEVKNOW_PROTOCOL", "rest")
    hits = ip.run_line_magic("devsearch", "--source web.dev,developer.chrome.com --since 2025-01-01 -n 3 storage")
    assert hits.names == ["documents/developer.chrome.com/docs/storage-buckets"]
    assert server.calls_to("searchDocumentChunks")[0].query["pageSize"] == ["3"]


def test_the_offline_index_pages_and_refuses_the_services_tokens() -> None:
    # The local index pages too (tests/test_local_paging.py); a token of the service's is not one of its own.
    with DevKnowClient("local", cache=False) as client:
        hits = client.search_documents("answer quota", page_size=2)
        assert len(hits) == 2 and hits.has_next_page
        with pytest.raises(ToolError, match="not a page token"):
            client.search_documents("answer quota", page_token="p2")


def test_the_mcp_server_says_what_it_cannot_honour(sdk_server) -> None:
    with DevKnowClient(sdk_server.url, api_key="k-mcp-notices-1", cache=False, offline_store=False) as client:
        sites = ["docs.cloud.google.com", "firebase.google.com"]
        hits = client.search_documents("bucket", source=sites, since="2026-02-01")
    notices = " ".join(hits.info.notices)
    assert "Not applied: since" in notices
    # The test server's pages are on other sites: none is kept, and the notice says how many were scanned.
    assert len(hits) == 0
    assert re.search(r"No docs\.cloud\.google\.com, firebase\.google\.com hits among the first [1-9]\d*:", notices)


# -- MCP → REST fallback -------------------------------------------------------------------------------------


@pytest.mark.parametrize(("mode", "said"), [("refuse", "refused the MCP handshake"), ("no-tools", "offers no")])
def test_mcp_falls_back_to_rest_for_the_clients_life(mode: str, said: str, capsys) -> None:
    with RestServer(mcp=mode) as server:
        client = DevKnowClient(server.url + "/mcp", api_key=server.api_key, cache=False, offline_store=False)
        with client:
            hits = client.search_documents("bucket")
            answer = client.answer_query("How do I create a bucket?")
            assert client.status()["protocol"] == "rest"
    assert len(hits) > 0 and answer.citations
    lines = [line for line in capsys.readouterr().err.splitlines() if "REST API" in line]
    assert len(lines) == 1 and said in lines[0] and server.url in lines[0]  # said once, in one line
    assert hits.info.notices == [lines[0]] and not answer.info.notices
    assert len(server.calls_to("searchDocumentChunks")) == 1
    assert server.api_key not in lines[0]


def test_no_fallback_without_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    from devknow_jupyter.errors import ProtocolError

    monkeypatch.setitem(sys.modules, "google.developer_knowledge_v1", None)
    with RestServer() as server:
        client = DevKnowClient(server.url + "/mcp", api_key=server.api_key, cache=False, offline_store=False)
        with client, pytest.raises(ProtocolError):
            client.search_documents("bucket")
    assert not server.calls_to("searchDocumentChunks")


def test_a_working_mcp_server_is_kept(sdk_server) -> None:
    with DevKnowClient(sdk_server.url, api_key="k-mcp-kept-1", cache=False, offline_store=False) as client:
        client.search_documents("bucket")
        with pytest.raises(DocumentNotFoundError):
            client.get_documents(["documents/docs.example.dev/no/such/page"])
        assert client.status()["protocol"] == "mcp"


# -- secrets -----------------------------------------------------------------------------------------------


def test_the_key_is_in_no_repr_status_error_or_debug_log(server: RestServer) -> None:
    import logging

    records: list[logging.LogRecord] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record)

    google_log = logging.getLogger("google")
    handler, level = Keep(level=logging.DEBUG), google_log.level
    google_log.addHandler(handler)
    google_log.setLevel(logging.DEBUG)  # Google's client then logs each request with its headers
    try:
        with rest_client(server) as client:
            client.search_documents("bucket")
            server.quota_left["answer"] = 0
            with pytest.raises(QuotaExceededError) as caught:
                client.answer_query("q?")
            shown = [repr(client), repr(client.backend), str(client.status()), caught.value.short_message()]
    finally:
        google_log.removeHandler(handler)
        google_log.setLevel(level)
    assert records  # the library did log the requests
    logged = [repr(vars(record)) + record.getMessage() for record in records]
    assert not [text for text in shown + logged if server.api_key in text]
