"""Choose the semantic extra's dense signal by leave-one-set-out cross-validation, as ``tune_ranking`` does the
lexical settings.

``python -m bench.tune_dense --index PATH [--extra-index PATH] [--markdown]`` (the indexes of ``tune_ranking``,
built when empty; the lexical ranking is the frozen one). Every page is tokenized once with wordllama's
tokenizer; each variant below pools the page and query vectors its own way, is fused with the frozen lexical
scores at each dense share of :data:`SHARES`, and is scored on every question. Per family (one knob varied
around the shipped signal, :func:`families`), one set is left out at a time, the variant and share that score
best on the other sets (``tune_ranking.objective``) are scored on it; the held-out figures are printed beside
the old signal (mean vectors, share 0.3), the lexical ranking and bm25s, per fold and per kind.

Families: the pooling (mean, idf, SIF) with the query's stopword tokens kept or dropped; SIF's ``a``; the
characters of the body embedded; the vectors' common direction removed; the headings' vector (with the page's,
or its own, fused by sum or max); the dense scores' normalisation (min-max over all pages, or z-score /
min-max among the 50 best lexical pages); a separate dense share for pasted messages.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from bench.bench_index import corpus_path
from bench.bench_quality import KINDS, K
from bench.tune_ranking import _pools, objective

__all__ = ["Variant", "families", "main"]

SHARES = (0.3, 0.4, 0.5)
WHOLE = 10**9


@dataclass(frozen=True)
class Variant:
    """One way to make and fuse the dense scores (the defaults are what ships)."""

    pooling: str = "sif"  # "mean", "idf" or "sif"
    a: float = 1e-3
    drop_stopwords: bool = False
    chars: int = 6000
    common: int = 0  # directions removed (SIF's common component)
    headings: str = ""  # "", "joint" (added to the page's text), "sum" or "max" (a vector of their own)
    headings_weight: float = 0.0
    norm: str = "minmax"  # "minmax" over all pages, "z50" / "minmax50" among the 50 best lexical pages
    message_share: float | None = None  # the dense share for pasted messages (None: the same)

    def label(self) -> str:
        """The fields that differ from the shipped variant."""
        shipped = Variant()
        return " ".join(f"{k}={v}" for k, v in vars(self).items() if getattr(shipped, k) != v) or "shipped"


#: The signal before: mean vectors (fused at share 0.3).
OLD = Variant(pooling="mean")


def families() -> dict[str, list[Variant]]:
    """The variants tried, one knob at a time around the shipped one."""
    base = Variant()
    return {
        "pooling": [
            replace(base, pooling=p, drop_stopwords=d) for p in ("mean", "idf", "sif") for d in (False, True)
        ],
        "sif a": [replace(base, a=a) for a in (1e-4, 3e-4, 1e-3, 3e-3)],
        "body chars": [replace(base, chars=c) for c in (2000, 4000, 6000, 10000, WHOLE)],
        "common direction": [base, replace(base, common=1)],
        "headings": [base]
        + [replace(base, headings=h, headings_weight=w) for h in ("joint", "sum") for w in (0.3, 0.5)]
        + [replace(base, headings="max", headings_weight=1.0)],
        "normalisation": [replace(base, norm=n) for n in ("minmax", "z50", "minmax50")],
        "message share": [replace(base, message_share=s) for s in (None, 0.0, 0.2)],
    }


def _unit(x: np.ndarray) -> np.ndarray:
    return x / np.maximum(np.linalg.norm(x, axis=-1, keepdims=True), 1e-9)


class DenseData:
    """One corpus's pages and questions, tokenized once, ready to pool many ways."""

    def __init__(self, pool: Any, index: Any, model: Any) -> None:
        from devknow_jupyter.local.query import looks_like_message
        from devknow_jupyter.local.ranker import page_text_fields
        from devknow_jupyter.local.tokens import STOPWORDS

        self.pool, self.table = pool, model.table.astype(np.float32)
        self.lexical = pool.lexical({})
        pages = {page["name"]: page for page in index.get(pool.names)}
        encode = model.tokenizer.encode_batch
        heads, bodies, heading_texts = [], [], []
        for start in range(0, len(pool.names), 64):
            part = [pages[name] for name in pool.names[start : start + 64]]
            heads += encode([f"{p['title']}\n{p['description']}" for p in part], add_special_tokens=False)
            bodies += encode([p["content"] for p in part], add_special_tokens=False)
            heading_texts += [page_text_fields(p["title"], p["uri"], p["description"], p["content"])[3] for p in part]
        self.heads = [np.asarray(e.ids, dtype=np.int64) for e in heads]
        self.bodies = [(np.asarray(e.ids, dtype=np.int64), np.asarray([o[0] for o in e.offsets])) for e in bodies]
        self.headings = [np.asarray(e.ids, dtype=np.int64) for e in encode(heading_texts, add_special_tokens=False)]
        queries = encode([p.text for p in pool.parsed], add_special_tokens=False)
        self.queries = [np.asarray(e.ids, np.int64) for e in queries]
        pieces = [model.tokenizer.id_to_token(i) or "" for i in range(len(self.table))]
        self.stop = np.array([piece.lstrip("▁").lower() in STOPWORDS for piece in pieces])
        self.messages = np.array([looks_like_message(p.text) for p in pool.parsed])
        self._texts: dict[int, list[np.ndarray]] = {}

    def texts(self, chars: int) -> list[np.ndarray]:
        """Each page's embedded tokens: title, description and the first ``chars`` characters of the body."""
        if chars not in self._texts:
            pairs = zip(self.heads, self.bodies, strict=True)
            self._texts[chars] = [np.concatenate([head, ids[at < chars]]) for head, (ids, at) in pairs]
        return self._texts[chars]

    def weights(self, v: Variant) -> np.ndarray:
        """Each token's weight, from the counts over the pages' embedded text."""
        if v.pooling == "mean":
            return np.ones(len(self.table), dtype=np.float32)
        texts = self.texts(v.chars)
        if v.pooling == "idf":
            df = np.bincount(np.concatenate([np.unique(t) for t in texts]), minlength=len(self.table))
            return np.log((len(texts) + 1) / (df + 0.5)).clip(0.05).astype(np.float32)
        counts = np.bincount(np.concatenate(texts), minlength=len(self.table)).astype(np.float64)
        return (v.a / (v.a + counts / counts.sum())).astype(np.float32)

    def _pooled(self, id_lists: list[np.ndarray], weights: np.ndarray) -> np.ndarray:
        empty = np.zeros(self.table.shape[1], dtype=np.float32)
        return np.stack([weights[ids] @ self.table[ids] if len(ids) else empty for ids in id_lists])

    def similarity(self, v: Variant) -> np.ndarray:
        """cos(query, page), shape (questions, pages)."""
        weights = self.weights(v)
        queries = [q[~self.stop[q]] if v.drop_stopwords and (~self.stop[q]).any() else q for q in self.queries]
        q = _unit(self._pooled(queries, weights))
        pages = self._pooled(self.texts(v.chars), weights)
        if v.headings in ("", "joint"):
            if v.headings:
                pages = pages + v.headings_weight * self._pooled(self.headings, weights)
            pages = _unit(pages)
            if v.common:
                top = np.linalg.svd(pages, full_matrices=False)[2][: v.common]
                pages, q = _unit(pages - pages @ top.T @ top), _unit(q - q @ top.T @ top)
            return q @ pages.T
        own, whole = q @ _unit(self._pooled(self.headings, weights)).T, q @ _unit(pages).T
        if v.headings == "max":
            return np.maximum(own, whole)
        return v.headings_weight * own + (1 - v.headings_weight) * whole

    def fused(self, v: Variant, similarity: np.ndarray, share: float) -> np.ndarray:
        """The fused scores, as ``PageSearch`` makes them (with the variant's normalisation and shares)."""
        lexical = self.lexical
        if v.norm == "minmax":
            low, high = similarity.min(axis=1, keepdims=True), similarity.max(axis=1, keepdims=True)
        else:
            best = np.take_along_axis(similarity, np.argpartition(-lexical, 49, axis=1)[:, :50], axis=1)
            if v.norm == "z50":
                mean, spread = best.mean(axis=1, keepdims=True), 4 * best.std(axis=1, keepdims=True)
                low, high = mean, mean + spread
            else:
                low, high = best.min(axis=1, keepdims=True), best.max(axis=1, keepdims=True)
        dense = (similarity - low) / np.maximum(high - low, 1e-9)
        shares = np.full((len(lexical), 1), share, dtype=np.float32)
        if v.message_share is not None:
            shares[self.messages] = v.message_share
        return (1 - shares) * lexical + shares * dense


