"""``PageDatabase``: the SQLite file of a local index: its tables, transactions, writes and deletes.

One SQLite file holds the documents (whole pages), each page's term counts per field (``page_terms``),
a snapshot of the built ranker, the page's passages (``chunks``) and an FTS5 index over the passages.
Every write happens inside one transaction, so the file is consistent after a crash or Ctrl-C.
"""

from __future__ import annotations

import functools
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import ConfigurationError
from .chunking import Chunk
from .failures import index_failure, is_damage
from .ranker import page_terms
from .reading import Unreadable

#: Searches read the file through a memory map of up to this many bytes (see :meth:`PageDatabase._unmapped`).
MMAP_BYTES = 256 * 2**20
#: Bumped when the tables or the tokenizer change; an older index is rebuilt from scratch.
SCHEMA_VERSION = "3"
# A passage's id is (page id << PAGE_SHIFT) | passage number.
PAGE_SHIFT = 20
PASSAGES_PER_PAGE = (1 << PAGE_SHIFT) - 1
#: The largest page id: its passages' ids (``id << PAGE_SHIFT``) must fit SQLite's signed 64-bit integers.
MAX_DOC_ID = (1 << (63 - PAGE_SHIFT)) - 1


@dataclass
class _Page:
    """A document ready to be written: its fields and passages."""

    name: str
    uri: str
    title: str
    description: str
    content: str
    chunks: list[Chunk]
    updated_ns: int | None = None  # when the page says it was last updated (front matter, JSON Lines)


_Skip = Unreadable  # a file or document that cannot be indexed; the message is the reason shown
# A document read from a JSON Lines file is recorded with the path ``FILE.jsonl::NAME``.
_JSONL_MARK = "::"


