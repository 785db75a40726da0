"""The local index's parts each work on their own, composed (issue 23): a page store, a ranker snapshot
built from it and kept until the pages change, an indexer writing through the store, and the facade."""

from __future__ import annotations

from pathlib import Path

from devknow_jupyter.local.chunking import ChunkSizes
from devknow_jupyter.local.index import LocalIndex
from devknow_jupyter.local.indexing import Indexer
from devknow_jupyter.local.pages import PageStore
from devknow_jupyter.local.ranker import RankSettings
from devknow_jupyter.local.snapshot import RankerSnapshot

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "docs"
#: What callers (the backends, packs, the CLI, the offline store) use of the facade: kept as it was.
PUBLIC = {
    "add_documents",
    "add_folder",
    "answer",
    "close",
    "count",
    "credited_origins",
    "folders",
    "forget_credits",
    "get",
    "get_meta",
    "has_page_dates",
    "import_index",
    "keep_recent",
    "names",
    "origins",
    "path",
    "read_only",
    "refresh_folders",
    "remove_documents",
    "remove_folder",
    "search",
    "search_page",
    "search_results",
    "set_meta",
    "sites",
    "stats",
    "verify",
}


def parts(path: Path) -> tuple[PageStore, RankerSnapshot, Indexer]:
    store = PageStore(path)
    snapshot = RankerSnapshot(store, RankSettings(), semantic=False)
    return store, snapshot, Indexer(store, snapshot, sizes=ChunkSizes())


def test_the_store_the_snapshot_and_the_indexer_work_without_the_facade_and_agree_with_it(tmp_path: Path) -> None:
    path = tmp_path / "index.sqlite3"
    store, snapshot, indexer = parts(path)
    report = indexer.add_folder(FIXTURES)
    assert report.added == store.count() > 0
    with store.lock:
        ranked = snapshot.current().search("api key restrictions", 3).doc_ids
    names = dict(store.db.execute("SELECT id, name FROM documents"))
    store.close()
    with LocalIndex(path, semantic=False) as index:
        assert [hit["parent"] for hit in index.search("api key restrictions", 3)] == [names[i] for i in ranked]


def test_the_snapshot_is_kept_while_nothing_changes_and_rebuilt_and_stored_after_a_write(tmp_path: Path) -> None:
    store, snapshot, indexer = parts(tmp_path / "index.sqlite3")
    indexer.add_folder(FIXTURES)
    with store.lock:
        first = snapshot.current()
        assert snapshot.current() is first
        before = snapshot.generation
    indexer.add_documents([{"name": "documents/x.dev/new", "content": "# Zebra crossings\n\nStripes."}])
    with store.lock:
        second = snapshot.current()
    assert second is not first
    assert snapshot.generation == store.generation() != before
    hits = second.search("zebra", 1).doc_ids
    names = dict(store.db.execute("SELECT id, name FROM documents"))
    assert [names[doc_id] for doc_id in hits] == ["documents/x.dev/new"]
    assert store.meta("ranker_generation") == store.generation()  # stored for the next process
    other = RankerSnapshot(store, RankSettings(), semantic=False)  # as another process opening the file
    with store.lock:
        assert other.current().search("zebra", 1).doc_ids == hits
    store.close()


def test_the_facade_keeps_the_public_api_its_callers_use() -> None:
    public = {name for name in dir(LocalIndex) if not name.startswith("_")}
    assert public == PUBLIC
