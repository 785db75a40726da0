"""The ranker: whole pages scored by field-weighted BM25 (BM25F) over identifier-aware tokens, in numpy.

A page has five fields: its title, its URL path, its description, its headings and its body. A term's
frequency in each field is normalised by that field's length (``b``), the fields are weighted and summed,
and the sum is saturated once (``k1``), as in BM25F. Pages are ranked whole: the passages of
:mod:`.chunking` only choose the excerpt shown with a hit (ranking by best passages lost to whole pages
on questions the settings were not chosen on; see ``bench/README.md``).

SQLite FTS5's own ``bm25()`` scores one column set with one length, and scored below plain whole-page
BM25 here, so scoring lives in Python: per-term posting arrays with each posting's BM25 weight
precomputed, and a query is a few vectorised additions (well under a millisecond on 2,500 pages).

The ranker knows nothing of SQLite: :class:`~.index.LocalIndex` stores each page's term counts
(:func:`page_terms`, computed once when the page is written) and a snapshot of the built ranker
(:meth:`LexicalRanker.to_parts`), so opening an index does not re-tokenize its pages.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from types import CodeType
from typing import Any
from urllib.parse import urlsplit

import numpy as np

from .chunking import clean_heading
from .tokens import PAIR_JOINER, STEM_MARK, stem, tokens, word_pairs

__all__ = [
    "FIELDS",
    "LexicalRanker",
    "PageTerms",
    "RankSettings",
    "page_terms",
    "pair_keys",
    "query_weights",
]

#: The fields of a page, in the order of every per-field array.
FIELDS = ("title", "path", "description", "headings", "body")
#: Longer tokens (long URLs, base64) are not worth a vocabulary entry.
MAX_TOKEN_CHARS = 64
#: A word pair is ranked on only when this many pages hold it (most pairs occur once: they would triple the
#: vocabulary and the time to open an index, for a hundredth of MRR@5 on the bench's questions).
MIN_PAIR_PAGES = 2

_HEADING = re.compile(r"^ {0,3}#{1,6}[ \t]+(.+?)[ \t#]*$", re.MULTILINE)
_FENCED = re.compile(r"^ {0,3}(```|~~~).*?^ {0,3}\1", re.MULTILINE | re.DOTALL)


@dataclass(frozen=True)
class RankSettings:
    """Ranking settings, chosen by leave-one-set-out cross-validation over the bench's question sets (the method,
    the grids and the tables are in ``bench/README.md``; the tuning scripts are in the repository's history).

    ``weights`` and ``b``: per field (title, path, description, headings, body), the weight of a term
    found there and how much the field's length normalises it (whole identifiers such as
    ``auth/popup-closed-by-user`` are never length-normalised, so that one exact mention of a rare name in a long
    reference page is not normalised away). ``k1``: term-frequency saturation (2.0 since set F joined the folds
    and the vectors were SIF-weighted; 1.6 with the first word pairs, 1.2 before them).
    ``whole_weight``: query weight of a whole identifier (``prefer_const_constructors``) beside its parts.
    ``pair_weight``: query weight of each pair of neighbouring content words (``command line``, ``service
    account``), matched against the same pairs stored for every page: a light phrase/proximity bonus for
    pages that say the question's words together (+0.02 MRR@5 held out; 0.2-0.5 is a plateau).
    ``dense_weight``: with the semantic extra, the dense share of the fused score (lexical: the rest); 0.4 since
    the page and query vectors are SIF-weighted (:mod:`.semantic`; 0.3 with the plain mean before).
    ``likelihood_weight``, ``likelihood_mu`` and ``words_weight``: in lexical search (no dense scores), the shares of
    two whole-page models added to BM25F ÷ its best (:mod:`.whole_page`): Dirichlet query likelihood with
    smoothing ``mu``, and plain BM25 over the query's words as typed (bm25s's cut, message not rewritten), each
    scaled 0..1 over the pages it matched (10 of 11 folds picked mu 2000 at 0.3 with the typed words at 0.3; +0.008
    MRR@5 held out, paired bootstrap 95% interval +0.002 to +0.014). With the semantic extra they stay off: fused
    with the dense scores they gained nothing held out (+0.002, interval -0.004 to +0.007).

    Tried and left out (``bench/README.md``): stemmed forms in the query (stems are stored, for the weak-match
    check, but a stem counted a long word twice), and plain whole-page BM25 fused in beside BM25F.
    """

    weights: tuple[float, float, float, float, float] = (2.0, 2.0, 1.0, 1.0, 1.0)
    b: tuple[float, float, float, float, float] = (0.5, 0.5, 0.75, 0.75, 0.6)
    k1: float = 2.0
    whole_weight: float = 1.0
    pair_weight: float = 0.3
    dense_weight: float = 0.4
    likelihood_weight: float = 0.3
    likelihood_mu: float = 2000.0
    words_weight: float = 0.3


@dataclass
class PageTerms:
    """One page's distinct terms, their counts per field (``counts[i, f]``) and its field lengths."""

    terms: list[str]
    counts: np.ndarray  # (len(terms), len(FIELDS)) uint16
    lengths: np.ndarray  # (len(FIELDS),) float32


