"""DocumentStore: documents fetched from a live server, kept on disk and searched when it can't be reached."""

from __future__ import annotations

from pathlib import Path

from devknow_jupyter import DevKnowClient
from devknow_jupyter.local.paths import default_index_path
from devknow_jupyter.local.store import DocumentStore
from devknow_jupyter.models import Document

RESTRICT = "documents/docs.example.dev/keys/restrict"
BUCKETS = "documents/docs.example.dev/storage/buckets"
SIGN_IN = "documents/firebase.example.dev/auth/start"


def test_store_keeps_searches_and_forgets_documents(tmp_path: Path) -> None:
    store = DocumentStore.open_default()
    assert store.index.path == str(default_index_path())
    assert len(store) == 0
    report = store.add(
        [
            Document(name="documents/live.dev/a", uri="https://live.dev/a", title="A", content="# A\n\nThe roc nests."),
            {"name": "documents/live.dev/b", "title": "B", "content": "# B\n\nThe roc flies."},
        ]
    )
    assert report.added == 2 and len(store) == 2
    assert (
        store.add([{"name": "documents/live.dev/b", "title": "B", "content": "# B\n\nThe roc flies."}]).unchanged == 1
    )
    results = store.search("roc nests")
    assert set(results) == {"results"}
    assert results["results"][0]["parent"] == "documents/live.dev/a"
    assert all(set(hit) == {"parent", "id", "content"} for hit in results["results"])
    assert [doc["name"] for doc in store.get(["documents/live.dev/b", "documents/live.dev/zz"])] == [
        "documents/live.dev/b"
    ]
    assert store.names() == ["documents/live.dev/a", "documents/live.dev/b"]
    store.close()

    reopened = DocumentStore.open_default()  # on disk: still there in a new process or session
    assert len(reopened) == 2
    assert reopened.clear() == 2 and len(reopened) == 0 and reopened.search("roc") == {"results": []}
    reopened.close()
    reopened.close()


def test_store_search_sees_only_fetched_documents(tmp_path: Path) -> None:
    store = DocumentStore.open_default()
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "mine.md").write_text("# Mine\n\nMy own roc notes.\n")
    store.index.add_folder(notes)  # a folder added with `devknow index` lives in the same index
    store.add([{"name": "documents/live.dev/a", "content": "# A\n\nThe roc nests."}])
    assert [hit["parent"] for hit in store.search("roc")["results"]] == ["documents/live.dev/a"]
    assert len(store) == 1
    store.close()


def test_fetched_documents_are_searchable_when_the_server_is_gone(sdk_server_factory) -> None:
    server = sdk_server_factory()
    client = DevKnowClient(server.url, api_key="dk-store-key-0000")
    hits = client.search_documents("restrict an API key")
    assert hits.info.backend == "remote" and hits.info.notices == []
    client.get_documents([*hits.names, BUCKETS, SIGN_IN])  # fetched live, so kept offline

    server.stop()
    # A query never asked before: not in the result cache, and the server is unreachable.
    offline = client.search_documents("pick a region for the bucket")
    assert offline.names and offline.names[0] == BUCKETS
    assert offline.info.backend == "local" and "could not be reached" in offline.info.notices[0]
    assert "signIn" in client.search_documents("keep users signed in with a token").to_markdown()
    answer = client.answer_query("pick a region for the bucket")  # quoted from the saved pages
    assert answer.extractive and BUCKETS in answer.references
    client.close()

    # The same documents are part of the default local index.
    with DevKnowClient("local") as local:
        assert local.search_documents("pick a region for the bucket").names[0] == BUCKETS
        assert local.get_documents([RESTRICT, BUCKETS, SIGN_IN])[1].title == "Create a storage bucket"


def test_the_offline_store_can_be_turned_off(sdk_server_factory) -> None:
    server = sdk_server_factory()
    with DevKnowClient(server.url, offline_store=False) as client:
        client.get_documents([BUCKETS])
    store = DocumentStore.open_default()
    assert len(store) == 0
    store.close()


def test_the_store_connection_keeps_a_small_page_cache_and_no_mmap(tmp_path):
    # The kernel writes every fetched page here; a large cache or mmap made its memory grow with the store.
    from devknow_jupyter.local.store import DocumentStore

    store = DocumentStore.open_default()
    try:
        assert store.index.store.db.execute("PRAGMA cache_size").fetchone()[0] == -4000
        assert store.index.store.db.execute("PRAGMA mmap_size").fetchone()[0] == 0
    finally:
        store.close()
