"""``LocalIndex``: Markdown pages in SQLite, ranked whole by field-weighted BM25.

The index is built in layers, each its own module: :mod:`.database` (the SQLite file: tables,
transactions, writes, deletes, meta and folders), :mod:`.ranker_cache` (the ranker built from the stored
term counts, kept while nothing changed), :mod:`.indexing` (incremental, batched indexing runs over
folders of Markdown and JSON Lines files, and documents fetched from elsewhere), :mod:`.eviction` (documents
of one origin kept within a size, least recently used first), :mod:`.credits` (the pack to credit for each
page name) and this facade, which
adds the query side (``search``, ``get``, ``answer``) and importing knowledge packs.
"""

from __future__ import annotations

import os
import time
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from ..errors import ConfigurationError
from .answer import extractive_answer
from .chunking import ChunkSizes
from .credits import PackCredits
from .database import MAX_DOC_ID, PAGE_SHIFT, SCHEMA_VERSION, _passage_ids
from .eviction import RecentUse
from .indexing import BATCH_DOCUMENTS, MAX_FILE_BYTES, FolderIndexing, IndexReport
from .query import fts_expression, query_terms
from .ranker import RankSettings
from .search import SearchOutcome

__all__ = ["MAX_FILE_BYTES", "SCHEMA_VERSION", "IndexReport", "LocalIndex", "RankSettings", "SearchPage"]  # re-exported

# Query words on more than this share of pages are left out when choosing a hit's passage.
COMMON_SHARE = 0.3


