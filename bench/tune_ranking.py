"""Choose the ranking settings by k-fold cross-validation over the tuning pool, never by the pool's own score.

The tuning pool is the dev and test questions over ``../shared/corpus`` (``corpus-{a,b}-{dev,test}.json``,
233 questions). The first 52 (``queries.json``) and the Genkit + TensorFlow set are never read here: they,
and a fresh set kept elsewhere, measure the settings chosen.

``python -m bench.tune_ranking --index PATH`` (an index of ``../shared/corpus``, built when empty):

1. scores every setting of a small grid (:func:`grid`) on every pool question once (the ranker's arrays are
   loaded once; only the posting weights are recomputed per setting, and the dense scores are fused afterwards);
2. cuts the pool into ``--folds`` folds stratified by source and kind (:func:`folds`); for each fold, picks
   the setting that scores best on the other folds (:func:`objective`: MRR@5, recall@5 breaking near ties)
   and scores it on the held-out fold;
3. prints the mean held-out score (and its spread over folds), the held-out score per kind beside bm25s on
   the same questions, how often each setting was picked, and the setting the same rule picks on the whole
   pool (what :class:`~devknow_jupyter.local.ranker.RankSettings` should hold). The lexical settings are
   picked without the dense scores (most installs have no semantic extra), then the dense share with them.
   ``--lexical`` leaves the semantic extra out.

``--markdown`` prints the per-kind table in the form ``bench/README.md`` keeps.
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import random
import sys
from collections import Counter, defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from bench.bench_index import EXCLUDE, corpus_path
from bench.bench_quality import KINDS, K, bm25s_search, jsonl_pages, load_set

__all__ = ["POOL", "folds", "grid", "main", "objective"]

#: The sets the settings may be chosen on (never "52" or "extra").
POOL = ("dev", "test")
#: Dense shares tried when the semantic extra is installed (fused after the lexical score; 0 = lexical).
DENSE_WEIGHTS = (0.0, 0.2, 0.3, 0.4, 0.5, 0.6)


def grid() -> list[dict[str, Any]]:
    """The lexical settings tried: a few sane values per knob, every combination."""
    axes = {
        "weights": [(3.0, 3.0, 2.0, 2.0, 1.0), (2.0, 2.0, 1.0, 1.0, 1.0), (3.0, 1.0, 2.0, 2.0, 1.0)],
        "b": [(0.75,) * 5, (0.5, 0.5, 0.75, 0.75, 0.6)],
        "stem_weight": [0.0, 0.5],
        "identifier_b": [1.0, 0.0],
        "plain_weight": [0.0, 0.3, 0.5],
    }
    return [dict(zip(axes, values, strict=True)) for values in itertools.product(*axes.values())]


def objective(mrr: float, recall: float) -> float:
    """What a fold's training part maximises: MRR@5, with recall@5 deciding between near-equal settings."""
    return mrr + 0.25 * recall


def folds(questions: Sequence[dict[str, Any]], count: int, seed: int = 0) -> list[int]:
    """A fold number per question, stratified: each (source, kind) group is dealt round the folds in turn."""
    groups: dict[tuple[str, str], list[int]] = defaultdict(list)
    for position, item in enumerate(questions):
        groups[(item.get("source", ""), item["kind"])].append(position)
    assignment = [0] * len(questions)
    dealt = 0
    rng = random.Random(seed)
    for key in sorted(groups):
        members = groups[key]
        rng.shuffle(members)
        for position in members:
            assignment[position] = dealt % count
            dealt += 1
    return assignment


