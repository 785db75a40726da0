"""Two whole-page scoring models fused with the field-weighted BM25 of :mod:`.ranker` in lexical search.

Retrieval model families make different mistakes, so the lexical score is an ensemble over the same stored
term counts (no second index): BM25F as :class:`~.ranker.LexicalRanker` scores it, plus

- **query likelihood** with Dirichlet smoothing (``mu``) over the whole page (title twice, description, body),
  on the query's words and whole identifiers (no word pairs);
- **plain BM25 over words as typed**: the query's words cut as bm25s cuts them (``\\w\\w+``, lower-case, the 33
  English stopwords of Lucene's analyser, no identifier splitting, and the pasted message *not* rewritten, so a
  message's own words count), matched against the page terms bm25s would make (word characters only), with
  whole-page lengths over those terms; Lucene's BM25 (k1 1.5, b 0.75).

Each is scaled to 0..1 over the pages it matched (min-max) and added to BM25F ÷ its best with its share
(:class:`~.ranker.RankSettings` ``likelihood_weight``, ``words_weight``). The statistics are computed from the
ranker's posting arrays on the first query (tens of milliseconds on 2,500 pages) and kept with it.
"""

from __future__ import annotations

import re
from functools import cached_property
from typing import Any

import numpy as np

from .tokens import PAIR_JOINER

__all__ = ["MAX_TYPED_WORDS", "WHOLE_PAGE_FIELDS", "WholePageModels", "typed_words"]

# Lucene's English stop set (what bm25s drops with stopwords="en").
_TYPED_STOPWORDS = frozenset(
    """a an and are as at be but by for if in into is it no not of on or such that the their then there these
    they this to was will with""".split()  # noqa: SIM905  (a list literal of 33 words reads worse)
)
_TYPED_WORD = re.compile(r"(?u)\b\w\w+\b")
_K1, _B = 1.5, 0.75
#: Per field (title, path, description, headings, body), its count in the whole page: as bm25s is fed (title
#: twice, description, body).
WHOLE_PAGE_FIELDS = (2.0, 0.0, 1.0, 0.0, 1.0)


#: At most this many different words of a query count as typed (a pasted log of thousands of words would
#: otherwise cost one posting list each: 0.45 s for 20,000 words; the tuned questions have at most 40).
MAX_TYPED_WORDS = 64


def typed_words(text: str, limit: int = MAX_TYPED_WORDS) -> list[str]:
    """The words of ``text`` as bm25s cuts them: lower-case runs of two or more word characters, stopwords out;
    only the first ``limit`` different words (each as often as it occurs)."""
    kept: set[str] = set()
    words = []
    for word in _TYPED_WORD.findall((text or "").lower()):
        if word in _TYPED_STOPWORDS or (word not in kept and len(kept) >= limit):
            continue
        kept.add(word)
        words.append(word)
    return words


def _minmax(scores: np.ndarray, matched: np.ndarray) -> np.ndarray:
    """``scores`` scaled to 0..1 over the ``matched`` pages (all 1 when they score alike, e.g. one page); others 0."""
    if not matched.any():
        return np.zeros(len(scores), dtype=np.float32)
    low, high = float(scores[matched].min()), float(scores[matched].max())
    scaled = (scores - low) / (high - low) if high > low else np.ones(len(scores))
    return np.where(matched, scaled, 0.0).astype(np.float32)


def _whole_page(per_field: np.ndarray, field_weights: tuple[float, ...]) -> np.ndarray:
    """Per row, the fields summed with ``field_weights`` (:data:`WHOLE_PAGE_FIELDS`), column by column: no float
    copy of the whole array, and no BLAS threads, which cost more than this on a busy machine."""
    total = np.zeros(len(per_field), dtype=np.float32)
    for field, weight in enumerate(field_weights):
        if weight:
            total += np.float32(weight) * per_field[:, field]
    return total


