"""Scenario 9: knowledge packs with the shared corpus (``bench/bench_packs.py`` without its serve part):
``pack build`` of the 2,502 pages from the shipped recipes, ``pack add`` into an empty default index, and
local search p50/p95 with the pack installed. Skipped without ``../shared/corpus``.
"""

from __future__ import annotations

import os
from typing import Any

from bench.scenarios import Context, goal

TITLE = "9. Knowledge packs: pack build, pack add and local search with the shared-corpus pack"
#: Issue 25's floor (item 4).
GOALS = {"search_p50_ms": 5.0, "search_p95_ms": 10.0, "add_seconds": 3.0, "build_seconds": 30.0}


def run(ctx: Context) -> dict[str, Any]:
    """Build, add and search once (a build takes tens of seconds: one sample each, no repetitions)."""
    from bench import bench_packs

    if ctx.quick:
        return {"status": "skipped", "reason": "quick mode: a pack build takes about a minute; run the full bench"}
    saved = {name: os.environ.get(name) for name in ("DEVKNOW_CACHE_DIR", "DEVKNOW_SEMANTIC")}
    try:
        result = bench_packs.run(quick=ctx.quick, serve=False)
    finally:  # bench_packs points the cache at its own folder: the next scenarios keep theirs
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
    if result is None:
        return {"status": "skipped", "reason": "../shared/corpus is not on this machine"}
    rows = [
        {"label": "pack build (5 sources)", "median": result["build_seconds"], "q1": result["build_seconds"],
         "q3": result["build_seconds"], "p5": result["build_seconds"], "p95": result["build_seconds"], "n": 1,
         "unit": "s", "note": f"{result['pages']:,} pages, {result['pack_mb']} MB"},
        {"label": "pack add (into an empty index)", "median": result["add_seconds"], "q1": result["add_seconds"],
         "q3": result["add_seconds"], "p5": result["add_seconds"], "p95": result["add_seconds"], "n": 1, "unit": "s"},
        {"label": f"local search with the pack ({result['search_queries']} queries), p50 and p95",
         "median": result["search_p50_ms"], "q1": result["search_p50_ms"], "q3": result["search_p95_ms"],
         "p5": result["search_p50_ms"], "p95": result["search_p95_ms"], "n": result["search_queries"], "unit": "ms"},
    ]
    p50, p95 = result["search_p50_ms"], result["search_p95_ms"]
    goals = [
        goal(f"search p50 < {GOALS['search_p50_ms']:g} ms and p95 < {GOALS['search_p95_ms']:g} ms with the pack",
             f"p50 {p50} ms, p95 {p95} ms", p50 < GOALS["search_p50_ms"] and p95 < GOALS["search_p95_ms"]),
        goal(f"pack add < {GOALS['add_seconds']:g} s", f"{result['add_seconds']} s",
             result["add_seconds"] < GOALS["add_seconds"]),
        goal(f"pack build of the {result['pages']:,} pages < {GOALS['build_seconds']:g} s",
             f"{result['build_seconds']} s", result["build_seconds"] < GOALS["build_seconds"]),
    ]
    return {"rows": rows, "goals": goals, "notes": ["One sample each (a build takes tens of seconds); see "
                                                     "`python -m bench.bench_packs` for serving figures."]}