def _cv(rr: np.ndarray, recall: np.ndarray, labels: np.ndarray) -> tuple[np.ndarray, np.ndarray, dict[str, int]]:
    """Held-out rr and recall (rows: choices), and the choice each fold picked."""
    held_rr, held_recall, picks = np.zeros(rr.shape[1]), np.zeros(rr.shape[1]), {}
    for fold in sorted(set(labels)):
        test = labels == fold
        best = int(np.argmax(objective(rr[:, ~test].mean(axis=1), recall[:, ~test].mean(axis=1))))
        held_rr[test], held_recall[test], picks[fold] = rr[best, test], recall[best, test], best
    return held_rr, held_recall, picks


def setup(program: str, description: str, argv: list[str] | None) -> tuple[argparse.Namespace, Any] | None:
    """The arguments (``--index``, ``--extra-index``, ``--markdown``) and the wheel's embedder of a tuning command;
    None (after saying why) without the corpus or the semantic extra."""
    from devknow_jupyter.local.semantic import default_embedder

    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--index", type=Path, required=True, help="an index of ../shared/corpus (built when empty)")
    parser.add_argument("--extra-index", type=Path, default=None, help="an index of the Genkit + TensorFlow pages")
    parser.add_argument("--markdown", action="store_true")
    args = parser.parse_args(argv)
    model = default_embedder()
    if corpus_path() is None or model is None:
        print(f"{program}: needs ../shared/corpus and the semantic extra")
        return None
    args.extra_index = args.extra_index or args.index.with_name(args.index.stem + "-extra.sqlite3")
    return args, model