def page_text_fields(title: str, uri: str, description: str, content: str) -> tuple[str, str, str, str, str]:
    """The five fields' text of one page: title, URL path, description, headings, body."""
    try:
        parts = urlsplit(uri) if "://" in uri else None
        path = f"{parts.hostname or ''} {parts.path.replace('/', ' ')}" if parts else ""
    except ValueError:  # a URI urllib can't read ("http://[broken/x"): its words still count
        path = uri.replace("/", " ")
    unfenced = _FENCED.sub("", content)
    headings = " \n".join(clean_heading(match) for match in _HEADING.findall(unfenced))
    return title, path, description, headings, content


def page_terms(title: str, uri: str, description: str, content: str) -> PageTerms:
    """Count the tokens of each field of one page (and the stemmed forms of its words, and its word pairs)."""
    index: dict[str, int] = {}
    rows: list[list[int]] = []
    lengths = np.zeros(len(FIELDS), dtype=np.float32)
    fields = page_text_fields(title, uri, description, content)
    for field, text in enumerate(fields):
        found = Counter(tokens(text))
        lengths[field] = sum(found.values())
        for token, count in found.items():
            if len(token) > MAX_TOKEN_CHARS:
                continue
            stemmed = _stem(token)
            for form in (token, stemmed) if stemmed else (token,):
                slot = index.get(form)
                if slot is None:
                    slot = index[form] = len(rows)
                    rows.append([0] * len(FIELDS))
                rows[slot][field] = min(65535, rows[slot][field] + count)
    terms = list(index)
    counts = [np.array(rows, dtype=np.uint16).reshape(len(rows), len(FIELDS))]
    # Word pairs (not counted in the fields' lengths). Most are the body's alone: those go in as one block.
    body = Counter(word_pairs(fields[-1]))
    short: dict[str, list[int]] = {}
    for field, text in enumerate(fields[:-1]):
        for pair, count in Counter(word_pairs(text)).items():
            short.setdefault(pair, [0] * len(FIELDS))[field] += count
    for pair, row in short.items():
        row[-1] = body.pop(pair, 0)
    both = [pair for pair in short if len(pair) <= MAX_TOKEN_CHARS]
    alone = [pair for pair in body if len(pair) <= MAX_TOKEN_CHARS]
    block = np.zeros((len(alone), len(FIELDS)), dtype=np.int64)
    block[:, -1] = np.fromiter((body[pair] for pair in alone), np.int64, len(alone))
    rows_short = np.array([short[pair] for pair in both], dtype=np.int64).reshape(len(both), len(FIELDS))
    terms += both + alone
    counts += [np.minimum(part, 65535).astype(np.uint16) for part in (rows_short, block)]
    return PageTerms(terms, np.vstack(counts), lengths)


