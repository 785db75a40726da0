"""The REST backend (``protocol="rest"``) against a loopback server speaking the REST surface's JSON.

Through the public interface: :class:`DevKnowClient`, the ``devknow`` CLI (``main([...])``) and the
``%devknow`` magic in a real IPython shell. The server (``tests/servers/rest_server.py``) checks the key,
filters and pages hits, fails a whole batch for one unknown name and runs out of quota on demand.
"""

from __future__ import annotations

import pytest

pytest.importorskip("google.developer_knowledge_v1", reason="the rest extra is not installed")

from devknow_jupyter import DevKnowClient
from devknow_jupyter.errors import (
    AuthenticationError,
    ConfigurationError,
    DocumentNotFoundError,
    QuotaExceededError,
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
    client = DevKnowClient(url, protocol="rest", api_key="k-unreachable-1", cache=False)
    with client, pytest.raises(TransportError) as caught:
        client.search_documents("bucket")
    assert "Traceback" not in caught.value.short_message()


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
