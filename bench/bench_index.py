"""Local index bench: index the shared corpus (2,502 real pages), then time queries against it.

Run ``python -m bench.bench_index`` (``--quick`` for one timing pass). It writes
``bench/results/index.json`` and ``bench/results/index.md``. The corpus is read from ``../shared/corpus``
next to the repository (or ``$DEVKNOW_CORPUS``); without it the bench says so and writes nothing.

Measured:

- indexing the whole corpus into a new index, in a fresh child interpreter (wall time; peak resident
  memory sampled every 5 ms, and the kernel's high-water mark); the index file's size; with the
  ``semantic`` extra installed, a second index with page vectors (embedded in batches);
- opening the index in a fresh interpreter and running a first search (the stored ranker is loaded,
  no page is re-tokenized);
- reindexing with nothing changed (the incremental path: stat only);
- ``search`` latency over several hundred queries (the questions of ``bench/queries.json``, page
  titles, section headings and FTS-hostile strings), after one warm-up pass, p50/p95/p99, lexical and with
  the semantic extra;
- the costs the issue sets goals on, in one table with the two modes side by side (:func:`costs`): indexing
  wall and CPU time, its peak RSS, the file's size, a fresh process's open + first search (CPU, wall, and
  its peak RSS), search p50/p95;
- the same through ``LocalBackend.call_tool`` (what ``DevKnowClient("local")`` pays), ``answer_query``
  and ``get_documents`` with 20 names.

Importing this module does nothing; the corpus is only read inside :func:`run`.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.report import goals_and_notes

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
QUERIES = ROOT / "bench" / "queries.json"
#: Metadata files at the corpus root, not pages, and corpus.jsonl (the same pages again, as JSON Lines).
EXCLUDE = ("README.md", "MANIFEST.md", "LICENSES/*", "corpus.jsonl")
TITLE = "Local index: indexing the corpus and query latency (bench_index)"
GOALS = {"index_seconds": 60.0, "p50_ms": 10.0, "p95_ms": 30.0, "peak_mb": 400.0, "open_seconds": 0.3}

__all__ = ["GOALS", "TITLE", "corpus_path", "costs", "costs_markdown", "main", "run", "write_results"]


def corpus_path() -> Path | None:
    """The shared corpus folder, or None when it is not on this machine."""
    explicit = os.environ.get("DEVKNOW_CORPUS", "").strip()
    path = Path(explicit) if explicit else ROOT.parent / "shared" / "corpus"
    return path if path.is_dir() else None


# -- the child: indexing from a fresh interpreter -------------------------------------------------


def _child_index(db: Path, corpus: Path) -> dict[str, Any]:
    """Index ``corpus`` into ``db``; returns time, memory and sizes (runs in a child process; the semantic
    extra is used when installed and ``$DEVKNOW_SEMANTIC`` is not 0)."""
    import resource
    import threading

    import psutil

    from devknow_jupyter.local.index import LocalIndex

    process = psutil.Process()
    baseline = process.memory_info().rss
    peak = [baseline]
    done = threading.Event()

    def sample() -> None:
        while not done.is_set():
            peak[0] = max(peak[0], process.memory_info().rss)
            time.sleep(0.005)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    started, cpu_started = time.perf_counter(), time.process_time()
    index = LocalIndex(db)
    report = index.add_folder(corpus, exclude=EXCLUDE)  # also builds the ranker (and page vectors) and stores it
    seconds, cpu_seconds = time.perf_counter() - started, time.process_time() - cpu_started
    done.set()
    sampler.join()
    stats = index.stats()
    index.close()  # checkpoints the WAL into the file
    return {
        "seconds": seconds,
        "cpu_seconds": cpu_seconds,
        "added": report.added,
        "skipped": report.skipped,
        "warnings": report.warnings,
        "chunks": stats["chunks"],
        "documents": stats["documents"],
        "size_bytes": db.stat().st_size,
        "rss_baseline_mb": baseline / 2**20,
        "rss_peak_mb": peak[0] / 2**20,
        "maxrss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def _child_open(db: Path) -> dict[str, Any]:
    """Open an index and run one search (runs in a child process): what a new kernel pays. With
    ``$DEVKNOW_SEMANTIC`` not 0 (and the extra installed) the embedding model is loaded too."""
    import resource

    import psutil

    started = time.perf_counter()
    from devknow_jupyter.local.index import LocalIndex

    imported, cpu_started = time.perf_counter(), time.process_time()
    with LocalIndex(db, semantic=os.environ.get("DEVKNOW_SEMANTIC") != "0") as index:
        hits = index.search("how do I create a module")
        done, cpu = time.perf_counter(), time.process_time() - cpu_started
        rss = psutil.Process().memory_info().rss
    return {
        "import_seconds": imported - started,
        "open_search_seconds": done - imported,
        "open_search_cpu_seconds": cpu,
        "hits": len(hits),
        "rss_after_mb": rss / 2**20,
        # The kernel's high-water mark of the whole child: imports, opening, the search.
        "maxrss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def _index_in_child(db: Path, corpus: Path, *, semantic: bool = False, mode: str = "--child") -> dict[str, Any]:
    env = {**os.environ, "DEVKNOW_SEMANTIC": "1" if semantic else "0"}
    args = [str(db), str(corpus)] if mode == "--child" else [str(db)]
    proc = subprocess.run(
        [sys.executable, "-m", "bench.bench_index", mode, *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
        env=env,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"indexing child failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


# -- queries --------------------------------------------------------------------------------------

_HEADING = re.compile(r"^#{2,3} +(.+?)\s*$", re.MULTILINE)
HOSTILE = ['"unbalanced', "title:async -await", "NEAR(go modules)", "C++ && || *", "(", "größe ünïcode", "日本語"]


def bench_queries(corpus: Path, count: int = 600, seed: int = 7) -> list[str]:
    """Realistic queries: our questions, page titles, section headings, and a few hostile strings."""
    questions = [item["query"] for item in json.loads(QUERIES.read_text(encoding="utf-8"))]
    titles: list[str] = []
    headings: list[str] = []
    with (corpus / "corpus.jsonl").open(encoding="utf-8") as lines:
        for line in lines:
            page = json.loads(line)
            titles.append(page["title"])
            headings.extend(match.strip("`* ") for match in _HEADING.findall(page["content"]))
    rng = random.Random(seed)
    rest = max(0, count - len(questions) - len(HOSTILE))
    picked = rng.sample(titles, min(rest // 2, len(titles))) + rng.sample(
        headings, min(rest - rest // 2, len(headings))
    )
    return questions + HOSTILE + picked


def _timed(call: Any, items: list[Any], passes: int, clock: Any = time.perf_counter) -> list[float]:
    for item in items:  # warm-up: page cache, SQLite cache, Python caches
        call(item)
    samples = []
    for _ in range(passes):
        for item in items:
            started = clock()
            call(item)
            samples.append(clock() - started)
    return samples


# -- the bench ------------------------------------------------------------------------------------


def run(*, quick: bool = False, corpus: Path | None = None, tmp: Path | None = None) -> dict[str, Any]:
    """Index the corpus and time queries. Returns ``{"title", "rows", "goals", "notes", "data"}``
    (rows in the format of :mod:`bench.stats`), or ``{"status": "skipped", "reason"}`` without a corpus."""
    from bench.stats import figure, machine_info, percentile
    from devknow_jupyter.local import semantic
    from devknow_jupyter.local.backend import LocalBackend
    from devknow_jupyter.local.index import LocalIndex

    corpus = corpus or corpus_path()
    if corpus is None:
        return {"title": TITLE, "status": "skipped", "reason": "../shared/corpus is not present"}
    owned = None
    if tmp is None:
        owned = tempfile.TemporaryDirectory(prefix="devknow-bench-index-")
        tmp = Path(owned.name)
    try:
        db = tmp / "corpus.sqlite3"
        for suffix in ("", "-wal", "-shm"):
            Path(f"{db}{suffix}").unlink(missing_ok=True)
        built = _index_in_child(db, corpus)
        opened = _index_in_child(db, corpus, mode="--child-open")
        dense_db = tmp / "corpus-semantic.sqlite3"
        for suffix in ("", "-wal", "-shm"):
            Path(f"{dense_db}{suffix}").unlink(missing_ok=True)
        # Quick runs (the smoke test) leave the semantic index out: it doubles the indexing time.
        dense_built = dense_opened = None
        if semantic.model_files() and not quick:
            dense_built = _index_in_child(dense_db, corpus, semantic=True)
            dense_opened = _index_in_child(dense_db, corpus, semantic=True, mode="--child-open")
        passes = 1 if quick else 3
        queries = bench_queries(corpus, count=300 if quick else 600)
        questions = [item["query"] for item in json.loads(QUERIES.read_text(encoding="utf-8"))]

        index = LocalIndex(db, semantic=False)
        started = time.perf_counter()
        first = index.search("how do I create a module")
        first_query = time.perf_counter() - started
        started = time.perf_counter()
        again = index.add_folder(corpus, exclude=EXCLUDE)
        reindex = time.perf_counter() - started
        search = _timed(lambda q: index.search(q, limit=10), queries, passes)
        # CPU time of the searching thread: what the query costs when the machine is not shared.
        search_cpu = _timed(lambda q: index.search(q, limit=10), queries, 1, clock=time.thread_time)
        backend = LocalBackend(index, f"local:{db}")
        tool = _timed(lambda q: backend.call_tool("search_documents", {"query": q}), queries, 1)
        answers = _timed(lambda q: backend.call_tool("answer_query", {"query": q}), questions, passes)
        names = index.names()
        rng = random.Random(3)
        batches = [rng.sample(names, 20) for _ in range(50)]
        fetch = _timed(lambda batch: backend.call_tool("get_documents", {"names": batch}), batches, passes)
        hits = sum(1 for q in queries if index.search(q, limit=10))
        index.close()
        dense_search: list[float] = []
        dense_search_cpu: list[float] = []
        if dense_built is not None:
            with LocalIndex(dense_db, semantic=True) as dense_index:
                dense_search = _timed(lambda q: dense_index.search(q, limit=10), queries, passes)
                dense_search_cpu = _timed(
                    lambda q: dense_index.search(q, limit=10), queries, 1, clock=time.thread_time
                )
    finally:
        if owned is not None:
            owned.cleanup()

    ordered = sorted(search)
    p50, p95 = percentile(ordered, 0.5) * 1e3, percentile(ordered, 0.95) * 1e3
    corpus_bytes = sum(path.stat().st_size for path in corpus.rglob("*.md") if path.name not in EXCLUDE)
    rows = [
        figure("search (LocalIndex.search, 10 hits)", search, "ms", scale=1e3, note=f"{len(queries)} queries"),
        figure("search, CPU time of the thread", search_cpu, "ms", scale=1e3, note="load-independent"),
        figure("search through LocalBackend.call_tool", tool, "ms", scale=1e3),
        *(
            [
                figure("search with the semantic extra (fused)", dense_search, "ms", scale=1e3),
                figure("search with the semantic extra, CPU time of the thread", dense_search_cpu, "ms", scale=1e3),
            ]
            if dense_search
            else []
        ),
        figure("answer_query (extractive)", answers, "ms", scale=1e3, note=f"{len(questions)} questions"),
        figure("get_documents, 20 names", fetch, "ms", scale=1e3),
    ]
    goals = [
        _goal(
            f"index the corpus in < {GOALS['index_seconds']:g} s",
            f"{built['seconds']:.1f} s",
            built["seconds"] < GOALS["index_seconds"],
        ),
        _goal(f"query p50 < {GOALS['p50_ms']:g} ms", f"{p50:.2f} ms", p50 < GOALS["p50_ms"]),
        _goal(f"query p95 < {GOALS['p95_ms']:g} ms", f"{p95:.2f} ms", p95 < GOALS["p95_ms"]),
        _goal(
            f"indexing peak RSS < {GOALS['peak_mb']:g} MB",
            f"{built['rss_peak_mb']:.0f} MB",
            built["rss_peak_mb"] < GOALS["peak_mb"],
        ),
        _goal(
            f"open the index + first search < {GOALS['open_seconds']:g} s of CPU (stored ranker, nothing re-tokenized)",
            f"{opened['open_search_cpu_seconds']:.2f} s ({opened['open_search_seconds']:.2f} s wall)",
            opened["open_search_cpu_seconds"] < GOALS["open_seconds"],
        ),
    ]
    if dense_built is not None:
        dense_p50 = percentile(sorted(dense_search), 0.5) * 1e3
        dense_p95 = percentile(sorted(dense_search), 0.95) * 1e3
        goals += [
            _goal(
                f"semantic: index in < {GOALS['index_seconds']:g} s, peak RSS < {GOALS['peak_mb']:g} MB",
                f"{dense_built['seconds']:.1f} s, {dense_built['rss_peak_mb']:.0f} MB",
                dense_built["seconds"] < GOALS["index_seconds"] and dense_built["rss_peak_mb"] < GOALS["peak_mb"],
            ),
            _goal(
                f"semantic: query p50 < {GOALS['p50_ms']:g} ms, p95 < {GOALS['p95_ms']:g} ms",
                f"{dense_p50:.2f} ms, {dense_p95:.2f} ms",
                dense_p50 < GOALS["p50_ms"] and dense_p95 < GOALS["p95_ms"],
            ),
            _goal(
                f"semantic: open + first search < {GOALS['open_seconds']:g} s of CPU (the model loaded too)",
                f"{dense_opened['open_search_cpu_seconds']:.2f} s ({dense_opened['open_search_seconds']:.2f} s wall)",
                dense_opened["open_search_cpu_seconds"] < GOALS["open_seconds"],
            ),
        ]
    data = {
        "machine": machine_info(),
        "corpus": {"path": str(corpus), "documents": built["documents"], "markdown_bytes": corpus_bytes},
        "index": {
            "seconds": built["seconds"],
            "documents": built["documents"],
            "chunks": built["chunks"],
            "skipped": built["skipped"],
            "warnings": built["warnings"],
            "size_bytes": built["size_bytes"],
            "size_vs_markdown": built["size_bytes"] / corpus_bytes if corpus_bytes else None,
            "rss_baseline_mb": built["rss_baseline_mb"],
            "rss_peak_mb": built["rss_peak_mb"],
            "maxrss_mb": built["maxrss_mb"],
            "reindex_unchanged_seconds": reindex,
            "reindex_unchanged": again.unchanged,
            "first_query_ms": first_query * 1e3,
            "first_query_hits": len(first),
            "fresh_process_open_search_seconds": opened["open_search_seconds"],
            "semantic": dense_built,
            "fresh_process_open": opened,
            "semantic_fresh_process_open": dense_opened,
        },
        "queries": {
            "count": len(queries),
            "passes": passes,
            "with_hits": hits,
            "p50_ms": p50,
            "p95_ms": p95,
            "p99_ms": percentile(ordered, 0.99) * 1e3,
            "max_ms": ordered[-1] * 1e3,
            "cpu_p50_ms": percentile(sorted(search_cpu), 0.5) * 1e3,
            "cpu_p95_ms": percentile(sorted(search_cpu), 0.95) * 1e3,
        },
    }
    notes = [
        f"Corpus: {built['documents']:,} pages, {corpus_bytes / 2**20:.1f} MB of Markdown; "
        f"{built['chunks']:,} passages; {len(built['skipped'])} files skipped.",
        f"Indexing: {built['seconds']:.1f} s in a fresh interpreter ({built['cpu_seconds']:.1f} s of CPU); "
        f"index file {built['size_bytes'] / 2**20:.1f} MB "
        f"({data['index']['size_vs_markdown']:.2f}× the Markdown); peak RSS {built['rss_peak_mb']:.0f} MB "
        f"(baseline {built['rss_baseline_mb']:.0f} MB after imports).",
        f"Reindex with nothing changed: {reindex:.2f} s ({again.unchanged:,} files unchanged, none read).",
        f"A fresh interpreter opens the index and answers a first search in {opened['open_search_seconds']:.2f} s "
        f"({opened['open_search_cpu_seconds']:.2f} s of CPU) "
        "(the ranker is loaded from its stored snapshot; importing the package took "
        f"{opened['import_seconds']:.2f} s).",
        (
            f"With the semantic extra: indexing {dense_built['seconds']:.1f} s "
            f"({dense_built['cpu_seconds']:.1f} s of CPU), "
            f"peak RSS {dense_built['rss_peak_mb']:.0f} MB, file {dense_built['size_bytes'] / 2**20:.1f} MB "
            "(pages embedded 32 at a time)."
            if dense_built
            else "No semantic figures (the extra is not installed, or a --quick run)."
        ),
        f"Search: p50 {p50:.2f} ms, p95 {p95:.2f} ms, p99 {data['queries']['p99_ms']:.2f} ms, "
        f"max {data['queries']['max_ms']:.1f} ms over {len(search):,} timed searches ({passes} pass(es) after a "
        f"warm-up pass); {hits} of {len(queries)} queries have hits. CPU time per search: p50 "
        f"{data['queries']['cpu_p50_ms']:.2f} ms, p95 {data['queries']['cpu_p95_ms']:.2f} ms.",
        "Load average at start: "
        f"{data['machine'].get('load_average_start')}; the machine has {data['machine'].get('cores')} cores, "
        "so wall-clock figures include waiting for a CPU when other work runs.",
    ]
    lexical = {"built": built, "opened": opened, "search": search, "search_cpu": search_cpu}
    dense = (
        {"built": dense_built, "opened": dense_opened, "search": dense_search, "search_cpu": dense_search_cpu}
        if dense_built is not None
        else None
    )
    data["costs"] = costs(lexical, dense)
    return {"title": TITLE, "rows": rows, "goals": goals, "notes": notes, "data": data}


#: The issue's costs, one row each: (label, key, unit, goal or None).
COSTS = (
    ("indexing, wall", "index_seconds", "s", GOALS["index_seconds"]),
    ("indexing, CPU", "index_cpu_seconds", "s", None),
    ("indexing, peak RSS (sampled every 5 ms)", "index_peak_mb", "MB", GOALS["peak_mb"]),
    ("indexing, kernel high-water mark (ru_maxrss)", "index_maxrss_mb", "MB", GOALS["peak_mb"]),
    ("index file", "size_mb", "MB", None),
    ("fresh process: open + first search, CPU", "open_cpu_seconds", "s", GOALS["open_seconds"]),
    ("fresh process: open + first search, wall", "open_seconds", "s", None),
    ("fresh process: peak RSS (imports, open, search)", "open_maxrss_mb", "MB", GOALS["peak_mb"]),
    ("search p50, wall", "p50_ms", "ms", GOALS["p50_ms"]),
    ("search p95, wall", "p95_ms", "ms", GOALS["p95_ms"]),
    ("search p50, CPU of the thread", "cpu_p50_ms", "ms", None),
    ("search p95, CPU of the thread", "cpu_p95_ms", "ms", None),
)


def _cost_figures(mode: dict[str, Any]) -> dict[str, float]:
    """The figures of :data:`COSTS` for one mode (lexical, or with the semantic extra)."""
    from bench.stats import percentile

    built, opened = mode["built"], mode["opened"]
    search, search_cpu = sorted(mode["search"]), sorted(mode["search_cpu"])
    return {
        "index_seconds": built["seconds"],
        "index_cpu_seconds": built["cpu_seconds"],
        "index_peak_mb": built["rss_peak_mb"],
        "index_maxrss_mb": built["maxrss_mb"],
        "size_mb": built["size_bytes"] / 2**20,
        "open_cpu_seconds": opened["open_search_cpu_seconds"],
        "open_seconds": opened["open_search_seconds"],
        "open_maxrss_mb": opened["maxrss_mb"],
        "p50_ms": percentile(search, 0.5) * 1e3,
        "p95_ms": percentile(search, 0.95) * 1e3,
        "cpu_p50_ms": percentile(search_cpu, 0.5) * 1e3,
        "cpu_p95_ms": percentile(search_cpu, 0.95) * 1e3,
    }


def costs(lexical: dict[str, Any], dense: dict[str, Any] | None) -> list[dict[str, Any]]:
    """Every cost the issue sets a goal on, lexical and with the semantic extra side by side: one row per
    measure, ``{"measure", "unit", "lexical", "semantic", "goal", "met"}`` (``semantic`` None without the extra;
    ``met`` asks both modes)."""
    figures = _cost_figures(lexical)
    dense_figures = _cost_figures(dense) if dense is not None else {}
    rows = []
    for label, key, unit, goal in COSTS:
        values = [figures[key]] + ([dense_figures[key]] if dense_figures else [])
        rows.append(
            {
                "measure": label,
                "unit": unit,
                "lexical": figures[key],
                "semantic": dense_figures.get(key),
                "goal": goal,
                "met": None if goal is None else all(value < goal for value in values),
            }
        )
    return rows


def costs_markdown(rows: list[dict[str, Any]]) -> list[str]:
    """The costs table as Markdown lines."""
    lines = ["| cost | lexical | + semantic extra | goal | met |", "|---|---:|---:|---:|---|"]
    for row in rows:
        semantic = "–" if row["semantic"] is None else f"{row['semantic']:.2f} {row['unit']}"
        goal = "" if row["goal"] is None else f"< {row['goal']:g} {row['unit']}"
        met = {True: "yes", False: "**no**", None: ""}[row["met"]]
        lines.append(f"| {row['measure']} | {row['lexical']:.2f} {row['unit']} | {semantic} | {goal} | {met} |")
    return lines


def _goal(text: str, measured: str, met: bool) -> dict[str, Any]:
    return {"goal": text, "measured": measured, "met": met}


def write_results(result: dict[str, Any], out_dir: Path = RESULTS, stem: str = "index") -> tuple[Path, Path]:
    """Write ``<stem>.json`` and ``<stem>.md`` into ``out_dir``; returns both paths."""
    out_dir.mkdir(parents=True, exist_ok=True)
    json_path, md_path = out_dir / f"{stem}.json", out_dir / f"{stem}.md"
    json_path.write_text(json.dumps(result, indent=2, default=str) + "\n", encoding="utf-8")
    md_path.write_text(to_markdown(result), encoding="utf-8")
    return json_path, md_path


def to_markdown(result: dict[str, Any]) -> str:
    """The result as a Markdown section: measures, goals, notes."""
    lines = [f"# {result['title']}", ""]
    if result.get("status") == "skipped":
        return "\n".join([*lines, f"Skipped: {result['reason']}.", ""])
    machine = result.get("data", {}).get("machine", {})
    if machine:
        lines += [f"Machine: {machine.get('cpu')}, {machine.get('cores')} cores, Python {machine.get('python')}.", ""]
    lines += ["| measure | p50 | p95 | min–max | n | note |", "|---|---:|---:|---:|---:|---|"]
    for row in result["rows"]:
        lines.append(
            f"| {row['label']} | {row['median']:.2f} {row['unit']} | {row['p95']:.2f} {row['unit']} | "
            f"{row['min']:.2f}–{row['max']:.2f} | {row['n']} | {row.get('note', '')} |"
        )
    cost_rows = result.get("data", {}).get("costs")
    if cost_rows:
        lines += ["", "Every cost of the issue in this run:", "", *costs_markdown(cost_rows)]
    lines += ["", *goals_and_notes(result["goals"], result["notes"])]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Command line: run the bench and write its results (or index in a child, with ``--child``)."""
    parser = argparse.ArgumentParser(description="Index the shared corpus and time queries.")
    parser.add_argument("--quick", action="store_true", help="one timing pass over fewer queries")
    parser.add_argument("--corpus", type=Path, default=None, help="corpus folder (default: ../shared/corpus)")
    parser.add_argument("--out", type=Path, default=RESULTS, help="where to write index.json and index.md")
    parser.add_argument("--child", nargs=2, metavar=("DB", "CORPUS"), help=argparse.SUPPRESS)
    parser.add_argument("--child-open", metavar="DB", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(_child_index(Path(args.child[0]), Path(args.child[1]))))
        return 0
    if args.child_open:
        print(json.dumps(_child_open(Path(args.child_open))))
        return 0
    result = run(quick=args.quick, corpus=args.corpus)
    if result.get("status") == "skipped":
        print(f"bench_index: skipped ({result['reason']})")
        return 0
    json_path, md_path = write_results(result, args.out)
    print(to_markdown(result))
    print(f"wrote {json_path.relative_to(ROOT) if json_path.is_relative_to(ROOT) else json_path} and {md_path.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
