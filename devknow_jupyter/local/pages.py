"""``PageStore``: the SQLite file of a local index: its connection, transactions, page writes and deletes.

The file's layout is :mod:`.schema`'s. Every write happens inside one transaction, so the file is consistent
after a crash or Ctrl-C; every change to the pages bumps the ``generation`` in ``meta``, which is how the
ranker snapshot (:mod:`.snapshot`) knows it is stale. One connection is shared by all threads, behind one
re-entrant lock (:attr:`PageStore.lock`) that the parts built on the store (indexer, snapshot, facade) share.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import ConfigurationError
from .chunking import Chunk
from .failures import index_failure, is_damage
from .ranker import page_terms
from .reading import Unreadable, source_file
from .schema import PAGE_SHIFT, PASSAGES_PER_PAGE, passage_ids, prepare, table_names

__all__ = ["MMAP_BYTES", "Batch", "Page", "PageStore", "duplicate_reason"]

#: Searches read the file through a memory map of up to this many bytes (see :meth:`PageStore.unmapped`).
MMAP_BYTES = 256 * 2**20


@dataclass
class Page:
    """A document ready to be written: its fields and passages."""

    name: str
    uri: str
    title: str
    description: str
    content: str
    chunks: list[Chunk]
    updated_ns: int | None = None  # when the page says it was last updated (front matter, JSON Lines)


def duplicate_reason(name: str, owner_path: str) -> str:
    """The skip reason of a page whose name the file at ``owner_path`` (a recorded path) has already."""
    return f"duplicate name {name!r}: {source_file(owner_path)} has it already"


class PageStore:
    """The SQLite file of an index: connection, transactions, document writes and deletes, meta and folders.

    Args:
        path: The SQLite file (created when missing), or ``":memory:"``.
        cache_mb: SQLite's page cache; at 64 MB and over, a file is also read through a memory map.
        read_only: Never write the file (a knowledge pack), so many processes can share it.
    """

    def __init__(
        self, path: str | os.PathLike[str] = ":memory:", *, cache_mb: int = 64, read_only: bool = False
    ) -> None:
        self.path = str(path) if str(path) == ":memory:" else str(Path(path).expanduser())
        self.cache_mb = cache_mb
        self.read_only = read_only
        #: Shared by every part built on this store: hold it around anything that reads or writes.
        self.lock = threading.RLock()
        self.has_page_dates = True  # False for a read-only index made before pages had their own dates
        self._closed = False
        self._mmap_bytes = 0  # set by _setup when the file is read through a memory map
        self._unmapped_depth = 0
        try:
            if self.path != ":memory:" and not read_only:
                Path(self.path).parent.mkdir(parents=True, exist_ok=True)
            # isolation_level=None: we issue BEGIN/COMMIT ourselves, so a batch is exactly one transaction.
            # read_only (a knowledge pack): the file is never written, so many processes can share it.
            target, uri = (Path(self.path).resolve().as_uri() + "?mode=ro", True) if read_only else (self.path, False)
            #: The connection: read it under :attr:`lock`; write it inside :meth:`transaction`.
            self.db = sqlite3.connect(target, timeout=30.0, isolation_level=None, check_same_thread=False, uri=uri)
        except (OSError, sqlite3.Error) as exc:
            raise index_failure(exc, self.path, "open the local index") from None
        try:
            self._setup()
        except sqlite3.DatabaseError as exc:
            self.db.close()
            if is_damage(exc) or not isinstance(exc, sqlite3.OperationalError):
                raise ConfigurationError(
                    f"{self.path} is not a devknow index ({exc})",
                    hint="Point local:PATH at a folder of Markdown files or at an index made by `devknow index`.",
                ) from None
            raise index_failure(exc, self.path, "open the local index") from None  # full, read-only, locked

    # -- setup and transactions ----------------------------------------------------------------

    def _setup(self) -> None:
        db = self.db
        db.execute("PRAGMA busy_timeout = 30000")
        tables = table_names(db)
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
        self.has_page_dates = prepare(db, tables, read_only=self.read_only, transaction=self.transaction)

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """One write transaction: committed on success, rolled back on any exception (Ctrl-C included)."""
        self.db.execute("BEGIN IMMEDIATE")
        try:
            yield self.db
        except BaseException:
            if self.db.in_transaction:
                self.db.execute("ROLLBACK")
            raise
        self.db.execute("COMMIT")

    @contextmanager
    def locked(self) -> Iterator[sqlite3.Connection]:
        """Hold :attr:`lock` on an open store (a closed one raises a clear ConfigurationError)."""
        with self.lock:
            self.check_open()
            yield self.db

    @contextmanager
    def unmapped(self) -> Iterator[None]:
        """Read without the memory map: for one pass over a whole table (building the ranker, embedding pages).

        Every page read through the map stays in this process's resident memory while mapped: a build's pass
        over the term counts would add them all to the peak. Read into the bounded page cache instead.
        """
        if not self._mmap_bytes or self._unmapped_depth:
            yield
            return
        self.db.execute("PRAGMA mmap_size = 0")  # unmaps the file (no statement is open here)
        self._unmapped_depth += 1
        try:
            yield
        finally:
            self._unmapped_depth -= 1
            self.db.execute(f"PRAGMA mmap_size = {self._mmap_bytes}")

    def release_memory(self) -> None:
        """Give back the page cache's memory (SQLite refills it as pages are read): after a big write or read."""
        self.db.execute("PRAGMA shrink_memory")

    def check_open(self) -> None:
        """Raise a clear ConfigurationError once the store is closed."""
        if self._closed:
            raise ConfigurationError("This index is closed.")

    @contextmanager
    def failures(self, doing: str) -> Iterator[None]:
        """Turn SQLite's errors (damaged file, full disk, read-only folder) into one clear LocalIndexError."""
        try:
            yield
        except sqlite3.Error as exc:
            raise index_failure(exc, self.path, doing) from None

    @contextmanager
    def quick_write(self) -> Iterator[sqlite3.Connection]:
        """A write transaction that never waits for another writer, for caches: skipped (silently) when the
        file is busy or read-only; the next process builds what it would have saved."""
        self.db.execute("PRAGMA busy_timeout = 0")
        try:
            with self.transaction() as db:
                yield db
        except sqlite3.OperationalError:
            pass  # locked or read-only
        finally:
            self.db.execute("PRAGMA busy_timeout = 30000")

    # -- writing documents ---------------------------------------------------------------------

    def write(
        self,
        page: Page,
        origin: str,
        digest: str,
        *,
        root: str | None = None,
        path: str | None = None,
        stat: os.stat_result | None = None,
    ) -> bool:
        """Insert or replace one document and its passages (inside the caller's transaction).

        Returns True when the document is new. Raises :class:`~.reading.Unreadable` (the page is skipped, the
        message says why) when another file owns the name or the page has too many passages.
        """
        db = self.db
        if len(page.chunks) > PASSAGES_PER_PAGE:  # checked before anything is written
            raise Unreadable(f"too many passages ({len(page.chunks):,}; at most {PASSAGES_PER_PAGE:,} per page)")
        owner = db.execute("SELECT id, origin, path FROM documents WHERE name = ?", (page.name,)).fetchone()
        if owner is not None and owner[1] == "file" and owner[2] != path:
            raise Unreadable(duplicate_reason(page.name, owner[2]))
        if path is not None:
            # The file's front matter may have renamed it: drop the row its old name had.
            previous = db.execute("SELECT id FROM documents WHERE path = ? AND name != ?", (path, page.name)).fetchone()
            if previous is not None:
                self.delete(previous[0])
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
        self.changed()
        return owner is None

    def _write_passages(self, doc_id: int, page: Page) -> None:
        """Write a page's passages, their full-text entries and its term counts; drop its stale vectors."""
        db = self.db
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
            passage_ids(doc_id),
        )
        terms = page_terms(page.title, page.uri, page.description, page.content)
        db.execute(
            "INSERT OR REPLACE INTO page_terms (doc_id, terms, counts, lengths) VALUES (?, ?, ?, ?)",
            (doc_id, "\n".join(terms.terms), terms.counts.tobytes(), terms.lengths.tobytes()),
        )
        db.execute("DELETE FROM page_vectors WHERE doc_id = ?", (doc_id,))

    def changed(self) -> None:
        """Mark the pages as changed (inside the writing transaction): the ranker is rebuilt on next use."""
        self.db.execute("UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'generation'")

    def _delete_chunks(self, doc_id: int) -> None:
        # External-content FTS5: removing entries needs the values that were indexed, read back first.
        self.db.execute(
            "INSERT INTO chunks_fts (chunks_fts, rowid, title, headings, body)"
            " SELECT 'delete', id, title, headings, body FROM chunks WHERE id BETWEEN ? AND ?",
            passage_ids(doc_id),
        )
        self.db.execute("DELETE FROM chunks WHERE id BETWEEN ? AND ?", passage_ids(doc_id))

    def delete(self, doc_id: int) -> None:
        """Remove one document with its passages, term counts and vectors (inside the caller's transaction)."""
        self._delete_chunks(doc_id)
        self.db.execute("DELETE FROM page_terms WHERE doc_id = ?", (doc_id,))
        self.db.execute("DELETE FROM page_vectors WHERE doc_id = ?", (doc_id,))
        self.db.execute("DELETE FROM documents WHERE id = ?", (doc_id,))
        self.changed()

    def optimize(self) -> None:
        """Merge the FTS b-trees written batch by batch into one (fewer segments, faster queries); compact."""
        with self.transaction() as db:
            db.execute("INSERT INTO chunks_fts (chunks_fts) VALUES ('optimize')")
        self.reclaim()

    def reclaim(self) -> None:
        """Give free pages back to the file system once there are many (after big reindexes and removals)."""
        free = self.db.execute("PRAGMA freelist_count").fetchone()[0]
        if free > 16 and free * 10 > self.db.execute("PRAGMA page_count").fetchone()[0]:
            self.db.executescript("PRAGMA incremental_vacuum;")  # executescript steps it to the end

    def remove_where(self, column: str, value: str, *, forget_folder: bool = False) -> int:
        """Remove the documents whose ``column`` (``root`` or ``origin``) is ``value`` in one transaction."""
        if column not in ("root", "origin"):
            raise ValueError(f"not a column to remove by: {column!r}")
        with self.locked():
            with self.transaction() as db:
                ids = [row[0] for row in db.execute(f"SELECT id FROM documents WHERE {column} = ?", (value,))]
                for doc_id in ids:
                    self.delete(doc_id)
                if forget_folder:
                    db.execute("DELETE FROM folders WHERE path = ?", (value,))
            self.reclaim()
            return len(ids)

    # -- reading -------------------------------------------------------------------------------

    def meta(self, key: str) -> Any:
        """A value of the ``meta`` table (the index's own keys, e.g. ``generation``), or None when unset."""
        row = self.db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def put_meta(self, key: str, value: str | bytes) -> None:
        """Set a value of the ``meta`` table (inside the caller's transaction)."""
        self.db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (key, value))

    def get_meta(self, key: str) -> str | None:
        """A value kept about the index by its users (``None`` when unset)."""
        with self.failures("read the local index"), self.locked():
            return self.meta(f"user:{key}")

    def set_meta(self, key: str, value: str) -> None:
        """Remember ``value`` under ``key`` (one transaction)."""
        with self.failures("write to the local index"), self.locked(), self.transaction():
            self.put_meta(f"user:{key}", value)

    def generation(self) -> str:
        """The pages' generation: it changes with every write or delete."""
        return self.meta("generation") or "0"

    def origins(self, names: Iterable[str]) -> dict[str, str]:
        """The origin (``"file"``, ``"fetched"``, ``"pack:NAME/SOURCE"``) of each of these documents that exists."""
        wanted = list(dict.fromkeys(names))
        found: dict[str, str] = {}
        with self.locked() as db:
            for part in _parts(wanted):
                marks = ",".join("?" * len(part))
                found.update(db.execute(f"SELECT name, origin FROM documents WHERE name IN ({marks})", part))
        return found

    def documents(self, names: Iterable[str]) -> list[dict[str, str]]:
        """The documents with these names that exist, in request order, in the service's document shape."""
        wanted = list(names)
        found: dict[str, dict[str, str]] = {}
        with self.locked() as db:
            for part in _parts(wanted):
                marks = ",".join("?" * len(part))
                for name, uri, content, description, title in db.execute(
                    f"SELECT name, uri, content, description, title FROM documents WHERE name IN ({marks})", part
                ):
                    found[name] = {
                        "name": name,
                        "uri": uri,
                        "content": content,
                        "description": description,
                        "title": title,
                    }
        return [found[name] for name in wanted if name in found]

    def names(self, origin: str | None = None) -> list[str]:
        """Every document name (of one origin, when given), sorted."""
        with self.locked() as db:
            if origin is None:
                return [row[0] for row in db.execute("SELECT name FROM documents ORDER BY name")]
            return [
                row[0] for row in db.execute("SELECT name FROM documents WHERE origin = ? ORDER BY name", (origin,))
            ]

    def count(self, origin: str | None = None) -> int:
        """How many documents the store holds (of one origin, when given)."""
        with self.locked() as db:
            if origin is None:
                return db.execute("SELECT count(*) FROM documents").fetchone()[0]
            return db.execute("SELECT count(*) FROM documents WHERE origin = ?", (origin,)).fetchone()[0]

    def folders(self) -> list[str]:
        """The folders indexed so far (absolute paths), in the order they were added."""
        with self.locked() as db:
            return [row[0] for row in db.execute("SELECT path FROM folders ORDER BY added, path")]

    def page_dates(self) -> dict[int, int | None]:
        """Each page's date in nanoseconds: its own (front matter) where it gave one, else its file's mtime."""
        date = "COALESCE(updated_ns, mtime_ns)" if self.has_page_dates else "mtime_ns"
        return dict(self.db.execute(f"SELECT id, {date} FROM documents"))

    def close(self) -> None:
        """Close the file. Safe to call twice."""
        with self.lock:
            if not self._closed:
                self._closed = True
                self.db.close()


