"""LocalBackend: endpoint specs, the service's contract (same assertions as for the SDK server), limits, errors."""

from __future__ import annotations

import shutil
import sqlite3
import threading
from pathlib import Path

import pytest

from devknow_jupyter import DevKnowClient
from devknow_jupyter.backend import Backend
from devknow_jupyter.contract import SearchQuery
from devknow_jupyter.errors import ConfigurationError, DocumentNotFoundError, LocalIndexError, ToolError
from devknow_jupyter.local import backend as local_backend
from devknow_jupyter.local.backend import LocalBackend
from devknow_jupyter.local.index import LocalIndex
from devknow_jupyter.local.paths import STARTER_DIR, cache_dir, default_index_path
from devknow_jupyter.models import Answer, Document, Documents, SearchResults
from devknow_jupyter.registry import tool_definitions
from tests.conftest import FIXTURE_DOCS, fixture_documents

RESTRICT = "documents/docs.example.dev/keys/restrict"
BUCKETS = "documents/docs.example.dev/storage/buckets"
QUOTAS = "documents/docs.example.dev/quotas"


@pytest.fixture(params=["remote", "rest", "local", "static"])
def client(request: pytest.FixtureRequest):
    """The same fixture documents served by the SDK test server, the REST test server, the local backend and
    the in-process StaticBackend of devknow_jupyter.testing."""
    if request.param == "static":
        from devknow_jupyter.testing import StaticBackend

        made = DevKnowClient(backend=StaticBackend(fixture_documents()), cache=False)
        yield made
        made.close()
        return
    if request.param == "rest":
        pytest.importorskip("google.developer_knowledge_v1", reason="the rest extra is not installed")
        from tests.servers.rest_server import RestServer

        with RestServer(corpus="fixtures") as server:
            made = DevKnowClient(server.url, protocol="rest", api_key=server.api_key, cache=False, offline_store=False)
            yield made
            made.close()
        return
    if request.param == "remote":
        server = request.getfixturevalue("sdk_server")
        made = DevKnowClient(server.url, cache=False)
    else:
        made = DevKnowClient(f"local:{FIXTURE_DOCS}", cache=False)
    yield made
    made.close()


# -- the contract, asserted alike for the remote server and the local backend -------------------


def test_search_returns_chunks_in_the_service_shape(client: DevKnowClient) -> None:
    hits = client.search_documents("restrict an API key")
    assert isinstance(hits, SearchResults) and len(hits) >= 1
    assert hits.names[0] == RESTRICT
    for hit in hits:
        assert isinstance(hit.parent, str) and hit.parent.startswith("documents/")
        assert isinstance(hit.id, str) and isinstance(hit.content, str) and hit.content
    page = client.backend.search(SearchQuery("restrict an API key"))  # the typed contract, below the client
    assert isinstance(page, SearchResults) and page.names[0] == RESTRICT
    raw = page.to_dict()
    assert set(raw) - {"nextPageToken"} == {"results"}  # REST pages
    assert all(set(item) == {"parent", "id", "content"} for item in raw["results"])


def test_get_documents_returns_whole_pages_in_request_order(client: DevKnowClient) -> None:
    docs = client.get_documents([QUOTAS, RESTRICT, BUCKETS])
    assert isinstance(docs, Documents)
    assert [doc.name for doc in docs] == [QUOTAS, RESTRICT, BUCKETS]
    restrict = docs[1]
    assert restrict.uri == "https://docs.example.dev/keys/restrict"
    assert restrict.title == "Restrict an API key"
    assert restrict.description == "Limit a key to one API and to your own servers."
    assert restrict.content.startswith("# Restrict an API key\n")
    raw = client.backend.get([RESTRICT]).to_dict()
    assert set(raw) == {"documents"}
    assert set(raw["documents"][0]) == {"name", "uri", "content", "description", "title"}


