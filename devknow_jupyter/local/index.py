"""``LocalIndex``: Markdown pages in SQLite, ranked whole by field-weighted BM25.

One SQLite file holds the documents (whole pages, as ``get_documents`` returns them), each page's term
counts per field (``page_terms``, what the ranker of :mod:`.ranker` is built from, so that opening an
index never re-tokenizes its pages), a snapshot of the built ranker, the page's passages (``chunks``, cut
by :mod:`.chunking`) and an FTS5 index over the passages, which only chooses the excerpt shown with a
hit. Documents come from folders of Markdown files (``add_folder``) or from elsewhere, such as pages
fetched from the live service (``add_documents``).

Reindexing a folder is incremental (a file whose size and mtime are unchanged is not read; one whose
bytes hash the same is not re-chunked; deleted files are removed) and transactional: documents are
written in batches, each batch one transaction with each document's row, passages and index entries,
so a crash or Ctrl-C at any moment leaves the index consistent, and the next run picks up where the
last committed batch ended.
"""

from __future__ import annotations

import functools
import hashlib
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import ConfigurationError
from ..models import DOCUMENT_PREFIX, Document, name_to_uri
from .answer import extractive_answer
from .chunking import Chunk, ChunkSizes, chunk_markdown, first_heading
from .failures import index_failure, is_damage
from .frontmatter import FrontMatterError, split_front_matter
from .query import fts_expression, query_terms
from .ranker import LexicalRanker, PageTerms, RankSettings, page_terms
from .reading import JSONL_SUFFIXES, Unreadable, jsonl_documents, open_document, size_text, walk_folder
from .search import PageSearch, SearchOutcome

__all__ = ["MAX_FILE_BYTES", "IndexReport", "LocalIndex", "RankSettings"]  # RankSettings: from .ranker

#: Files larger than this are skipped (with a reason): no documentation page is this big.
MAX_FILE_BYTES = 4 * 1024 * 1024
#: Bumped when the tables or the tokenizer change; an older index is rebuilt from scratch.
SCHEMA_VERSION = "3"
LOCAL_PREFIX = DOCUMENT_PREFIX + "local/"
# A passage's id is (page id << PAGE_SHIFT) | passage number.
PAGE_SHIFT = 20
PASSAGES_PER_PAGE = (1 << PAGE_SHIFT) - 1
# Query words on more than this share of pages are left out when choosing a hit's passage.
COMMON_SHARE = 0.3
# Pages embedded at once for the semantic ranking (bounds the embedding's memory).
EMBED_BATCH = 32
# Commit at least this often while indexing, so an interrupted run keeps most of its work.
BATCH_DOCUMENTS = 400
BATCH_SECONDS = 2.0

ProgressHook = Callable[[str, int, int], None]


@dataclass
class IndexReport:
    """What one indexing run did.

    ``added``/``updated`` documents were (re-)chunked; ``unchanged`` ones were not touched;
    ``removed`` ones are gone (their file was deleted); ``skipped`` lists ``(path, reason)`` for files
    that could not be indexed; ``warnings`` lists ``(path, note)`` for files indexed with a repair
    (e.g. invalid UTF-8 replaced). ``chunks`` counts passages written.
    """

    added: int = 0
    updated: int = 0
    removed: int = 0
    unchanged: int = 0
    skipped: list[tuple[str, str]] = field(default_factory=list)
    seconds: float = 0.0
    warnings: list[tuple[str, str]] = field(default_factory=list)
    chunks: int = 0

    @property
    def changed(self) -> int:
        """Documents added, updated or removed."""
        return self.added + self.updated + self.removed

    def summary(self) -> str:
        """One line: ``3 added, 1 updated, 0 removed, 40 unchanged, 1 skipped in 0.21 s``."""
        return (
            f"{self.added} added, {self.updated} updated, {self.removed} removed, {self.unchanged} unchanged, "
            f"{len(self.skipped)} skipped in {self.seconds:.2f} s"
        )

    def merge(self, other: IndexReport) -> None:
        """Add ``other``'s counts and lists to this report."""
        self.added += other.added
        self.updated += other.updated
        self.removed += other.removed
        self.unchanged += other.unchanged
        self.skipped += other.skipped
        self.warnings += other.warnings
        self.seconds += other.seconds
        self.chunks += other.chunks


@dataclass
class _Page:
    """A document ready to be written: its fields and passages."""

    name: str
    uri: str
    title: str
    description: str
    content: str
    chunks: list[Chunk]


_Skip = Unreadable  # a file or document that cannot be indexed; the message is the reason shown
# A document read from a JSON Lines file is recorded with the path ``FILE.jsonl::NAME``.
_JSONL_MARK = "::"