class LocalIndex(FolderIndexing, RecentUse, PackCredits):
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
        self.sizes = sizes or ChunkSizes()
        self.ranking = ranking or RankSettings()
        self.semantic = semantic
        self.max_file_bytes = max_file_bytes
        self.batch_documents = max(1, batch_documents)
        self._search = None
        self._search_generation = None
        super().__init__(path, cache_mb=cache_mb, read_only=read_only)

    # -- knowledge packs ---------------------------------------------------------------------------

    def import_index(
        self,
        path: str | os.PathLike[str],
        origins: Mapping[str, str],
        *,
        replacing: Iterable[str] = (),
        meta: Mapping[str, str] | None = None,
    ) -> IndexReport:
        """Copy the documents of another index (a knowledge pack) into this one, with their passages and term
        counts: nothing is re-chunked or re-tokenized (only the full-text entries of the passages are made).

        ``origins`` maps each origin of the other index's documents to the origin they get here: the importer
        says where pages come from, never the file (documents of any other origin are not copied).
        ``replacing``: origins whose documents go first (the older copy of the same pack); ``meta``: values
        written with the pages (:meth:`set_meta`). A name this index already has keeps this index's document
        (reported as skipped, naming the kept copy's origin), except documents fetched from the live service,
        which the imported version replaces; either way the name is credited to the pack
        (:meth:`credited_origins`), so its licence line follows its pages. The caller checks the file first
        (:func:`~devknow_jupyter.packs.read_manifest`). One transaction: on any failure this index is as it was.
        """
        started = time.perf_counter()
        report = IndexReport()
        with self._lock:
            self._check_open()
            db = self._db
            db.execute("ATTACH DATABASE ? AS pack", (str(path),))
            try:
                with self._transaction():
                    replacing = list(replacing)
                    for origin in replacing:
                        for (doc_id,) in db.execute("SELECT id FROM documents WHERE origin = ?", (origin,)).fetchall():
                            self._delete(doc_id)
                    self._drop_credits(replacing)
                    self._copy_attached(report, origins)
                    self._record_credits(origins)
                    for key, value in (meta or {}).items():
                        db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (f"user:{key}", value))
            finally:
                db.execute("DETACH DATABASE pack")
            self._page_search()
        report.seconds = time.perf_counter() - started
        return report

    def _copy_attached(self, report: IndexReport, origins: Mapping[str, str]) -> None:
        """Copy the documents of the database attached as ``pack`` (inside the caller's transaction)."""
        db = self._db
        for (doc_id,) in db.execute(
            "SELECT m.id FROM main.documents m JOIN pack.documents p ON p.name = m.name WHERE m.origin = 'fetched'"
        ).fetchall():
            self._delete(doc_id)
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
        self._changed()

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
        results = _results(rows)
        return {"results": results, "notices": outcome.notices} if outcome.notices else {"results": results}

    def search_page(
        self,
        query: str,
        limit: int = 10,
        *,
        offset: int = 0,
        source: str | None = None,
        origin: str | None = None,
        since_ns: int | None = None,
    ) -> SearchPage:
        """The hits ranked ``offset`` to ``offset + limit`` of the whole ranking, for paging.

        The ranker's list is taken whole (every page with a positive score, ties in page order), so the
        pages of one search at one :attr:`SearchPage.generation` follow each other without gap or overlap.
        ``since_ns`` (nanoseconds since the epoch) leaves out the pages known to be older: a page read from a
        file is dated by its front matter's date field (:data:`~.frontmatter.DATE_FIELDS`), else by the file's
        modification time; pages without a date (from knowledge packs, fetched
        from the service) are kept and counted in :attr:`SearchPage.undated`.
        """
        with self._lock:
            self._check_open()
            search = self._page_search()
            generation = self._search_generation or "0"
            start = max(0, offset)
            # The whole ranking, for a stable order; the notices (a weak match) of the pages shown so far, as
            # for one search of that many hits.
            outcome = search.search(query, max(len(search.ranker), 1), source=source, origin=origin)
            notices = search.search(query, start + limit, source=source, origin=origin).notices
            ranked, undated, dated = self._since(outcome.doc_ids, since_ns)
            rows = self._passages(search, outcome.text, ranked[start : start + limit]) if limit > 0 else []
        return SearchPage(_results(rows), notices, start + limit < len(ranked), generation, undated, dated)

    def _since(self, ranked: list[int], since_ns: int | None) -> tuple[list[int], int, int]:
        """The pages of ``ranked`` not known to be older than ``since_ns``, and how many matching pages have
        no date (kept) and a date."""
        if since_ns is None or not ranked:
            return ranked, 0, 0
        # A page's own date (front matter) where it gave one, else its file's modification time.
        date = "COALESCE(updated_ns, mtime_ns)" if self.has_page_dates else "mtime_ns"
        dates = dict(self._db.execute(f"SELECT id, {date} FROM documents"))
        undated = sum(1 for doc_id in ranked if dates.get(doc_id) is None)
        kept = [doc_id for doc_id in ranked if dates.get(doc_id) is None or dates[doc_id] >= since_ns]
        return kept, undated, len(ranked) - undated

    def _ranked(
        self, query: str, limit: int, *, source: str | None = None, origin: str | None = None
    ) -> tuple[SearchOutcome, list[tuple[str, int, str, str]]]:
        """The ranking outcome and ``(name, seq, breadcrumb, body)`` of each page's best passage, best first."""
        with self._lock:
            self._check_open()
            search = self._page_search()
            outcome = search.search(query, limit, source=source, origin=origin)
            return outcome, self._passages(search, outcome.text, outcome.doc_ids)

    def _passages(self, search: Any, text: str, doc_ids: list[int]) -> list[tuple[str, int, str, str]]:
        """``(name, seq, breadcrumb, body)`` of each page's passage that best matches ``text``, in page order."""
        if not doc_ids:
            return []
        # Words on most pages barely change which passage is best but make FTS5 read long posting lists.
        terms = query_terms(text)
        terms = [term for term in terms if search.ranker.share(term) <= COMMON_SHARE] or terms
        chosen = self._best_passages(doc_ids, fts_expression(terms))
        marks = ",".join("?" * len(chosen))
        found = {
            row[0]: row[1:]
            for row in self._db.execute(
                "SELECT c.id, d.name, c.seq, c.breadcrumb, c.body FROM chunks c JOIN documents d ON d.id = c.doc_id"
                f" WHERE c.id IN ({marks})",
                chosen,
            )
        }
        return [found[passage] for passage in chosen if passage in found]

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

    def answer(
        self, query: str, *, passages: int = 3, source: str | None = None, since: str | None = None
    ) -> dict[str, Any]:
        """An extractive answer: the best passages quoted, with the documents they come from.

        ``source`` grounds it in one site's pages (``adk.dev``, ``firebase.google.com/docs/auth``) and
        ``since`` (an RFC 3339 time or a date) in the pages not known to be older, as :meth:`search_page`
        dates them. Returns ``{"answerText", "references": [names], "extractive": True}``, with
        ``"notices"`` when the date filter has something to say.
        """
        from .paging import since_nanoseconds, undated_notice

        since_ns, moment = since_nanoseconds(since, "answer_query") if since else (None, None)
        limit = max(passages * 3, 8)
        with self._lock:
            self._check_open()
            search = self._page_search()
            outcome = search.search(query, len(search.ranker) if since_ns is not None else limit, source=source)
            ranked, undated, dated = self._since(outcome.doc_ids, since_ns)
            rows = self._passages(search, outcome.text, ranked[:limit])
        result = extractive_answer(query, [(name, crumb, body) for name, _, crumb, body in rows], passages=passages)
        said = undated_notice(moment, undated, bool(dated)) if moment else None
        if moment and not rows and dated:
            said = f"No matching page was updated since {moment} ({dated} older ones left out)."
        if said:
            result["notices"] = [said]
        return result

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

    def sites(self) -> list[str]:
        """The hosts of the pages held (what a site filter can find), the most pages first."""
        with self._lock:
            self._check_open()
            uris = [row[0] for row in self._db.execute("SELECT uri FROM documents")]
        counts = Counter(host for host in map(_host, uris) if host)
        return sorted(counts, key=lambda host: (-counts[host], host))

    def count(self, origin: str | None = None) -> int:
        """How many documents the index holds (of one origin, when given)."""
        with self._lock:
            self._check_open()
            if origin is None:
                return self._db.execute("SELECT count(*) FROM documents").fetchone()[0]
            return self._db.execute("SELECT count(*) FROM documents WHERE origin = ?", (origin,)).fetchone()[0]

    def __len__(self) -> int:
        return self.count()

    def __enter__(self) -> LocalIndex:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<LocalIndex {self.path!r}>"


@dataclass
class SearchPage:
    """One page of a ranking (:meth:`LocalIndex.search_page`): its hits in the tool's shape, the ranking's
    ``notices``, whether more hits follow, the index ``generation`` it was ranked at, and with a date filter
    how many matching pages have no date (``undated``, all kept) and how many have one (``dated``)."""

    results: list[dict[str, str]]
    notices: list[str] = field(default_factory=list)
    more: bool = False
    generation: str = "0"
    undated: int = 0
    dated: int = 0


def _results(rows: list[tuple[str, int, str, str]]) -> list[dict[str, str]]:
    return [{"parent": name, "id": str(seq), "content": _content(crumb, body)} for name, seq, crumb, body in rows]


def _content(breadcrumb: str, body: str) -> str:
    return f"## {breadcrumb}\n\n{body}" if body else f"## {breadcrumb}\n"


def _host(uri: str) -> str:
    try:
        return (urlsplit(uri).hostname or "").lower()
    except ValueError:  # a URI urllib can't read names no site
        return ""
