"""Choose the ranking settings on the development questions only: a small grid, scored on ``dev``.

``python -m bench.tune_ranking --index PATH`` (an index of ``../shared/corpus``, built when empty) prints
MRR@5 / recall@5 on the dev set for each setting tried, one factor at a time around the defaults of
:class:`~devknow_jupyter.local.ranker.RankSettings`. It never reads the test set.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path

from bench.bench_index import EXCLUDE, corpus_path
from bench.bench_quality import K, evaluate, load_set

__all__ = ["main", "variants"]


def variants() -> list[tuple[str, dict]]:
    """Settings to try, each a change of one factor from the defaults."""
    tried: list[tuple[str, dict]] = [("defaults", {})]
    for weights in [(1, 1, 1, 1, 1), (2, 2, 1, 1, 1), (3, 3, 2, 2, 1), (4, 3, 2, 2, 1), (3, 1, 2, 2, 1),
                    (3, 3, 1, 2, 1), (5, 5, 2, 3, 1), (3, 3, 2, 1, 1)]:
        tried.append((f"weights={weights}", {"weights": tuple(float(w) for w in weights)}))
    for b in [(0.75,) * 5, (0.5, 0.5, 0.75, 0.75, 0.75), (0.5, 0.5, 0.75, 0.75, 0.9), (0.5, 0.5, 0.75, 0.75, 0.6)]:
        tried.append((f"b={b}", {"b": b}))
    for k1 in (0.9, 1.2, 1.5, 2.0):
        tried.append((f"k1={k1}", {"k1": k1}))
    for stem in (0.0, 0.3, 0.5, 0.8, 1.0):
        tried.append((f"stem_weight={stem}", {"stem_weight": stem}))
    for whole in (0.5, 1.0, 1.5, 2.0):
        tried.append((f"whole_weight={whole}", {"whole_weight": whole}))
    for dense in (0.0, 0.1, 0.2, 0.3, 0.4, 0.5):  # only matters with the semantic extra installed
        tried.append((f"dense_weight={dense}", {"dense_weight": dense}))
    for scale in (0.0, 0.3, 0.6, 1.0):
        tried.append((f"identifier_b={scale}", {"identifier_b": scale}))
    return tried


def main(argv: list[str] | None = None) -> int:
    """Score each variant on the dev set and print a table."""
    from devknow_jupyter.local.index import LocalIndex
    from devknow_jupyter.local.ranker import RankSettings

    parser = argparse.ArgumentParser(description="Tune the ranking on the dev questions.")
    parser.add_argument("--index", type=Path, required=True)
    parser.add_argument("--set", default="dev", choices=["dev"], help="only dev: settings are never chosen on test")
    args = parser.parse_args(argv)
    corpus = corpus_path()
    if corpus is None:
        print("tune_ranking: ../shared/corpus is not present")
        return 0
    with LocalIndex(args.index) as index:
        if index.count() == 0:
            index.add_folder(corpus, exclude=EXCLUDE)
    questions = load_set(args.set)
    for label, change in variants():
        settings = dataclasses.replace(RankSettings(), **change)
        with LocalIndex(args.index, ranking=settings) as index:
            scores = evaluate(lambda q, index=index: [h["parent"] for h in index.search(q, limit=K)], questions)
        kinds = " ".join(f"{kind[:5]} {s[f'mrr@{K}']:.3f}" for kind, s in scores["by_kind"].items())
        print(f"{label:45s} MRR@5 {scores[f'mrr@{K}']:.3f} recall@5 {scores[f'recall@{K}']:.3f} | {kinds}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