def _reports_failures(doing: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Make a method raise one clear LocalIndexError for SQLite's errors; ``doing`` may name its first argument."""

    def decorate(method: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(method)
        def run(self: LocalIndex, *args: Any, **kwargs: Any) -> Any:
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


class LocalIndex:
    """An SQLite index of Markdown documents, searched page by page (see :mod:`.ranker`).

    Args:
        path: The SQLite file (created when missing), or ``":memory:"``.
        sizes: Passage sizes for chunking.
        ranking: Field weights and BM25 settings of the ranker.
        semantic: Fuse dense scores in when the ``semantic`` extra is installed (``None``: when
            ``$DEVKNOW_SEMANTIC`` is not ``0``).
        max_file_bytes: Larger files are skipped with a reason.
        batch_documents: While indexing a folder, commit after this many written documents (and at least
            every two seconds), so an interrupted run keeps its committed batches.

    One connection is shared by all threads, behind a lock: every method is thread-safe.
    """

    _follow_symlinks = False  # of the folder being indexed (add_folder sets it)

    def __init__(
        self,
        path: str | os.PathLike[str] = ":memory:",
        *,
        sizes: ChunkSizes | None = None,
        ranking: RankSettings | None = None,
        semantic: bool | None = None,
        max_file_bytes: int = MAX_FILE_BYTES,
        batch_documents: int = BATCH_DOCUMENTS,
        cache_mb: int = 64,
        read_only: bool = False,
    ) -> None:
        self.path = str(path) if str(path) == ":memory:" else str(Path(path).expanduser())
        self.sizes = sizes or ChunkSizes()
        self.ranking = ranking or RankSettings()
        self.semantic = semantic
        self.max_file_bytes = max_file_bytes
        self.batch_documents = max(1, batch_documents)
        self.cache_mb = cache_mb
        self._lock = threading.RLock()
        self._closed = False
        self._search: PageSearch | None = None
        self._search_generation: str | None = None
        self.read_only = read_only
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
            db.execute("PRAGMA mmap_size = 268435456")  # read pages straight from the OS cache
        version = None
        if "meta" in tables:
            row = db.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
            version = row[0] if row else None
        if version == SCHEMA_VERSION:
            return
        with self._transaction():
            if version is not None:  # an older layout: rebuild (folders are kept and reindex on next run)
                for table in _TABLES:
                    db.execute(f"DROP TABLE IF EXISTS {table}")
            for statement in _SCHEMA.split(";"):
                if statement.strip():
                    db.execute(statement)
            db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('schema', ?)", (SCHEMA_VERSION,))

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

    # -- indexing folders --------------------------------------------------------------------------

    @_reports_failures("index {0}")
    def add_folder(
        self,
        folder: str | os.PathLike[str],
        *,
        exclude: Iterable[str] = (),
        progress: ProgressHook | None = None,
        follow_symlinks: bool | None = None,
    ) -> IndexReport:
        """Index (or reindex) the Markdown and JSON Lines files under ``folder``, or one ``.jsonl`` file;
        remember it for :meth:`refresh_folders`.

        Only files whose size, mtime and then content changed are re-chunked; documents whose files are
        gone are removed. ``exclude`` holds glob patterns of relative paths to leave out (e.g.
        ``"README.md"``, ``"drafts/*"``). ``progress(path, done, total)`` is called after each file.
        Only regular files inside the folder are read; ``follow_symlinks=True`` also reads symlinked files
        and folders that lead elsewhere (never devices, FIFOs or sockets), and is remembered for the folder
        (``None``: as last time). Every file left out is in ``report.skipped`` with its reason.
        """
        started = time.perf_counter()
        root = Path(folder).expanduser()
        report = IndexReport()
        if root.is_file() and root.suffix.lower() in JSONL_SUFFIXES:
            root = root.resolve()
            files = [root]
        elif root.is_dir():
            root = root.resolve()
        else:
            raise ConfigurationError(
                f"Not a folder or a JSON Lines file: {root}",
                hint="Give a folder of Markdown (.md) or JSON Lines (.jsonl) files, or one .jsonl file.",
            )
        follow_key = f"follow_symlinks:{root}"
        if follow_symlinks is None:
            follow_symlinks = self.get_meta(follow_key) == "1"
        if root.is_dir():
            scan = walk_folder(root, exclude, follow_symlinks=follow_symlinks)
            files = scan.files
            report.skipped += scan.skipped
        with self._lock:
            self._check_open()
            self._follow_symlinks = follow_symlinks
            if (self.get_meta(follow_key) == "1") != follow_symlinks:
                self.set_meta(follow_key, "1" if follow_symlinks else "0")
            with self._transaction() as db:
                db.execute(
                    "INSERT INTO folders (path, added) VALUES (?, ?) ON CONFLICT (path) DO NOTHING",
                    (str(root), time.time()),
                )
            known = {
                row[0]: row[1:]
                for row in self._db.execute(
                    "SELECT path, id, mtime_ns, size, sha256 FROM documents WHERE path IS NOT NULL"
                )
            }
            # Removals first: a file renamed to take over a deleted file's document name then just works.
            self._remove_missing(root, {str(path) for path in files}, report)
            self._index_files(root, files, known, report, progress)
            with self._transaction() as db:
                db.execute("UPDATE folders SET indexed = ? WHERE path = ?", (time.time(), str(root)))
            if report.added + report.updated >= 200:
                self._optimize()
            elif report.changed:
                self._reclaim()
            if report.changed:
                self._page_search()  # build and store the ranker now, not on the first search of the next process
        report.seconds = time.perf_counter() - started
        return report

    def _index_files(
        self,
        root: Path,
        files: list[Path],
        known: dict[str, tuple[Any, ...]],
        report: IndexReport,
        progress: ProgressHook | None,
    ) -> None:
        db = self._db
        self._batch_started, self._in_batch = time.monotonic(), 0
        db.execute("BEGIN IMMEDIATE")
        try:
            for done, path in enumerate(files, 1):
                if path.suffix.lower() in JSONL_SUFFIXES:
                    self._index_jsonl(root, path, known, report)
                else:
                    self._wrote(self._index_file(root, path, known.get(str(path)), report))
                if progress is not None:
                    progress(str(path), done, len(files))
            db.execute("COMMIT")
        except BaseException:
            if db.in_transaction:
                db.execute("ROLLBACK")  # this batch is lost; earlier batches are committed and consistent
            raise

    def _wrote(self, count: int) -> None:
        """Count documents written in the open batch; commit it and begin the next when it is due."""
        self._in_batch += count
        due = self._in_batch >= self.batch_documents or time.monotonic() - self._batch_started > BATCH_SECONDS
        if self._in_batch and due:
            self._db.execute("COMMIT")
            self._db.execute("BEGIN IMMEDIATE")
            self._batch_started, self._in_batch = time.monotonic(), 0

    def _index_file(self, root: Path, path: Path, known: tuple[Any, ...] | None, report: IndexReport) -> int:
        """Index one file inside the open transaction; returns 1 when it wrote something."""
        shown = str(path)
        kept = " (the version indexed before is kept)" if known is not None else ""
        try:
            with open_document(path, root, follow_symlinks=self._follow_symlinks) as opened:
                stat = opened.stat
                if known is not None and known[1] == stat.st_mtime_ns and known[2] == stat.st_size:
                    report.unchanged += 1
                    return 0
                if stat.st_size > self.max_file_bytes:  # said at once; the read below is bounded anyway
                    limit = size_text(self.max_file_bytes)
                    raise Unreadable(f"too large: {size_text(stat.st_size)}, the limit is {limit}")
                raw = opened.read(self.max_file_bytes)
        except Unreadable as exc:
            report.skipped.append((shown, f"{exc}{kept}"))
            return 0
        except OSError as exc:
            report.skipped.append((shown, f"cannot read: {exc.strerror or exc}{kept}"))
            return 0
        digest = hashlib.sha256(raw).hexdigest()
        if known is not None and known[3] == digest:  # touched but not changed: don't re-chunk
            self._db.execute(
                "UPDATE documents SET mtime_ns = ?, size = ? WHERE id = ?", (stat.st_mtime_ns, stat.st_size, known[0])
            )
            report.unchanged += 1
            return 1
        try:
            page = self._read_page(root, path, raw, report)
        except _Skip as exc:
            report.skipped.append((shown, f"{exc}{kept}"))
            return 0
        return self._write_file_page(page, digest, report, shown, root=str(root), path=shown, stat=stat)

    def _write_file_page(self, page: _Page, digest: str, report: IndexReport, shown: str, **where: Any) -> int:
        """Write a page read from a file and count it; returns 1, or 0 when it was skipped (and reported)."""
        try:
            created = self._write(page, "file", digest, **where)
        except _Skip as exc:
            report.skipped.append((shown, str(exc)))
            return 0
        if created:
            report.added += 1
        else:
            report.updated += 1
        report.chunks += len(page.chunks)
        return 1

    def _read_page(self, root: Path, path: Path, raw: bytes, report: IndexReport) -> _Page:
        if not raw.strip():
            raise _Skip("empty file")
        if b"\x00" in raw[:8192]:
            raise _Skip("binary file (contains NUL bytes), not Markdown")
        try:
            text = raw.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            # Tolerant: a stray Latin-1 byte should not hide a whole page. Say so in the report.
            text = raw.decode("utf-8", errors="replace").removeprefix("\ufeff")
            report.warnings.append((str(path), f"invalid UTF-8 at byte {exc.start}; bad bytes shown as U+FFFD"))
        try:
            front = split_front_matter(text)
        except FrontMatterError as exc:
            raise _Skip(str(exc)) from None
        relative = path.relative_to(root).with_suffix("").as_posix()
        name = _document_name(front.get("name"), front.get("uri")) or LOCAL_PREFIX + relative
        body = front.body
        if not body.strip():
            raise _Skip("no Markdown after the front matter")
        title = front.get("title") or first_heading(body) or _title_from_path(path)
        uri = front.get("uri") or (path.as_uri() if name.startswith(LOCAL_PREFIX) else name_to_uri(name))
        return self._page(name, uri, title, front.get("description"), body)

    def _index_jsonl(self, root: Path, path: Path, known: dict[str, tuple[Any, ...]], report: IndexReport) -> None:
        """Index the documents of one JSON Lines file inside the open batch, line by line.

        The file's rows get its mtime and size only once all its lines are written, so an interrupted run
        leaves them looking changed and the next run reads the file again.
        """
        prefix = f"{path}{_JSONL_MARK}"
        mine = {key: row for key, row in known.items() if key.startswith(prefix)}
        seen: dict[str, int] = {}
        try:
            with open_document(path, root, follow_symlinks=self._follow_symlinks) as opened:
                stat = opened.stat
                if mine and all(row[1] == stat.st_mtime_ns and row[2] == stat.st_size for row in mine.values()):
                    report.unchanged += len(mine)
                    return
                lines = opened.lines(self.max_file_bytes)
                for line in jsonl_documents(lines, limit=self.max_file_bytes, name_of=_jsonl_name):
                    where = f"{path}:{line.number}"
                    if line.fields is None:
                        report.skipped.append((where, str(line.reason)))
                        continue
                    name = line.fields["name"]
                    seen[name] = line.number
                    self._wrote(self._index_record(prefix + name, line.fields, mine, root, where, report))
        except Unreadable as exc:
            report.skipped.append((str(path), f"{exc} (the documents indexed from it before are kept)"))
            return
        except OSError as exc:
            report.skipped.append((str(path), f"cannot read: {exc.strerror or exc}"))
            return
        for key, row in mine.items():
            if key[len(prefix) :] not in seen:  # a line that is gone (or now bad)
                self._delete(row[0])
                report.removed += 1
        self._db.execute(
            "UPDATE documents SET mtime_ns = ?, size = ? WHERE path >= ? AND path < ?",
            (stat.st_mtime_ns, stat.st_size, prefix, prefix[:-1] + chr(ord(prefix[-1]) + 1)),
        )

    def _index_record(
        self,
        key: str,
        fields: dict[str, str],
        known: dict[str, tuple[Any, ...]],
        root: Path,
        where: str,
        report: IndexReport,
    ) -> int:
        """Write one JSON Lines document unless unchanged; returns 1 when it wrote something."""
        name, content = fields["name"], fields["content"]
        title = fields["title"] or first_heading(content) or _title_from_name(name)
        uri = fields["uri"] or name_to_uri(name)
        digest = hashlib.sha256("\x00".join((uri, title, fields["description"], content)).encode("utf-8")).hexdigest()
        row = known.get(key)
        if row is not None and row[3] == digest:
            report.unchanged += 1
            return 0
        if row is None:  # a name new to this file: if another file has it, say so before chunking the page
            sql = "SELECT path FROM documents WHERE name = ? AND origin = 'file'"
            taken = self._db.execute(sql, (name,)).fetchone()
            if taken is not None:
                report.skipped.append((where, _duplicate(name, taken[0])))
                return 0
        page = self._page(name, uri, title, fields["description"], content)
        return self._write_file_page(page, digest, report, where, root=str(root), path=key)

    def _page(self, name: str, uri: str, title: str, description: str, content: str) -> _Page:
        chunks = chunk_markdown(content, title, self.sizes)
        return _Page(name, uri, " ".join(title.split()), description.strip(), content, chunks)

    def _remove_missing(self, root: Path, present: set[str], report: IndexReport) -> None:
        rows = self._db.execute("SELECT id, path FROM documents WHERE root = ?", (str(root),)).fetchall()
        gone = [doc_id for doc_id, path in rows if _source_file(path) not in present]
        if not gone:
            return
        with self._transaction():
            for doc_id in gone:
                self._delete(doc_id)
        report.removed += len(gone)

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
            digest,
            time.time(),
        )
        if owner is None:
            doc_id = db.execute(
                "INSERT INTO documents (uri, title, description, content, origin, root, path, mtime_ns, size, sha256,"
                " indexed, name) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (*values, page.name),
            ).lastrowid
        else:
            doc_id = owner[0]
            self._delete_chunks(doc_id)
            db.execute(
                "UPDATE documents SET uri = ?, title = ?, description = ?, content = ?, origin = ?, root = ?, path = ?,"
                " mtime_ns = ?, size = ?, sha256 = ?, indexed = ? WHERE id = ?",
                (*values, doc_id),
            )
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
        self._changed()
        return owner is None

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

    # -- other sources -----------------------------------------------------------------------------

    @_reports_failures("save documents in the local index")
    def add_documents(self, documents: Iterable[Document | dict[str, Any]], origin: str = "fetched") -> IndexReport:
        """Add or update documents given as :class:`~devknow_jupyter.models.Document` or service-shaped dicts.

        Documents with the same content are left alone. A name that belongs to an indexed file keeps the
        file's version (the user's own folder wins) and is reported as skipped. All in one transaction.
        """
        started = time.perf_counter()
        report = IndexReport()
        pages = []
        for item in documents:
            data = item.to_dict() if isinstance(item, Document) else dict(item)
            name = _document_name(str(data.get("name") or ""), str(data.get("uri") or ""))
            content = str(data.get("content") or "")
            if not name:
                report.skipped.append((str(data.get("name") or "?"), "no document name"))
                continue
            if not content.strip():
                report.skipped.append((name, "empty content"))
                continue
            title = str(data.get("title") or "") or first_heading(content) or _title_from_name(name)
            uri = str(data.get("uri") or "") or name_to_uri(name)
            description = str(data.get("description") or "")
            digest = hashlib.sha256("\x00".join((uri, title, description, content)).encode("utf-8")).hexdigest()
            pages.append((name, uri, title, description, content, digest))
        with self._lock:
            self._check_open()
            with self._transaction() as db:
                for name, uri, title, description, content, digest in pages:
                    row = db.execute("SELECT sha256, origin FROM documents WHERE name = ?", (name,)).fetchone()
                    if row is not None and row[0] == digest:
                        report.unchanged += 1
                        continue
                    if row is not None and row[1] == "file":
                        report.skipped.append((name, "an indexed file has this name; the file's version is kept"))
                        continue
                    page = self._page(name, uri, title, description, content)
                    try:
                        created = self._write(page, origin, digest)
                    except _Skip as exc:
                        report.skipped.append((name, str(exc)))
                        continue
                    if created:
                        report.added += 1
                    else:
                        report.updated += 1
                    report.chunks += len(page.chunks)
        report.seconds = time.perf_counter() - started
        return report

    def import_index(self, path: str | os.PathLike[str]) -> IndexReport:
        """Copy every document of another index (a knowledge pack) into this one, with its origin, passages and
        term counts: nothing is re-chunked or re-tokenized (only the full-text entries of the passages are made).

        A name this index already has keeps this index's document (reported as skipped), except documents
        fetched from the live service, which the imported version replaces. One transaction.
        """
        started = time.perf_counter()
        report = IndexReport()
        with self._lock:
            self._check_open()
            db = self._db
            db.execute("ATTACH DATABASE ? AS pack", (str(path),))
            try:
                with self._transaction():
                    self._copy_attached(report)
            finally:
                db.execute("DETACH DATABASE pack")
            self._page_search()
        report.seconds = time.perf_counter() - started
        return report

    def _copy_attached(self, report: IndexReport) -> None:
        """Copy the documents of the database attached as ``pack`` (inside the caller's transaction)."""
        db = self._db
        for (doc_id,) in db.execute(
            "SELECT m.id FROM main.documents m JOIN pack.documents p ON p.name = m.name"
            " WHERE m.origin = 'fetched'"
        ).fetchall():
            self._delete(doc_id)
        for (name,) in db.execute(
            "SELECT p.name FROM pack.documents p JOIN main.documents m ON m.name = p.name"
        ):
            report.skipped.append((name, "this index has a document of that name already; it is kept"))
        offset = db.execute("SELECT coalesce(max(id), 0) FROM main.documents").fetchone()[0]
        db.execute(
            "INSERT INTO main.documents (id, name, uri, title, description, content, origin, sha256, indexed)"
            " SELECT id + ?, name, uri, title, description, content, origin, sha256, indexed"
            " FROM pack.documents WHERE name NOT IN (SELECT name FROM main.documents) ORDER BY id",
            (offset,),
        )
        report.added = db.execute("SELECT count(*) FROM main.documents WHERE id > ?", (offset,)).fetchone()[0]
        kept = "SELECT id - ? FROM main.documents WHERE id > ?"
        db.execute(
            "INSERT INTO main.chunks (id, doc_id, seq, breadcrumb, title, headings, body)"
            f" SELECT ((doc_id + ?) << {PAGE_SHIFT}) | seq, doc_id + ?, seq, breadcrumb, title, headings, body"
            f" FROM pack.chunks WHERE doc_id IN ({kept})",
            (offset, offset, offset, offset),
        )
        db.execute(
            "INSERT INTO main.chunks_fts (rowid, title, headings, body)"
            " SELECT id, title, headings, body FROM main.chunks WHERE doc_id > ?",
            (offset,),
        )
        db.execute(
            "INSERT INTO main.page_terms (doc_id, terms, counts, lengths)"
            f" SELECT doc_id + ?, terms, counts, lengths FROM pack.page_terms WHERE doc_id IN ({kept})",
            (offset, offset, offset),
        )
        report.chunks = db.execute("SELECT count(*) FROM main.chunks WHERE doc_id > ?", (offset,)).fetchone()[0]
        self._changed()

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

    def refresh_folders(self, *, progress: ProgressHook | None = None) -> IndexReport:
        """Reindex every remembered folder (incrementally). A folder that is gone is reported, not emptied."""
        report = IndexReport()
        for folder in self.folders():
            if not Path(folder).exists():
                report.skipped.append((folder, "folder not found (its documents are kept)"))
                continue
            report.merge(self.add_folder(folder, progress=progress))
        return report

    @_reports_failures("remove {0} from the local index")
    def remove_folder(self, folder: str | os.PathLike[str]) -> int:
        """Forget a folder and remove its documents; returns how many were removed."""
        root = str(Path(folder).expanduser().resolve())
        with self._lock:
            self._check_open()
            with self._transaction() as db:
                ids = [row[0] for row in db.execute("SELECT id FROM documents WHERE root = ?", (root,))]
                for doc_id in ids:
                    self._delete(doc_id)
                db.execute("DELETE FROM folders WHERE path = ?", (root,))
            self._reclaim()
            return len(ids)

    @_reports_failures("remove documents from the local index")
    def remove_documents(self, origin: str) -> int:
        """Remove every document of one origin (e.g. ``"fetched"``); returns how many were removed."""
        with self._lock:
            self._check_open()
            with self._transaction() as db:
                ids = [row[0] for row in db.execute("SELECT id FROM documents WHERE origin = ?", (origin,))]
                for doc_id in ids:
                    self._delete(doc_id)
            self._reclaim()
            return len(ids)

    # -- reading -----------------------------------------------------------------------------------

    def search(
        self, query: str, limit: int = 10, *, source: str | None = None, origin: str | None = None
    ) -> list[dict[str, str]]:
        """The best pages for ``query``, best first, as ``[{"parent", "id", "content"}]``: one hit per page.

        Pages are ranked whole (see :mod:`.ranker`); each hit shows the page's passage that best matches the
        query. ``source`` keeps only pages of that site (``"adk.dev"``, ``"firebase.google.com/docs"``) and
        ``origin`` only documents of that origin (``"file"``, ``"fetched"``), both inside the ranking.
        """
        return self.search_results(query, limit, source=source, origin=origin)["results"]

    def search_results(
        self, query: str, limit: int = 10, *, source: str | None = None, origin: str | None = None
    ) -> dict[str, Any]:
        """:meth:`search` in the tool's shape: ``{"results": [...], "notices": [...]}``, where ``notices``
        (present only when there is something to say) holds one-line remarks such as a weak match."""
        outcome, rows = self._ranked(query, limit, source=source, origin=origin)
        results = [
            {"parent": name, "id": str(seq), "content": _content(crumb, body)} for name, seq, crumb, body in rows
        ]
        return {"results": results, "notices": outcome.notices} if outcome.notices else {"results": results}

    def _ranked(
        self, query: str, limit: int, *, source: str | None = None, origin: str | None = None
    ) -> tuple[SearchOutcome, list[tuple[str, int, str, str]]]:
        """The ranking outcome and ``(name, seq, breadcrumb, body)`` of each page's best passage, best first."""
        with self._lock:
            self._check_open()
            search = self._page_search()
            outcome = search.search(query, limit, source=source, origin=origin)
            if not outcome.doc_ids:
                return outcome, []
            # Words on most pages barely change which passage is best but make FTS5 read long posting lists.
            terms = query_terms(outcome.text)
            terms = [term for term in terms if search.ranker.share(term) <= COMMON_SHARE] or terms
            chosen = self._best_passages(outcome.doc_ids, fts_expression(terms))
            marks = ",".join("?" * len(chosen))
            found = {
                row[0]: row[1:]
                for row in self._db.execute(
                    "SELECT c.id, d.name, c.seq, c.breadcrumb, c.body FROM chunks c JOIN documents d ON d.id = c.doc_id"
                    f" WHERE c.id IN ({marks})",
                    chosen,
                )
            }
        return outcome, [found[passage] for passage in chosen if passage in found]

    def _best_passages(self, doc_ids: list[int], expression: str) -> list[int]:
        """For each page, the id of its passage that matches the query best (its first one when none does).

        One FTS5 statement for all pages: bm25's term statistics are gathered once, not once per page.
        """
        best: dict[int, tuple[float, int]] = {}
        if expression:
            marks = ",".join("?" * len(doc_ids))
            for passage, score in self._db.execute(
                f"SELECT rowid, bm25(chunks_fts, 8.0, 4.0, 1.0) FROM chunks_fts WHERE chunks_fts MATCH ?"
                f" AND (rowid >> {PAGE_SHIFT}) IN ({marks})",
                (expression, *doc_ids),
            ):
                page = passage >> PAGE_SHIFT
                if page not in best or (score, passage) < best[page]:
                    best[page] = (score, passage)
        chosen = []
        for doc_id in doc_ids:
            if doc_id in best:
                chosen.append(best[doc_id][1])
                continue
            low, high = _passage_ids(doc_id)
            row = self._db.execute("SELECT min(id) FROM chunks WHERE id BETWEEN ? AND ?", (low, high)).fetchone()
            chosen.append(row[0] if row and row[0] is not None else low)
        return chosen

    # -- the ranker ---------------------------------------------------------------------------------

    def _page_search(self) -> PageSearch:
        """The ranker for the pages as they are now: kept while nothing changed, else loaded or rebuilt."""
        generation = self._meta("generation") or "0"
        if self._search is not None and self._search_generation == generation:
            return self._search
        db = self._db
        db.execute("BEGIN")  # one read snapshot: the pages, their terms and the generation agree
        try:
            generation = self._meta("generation") or "0"
            ranker = None
            if self._meta("ranker_generation") == generation:
                try:
                    parts = dict(db.execute("SELECT part, data FROM ranker_snapshot"))
                    ranker = LexicalRanker.from_parts(parts, self.ranking)
                except (KeyError, ValueError):
                    ranker = None  # a damaged snapshot is only a cache: rebuild it
            built = ranker is None
            if built:
                ranker = LexicalRanker.build(self._stored_terms(), self.ranking)
            pages = dict((row[0], row[1:]) for row in db.execute("SELECT id, uri, origin FROM documents"))
        finally:
            db.execute("COMMIT")
        uris = [pages.get(int(doc_id), ("", ""))[0] for doc_id in ranker.doc_ids]
        origins = [pages.get(int(doc_id), ("", ""))[1] for doc_id in ranker.doc_ids]
        if built:
            self._save_snapshot(ranker, generation)
        self._search = PageSearch(ranker, uris, origins, dense=self._dense(ranker))
        self._search_generation = generation
        return self._search

    def _stored_terms(self) -> Iterator[tuple[int, PageTerms]]:
        fields = len(self.ranking.weights)
        for doc_id, terms, counts, lengths in self._db.execute(
            "SELECT doc_id, terms, counts, lengths FROM page_terms ORDER BY doc_id"
        ):
            counts_array = np.frombuffer(counts, dtype=np.uint16).reshape(-1, fields)
            words = terms.split("\n") if terms else []
            yield doc_id, PageTerms(words, counts_array, np.frombuffer(lengths, np.float32))

    def _save_snapshot(self, ranker: LexicalRanker, generation: str) -> None:
        """Store the built ranker for the next process to open; skipped when the file is busy or read-only."""
        if self.path == ":memory:":
            return
        db = self._db
        db.execute("PRAGMA busy_timeout = 0")  # a search never waits for another writer to save a cache
        try:
            with self._transaction():
                if (self._meta("generation") or "0") != generation:
                    return  # the pages changed meanwhile: this ranker is already stale
                db.execute("DELETE FROM ranker_snapshot")
                db.executemany("INSERT INTO ranker_snapshot (part, data) VALUES (?, ?)", ranker.to_parts().items())
                db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('ranker_generation', ?)", (generation,))
        except sqlite3.OperationalError:
            pass  # locked or read-only: the next open rebuilds it
        finally:
            db.execute("PRAGMA busy_timeout = 30000")

    def _dense(self, ranker: LexicalRanker) -> tuple[Any, np.ndarray] | None:
        """The embedder and page vectors for semantic fusion, or None (no extra, or switched off)."""
        from . import semantic

        if self.semantic is False or (self.semantic is None and not semantic.enabled()) or not len(ranker):
            return None
        model = semantic.default_embedder()
        if model is None:
            return None
        return model, self._page_vectors(model, ranker)

    def _page_vectors(self, model: Any, ranker: LexicalRanker) -> np.ndarray:
        """One unit vector per page in ranker order; pages without one are embedded (in batches) and stored."""
        db = self._db
        stored = {
            doc_id: np.frombuffer(blob, dtype=np.float32)
            for doc_id, blob in db.execute("SELECT doc_id, vector FROM page_vectors WHERE model = ?", (model.name,))
        }
        missing = [int(doc_id) for doc_id in ranker.doc_ids if int(doc_id) not in stored]
        fresh: dict[int, np.ndarray] = {}
        for start in range(0, len(missing), EMBED_BATCH):  # batches keep the embedding's memory small
            part = missing[start : start + EMBED_BATCH]
            marks = ",".join("?" * len(part))
            rows = db.execute(f"SELECT id, title, description, content FROM documents WHERE id IN ({marks})", part)
            ids, texts = [], []
            for doc_id, title, description, content in rows:
                ids.append(doc_id)
                texts.append(model.page_text(title, description, content))
            fresh.update(zip(ids, model.embed(texts), strict=True))
        if fresh:
            stored.update(fresh)
            self._save_vectors(model.name, fresh)
        vectors = np.zeros((len(ranker.doc_ids), model.dimensions), dtype=np.float32)
        for position, doc_id in enumerate(ranker.doc_ids):
            vector = stored.get(int(doc_id))
            if vector is not None and len(vector) == model.dimensions:
                vectors[position] = vector
        return vectors

    def _save_vectors(self, model_name: str, vectors: dict[int, np.ndarray]) -> None:
        db = self._db
        db.execute("PRAGMA busy_timeout = 0")
        try:
            with self._transaction():
                db.executemany(
                    "INSERT OR REPLACE INTO page_vectors (doc_id, model, vector) SELECT ?, ?, ?"
                    " WHERE EXISTS (SELECT 1 FROM documents WHERE id = ?)",
                    [(key, model_name, vector.astype(np.float32).tobytes(), key) for key, vector in vectors.items()],
                )
        except sqlite3.OperationalError:
            pass
        finally:
            db.execute("PRAGMA busy_timeout = 30000")

    def _meta(self, key: str) -> str | None:
        row = self._db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def get(self, names: Iterable[str]) -> list[dict[str, str]]:
        """The documents with these names that exist, in request order, in the service's document shape."""
        wanted = list(names)
        if not wanted:
            return []
        with self._lock:
            self._check_open()
            found: dict[str, dict[str, str]] = {}
            for start in range(0, len(wanted), 500):
                part = wanted[start : start + 500]
                marks = ",".join("?" * len(part))
                for name, uri, content, description, title in self._db.execute(
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

    def answer(self, query: str, *, passages: int = 3) -> dict[str, Any]:
        """An extractive answer: the best passages quoted, with the documents they come from.

        Returns ``{"answerText", "references": [names], "extractive": True}``.
        """
        _, rows = self._ranked(query, max(passages * 3, 8))
        hits = [(name, crumb, body) for name, _, crumb, body in rows]
        return extractive_answer(query, hits, passages=passages)

    def names(self, origin: str | None = None) -> list[str]:
        """Every document name (of one origin, when given), sorted."""
        with self._lock:
            self._check_open()
            if origin is None:
                return [row[0] for row in self._db.execute("SELECT name FROM documents ORDER BY name")]
            return [
                row[0]
                for row in self._db.execute("SELECT name FROM documents WHERE origin = ? ORDER BY name", (origin,))
            ]

    def count(self, origin: str | None = None) -> int:
        """How many documents the index holds (of one origin, when given)."""
        with self._lock:
            self._check_open()
            if origin is None:
                return self._db.execute("SELECT count(*) FROM documents").fetchone()[0]
            return self._db.execute("SELECT count(*) FROM documents WHERE origin = ?", (origin,)).fetchone()[0]

    def __len__(self) -> int:
        return self.count()

    @_reports_failures("read the local index")
    def stats(self) -> dict[str, Any]:
        """Figures: ``documents``, ``chunks``, ``path``, ``size_bytes``, plus documents by origin and folders."""
        with self._lock:
            self._check_open()
            db = self._db
            by_origin = dict(db.execute("SELECT origin, count(*) FROM documents GROUP BY origin").fetchall())
            pages = db.execute("PRAGMA page_count").fetchone()[0]
            page_size = db.execute("PRAGMA page_size").fetchone()[0]
            return {
                "path": self.path,
                "documents": sum(by_origin.values()),
                "chunks": db.execute("SELECT count(*) FROM chunks").fetchone()[0],
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

    def __enter__(self) -> LocalIndex:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<LocalIndex {self.path!r}>"


# -- helpers ---------------------------------------------------------------------------------------


def _source_file(path: str) -> str:
    """The file a document was read from: its path, or the JSON Lines file of ``FILE.jsonl::NAME``."""
    at = path.lower().find(".jsonl" + _JSONL_MARK)
    return path[: at + len(".jsonl")] if at >= 0 else path


def _duplicate(name: str, owner_path: str) -> str:
    return f"duplicate name {name!r}: {_source_file(owner_path)} has it already"


def _jsonl_name(fields: dict[str, str]) -> str:
    return _document_name(fields.get("name", ""), fields.get("uri", ""))


def _document_name(name: str, uri: str) -> str:
    """A ``documents/...`` name from front matter: the name as given, else derived from the URI."""
    name = name.strip()
    if name:
        if name.startswith(("https://", "http://")):
            return DOCUMENT_PREFIX + name.split("://", 1)[1].rstrip("/")
        return name if name.startswith(DOCUMENT_PREFIX) else DOCUMENT_PREFIX + name.lstrip("/")
    uri = uri.strip()
    if uri.startswith(("https://", "http://")):
        return DOCUMENT_PREFIX + uri.split("://", 1)[1].rstrip("/")
    return ""


def _title_from_path(path: Path) -> str:
    stem = path.stem if path.stem.lower() != "index" else path.parent.name or path.stem
    return stem.replace("-", " ").replace("_", " ").strip().capitalize() or path.name


def _title_from_name(name: str) -> str:
    last = name.rstrip("/").rsplit("/", 1)[-1]
    return last.replace("-", " ").replace("_", " ").strip().capitalize() or name


def _passage_ids(doc_id: int) -> tuple[int, int]:
    """The range of passage ids of one page."""
    return doc_id << PAGE_SHIFT, (doc_id << PAGE_SHIFT) | PASSAGES_PER_PAGE


def _content(breadcrumb: str, body: str) -> str:
    return f"## {breadcrumb}\n\n{body}" if body else f"## {breadcrumb}\n"
