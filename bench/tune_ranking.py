"""Choose the ranking settings by cross-validation over every question set the bench holds, never by one set's score.

All the sets have been looked at, so all are development data (the next fresh set is scored once, after the
settings are frozen: ``python -m bench.bench_quality --questions FILE``). The folds are whole sets
(:data:`GROUPS`: each writer's questions, the first 52, the Genkit + TensorFlow set over its own pages), so a
setting is always judged on questions by a writer, or over pages, it was not picked on.

``python -m bench.tune_ranking --index PATH [--extra-index PATH]`` (indexes of ``../shared/corpus`` and of the
Genkit + TensorFlow pages, built when empty):

1. scores every setting of a small grid (:func:`grid`) on every question once (the ranker's arrays are
   loaded once; only the posting weights are recomputed per setting, and the dense scores are fused afterwards);
2. leaves out one set at a time (``--folds sources``: one source of pages at a time); picks the setting that
   scores best on the other sets (:func:`objective`: MRR@5, recall@5 breaking near ties) and scores it on
   the one left out;
3. prints the held-out score per fold and overall, per kind beside bm25s on the same questions, and the setting
   the same rule picks on all the questions (what :class:`~devknow_jupyter.local.ranker.RankSettings` should
   hold). The lexical settings are picked without the dense scores (most installs have no semantic extra),
   then the dense share with them. ``--lexical`` leaves the semantic extra out.

``--markdown`` prints the per-kind table in the form ``bench/README.md`` keeps.
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

from bench.bench_index import EXCLUDE, corpus_path
from bench.bench_quality import KINDS, QUESTIONS, SETS, K, bm25s_search, extra_corpus, jsonl_pages

__all__ = ["GROUPS", "corpus_for", "grid", "index_arguments", "load_group", "main", "objective"]

#: The folds: each set of questions, its files and the pages it asks about ("main": ../shared/corpus).
GROUPS: dict[str, tuple[tuple[Path, ...], str]] = {
    "A": ((QUESTIONS / "corpus-a-dev.json", QUESTIONS / "corpus-a-test.json"), "main"),
    "B": ((QUESTIONS / "corpus-b-dev.json", QUESTIONS / "corpus-b-test.json"), "main"),
    "C": SETS["holdout"],
    # The bench's own sets, one fold each. Set E joined after it was scored once (frozen at 4eec3cd).
    **{name: SETS[name] for name in ("52", "extra", "D", "extra-d", "F", "extra-f", "E", "extra-e")},
}
#: Dense shares tried when the semantic extra is installed (fused after the lexical score; 0 = lexical).
DENSE_WEIGHTS = (0.0, 0.3, 0.4, 0.5)


def grid() -> list[dict[str, Any]]:
    """The lexical settings tried: a few sane values per knob, every combination."""
    axes = {"pair_weight": [0.0, 0.2, 0.3, 0.4, 0.5], "k1": [1.2, 1.6, 2.0, 2.5]}
    return [dict(zip(axes, values, strict=True)) for values in itertools.product(*axes.values())]


def objective(mrr: Any, recall: Any) -> Any:
    """What a fold's training part maximises: MRR@5, with recall@5 deciding between near-equal settings."""
    return mrr + 0.25 * recall


def load_group(name: str) -> list[dict[str, Any]]:
    """The questions of one fold, each marked with its ``group`` (and ``kind`` ``"mixed"`` when it has none)."""
    items = [item for path in GROUPS[name][0] for item in json.loads(path.read_text(encoding="utf-8"))]
    return [{**item, "kind": item.get("kind") or "mixed", "group": name} for item in items]


class Pool:
    """The pool questions, ready to score many settings: parsed queries, query vectors, relevant positions."""

    def __init__(self, index: Any, questions: list[dict[str, Any]], semantic: bool) -> None:
        from devknow_jupyter.local.query import ranking_query

        search = index.snapshot.current()  # the ranker's arrays and page vectors, loaded once
        self.base = search.ranker
        names = dict(index.store.db.execute("SELECT id, name FROM documents"))
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
            dataclasses.replace(RankSettings(), **change), base.pair_keys,
        )
        return ranker

    def lexical(self, change: dict[str, Any]) -> np.ndarray:
        """Every question's page scores under ``change``, each row scaled to 0..1, shape (questions, pages)."""
        from devknow_jupyter.local.ranker import query_weights

        ranker = self.ranker(change)
        rows = np.zeros((len(self.parsed), len(self.names)), dtype=np.float32)
        for row, parsed in enumerate(self.parsed):
            scores = ranker.scores(query_weights(parsed.tokens, ranker.settings, parsed.pairs))
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

    def baseline(self, pages: Path) -> tuple[np.ndarray, np.ndarray]:
        """bm25s (the issue's baseline) per question, same metrics (``pages``: the corpus as JSON Lines)."""
        search = bm25s_search(list(jsonl_pages(pages)))
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


def _pools(args: argparse.Namespace, corpus: Path) -> list[tuple[Pool, Path]]:
    """One pool per corpus (the main pages; the Genkit + TensorFlow pages when present), with its JSON Lines."""
    from devknow_jupyter.local.index import LocalIndex

    pools = []
    extra = extra_corpus()
    for where in ("main", "extra"):
        if where == "extra" and extra is None:
            continue
        questions = [item for name, (_, on) in GROUPS.items() if on == where for item in load_group(name)]
        path = args.index if where == "main" else args.extra_index
        with LocalIndex(path, semantic=not args.lexical) as index:
            if index.count() == 0:
                if where == "main":
                    index.add_folder(corpus, exclude=EXCLUDE)
                else:
                    index.add_documents(list(jsonl_pages(extra)), origin="file")
            pages = corpus / "corpus.jsonl" if where == "main" else extra
            pools.append((Pool(index, questions, semantic=not args.lexical), pages))
    return pools


