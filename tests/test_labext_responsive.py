"""The Jupyter server never stalls (issue 25, item 2): no rendering or client call on tornado's event loop.

A real Jupyter server with the extension, over a slow loopback MCP service (``tests/servers/sdk_server.py``
with ``--delay``): while 20 searches wait on the service and 1 MB pages are being rendered for the panel one
after another, Jupyter's own ``/api/status`` answers within 100 ms at the 99th percentile and
``devknow/api/status`` within 200 ms, over a few hundred samples taken only while both kinds of load are on.
"""

from __future__ import annotations

import http.client
import json
import math
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from tests.conftest import start_sdk_server, stop_process
from tests.test_labext import JupyterServer, start_jupyter_server

DELAY = 10.0  # seconds the service holds each search: the window in which all 20 are waiting on it
SEARCHES = 20
PAGES = 6  # distinct 1 MB pages, rendered one after another (the renderer caches by content)
PAGE_BYTES = 1_000_000
MIN_SAMPLES = 150


def big_page(number: int) -> str:
    """A ~1 MB documentation page of its own: sections with prose, links, lists, tables and code."""
    sections = []
    i = 0
    while sum(map(len, sections)) < PAGE_BYTES:
        sections.append(
            f"## Step {i} of guide {number}\n\nCall `client.step_{i}()` to configure part {i}; see the "
            f"[reference](https://docs.example.dev/ref/{number}/{i}) and *the notes* on **quotas** first.\n\n"
            f"### Options for step {i}\n\n- `timeout`: seconds, default {i % 60}\n- `retries`: how often to try\n"
            f"- `region`: where part {i} runs\n\n"
            f"| option | default |\n|---|---|\n| size | {i} |\n| name | g{number} |\n\n"
            f"```python\nresult = client.step_{i}(size={i}, name='g{number}')\nprint(result)\n```\n\n"
        )
        i += 1
    return f"# Guide {number}\n\n" + "".join(sections)


def big_pages(folder: Path) -> list[str]:
    """:data:`PAGES` big pages in ``sdk_server --fetch-only`` form (served, never searched); their names."""
    folder.mkdir()
    names = []
    for number in range(PAGES):
        name = f"documents/docs.example.dev/big/{number}"
        front = f"---\nname: {name}\nuri: https://docs.example.dev/big/{number}\ntitle: Guide {number}\n---\n"
        (folder / f"big-{number}.md").write_text(front + big_page(number), encoding="utf-8")
        names.append(name)
    return names


def p99(samples: list[float]) -> float:
    """The 99th percentile (nearest rank); infinite for no samples."""
    ordered = sorted(samples)
    return ordered[math.ceil(0.99 * len(ordered)) - 1] if ordered else math.inf


class Sampler:
    """GETs on one kept-alive connection to the Jupyter server, each timed."""

    def __init__(self, server: JupyterServer) -> None:
        self.server = server
        self.connection = http.client.HTTPConnection(urllib.parse.urlsplit(server.base).netloc, timeout=60)

    def get(self, path: str) -> float:
        started = time.perf_counter()
        self.connection.request("GET", path, headers={"Authorization": f"token {self.server.token}"})
        response = self.connection.getresponse()
        response.read()
        assert response.status == 200, (path, response.status)
        return time.perf_counter() - started


def _call(server: JupyterServer, method: str, path: str, body: dict | None = None) -> int:
    """``method`` on ``devknow/api/<path>``; the reply is read whole but not decoded (the test's own CPU is
    kept off the measurement)."""
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(f"{server.base}/devknow/api/{path}", data=data, method=method)
    request.add_header("Authorization", f"token {server.token}")
    try:
        with urllib.request.urlopen(request, timeout=120) as response:
            response.read()
            return response.status
    except urllib.error.HTTPError as exc:
        return exc.code


def test_status_answers_at_once_while_slow_searches_wait_and_big_pages_render(tmp_path: Path) -> None:
    names = big_pages(tmp_path / "big")
    (tmp_path / "sdk").mkdir()
    slow = ("--delay", str(DELAY), "--delay-only", "search_documents")
    mcp = start_sdk_server(tmp_path / "sdk", *slow, "--fetch-only", str(tmp_path / "big"))
    config = {"endpoint": mcp.url, "timeout": 60, "workers": SEARCHES}  # every search at the service at once
    server = start_jupyter_server(tmp_path / "lab", config={"DevKnowServer": config})
    renders: list[list[float]] = []  # [start, end] of each page request; end is inf while it runs
    stop = threading.Event()

    def render_pages() -> None:
        for name in names:
            if stop.is_set():
                return
            renders.append([time.perf_counter(), math.inf])
            status = _call(server, "POST", "documents", {"names": [name]})
            renders[-1][1] = time.perf_counter()
            assert status == 200, status

    pool = ThreadPoolExecutor(SEARCHES + 1)
    try:
        sampler = Sampler(server)
        sampler.get("/api/status")
        sampler.get("/devknow/api/status")
        began = time.perf_counter()
        searches = [pool.submit(_call, server, "GET", f"search?query=bucket+{i}&n=5") for i in range(SEARCHES)]
        pages = pool.submit(render_pages)
        jupyter: list[tuple[float, float]] = []  # (when it was sent, seconds to the whole reply)
        devknow: list[tuple[float, float]] = []
        while time.perf_counter() < began + DELAY - 0.3:  # the service holds every search until then
            jupyter.append((time.perf_counter(), sampler.get("/api/status")))
            devknow.append((time.perf_counter(), sampler.get("/devknow/api/status")))
            time.sleep(0.03)  # a steady trickle, not a load of its own
        window_end = time.perf_counter()
        searches_pending = not any(search.done() for search in searches)
        stop.set()
        assert all(search.result() == 200 for search in searches)
        assert not pages.done() or pages.exception() is None

        def under_load(samples: list[tuple[float, float]]) -> list[float]:
            """The samples sent within the window that overlap a page request in flight."""
            return [seconds for sent, seconds in samples if began < sent < window_end
                    and any(start < sent + seconds and sent < end for start, end in renders)]

        jupyter_times, devknow_times = under_load(jupyter), under_load(devknow)
        done = [round(end - start, 2) for start, end in renders if end < math.inf]
        figures = (f"Jupyter /api/status p99 {p99(jupyter_times) * 1000:.0f} ms over {len(jupyter_times)} samples, "
                   f"devknow/api/status p99 {p99(devknow_times) * 1000:.0f} ms over {len(devknow_times)}; "
                   f"{len(renders)} page requests, done in {done} s")
        print(figures)
        assert p99(jupyter_times) < 0.100, figures
        assert p99(devknow_times) < 0.200, figures
        assert len(jupyter_times) >= MIN_SAMPLES and len(devknow_times) >= MIN_SAMPLES, figures
        assert searches_pending, "a search came back before the service's delay: the window had no slow calls"
    finally:
        stop.set()
        stop_process(server.proc)
        mcp.stop()
        pool.shutdown(wait=True)
