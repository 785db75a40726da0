"""Knowledge pack bench: build a pack of the 2,502 corpus pages from the shipped recipes, add it, search it,
serve it.

Run ``python -m bench.bench_packs`` (``--quick``: fewer queries and requests). The recipes read local git
repositories rebuilt from ``../shared/corpus`` (see ``tests/corpus_repos.py``), so no network is used; without
the corpus the bench says so and writes nothing. It writes ``bench/results/packs.json`` and ``packs.md``.

Measured:

- ``devknow pack build`` of the five sources into one pack (wall time, file size, pages);
- ``devknow pack add`` of that pack into an empty default index (rows copied, no re-chunking);
- search latency with the pack installed, through ``LocalBackend.call_tool`` (what ``DevKnowClient("local")``
  pays, the pack credit line included), p50/p95 over the questions of ``bench/queries.json``;
- ``devknow serve --pack`` with 1 and 2 workers under 32 concurrent loopback clients (each its own HTTP
  connection, ``search_documents`` over MCP, JSON responses, stateless): requests per second and p95
  latency; bounded by a request count and a time limit.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from bench.report import goals_and_notes

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
QUERIES = ROOT / "bench" / "queries.json"
SOURCES = ("adk-docs", "gemini-cli", "dart", "go", "firebase-js")
TITLE = "Knowledge packs: build, add, search and serve the corpus (bench_packs)"
GOALS = {"search_p50_ms": 10.0}
CLIENTS = 32
SERVE_SECONDS = 30.0

__all__ = ["GOALS", "TITLE", "main", "run"]


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def _serve(pack: Path, workers: int, queries: list[str], requests_per_client: int, log: Path) -> dict[str, Any]:
    import httpx

    from tests.conftest import free_port, stop_process, wait_for_port

    port = free_port()
    args = [sys.executable, "-m", "devknow_jupyter", "serve", "--pack", str(pack), "--port", str(port)]
    args += ["--workers", str(workers), "--stateless", "--json-response"]
    with log.open("w") as out:
        proc = subprocess.Popen(args, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    latencies: list[float] = []
    errors = [0]
    lock = threading.Lock()
    deadline = time.monotonic() + SERVE_SECONDS
    url = f"http://127.0.0.1:{port}/mcp"
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}

    def client(number: int) -> None:
        with httpx.Client(timeout=30) as http:
            for step in range(requests_per_client):
                if time.monotonic() > deadline:
                    return
                query = queries[(number * requests_per_client + step) % len(queries)]
                body = {
                    "jsonrpc": "2.0",
                    "id": step,
                    "method": "tools/call",
                    "params": {"name": "search_documents", "arguments": {"query": query}},
                }
                started = time.perf_counter()
                try:
                    reply = http.post(url, json=body, headers=headers)
                    ok = reply.status_code == 200 and "result" in reply.json()
                except (httpx.HTTPError, ValueError):
                    ok = False
                elapsed = time.perf_counter() - started
                with lock:
                    if ok:
                        latencies.append(elapsed)
                    else:
                        errors[0] += 1

    try:
        wait_for_port(port, proc, log, deadline=60)
        started = time.perf_counter()
        threads = [threading.Thread(target=client, args=(n,)) for n in range(CLIENTS)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        wall = time.perf_counter() - started
    finally:
        stop_process(proc)
    return {
        "workers": workers,
        "clients": CLIENTS,
        "requests": len(latencies),
        "errors": errors[0],
        "seconds": round(wall, 2),
        "requests_per_second": round(len(latencies) / wall, 1) if wall else 0.0,
        "p50_ms": round(_percentile(latencies, 0.5) * 1000, 1) if latencies else None,
        "p95_ms": round(_percentile(latencies, 0.95) * 1000, 1) if latencies else None,
    }


def run(quick: bool = False, serve: bool = True) -> dict[str, Any] | None:
    """Run the bench; ``None`` when the corpus is absent. ``serve=False`` leaves out ``devknow serve``."""
    from tests.corpus_repos import CORPUS, make_repo

    if not CORPUS.is_dir():
        print("bench_packs: ../shared/corpus is not present; nothing measured", file=sys.stderr)
        return None
    tmp = Path(tempfile.mkdtemp(prefix="bench-packs-"))
    os.environ["DEVKNOW_CACHE_DIR"] = str(tmp / "cache")
    os.environ["DEVKNOW_SEMANTIC"] = "0"
    from devknow_jupyter import packs
    from devknow_jupyter.local.backend import LocalBackend

    repos = {source: str(make_repo(source, tmp / "repos")[0]) for source in SOURCES}
    pack = tmp / "google-docs.pack"
    built = packs.build(list(SOURCES), pack, repos=repos)
    added = packs.add(pack)
    queries = [item["query"] for item in json.loads(QUERIES.read_text(encoding="utf-8"))]
    if quick:
        queries = queries[:40]
    backend = LocalBackend.from_spec("local")
    try:
        for query in queries[:10]:  # warm-up: the ranker is loaded on the first search
            backend.call_tool("search_documents", {"query": query})
        latencies = []
        for query in queries:
            started = time.perf_counter()
            backend.call_tool("search_documents", {"query": query})
            latencies.append(time.perf_counter() - started)
    finally:
        backend.close()
    per_client = 5 if quick else 25
    serving = [_serve(pack, workers, queries, per_client, tmp / f"serve-{workers}.log") for workers in (1, 2)] \
        if serve else []
    return {
        "pages": built.pages,
        "build_seconds": round(built.seconds, 1),
        "pack_mb": round(built.size_bytes / 1e6, 1),
        "add_seconds": round(added.seconds, 2),
        "search_queries": len(latencies),
        "search_p50_ms": round(statistics.median(latencies) * 1000, 2),
        "search_p95_ms": round(_percentile(latencies, 0.95) * 1000, 2),
        "serve": serving,
        "cpus": os.cpu_count(),
    }


def write_results(results: dict[str, Any]) -> None:
    """``bench/results/packs.json`` and a Markdown summary ``packs.md``."""
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "packs.json").write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    goals = [
        {
            "goal": f"search p50 < {GOALS['search_p50_ms']:g} ms with the pack installed",
            "measured": f"{results['search_p50_ms']} ms",
            "met": results["search_p50_ms"] < GOALS["search_p50_ms"],
        }
    ]
    lines = [f"# {TITLE}", "", *goals_and_notes(goals, [])]
    lines += [
        "| measure | value |",
        "|---|---:|",
        f"| pages | {results['pages']} |",
        f"| pack build | {results['build_seconds']} s |",
        f"| pack size | {results['pack_mb']} MB |",
        f"| pack add | {results['add_seconds']} s |",
        f"| search p50 / p95 ({results['search_queries']} queries) | "
        f"{results['search_p50_ms']} / {results['search_p95_ms']} ms |",
        "",
        f"`devknow serve --pack`, {CLIENTS} concurrent loopback clients ({results['cpus']} CPUs, shared):",
        "",
        "| workers | requests | errors | req/s | p50 ms | p95 ms |",
        "|---:|---:|---:|---:|---:|---:|",
    ]
    for row in results["serve"]:
        lines.append(
            f"| {row['workers']} | {row['requests']} | {row['errors']} | {row['requests_per_second']} | "
            f"{row['p50_ms']} | {row['p95_ms']} |"
        )
    (RESULTS / "packs.md").write_text("\n".join(lines) + "\n", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    """Run and write the results; exit status 0 (also when the corpus is absent)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer queries and requests")
    args = parser.parse_args(argv)
    results = run(quick=args.quick)
    if results is not None:
        write_results(results)
        print(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