def index_arguments(parser: argparse.ArgumentParser) -> None:
    """The indexes a tuning command scores on (``--index``, ``--extra-index``) and ``--lexical``."""
    parser.add_argument("--index", type=Path, required=True, help="an index of ../shared/corpus (built when empty)")
    parser.add_argument("--extra-index", type=Path, default=None, help="an index of the Genkit + TensorFlow pages")
    parser.add_argument("--lexical", action="store_true", help="leave the semantic extra out")


def corpus_for(args: argparse.Namespace, command: str) -> Path | None:
    """The corpus (None, said, when absent); ``args.extra_index`` defaults to a file beside ``args.index``."""
    corpus = corpus_path()
    if corpus is None:
        print(f"{command}: ../shared/corpus is not present")
        return None
    args.extra_index = args.extra_index or args.index.with_name(args.index.stem + "-extra.sqlite3")
    return corpus


def main(argv: list[str] | None = None) -> int:
    """Score the grid on every set, cross-validate the choice (one set left out at a time), print the tables."""
    parser = argparse.ArgumentParser(description="Choose the ranking settings by leave-one-set-out cross-validation.")
    index_arguments(parser)
    parser.add_argument("--folds", choices=("sets", "sources"), default="sets", help="leave out a set, or a source")
    parser.add_argument("--markdown", action="store_true")
    args = parser.parse_args(argv)
    corpus = corpus_for(args, "tune_ranking")
    if corpus is None:
        return 0
    pools = _pools(args, corpus)
    semantic = all(pool.dense is not None for pool, _ in pools)
    dense_weights = DENSE_WEIGHTS if semantic else (0.0,)
    changes = grid()
    questions = [item for pool, _ in pools for item in pool.questions]
    rr_all = np.zeros((len(changes), len(dense_weights), len(questions)))
    recall_all = np.zeros_like(rr_all)
    for i, change in enumerate(changes):
        start = 0
        for pool, _ in pools:
            lexical = pool.lexical(change)
            end = start + len(pool.questions)
            for j, dense in enumerate(dense_weights):
                fused = lexical if dense == 0 else (1 - dense) * lexical + dense * pool.dense
                rr_all[i, j, start:end], recall_all[i, j, start:end] = pool.metrics(fused)
            start = end
    baselines = [pool.baseline(pages) for pool, pages in pools]
    base_rr = np.concatenate([rr for rr, _ in baselines])
    base_recall = np.concatenate([recall for _, recall in baselines])
    kinds = np.array([item["kind"] for item in questions])
    if args.folds == "sets":
        labels = np.array([item["group"] for item in questions])
    else:  # the 52 have no source; the Genkit + TensorFlow pages are one fold
        labels = np.array([item["group"] if item["group"] in ("52", "extra") else item["source"] for item in questions])

    def pick(mask: np.ndarray) -> tuple[int, int]:
        # Lexical settings first, without the dense scores (most installs have no extra); then the dense share.
        lexical = int(np.argmax(objective(rr_all[:, 0, mask].mean(axis=1), recall_all[:, 0, mask].mean(axis=1))))
        fused = objective(rr_all[lexical, :, mask].mean(axis=0), recall_all[lexical, :, mask].mean(axis=0))
        return lexical, int(np.argmax(fused))

    def name(chosen: tuple[int, int]) -> str:
        return f"{label(changes[chosen[0]])} dense_weight={dense_weights[chosen[1]]}"

    picked: Counter[tuple[int, int]] = Counter()
    held = np.zeros((4, len(questions)))  # lexical rr, recall; fused rr, recall
    mode = "lexical + semantic" if semantic else "lexical"
    count = len(changes) * len(dense_weights)
    print(f"{len(questions)} questions, {count} settings ({mode}), one {args.folds[:-1]} left out at a time")
    for fold in sorted(set(labels)):
        test = labels == fold
        chosen = pick(~test)
        picked[chosen] += 1
        lexical, fused = (chosen[0], 0), chosen
        held[0, test], held[1, test] = rr_all[lexical][test], recall_all[lexical][test]
        held[2, test], held[3, test] = rr_all[fused][test], recall_all[fused][test]
        print(
            f"  {fold:12s} {int(test.sum()):3d}  lexical {held[0, test].mean():.3f}  fused {held[2, test].mean():.3f}"
            f"  bm25s {base_rr[test].mean():.3f}  <- {name(chosen)}"
        )
    header = "| kind | n | ours, lexical | ours, + semantic extra | bm25s |"
    if args.markdown:
        print(f"\n{header}\n|---|---:|---:|---:|---:|")
    rows = [("all", np.ones(len(questions), bool))] + [(kind, kinds == kind) for kind in (*KINDS, "mixed")]
    for kind, mask in rows:
        if not mask.any():
            continue
        cells = [f"{held[0, mask].mean():.3f} / {held[1, mask].mean():.3f}"]
        cells.append(f"{held[2, mask].mean():.3f} / {held[3, mask].mean():.3f}" if semantic else "-")
        cells.append(f"{base_rr[mask].mean():.3f} / {base_recall[mask].mean():.3f}")
        table_row = f"| {kind} | {int(mask.sum())} | {' | '.join(cells)} |"
        print(table_row if args.markdown else f"{kind:11s} {'  '.join(cells)}")
    print("\npicked (times of", len(set(labels)), "folds):")
    for chosen, times in picked.most_common(6):
        print(f"  {times:2d}x  {name(chosen)}")
    whole = pick(np.ones(len(questions), bool))
    print(f"\non all the questions the rule picks: {name(whole)}")
    print(f"  in-sample {rr_all[whole].mean():.3f} / {recall_all[whole].mean():.3f} (optimistic)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
