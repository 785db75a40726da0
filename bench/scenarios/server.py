"""Scenario 10: the Jupyter server never stalls (issue 25, item 2).

A real Jupyter server with the extension over a slow loopback MCP service (``tests/servers/sdk_server.py``
``--delay``): while 20 searches wait on the service and 1 MB pages are asked for the panel one after another,
Jupyter's own ``/api/status`` and ``devknow/api/status`` are sampled on a kept-alive connection; the figures
are the samples taken while both loads were on. The same set-up as ``tests/test_labext_responsive.py``,
whose helpers it uses.
"""

from __future__ import annotations

import math
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from bench.scenarios import Context, goal
from bench.stats import figure

TITLE = "10. The Jupyter server under load: /api/status while 20 searches wait and 1 MB pages render"
SEARCHES = 20


def run(ctx: Context) -> dict[str, Any]:
    """Sample both status endpoints during the load; p99 against the issue's goals."""
    from tests.conftest import start_sdk_server, stop_process
    from tests.test_labext import start_jupyter_server
    from tests.test_labext_responsive import Sampler, _call, big_pages, p99

    delay = 4.0 if ctx.quick else 10.0
    names = big_pages(ctx.tmp / "big")
    (ctx.tmp / "sdk").mkdir()
    mcp = start_sdk_server(ctx.tmp / "sdk", "--delay", str(delay), "--delay-only", "search_documents",
                           "--fetch-only", str(ctx.tmp / "big"))
    config = {"endpoint": mcp.url, "timeout": 60, "workers": SEARCHES + 2}  # room for the page requests too
    server = start_jupyter_server(ctx.tmp / "lab", config={"DevKnowServer": config})
    renders: list[list[float]] = []
    stop = threading.Event()

    def pages() -> None:
        for name in names * 3:
            if stop.is_set():
                return
            renders.append([time.perf_counter(), math.inf])
            _call(server, "POST", "documents", {"names": [name]})
            renders[-1][1] = time.perf_counter()

    pool = ThreadPoolExecutor(SEARCHES + 1)
    try:
        sampler = Sampler(server)
        sampler.get("/api/status")
        sampler.get("/devknow/api/status")
        began = time.perf_counter()
        for i in range(SEARCHES):
            pool.submit(_call, server, "GET", f"search?query=bucket+{i}&n=5")
        pool.submit(pages)
        samples: dict[str, list[tuple[float, float]]] = {"jupyter": [], "devknow": []}
        while time.perf_counter() < began + delay - 0.3:
            samples["jupyter"].append((time.perf_counter(), sampler.get("/api/status")))
            samples["devknow"].append((time.perf_counter(), sampler.get("/devknow/api/status")))
            time.sleep(0.03)
        window_end = time.perf_counter()
    finally:
        stop.set()
        stop_process(server.proc)
        mcp.stop()
        pool.shutdown(wait=False, cancel_futures=True)

    def under_load(kind: str) -> list[float]:
        return [seconds for sent, seconds in samples[kind] if began < sent < window_end
                and any(start < sent + seconds and sent < end for start, end in renders)]

    jupyter, devknow = under_load("jupyter"), under_load("devknow")
    if not jupyter or not devknow:
        raise RuntimeError("no sample overlapped a page request: the load never ran")
    done = [end - start for start, end in renders if end < math.inf]
    rows = [figure("Jupyter /api/status under load", jupyter, "ms", scale=1e3, note=f"p99 {p99(jupyter) * 1e3:.0f} ms"),
            figure("devknow/api/status under load", devknow, "ms", scale=1e3, note=f"p99 {p99(devknow) * 1e3:.0f} ms")]
    if done:
        rows.append(figure("a 1 MB page for the panel (documents reply), meanwhile", done, "ms", scale=1e3))
    goals = [goal("Jupyter /api/status p99 < 100 ms (20 slow searches + 1 MB pages)", f"{p99(jupyter) * 1e3:.0f} ms",
                  p99(jupyter) < 0.100),
             goal("devknow/api/status p99 < 200 ms (same load)", f"{p99(devknow) * 1e3:.0f} ms", p99(devknow) < 0.200)]
    notes = [f"{SEARCHES} searches held {delay:g} s each by the service; {len(renders)} page requests; "
             f"{len(jupyter)} and {len(devknow)} samples taken while both loads were on."]
    return {"rows": rows, "goals": goals, "notes": notes}
