"""``LocalIndex``: Markdown pages in SQLite, ranked whole by field-weighted BM25.

A facade over parts that each do one job, composed rather than inherited:

- :class:`~.pages.PageStore` (:mod:`.pages`, layout in :mod:`.schema`): the SQLite file, its transactions,
  page writes and deletes, meta and folders;
- :class:`~.snapshot.RankerSnapshot`: the ranker built from the stored term counts, kept while nothing
  changed and stored for the next process (with the optional page vectors of :mod:`.vectors`);
- :class:`~.indexing.Indexer`: incremental, batched indexing runs over folders of Markdown and JSON Lines
  files, and documents fetched from elsewhere;
- :class:`~.eviction.RecentUse` (one origin kept within a size), :class:`~.credits.PackCredits` (the pack to
  credit for each page name) and :func:`~.pack_import.import_pack` (copying a knowledge pack in).

The facade adds the query side (``search``, ``get``, ``answer``: :mod:`.passages` picks each hit's passage)
and keeps every public method the index has had, so callers use one object. See ``docs/local-index.md``.
"""

from __future__ import annotations

import os
import time
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from .answer import extractive_answer
from .chunking import ChunkSizes
from .credits import PackCredits
from .eviction import RecentUse
from .health import store_problems, store_stats
from .indexing import BATCH_DOCUMENTS, MAX_FILE_BYTES, Indexer, ProgressHook
from .pack_import import import_pack
from .pages import PageStore
from .passages import Passage, best_passages
from .ranker import RankSettings
from .report import IndexReport
from .schema import SCHEMA_VERSION
from .search import PageSearch, SearchOutcome
from .snapshot import RankerSnapshot

