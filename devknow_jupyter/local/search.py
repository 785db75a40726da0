"""``PageSearch``: the best whole pages for a query, with the site and origin filters applied inside the ranking.

It joins the parts that rank: the query rewrite and tokens (:mod:`.query`), the lexical ranker
(:mod:`.ranker`) and, when the ``semantic`` extra is installed and the index holds page vectors, the
dense scores of :mod:`.semantic`, fused by weighted score fusion. A filter (a site such as ``adk.dev``,
or an origin such as ``fetched``) is a mask over pages applied before the top pages are taken, so a
filtered search returns the best pages *of that site*, not the top ten filtered afterwards.

It also says when the match is weak: when no page returned holds most of the query's content words.

This is the seam between the store and the ranking: :class:`~.index.LocalIndex` hands a ``PageSearch``
its pages' term counts (and vectors) and asks only :meth:`PageSearch.search` for document ids; it never
sees scores, tokens or numpy arrays, so another ranker can take this class's place.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..names import source_matches
from .query import looks_like_message, ranking_query
from .ranker import LexicalRanker, query_weights
from .templates import MessageTemplates
from .whole_page import WholePageModels, typed_words

__all__ = ["WEAK_MATCH", "PageSearch", "SearchOutcome"]

#: The notice of a weak match (one line; the caller may name the filter).
WEAK_MATCH = (
    "Weak match: no page here holds most of the query's words. Index your own documentation with "
    "`devknow index DIR`, or set DEVKNOW_API_KEY to search the live service."
)
NO_MATCH = (
    "No page here matches this query. Index your own documentation with `devknow index DIR`, "
    "or set DEVKNOW_API_KEY to search the live service."
)


@dataclass
class SearchOutcome:
    """The pages found (``doc_ids``, best first), the query's ranking ``text`` and any ``notices``."""

    doc_ids: list[int]
    text: str
    notices: list[str] = field(default_factory=list)


