"""Scenario 2: a cache hit versus a miss, through ``DevKnowClient``'s public methods.

A *miss* is a query (or a page) the cache does not hold, so the client goes over loopback to the
server; a *hit* repeats a cached call. Misses use a fresh query each time (no ``refresh`` trick), and
the two kinds take turns so that drift hits both.
"""

from __future__ import annotations

from typing import Any

from bench.scenarios import Context, goal
from bench.scenarios.latency import DOC, QUERY, _check_transport
from bench.servers import running
from bench.stats import figure, ratio, round_robin

TITLE = "2. Cache: a hit versus a loopback miss"


def run(ctx: Context) -> dict[str, Any]:
    """Hit and miss timings for search_documents and get_documents against both servers (JSON mode)."""
    _check_transport()
    from devknow_jupyter import DevKnowClient
    from devknow_jupyter.cache import ResultCache

    rounds = ctx.reps(300, 20)
    rows: list[dict[str, Any]] = []
    goals = []
    for server in ("fast", "sdk"):
        with running(server, ctx.tmp, "--json") as srv, DevKnowClient(srv.url, cache=ResultCache(4096)) as client:
            client.search_documents(QUERY)
            client.get_documents([DOC])
            fresh = iter([f"{QUERY} {i}" for i in range(rounds + 10)])
            samples = round_robin(
                {
                    "search_documents hit": lambda: client.search_documents(QUERY),
                    "search_documents miss": lambda fresh=fresh: client.search_documents(next(fresh)),
                    "get_documents hit": lambda: client.get_documents([DOC]),
                    "get_documents miss": lambda: client.get_documents([DOC], refresh=True),
                },
                rounds,
                budget=8.0,
            )
            if not client.search_documents(QUERY).info.from_cache:
                raise RuntimeError("the repeated search did not come from the cache")
        picked = {}
        for name, values in samples.items():
            row = figure(f"{name} · {server} server", values, "µs", scale=1e6, server=server, kind=name)
            rows.append(row)
            picked[name] = row
        for tool in ("search_documents", "get_documents"):
            share = ratio(picked[f"{tool} hit"], picked[f"{tool} miss"])
            goals.append(goal(f"{tool}, {server} server: a hit costs < 1% of a miss",
                              f"{share:.2%}", share < 0.01))
    notes = [
        "A get_documents miss is a refresh=True fetch of one page (the fixture set is small); it includes "
        "saving the page to the offline store, as every real fetch does.",
    ]
    return {"rows": rows, "goals": goals, "notes": notes}
