"""Semantics learned from the index's own pages, tried beside the shipped ranking, cross-validated (not shipped).

``python -m bench.tune_lsa --index PATH [--extra-index PATH] [--markdown]`` (the indexes of ``tune_ranking``, built
when empty; the lexical ranking and the semantic extra's signal are the frozen ones). Three families, each a
signal computed from the indexed pages alone, so that it would help users without the semantic extra too:

* ``lsa``: latent semantic analysis. The page × word matrix ``A`` (words held by 2 pages to half of them; each
  entry the shipped BM25F posting weight, or log tf × idf with unit page rows), its top ``k`` singular vectors
  (``A Aᵀ = U S² Uᵀ``, exact, in page space: 2,502 × 2,502). A query is folded in through the pages' scores for
  its words, ``s = A q``: ``Vᵀq = S⁻¹ Uᵀ s``, compared by cosine with the pages' ``U S`` (or ``U S²``). So no word
  vectors would need storing, only ``U`` (pages × k).
* ``ppmi``: word vectors from the pages' text: co-occurrence within 5 words (1/distance weights, stopwords left
  out, words seen 5+ times), positive PMI (context counts ^0.75), its top 128 directions. Used as SIF-weighted
  page and query vectors fused like the dense signal (``ppmi pages``), or to add each query word's 3-5 nearest
  words to the lexical query at ``beta`` × cosine (``ppmi expansion``).
* ``aligned``: the semantic extra's wordllama token vectors mixed with their corpus context (each token seen 5+
  times: ``(1 - lam)`` × its own unit vector + ``lam`` × the unit PPMI- or SIF-weighted sum of its neighbours'
  within 5 tokens), then SIF-pooled and fused as shipped (share 0.3-0.5).

Every family's grid includes "off" (share 0 / lam 0): the fold's pick may be the shipped ranking. Printed per
family: held-out MRR@5 / recall@5 beside the current ranking and bm25s (overall, per fold, per kind), the paired
difference in MRR@5 with a bootstrap 95% interval, and the picks.
"""

from __future__ import annotations

import sys
from collections import Counter
from typing import Any

import numpy as np

from bench.bench_index import corpus_path
from bench.tune_dense import DenseData, _cv, _table, _unit, setup
from bench.tune_ranking import _pools

__all__ = ["main"]

LSA_DIMENSIONS = (32, 64, 128, 256, 512)
SHARES = (0.0, 0.05, 0.1, 0.15, 0.2, 0.3, 0.4)
WINDOW = 5
MIN_COUNT = 5


def _word_postings(ranker: Any, weighting: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each word posting's page, term and value (``bm25f``: the ranker's weights; ``tfidf``: log tf × idf, rows
    of unit length)."""
    words = len(ranker.vocabulary)
    offsets = np.asarray(ranker.offsets[: words + 1])
    end = int(offsets[-1])
    pages = np.asarray(ranker.postings[:end])
    frequency = np.diff(offsets)
    terms = np.repeat(np.arange(words), frequency)
    if weighting == "bm25f":
        return pages, terms, np.asarray(ranker.impacts[:end], dtype=np.float32)
    tf = ranker.counts[:end].astype(np.float32) @ np.asarray(ranker.settings.weights, dtype=np.float32)
    idf = np.log((len(ranker) + 1) / (frequency + 0.5))
    values = np.log1p(tf) * idf[terms]
    norms = np.sqrt(np.bincount(pages, weights=values * values, minlength=len(ranker)))
    return pages, terms, (values / np.maximum(norms[pages], 1e-9)).astype(np.float32)


def _page_gram(pages: np.ndarray, terms: np.ndarray, values: np.ndarray, kept: np.ndarray, size: int) -> np.ndarray:
    """``A Aᵀ`` over the kept terms' columns, built from dense blocks of 4,096 columns."""
    gram = np.zeros((size, size), dtype=np.float32)
    columns = np.flatnonzero(kept)
    column_of = np.full(len(kept), -1)
    for start in range(0, len(columns), 4096):
        block = columns[start : start + 4096]
        column_of[block] = np.arange(len(block))
        inside = np.isin(terms, block)
        dense = np.zeros((size, len(block)), dtype=np.float32)
        dense[pages[inside], column_of[terms[inside]]] = values[inside]
        gram += dense @ dense.T
    return gram


