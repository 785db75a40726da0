"""How passages are ranked: BM25 column weights, pruning of very common terms, and page-level evidence.

FTS5's ``bm25()`` scores each passage on its own. Two things on top make the hit list better and
faster (measured in ``bench/bench_quality.py`` and ``bench/bench_index.py``):

- **Page evidence.** A page whose several passages match is more likely the answer than a page with
  one lucky passage, so each page is scored by its best passage plus its next best ones
  (``page_evidence`` × their scores), and pages are ranked by that. Each page first shows its best
  passage; further passages of the top pages fill the list only when fewer pages match.
- **Common-term pruning.** A term found in more than ``common_share`` of all passages (``use``, ``type``,
  ``code`` in developer docs) barely changes the order (its IDF is near zero) but makes FTS5 score half
  the index. Such terms are dropped from the query when rarer terms remain.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["Hit", "SearchWeights", "order_hits", "prune_common_terms"]

#: (passage id, page id, bm25 score: lower is better, as FTS5 gives it)
Hit = tuple[int, int, float]


@dataclass(frozen=True)
class SearchWeights:
    """Ranking settings.

    ``title``, ``headings``, ``body``: BM25 column weights (a term in the page title counts eight times
    as much as in the text, one in a heading four times). ``per_document``: at most this many passages
    of one page in the results.
    ``page_evidence`` and ``evidence_passages``: a page's score adds ``page_evidence`` × the scores of its
    next ``evidence_passages`` best passages to its best one. ``candidates``: passages read from FTS5
    before ranking pages. ``common_share``: terms in more than this share of passages are pruned.
    """

    title: float = 8.0
    headings: float = 4.0
    body: float = 1.0
    per_document: int = 3
    page_evidence: float = 0.5
    evidence_passages: int = 2
    candidates: int = 200
    common_share: float = 0.2


def prune_common_terms(
    terms: list[str], document_frequency: Callable[[str], int], total: int, share: float
) -> list[str]:
    """``terms`` without those found in more than ``share`` of ``total`` passages, unless none would be left."""
    if total <= 0 or len(terms) < 2:
        return terms
    kept = [term for term in terms if document_frequency(term) <= share * total]
    return kept or terms


def order_hits(hits: list[Hit], limit: int, weights: SearchWeights) -> list[Hit]:
    """The ``limit`` best passages of ``hits`` (sorted best first): pages ranked by page evidence, each
    page's best passage first."""
    # page id -> [score, passages seen, passages kept]; bm25 scores are negative: smaller is better.
    pages: dict[int, list] = {}
    evidence, depth, keep = weights.page_evidence, weights.evidence_passages + 1, max(1, weights.per_document)
    for hit in hits:
        page = pages.get(hit[1])
        if page is None:
            pages[hit[1]] = [hit[2], 1, [hit]]
            continue
        if page[1] < depth:
            page[0] += evidence * hit[2]
        page[1] += 1
        if len(page[2]) < keep:
            page[2].append(hit)
    ranked = sorted(pages.values(), key=lambda page: page[0])
    ordered = [page[2][0] for page in ranked[:limit]]
    if len(ordered) < limit:  # few pages match: show more passages of the best ones
        extra = [hit for page in ranked for hit in page[2][1:]]
        ordered += sorted(extra, key=lambda hit: hit[2])[: limit - len(ordered)]
    return ordered