#: Bytes of a word pair are summed times powers of this odd number (mod 2**64): a polynomial hash, computed
#: for all of a page's pairs at once with numpy. A rare collision only merges two pairs' postings.
_PAIR_BASE = 0x100000001B3
_PAIR_POWERS = np.cumprod(np.full(4 * MAX_TOKEN_CHARS + 2, _PAIR_BASE, dtype=np.uint64), dtype=np.uint64)


def pair_keys(pairs: Sequence[str]) -> np.ndarray:
    """A 64-bit key per word pair (the same in every process: pages and queries meet on it)."""
    if not pairs:
        return np.zeros(0, dtype=np.uint64)
    data = np.frombuffer(("\n".join(pairs) + "\n").encode("utf-8"), dtype=np.uint8)
    ends = np.flatnonzero(data == 10)  # a pair never holds a newline: one per pair, its terminator
    starts = np.concatenate(([0], ends[:-1] + 1))
    offset = np.arange(len(data)) - np.repeat(starts, ends - starts + 1)
    offset = np.minimum(offset, len(_PAIR_POWERS) - 1)  # only a pair longer than MAX_TOKEN_CHARS would reach it
    return np.add.reduceat((data.astype(np.uint64) + np.uint64(1)) * _PAIR_POWERS[offset], starts)


@lru_cache(maxsize=65536)
def _stem(token: str) -> str:
    """The stemmed form of a token as stored (``STEM_MARK`` + stem), or ``""``."""
    stemmed = stem(token)
    return STEM_MARK + stemmed if stemmed else ""


def query_weights(query_tokens: Sequence[str], settings: RankSettings, pairs: Sequence[str] = ()) -> dict[str, float]:
    """Each query token (and word pair) with its weight; a repeated token counts once."""
    weights: dict[str, float] = {}
    if settings.pair_weight > 0:
        for pair in pairs:
            weights[pair] = settings.pair_weight
    for token in query_tokens:
        if len(token) > MAX_TOKEN_CHARS:
            continue
        whole = not token.isalnum()
        weights[token] = max(weights.get(token, 0.0), settings.whole_weight if whole else 1.0)
    return weights


def _fingerprint_code(fingerprint: Any, code: CodeType) -> None:
    """Feed a function's bytecode, names and constants (nested code too, without its address) to a hash."""
    fingerprint.update(code.co_code)
    fingerprint.update(repr(code.co_names).encode("utf-8"))
    for constant in code.co_consts:
        if isinstance(constant, CodeType):
            _fingerprint_code(fingerprint, constant)
        else:
            fingerprint.update(repr(constant).encode("utf-8"))


