"""Ranking quality of the local index against plain BM25, on question sets written blind to the ranking.

Question sets (``{query, relevant, kind, source}`` items; ``relevant`` lists the pages that answer):

- **dev**: ``bench/questions/corpus-a-dev.json`` + ``corpus-b-dev.json`` (117 questions over the five
  sources of ``../shared/corpus``); **test**: ``corpus-a-test.json`` + ``corpus-b-test.json`` (116).
- **holdout**: ``corpus-c-holdout.json`` (132), written blind to the ranking, scored once after a freeze.
- **52**: ``bench/queries.json``, the project's first questions.
- **extra**: ``extra-genkit-tensorflow.json`` (66) over ``../shared/corpus-extra/genkit-tensorflow.jsonl``
  (373 pages).
- **D**, **F** (151 and 200 over the corpus) and **extra-d**, **extra-f** (54 and 60 over the Genkit +
  TensorFlow pages): later blind sets, each scored once and then tuned on like the others.
- **E** (200) and **extra-e** (60): blind sets (random pages), scored once with the settings frozen at commit
  4eec3cd, then tuned on like the others.
- **G** (200) and **extra-g** (60): blind sets (random pages, seeds 20261221–24), scored once with the settings
  frozen at commit 3a3eb7b.
- **H** (120): blind, on a seeded random sample of pages in proportion to each source (mostly how-to and pasted
  errors), scored once; since then a development set like the others.

All of them have been looked at and chosen on (:data:`DEVELOPMENT`; the method and tables are in
``bench/README.md``). A fresh set goes in with ``--questions FILE`` (below), or ``--set NAME`` once registered.

Searches compared, both returning whole pages:

- **ours**: ``LocalIndex.search`` (field-weighted BM25 over identifier-aware tokens, message rewrite;
  with the semantic extra installed, dense scores fused in; the row says which);
- **bm25s**: whole-page BM25 (``bm25s``, Lucene variant, k1=1.5, b=0.75) over title twice + description
  + body, English stopwords, no stemming: the issue's baseline.

MRR@5 is the mean of 1/rank of the first relevant page (0 when none is in the top 5); recall@5 the mean
share of a question's relevant pages in the top 5; hit@5 the share of questions with at least one.

Per set and per kind, the two are compared question by question: MRR@5 and recall@5 of each and the paired
bootstrap 95% interval of the difference (:func:`versus`, :func:`bench.stats.paired_bootstrap`, seeded).

``python -m bench.bench_quality [--sets dev,52 | --set H]`` writes ``bench/results/quality.json`` and ``quality.md``.
``--questions FILE`` scores a question file of the same form instead (a fresh set, scored once after the
settings are frozen; over ``../shared/corpus``, or ``--pages extra`` / ``--pages FILE.jsonl``), with the
goals checked on it: MRR@5 ≥ bm25s + 0.04 and recall@5 ≥ bm25s − 0.02 overall (issue 10), and MRR@5 ≥ bm25s on
every kind of question (issue 27). ``DEVKNOW_SEMANTIC=0`` scores
the lexical ranking while the semantic extra is installed.
Without the corpus it says so and writes nothing. Importing this module does nothing.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from bench.bench_index import EXCLUDE, QUERIES, RESULTS, ROOT, corpus_path
from bench.report import goals_and_notes
from bench.stats import BOOTSTRAP_ROUNDS, BOOTSTRAP_SEED, paired_bootstrap

TITLE = "Local index: ranking quality, ours vs plain BM25 (bench_quality)"
K = 5
QUESTIONS = ROOT / "bench" / "questions"
#: Question set -> (files, corpus); "main" is ../shared/corpus, "extra" the Genkit + TensorFlow pages.
SETS: dict[str, tuple[tuple[Path, ...], str]] = {
    "dev": ((QUESTIONS / "corpus-a-dev.json", QUESTIONS / "corpus-b-dev.json"), "main"),
    "test": ((QUESTIONS / "corpus-a-test.json", QUESTIONS / "corpus-b-test.json"), "main"),
    # Written blind to the ranking and first scored once, after a freeze; since tuned on like the others.
    "holdout": ((QUESTIONS / "corpus-c-holdout.json",), "main"),
    "52": ((QUERIES,), "main"),
    "extra": ((QUESTIONS / "extra-genkit-tensorflow.json",), "extra"),
    "D": ((QUESTIONS / "corpus-d.json",), "main"),
    "extra-d": ((QUESTIONS / "extra-d.json",), "extra"),
    "F": (tuple(QUESTIONS / f"corpus-f{part}.json" for part in (1, 2, 3)), "main"),
    "extra-f": ((QUESTIONS / "extra-f.json",), "extra"),
    "E": (tuple(QUESTIONS / f"corpus-e{part}.json" for part in (1, 2, 3)), "main"),
    "extra-e": ((QUESTIONS / "extra-e.json",), "extra"),
    # Set G: written blind (random pages), scored once with the settings frozen at commit 3a3eb7b.
    "G": (tuple(QUESTIONS / f"corpus-g{part}.json" for part in (1, 2, 3)), "main"),
    "extra-g": ((QUESTIONS / "extra-g.json",), "extra"),
    # Set H: written blind on a seeded random sample of pages in proportion to each source (mostly how-to and
    # pasted errors: issue 27); scored once (commit dbf069d), since then development data.
    "H": ((QUESTIONS / "corpus-h.json",), "main"),
    # Set I: written blind the same way (seed 20261203) while the ranking was frozen at f43cfef; scored once at
    # 41433c4 (docs/ranking.md has that run's figures), since then development data.
    "I": ((QUESTIONS / "corpus-i.json",), "main"),
}
KINDS = ("keyword", "howto", "paraphrase", "error", "identifier")
#: The sets settings are chosen on (every set above: each has been scored and looked at). The goals are checked
#: only on a set not named here: one given with ``--questions``, or registered after the settings froze.
DEVELOPMENT = frozenset(
    {"dev", "test", "holdout", "52", "extra", "D", "extra-d", "F", "extra-f", "E", "extra-e", "G", "extra-g", "H", "I"}
)
MARGIN_MRR, MARGIN_RECALL = 0.04, -0.02

__all__ = [
    "SETS",
    "TITLE",
    "add_question_file",
    "bm25s_search",
    "evaluate",
    "extra_corpus",
    "jsonl_pages",
    "load_set",
    "main",
    "run",
    "to_markdown",
    "versus",
]


def add_question_file(path: Path, pages: str = "main") -> str:
    """Make a question file a set of its own (named after the file); ``pages``: ``main``, ``extra`` or a
    JSON Lines file of the pages it asks about. Returns the set's name."""
    name = path.stem
    SETS[name] = ((path,), pages)
    return name