def _query_scores(pool: Any, pages: np.ndarray, terms: np.ndarray, values: np.ndarray) -> np.ndarray:
    """``s = A q`` for every question: the pages' summed values for the query's words (shipped query weights)."""
    from devknow_jupyter.local.ranker import query_weights

    ranker = pool.base
    offsets = ranker.offsets
    out = np.zeros((len(pool.parsed), len(ranker)), dtype=np.float32)
    for row, parsed in enumerate(pool.parsed):
        for term, weight in query_weights(parsed.tokens, ranker.settings).items():
            slot = ranker.term_ids.get(term)
            if slot is not None:
                out[row, pages[offsets[slot] : offsets[slot + 1]]] += weight * values[offsets[slot] : offsets[slot + 1]]
    return out


def _minmax(similarity: np.ndarray) -> np.ndarray:
    low, high = similarity.min(axis=1, keepdims=True), similarity.max(axis=1, keepdims=True)
    return (similarity - low) / np.maximum(high - low, 1e-9)


def lsa_signals(pool: Any) -> dict[str, np.ndarray]:
    """Every LSA variant's 0..1 similarity per question and page."""
    out = {}
    size = len(pool.base)
    for weighting in ("bm25f", "tfidf"):
        pages, terms, values = _word_postings(pool.base, weighting)
        frequency = np.bincount(terms, minlength=len(pool.base.vocabulary))
        gram = _page_gram(pages, terms, values, (frequency >= 2) & (frequency <= size / 2), size)
        eigenvalues, vectors = np.linalg.eigh(gram.astype(np.float64))
        order = np.argsort(-eigenvalues)[: max(LSA_DIMENSIONS)]
        u_all, s_all = vectors[:, order].astype(np.float32), np.sqrt(np.maximum(eigenvalues[order], 1e-12))
        scores = _query_scores(pool, pages, terms, values) @ u_all
        for k in LSA_DIMENSIONS:
            u, s = u_all[:, :k], s_all[:k].astype(np.float32)
            for power in (1, 2):
                page_vectors, query_vectors = _unit(u * s**power), _unit(scores[:, :k] * s ** (power - 2))
                out[f"{weighting} k={k} US^{power}"] = _minmax(query_vectors @ page_vectors.T)
    return out