def main(argv: list[str] | None = None) -> int:
    """Score every family's variants, cross-validate each family's choice, print the tables."""
    from devknow_jupyter.local.index import LocalIndex

    ready = setup("tune_dense", "Choose the dense signal by leave-one-set-out cross-validation.", argv)
    if ready is None:
        return 0
    args, model = ready
    args.lexical = True  # the pools' own (stored) vectors are not used here
    paths = (args.index, args.extra_index)
    corpora = []
    for (pool, pages), path in zip(_pools(args, corpus_path()), paths, strict=False):
        with LocalIndex(path, semantic=False) as index:
            corpora.append((DenseData(pool, index, model), pool.baseline(pages)))
    questions = [item for data, _ in corpora for item in data.pool.questions]
    labels = np.array([item["group"] for item in questions])
    kinds = np.array([item["kind"] for item in questions])

    def scored(make: Callable[[DenseData], np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
        parts = [data.pool.metrics(make(data)) for data, _ in corpora]
        return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])

    base = {
        "bm25s": tuple(np.concatenate([b[i] for _, b in corpora]) for i in (0, 1)),
        "lexical": scored(lambda d: d.lexical),
        "old (mean, 0.3)": scored(lambda d: d.fused(OLD, d.similarity(OLD), 0.3)),
    }
    print(f"{len(questions)} questions; held out, one set left out at a time (MRR@{K} / recall@{K})")
    for family, variants in families().items():
        choices, rr, recall = [], [], []
        for variant in variants:
            similarity = [data.similarity(variant) for data, _ in corpora]
            for share in SHARES:
                pairs = zip(corpora, similarity, strict=True)
                parts = [data.pool.metrics(data.fused(variant, s, share)) for (data, _), s in pairs]
                choices.append(f"{variant.label()} share={share}")
                rr.append(np.concatenate([p[0] for p in parts]))
                recall.append(np.concatenate([p[1] for p in parts]))
        held_rr, held_recall, picks = _cv(np.array(rr), np.array(recall), labels)
        rows = {**base, f"{family}, held out": (held_rr, held_recall)}
        print(f"\n## {family}: {len(choices)} choices; folds picked:")
        for fold, pick in picks.items():
            print(f"  {fold:8s} {choices[pick]}")
        _table(rows, labels, kinds, args.markdown)
    return 0


def _table(
    rows: dict[str, tuple[np.ndarray, np.ndarray]], labels: np.ndarray, kinds: np.ndarray, markdown: bool
) -> None:
    names = list(rows)
    lines = [("all", np.ones(len(labels), bool))]
    lines += [(f"fold {fold}", labels == fold) for fold in sorted(set(labels))]
    lines += [(kind, kinds == kind) for kind in (*KINDS, "mixed") if (kinds == kind).any()]
    if markdown:
        print("| | n | " + " | ".join(names) + " |\n|---|---:|" + "---:|" * len(names))
    for name, mask in lines:
        cells = [f"{rows[n][0][mask].mean():.3f} / {rows[n][1][mask].mean():.3f}" for n in names]
        if markdown:
            print(f"| {name} | {int(mask.sum())} | " + " | ".join(cells) + " |")
        else:
            named = zip(names, cells, strict=True)
            print(f"  {name:12s} {int(mask.sum()):4d}  " + "  ".join(f"{n} {c}" for n, c in named))


if __name__ == "__main__":
    sys.exit(main())