def load_set(name: str) -> list[dict[str, Any]]:
    """The questions of one set (items without a ``kind`` get ``"mixed"``)."""
    items: list[dict[str, Any]] = []
    for path in SETS[name][0]:
        items += json.loads(path.read_text(encoding="utf-8"))
    return [{**item, "kind": item.get("kind") or "mixed"} for item in items]


def extra_corpus() -> Path | None:
    """The Genkit + TensorFlow pages (JSON Lines), or None when not on this machine."""
    main = corpus_path()
    path = (main.parent if main else ROOT.parent / "shared") / "corpus-extra" / "genkit-tensorflow.jsonl"
    return path if path.is_file() else None


def jsonl_pages(path: Path) -> Iterator[dict[str, Any]]:
    """The pages of a JSON Lines file (``{name, uri, title, description, content}`` per line)."""
    with path.open(encoding="utf-8") as lines:
        for line in lines:
            if line.strip():
                yield json.loads(line)


def evaluate(ranked: Callable[[str], Sequence[str]], queries: list[dict[str, Any]], k: int = K) -> dict[str, Any]:
    """MRR@k, recall@k and hit@k (overall and per kind) of a search returning page names in rank order."""
    per_query = []
    for item in queries:
        relevant = set(item["relevant"])
        top = list(dict.fromkeys(ranked(item["query"])))[:k]
        rank = next((i for i, name in enumerate(top, 1) if name in relevant), None)
        per_query.append(
            {
                "query": item["query"],
                "kind": item["kind"],
                "rank": rank,
                "rr": 1.0 / rank if rank else 0.0,
                "recall": len(relevant & set(top)) / len(relevant),
                "top": top,
            }
        )
    by_kind = {kind: _scores([q for q in per_query if q["kind"] == kind], k) for kind in KINDS}
    return {
        **_scores(per_query, k),
        "by_kind": {kind: scores for kind, scores in by_kind.items() if scores["n"]},
        "queries": per_query,
    }