class Pool:
    """The pool questions, ready to score many settings: parsed queries, query vectors, relevant positions."""

    def __init__(self, index: Any, questions: list[dict[str, Any]], semantic: bool) -> None:
        from devknow_jupyter.local.query import ranking_query

        search = index._page_search()  # the ranker's arrays and page vectors, loaded once
        self.base = search.ranker
        names = dict(index._db.execute("SELECT id, name FROM documents"))
        self.names = [names[int(doc_id)] for doc_id in self.base.doc_ids]
        position = {name: i for i, name in enumerate(self.names)}
        self.questions = questions
        self.parsed = [ranking_query(item["query"]) for item in questions]
        self.relevant = [{position[name] for name in item["relevant"] if name in position} for item in questions]
        self.dense = None
        if semantic and search.dense is not None:
            model, vectors = search.dense
            queries = model.embed([parsed.text for parsed in self.parsed])
            similarity = queries @ vectors.T
            low, high = similarity.min(axis=1, keepdims=True), similarity.max(axis=1, keepdims=True)
            self.dense = (similarity - low) / np.maximum(high - low, 1e-9)

    def ranker(self, change: dict[str, Any]) -> Any:
        """The pool's ranker with other settings (same postings; posting weights recomputed)."""
        from devknow_jupyter.local.ranker import LexicalRanker, RankSettings

        base = self.base
        ranker = LexicalRanker(
            base.vocabulary, base.offsets, base.postings, base.counts, base.doc_ids, base.lengths,
            dataclasses.replace(RankSettings(), **change),
        )
        return ranker

    def lexical(self, change: dict[str, Any]) -> np.ndarray:
        """Every question's page scores under ``change``, each row scaled to 0..1, shape (questions, pages)."""
        from devknow_jupyter.local.ranker import query_weights

        ranker = self.ranker(change)
        rows = np.zeros((len(self.parsed), len(self.names)), dtype=np.float32)
        for row, parsed in enumerate(self.parsed):
            scores = ranker.scores(query_weights(parsed.tokens, ranker.settings))
            top = float(scores.max(initial=0.0))
            rows[row] = scores / top if top > 0 else scores
        return rows

    def metrics(self, scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per question: reciprocal rank of the first relevant page in the top K (0 if none), and recall@K."""
        rr = np.zeros(len(scores))
        recall = np.zeros(len(scores))
        top = np.argsort(-scores, axis=1, kind="stable")[:, :K]
        for row, relevant in enumerate(self.relevant):
            ranked = [int(p) for p in top[row] if scores[row, p] > 0]
            hits = [rank for rank, p in enumerate(ranked, 1) if p in relevant]
            rr[row] = 1.0 / hits[0] if hits else 0.0
            recall[row] = len(hits) / max(len(self.questions[row]["relevant"]), 1)
        return rr, recall

    def baseline(self, corpus: Path) -> tuple[np.ndarray, np.ndarray]:
        """bm25s (the issue's baseline) per question, same metrics."""
        search = bm25s_search(list(jsonl_pages(corpus / "corpus.jsonl")))
        rr, recall = np.zeros(len(self.questions)), np.zeros(len(self.questions))
        for row, item in enumerate(self.questions):
            top = list(dict.fromkeys(search(item["query"])))[:K]
            hits = [rank for rank, name in enumerate(top, 1) if name in set(item["relevant"])]
            rr[row] = 1.0 / hits[0] if hits else 0.0
            recall[row] = len(hits) / len(item["relevant"])
        return rr, recall


def label(change: dict[str, Any]) -> str:
    """A short name for one setting."""
    return " ".join(f"{key}={value}" for key, value in change.items())


def main(argv: list[str] | None = None) -> int:
    """Score the grid on the pool, cross-validate the choice, print the tables."""
    from devknow_jupyter.local.index import LocalIndex

    parser = argparse.ArgumentParser(description="Choose the ranking settings by cross-validation on dev + test.")
    parser.add_argument("--index", type=Path, required=True)
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--seeds", type=int, default=3, help="repeat the fold cut with this many seeds")
    parser.add_argument("--lexical", action="store_true", help="leave the semantic extra out")
    parser.add_argument("--markdown", action="store_true")
    args = parser.parse_args(argv)
    corpus = corpus_path()
    if corpus is None:
        print("tune_ranking: ../shared/corpus is not present")
        return 0
    questions = [item for name in POOL for item in load_set(name)]
    with LocalIndex(args.index, semantic=not args.lexical) as index:
        if index.count() == 0:
            index.add_folder(corpus, exclude=EXCLUDE)
        pool = Pool(index, questions, semantic=not args.lexical)
    dense_weights = DENSE_WEIGHTS if pool.dense is not None else (0.0,)
    changes = grid()
    rr_all = np.zeros((len(changes), len(dense_weights), len(questions)))
    recall_all = np.zeros_like(rr_all)
    for i, change in enumerate(changes):
        lexical = pool.lexical(change)
        for j, dense in enumerate(dense_weights):
            fused = lexical if dense == 0 else (1 - dense) * lexical + dense * pool.dense
            rr_all[i, j], recall_all[i, j] = pool.metrics(fused)
    base_rr, base_recall = pool.baseline(corpus)
    kinds = np.array([item["kind"] for item in questions])

    def pick(mask: np.ndarray) -> tuple[int, int]:
        # Lexical settings first, without the dense scores (most installs have no extra); then the dense share.
        lexical = int(np.argmax(objective(rr_all[:, 0, mask].mean(axis=1), recall_all[:, 0, mask].mean(axis=1))))
        fused = objective(rr_all[lexical, :, mask].mean(axis=0), recall_all[lexical, :, mask].mean(axis=0))
        return lexical, int(np.argmax(fused))

    def name(chosen: tuple[int, int]) -> str:
        return f"{label(changes[chosen[0]])} dense_weight={dense_weights[chosen[1]]}"

    fold_scores, picked = [], Counter()
    held_rr, held_recall = np.zeros((args.seeds, len(questions))), np.zeros((args.seeds, len(questions)))
    for seed in range(args.seeds):
        assignment = np.array(folds(questions, args.folds, seed))
        for fold in range(args.folds):
            test = assignment == fold
            chosen = pick(~test)
            picked[chosen] += 1
            held_rr[seed, test], held_recall[seed, test] = rr_all[chosen][test], recall_all[chosen][test]
            fold_scores.append(
                (rr_all[chosen][test].mean(), recall_all[chosen][test].mean(), base_rr[test].mean(),
                 base_recall[test].mean())
            )
    scores = np.array(fold_scores)
    mode = "lexical" if pool.dense is None else "lexical + semantic"
    count = len(changes) * len(dense_weights)
    print(f"{len(questions)} questions, {count} settings ({mode}), {args.folds} folds x {args.seeds} seeds")
    print(
        f"held-out MRR@5 {scores[:, 0].mean():.3f} (sd {scores[:, 0].std():.3f}) recall@5 {scores[:, 1].mean():.3f}"
        f" | bm25s {scores[:, 2].mean():.3f} / {scores[:, 3].mean():.3f}"
    )
    rows = [("all", np.ones(len(questions), bool))] + [(kind, kinds == kind) for kind in KINDS]
    if args.markdown:
        print("\n| kind | n | ours, held out | bm25s |\n|---|---:|---:|---:|")
    for kind, mask in rows:
        ours = f"{held_rr[:, mask].mean():.3f} / {held_recall[:, mask].mean():.3f}"
        base = f"{base_rr[mask].mean():.3f} / {base_recall[mask].mean():.3f}"
        plain = f"{kind:11s} {ours}  bm25s {base}"
        line = f"| {kind} | {int(mask.sum())} | {ours} | {base} |" if args.markdown else plain
        print(line)
    print("\npicked (times of", args.folds * args.seeds, "folds):")
    for chosen, times in picked.most_common(6):
        print(f"  {times:2d}x  {name(chosen)}")
    whole = pick(np.ones(len(questions), bool))
    print(f"\non the whole pool the rule picks: {name(whole)}")
    print(f"  in-sample {rr_all[whole].mean():.3f} / {recall_all[whole].mean():.3f} (optimistic)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
