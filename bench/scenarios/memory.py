"""Scenario 6: resident memory (psutil RSS, after ``gc.collect()``) of a client doing many distinct
searches and fetches with the default cache on, sampled at intervals.

Run A: 1,000 searches and 500 fetched pages. Run B: three times as many distinct queries and pages, to
show whether RSS levels off once the cache is full (its ``max_entries`` bounds it). Run C: run B with
``offline_store=False``, to tell the result cache's memory from the offline store's. Each run is a fresh
child interpreter (``python -m bench.scenarios.memory --child ...``) so nothing else the bench did sits
in its heap. The server is :mod:`bench.fast_server` over 3,000 generated pages (JSON mode).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from bench.scenarios import Context, goal
from bench.scenarios.latency import _check_transport
from bench.servers import running
from bench.stats import figure
from tests.docgen import generate_docs

TITLE = "6. Memory: RSS after many searches and fetches, cache on (bounded by max_entries)"
ROOT = Path(__file__).resolve().parents[2]
PAGES = 3_000


def _rss_mb() -> float:
    import gc

    import psutil

    gc.collect()
    return psutil.Process().memory_info().rss / 2**20


def child(url: str, names_file: Path, searches: int, fetches: int, every: int, store: bool = True) -> dict[str, Any]:
    """The measured run: interleave ``searches`` distinct queries with ``fetches`` single-page fetches.

    ``store=False`` turns off the offline copy of fetched pages (a SQLite database with its own page
    cache), leaving only the result cache to hold memory.
    """
    import random

    from devknow_jupyter import DevKnowClient

    names = json.loads(names_file.read_text())
    rng = random.Random(6)
    series = []
    with DevKnowClient(url, offline_store=store) as client:  # the default, process-wide cache
        client.search_documents("warm up")
        client.get_documents([names[0]])
        series.append({"searches": 0, "fetched": 0, "rss_mb": _rss_mb(), "cache_size": len(client.cache)})
        fetched = 0
        for i in range(1, searches + 1):
            # Page numbers occur only in their page's title: each query finds a few passages of three
            # pages (cheap for the server), and no two queries are the same (each one is a cache miss).
            numbers = rng.sample(range(100, len(names)), 3)
            client.search_documents(f"pages {numbers[0]} {numbers[1]} {numbers[2]} x{i}")
            while fetched < fetches * i // searches:
                client.get_documents([names[(fetched + 1) % len(names)]])
                fetched += 1
            if i % every == 0 or i == searches:
                series.append(
                    {"searches": i, "fetched": fetched, "rss_mb": _rss_mb(), "cache_size": len(client.cache)}
                )
        status = client.status()
    return {"series": series, "max_entries": status["cache_max_entries"], "hits": status["cache_hits"],
            "misses": status["cache_misses"]}


def _run_child(
    url: str, names_file: Path, searches: int, fetches: int, every: int, folder: Path, store: bool
) -> dict[str, Any]:
    args = [sys.executable, "-m", "bench.scenarios.memory", "--child", url, "--names", str(names_file),
            "--searches", str(searches), "--fetches", str(fetches), "--every", str(every)]
    if not store:
        args.append("--no-store")
    env = {**os.environ, "DEVKNOW_CACHE_DIR": str(folder)}  # each run starts with an empty offline store
    done = subprocess.run(args, cwd=ROOT, capture_output=True, text=True, timeout=240, env=env)
    if done.returncode != 0:
        raise RuntimeError(f"memory child failed: {done.stderr.strip()[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def _growth(series: list[dict[str, Any]]) -> tuple[float, float]:
    """RSS growth (MB) over the second half of a run, and the RSS at its end."""
    half, end = series[len(series) // 2], series[-1]
    return end["rss_mb"] - half["rss_mb"], end["rss_mb"]


def run(ctx: Context) -> dict[str, Any]:
    """Runs A, B and C (repeated), RSS series, final RSS figures and the plateau checks."""
    _check_transport()
    names = generate_docs(ctx.tmp / "docs", ctx.reps(PAGES, 600), size=3_000, seed=6)
    names_file = ctx.tmp / "names.json"
    names_file.write_text(json.dumps(names))
    big = (ctx.reps(3_000, 600), ctx.reps(1_500, 300), ctx.reps(2, 1))
    # label: (searches, pages, repetitions, offline store on)
    plan = {
        "A": (ctx.reps(1_000, 200), ctx.reps(500, 100), ctx.reps(2, 1), True),
        "B": (*big, True),
        "C": (*big, False),
    }
    runs: dict[str, list[dict[str, Any]]] = {label: [] for label in plan}
    with running("fast", ctx.tmp, "--json", "--docs", str(ctx.tmp / "docs")) as srv:
        for rep in range(max(spec[2] for spec in plan.values())):
            for label, (searches, fetches, reps, store) in plan.items():
                if rep < reps:
                    every = max(searches // 10, 1)
                    folder = ctx.tmp / f"store-{label}-{rep}"
                    runs[label].append(_run_child(srv.url, names_file, searches, fetches, every, folder, store))
    rows = []
    notes = []
    for label, (searches, fetches, _, store) in plan.items():
        finals = [run_["series"][-1] for run_ in runs[label]]
        starts = [run_["series"][0] for run_ in runs[label]]
        size = f"cache {finals[0]['cache_size']} / max_entries {runs[label][0]['max_entries']}"
        what = "" if store else ", offline_store=False"
        rows.append(figure(f"run {label}: RSS after {searches:,} searches + {fetches:,} pages{what}",
                           [f["rss_mb"] for f in finals], "MB", note=size))
        rows.append(figure(f"run {label}: RSS after the first call (baseline)", [s["rss_mb"] for s in starts], "MB"))
        series = runs[label][0]["series"]
        notes.append(f"Run {label}{what}: RSS (MB) / cache entries at each checkpoint (searches+pages): " + ", ".join(
            f"{p['searches']}+{p['fetched']}: {p['rss_mb']:.0f}/{p['cache_size']}" for p in series
        ))
    max_entries = runs["B"][0]["max_entries"]
    everything = [p for label in plan for run_ in runs[label] for p in run_["series"]]
    goals = [
        goal("cache never holds more than max_entries",
             f"max {max(p['cache_size'] for p in everything)} / {max_entries}",
             all(p["cache_size"] <= max_entries for p in everything)),
    ]
    for label, meaning in (("C", "result cache only"), ("B", "with the offline store, the default")):
        growth, end = _growth(runs[label][0]["series"])
        goals.append(goal(f"RSS levels off ({meaning}): growth over the second half of run {label} < 5% of RSS",
                          f"{growth:+.1f} MB ({growth / end:+.1%})", growth < 0.05 * end))
    notes.append("B and C differ only in the offline store: C shows what the result cache holds; B adds the "
                 "SQLite database every fetched page is saved to, whose page cache and memory map grow with "
                 "the database up to their PRAGMA limits (cache_size, mmap_size in devknow_jupyter/local/index.py), "
                 "not with the result cache's max_entries.")
    return {"rows": rows, "goals": goals, "notes": notes, "runs": runs}


def main(argv: list[str] | None = None) -> None:
    """Entry point of the child process."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--child", required=True, help="server URL")
    parser.add_argument("--names", type=Path, required=True)
    parser.add_argument("--searches", type=int, required=True)
    parser.add_argument("--fetches", type=int, required=True)
    parser.add_argument("--every", type=int, required=True)
    parser.add_argument("--no-store", action="store_true", help="offline_store=False")
    args = parser.parse_args(argv)
    print(json.dumps(child(args.child, args.names, args.searches, args.fetches, args.every, not args.no_store)))


if __name__ == "__main__":
    main()
