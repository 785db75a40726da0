"""Load on the team service: many users at once against ``devknow serve --users --quota --workers 2``.

``python -m bench.bench_team [--clients 200] [--seconds 30] [--workers 2] [--quota search=4/min]``

Each client is its own user (a token of its own in a users file written here) and sends searches, one
after the other, for ``--seconds``, over one kept-alive connection (raw JSON-RPC ``tools/call`` on a
stateless JSON server: what any MCP client sends). Counted: answered (200 with a result), refused by
quota (429), and lost (anything else: a connection error, a timeout, another status: must be 0); latency
p50/p99 of the answered and refused; the server's memory (its processes' RSS summed) at start and end.
Loopback only; the clients run on the same CPUs as the server, so the rate is a floor.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
import psutil

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.conftest import FIXTURE_DOCS, free_port, stop_process, wait_for_port  # noqa: E402

QUERIES = ["bucket", "storage lifecycle", "authentication", "create a project", "quota", "api key", "delete"]


def _rss(proc: psutil.Process) -> int:
    total = 0
    for each in [proc, *proc.children(recursive=True)]:
        try:
            total += each.memory_info().rss
        except psutil.Error:
            pass
    return total


async def _client(url: str, token: str, until: float, n: int, tally: dict[str, list]) -> None:
    headers = {"Authorization": f"Bearer {token}", "Accept": "application/json, text/event-stream"}
    async with httpx.AsyncClient(headers=headers, timeout=30) as http:
        i = 0
        while time.monotonic() < until:
            body = {
                "jsonrpc": "2.0",
                "id": i,
                "method": "tools/call",
                "params": {"name": "search_documents", "arguments": {"query": QUERIES[(n + i) % len(QUERIES)]}},
            }
            started = time.perf_counter()
            try:
                reply = await http.post(url, json=body)
                seconds = time.perf_counter() - started
                if reply.status_code == 200 and "result" in reply.json():
                    tally["answered"].append(seconds)
                elif reply.status_code == 429:
                    tally["refused"].append(seconds)
                else:
                    tally["lost"].append(f"HTTP {reply.status_code}")
            except (httpx.HTTPError, ValueError) as exc:
                tally["lost"].append(type(exc).__name__)
            i += 1


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


async def _load(url: str, tokens: list[str], seconds: float) -> dict[str, list]:
    tally: dict[str, list] = {"answered": [], "refused": [], "lost": []}
    until = time.monotonic() + seconds
    await asyncio.gather(*(_client(url, token, until, n, tally) for n, token in enumerate(tokens)))
    return tally


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.bench_team", description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument(
        "--quota", default="search=4/min", help="every user's quota (default: search=4/min, so that some are refused)"
    )
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "team.json")
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        tokens = [f"bench-user-{n:04d}-token-0123456789" for n in range(args.clients)]
        users = "\n".join(f'[users.u{n}]\ntoken = "{token}"\n' for n, token in enumerate(tokens))
        (folder / "users.toml").write_text(users, encoding="utf-8")
        port = free_port()
        log = folder / "serve.log"
        env = {**os.environ, "DEVKNOW_CACHE_DIR": str(folder / "cache")}
        command = [
            sys.executable, "-m", "devknow_jupyter", "serve", "--docs", str(FIXTURE_DOCS), "--port", str(port),
            "--users", str(folder / "users.toml"), "--quota", args.quota, "--workers", str(args.workers),
            "--json-response",
        ]
        with log.open("wb") as out:
            proc = subprocess.Popen(command, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
        try:
            wait_for_port(port, proc, log, deadline=60)
            time.sleep(1.0)  # the workers open their indexes
            server = psutil.Process(proc.pid)
            rss_start = _rss(server)
            tally = asyncio.run(_load(f"http://127.0.0.1:{port}/mcp", tokens, args.seconds))
            rss_end = _rss(server)
        finally:
            stop_process(proc)

    timed = tally["answered"] + tally["refused"]
    result = {
        "clients": args.clients,
        "seconds": args.seconds,
        "workers": args.workers,
        "quota": args.quota,
        "answered": len(tally["answered"]),
        "refused_by_quota": len(tally["refused"]),
        "lost": len(tally["lost"]),
        "lost_reasons": sorted(set(tally["lost"]))[:10],
        "requests_per_s": round(len(timed) / args.seconds, 1),
        "p50_ms": round(_percentile(timed, 0.50) * 1000, 1),
        "p99_ms": round(_percentile(timed, 0.99) * 1000, 1),
        "server_rss_start_mb": round(rss_start / 2**20, 1),
        "server_rss_end_mb": round(rss_end / 2**20, 1),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    for key, value in result.items():
        print(f"{key:22} {value}")
    return 0 if result["lost"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
