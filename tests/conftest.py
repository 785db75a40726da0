"""Shared fixtures: real MCP servers on 127.0.0.1, an isolated cache directory, a clean shared cache."""

from __future__ import annotations

import atexit
import dataclasses
import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
FIXTURE_DOCS = ROOT / "tests" / "fixtures" / "docs"
SHARED_CORPUS = ROOT.parent / "shared" / "corpus"


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_for_port(port: int, proc: subprocess.Popen, log: Path, deadline: float = 20.0) -> None:
    """Block until something accepts connections on ``port``; fail with the server's log if it died."""
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode}:\n{log.read_text(errors='replace')}")
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    proc.kill()
    raise RuntimeError(f"server did not start within {deadline}s:\n{log.read_text(errors='replace')}")


def stop_process(proc: subprocess.Popen, timeout: float = 10) -> int:
    """Stop a server we started: SIGTERM, then SIGKILL if it does not exit in ``timeout`` seconds."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=timeout)
    return proc.returncode


@dataclass
class RunningServer:
    """A server subprocess: its URL, its call log, and how to stop it."""

    url: str
    proc: Any  # a subprocess.Popen, or a tests.servers.forkserver.ForkedProcess
    log_path: Path
    calls_path: Path
    args: list[str] = field(default_factory=list)

    def calls(self, tool: str | None = None) -> list[dict]:
        """The tool calls the server has seen (``{"tool", "arguments"}``), optionally for one tool."""
        if not self.calls_path.exists():
            return []
        rows = [json.loads(line) for line in self.calls_path.read_text().splitlines() if line.strip()]
        return [row for row in rows if tool is None or row["tool"] == tool]

    def stop(self) -> None:
        stop_process(self.proc)


_fork_server: Any = None
_fork_lock = threading.Lock()


def _forked(options: list[str], log: Path, command: list[str]) -> Any:
    """The server forked from the pre-imported fork server, or None where there is none (see start_sdk_server)."""
    global _fork_server
    if os.environ.get("DEVKNOW_TEST_FORK", "1") == "0" or not hasattr(os, "pidfd_open"):
        return None
    from tests.servers.forkserver import ForkServer

    with _fork_lock:
        if _fork_server is None:
            _fork_server = ForkServer(ROOT)
            atexit.register(_fork_server.close)
        return _fork_server.start(options, log, command)


def start_sdk_server(tmp_path: Path, *extra: str) -> RunningServer:
    """Start ``tests/servers/sdk_server.py`` with ``extra`` arguments on a free port.

    Forked from a process that has imported the server already (``tests/servers/forkserver.py``: 2.5 s of CPU
    less per server); ``DEVKNOW_TEST_FORK=0`` starts each one with ``python -m`` instead.
    """
    port = free_port()
    log = tmp_path / f"server-{port}.log"
    calls = tmp_path / f"calls-{port}.jsonl"
    options = ["--port", str(port), "--log", str(calls), *extra]
    args = [sys.executable, "-m", "tests.servers.sdk_server", *options]
    proc = _forked(options, log, args)
    if proc is None:
        with log.open("wb") as out:
            proc = subprocess.Popen(args, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    wait_for_port(port, proc, log)
    return RunningServer(f"http://127.0.0.1:{port}/mcp", proc, log, calls, args)


@pytest.fixture
def sdk_server_factory(tmp_path: Path) -> Iterator:
    """Start SDK test servers with any options; all are stopped after the test."""
    servers: list[RunningServer] = []

    def start(*extra: str) -> RunningServer:
        server = start_sdk_server(tmp_path, *extra)
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()


@pytest.fixture(scope="session")
def sdk_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    """One SDK test server (SSE mode, with sessions) shared by the whole session."""
    server = start_sdk_server(tmp_path_factory.mktemp("sdk-server"))
    yield server
    server.stop()


@pytest.fixture(autouse=True)
def _isolated_state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Keep tests off the user's cache dir, keys and endpoint; start each test with an empty shared cache."""
    monkeypatch.setenv("DEVKNOW_CACHE_DIR", str(tmp_path / "devknow-cache"))
    monkeypatch.setenv("IPYTHONDIR", str(tmp_path / "ipython"))
    monkeypatch.setenv("DEVKNOW_SEMANTIC", "0")  # rank lexically unless a test asks for the semantic extra
    for variable in ("DEVKNOW_API_KEY", "GOOGLE_API_KEY", "DEVKNOW_ENDPOINT"):
        monkeypatch.delenv(variable, raising=False)
    from devknow_jupyter.cache import shared_cache

    shared_cache().clear()


