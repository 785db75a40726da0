"""``FileRecords``: what a store records of the files its pages were read from, for incremental reindexing.

A page read from a file keeps the file's path (``FILE.jsonl::NAME`` for a JSON Lines record), the folder it
was indexed under (``root``), the file's modification time and size, and the SHA-256 of its bytes; the
``folders`` table remembers each folder indexed. The indexer (:mod:`.indexing`) reads these to leave
unchanged files unread, and writes them as it goes, inside its open batch.
"""

from __future__ import annotations

import os
import time
from typing import Any

from .pages import PageStore
from .reading import JSONL_MARK

__all__ = ["FileRecords", "Known"]

#: A file's record: ``(page id, mtime_ns, size, sha256)``.
Known = tuple[Any, ...]


class FileRecords:
    """The file bookkeeping of one store's pages."""

    def __init__(self, store: PageStore) -> None:
        self.store = store

    def remember_folder(self, root: str) -> None:
        """Add ``root`` to the folders indexed (one transaction; kept as it is when known)."""
        with self.store.transaction() as db:
            db.execute(
                "INSERT INTO folders (path, added) VALUES (?, ?) ON CONFLICT (path) DO NOTHING", (root, time.time())
            )

    def folder_indexed(self, root: str) -> None:
        """Record that a run over ``root`` ended now (one transaction)."""
        with self.store.transaction() as db:
            db.execute("UPDATE folders SET indexed = ? WHERE path = ?", (time.time(), root))

    def known(self) -> dict[str, Known]:
        """Every recorded file path with its record."""
        rows = self.store.db.execute("SELECT path, id, mtime_ns, size, sha256 FROM documents WHERE path IS NOT NULL")
        return {row[0]: row[1:] for row in rows}

    def under(self, root: str) -> list[tuple[int, str]]:
        """``(page id, recorded path)`` of every page indexed under ``root``."""
        return self.store.db.execute("SELECT id, path FROM documents WHERE root = ?", (root,)).fetchall()

    def markdown_names(self, root: str) -> list[tuple[str, str]]:
        """``(path, page name)`` of the pages read from Markdown files under ``root`` (not JSON Lines records)."""
        sql = "SELECT path, name FROM documents WHERE root = ? AND instr(path, ?) = 0"
        return self.store.db.execute(sql, (root, JSONL_MARK)).fetchall()

    def file_with_name(self, name: str) -> str | None:
        """The recorded path of the file whose page has this name, if a file's page has it."""
        row = self.store.db.execute("SELECT path FROM documents WHERE name = ? AND origin = 'file'", (name,)).fetchone()
        return row[0] if row else None

    def touched(self, doc_id: int, stat: os.stat_result, updated_ns: int | None) -> None:
        """A file whose bytes are unchanged got a new time: record it (and the date its front matter gives)."""
        self.store.db.execute(
            "UPDATE documents SET mtime_ns = ?, size = ?, updated_ns = ? WHERE id = ?",
            (stat.st_mtime_ns, stat.st_size, updated_ns, doc_id),
        )

    def jsonl_read(self, prefix: str, stat: os.stat_result) -> None:
        """Give every record of one JSON Lines file (paths starting ``prefix``) the file's time and size."""
        self.store.db.execute(
            "UPDATE documents SET mtime_ns = ?, size = ? WHERE path >= ? AND path < ?",
            (stat.st_mtime_ns, stat.st_size, prefix, prefix[:-1] + chr(ord(prefix[-1]) + 1)),
        )