def _cooccurrence(ids: np.ndarray, page: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Symmetric co-occurrence counts (1/distance) within ``WINDOW`` of each other on the same page."""
    keys, weights = [], []
    for distance in range(1, WINDOW + 1):
        same = page[distance:] == page[:-distance]
        first, second = ids[:-distance][same], ids[distance:][same]
        keys += [first * size + second, second * size + first]
        weights.append(np.full(2 * len(first), 1.0 / distance, dtype=np.float32))
    key, weight = np.concatenate(keys), np.concatenate(weights)
    order = np.argsort(key)
    key, weight = key[order], weight[order]
    starts = np.flatnonzero(np.concatenate(([True], key[1:] != key[:-1])))
    return key[starts] // size, key[starts] % size, np.add.reduceat(weight, starts)


def _ppmi(rows: np.ndarray, cols: np.ndarray, counts: np.ndarray, size: int) -> tuple[np.ndarray, ...]:
    row_sum = np.bincount(rows, weights=counts, minlength=size)
    context = np.bincount(cols, weights=counts, minlength=size) ** 0.75
    pmi = np.log(counts * context.sum() / (row_sum[rows] * context[cols]))
    keep = pmi > 0
    return rows[keep], cols[keep], pmi[keep].astype(np.float32)


def _sparse_times(rows: np.ndarray, cols: np.ndarray, values: np.ndarray, right: np.ndarray) -> np.ndarray:
    """``M @ right`` for M given by row-sorted triples, in chunks."""
    out = np.zeros((right.shape[0], right.shape[1]), dtype=np.float32)
    for start in range(0, len(values), 400_000):
        r, c, v = rows[start : start + 400_000], cols[start : start + 400_000], values[start : start + 400_000]
        firsts = np.flatnonzero(np.concatenate(([True], r[1:] != r[:-1])))
        out[r[firsts]] += np.add.reduceat(v[:, None] * right[c], firsts, axis=0)
    return out


def _word_vectors(rows: np.ndarray, cols: np.ndarray, values: np.ndarray, size: int, k: int = 128) -> np.ndarray:
    """The top ``k`` directions of the PPMI matrix, by subspace iteration, scaled by sqrt of their values."""
    basis = np.random.default_rng(0).standard_normal((size, k + 16)).astype(np.float32)
    for _ in range(3):
        basis = np.linalg.qr(_sparse_times(rows, cols, values, basis))[0].astype(np.float32)
    small = basis.T @ _sparse_times(rows, cols, values, basis)
    eigenvalues, vectors = np.linalg.eigh(((small + small.T) / 2).astype(np.float64))
    order = np.argsort(-np.abs(eigenvalues))[:k]
    return (basis @ vectors[:, order]).astype(np.float32) * np.sqrt(np.abs(eigenvalues[order])).astype(np.float32)


def ppmi_signals(pool: Any, texts: list[str]) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """PPMI page-vector similarities (0..1) and query-expansion scores (relative to the lexical top score)."""
    from devknow_jupyter.local.tokens import STOPWORDS, word_tokens

    sequences = [[word for word in word_tokens(text) if word not in STOPWORDS] for text in texts]
    counted = Counter(word for sequence in sequences for word in sequence)
    vocabulary = [word for word, count in counted.items() if count >= MIN_COUNT]
    slot = {word: i for i, word in enumerate(vocabulary)}
    size = len(vocabulary)
    ids = np.array([slot.get(word, -1) for sequence in sequences for word in sequence], dtype=np.int64)
    page = np.repeat(np.arange(len(sequences)), [len(sequence) for sequence in sequences])
    page, ids = page[ids >= 0], ids[ids >= 0]
    vectors = _word_vectors(*_ppmi(*_cooccurrence(ids, page, size), size), size)
    unit = _unit(vectors)
    frequency = np.array([counted[word] for word in vocabulary], dtype=np.float64)
    queries = [np.array([slot[w] for w in word_tokens(p.text) if w in slot], dtype=np.int64) for p in pool.parsed]
    page_ids = np.split(ids, np.flatnonzero(np.diff(page)) + 1)  # pages without words: none of theirs
    present = np.unique(page)
    pooled = {}
    for a in (1e-4, 1e-3):
        sif = (a / (a + frequency / frequency.sum())).astype(np.float32)
        for name, table in (("raw", vectors), ("unit", unit)):
            pages = np.zeros((len(texts), table.shape[1]), dtype=np.float32)
            pages[present] = np.stack([sif[x] @ table[x] for x in page_ids])
            query = np.stack([sif[x] @ table[x] if len(x) else np.zeros(table.shape[1], np.float32) for x in queries])
            pooled[f"a={a} {name}"] = _minmax(_unit(query) @ _unit(pages).T)
    ranker = pool.base
    top = np.maximum(_word_scores(pool).max(axis=1), 1e-9)  # the lexical scale, near enough (pairs left out)
    expansion = {}
    for neighbours, floor in ((3, 0.5), (3, 0.6), (5, 0.4)):
        scores = np.zeros((len(pool.parsed), len(ranker)), dtype=np.float32)
        for row, query in enumerate(queries):
            for word in set(query.tolist()):
                similarity = unit @ unit[word]
                for other in np.argsort(-similarity)[1 : neighbours + 1]:
                    term = ranker.term_ids.get(vocabulary[other])
                    if similarity[other] >= floor and other not in query and term is not None:
                        start, end = ranker.offsets[term], ranker.offsets[term + 1]
                        scores[row, ranker.postings[start:end]] += similarity[other] * ranker.impacts[start:end]
        expansion[f"{neighbours} neighbours cos>={floor}"] = scores / top[:, None]
    return pooled, expansion


def _word_scores(pool: Any) -> np.ndarray:
    pages, terms, values = _word_postings(pool.base, "bm25f")
    return _query_scores(pool, pages, terms, values)


def aligned_signals(data: DenseData) -> dict[str, np.ndarray]:
    """wordllama token vectors mixed with their corpus context, SIF-pooled: 0..1 similarity per question and page."""
    texts = data.texts(6000)
    size = len(data.table)
    ids = np.concatenate(texts)
    page = np.repeat(np.arange(len(texts)), [len(x) for x in texts])
    counts = np.bincount(ids, minlength=size).astype(np.float64)
    sif = (1e-3 / (1e-3 + counts / counts.sum())).astype(np.float32)
    rows, cols, together = _cooccurrence(ids, page, size)
    own = _unit(data.table)
    contexts = {
        "ppmi": _unit(_sparse_times(*_ppmi(rows, cols, together, size), own)),
        "sif": _unit(_sparse_times(rows, cols, (together * sif[cols]).astype(np.float32), own)),
    }
    seen = counts >= MIN_COUNT
    lengths = np.linalg.norm(data.table, axis=1, keepdims=True)
    out = {}
    for name, context in contexts.items():
        for mix in (0.0, 0.15, 0.3, 0.5):
            table = own.copy()
            table[seen] = _unit((1 - mix) * own[seen] + mix * context[seen])
            table *= lengths  # SIF pools the raw vectors: keep each token's length
            empty = np.zeros(table.shape[1], np.float32)
            pages = _unit(np.stack([sif[x] @ table[x] if len(x) else empty for x in texts]))
            queries = _unit(np.stack([sif[x] @ table[x] if len(x) else empty for x in data.queries]))
            out[f"{name} lam={mix}"] = _minmax(queries @ pages.T)
    return out


def _interval(difference: np.ndarray, rounds: int = 2000) -> tuple[float, float]:
    """A paired bootstrap 95% interval of a mean difference."""
    draws = np.random.default_rng(0).integers(0, len(difference), (rounds, len(difference)))
    low, high = np.percentile(difference[draws].mean(axis=1), [2.5, 97.5])
    return float(low), float(high)


def main(argv: list[str] | None = None) -> int:
    """Score every family's variants on every question, cross-validate each family's choice, print the tables."""
    from devknow_jupyter.local.index import LocalIndex

    ready = setup("tune_lsa", "Corpus-learned semantics, by leave-one-set-out cross-validation.", argv)
    if ready is None:  # the lexical figures are printed beside the semantic ones: both need the extra's pools
        return 0
    args, model = ready
    args.lexical = False
    choices: dict[tuple[str, str], dict[str, list[tuple[np.ndarray, np.ndarray]]]] = {}
    bm25s, questions = [], []

    def add(family: str, mode: str, label: str, scores: np.ndarray, pool: Any) -> None:
        choices.setdefault((family, mode), {}).setdefault(label, []).append(pool.metrics(scores))

    for (pool, pages), path in zip(_pools(args, corpus_path()), (args.index, args.extra_index), strict=False):
        bm25s.append(pool.baseline(pages))
        lexical = pool.lexical({})
        shipped = 0.6 * lexical + 0.4 * pool.dense
        with LocalIndex(path, semantic=False) as index:
            data = DenseData(pool, index, model)
            texts = [f"{p['title']}\n{p['description']}\n{p['content']}" for p in index.get(pool.names)]
        pooled, expansion = ppmi_signals(pool, texts)
        for family, signals in (("lsa", lsa_signals(pool)), ("ppmi pages", pooled)):
            for label, signal in signals.items():
                for share in SHARES:
                    add(family, "lexical", f"{label} share={share}", (1 - share) * lexical + share * signal, pool)
                    add(family, "semantic", f"{label} share={share}", (1 - share) * shipped + share * signal, pool)
        for label, extra in expansion.items():
            for beta in (0.0, 0.1, 0.2, 0.3):
                add("ppmi expansion", "lexical", f"{label} beta={beta}", lexical + beta * extra, pool)
                fused = 0.6 * (lexical + beta * extra) + 0.4 * pool.dense
                add("ppmi expansion", "semantic", f"{label} beta={beta}", fused, pool)
        for label, signal in aligned_signals(data).items():
            for share in (0.3, 0.4, 0.5):
                add("aligned", "semantic", f"{label} share={share}", (1 - share) * lexical + share * signal, pool)
        questions += pool.questions
        print(f"scored the {len(pool.questions)} questions of one corpus", file=sys.stderr, flush=True)
    labels = np.array([item["group"] for item in questions])
    kinds = np.array([item["kind"] for item in questions])
    base = {"bm25s": tuple(np.concatenate([b[i] for b in bm25s]) for i in (0, 1))}
    print(f"{len(questions)} questions; held out, one set left out at a time (MRR@5 / recall@5)")
    for (family, mode), variants in choices.items():
        names = list(variants)
        rr = np.array([np.concatenate([m[0] for m in variants[n]]) for n in names])
        recall = np.array([np.concatenate([m[1] for m in variants[n]]) for n in names])
        current = next(i for i, n in enumerate(names) if n.endswith(("share=0.0", "beta=0.0", "lam=0.0 share=0.4")))
        held_rr, held_recall, picks = _cv(rr, recall, labels)
        difference = held_rr - rr[current]
        low, high = _interval(difference)
        better, worse = int((difference > 0).sum()), int((difference < 0).sum())
        print(f"\n## {family}, {mode}: {len(names)} choices; held out minus current MRR@5 {difference.mean():+.4f}"
              f" (95% {low:+.4f} to {high:+.4f}; {better} better, {worse} worse)")
        for fold, pick in picks.items():
            print(f"  {fold:8s} {names[pick]}")
        rows = {**base, f"current, {mode}": (rr[current], recall[current])}
        rows[f"{family}, held out"] = (held_rr, held_recall)
        _table(rows, labels, kinds, args.markdown)
    return 0


if __name__ == "__main__":
    sys.exit(main())
