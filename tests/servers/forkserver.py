"""A fork server for the SDK test server: import it once, then start each server with ``os.fork()``.

Starting ``python -m tests.servers.sdk_server`` costs about 2.5 s of CPU, nearly all of it importing the MCP
SDK, uvicorn and starlette; the suite starts well over a hundred of them. This process imports them once
(single-threaded, no event loop), then forks one child per request. Each child is still a separate server
process on its own free port, with its own log, stopped by its handle (:class:`ForkedProcess`, which has
the ``subprocess.Popen`` methods the fixtures use).

Protocol (one JSON object per line): the parent writes ``{"args": [...], "log": PATH, "status": PATH}`` on
stdin; this process answers ``{"pid": N}`` on stdout. When a child exits, its exit code (``Popen`` style:
minus the signal number when killed) is written to its ``status`` file. End of stdin: the children still
running are killed and this process exits.
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import time
import traceback
from pathlib import Path
from typing import Any


def _warm_up() -> None:
    """Run a server's start-up short of serving, so that the children import nothing more themselves."""
    import uvicorn

    from tests.servers import sdk_server

    def load_only(app: Any, **options: Any) -> None:
        uvicorn.Config(app, **options).load()  # imports the protocol, loop and lifespan classes; no loop runs

    serve_for_real, uvicorn.run = uvicorn.run, load_only
    try:
        sdk_server.main(["--port", "0"])
    finally:
        uvicorn.run = serve_for_real


def _child(args: list[str], log: str) -> None:
    """In the forked child: become ``python -m tests.servers.sdk_server ARGS`` with output to ``log``."""
    code = 1
    try:
        for signum in (signal.SIGCHLD, signal.SIGTERM, signal.SIGPIPE):
            signal.signal(signum, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        _end_with_parent()
        null = os.open(os.devnull, os.O_RDONLY)
        out = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.dup2(null, 0)
        os.dup2(out, 1)
        os.dup2(out, 2)
        sys.argv = ["tests.servers.sdk_server", *args]
        from tests.servers import sdk_server

        sdk_server.main(args)
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    except BaseException:
        traceback.print_exc()
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)


def _end_with_parent() -> None:
    """Ask Linux to send SIGTERM to this server if the fork server dies first (no server is left behind)."""
    import ctypes

    pr_set_pdeathsig = 1
    ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, signal.SIGTERM)
    if os.getppid() == 1:  # the fork server died before the line above
        os._exit(1)


def _write_status(path: str, status: int) -> None:
    code = -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.waitstatus_to_exitcode(status)
    partial = f"{path}.part"
    Path(partial).write_text(str(code))
    os.replace(partial, path)  # the reader never sees a half-written file


def serve() -> None:
    """Answer start requests on stdin until it closes."""
    _warm_up()
    children: dict[int, str] = {}
    stdin = sys.stdin.buffer
    print(json.dumps({"ready": True}), flush=True)
    while True:
        readable, _, _ = select.select([stdin], [], [], 0.02)
        while children:  # reap promptly: ForkedProcess.wait() waits for the status file
            pid, status = os.waitpid(-1, os.WNOHANG)
            if pid == 0:
                break
            if pid in children:
                _write_status(children.pop(pid), status)
        if not readable:
            continue
        line = stdin.readline()
        if not line:
            break
        request = json.loads(line)
        pid = os.fork()
        if pid == 0:
            _child(request["args"], request["log"])
        children[pid] = request["status"]
        print(json.dumps({"pid": pid}), flush=True)
    for pid in children:
        os.kill(pid, signal.SIGKILL)
    for pid, path in children.items():
        _write_status(path, os.waitpid(pid, 0)[1])


class ForkedProcess:
    """A server forked by the fork server, with the ``Popen`` methods the fixtures use.

    Signals go through a pidfd (never to a reused pid); the exit code comes from the fork server, which
    is the child's parent and reaps it.
    """

    def __init__(self, pid: int, status_path: Path, args: list[str]) -> None:
        self.pid = pid
        self.args = args
        self.returncode: int | None = None
        self._status = status_path
        self._pidfd: int | None = os.pidfd_open(pid)

    def __del__(self) -> None:
        if self._pidfd is not None:
            os.close(self._pidfd)
            self._pidfd = None

    def _exited(self, timeout: float | None) -> bool:
        assert self._pidfd is not None
        return bool(select.select([self._pidfd], [], [], timeout)[0])

    def _collect(self) -> int:
        end = time.monotonic() + 10
        while not self._status.exists() and time.monotonic() < end:
            time.sleep(0.005)
        self.returncode = int(self._status.read_text()) if self._status.exists() else -signal.SIGKILL
        if self._pidfd is not None:
            os.close(self._pidfd)
            self._pidfd = None
        return self.returncode

    def poll(self) -> int | None:
        """The exit code, or None while it runs."""
        if self.returncode is None and self._exited(0):
            self._collect()
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        """Wait for the exit; ``subprocess.TimeoutExpired`` after ``timeout`` seconds."""
        if self.returncode is None:
            if not self._exited(timeout):
                raise subprocess.TimeoutExpired(self.args, timeout or 0)
            self._collect()
        return self.returncode  # type: ignore[return-value]

    def send_signal(self, signum: int) -> None:
        """Send ``signum`` unless it has already exited."""
        if self.returncode is None and self._pidfd is not None:
            try:
                signal.pidfd_send_signal(self._pidfd, signum)
            except ProcessLookupError:
                pass

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


class ForkServer:
    """The parent's end: starts the fork server process and asks it for servers."""

    def __init__(self, root: Path) -> None:
        self._proc = subprocess.Popen(
            [sys.executable, "-m", "tests.servers.forkserver"], cwd=root, stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
        )
        ready = self._proc.stdout.readline()  # type: ignore[union-attr]
        if not ready:
            raise RuntimeError(f"the fork server exited with {self._proc.wait()}")

    def start(self, args: list[str], log: Path, command: list[str]) -> ForkedProcess:
        """Fork a server with ``args`` (the sdk_server's options); its output goes to ``log``."""
        status = log.with_name(f"{log.name}.exit")
        request: dict[str, Any] = {"args": args, "log": str(log), "status": str(status)}
        self._proc.stdin.write(json.dumps(request).encode() + b"\n")  # type: ignore[union-attr]
        self._proc.stdin.flush()  # type: ignore[union-attr]
        reply = self._proc.stdout.readline()  # type: ignore[union-attr]
        if not reply:
            raise RuntimeError(f"the fork server exited with {self._proc.wait()}")
        return ForkedProcess(json.loads(reply)["pid"], status, command)

    def close(self) -> None:
        """End the fork server (it kills the servers still running)."""
        if self._proc.poll() is None:
            self._proc.stdin.close()  # type: ignore[union-attr]
            try:
                self._proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()


if __name__ == "__main__":
    serve()
