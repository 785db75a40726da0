"""Security gallery of the Jupyter server extension (issue 21, items 8 and 9), through a real Jupyter server.

Bad input is one 400 in the usual ``{"error": {type, message, hint}}`` shape, never a 500: a lone surrogate
in a name or a question, a 100,000-deep JSON body, a huge body, query text that is not UTF-8. Against a slow
loopback service, status never waits behind the slow calls, excess work is refused at once with 503 (and a
``Retry-After``), and no request outlives ``c.DevKnowServer.timeout`` by its time in the queue. A page-render
worker process killed (out of memory, by hand) costs at most the page it was rendering.
"""

from __future__ import annotations

import json
import os
import signal
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.conftest import start_sdk_server, stop_process
from tests.test_labext import JupyterServer, start_jupyter_server
from tests.test_labext_responsive import big_page

DEEP = 100_000


@pytest.fixture(scope="module")
def local_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[JupyterServer]:
    """The extension over the offline index."""
    server = start_jupyter_server(tmp_path_factory.mktemp("lab-security"))
    yield server
    stop_process(server.proc)


def assert_400(server: JupyterServer, method: str, path: str, body: bytes | None = None) -> dict:
    """``method path`` is refused with a one-line ConfigurationError, and the server still answers after it."""
    status, reply, text = server.call(method, path, body)
    assert status == 400, (status, text[:300])
    error = reply["error"]
    assert set(error) == {"type", "message", "hint"} and error["type"] == "ConfigurationError", reply
    assert error["message"] and "\n" not in error["message"] and len(error["message"]) < 200, reply
    assert server.call("GET", "status")[0] == 200
    return error


@pytest.mark.parametrize(
    ("path", "body"),
    [("documents", b'{"names": ["documents/\\ud800"]}'), ("answer", b'{"query": "restrict a key \\udfff"}'),
     ("documents", b'{"names": ["documents/docs.example.dev/keys/restrict"], "\\udc00": 1}')],
)
def test_a_lone_surrogate_is_400(local_server: JupyterServer, path: str, body: bytes) -> None:
    error = assert_400(local_server, "POST", path, body)
    assert "Unicode" in error["message"]


@pytest.mark.parametrize("path", ["documents", "answer"])
def test_a_100000_deep_body_is_400(local_server: JupyterServer, path: str) -> None:
    assert_400(local_server, "POST", path, b'{"names": ' + b"[" * DEEP + b"]" * DEEP + b"}")


def test_a_deep_body_within_the_size_limit_is_400(local_server: JupyterServer) -> None:
    deep = 20_000  # 40 KB: refused for its depth, before the decoder recurses into it
    error = assert_400(local_server, "POST", "documents", b'{"names": ' + b"[" * deep + b"]" * deep + b"}")
    assert "deep" in error["message"]


def test_brackets_inside_strings_are_text_not_depth(local_server: JupyterServer) -> None:
    status, reply, _ = local_server.call("POST", "answer", {"query": "restrict an API key [[[[[[[[[[[[[[[[[[[["})
    assert status == 200 and reply["kind"] == "answer", reply


def test_a_huge_body_is_400(local_server: JupyterServer) -> None:
    names = [f"documents/docs.example.dev/page-{i}" for i in range(40_000)]  # ~1.4 MB
    error = assert_400(local_server, "POST", "documents", json.dumps({"names": names}).encode())
    assert "bytes" in error["message"]


@pytest.mark.parametrize("query", ["%ED%A0%80", "%FF%FE", "key%C0"])
def test_query_text_that_is_not_utf8_is_400(local_server: JupyterServer, query: str) -> None:
    assert_400(local_server, "GET", f"search?query={query}")


# -- a slow service: status apart, bounded waiting, deadlines that count the queue ---------------------------

DELAY, TIMEOUT, WORKERS, WAITING, FLOOD = 3.0, 5.0, 2, 4, 20


def _timed_search(server: JupyterServer, number: int) -> tuple[int, dict, float, str | None]:
    """One search of its own (no cache hit): status, reply, seconds taken and the Retry-After header."""
    request = urllib.request.Request(f"{server.base}/devknow/api/search?query=bucket+{number}&n=5")
    request.add_header("Authorization", f"token {server.token}")
    started = time.monotonic()
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            status, text, retry = response.status, response.read().decode(), None
    except urllib.error.HTTPError as exc:
        status, text, retry = exc.code, exc.read().decode(), exc.headers.get("Retry-After")
    return status, json.loads(text), time.monotonic() - started, retry