def test_unknown_names_raise_not_found_and_keep_the_found_documents(client: DevKnowClient) -> None:
    with pytest.raises(DocumentNotFoundError) as caught:
        client.get_documents([RESTRICT, "documents/docs.example.dev/nope"])
    assert caught.value.missing == ["documents/docs.example.dev/nope"]
    assert [doc.name for doc in caught.value.documents] == [RESTRICT]
    with pytest.raises(ToolError, match=r"NOT_FOUND|Unknown document") as raw:
        client.backend.get(["documents/docs.example.dev/nope"])
    assert "documents/docs.example.dev/nope" in str(raw.value)


def test_more_than_twenty_names_in_one_call_is_invalid(client: DevKnowClient) -> None:
    names = [f"documents/docs.example.dev/n{i}" for i in range(21)]
    with pytest.raises(ToolError, match="INVALID_ARGUMENT"):
        client.backend.get(names)
    # The client batches: 25 names are two calls, and the 24 unknown ones are reported together.
    with pytest.raises(DocumentNotFoundError) as caught:
        client.get_documents([RESTRICT, *names, *[f"documents/docs.example.dev/m{i}" for i in range(3)]])
    assert len(caught.value.missing) == 24 and [doc.name for doc in caught.value.documents] == [RESTRICT]


def test_answer_has_text_and_references(client: DevKnowClient) -> None:
    answer = client.answer_query("How many answers a day does a project get?")
    assert isinstance(answer, Answer)
    assert answer.answer_text and QUOTAS in answer.references
    assert answer.extractive is (client.backend_kind == "local")


def test_tools_list_and_empty_queries(client: DevKnowClient) -> None:
    assert [tool["name"] for tool in client.list_tools()] == ["search_documents", "get_documents", "answer_query"]
    with pytest.raises(ConfigurationError, match="empty"):
        client.search_documents("   ")
    with pytest.raises(ConfigurationError, match="empty"):
        client.answer_query("")


# -- local-only behaviour -----------------------------------------------------------------------


def test_local_backend_keeps_the_backend_protocol() -> None:
    backend = LocalBackend.from_spec(f"local:{FIXTURE_DOCS}")
    assert isinstance(backend, Backend)
    assert backend.kind == "local" and backend.endpoint == f"local:{FIXTURE_DOCS}"
    assert backend.list_tools() == tool_definitions(local=True)
    backend.close()
    backend.close()
    with pytest.raises(ConfigurationError, match="closed"):
        backend.call_tool("search_documents", {"query": "key"})


def test_the_search_tool_filters_by_site_and_says_when_nothing_is_there() -> None:
    backend = LocalBackend.from_spec(f"local:{FIXTURE_DOCS}")
    try:
        firebase = backend.call_tool("search_documents", {"query": "sign in users", "source": "FIREBASE.example.dev/"})
        assert firebase["results"] and all("firebase.example.dev" in hit["parent"] for hit in firebase["results"])
        elsewhere = backend.call_tool("search_documents", {"query": "sign in users", "source": "nowhere.test"})
        assert elsewhere["results"] == [] and elsewhere["notices"][0].startswith("No page on nowhere.test")
        with pytest.raises(ToolError, match="INVALID_ARGUMENT: source must be a string"):
            backend.call_tool("search_documents", {"query": "sign in users", "source": ["adk.dev"]})
    finally:
        backend.close()


