"""A store's figures and its consistency check: what ``devknow index --stats`` and ``--verify`` show."""

from __future__ import annotations

import sqlite3
from typing import Any

from .pages import PageStore

__all__ = ["store_problems", "store_stats"]


def store_stats(store: PageStore) -> dict[str, Any]:
    """Figures: ``documents``, ``chunks``, ``path``, ``size_bytes``, plus documents by origin and folders."""
    with store.locked() as db:
        by_origin = dict(db.execute("SELECT origin, count(*) FROM documents GROUP BY origin").fetchall())
        pages = db.execute("PRAGMA page_count").fetchone()[0]
        page_size = db.execute("PRAGMA page_size").fetchone()[0]
        with store.unmapped():  # counting the passages reads their whole table: not kept mapped
            chunks = db.execute("SELECT count(*) FROM chunks").fetchone()[0]
        store.release_memory()
        return {
            "path": store.path,
            "documents": sum(by_origin.values()),
            "chunks": chunks,
            "size_bytes": pages * page_size,
            "by_origin": by_origin,
            "folders": store.folders(),
        }


def store_problems(store: PageStore) -> list[str]:
    """Check the file is consistent; returns the problems found (an empty list when all is well)."""
    problems = []
    with store.locked() as db:
        try:
            db.execute("INSERT INTO chunks_fts (chunks_fts, rank) VALUES ('integrity-check', 1)")
        except sqlite3.DatabaseError as exc:
            problems.append(f"full-text index: {exc}")
        for (message,) in db.execute("PRAGMA integrity_check"):
            if message != "ok":
                problems.append(f"database: {message}")
        orphans = db.execute("SELECT count(*) FROM chunks WHERE doc_id NOT IN (SELECT id FROM documents)").fetchone()[0]
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