def _scores(rows: list[dict[str, Any]], k: int) -> dict[str, Any]:
    count = len(rows) or 1
    return {
        "n": len(rows),
        f"mrr@{k}": sum(q["rr"] for q in rows) / count,
        f"recall@{k}": sum(q["recall"] for q in rows) / count,
        f"hit@{k}": sum(1 for q in rows if q["rank"]) / count,
    }


def versus(ours: dict[str, Any], base: dict[str, Any], kind: str | None = None) -> dict[str, Any]:
    """Two :func:`evaluate` results on the same questions side by side (all of them, or one ``kind``): each one's
    MRR@5 and recall@5, and the paired bootstrap 95% interval (:func:`bench.stats.paired_bootstrap`, seeded) of
    the difference ``ours - base`` in each."""
    pairs = [
        (mine, theirs)
        for mine, theirs in zip(ours["queries"], base["queries"], strict=True)
        if kind is None or mine["kind"] == kind
    ]
    row: dict[str, Any] = {"n": len(pairs)}
    for key, measure in (("rr", f"mrr@{K}"), ("recall", f"recall@{K}")):
        mine, theirs = [a[key] for a, _ in pairs], [b[key] for _, b in pairs]
        count = len(pairs) or 1
        row[measure] = {"ours": sum(mine) / count, "bm25s": sum(theirs) / count, **paired_bootstrap(mine, theirs)}
    return row


def bm25s_search(pages: Sequence[dict[str, Any]]) -> Callable[[str], list[str]]:
    """The baseline over whole pages: title twice, description, body; English stopwords, no stemming."""
    import bm25s

    names = [page["name"] for page in pages]
    texts = [f"{p['title']}\n{p['title']}\n{p.get('description') or ''}\n{p['content']}" for p in pages]
    retriever = bm25s.BM25()
    retriever.index(bm25s.tokenize(texts, stopwords="en", show_progress=False), show_progress=False)

    def search(query: str) -> list[str]:
        tokens = bm25s.tokenize([query], stopwords="en", show_progress=False)
        if not tokens.vocab:
            return []
        results, _ = retriever.retrieve(tokens, k=min(K * 2, len(names)), show_progress=False)
        return [names[int(i)] for i in results[0]]

    return search