def _pair_postings(
    key_parts: list[np.ndarray], doc_parts: list[np.ndarray], count_parts: list[np.ndarray]
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The postings of the word pairs that ``MIN_PAIR_PAGES`` pages hold, grouped by key (pages in order within a
    key): the kept keys (sorted), how many postings each has, and the postings' pages and counts.

    The pages' parts are joined one list at a time and the lists emptied (this is the indexing's memory peak):
    the pages and counts of the pairs not kept are never joined whole."""
    keys = np.concatenate(key_parts)
    key_parts.clear()
    order = np.argsort(keys, kind="stable")
    keys = keys[order]
    starts = np.flatnonzero(np.concatenate(([True], keys[1:] != keys[:-1])))
    sizes = np.diff(np.append(starts, len(keys)))
    # A word pair found on one page only tells pages apart no better than its words: not kept.
    kept = sizes >= MIN_PAIR_PAGES
    order = order[np.repeat(kept, sizes)]
    keys = keys[starts[kept]]
    docs = np.concatenate(doc_parts)[order]
    doc_parts.clear()
    counts = np.concatenate(count_parts)[order]
    count_parts.clear()
    return keys, sizes[kept], docs, counts


class LexicalRanker:
    """Field-weighted BM25 over whole pages, held as per-term posting arrays.

    Built from :class:`PageTerms` (:meth:`build`) or from a stored snapshot (:meth:`from_parts`); never
    changed afterwards: the index builds a new one when its pages change.
    """

    def __init__(
        self,
        vocabulary: list[str],
        offsets: np.ndarray,
        postings: np.ndarray,
        counts: np.ndarray,
        doc_ids: np.ndarray,
        lengths: np.ndarray,
        settings: RankSettings | None = None,
        pair_keys: np.ndarray | None = None,
        impacts: np.ndarray | None = None,
    ) -> None:
        self.settings = settings or RankSettings()
        self.vocabulary = vocabulary  # the words and identifiers; word pairs are known by their keys only
        self.term_ids = {term: i for i, term in enumerate(vocabulary)}
        self.pair_keys = np.zeros(0, dtype=np.uint64) if pair_keys is None else pair_keys  # sorted; terms V.. on
        self.offsets = offsets  # (V + pairs + 1,) int64: postings of term t are offsets[t]:offsets[t + 1]
        self.postings = postings  # (P,) int32: page positions
        self.counts = counts  # (P, F) uint16
        self.doc_ids = doc_ids  # (N,) int64: position -> documents.id
        self.lengths = lengths  # (N, F) float32
        # Given by from_parts when the snapshot holds them for these settings: opening skips the computation.
        self.impacts = self._impacts() if impacts is None else impacts

    # -- building ---------------------------------------------------------------------------------

    @classmethod
    def build(cls, pages: Iterable[tuple[int, PageTerms]], settings: RankSettings | None = None) -> LexicalRanker:
        """A ranker over ``(doc_id, PageTerms)`` pairs."""
        term_ids: dict[str, int] = {}
        vocabulary: list[str] = []
        ids_parts, docs_parts, count_parts, doc_ids, lengths = [], [], [], [], []
        pair_parts, pair_docs, pair_counts = [], [], []
        for position, (doc_id, terms) in enumerate(pages):
            is_pair = np.fromiter((PAIR_JOINER in term for term in terms.terms), bool, len(terms.terms))
            words = [term for term, pair in zip(terms.terms, is_pair, strict=True) if not pair]
            ids = np.empty(len(words), dtype=np.int32)
            for i, term in enumerate(words):
                slot = term_ids.get(term)
                if slot is None:
                    slot = term_ids[term] = len(vocabulary)
                    vocabulary.append(term)
                ids[i] = slot
            ids_parts.append(ids)
            docs_parts.append(np.full(len(ids), position, dtype=np.int32))
            count_parts.append(terms.counts[~is_pair])
            if is_pair.any():  # word pairs are many and mostly unique: numbers, not strings in a dict
                pair_parts.append(pair_keys([term for term, pair in zip(terms.terms, is_pair, strict=True) if pair]))
                pair_docs.append(np.full(len(pair_parts[-1]), position, dtype=np.int32))
                pair_counts.append(terms.counts[is_pair])
            doc_ids.append(doc_id)
            lengths.append(terms.lengths)
        if not doc_ids:
            empty = {**dict.fromkeys(cls.PARTS, b""), "offsets": np.zeros(1, dtype=np.int64).tobytes()}
            return cls.from_parts(empty, settings)
        all_ids = np.concatenate(ids_parts)
        order = np.argsort(all_ids, kind="stable")
        sizes = np.bincount(all_ids, minlength=len(vocabulary))
        all_docs, all_counts = np.concatenate(docs_parts)[order], np.concatenate(count_parts)[order]
        del ids_parts, docs_parts, count_parts, all_ids, order  # memory is at its peak here: free what is done with
        keys = np.zeros(0, dtype=np.uint64)
        if pair_parts:
            keys, pair_sizes, docs, counts = _pair_postings(pair_parts, pair_docs, pair_counts)
            sizes = np.concatenate([sizes, pair_sizes])
            all_docs = np.concatenate([all_docs, docs])
            all_counts = np.concatenate([all_counts, counts])
            del docs, counts  # not held while the impacts are computed
        offsets = np.zeros(len(sizes) + 1, dtype=np.int64)
        np.cumsum(sizes, out=offsets[1:])
        return cls(
            vocabulary,
            offsets,
            all_docs,
            all_counts,
            np.array(doc_ids, dtype=np.int64),
            np.vstack(lengths).astype(np.float32),
            settings,
            keys,
        )

    #: The names of :meth:`to_parts`'s byte strings.
    PARTS = ("vocabulary", "pair_keys", "offsets", "postings", "counts", "doc_ids", "lengths")

    def to_parts(self) -> dict[str, bytes | memoryview]:
        """The ranker as named byte strings, to store (see :meth:`from_parts`): the arrays' own memory where
        they already have the stored type (no copy of the postings at the indexing's peak)."""

        def raw(array: np.ndarray, dtype: type) -> memoryview:
            flat = np.ascontiguousarray(array, dtype=dtype).reshape(-1)
            return memoryview(flat).cast("B") if flat.size else memoryview(b"")  # an empty view can't be cast

        return {
            "vocabulary": "\n".join(self.vocabulary).encode("utf-8"),
            "pair_keys": raw(self.pair_keys, np.uint64),
            "offsets": raw(self.offsets, np.int64),
            "postings": raw(self.postings, np.int32),
            "counts": raw(self.counts, np.uint16),
            "doc_ids": raw(self.doc_ids, np.int64),
            "lengths": raw(self.lengths, np.float32),
            "impacts": raw(self.impacts, np.float32),
            "impacts_of": self._impacts_key(self.settings),
        }

    @classmethod
    def _impacts_key(cls, settings: RankSettings) -> bytes:
        """What the stored impacts were computed from: the settings and the code of :meth:`_impacts` (a change
        to either, e.g. a retuned ``k1``, makes the next open compute them again rather than use stale ones)."""
        fingerprint = hashlib.sha256(repr(settings).encode("utf-8"))
        _fingerprint_code(fingerprint, cls._impacts.__code__)
        return fingerprint.hexdigest().encode("ascii")

    @classmethod
    def from_parts(cls, parts: dict[str, bytes | memoryview], settings: RankSettings | None = None) -> LexicalRanker:
        """A ranker from :meth:`to_parts`'s byte strings (raises ``KeyError``/``ValueError`` when damaged, as a
        snapshot in a pack from someone else may be: every part must be bytes and the arrays agree)."""
        fields = len(FIELDS)
        if not all(isinstance(part, (bytes, memoryview)) for part in parts.values()):
            raise ValueError("a ranker snapshot part is not bytes")
        text = bytes(parts["vocabulary"]).decode("utf-8")
        vocabulary = text.split("\n") if text else []
        keys = np.frombuffer(parts.get("pair_keys", b""), dtype=np.uint64)
        offsets = np.frombuffer(parts["offsets"], dtype=np.int64)
        postings = np.frombuffer(parts["postings"], dtype=np.int32)
        counts = np.frombuffer(parts["counts"], dtype=np.uint16).reshape(-1, fields)
        doc_ids = np.frombuffer(parts["doc_ids"], dtype=np.int64)
        lengths = np.frombuffer(parts["lengths"], dtype=np.float32).reshape(-1, fields)
        terms_count = len(vocabulary) + len(keys)
        if len(offsets) != terms_count + 1 or offsets[-1] != len(postings) or len(counts) != len(postings):
            raise ValueError("inconsistent ranker snapshot")
        if offsets[0] != 0 or (np.diff(offsets) < 0).any() or (len(postings) and postings.min() < 0):
            raise ValueError("inconsistent ranker snapshot")
        if len(lengths) != len(doc_ids) or (len(postings) and postings.max() >= len(doc_ids)):
            raise ValueError("inconsistent ranker snapshot")
        impacts = None
        if bytes(parts.get("impacts_of", b"")) == cls._impacts_key(settings or RankSettings()):
            impacts = np.frombuffer(parts["impacts"], dtype=np.float32)
            if len(impacts) != len(postings):
                raise ValueError("inconsistent ranker snapshot")
        return cls(vocabulary, offsets, postings, counts, doc_ids, lengths, settings, keys, impacts)

    def _impacts(self) -> np.ndarray:
        """Each posting's BM25F weight: idf × saturated, length-normalised, field-weighted frequency."""
        settings = self.settings
        pages = len(self.doc_ids)
        if not len(self.postings):
            return np.zeros(0, dtype=np.float32)
        average = np.maximum(self.lengths.mean(axis=0), 1.0)
        frequency = np.zeros(len(self.postings), dtype=np.float32)
        # Whole identifiers are not length-normalised (their b is 0); word pairs (after the vocabulary) are.
        compound = np.zeros(len(self.offsets) - 1, dtype=bool)
        compound[: len(self.vocabulary)] = np.fromiter(
            (not term.isalnum() for term in self.vocabulary), bool, len(self.vocabulary)
        )
        scale = np.where(np.repeat(compound, np.diff(self.offsets)), 0.0, 1.0).astype(np.float32)
        for field in range(len(FIELDS)):
            weight = settings.weights[field]
            column = self.counts[:, field]
            present = np.nonzero(column)[0]
            if not len(present) or weight == 0:
                continue
            b = settings.b[field] * scale[present]
            norm = 1.0 - b + b * self.lengths[self.postings[present], field] / average[field]
            frequency[present] += weight * column[present] / norm
        document_frequency = np.diff(self.offsets).astype(np.float32)
        idf = np.log1p((pages - document_frequency + 0.5) / (document_frequency + 0.5))
        per_posting = np.repeat(idf, np.diff(self.offsets))
        k1 = settings.k1
        return (per_posting * frequency * (k1 + 1) / (frequency + k1)).astype(np.float32)

    # -- querying ---------------------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self.doc_ids)

    def scores(self, weights: dict[str, float]) -> np.ndarray:
        """Every page's score for weighted query terms (0 for pages matching none)."""
        scores = np.zeros(len(self.doc_ids), dtype=np.float32)
        terms = list(weights)
        for term, slot in zip(terms, self.slots(terms), strict=True):
            if slot is None:
                continue
            start, end = self.offsets[slot], self.offsets[slot + 1]
            scores[self.postings[start:end]] += weights[term] * self.impacts[start:end]
        return scores

    def slots(self, terms: Sequence[str]) -> list[int | None]:
        """Each term's row in the posting arrays (``None`` when no page holds it); word pairs by their keys."""
        found: list[int | None] = [self.term_ids.get(term) for term in terms]
        pairs = [i for i, term in enumerate(terms) if PAIR_JOINER in term]
        if pairs and len(self.pair_keys):
            keys = pair_keys([terms[i] for i in pairs])
            where = np.minimum(np.searchsorted(self.pair_keys, keys), len(self.pair_keys) - 1)
            for i, at, key in zip(pairs, where.tolist(), keys, strict=True):
                found[i] = len(self.vocabulary) + at if self.pair_keys[at] == key else None
        return found

    def share(self, term: str) -> float:
        """The share of pages that contain ``term`` (0 for an unknown term)."""
        slot = self.slots([term])[0]
        if slot is None or not len(self.doc_ids):
            return 0.0
        return float(self.offsets[slot + 1] - self.offsets[slot]) / len(self.doc_ids)

    def coverage(self, words: Sequence[str], positions: np.ndarray) -> np.ndarray:
        """For each page position in ``positions``, how many of ``words`` (or their stems) it contains."""
        found = np.zeros(len(positions), dtype=np.int32)
        for word in dict.fromkeys(words):
            has = np.zeros(len(positions), dtype=bool)
            for form in (word, STEM_MARK + stem(word)) if stem(word) else (word,):
                slot = self.term_ids.get(form)
                if slot is not None:
                    has |= np.isin(positions, self.postings[self.offsets[slot] : self.offsets[slot + 1]])
            found += has
        return found

    def top(self, scores: np.ndarray, limit: int, allowed: np.ndarray | None = None) -> np.ndarray:
        """Positions of the ``limit`` best pages with a positive score, best first (ties: lower position)."""
        if allowed is not None:
            scores = np.where(allowed, scores, 0.0)
        candidates = np.nonzero(scores > 0)[0]
        if len(candidates) > limit:
            part = np.argpartition(-scores[candidates], limit - 1)[:limit]
            candidates = candidates[part]
        return candidates[np.lexsort((candidates, -scores[candidates]))]
