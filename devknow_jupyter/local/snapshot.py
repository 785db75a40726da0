"""``RankerSnapshot``: the ranker of an index's pages, kept while nothing changed, stored for the next process.

The ranker of :mod:`.ranker` is built from the stored term counts (never by re-tokenizing pages), saved
in the file's ``ranker_snapshot`` table with the generation it was built at, and wrapped with the optional
page vectors (:mod:`.vectors`) in a :class:`~.search.PageSearch`. Any write to the pages bumps the store's
generation (:meth:`~.pages.PageStore.changed`), which is what makes a kept or stored ranker stale.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial

import numpy as np

from .pages import PageStore
from .ranker import LexicalRanker, PageTerms, RankSettings
from .search import PageSearch
from .templates import MessageTemplates, template_lines
from .vectors import PageVectors

__all__ = ["RankerSnapshot"]


class RankerSnapshot:
    """The pages' :class:`~.search.PageSearch`, rebuilt only when the pages changed (see ``meta`` 'generation').

    Args:
        store: The pages.
        ranking: Field weights and BM25 settings of the ranker.
        semantic: Fuse dense scores in (``None``: when the extra is installed and ``$DEVKNOW_SEMANTIC`` is not
            ``0``).
    """

    def __init__(self, store: PageStore, ranking: RankSettings, semantic: bool | None = None) -> None:
        self.store = store
        self.ranking = ranking
        self.semantic = semantic
        self.vectors = PageVectors(store)
        self._search: PageSearch | None = None
        #: The generation of the pages the ranker last returned by :meth:`current` was built at.
        self.generation: str | None = None

    def current(self) -> PageSearch:
        """The ranker for the pages as they are now: kept while nothing changed, else loaded or rebuilt.

        Call it holding the store's lock."""
        store = self.store
        generation = store.generation()
        if self._search is not None and self.generation == generation:
            return self._search
        if store.meta("ranker_generation") == generation:
            return self._load_or_build()
        # A build reads every page's terms once (and embeds the pages): around the memory map, then the page
        # cache it filled is given back, so the peak holds the ranker's arrays and not the file's pages.
        with store.unmapped():
            search = self._load_or_build()
        store.release_memory()
        return search

    def _load_or_build(self) -> PageSearch:
        """Load the stored ranker when it is current, else build it from the stored terms (and store it)."""
        store, db = self.store, self.store.db
        db.execute("BEGIN")  # one read snapshot: the pages, their terms and the generation agree
        try:
            generation = store.generation()
            ranker = None
            if store.meta("ranker_generation") == generation:
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
            self._save(ranker, generation)
        templates = partial(self._templates, ranker)  # read on the first message searched for, not at open
        dense = self.vectors.dense(ranker, self.semantic)
        self._search = PageSearch(ranker, uris, origins, dense=dense, templates=templates)
        self.generation = generation
        return self._search

    def _templates(self, ranker: LexicalRanker) -> MessageTemplates:
        """The message templates of the pages that hold a ``{0}``-style placeholder (only those are read)."""
        position = {int(doc_id): number for number, doc_id in enumerate(ranker.doc_ids)}
        rows = self.store.db.execute("SELECT id, content FROM documents WHERE content GLOB '*{[0-9]}*'")
        return MessageTemplates(
            (position[doc_id], line)
            for doc_id, content in rows
            if doc_id in position
            for line in template_lines(content)
        )

    def _stored_terms(self) -> Iterator[tuple[int, PageTerms]]:
        fields = len(self.ranking.weights)
        for doc_id, terms, counts, lengths in self.store.db.execute(
            "SELECT doc_id, terms, counts, lengths FROM page_terms ORDER BY doc_id"
        ):
            words = terms.split("\n") if terms else []
            if len(counts) != 2 * fields * len(words) or len(lengths) != 4 * fields:
                continue  # rows that don't match their terms (a damaged pack's): the page is left unranked
            counts_array = np.frombuffer(counts, dtype=np.uint16).reshape(-1, fields)
            yield doc_id, PageTerms(words, counts_array, np.frombuffer(lengths, np.float32))

    def _save(self, ranker: LexicalRanker, generation: str) -> None:
        """Store the built ranker for the next process to open; skipped when the file is busy or read-only."""
        if self.store.path == ":memory:":
            return
        with self.store.quick_write() as db:
            if self.store.generation() != generation:
                return  # the pages changed meanwhile: this ranker is already stale
            db.execute("DELETE FROM ranker_snapshot")
            db.executemany("INSERT INTO ranker_snapshot (part, data) VALUES (?, ?)", ranker.to_parts().items())
            self.store.put_meta("ranker_generation", generation)
