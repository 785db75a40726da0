"""Copying the pages of another index (a knowledge pack) into a store, with their passages and term counts.

Nothing is re-chunked or re-tokenized: the pack's rows are copied with their page ids moved past this
store's, and only the full-text entries of the passages are made. The caller checks the file first
(:func:`~devknow_jupyter.packs.read_manifest`); :meth:`~.index.LocalIndex.import_index` is the entry point.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping

from ..errors import ConfigurationError
from .credits import PackCredits
from .pages import PageStore
from .report import IndexReport
from .schema import MAX_DOC_ID, PAGE_SHIFT

__all__ = ["import_pack"]


def import_pack(
    store: PageStore,
    credits: PackCredits,
    path: str | os.PathLike[str],
    origins: Mapping[str, str],
    *,
    replacing: Iterable[str] = (),
    meta: Mapping[str, str] | None = None,
) -> IndexReport:
    """Copy the documents of the index file at ``path`` into ``store`` in one transaction (see
    :meth:`~.index.LocalIndex.import_index` for ``origins``, ``replacing`` and ``meta``). Call it holding the
    store's lock."""
    report = IndexReport()
    db = store.db
    db.execute("ATTACH DATABASE ? AS pack", (str(path),))
    try:
        with store.transaction():
            replacing = list(replacing)
            for origin in replacing:
                for (doc_id,) in db.execute("SELECT id FROM documents WHERE origin = ?", (origin,)).fetchall():
                    store.delete(doc_id)
            credits.drop(replacing)
            _copy_attached(store, report, origins)
            credits.record(origins)
            for key, value in (meta or {}).items():
                store.put_meta(f"user:{key}", value)
    finally:
        db.execute("DETACH DATABASE pack")
    return report


def _copy_attached(store: PageStore, report: IndexReport, origins: Mapping[str, str]) -> None:
    """Copy the documents of the database attached as ``pack`` (inside the caller's transaction)."""
    db = store.db
    for (doc_id,) in db.execute(
        "SELECT m.id FROM main.documents m JOIN pack.documents p ON p.name = m.name WHERE m.origin = 'fetched'"
    ).fetchall():
        store.delete(doc_id)
    for name, owner in db.execute(
        "SELECT p.name, m.origin FROM pack.documents p JOIN main.documents m ON m.name = p.name"
    ):
        report.skipped.append((name, f"this index has a document of that name already ({owner}); it is kept"))
    offset = db.execute("SELECT coalesce(max(id), 0) FROM main.documents").fetchone()[0]
    highest = db.execute("SELECT coalesce(max(id), 0) FROM pack.documents").fetchone()[0]
    if not isinstance(highest, int) or offset + highest > MAX_DOC_ID:
        raise ConfigurationError(
            f"The pack's page ids run to {highest}: more than this index can number (at most {MAX_DOC_ID:,}).",
            hint="Build the pack again with `devknow pack build`.",
        )
    for theirs, ours in origins.items():
        db.execute(
            "INSERT INTO main.documents (id, name, uri, title, description, content, origin, sha256, indexed)"
            " SELECT id + ?, name, uri, title, description, content, ?, sha256, indexed FROM pack.documents"
            " WHERE origin = ? AND name NOT IN (SELECT name FROM main.documents) ORDER BY id",
            (offset, ours, theirs),
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
    store.changed()