def test_local_errors_match_the_service() -> None:
    backend = LocalBackend.from_spec(f"local:{FIXTURE_DOCS}")
    with pytest.raises(ConfigurationError, match="The query is empty"):
        backend.call_tool("search_documents", {"query": " "})
    with pytest.raises(ConfigurationError, match="The query is empty"):
        backend.call_tool("answer_query", {})
    with pytest.raises(ToolError, match="INVALID_ARGUMENT: at most 20 names") as too_many:
        backend.call_tool("get_documents", {"names": [RESTRICT] * 21})
    assert too_many.value.code == -32602 and too_many.value.tool == "get_documents"
    with pytest.raises(ToolError, match="INVALID_ARGUMENT: names must be a list"):
        backend.call_tool("get_documents", {"names": RESTRICT})
    with pytest.raises(ToolError, match="INVALID_ARGUMENT: names is empty"):
        backend.call_tool("get_documents", {"names": []})
    with pytest.raises(ToolError, match="longer than 500"):
        backend.call_tool("get_documents", {"names": ["documents/" + "x" * 600]})
    with pytest.raises(ToolError, match="Unknown tool: nope"):
        backend.call_tool("nope", {})
    with pytest.raises(ToolError, match="NOT_FOUND: documents not found: documents/a, documents/b"):
        backend.call_tool("get_documents", {"names": [RESTRICT, "documents/a", "documents/b"]})
    answer = backend.call_tool("answer_query", {"query": "rotate a key"})
    assert answer["extractive"] is True and answer["answerText"].startswith("*Extractive answer")
    backend.close()


def test_default_local_endpoint_serves_the_starter_pack() -> None:
    starter = sorted(path for path in STARTER_DIR.glob("*.md") if path.name != "README.md")
    client = DevKnowClient("local")
    assert client.backend_kind == "local" and client.endpoint == "local"
    stats = client.backend.index.stats()
    assert stats["documents"] == len(starter)
    assert stats["path"] == str(default_index_path())
    assert Path(stats["path"]).parent == cache_dir()
    if starter:  # the pack is written separately; when it is there, its pages are searchable
        assert client.search_documents("API key")
    client.close()
    again = LocalBackend.from_spec("local")
    assert again.report.added == 0 and again.report.unchanged == len(starter)  # incremental: nothing re-chunked
    again.close()


def test_environment_endpoint_local_uses_the_local_backend(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DEVKNOW_ENDPOINT", f"local:{FIXTURE_DOCS}")
    with DevKnowClient() as client:
        assert isinstance(client.backend, LocalBackend)
        assert client.search_documents("bucket region").names[0] == BUCKETS
    monkeypatch.setenv("DEVKNOW_ENDPOINT", "local")
    with DevKnowClient() as client:
        assert isinstance(client.backend, LocalBackend) and client.endpoint == "local"


def test_a_missing_or_empty_starter_pack_is_fine(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(local_backend, "STARTER_DIR", tmp_path / "no-starter")
    with DevKnowClient("local") as client:
        assert len(client.search_documents("anything at all")) == 0
        assert "No indexed passage" in client.answer_query("anything?").answer_text
        with pytest.raises(DocumentNotFoundError):
            client.get_documents(["documents/x.dev/y"])
    (tmp_path / "empty-starter").mkdir()
    monkeypatch.setattr(local_backend, "STARTER_DIR", tmp_path / "empty-starter")
    with DevKnowClient("local") as client:
        assert client.backend.index.count() == 0


def test_folders_added_to_the_default_index_are_refreshed_on_open(tmp_path: Path) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "ideas.md").write_text("# Ideas\n\nBuild a cockatrice detector.\n")
    with LocalIndex(default_index_path()) as idx:  # what `devknow index PATH` does
        idx.add_folder(notes)
    (notes / "later.md").write_text("# Later\n\nThe griffin roadmap.\n")
    with DevKnowClient("local") as client:
        assert client.search_documents("cockatrice").names == ["documents/local/ideas"]
        assert client.search_documents("griffin").names == ["documents/local/later"]
    shutil.rmtree(notes)  # a folder that is gone (an unplugged drive) is reported, its documents kept
    backend = LocalBackend.from_spec("local")
    assert (str(notes.resolve()), "folder not found (its documents are kept)") in backend.report.skipped
    assert backend.call_tool("search_documents", {"query": "cockatrice"})["results"]
    backend.close()


def test_a_folder_endpoint_is_indexed_once_and_cached(tmp_path: Path) -> None:
    folder = tmp_path / "mydocs"
    shutil.copytree(FIXTURE_DOCS, folder)
    first = LocalBackend.from_spec(f"local:{folder}")
    assert first.report.added == len(list(FIXTURE_DOCS.glob("*.md")))
    cached_at = Path(first.index.path)
    assert cached_at.parent == cache_dir() / "folders"
    first.close()
    (folder / "extra.md").write_text("# Extra\n\nThe basilisk appendix.\n")
    second = LocalBackend.from_spec(f"local:{folder}")
    assert (second.report.added, second.report.unchanged) == (1, len(list(FIXTURE_DOCS.glob("*.md"))))
    assert Path(second.index.path) == cached_at
    assert second.call_tool("search_documents", {"query": "basilisk"})["results"][0]["parent"] == (
        "documents/local/extra"
    )
    second.close()


def test_an_index_file_endpoint(tmp_path: Path) -> None:
    path = tmp_path / "team.sqlite3"
    with LocalIndex(path) as idx:
        idx.add_folder(FIXTURE_DOCS)
    with DevKnowClient(f"local:{path}") as client:
        assert client.get_documents([RESTRICT])[0].title == "Restrict an API key"


def test_bad_local_endpoints_are_configuration_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="No such folder or index file"):
        DevKnowClient(f"local:{tmp_path / 'missing'}")
    text = tmp_path / "notes.txt"
    text.write_text("hello")
    with pytest.raises(ConfigurationError, match="neither a folder of Markdown files nor a devknow index"):
        LocalBackend.from_spec(f"local:{text}")
    other = tmp_path / "other.sqlite3"
    with sqlite3.connect(other) as db:
        db.execute("CREATE TABLE things (x)")
    with pytest.raises(ConfigurationError, match="not a devknow index"):
        LocalBackend.from_spec(f"local:{other}")
    with pytest.raises(ConfigurationError, match="Not a local endpoint"):
        LocalBackend.from_spec("remote")