def run(
    *,
    quick: bool = False,
    corpus: Path | None = None,
    tmp: Path | None = None,
    index_path: Path | None = None,
    sets: Sequence[str] | None = None,
) -> dict[str, Any]:
    """Score ours and the baseline on ``sets`` (default: all; with ``quick``, only dev and the 52). Returns
    ``{"title", "rows", "goals", "notes", "data"}``, or ``{"status": "skipped", "reason"}`` without a corpus.
    ``index_path`` reuses an index of the main corpus."""
    from devknow_jupyter.local.index import LocalIndex
    from devknow_jupyter.local.semantic import enabled as semantic_enabled

    corpus = corpus or corpus_path()
    if corpus is None:
        return {"title": TITLE, "status": "skipped", "reason": "../shared/corpus is not present"}
    extra = extra_corpus()
    sets = sets or (("dev", "52") if quick else tuple(SETS))
    wanted = [name for name in sets if SETS[name][1] != "extra" or extra is not None]
    own_pages = sorted({SETS[name][1] for name in wanted} - {"main", "extra"})  # --pages FILE.jsonl
    owned = tempfile.TemporaryDirectory(prefix="devknow-bench-quality-")
    folder = Path(tmp or owned.name)
    results: dict[str, dict[str, Any]] = {}
    timings: dict[str, float] = {}
    try:
        for number, corpus_name in enumerate(("main", "extra", *own_pages)):
            names = [name for name in wanted if SETS[name][1] == corpus_name]
            if not names:
                continue
            if corpus_name == "main":
                pages = list(jsonl_pages(corpus / "corpus.jsonl"))
                path = index_path or folder / "quality.sqlite3"
            else:
                pages = list(jsonl_pages(extra if corpus_name == "extra" else Path(corpus_name)))
                path = folder / f"quality-{number}.sqlite3"
            started = time.perf_counter()
            index = LocalIndex(path)
            if index.count() == 0:
                if corpus_name == "main":
                    index.add_folder(corpus, exclude=EXCLUDE)
                else:
                    index.add_documents(pages, origin="file")
            index.search("warm up")  # builds or loads the ranker (and page vectors) outside the timings
            timings[f"index {corpus_name}"] = time.perf_counter() - started
            started = time.perf_counter()
            baseline = bm25s_search(pages)
            timings[f"bm25s {corpus_name}"] = time.perf_counter() - started
            for name in names:
                questions = load_set(name)
                ours = evaluate(lambda q, index=index: [hit["parent"] for hit in index.search(q, limit=K)], questions)
                results[name] = {"ours": ours, "bm25s": evaluate(baseline, questions), "questions": len(questions)}
            index.close()
    finally:
        owned.cleanup()
    return _report(results, timings, semantic_enabled())


def _report(results: dict[str, dict[str, Any]], timings: dict[str, float], semantic: bool) -> dict[str, Any]:
    ours_label = "ours (lexical + semantic)" if semantic else "ours (lexical)"
    rows, goals = [], []
    for name, result in results.items():
        for who in ("ours", "bm25s"):
            label = f"{name} ({result['questions']}): {ours_label if who == 'ours' else 'bm25s'}"
            rows.append(_score_row(label, result[who]))
        ours, base = result["ours"], result["bm25s"]
        result["versus"] = {"all": versus(ours, base), **{kind: versus(ours, base, kind) for kind in ours["by_kind"]}}
        if name not in DEVELOPMENT:  # a set nobody tuned on or looked at before the settings were frozen
            goals += _goals(name, result["versus"])
    notes = [
        "dev + test = bench/questions/corpus-{a,b}-{dev,test}.json; holdout = corpus-c-holdout.json; 52 = "
        "bench/queries.json; extra = extra-genkit-tensorflow.json over the 373 Genkit + TensorFlow pages; D, F, E, G "
        "(and extra-d, extra-f, extra-e, extra-g over the Genkit + TensorFlow pages) = corpus-d.json, "
        "corpus-{f,e,g}{1,2,3}.json; H = corpus-h.json; I = corpus-i.json. All of them are development data (each was "
        "scored and looked at); the goals are checked only on a set given with --questions (or registered after "
        "the settings froze).",
        "Both searches rank whole pages; bm25s: title twice + description + body, English stopwords, no stemming.",
        f"Δ = ours − bm25s per question, mean and paired bootstrap 95% interval ({BOOTSTRAP_ROUNDS} resamples, "
        f"seed {BOOTSTRAP_SEED}).",
        "Timings (s): " + ", ".join(f"{key} {value:.1f}" for key, value in timings.items()) + ".",
    ]
    for name, result in results.items():
        misses = [q["query"] for q in result["ours"]["queries"] if q["rank"] is None]
        notes.append(f"{name}: ours misses {len(misses)} of {result['questions']} in the top 5.")
    data = {"k": K, "semantic": semantic, "sets": results}
    return {"title": TITLE, "rows": rows, "goals": goals, "notes": notes, "data": data}


