"""``RankerCache``: the ranker of an index's pages, kept while nothing changed, stored for the next process.

The ranker of :mod:`.ranker` is built from the stored term counts (never by re-tokenizing pages), saved
as a snapshot in the SQLite file, and wrapped with the optional page vectors in a :class:`.search.PageSearch`.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import nullcontext
from functools import partial
from typing import Any

import numpy as np

from .database import PageDatabase
from .ranker import LexicalRanker, PageTerms, RankSettings
from .search import PageSearch
from .templates import MessageTemplates, template_lines

# Pages embedded at once for the semantic ranking (bounds the embedding's memory).
EMBED_BATCH = 32


class RankerCache(PageDatabase):
    """The pages' :class:`.search.PageSearch`, rebuilt only when the pages changed (see ``meta`` 'generation')."""

    ranking: RankSettings
    semantic: bool | None
    _search: PageSearch | None = None
    _search_generation: str | None = None

    def _page_search(self) -> PageSearch:
        """The ranker for the pages as they are now: kept while nothing changed, else loaded or rebuilt."""
        generation = self._meta("generation") or "0"
        if self._search is not None and self._search_generation == generation:
            return self._search
        if self._meta("ranker_generation") == generation:
            return self._load_or_build()
        # A build reads every page's terms once (and embeds the pages): around the memory map, then the page
        # cache it filled is given back, so the peak holds the ranker's arrays and not the file's pages.
        with self._unmapped():
            search = self._load_or_build()
        self._release_memory()
        return search

    def _load_or_build(self) -> PageSearch:
        """Load the stored ranker when it is current, else build it from the stored terms (and store it)."""
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
        templates = partial(self._templates, ranker)  # read on the first message searched for, not at open
        self._search = PageSearch(ranker, uris, origins, dense=self._dense(ranker), templates=templates)
        self._search_generation = generation
        return self._search

    def _templates(self, ranker: LexicalRanker) -> MessageTemplates:
        """The message templates of the pages that hold a ``{0}``-style placeholder (only those are read)."""
        position = {int(doc_id): number for number, doc_id in enumerate(ranker.doc_ids)}
        rows = self._db.execute("SELECT id, content FROM documents WHERE content GLOB '*{[0-9]}*'")
        return MessageTemplates(
            (position[doc_id], line) for doc_id, content in rows if doc_id in position
            for line in template_lines(content)
        )

    def _stored_terms(self) -> Iterator[tuple[int, PageTerms]]:
        fields = len(self.ranking.weights)
        for doc_id, terms, counts, lengths in self._db.execute(
            "SELECT doc_id, terms, counts, lengths FROM page_terms ORDER BY doc_id"
        ):
            words = terms.split("\n") if terms else []
            if len(counts) != 2 * fields * len(words) or len(lengths) != 4 * fields:
                continue  # rows that don't match their terms (a damaged pack's): the page is left unranked
            counts_array = np.frombuffer(counts, dtype=np.uint16).reshape(-1, fields)
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
        """The embedder (with this index's token weights) and page vectors for semantic fusion, or None (no
        extra, or switched off)."""
        if self.semantic is False or not len(ranker):
            return None  # not even imported: the check for the extra costs a lexical open 20-40 ms
        from . import semantic

        if self.semantic is None and not semantic.enabled():
            return None
        model = semantic.default_embedder()
        if model is None:
            return None
        return self._page_vectors(model, ranker)

    def _page_vectors(self, model: Any, ranker: LexicalRanker) -> tuple[Any, np.ndarray]:
        """The embedder bound to the pages' token weights, and one unit vector per page in ranker order.

        Pages without a vector are embedded (in batches) and stored. The SIF weights come from token counts
        over the pages, stored in ``meta`` beside the vectors: counted over every page the first time (or
        when most pages lack a vector, e.g. an index made before the weights: all are embedded again), then
        added to as pages are embedded, so vectors made earlier keep the weights they were made with.
        A read-only index (a knowledge pack) that only holds the older mean-pooled vectors ranks with those.
        """
        from . import semantic

        doc_ids = [int(doc_id) for doc_id in ranker.doc_ids]
        stored = self._stored_vectors(model.name)
        if self.read_only and not stored:
            legacy = self._stored_vectors(semantic.LEGACY_MODEL_NAME)
            if legacy:
                return semantic.WeightedEmbedder(model, None, semantic.LEGACY_MODEL_NAME), self._arranged(
                    legacy, ranker, model.dimensions
                )
        counts = self._token_counts(model.name, len(model.table))
        missing = [doc_id for doc_id in doc_ids if doc_id not in stored]
        full = counts is None or 2 * len(missing) > len(doc_ids)
        fresh: dict[int, np.ndarray] = {}
        with self._unmapped() if (full or missing) else nullcontext():  # the pages' text read, not kept mapped
            if full:  # the weights from every page, and every page embedded with them
                counts = np.zeros(len(model.table), dtype=np.float64)
                for texts in self._page_texts(model, doc_ids):
                    counts += model.token_counts(texts)
                stored, missing = {}, doc_ids
            elif missing:
                for texts in self._page_texts(model, missing):
                    counts += model.token_counts(texts)
            weights = semantic.sif_weights(counts)
            for start in range(0, len(missing), EMBED_BATCH):  # batches keep the embedding's memory small
                part = missing[start : start + EMBED_BATCH]
                ids, texts = self._page_rows(model, part)
                fresh.update(zip(ids, model.embed(texts, weights), strict=True))
        if fresh:
            stored.update(fresh)
            self._save_vectors(model.name, fresh, counts, replace=full)
        return semantic.WeightedEmbedder(model, weights), self._arranged(stored, ranker, model.dimensions)

    def _stored_vectors(self, model_name: str) -> dict[int, np.ndarray]:
        rows = self._db.execute("SELECT doc_id, vector FROM page_vectors WHERE model = ?", (model_name,))
        return {doc_id: np.frombuffer(blob, dtype=np.float32) for doc_id, blob in rows}

    def _token_counts(self, model_name: str, vocabulary: int) -> np.ndarray | None:
        """The stored token counts of ``model_name``'s weights, or None (none yet, or not of this vocabulary)."""
        blob = self._meta(f"token_counts {model_name}")
        if not isinstance(blob, bytes) or len(blob) != vocabulary * 8:
            return None
        return np.frombuffer(blob, dtype=np.float64).copy()

    def _page_rows(self, model: Any, doc_ids: list[int]) -> tuple[list[int], list[str]]:
        marks = ",".join("?" * len(doc_ids))
        rows = self._db.execute(f"SELECT id, title, description, content FROM documents WHERE id IN ({marks})", doc_ids)
        found = [(doc_id, model.page_text(title, description, content)) for doc_id, title, description, content in rows]
        return [doc_id for doc_id, _ in found], [text for _, text in found]

    def _page_texts(self, model: Any, doc_ids: list[int]) -> Iterator[list[str]]:
        for start in range(0, len(doc_ids), EMBED_BATCH):
            yield self._page_rows(model, doc_ids[start : start + EMBED_BATCH])[1]

    @staticmethod
    def _arranged(vectors: dict[int, np.ndarray], ranker: LexicalRanker, dimensions: int) -> np.ndarray:
        """The vectors in ranker order (zeros for a page without one)."""
        out = np.zeros((len(ranker.doc_ids), dimensions), dtype=np.float32)
        for position, doc_id in enumerate(ranker.doc_ids):
            vector = vectors.get(int(doc_id))
            if vector is not None and len(vector) == dimensions:
                out[position] = vector
        return out

    def _save_vectors(
        self, model_name: str, vectors: dict[int, np.ndarray], counts: np.ndarray, *, replace: bool = False
    ) -> None:
        """Store page vectors and the token counts their weights came from (``replace``: every page was embedded
        again, so the vectors of other models or poolings go). Skipped when the file is busy or read-only."""
        db = self._db
        db.execute("PRAGMA busy_timeout = 0")
        try:
            with self._transaction():
                if replace:
                    db.execute("DELETE FROM page_vectors WHERE model != ?", (model_name,))
                db.execute(
                    "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
                    (f"token_counts {model_name}", counts.astype(np.float64).tobytes()),
                )
                db.executemany(
                    "INSERT OR REPLACE INTO page_vectors (doc_id, model, vector) SELECT ?, ?, ?"
                    " WHERE EXISTS (SELECT 1 FROM documents WHERE id = ?)",
                    [(key, model_name, vector.astype(np.float32).tobytes(), key) for key, vector in vectors.items()],
                )
        except sqlite3.OperationalError:
            pass
        finally:
            db.execute("PRAGMA busy_timeout = 30000")
