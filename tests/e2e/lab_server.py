"""Start and stop a real JupyterLab server for the browser test (recipe: shared notes, browser-e2e.md).

The server runs from this interpreter (``sys.executable -m jupyterlab``), so the server and its ipykernel
come from the test's environment. All Jupyter state lives in a temporary folder: no layout, settings or
kernels of the user's leak in, and the notebook served is a copy, never the committed file (JupyterLab
autosaves open documents).
"""

from __future__ import annotations

import json
import os
import secrets
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from tests.conftest import stop_process

# JupyterLab asks to fetch news and checks for updates; both would go online and show toasts.
_NOTIFICATION_SETTINGS = {"fetchNews": "false", "checkForUpdates": False}
_KEY_VARIABLES = ("DEVKNOW_API_KEY", "GOOGLE_API_KEY", "DEVKNOW_ENDPOINT")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class LabServer:
    """A running JupyterLab: its base URL and token, the process handle and its log."""

    base: str
    token: str
    proc: subprocess.Popen
    log_path: Path

    def url(self, path: str) -> str:
        """``path`` under the server, with the token in the query (which also sets the auth cookie)."""
        return f"{self.base}/{path.lstrip('/')}?token={self.token}"

    def log(self) -> str:
        """The server's output so far."""
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def shutdown(self) -> int:
        """Ask the server to stop (``POST /api/shutdown``); terminate, then kill, if it doesn't."""
        if self.proc.poll() is None:
            request = urllib.request.Request(
                f"{self.base}/api/shutdown",
                data=b"",
                method="POST",
                headers={"Authorization": f"token {self.token}"},
            )
            try:
                urllib.request.urlopen(request, timeout=10).close()
            except (urllib.error.URLError, OSError):
                pass
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                stop_process(self.proc)
        return self.proc.returncode


def start_lab(root: Path, state: Path, *, env: dict[str, str] | None = None, deadline: float = 60.0) -> LabServer:
    """Start JupyterLab serving ``root`` on a free loopback port, with all its state under ``state``."""
    for sub in ("config", "data", "runtime", "workspaces"):
        (state / sub).mkdir(parents=True, exist_ok=True)
    settings = state / "settings" / "@jupyterlab" / "apputils-extension"
    settings.mkdir(parents=True, exist_ok=True)
    (settings / "notification.jupyterlab-settings").write_text(json.dumps(_NOTIFICATION_SETTINGS))

    port, token = _free_port(), secrets.token_hex(16)
    run_env = dict(os.environ if env is None else env)
    for variable in _KEY_VARIABLES:
        run_env.pop(variable, None)  # the page must show the offline backend, never a live service
    run_env.update(
        JUPYTER_CONFIG_DIR=str(state / "config"),
        JUPYTER_DATA_DIR=str(state / "data"),
        JUPYTER_RUNTIME_DIR=str(state / "runtime"),
        JUPYTER_PLATFORM_DIRS="1",
    )
    args = [
        sys.executable,
        "-m",
        "jupyterlab",
        "--no-browser",
        "--ServerApp.ip=127.0.0.1",
        f"--ServerApp.port={port}",
        "--ServerApp.port_retries=0",
        f"--IdentityProvider.token={token}",
        f"--ServerApp.root_dir={root}",
        f"--LabApp.user_settings_dir={state / 'settings'}",
        f"--LabApp.workspaces_dir={state / 'workspaces'}",
        "--LabApp.expose_app_in_browser=True",
        "--LabApp.news_url=None",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
        "--LabApp.extension_manager=readonly",
    ]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        args.append("--ServerApp.allow_root=True")  # CI containers run as root
    log_path = state / "jupyterlab.log"
    with log_path.open("wb") as out:
        # stdin=DEVNULL: with a terminal on stdin the server would ask before shutting down.
        proc = subprocess.Popen(
            args, cwd=root, env=run_env, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL
        )
    server = LabServer(f"http://127.0.0.1:{port}", token, proc, log_path)
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        if proc.poll() is not None:
            raise RuntimeError(f"JupyterLab exited with {proc.returncode}:\n{server.log()}")
        request = urllib.request.Request(f"{server.base}/api/status", headers={"Authorization": f"token {token}"})
        try:
            with urllib.request.urlopen(request, timeout=2) as response:
                if response.status == 200:
                    return server
        except (urllib.error.URLError, OSError):
            pass
        time.sleep(0.2)
    server.shutdown()
    raise RuntimeError(f"JupyterLab did not answer within {deadline:.0f}s:\n{server.log()}")