__all__ = ["MAX_FILE_BYTES", "SCHEMA_VERSION", "IndexReport", "LocalIndex", "RankSettings", "SearchPage"]  # re-exported


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
        cache_mb: SQLite's page cache (64 and over also reads the file through a memory map).
        read_only: Never write the file (a knowledge pack).

    Its parts are attributes: :attr:`store`, :attr:`snapshot`, :attr:`indexer`. They share the store's one
    connection, behind one lock: every method is thread-safe.
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
        self.store = PageStore(path, cache_mb=cache_mb, read_only=read_only)
        self.snapshot = RankerSnapshot(self.store, ranking or RankSettings(), semantic)
        self.indexer = Indexer(
            self.store,
            self.snapshot,
            sizes=sizes or ChunkSizes(),
            max_file_bytes=max_file_bytes,
            batch_documents=batch_documents,
        )
        self.credits = PackCredits(self.store)
        self.recent = RecentUse(self.store)

    @property
    def path(self) -> str:
        """The SQLite file (``":memory:"`` for an index in memory)."""
        return self.store.path

    @property
    def read_only(self) -> bool:
        """Whether the file is never written (a knowledge pack)."""
        return self.store.read_only

    @property
    def has_page_dates(self) -> bool:
        """False for a read-only index made before pages had their own dates (they are dated by file)."""
        return self.store.has_page_dates

    # -- writing: the indexer, packs and eviction ----------------------------------------------

    def add_folder(
        self,
        folder: str | os.PathLike[str],
        *,
        exclude: Iterable[str] = (),
        progress: ProgressHook | None = None,
        follow_symlinks: bool | None = None,
    ) -> IndexReport:
        """Index (or reindex) a folder of Markdown and JSON Lines files, or one ``.jsonl`` file, incrementally;
        remember it for :meth:`refresh_folders` (see :meth:`.indexing.Indexer.add_folder`)."""
        return self.indexer.add_folder(folder, exclude=exclude, progress=progress, follow_symlinks=follow_symlinks)

    def refresh_folders(self, *, progress: ProgressHook | None = None) -> IndexReport:
        """Reindex every remembered folder (incrementally). A folder that is gone is reported, not emptied."""
        return self.indexer.refresh_folders(progress=progress)

    def add_documents(self, documents: Iterable[Any], origin: str = "fetched") -> IndexReport:
        """Add or update documents given as :class:`~devknow_jupyter.models.Document` or service-shaped dicts
        (see :meth:`.indexing.Indexer.add_documents`)."""
        return self.indexer.add_documents(documents, origin)

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
        with self.store.locked():
            report = import_pack(self.store, self.credits, path, origins, replacing=replacing, meta=meta)
            self.snapshot.current()
        report.seconds = time.perf_counter() - started
        return report

    def keep_recent(self, origin: str, used: Iterable[str], max_bytes: int) -> int:
        """Mark ``used`` documents of ``origin`` as used now, then remove that origin's least recently used
        ones until they take at most ``max_bytes`` (see :meth:`.eviction.RecentUse.keep_recent`)."""
        return self.recent.keep_recent(origin, used, max_bytes)

    def remove_folder(self, folder: str | os.PathLike[str]) -> int:
        """Forget a folder and remove its documents; returns how many were removed."""
        with self.store.failures(f"remove {folder} from the local index"):
            root = str(Path(folder).expanduser().resolve())
            return self.store.remove_where("root", root, forget_folder=True)

    def remove_documents(self, origin: str) -> int:
        """Remove every document of one origin (e.g. ``"fetched"``); returns how many were removed."""
        with self.store.failures("remove documents from the local index"):
            return self.store.remove_where("origin", origin)

    def set_meta(self, key: str, value: str) -> None:
        """Remember ``value`` under ``key`` in the index."""
        self.store.set_meta(key, value)

    def forget_credits(self, origins: Iterable[str]) -> None:
        """Forget the names credited to these origins (a pack's, when it is removed)."""
        self.credits.forget(origins)

    # -- reading -------------------------------------------------------------------------------

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
        with self.store.locked():
            search = self.snapshot.current()
            generation = self.snapshot.generation or "0"
            start = max(0, offset)
            # The whole ranking, for a stable order; the notices (a weak match) of the pages shown so far, as
            # for one search of that many hits.
            shown = start + limit
            outcome = search.search(query, max(len(search.ranker), 1), source=source, origin=origin, shown=shown)
            notices = outcome.notices if shown > 0 else search.search(query, 0).notices
            ranked, undated, dated = self._since(outcome.doc_ids, since_ns)
            rows = self._passages(search, outcome.text, ranked[start : start + limit]) if limit > 0 else []
        return SearchPage(_results(rows), notices, start + limit < len(ranked), generation, undated, dated)

    def _since(self, ranked: list[int], since_ns: int | None) -> tuple[list[int], int, int]:
        """The pages of ``ranked`` not known to be older than ``since_ns``, and how many matching pages have
        no date (kept) and a date."""
        if since_ns is None or not ranked:
            return ranked, 0, 0
        dates = self.store.page_dates()
        undated = sum(1 for doc_id in ranked if dates.get(doc_id) is None)
        kept = [doc_id for doc_id in ranked if dates.get(doc_id) is None or dates[doc_id] >= since_ns]
        return kept, undated, len(ranked) - undated

    def _ranked(
        self, query: str, limit: int, *, source: str | None = None, origin: str | None = None
    ) -> tuple[SearchOutcome, list[Passage]]:
        """The ranking outcome and ``(name, seq, breadcrumb, body)`` of each page's best passage, best first."""
        with self.store.locked():
            search = self.snapshot.current()
            outcome = search.search(query, limit, source=source, origin=origin)
            return outcome, self._passages(search, outcome.text, outcome.doc_ids)

    def _passages(self, search: PageSearch, text: str, doc_ids: list[int]) -> list[Passage]:
        return best_passages(self.store.db, search.ranker, text, doc_ids)

    def get(self, names: Iterable[str]) -> list[dict[str, str]]:
        """The documents with these names that exist, in request order, in the service's document shape."""
        wanted = list(names)
        return self.store.documents(wanted) if wanted else []

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
        with self.store.locked():
            search = self.snapshot.current()
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
        return self.store.names(origin)

    def sites(self) -> list[str]:
        """The hosts of the pages held (what a site filter can find), the most pages first."""
        with self.store.locked() as db:
            uris = [row[0] for row in db.execute("SELECT uri FROM documents")]
        counts = Counter(host for host in map(_host, uris) if host)
        return sorted(counts, key=lambda host: (-counts[host], host))

    def count(self, origin: str | None = None) -> int:
        """How many documents the index holds (of one origin, when given)."""
        return self.store.count(origin)

    def origins(self, names: Iterable[str]) -> dict[str, str]:
        """The origin (``"file"``, ``"fetched"``, ``"pack:NAME/SOURCE"``) of each of these documents that exists."""
        return self.store.origins(names)

    def credited_origins(self, names: Iterable[str]) -> dict[str, str]:
        """For each of these documents that exists, the origin to credit: for the user's indexed file, that of
        the pack that holds a page of that name too (when one does); else its own (a pack's, fetched)."""
        return self.credits.credited_origins(names)

    def get_meta(self, key: str) -> str | None:
        """A value the index keeps about itself (``None`` when unset)."""
        return self.store.get_meta(key)

    def folders(self) -> list[str]:
        """The folders indexed so far (absolute paths), in the order they were added."""
        with self.store.failures("read the local index"):
            return self.store.folders()

    def stats(self) -> dict[str, Any]:
        """Figures: ``documents``, ``chunks``, ``path``, ``size_bytes``, plus documents by origin and folders."""
        with self.store.failures("read the local index"):
            return store_stats(self.store)

    def verify(self) -> list[str]:
        """Check the index is consistent; returns the problems found (an empty list when all is well)."""
        return store_problems(self.store)

    def close(self) -> None:
        """Close the database. Safe to call twice."""
        self.store.close()

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