def test_a_slow_service_never_stalls_status_and_excess_work_is_refused(tmp_path: Path) -> None:
    (tmp_path / "sdk").mkdir()
    mcp = start_sdk_server(tmp_path / "sdk", "--delay", str(DELAY), "--delay-only", "search_documents")
    config = {"endpoint": mcp.url, "timeout": TIMEOUT, "workers": WORKERS, "max_waiting": WAITING}
    server = start_jupyter_server(tmp_path / "lab", config={"DevKnowServer": config})
    try:
        with ThreadPoolExecutor(FLOOD) as pool:
            searches = [pool.submit(_timed_search, server, number) for number in range(FLOOD)]
            time.sleep(0.5)  # every search has arrived; the service holds the first ones for DELAY seconds
            status_times = []
            for _ in range(10):
                started = time.monotonic()
                status, reply, _ = server.call("GET", "status")
                status_times.append(time.monotonic() - started)
                assert status == 200 and reply["backend"] == "remote", reply
                time.sleep(0.1)
            outcomes = [search.result() for search in searches]
        assert max(status_times) < 1.0, status_times  # never behind the slow calls (main: ~DELAY s)

        refused = [outcome for outcome in outcomes if outcome[0] == 503]
        admitted = [outcome for outcome in outcomes if outcome[0] != 503]
        assert len(admitted) >= WORKERS + WAITING and len(refused) >= FLOOD - 2 * (WORKERS + WAITING), outcomes
        for _, reply, seconds, retry in refused:  # refused at once, with a hint and when to come back
            assert reply["error"]["type"] == "ServerBusy" and reply["error"]["hint"], reply
            assert seconds < 2.0 and retry and int(retry) > 0
        answered = [outcome for outcome in admitted if outcome[0] == 200]
        assert answered and all(seconds >= DELAY * 0.9 for _, _, seconds, _ in answered)  # the service was slow
        for status, reply, seconds, _ in admitted:  # the deadline counts the time waiting for a worker
            assert status in (200, 504), reply
            assert seconds < TIMEOUT + 1.5, (status, seconds, reply)
        timed_out = [reply["error"] for status, reply, _, _ in admitted if status == 504]
        assert timed_out and all(error["type"] == "RequestTimeout" for error in timed_out)
        assert any("waiting for a free worker" in error["message"] for error in timed_out), timed_out

        time.sleep(DELAY)  # the calls abandoned at their deadline finish; the lanes are free again
        status, reply, seconds, _ = _timed_search(server, 999)
        assert status == 200 and reply["kind"] == "search", reply
    finally:
        stop_process(server.proc)
        mcp.stop()


# -- a render worker process killed (out of memory, by hand) ---------------------------------------------------


def render_workers(server: JupyterServer) -> list[int]:
    """The PIDs of the server's page-render worker processes (its spawned multiprocessing children)."""
    pids = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            parent = int(stat.read_text().rsplit(")", 1)[1].split()[1])
            command = (stat.parent / "cmdline").read_bytes()
        except (OSError, ValueError, IndexError):
            continue  # gone meanwhile
        if parent == server.proc.pid and b"spawn_main" in command:
            pids.append(int(stat.parent.name))
    return pids


@pytest.mark.skipif(not Path("/proc/self/stat").is_file(), reason="finds the worker processes through Linux's /proc")
def one_long_section(folder: Path) -> str:
    """A ~2 MB page that is one paragraph of links, code and emphasis: one block, so one section, and even its
    first part is a long render (a page of many blocks shows its first ones at once, done before the worker
    could be killed)."""
    folder.mkdir()
    name = "documents/docs.example.dev/big/0"
    body = "# Guide 0\n\n" + " ".join((big_page(0) + big_page(1)).replace("#", "").split())
    front = f"---\nname: {name}\nuri: https://docs.example.dev/big/0\ntitle: Guide 0\n---\n"
    (folder / "big-0.md").write_text(front + body, encoding="utf-8")
    return name


def test_a_killed_render_worker_costs_at_most_the_page_it_was_rendering(tmp_path: Path) -> None:
    big = one_long_section(tmp_path / "big")
    (tmp_path / "sdk").mkdir()
    mcp = start_sdk_server(tmp_path / "sdk", "--fetch-only", str(tmp_path / "big"))
    server = start_jupyter_server(tmp_path / "lab", config={"DevKnowServer": {"endpoint": mcp.url, "timeout": 120}})
    small = {"names": ["documents/docs.example.dev/keys/restrict"]}
    try:
        assert server.call("POST", "documents", small)[0] == 200
        workers = render_workers(server)
        assert len(workers) == 1, workers  # pages render in a worker process, not on the server's loop
        os.kill(workers[0], signal.SIGKILL)  # idle: the next page gets a new worker, and no error
        time.sleep(1.0)
        status, reply, _ = server.call("POST", "documents", small)
        assert status == 200 and reply["documents"][0]["html"], reply
        assert render_workers(server) and render_workers(server) != workers

        with ThreadPoolExecutor(1) as pool:  # killed mid-page: that page is one 503, the next one renders
            rendering = pool.submit(server.call, "POST", "documents", {"names": [big]})
            time.sleep(1.5)
            assert not rendering.done(), rendering.result()[2][:200]
            for pid in render_workers(server):
                os.kill(pid, signal.SIGKILL)
            status, reply, _ = rendering.result()
        assert status == 503 and reply["error"]["type"] == "ServerBusy", reply
        assert "stopped" in reply["error"]["message"] and reply["error"]["hint"]
        status, reply, _ = server.call("POST", "documents", {"names": [big]})
        assert status == 200 and len(reply["documents"][0]["html"]) > 1_000_000
    finally:
        stop_process(server.proc)
        mcp.stop()
