"""The passage shown for each ranked page: the one that best matches the query, found by FTS5's bm25.

Pages are ranked whole (:mod:`.ranker`); a hit then shows one passage of its page. One FTS5 statement
scores the passages of every ranked page at once, so bm25's term statistics are gathered once.
"""

from __future__ import annotations

import sqlite3

from .query import fts_expression, query_terms
from .ranker import LexicalRanker
from .schema import PAGE_SHIFT, passage_ids

__all__ = ["COMMON_SHARE", "Passage", "best_passages"]

# Query words on more than this share of pages are left out when choosing a hit's passage.
COMMON_SHARE = 0.3

#: ``(page name, passage number, breadcrumb, body)``
Passage = tuple[str, int, str, str]


def best_passages(db: sqlite3.Connection, ranker: LexicalRanker, text: str, doc_ids: list[int]) -> list[Passage]:
    """``(name, seq, breadcrumb, body)`` of each page's passage that best matches ``text``, in page order."""
    if not doc_ids:
        return []
    # Words on most pages barely change which passage is best but make FTS5 read long posting lists.
    terms = query_terms(text)
    terms = [term for term in terms if ranker.share(term) <= COMMON_SHARE] or terms
    chosen = _chosen(db, doc_ids, fts_expression(terms))
    marks = ",".join("?" * len(chosen))
    found = {
        row[0]: row[1:]
        for row in db.execute(
            "SELECT c.id, d.name, c.seq, c.breadcrumb, c.body FROM chunks c JOIN documents d ON d.id = c.doc_id"
            f" WHERE c.id IN ({marks})",
            chosen,
        )
    }
    return [found[passage] for passage in chosen if passage in found]


def _chosen(db: sqlite3.Connection, doc_ids: list[int], expression: str) -> list[int]:
    """For each page, the id of its passage that matches the query best (its first one when none does)."""
    best: dict[int, tuple[float, int]] = {}
    if expression:
        marks = ",".join("?" * len(doc_ids))
        for passage, score in db.execute(
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
        low, high = passage_ids(doc_id)
        row = db.execute("SELECT min(id) FROM chunks WHERE id BETWEEN ? AND ?", (low, high)).fetchone()
        chosen.append(row[0] if row and row[0] is not None else low)
    return chosen
