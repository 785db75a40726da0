"""``RecentUse``: documents of one origin kept within a size, the least recently used going first.

The offline store of fetched pages (:mod:`.store`) is bounded with it: a page's footprint on disk and its last
use are kept in its row (``size``, ``indexed``), so keeping the store within its limit reads an index, not pages.
"""

from __future__ import annotations

import time
from collections.abc import Iterable

from .pages import PageStore

__all__ = ["RecentUse"]

# What a page takes on disk, about: its text three times (the document, its passages, their full-text entries)
# and its term counts (for a page of rare words, several times its text).
_FOOTPRINT = (
    "3 * length(CAST(name || uri || title || description || content AS BLOB)) + coalesce((SELECT"
    " length(CAST(terms AS BLOB)) + length(counts) + length(lengths) FROM page_terms WHERE doc_id = documents.id), 0)"
)


class RecentUse:
    """Use marks and least-recently-used removal for the documents of one origin of a store."""

    def __init__(self, store: PageStore) -> None:
        self.store = store

    def keep_recent(self, origin: str, used: Iterable[str], max_bytes: int) -> int:
        """Mark the documents ``used`` (of ``origin``) as used now, then remove the least recently used documents
        of ``origin`` until they take at most ``max_bytes`` on disk; returns how many were removed. One
        transaction. A document's footprint (:data:`_FOOTPRINT`) and last use are kept in its ``size`` and
        ``indexed`` columns, read through a covering index so this never reads the pages themselves."""
        names = list(dict.fromkeys(used))
        removed = 0
        store = self.store
        with store.failures("write to the local index"), store.locked():
            with store.transaction() as db:
                db.execute("CREATE INDEX IF NOT EXISTS documents_use ON documents (origin, indexed, size)")
                now = time.time()
                for start in range(0, len(names), 500):
                    part = names[start : start + 500]
                    marks = ",".join("?" * len(part))
                    db.execute(
                        f"UPDATE documents SET indexed = ? WHERE origin = ? AND name IN ({marks})", (now, origin, *part)
                    )
                # Documents written before sizes were kept for this origin (and the ones just written) get theirs.
                db.execute(f"UPDATE documents SET size = {_FOOTPRINT} WHERE origin = ? AND size IS NULL", (origin,))
                total = db.execute("SELECT coalesce(sum(size), 0) FROM documents WHERE origin = ?", (origin,))
                excess = total.fetchone()[0] - max_bytes
                if excess > 0:
                    oldest = db.execute(
                        "SELECT id, size FROM documents WHERE origin = ? ORDER BY indexed, id", (origin,)
                    ).fetchall()
                    for doc_id, size in oldest:
                        if excess <= 0:
                            break
                        store.delete(doc_id)
                        excess -= size
                        removed += 1
            if removed:
                store.reclaim()
        return removed