class PageSearch:
    """Ranks an index's pages. Built by :class:`~.index.LocalIndex` whenever its pages changed.

    Args:
        ranker: The lexical ranker over the pages.
        uris: Each page's URL, in the ranker's page order (for the site filter).
        origins: Each page's origin (``"file"``, ``"fetched"``, ...), same order.
        dense: Optional ``(model, vectors)``: a :class:`~.semantic.WeightedEmbedder` (``embed(texts)``, weighted
            as the page vectors are) and one unit vector per page;
            fused with the share ``ranker.settings.dense_weight``.
        templates: Reads the message templates the pages state (:mod:`.templates`), on the first query that
            looks like a message (not at open: most searches are questions); a message that matches one puts
            that page first.
    """

    def __init__(
        self,
        ranker: LexicalRanker,
        uris: list[str],
        origins: list[str],
        *,
        dense: tuple[Any, np.ndarray] | None = None,
        templates: Callable[[], MessageTemplates] | None = None,
    ) -> None:
        self.ranker = ranker
        self._read_templates = templates
        self._templates: MessageTemplates | None = None
        self.uris = uris
        self.origins = np.array(origins, dtype=object)
        self.dense = dense
        self.dense_weight = ranker.settings.dense_weight
        self.whole_page = WholePageModels(ranker)
        self._sites: dict[str, np.ndarray] = {}

    @property
    def semantic(self) -> bool:
        """Whether dense scores are fused in."""
        return self.dense is not None

    def allowed(self, source: str | None, origin: str | None) -> np.ndarray | None:
        """The mask of pages a filter keeps (``None``: all)."""
        mask = None
        if source:
            mask = self._sites.get(source)
            if mask is None:
                mask = np.array([source_matches(uri, source) for uri in self.uris], dtype=bool)
                if len(self._sites) > 64:
                    self._sites.clear()
                self._sites[source] = mask
        if origin:
            mask = (self.origins == origin) if mask is None else mask & (self.origins == origin)
        return mask

    def scores(
        self, query_text: str, tokens: tuple[str, ...], pairs: tuple[str, ...] = (), typed: str | None = None
    ) -> np.ndarray:
        """Every page's score: lexical (BM25F and the whole-page models of :mod:`.whole_page` on the query as
        ``typed``), or BM25F and dense fused (each scaled to 0..1 first)."""
        settings = self.ranker.settings
        weights = query_weights(tokens, settings, pairs)
        lexical = self.ranker.scores(weights)
        if self.dense is None:
            return self._ensemble(lexical, weights, query_text if typed is None else typed)
        model, vectors = self.dense
        # einsum, not a BLAS matrix-vector product: BLAS threads cost more than this small product on a busy machine.
        similarity = np.einsum("ij,j->i", vectors, model.embed([query_text])[0])
        top = float(lexical.max()) if len(lexical) else 0.0
        low, high = (float(similarity.min()), float(similarity.max())) if len(similarity) else (0.0, 0.0)
        dense = (similarity - low) / (high - low) if high > low else np.zeros_like(similarity)
        fused = (1.0 - self.dense_weight) * (lexical / top if top > 0 else lexical) + self.dense_weight * dense
        return fused.astype(np.float32)

    def _ensemble(self, bm25f: np.ndarray, weights: dict[str, float], typed: str) -> np.ndarray:
        """BM25F ÷ its best plus the whole-page models' shares (0..1 each), over one plus the shares."""
        settings = self.ranker.settings
        shares = settings.likelihood_weight, settings.words_weight
        if not any(shares) or not len(bm25f):
            return bm25f
        top = float(bm25f.max())
        fused = bm25f / top if top > 0 else bm25f.copy()
        if shares[0]:
            fused += shares[0] * self.whole_page.query_likelihood(weights, settings.likelihood_mu)
        if shares[1]:
            fused += shares[1] * self.whole_page.typed_bm25(typed_words(typed))
        return (fused / (1.0 + sum(shares))).astype(np.float32)

    def _templates_first(self, query: str, scores: np.ndarray) -> np.ndarray:
        """``scores`` with the pages whose message template ``query`` matches above all others (an exact match
        of the message is surer than any word score), in the order of their own scores: two diagnostics may
        share a template, and the words around the message (its code, ``ambiguous_import``) tell them apart."""
        if self._read_templates is None or not looks_like_message(query):
            return scores
        if self._templates is None:
            self._templates = self._read_templates()
        matched = self._templates.matches(query)
        if not matched:
            return scores
        top = max(float(scores.max()), 1e-6)
        for position in matched:
            scores[position] += top
        return scores

    def search(
        self, query: str, limit: int, *, source: str | None = None, origin: str | None = None, shown: int | None = None
    ) -> SearchOutcome:
        """The ``limit`` best pages for ``query`` among those the filters keep, and what to tell the user.

        ``shown``: the notices (a weak match) are those of a search of that many pages (default ``limit``), so one
        scoring gives a whole ranking for paging and the notices of the pages shown so far."""
        parsed = ranking_query(query)
        if not parsed.tokens or limit <= 0 or not len(self.ranker):
            return SearchOutcome([], parsed.text, [NO_MATCH] if parsed.tokens else [])
        scores = self._templates_first(query, self.scores(parsed.text, parsed.tokens, parsed.pairs, typed=query))
        positions = self.ranker.top(scores, limit, self.allowed(source, origin))
        doc_ids = self.ranker.doc_ids[positions].tolist()
        notices = []
        where = f" on {source}" if source else ""
        if not doc_ids:
            notices.append(NO_MATCH.replace("No page here", f"No page{where}"))
        elif parsed.words:
            covered = self.ranker.coverage(parsed.words, positions if shown is None else positions[: max(shown, 1)])
            if int(covered.max()) * 2 <= len(parsed.words):
                notices.append(WEAK_MATCH.replace("no page here", f"no page{where}" if where else "no page here"))
        return SearchOutcome(doc_ids, parsed.text, notices)