def _goals(name: str, compared: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """The issues' goals on an untouched set: the margin over bm25s overall (issue 10), and per kind of question
    never below bm25s in MRR@5 (issue 27)."""
    m, r = f"mrr@{K}", f"recall@{K}"
    whole = compared["all"]
    goals = [
        _goal(
            f"{name}: MRR@5 ≥ bm25s + {MARGIN_MRR}",
            _measured(whole[m]),
            whole[m]["ours"] >= whole[m]["bm25s"] + MARGIN_MRR,
        ),
        _goal(
            f"{name}: recall@5 ≥ bm25s − {-MARGIN_RECALL}",
            _measured(whole[r]),
            whole[r]["ours"] >= whole[r]["bm25s"] + MARGIN_RECALL,
        ),
    ]
    for kind, row in compared.items():
        if kind != "all":
            text = f"{name}, {kind} (n {row['n']}): MRR@5 ≥ bm25s"
            goals.append(_goal(text, _measured(row[m]), row[m]["difference"] >= 0))
    return goals


def _measured(cell: dict[str, float]) -> str:
    return f"{cell['ours']:.3f} vs {cell['bm25s']:.3f} (Δ {_delta(cell)})"


def _delta(cell: dict[str, float]) -> str:
    """``+0.012 [−0.010, +0.034]``: a difference and its interval."""
    return f"{cell['difference']:+.3f} [{cell['low']:+.3f}, {cell['high']:+.3f}]"


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
    """The result as a Markdown section: one table overall, one per kind of question."""
    lines = [f"# {result['title']}", ""]
    if result.get("status") == "skipped":
        return "\n".join([*lines, f"Skipped: {result['reason']}.", ""])
    lines += ["| set: search | MRR@5 | recall@5 | hit@5 |", "|---|---:|---:|---:|"]
    for row in result["rows"]:
        lines.append(f"| {row['label']} | {row['mrr@5']:.3f} | {row['recall@5']:.3f} | {row['hit@5']:.3f} |")
    lines += ["", "Per set and kind: MRR@5 and recall@5, ours vs bm25s, Δ = ours − bm25s [paired bootstrap 95%]:", ""]
    lines += ["| set | kind | n | MRR@5 ours / bm25s | Δ MRR@5 | recall@5 ours / bm25s | Δ recall@5 |"]
    lines += ["|---|---|---:|---:|---:|---:|---:|"]
    m, r = f"mrr@{K}", f"recall@{K}"
    for name, scores in result["data"]["sets"].items():
        for kind, row in scores["versus"].items():
            lines.append(
                f"| {name} | {kind} | {row['n']} | {row[m]['ours']:.3f} / {row[m]['bm25s']:.3f} | {_delta(row[m])} | "
                f"{row[r]['ours']:.3f} / {row[r]['bm25s']:.3f} | {_delta(row[r])} |"
            )
    lines += ["", *goals_and_notes(result["goals"], result["notes"])]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Command line: score both searches on the chosen sets and write quality.json and quality.md."""
    parser = argparse.ArgumentParser(description="Ranking quality: ours vs plain BM25 (bm25s).")
    parser.add_argument("--corpus", type=Path, default=None)
    parser.add_argument("--index", type=Path, default=None, help="reuse this index of the main corpus")
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument(
        "--sets", "--set", default="", help=f"comma-separated, of {', '.join(SETS)} (default: all); one set: --set NAME"
    )
    parser.add_argument("--quick", action="store_true", help="only the dev and 52 sets (unless --sets)")
    parser.add_argument("--questions", type=Path, action="append", default=[], help="score this question file")
    parser.add_argument("--pages", default="main", help="its pages: main (default), extra, or a .jsonl file")
    args = parser.parse_args(argv)
    sets = [name.strip() for name in args.sets.split(",") if name.strip()]
    for path in args.questions:
        if not path.is_file():
            parser.error(f"no question file {path}")
        pages = args.pages if args.pages in ("main", "extra") else str(Path(args.pages).resolve())
        sets.append(add_question_file(path.resolve(), pages))
    unknown = [name for name in sets if name not in SETS]
    if unknown:
        parser.error(f"unknown set(s): {', '.join(unknown)}")
    result = run(quick=args.quick, corpus=args.corpus, index_path=args.index, sets=sets or None)
    if result.get("status") == "skipped":
        print(f"bench_quality: skipped ({result['reason']})")
        return 0
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "quality.json").write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    (args.out / "quality.md").write_text(to_markdown(result), encoding="utf-8")
    print(to_markdown(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
