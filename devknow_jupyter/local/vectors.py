"""``PageVectors``: the pages' unit vectors for the optional semantic ranking, embedded once and stored.

Used by the ranker snapshot (:mod:`.snapshot`) when the ``semantic`` extra is installed and switched on.
Vectors live in the ``page_vectors`` table per embedding model; the SIF token weights they were made
with are counted over the pages and kept in ``meta`` beside them.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import nullcontext
from typing import Any

import numpy as np

from .pages import PageStore
from .ranker import LexicalRanker

__all__ = ["EMBED_BATCH", "PageVectors", "arranged"]

# Pages embedded at once for the semantic ranking (bounds the embedding's memory).
EMBED_BATCH = 32


class PageVectors:
    """The stored page vectors of one :class:`~.pages.PageStore`, completed as pages come and go."""

    def __init__(self, store: PageStore) -> None:
        self.store = store

    def dense(self, ranker: LexicalRanker, semantic: bool | None) -> tuple[Any, np.ndarray] | None:
        """The embedder (with this index's token weights) and page vectors for semantic fusion, or None (no
        extra, or switched off: ``semantic`` False, or None and ``$DEVKNOW_SEMANTIC`` is ``0``)."""
        if semantic is False or not len(ranker):
            return None  # not even imported: the check for the extra costs a lexical open 20-40 ms
        from . import semantic as dense

        if semantic is None and not dense.enabled():
            return None
        model = dense.default_embedder()
        if model is None:
            return None
        return self.for_ranker(model, ranker)

    def for_ranker(self, model: Any, ranker: LexicalRanker) -> tuple[Any, np.ndarray]:
        """The embedder bound to the pages' token weights, and one unit vector per page in ranker order.

        Pages without a vector are embedded (in batches) and stored. The SIF weights come from token counts
        over the pages, stored in ``meta`` beside the vectors: counted over every page the first time (or
        when most pages lack a vector, e.g. an index made before the weights: all are embedded again), then
        added to as pages are embedded, so vectors made earlier keep the weights they were made with.
        A read-only index (a knowledge pack) that only holds the older mean-pooled vectors ranks with those.
        """
        from . import semantic

        doc_ids = [int(doc_id) for doc_id in ranker.doc_ids]
        stored = self._stored(model.name)
        if self.store.read_only and not stored:
            legacy = self._stored(semantic.LEGACY_MODEL_NAME)
            if legacy:
                return semantic.WeightedEmbedder(model, None, semantic.LEGACY_MODEL_NAME), arranged(
                    legacy, ranker, model.dimensions
                )
        counts = self._token_counts(model.name, len(model.table))
        missing = [doc_id for doc_id in doc_ids if doc_id not in stored]
        full = counts is None or 2 * len(missing) > len(doc_ids)
        fresh: dict[int, np.ndarray] = {}
        with self.store.unmapped() if (full or missing) else nullcontext():  # the pages' text read, not kept mapped
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
            self._save(model.name, fresh, counts, replace=full)
        return semantic.WeightedEmbedder(model, weights), arranged(stored, ranker, model.dimensions)

    def _stored(self, model_name: str) -> dict[int, np.ndarray]:
        rows = self.store.db.execute("SELECT doc_id, vector FROM page_vectors WHERE model = ?", (model_name,))
        return {doc_id: np.frombuffer(blob, dtype=np.float32) for doc_id, blob in rows}

    def _token_counts(self, model_name: str, vocabulary: int) -> np.ndarray | None:
        """The stored token counts of ``model_name``'s weights, or None (none yet, or not of this vocabulary)."""
        blob = self.store.meta(f"token_counts {model_name}")
        if not isinstance(blob, bytes) or len(blob) != vocabulary * 8:
            return None
        return np.frombuffer(blob, dtype=np.float64).copy()

    def _page_rows(self, model: Any, doc_ids: list[int]) -> tuple[list[int], list[str]]:
        marks = ",".join("?" * len(doc_ids))
        sql = f"SELECT id, title, description, content FROM documents WHERE id IN ({marks})"
        found = [
            (doc_id, model.page_text(title, description, content))
            for doc_id, title, description, content in self.store.db.execute(sql, doc_ids)
        ]
        return [doc_id for doc_id, _ in found], [text for _, text in found]

    def _page_texts(self, model: Any, doc_ids: list[int]) -> Iterator[list[str]]:
        for start in range(0, len(doc_ids), EMBED_BATCH):
            yield self._page_rows(model, doc_ids[start : start + EMBED_BATCH])[1]

    def _save(self, model_name: str, vectors: dict[int, np.ndarray], counts: np.ndarray, *, replace: bool) -> None:
        """Store page vectors and the token counts their weights came from (``replace``: every page was embedded
        again, so the vectors of other models or poolings go). Skipped when the file is busy or read-only."""
        with self.store.quick_write() as db:
            if replace:
                db.execute("DELETE FROM page_vectors WHERE model != ?", (model_name,))
            self.store.put_meta(f"token_counts {model_name}", counts.astype(np.float64).tobytes())
            db.executemany(
                "INSERT OR REPLACE INTO page_vectors (doc_id, model, vector) SELECT ?, ?, ?"
                " WHERE EXISTS (SELECT 1 FROM documents WHERE id = ?)",
                [(key, model_name, vector.astype(np.float32).tobytes(), key) for key, vector in vectors.items()],
            )


def arranged(vectors: dict[int, np.ndarray], ranker: LexicalRanker, dimensions: int) -> np.ndarray:
    """The vectors in ranker order (zeros for a page without one)."""
    out = np.zeros((len(ranker.doc_ids), dimensions), dtype=np.float32)
    for position, doc_id in enumerate(ranker.doc_ids):
        vector = vectors.get(int(doc_id))
        if vector is not None and len(vector) == dimensions:
            out[position] = vector
    return out
