"""Start the benchmark's MCP servers on 127.0.0.1 as subprocesses (free port, stopped by handle).

The SDK test server is started with the test suite's own helper (``tests/conftest.py``
``start_sdk_server``) so the bench and the tests run the same server the same way.
"""

from __future__ import annotations

import contextlib
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

from tests.conftest import ROOT, RunningServer, free_port, start_sdk_server, wait_for_port

__all__ = ["RunningServer", "running", "start_fast_server", "start_sdk_server"]


def start_fast_server(tmp_path: Path, *extra: str) -> RunningServer:
    """Start :mod:`bench.fast_server` with ``extra`` arguments on a free port."""
    port = free_port()
    log = tmp_path / f"fast-server-{port}.log"
    args = [sys.executable, "-m", "bench.fast_server", "--port", str(port), *extra]
    with log.open("wb") as out:
        proc = subprocess.Popen(args, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    wait_for_port(port, proc, log)
    return RunningServer(f"http://127.0.0.1:{port}/mcp", proc, log, tmp_path / "none.jsonl", args)


@contextlib.contextmanager
def running(kind: str, tmp_path: Path, *extra: str) -> Iterator[RunningServer]:
    """A server (``"sdk"`` or ``"fast"``) for the duration of a ``with`` block."""
    start = start_sdk_server if kind == "sdk" else start_fast_server
    server = start(tmp_path, *extra)
    try:
        yield server
    finally:
        server.stop()