def test_a_damaged_default_index_is_rebuilt() -> None:
    path = default_index_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"garbage, not a database" * 100)
    with DevKnowClient("local") as client:
        assert client.backend.index.verify() == []
        assert client.backend.index.path == str(path)
    assert list(path.parent.glob("index.sqlite3.damaged-*"))


def test_concurrent_tool_calls_from_threads() -> None:
    backend = LocalBackend.from_spec(f"local:{FIXTURE_DOCS}")
    errors: list[BaseException] = []

    def work() -> None:
        try:
            for _ in range(40):
                assert backend.call_tool("search_documents", {"query": "bucket"})["results"][0]["parent"] == BUCKETS
                assert backend.call_tool("get_documents", {"names": [RESTRICT]})["documents"][0]["name"] == RESTRICT
                assert backend.call_tool("answer_query", {"query": "quota"})["references"]
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert errors == []
    backend.close()


def test_documents_from_the_local_backend_are_models() -> None:
    with DevKnowClient(f"local:{FIXTURE_DOCS}") as client:
        (doc,) = client.get_documents(f"https://{RESTRICT.removeprefix('documents/')}")
        assert isinstance(doc, Document) and doc.name == RESTRICT


def test_an_index_damaged_while_open_gives_one_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "team.sqlite3"
    with LocalIndex(path) as idx:
        idx.add_folder(FIXTURE_DOCS)
    backend = LocalBackend.from_spec(f"local:{path}")
    assert backend.call_tool("search_documents", {"query": "bucket"})["results"]
    with sqlite3.connect(path) as other:  # another program breaks the file under us
        other.execute("DROP TABLE chunks_fts")
    with pytest.raises(LocalIndexError, match=r"^Could not run search_documents: the local index .*team") as caught:
        backend.call_tool("search_documents", {"query": "bucket"})
    assert "delete it, then run `devknow index` again" in caught.value.message  # what to do, in the one line
    backend.close()