class WholePageModels:
    """Query likelihood and plain BM25 over a :class:`~.ranker.LexicalRanker`'s postings, whole pages."""

    def __init__(self, ranker: Any) -> None:
        self.ranker = ranker

    @cached_property
    def _stats(self) -> dict[str, Any]:
        """Per word posting its whole-page count; per page its lengths; per word its count over all pages and
        whether bm25s would make it. Word pairs (the postings after the words') are never looked up here."""
        ranker = self.ranker
        words = len(ranker.vocabulary)
        sizes = np.diff(ranker.offsets[: words + 1])
        end = int(ranker.offsets[words]) if words else 0
        fields = WHOLE_PAGE_FIELDS
        tf = _whole_page(ranker.counts[:end], fields)
        length = np.maximum(_whole_page(ranker.lengths, fields), 1.0)
        collection = np.zeros(words, dtype=np.float64)
        nonempty = sizes > 0
        if nonempty.any():
            collection[nonempty] = np.add.reduceat(tf.astype(np.float64), ranker.offsets[:words][nonempty])
        typed = self._typed_terms()
        kept = np.repeat(typed, sizes)
        typed_length = np.maximum(
            np.bincount(ranker.postings[:end][kept], weights=tf[kept], minlength=len(ranker.doc_ids)), 1.0
        )
        return {
            "tf": tf,
            "length": length,
            "collection": collection,
            "total": max(float(length.sum()), 1.0),
            "typed": typed,
            "typed_length": typed_length,
            "typed_average": max(float(typed_length.mean()), 1.0) if len(typed_length) else 1.0,
        }

    def _typed_terms(self) -> np.ndarray:
        """Whether bm25s would make each word of the vocabulary: two or more word characters, not a stopword."""
        vocabulary = self.ranker.vocabulary
        return np.fromiter(
            (len(t) >= 2 and t.replace("_", "a").isalnum() and t not in _TYPED_STOPWORDS for t in vocabulary),
            bool,
            len(vocabulary),
        )

    def _postings(self, weights: dict[str, float]) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
        """The postings of weighted terms: (posting index, term slot, query weight) per posting, and the weights'
        sum over the terms some page holds."""
        offsets = self.ranker.offsets
        slots_found = zip(weights, self.ranker.slots(list(weights)), strict=True)
        found = [(slot, weights[term]) for term, slot in slots_found if slot is not None]
        if not found:
            return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0), 0.0
        slots = np.array([slot for slot, _ in found], dtype=np.int64)
        sizes = offsets[slots + 1] - offsets[slots]
        index = np.concatenate([np.arange(offsets[slot], offsets[slot + 1]) for slot in slots.tolist()])
        query = np.array([w for _, w in found])
        return index, np.repeat(slots, sizes), np.repeat(query, sizes), float(query.sum())

    def query_likelihood(self, weights: dict[str, float], mu: float) -> np.ndarray:
        """Each page's Dirichlet-smoothed query likelihood (word pairs left out), scaled 0..1 over matched pages."""
        stats = self._stats
        index, slots, query, total_weight = self._postings({t: w for t, w in weights.items() if PAIR_JOINER not in t})
        pages_count = len(self.ranker.doc_ids)
        tf = stats["tf"][index].astype(np.float64)
        live = tf > 0
        index, slots, query, tf = index[live], slots[live], query[live], tf[live]
        pages = self.ranker.postings[index]
        if not len(pages):  # no page holds a query word (the query is all word pairs, or unknown words)
            return np.zeros(pages_count, dtype=np.float32)
        matched = np.bincount(pages, minlength=pages_count) > 0
        chance = stats["collection"][slots] / stats["total"]
        score = np.bincount(pages, weights=query * np.log1p(tf / (mu * chance)), minlength=pages_count)
        score += total_weight * np.log(mu / (stats["length"] + mu))
        return _minmax(score, matched)

    def typed_bm25(self, words: list[str]) -> np.ndarray:
        """Each page's plain BM25 over ``words`` (:func:`typed_words`; a repeated word counts again), scaled 0..1."""
        stats = self._stats
        counted: dict[str, float] = {}
        for word in words:
            counted[word] = counted.get(word, 0.0) + 1.0
        index, slots, query, _ = self._postings(counted)
        keep = stats["typed"][slots]
        index, slots, query = index[keep], slots[keep], query[keep]
        pages_count = len(self.ranker.doc_ids)
        pages = self.ranker.postings[index]
        tf = stats["tf"][index].astype(np.float64)
        df = (self.ranker.offsets[slots + 1] - self.ranker.offsets[slots]).astype(np.float64)
        idf = np.log1p((pages_count - df + 0.5) / (df + 0.5))
        norm = tf + _K1 * (1 - _B + _B * stats["typed_length"][pages] / stats["typed_average"])
        if not len(pages):
            return np.zeros(pages_count, dtype=np.float32)
        score = np.bincount(pages, weights=query * idf * tf * (_K1 + 1) / np.maximum(norm, 1e-9), minlength=pages_count)
        return _minmax(score, score > 0)
