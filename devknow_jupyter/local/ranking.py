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

#: (document name, passage number, breadcrumb, passage text, bm25 score: lower is better, as FTS5 gives it)
Hit = tuple[str, int, str, str, float]


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
    """The ``limit`` best passages: pages ranked by page evidence, each page's best passage first."""
    by_page: dict[str, list[Hit]] = {}
    for hit in sorted(hits, key=lambda hit: hit[4]):
        by_page.setdefault(hit[0], []).append(hit)

    def page_score(passages: list[Hit]) -> float:
        best, *rest = (-hit[4] for hit in passages)
        return best + weights.page_evidence * sum(rest[: weights.evidence_passages])

    pages = sorted(by_page.values(), key=page_score, reverse=True)
    ordered = [passages[0] for passages in pages[:limit]]
    if len(ordered) < limit:  # few pages match: show more passages of the best ones
        extra = [hit for passages in pages for hit in passages[1 : max(1, weights.per_document)]]
        ordered += sorted(extra, key=lambda hit: hit[4])[: limit - len(ordered)]
    return ordered
