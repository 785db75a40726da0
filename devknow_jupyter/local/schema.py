"""The layout of a local index's SQLite file: its tables, its version, and opening (or upgrading) a file.

One SQLite file holds the documents (whole pages), each page's term counts per field (``page_terms``),
a snapshot of the built ranker, the page's passages (``chunks``) and an FTS5 index over the passages.
A passage's id is ``(page id << PAGE_SHIFT) | passage number``, so a hit's page is known without a join.
An index of an older layout (another :data:`SCHEMA_VERSION`) is rebuilt from scratch; one of this layout
made before pages had their own dates gains the column in place.
"""

from __future__ import annotations

import functools
import sqlite3
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any

__all__ = [
    "MAX_DOC_ID",
    "PAGE_SHIFT",
    "PASSAGES_PER_PAGE",
    "SCHEMA_VERSION",
    "fts_declaration",
    "passage_ids",
    "prepare",
    "schema_columns",
    "table_names",
]

#: Bumped when the tables or the tokenizer change; an older index is rebuilt from scratch.
SCHEMA_VERSION = "3"
# A passage's id is (page id << PAGE_SHIFT) | passage number.
PAGE_SHIFT = 20
PASSAGES_PER_PAGE = (1 << PAGE_SHIFT) - 1
#: The largest page id: its passages' ids (``id << PAGE_SHIFT``) must fit SQLite's signed 64-bit integers.
MAX_DOC_ID = (1 << (63 - PAGE_SHIFT)) - 1

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS folders (path TEXT PRIMARY KEY, added REAL NOT NULL, indexed REAL);
CREATE TABLE IF NOT EXISTS documents (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    uri TEXT NOT NULL,
    title TEXT NOT NULL,
    description TEXT NOT NULL,
    content TEXT NOT NULL,
    origin TEXT NOT NULL,
    root TEXT,
    path TEXT UNIQUE,
    mtime_ns INTEGER,
    size INTEGER,
    updated_ns INTEGER,  -- the page's own date (front matter), else NULL: dated by mtime_ns
    sha256 TEXT NOT NULL,
    indexed REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS documents_root ON documents (root);
CREATE INDEX IF NOT EXISTS documents_origin ON documents (origin);
CREATE TABLE IF NOT EXISTS chunks (
    id INTEGER PRIMARY KEY,  -- (doc_id << 20) | seq: a hit's page is known without a join
    doc_id INTEGER NOT NULL REFERENCES documents (id),
    seq INTEGER NOT NULL,
    breadcrumb TEXT NOT NULL,
    title TEXT NOT NULL,
    headings TEXT NOT NULL,
    body TEXT NOT NULL
);
CREATE VIRTUAL TABLE IF NOT EXISTS chunks_fts USING fts5 (
    title, headings, body,
    content = 'chunks', content_rowid = 'id',
    tokenize = 'porter unicode61 remove_diacritics 2'
);
-- Each page's distinct terms (newline-joined), their counts per field (uint16) and the field lengths.
CREATE TABLE IF NOT EXISTS page_terms (
    doc_id INTEGER PRIMARY KEY REFERENCES documents (id),
    terms TEXT NOT NULL,
    counts BLOB NOT NULL,
    lengths BLOB NOT NULL
);
-- The ranker built from page_terms at meta 'ranker_generation' (a cache: rebuilt when stale).
CREATE TABLE IF NOT EXISTS ranker_snapshot (part TEXT PRIMARY KEY, data BLOB NOT NULL);
-- Unit vectors of pages for the optional semantic ranking, per embedding model.
CREATE TABLE IF NOT EXISTS page_vectors (
    doc_id INTEGER NOT NULL REFERENCES documents (id),
    model TEXT NOT NULL,
    vector BLOB NOT NULL,
    PRIMARY KEY (doc_id, model)
);
INSERT OR IGNORE INTO meta (key, value) VALUES ('generation', '0');
"""
_TABLES = ("chunks_fts", "chunks", "page_terms", "ranker_snapshot", "page_vectors", "documents", "meta")

Transaction = Callable[[], AbstractContextManager[Any]]


def table_names(db: sqlite3.Connection) -> set[str]:
    """The tables and views the file holds (none for a new file)."""
    return {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type IN ('table', 'view')")}


def prepare(db: sqlite3.Connection, tables: set[str], *, read_only: bool, transaction: Transaction) -> bool:
    """Make the tables of a new file, rebuild those of an older layout, or upgrade this layout in place.

    ``tables`` are the file's tables before (:func:`table_names`); ``transaction()`` opens one write
    transaction. Returns whether the documents have their own dates (``updated_ns``): False only for a
    read-only file (a knowledge pack) made before pages had them.
    """
    version = None
    if "meta" in tables:
        row = db.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
        version = row[0] if row else None
    if version == SCHEMA_VERSION:
        has_dates = _add_page_dates(db, read_only=read_only, transaction=transaction)
        if not read_only:
            _drop_unnumberable(db)
        return has_dates
    with transaction():
        if version is not None:  # an older layout: rebuild (folders are kept and reindex on next run)
            for table in _TABLES:
                db.execute(f"DROP TABLE IF EXISTS {table}")
        for statement in _SCHEMA.split(";"):
            if statement.strip():
                db.execute(statement)
        db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('schema', ?)", (SCHEMA_VERSION,))
    return True


def _add_page_dates(db: sqlite3.Connection, *, read_only: bool, transaction: Transaction) -> bool:
    """Give an index made before pages had their own dates the ``updated_ns`` column (NULL: dated by file).

    Its files' sizes are forgotten (their times still date them), so the next indexing run reads each file
    once more for its date (one whose text is unchanged is not chunked again). A read-only file (a knowledge
    pack) is left as it is: the result says which it is."""
    columns = {row[1] for row in db.execute("PRAGMA table_info(documents)")}
    if "updated_ns" not in columns and not read_only:
        with transaction():
            db.execute("ALTER TABLE documents ADD COLUMN updated_ns INTEGER")
            db.execute("UPDATE documents SET size = NULL WHERE path IS NOT NULL")
        columns.add("updated_ns")
    return "updated_ns" in columns


def _drop_unnumberable(db: sqlite3.Connection) -> None:
    """Remove the pages whose id leaves no room for passage ids (imported by an older version from a hostile
    pack): every later write overflowed. Their passages are found by page, as their ids may have wrapped."""
    try:
        ids = [row[0] for row in db.execute("SELECT id FROM documents WHERE id > ?", (MAX_DOC_ID,))]
    except sqlite3.DatabaseError:
        return  # a damaged table: the first read that needs it says so, in one line
    if not ids:
        return
    db.execute("BEGIN IMMEDIATE")
    try:
        for doc_id in ids:
            db.execute(
                "INSERT INTO chunks_fts (chunks_fts, rowid, title, headings, body)"
                " SELECT 'delete', id, title, headings, body FROM chunks WHERE doc_id = ?",
                (doc_id,),
            )
            for table in ("chunks", "page_terms", "page_vectors"):
                db.execute(f"DELETE FROM {table} WHERE doc_id = ?", (doc_id,))
            db.execute("DELETE FROM documents WHERE id = ?", (doc_id,))
        db.execute("UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'generation'")
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")


@functools.lru_cache(maxsize=1)
def schema_columns() -> dict[str, tuple[tuple[str, str, int, int, int], ...]]:
    """Each table of the schema (virtual tables and their shadow tables aside) with its columns as
    ``(name, declared type, not null, primary key, hidden)``: what a file in this schema must hold."""
    db = sqlite3.connect(":memory:")
    try:
        db.executescript(_SCHEMA)
        tables = [
            row[0]
            for row in db.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table'"
                " AND sql NOT LIKE 'CREATE VIRTUAL%' AND name NOT LIKE 'chunks_fts_%'"
            )
        ]
        return {
            table: tuple(
                (row[1], row[2].upper(), row[3], row[5], row[6]) for row in db.execute(f"PRAGMA table_xinfo({table})")
            )
            for table in tables
        }
    finally:
        db.close()


def fts_declaration() -> str:
    """The statement that declares the full-text table, whitespace-normalised (as a pack must hold it)."""
    start = _SCHEMA.index("CREATE VIRTUAL TABLE")
    return " ".join(_SCHEMA[start : _SCHEMA.index(";", start)].replace("IF NOT EXISTS ", "").split())


def passage_ids(doc_id: int) -> tuple[int, int]:
    """The range of passage ids of one page."""
    return doc_id << PAGE_SHIFT, (doc_id << PAGE_SHIFT) | PASSAGES_PER_PAGE
