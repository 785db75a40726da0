"""The index file's layout stays what :data:`~devknow_jupyter.local.schema.SCHEMA_VERSION` says, and files
written earlier keep opening with the same hits (the layout is pinned; older layouts are rebuilt)."""

from __future__ import annotations

import hashlib
import shutil
import sqlite3
from pathlib import Path

from devknow_jupyter.local.index import LocalIndex
from devknow_jupyter.local.schema import SCHEMA_VERSION

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "docs"
#: The digest of a new file's ``sqlite_master`` for each layout version. A change to a table, an index or the
#: full-text declaration changes it: bump SCHEMA_VERSION with it, so files of the old layout are rebuilt.
PINNED = {"3": "47ebb969289158e16b4a68f79c62493316144ac2b6b5eed5207e070048c4ef2a"}
QUERIES = ("api key restrictions", "firebase sign in", "storage bucket quota", "unicode", "script tag")


def layout_digest(path: Path) -> str:
    """The SHA-256 of a file's tables, indexes and triggers with their SQL, whitespace-normalised."""
    with sqlite3.connect(path) as db:
        rows = db.execute("SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name").fetchall()
    text = "\n".join(f"{kind} {name} {table} {' '.join((sql or '').split())}" for kind, name, table, sql in rows)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def hits(index: LocalIndex) -> dict[str, list[tuple[str, str]]]:
    return {query: [(hit["parent"], hit["id"]) for hit in index.search(query, 5)] for query in QUERIES}


def test_a_new_files_layout_is_the_one_pinned_for_its_version(tmp_path: Path) -> None:
    path = tmp_path / "index.sqlite3"
    LocalIndex(path).close()
    assert layout_digest(path) == PINNED[SCHEMA_VERSION], "the layout changed: bump SCHEMA_VERSION"


def test_a_file_written_and_closed_reopens_with_the_same_hits_from_its_stored_ranker_or_a_rebuilt_one(
    tmp_path: Path,
) -> None:
    path = tmp_path / "index.sqlite3"
    with LocalIndex(path, semantic=False) as index:
        index.add_folder(FIXTURES)
        first = hits(index)
    assert any(first.values())
    copy = tmp_path / "copy.sqlite3"
    shutil.copy(path, copy)
    with LocalIndex(copy, semantic=False) as index:  # the stored snapshot, loaded
        assert hits(index) == first
    with sqlite3.connect(copy) as db:  # a file whose snapshot is gone (or damaged): rebuilt from the term counts
        db.execute("DELETE FROM ranker_snapshot")
    with LocalIndex(copy, semantic=False) as index:
        assert hits(index) == first
        assert index.verify() == []
    with sqlite3.connect(copy) as db:
        assert db.execute("SELECT count(*) FROM ranker_snapshot").fetchone()[0] > 0  # and stored again


def test_a_file_of_an_older_layout_is_rebuilt_and_keeps_its_folders(tmp_path: Path) -> None:
    path = tmp_path / "index.sqlite3"
    with LocalIndex(path, semantic=False) as index:
        index.add_folder(FIXTURES)
        pages = index.count()
    with sqlite3.connect(path) as db:
        db.execute("UPDATE meta SET value = '2' WHERE key = 'schema'")
    with LocalIndex(path, semantic=False) as index:
        assert index.count() == 0
        assert index.folders() == [str(FIXTURES.resolve())]
        assert index.refresh_folders().added == pages
    assert layout_digest(path) == PINNED[SCHEMA_VERSION]