@pytest.fixture
def closed_port_url() -> str:
    """A URL on a port that was free a moment ago: connecting is refused (an unreachable service)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/mcp"


@pytest.fixture
def corpus_dir() -> Path:
    """The shared corpus of real documentation, or skip where it is absent (e.g. a user's machine)."""
    if not SHARED_CORPUS.is_dir() and not os.environ.get("DEVKNOW_CORPUS"):
        pytest.skip("../shared/corpus is not present")
    return Path(os.environ.get("DEVKNOW_CORPUS", SHARED_CORPUS))


@pytest.fixture
def ip() -> Iterator:
    """A fresh IPython shell with devknow_jupyter loaded; torn down completely afterwards."""
    import atexit

    from IPython.core.interactiveshell import InteractiveShell

    from devknow_jupyter import display, errors

    saved = dataclasses.asdict(display.options)  # %config DevKnowMagics.* writes these process-wide
    InteractiveShell.clear_instance()
    shell = InteractiveShell.instance()
    shell.run_line_magic("load_ext", "devknow_jupyter")
    yield shell
    shell.run_line_magic("unload_ext", "devknow_jupyter")
    errors.set_short_errors(True)
    for name, value in saved.items():
        setattr(display.options, name, value)
    shell.atexit_operations()
    atexit.unregister(shell.atexit_operations)
    InteractiveShell.clear_instance()


@pytest.fixture
def static_ip(ip) -> Iterator:
    """``ip`` with the magics' session on the in-process StaticBackend over the fixture pages: no server, no
    socket, for tests of what the magics show rather than of the wire. The backends built are in ``.backends``."""
    from devknow_jupyter.testing import StaticBackend

    documents = fixture_documents()
    backends: list[StaticBackend] = []

    def make() -> StaticBackend:
        backends.append(StaticBackend(documents))
        return backends[-1]

    ip.magics_manager.registry["DevKnowMagics"].session.configure(backend=make)
    ip.backends = backends
    yield ip


def fixture_documents() -> list[dict[str, str]]:
    """The fixture pages in the service's shape, read from their front matter (for the in-process backend)."""
    from devknow_jupyter.local.frontmatter import split_front_matter

    pages = []
    for path in sorted(FIXTURE_DOCS.glob("*.md")):
        page = split_front_matter(path.read_text(encoding="utf-8"))
        fields = {key: page.get(key) for key in ("name", "uri", "title", "description")}
        pages.append({**fields, "content": page.body})
    return pages


@pytest.hookimpl(optionalhook=True)  # a hook of pytest-xdist, which may not be installed
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """With ``pytest -n 2`` (make test), each test file runs on one worker, so that its module fixtures (a built
    wheel, a benchmark run, a JupyterLab) are made once, not once per worker; the browser tests (tests/e2e)
    run on one worker, one after another, as two JupyterLabs and Chromiums at once only slow each other down.
    (``--dist loadgroup`` would do it with markers, but pytest 9.2 ignores the node ids xdist 3.8 rewrites.)"""
    if config.getvalue("dist") != "load":  # an explicit --dist choice wins
        return None
    from xdist.scheduler import LoadScopeScheduling

    # In collection order the longest files (tests/e2e, test_bench, test_binder) start first; xdist's default
    # order (files with most tests first) left them to the end, with one worker idle meanwhile.
    config.option.loadscopereorder = False

    class ByFile(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            path = nodeid.split("::", 1)[0]
            return "tests/e2e" if path.startswith("tests/e2e/") else path

    return ByFile(config, log)