def _reports_failures(doing: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Make a method raise one clear LocalIndexError for SQLite's errors; ``doing`` may name its first argument."""

    def decorate(method: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(method)
        def run(self: PageDatabase, *args: Any, **kwargs: Any) -> Any:
            with self._failures(doing.format(*args)):
                return method(self, *args, **kwargs)

        return run

    return decorate


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


class PageDatabase:
    """The SQLite file of an index: schema, transactions, document writes and deletes, meta and folders.

    One connection is shared by all threads, behind a lock: every method is thread-safe.
    """

    def __init__(
        self, path: str | os.PathLike[str] = ":memory:", *, cache_mb: int = 64, read_only: bool = False
    ) -> None:
        self.path = str(path) if str(path) == ":memory:" else str(Path(path).expanduser())
        self.cache_mb = cache_mb
        self._lock = threading.RLock()
        self._closed = False
        self.read_only = read_only
        self._mmap_bytes = 0  # set by _setup when the file is read through a memory map
        self.has_page_dates = True  # False for a read-only index made before pages had their own dates
        self._unmapped_depth = 0
        try:
            if self.path != ":memory:" and not read_only:
                Path(self.path).parent.mkdir(parents=True, exist_ok=True)
            # isolation_level=None: we issue BEGIN/COMMIT ourselves, so a batch is exactly one transaction.
            # read_only (a knowledge pack): the file is never written, so many processes can share it.
            target, uri = (Path(self.path).resolve().as_uri() + "?mode=ro", True) if read_only else (self.path, False)
            self._db = sqlite3.connect(target, timeout=30.0, isolation_level=None, check_same_thread=False, uri=uri)
        except (OSError, sqlite3.Error) as exc:
            raise index_failure(exc, self.path, "open the local index") from None
        try:
            self._setup()
        except sqlite3.DatabaseError as exc:
            self._db.close()
            if is_damage(exc) or not isinstance(exc, sqlite3.OperationalError):
                raise ConfigurationError(
                    f"{self.path} is not a devknow index ({exc})",
                    hint="Point local:PATH at a folder of Markdown files or at an index made by `devknow index`.",
                ) from None
            raise index_failure(exc, self.path, "open the local index") from None  # full, read-only, locked

    # -- setup ------------------------------------------------------------------------------------

    def _setup(self) -> None:
        db = self._db
        db.execute("PRAGMA busy_timeout = 30000")
        tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type IN ('table', 'view')")}
        if tables and "meta" not in tables:
            raise sqlite3.DatabaseError("it holds other tables")
        if not tables:
            # Must precede the first table (and WAL): space freed by reindexing goes back to the OS.
            db.execute("PRAGMA auto_vacuum = INCREMENTAL")
        if self.path != ":memory:" and not self.read_only:
            try:
                db.execute("PRAGMA journal_mode = WAL")  # readers don't block the indexer (kernel + CLI)
            except sqlite3.OperationalError:
                pass  # a read-only file: searching still works
        # WAL + NORMAL stays crash-safe (atomic commits); only the last commit may be lost on power failure.
        db.execute("PRAGMA synchronous = NORMAL")
        db.execute("PRAGMA temp_store = MEMORY")
        db.execute(f"PRAGMA cache_size = -{int(self.cache_mb) * 1000}")  # pages allocated as used, up to this
        if self.path != ":memory:" and self.cache_mb >= 64:
            self._mmap_bytes = MMAP_BYTES
            db.execute(f"PRAGMA mmap_size = {MMAP_BYTES}")  # read pages straight from the OS cache
        version = None
        if "meta" in tables:
            row = db.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
            version = row[0] if row else None
        if version == SCHEMA_VERSION:
            self._add_page_dates()
            if not self.read_only:
                _drop_unnumberable(db)
            return
        with self._transaction():
            if version is not None:  # an older layout: rebuild (folders are kept and reindex on next run)
                for table in _TABLES:
                    db.execute(f"DROP TABLE IF EXISTS {table}")
            for statement in _SCHEMA.split(";"):
                if statement.strip():
                    db.execute(statement)
            db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('schema', ?)", (SCHEMA_VERSION,))

    def _add_page_dates(self) -> None:
        """Give an index made before pages had their own dates the ``updated_ns`` column (NULL: dated by file).

        Its files' sizes are forgotten (their times still date them), so the next indexing run reads each file
        once more for its date (one whose text is unchanged is not chunked again). A read-only file (a knowledge
        pack) is left as it is: :attr:`has_page_dates` says which it is."""
        columns = {row[1] for row in self._db.execute("PRAGMA table_info(documents)")}
        if "updated_ns" not in columns and not self.read_only:
            with self._transaction():
                self._db.execute("ALTER TABLE documents ADD COLUMN updated_ns INTEGER")
                self._db.execute("UPDATE documents SET size = NULL WHERE path IS NOT NULL")
            columns.add("updated_ns")
        self.has_page_dates = "updated_ns" in columns

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        """One write transaction: committed on success, rolled back on any exception (Ctrl-C included)."""
        self._db.execute("BEGIN IMMEDIATE")
        try:
            yield self._db
        except BaseException:
            if self._db.in_transaction:
                self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")

    @contextmanager
    def _unmapped(self) -> Iterator[None]:
        """Read without the memory map: for one pass over a whole table (building the ranker, embedding pages).

        Every page read through the map stays in this process's resident memory while mapped: a build's pass
        over the term counts would add them all to the peak. Read into the bounded page cache instead.
        """
        if not self._mmap_bytes or self._unmapped_depth:
            yield
            return
        self._db.execute("PRAGMA mmap_size = 0")  # unmaps the file (no statement is open here)
        self._unmapped_depth += 1
        try:
            yield
        finally:
            self._unmapped_depth -= 1
            self._db.execute(f"PRAGMA mmap_size = {self._mmap_bytes}")

    def _release_memory(self) -> None:
        """Give back the page cache's memory (SQLite refills it as pages are read): after a big write or read."""
        self._db.execute("PRAGMA shrink_memory")

    def _check_open(self) -> None:
        if self._closed:
            raise ConfigurationError("This index is closed.")

    @contextmanager
    def _failures(self, doing: str) -> Iterator[None]:
        """Turn SQLite's errors (damaged file, full disk, read-only folder) into one clear LocalIndexError."""
        try:
            yield
        except sqlite3.Error as exc:
            raise index_failure(exc, self.path, doing) from None

    # -- writing documents -------------------------------------------------------------------------

    def _write(
        self,
        page: _Page,
        origin: str,
        digest: str,
        *,
        root: str | None = None,
        path: str | None = None,
        stat: os.stat_result | None = None,
    ) -> bool:
        """Insert or replace one document and its passages (inside the caller's transaction).

        Returns True when the document is new. Raises :class:`_Skip` when another file owns the name.
        """
        db = self._db
        if len(page.chunks) > PASSAGES_PER_PAGE:  # checked before anything is written
            raise _Skip(f"too many passages ({len(page.chunks):,}; at most {PASSAGES_PER_PAGE:,} per page)")
        owner = db.execute("SELECT id, origin, path FROM documents WHERE name = ?", (page.name,)).fetchone()
        if owner is not None and owner[1] == "file" and owner[2] != path:
            raise _Skip(_duplicate(page.name, owner[2]))
        if path is not None:
            # The file's front matter may have renamed it: drop the row its old name had.
            previous = db.execute("SELECT id FROM documents WHERE path = ? AND name != ?", (path, page.name)).fetchone()
            if previous is not None:
                self._delete(previous[0])
        values = (
            page.uri,
            page.title,
            page.description,
            page.content,
            origin,
            root,
            path,
            stat.st_mtime_ns if stat else None,
            stat.st_size if stat else None,
            page.updated_ns,
            digest,
            time.time(),
        )
        if owner is None:
            doc_id = db.execute(
                "INSERT INTO documents (uri, title, description, content, origin, root, path, mtime_ns, size,"
                " updated_ns, sha256, indexed, name) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (*values, page.name),
            ).lastrowid
        else:
            doc_id = owner[0]
            self._delete_chunks(doc_id)
            db.execute(
                "UPDATE documents SET uri = ?, title = ?, description = ?, content = ?, origin = ?, root = ?, path = ?,"
                " mtime_ns = ?, size = ?, updated_ns = ?, sha256 = ?, indexed = ? WHERE id = ?",
                (*values, doc_id),
            )
        self._write_passages(doc_id, page)
        self._changed()
        return owner is None

    def _write_passages(self, doc_id: int, page: _Page) -> None:
        """Write a page's passages, their full-text entries and its term counts; drop its stale vectors."""
        db = self._db
        rows = []
        for seq, chunk in enumerate(page.chunks):
            headings = chunk.headings
            if seq == 0 and page.description:  # the description ranks like a heading, on the first passage
                headings = f"{page.description} {headings}".strip()
            rows.append(((doc_id << PAGE_SHIFT) | seq, doc_id, seq, chunk.breadcrumb, page.title, headings, chunk.text))
        db.executemany(
            "INSERT INTO chunks (id, doc_id, seq, breadcrumb, title, headings, body) VALUES (?, ?, ?, ?, ?, ?, ?)",
            rows,
        )
        db.execute(
            "INSERT INTO chunks_fts (rowid, title, headings, body) SELECT id, title, headings, body FROM chunks"
            " WHERE id BETWEEN ? AND ?",
            _passage_ids(doc_id),
        )
        terms = page_terms(page.title, page.uri, page.description, page.content)
        db.execute(
            "INSERT OR REPLACE INTO page_terms (doc_id, terms, counts, lengths) VALUES (?, ?, ?, ?)",
            (doc_id, "\n".join(terms.terms), terms.counts.tobytes(), terms.lengths.tobytes()),
        )
        db.execute("DELETE FROM page_vectors WHERE doc_id = ?", (doc_id,))

    def _changed(self) -> None:
        """Mark the pages as changed (inside the writing transaction): the ranker is rebuilt on next use."""
        self._db.execute("UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'generation'")

    def _delete_chunks(self, doc_id: int) -> None:
        # External-content FTS5: removing entries needs the values that were indexed, read back first.
        self._db.execute(
            "INSERT INTO chunks_fts (chunks_fts, rowid, title, headings, body)"
            " SELECT 'delete', id, title, headings, body FROM chunks WHERE id BETWEEN ? AND ?",
            _passage_ids(doc_id),
        )
        self._db.execute("DELETE FROM chunks WHERE id BETWEEN ? AND ?", _passage_ids(doc_id))

    def _delete(self, doc_id: int) -> None:
        self._delete_chunks(doc_id)
        self._db.execute("DELETE FROM page_terms WHERE doc_id = ?", (doc_id,))
        self._db.execute("DELETE FROM page_vectors WHERE doc_id = ?", (doc_id,))
        self._db.execute("DELETE FROM documents WHERE id = ?", (doc_id,))
        self._changed()

    def _optimize(self) -> None:
        # Merge the FTS b-trees written batch by batch into one: fewer segments, faster queries.
        with self._transaction() as db:
            db.execute("INSERT INTO chunks_fts (chunks_fts) VALUES ('optimize')")
        self._reclaim()

    def _reclaim(self) -> None:
        """Give free pages back to the file system once there are many (after big reindexes and removals)."""
        free = self._db.execute("PRAGMA freelist_count").fetchone()[0]
        if free > 16 and free * 10 > self._db.execute("PRAGMA page_count").fetchone()[0]:
            self._db.executescript("PRAGMA incremental_vacuum;")  # executescript steps it to the end

    def origins(self, names: Iterable[str]) -> dict[str, str]:
        """The origin (``"file"``, ``"fetched"``, ``"pack:NAME/SOURCE"``) of each of these documents that exists."""
        wanted = list(dict.fromkeys(names))
        found: dict[str, str] = {}
        with self._lock:
            self._check_open()
            for start in range(0, len(wanted), 500):
                part = wanted[start : start + 500]
                marks = ",".join("?" * len(part))
                found.update(self._db.execute(f"SELECT name, origin FROM documents WHERE name IN ({marks})", part))
        return found

    @_reports_failures("read the local index")
    def get_meta(self, key: str) -> str | None:
        """A value the index keeps about itself (``None`` when unset)."""
        with self._lock:
            self._check_open()
            row = self._db.execute("SELECT value FROM meta WHERE key = ?", (f"user:{key}",)).fetchone()
            return row[0] if row else None

    @_reports_failures("write to the local index")
    def set_meta(self, key: str, value: str) -> None:
        """Remember ``value`` under ``key`` in the index."""
        with self._lock:
            self._check_open()
            with self._transaction() as db:
                db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (f"user:{key}", value))

    @_reports_failures("read the local index")
    def folders(self) -> list[str]:
        """The folders indexed so far (absolute paths), in the order they were added."""
        with self._lock:
            self._check_open()
            return [row[0] for row in self._db.execute("SELECT path FROM folders ORDER BY added, path")]

    @_reports_failures("remove {0} from the local index")
    def remove_folder(self, folder: str | os.PathLike[str]) -> int:
        """Forget a folder and remove its documents; returns how many were removed."""
        root = str(Path(folder).expanduser().resolve())
        return self._remove_where("root", root, forget_folder=True)

    @_reports_failures("remove documents from the local index")
    def remove_documents(self, origin: str) -> int:
        """Remove every document of one origin (e.g. ``"fetched"``); returns how many were removed."""
        return self._remove_where("origin", origin)

    def _remove_where(self, column: str, value: str, *, forget_folder: bool = False) -> int:
        """Remove the documents whose ``column`` (``root`` or ``origin``) is ``value`` in one transaction."""
        with self._lock:
            self._check_open()
            with self._transaction() as db:
                ids = [row[0] for row in db.execute(f"SELECT id FROM documents WHERE {column} = ?", (value,))]
                for doc_id in ids:
                    self._delete(doc_id)
                if forget_folder:
                    db.execute("DELETE FROM folders WHERE path = ?", (value,))
            self._reclaim()
            return len(ids)

    def _meta(self, key: str) -> str | None:
        row = self._db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    @_reports_failures("read the local index")
    def stats(self) -> dict[str, Any]:
        """Figures: ``documents``, ``chunks``, ``path``, ``size_bytes``, plus documents by origin and folders."""
        with self._lock:
            self._check_open()
            db = self._db
            by_origin = dict(db.execute("SELECT origin, count(*) FROM documents GROUP BY origin").fetchall())
            pages = db.execute("PRAGMA page_count").fetchone()[0]
            page_size = db.execute("PRAGMA page_size").fetchone()[0]
            with self._unmapped():  # counting the passages reads their whole table: not kept mapped
                chunks = db.execute("SELECT count(*) FROM chunks").fetchone()[0]
            self._release_memory()
            return {
                "path": self.path,
                "documents": sum(by_origin.values()),
                "chunks": chunks,
                "size_bytes": pages * page_size,
                "by_origin": by_origin,
                "folders": self.folders(),
            }

    def verify(self) -> list[str]:
        """Check the index is consistent; returns the problems found (an empty list when all is well)."""
        problems = []
        with self._lock:
            self._check_open()
            db = self._db
            try:
                db.execute("INSERT INTO chunks_fts (chunks_fts, rank) VALUES ('integrity-check', 1)")
            except sqlite3.DatabaseError as exc:
                problems.append(f"full-text index: {exc}")
            for (message,) in db.execute("PRAGMA integrity_check"):
                if message != "ok":
                    problems.append(f"database: {message}")
            orphans = db.execute(
                "SELECT count(*) FROM chunks WHERE doc_id NOT IN (SELECT id FROM documents)"
            ).fetchone()[0]
            if orphans:
                problems.append(f"{orphans} passages belong to no document")
            sql = "SELECT count(*) FROM documents WHERE id NOT IN (SELECT doc_id FROM chunks)"
            empty = db.execute(sql).fetchone()[0]
            if empty:
                problems.append(f"{empty} documents have no passages")
            unranked = db.execute(
                "SELECT (SELECT count(*) FROM documents WHERE id NOT IN (SELECT doc_id FROM page_terms))"
                " + (SELECT count(*) FROM page_terms WHERE doc_id NOT IN (SELECT id FROM documents))"
            ).fetchone()[0]
            if unranked:
                problems.append(f"{unranked} documents and term counts do not match")
        return problems

    def close(self) -> None:
        """Close the database. Safe to call twice."""
        with self._lock:
            if not self._closed:
                self._closed = True
                self._db.close()


# -- helpers ---------------------------------------------------------------------------------------


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


def _source_file(path: str) -> str:
    """The file a document was read from: its path, or the JSON Lines file of ``FILE.jsonl::NAME``."""
    at = path.lower().find(".jsonl" + _JSONL_MARK)
    return path[: at + len(".jsonl")] if at >= 0 else path


def _duplicate(name: str, owner_path: str) -> str:
    return f"duplicate name {name!r}: {_source_file(owner_path)} has it already"


def _passage_ids(doc_id: int) -> tuple[int, int]:
    """The range of passage ids of one page."""
    return doc_id << PAGE_SHIFT, (doc_id << PAGE_SHIFT) | PASSAGES_PER_PAGE