def _parts(items: list[str], size: int = 500) -> Iterator[list[str]]:
    """``items`` in slices SQLite's parameter limit allows."""
    for start in range(0, len(items), size):
        yield items[start : start + size]


class Batch:
    """An indexing run's writes in batches: each batch one transaction, committed once ``documents`` were
    written or ``seconds`` passed, so an interrupted run keeps its committed batches.

    Used as a context manager: the open batch is committed on success and rolled back on any exception
    (Ctrl-C included); earlier batches stay committed and consistent.
    """

    def __init__(self, store: PageStore, documents: int, seconds: float) -> None:
        self.store = store
        self.documents = documents
        self.seconds = seconds
        self._started, self._written = 0.0, 0

    def __enter__(self) -> Batch:
        self._started, self._written = time.monotonic(), 0
        self.store.db.execute("BEGIN IMMEDIATE")
        return self

    def wrote(self, count: int) -> None:
        """Count documents written in the open batch; commit it and begin the next when it is due."""
        self._written += count
        due = self._written >= self.documents or time.monotonic() - self._started > self.seconds
        if self._written and due:
            self.store.db.execute("COMMIT")
            self.store.db.execute("BEGIN IMMEDIATE")
            self._started, self._written = time.monotonic(), 0

    def __exit__(self, kind: type[BaseException] | None, *exc_info: object) -> None:
        db = self.store.db
        if kind is None:
            db.execute("COMMIT")
        elif db.in_transaction:
            db.execute("ROLLBACK")  # this batch is lost; earlier batches are committed and consistent
