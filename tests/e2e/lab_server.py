"""A real JupyterLab and headless Chromium for the browser tests and the browser bench.

The server runs from this interpreter (``sys.executable -m jupyterlab``), so the server and its ipykernel
come from the test's environment. All Jupyter state lives in a temporary folder: no layout, settings or
kernels of the user's leak in, and the notebook served is a copy, never the committed file (JupyterLab
autosaves open documents). :func:`enable_devknow` makes that server load our extensions as a ``pip
install`` would; :func:`browser_page` opens headless Chromium with the recipe's flags and records console
errors, page errors and every request that would leave 127.0.0.1.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT, stop_process

#: Screenshots, console logs and timings of the browser tests (git-ignored).
ARTIFACTS = ROOT / "test-artifacts" / "e2e"
#: Chromium's flags for a headless, offline run (no sync, no component updates, no QUIC).
LAUNCH_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",  # Docker's /dev/shm is 64 MB; Debian's wrapper check for it is unreliable
]
LONG = 60_000  # ms: kernel start, first search (builds the offline index), widget rendering
#: No internet for the kernel either: any HTTP(S) attempt goes to a closed loopback port.
OFFLINE_ENV = {
    "HTTP_PROXY": "http://127.0.0.1:9",
    "HTTPS_PROXY": "http://127.0.0.1:9",
    "NO_PROXY": "127.0.0.1,localhost",
}
NPM_NAME = "devknow-jupyter"
ENABLE_FILE = ROOT / "labextension" / "jupyter-config" / "server" / "devknow_jupyter.labext.json"

# Page-side helpers, evaluated in the browser (the app is exposed by --LabApp.expose_app_in_browser).
KERNEL_IDLE = """() => {
  const w = window.jupyterapp?.shell.currentWidget;
  return w?.sessionContext?.session?.kernel?.status === 'idle';
}"""
ALL_CELLS_RAN = """() => {
  const w = window.jupyterapp.shell.currentWidget;
  const cells = w?.content?.widgets ?? [];
  const code = cells.filter(c => c.model.type === 'code');
  return code.length > 0 && code.every(c => c.model.executionCount !== null)
    && w.sessionContext.session.kernel.status === 'idle';
}"""

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


def start_lab(root: Path, state: Path, *, env: dict[str, str] | None = None, service: dict[str, str] | None = None,
              extra_args: tuple[str, ...] = (), deadline: float = 60.0, app: str = "lab") -> LabServer:
    """Start JupyterLab (``app="notebook"``: Notebook 7) serving ``root`` on a free loopback port, with all its
    state under ``state``.

    The key and endpoint variables of ``env`` are dropped (the page must never reach a live service);
    ``service`` sets them again for a test service on 127.0.0.1. ``extra_args`` go to JupyterLab as they are.
    """
    for sub in ("config", "data", "runtime", "workspaces"):
        (state / sub).mkdir(parents=True, exist_ok=True)
    settings = state / "settings" / "@jupyterlab" / "apputils-extension"
    settings.mkdir(parents=True, exist_ok=True)
    (settings / "notification.jupyterlab-settings").write_text(json.dumps(_NOTIFICATION_SETTINGS))

    port, token = _free_port(), secrets.token_hex(16)
    run_env = dict(os.environ if env is None else env)
    for variable in _KEY_VARIABLES:
        run_env.pop(variable, None)  # the page must show the offline backend, never a live service
    run_env.update(service or {})
    run_env.update(
        JUPYTER_CONFIG_DIR=str(state / "config"),
        JUPYTER_DATA_DIR=str(state / "data"),
        JUPYTER_RUNTIME_DIR=str(state / "runtime"),
        JUPYTER_PLATFORM_DIRS="1",
    )
    # Notebook 7 is JupyterLab's application server too, with its own app class (no news, no update check).
    frontend = "JupyterNotebookApp" if app == "notebook" else "LabApp"
    args = [
        sys.executable,
        "-m",
        "notebook" if app == "notebook" else "jupyterlab",
        "--no-browser",
        "--ServerApp.ip=127.0.0.1",
        f"--ServerApp.port={port}",
        "--ServerApp.port_retries=0",
        f"--IdentityProvider.token={token}",
        f"--ServerApp.root_dir={root}",
        f"--{frontend}.user_settings_dir={state / 'settings'}",
        f"--{frontend}.workspaces_dir={state / 'workspaces'}",
        f"--{frontend}.expose_app_in_browser=True",
    ]
    if app != "notebook":
        args += [
            "--LabApp.news_url=None",
            "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
            "--LabApp.extension_manager=readonly",
        ]
    args += extra_args
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


def find_chromium() -> str | None:
    """Chromium's executable (``$DEVKNOW_CHROMIUM``, else ``chromium`` on PATH), or None."""
    return os.environ.get("DEVKNOW_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")


def chromium() -> str:
    """Chromium's executable; skips the test where it is absent (fails in CI, where it must be there)."""
    path = find_chromium()
    if path:
        return path
    reason = "Chromium is not installed (Debian: apt-get install chromium, or `make browser`)"
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"{reason}; the browser test must run in CI")
    pytest.skip(reason)


def devknow_bundle() -> Path | None:
    """The built JupyterLab extension: in this environment's share dir, else in the checkout."""
    for folder in (Path(sys.prefix) / "share" / "jupyter" / "labextensions" / NPM_NAME,
                   ROOT / "devknow_jupyter" / "labextension"):
        if (folder / "package.json").is_file() and (folder / "static").is_dir():
            return folder
    return None


def enable_devknow(state: Path) -> None:
    """Make the server under ``state`` load our server extension and the panel, as ``pip install`` does.

    The enable file goes into the server's own config dir; the bundle is taken from this environment
    (``share/jupyter/labextensions/devknow-jupyter``, where the wheel puts it) or, in a checkout whose
    environment lacks it (a shared venv), the one built in ``devknow_jupyter/labextension`` is linked into the
    test's Jupyter data dir.
    """
    bundle = devknow_bundle()
    if bundle is None:
        pytest.fail("The JupyterLab extension is not built: `pip install -e .` builds it (make test does).")
    enable = state / "config" / "jupyter_server_config.d"
    enable.mkdir(parents=True, exist_ok=True)
    shutil.copy(ENABLE_FILE, enable / ENABLE_FILE.name)
    if not str(bundle).startswith(sys.prefix):
        (state / "data" / "labextensions").mkdir(parents=True, exist_ok=True)
        (state / "data" / "labextensions" / NPM_NAME).symlink_to(bundle, target_is_directory=True)


@dataclass
class PageLog:
    """What a page reported: console messages, uncaught page errors, and requests that left 127.0.0.1."""

    console: list[dict[str, str]] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)
    outside: list[str] = field(default_factory=list)

    def watch(self, page: Any) -> None:
        """Record ``page``'s console, page errors and non-loopback requests (call before ``goto``)."""
        page.on("console", lambda msg: self.console.append({"type": msg.type, "text": msg.text}))
        page.on("pageerror", lambda exc: self.page_errors.append(str(exc)))
        page.on("request", lambda req: None if req.url.startswith(("http://127.0.0.1", "data:", "blob:"))
                else self.outside.append(req.url))

    def errors(self, *harmless: str) -> list[str]:
        """Console errors, less those that start with one of ``harmless`` (known, named, not ours)."""
        return [entry["text"] for entry in self.console
                if entry["type"] == "error" and not entry["text"].startswith(harmless)]


@contextlib.contextmanager
def browser_page(name: str, *, width: int = 1280, height: int = 900, clipboard_origin: str | None = None,
                 artifacts: Path | None = ARTIFACTS, executable: str | None = None) -> Iterator[tuple[Any, PageLog]]:
    """A new page in headless Chromium and its :class:`PageLog`, for one ``with`` block.

    On an exception a screenshot ``<name>-failure.png`` is kept; the log goes to ``<name>-console.json``
    (both under ``artifacts``; None keeps nothing, as the bench does). ``executable`` defaults to
    :func:`chromium`, which skips the test where Chromium is absent.
    """
    executable = executable or chromium()
    from playwright.sync_api import sync_playwright

    log = PageLog()
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, headless=True, args=LAUNCH_ARGS)
        context = browser.new_context(viewport={"width": width, "height": height})
        if clipboard_origin:
            context.grant_permissions(["clipboard-read", "clipboard-write"], origin=clipboard_origin)
        page = context.new_page()
        log.watch(page)
        try:
            yield page, log
        except BaseException:
            if artifacts is not None:
                artifacts.mkdir(parents=True, exist_ok=True)
                page.screenshot(path=str(artifacts / f"{name}-failure.png"))
            raise
        finally:
            if artifacts is not None:
                artifacts.mkdir(parents=True, exist_ok=True)
                (artifacts / f"{name}-console.json").write_text(json.dumps(
                    {"console": log.console, "page_errors": log.page_errors, "outside": log.outside}, indent=2))
            context.close()
            browser.close()


def open_notebook(page: Any, url: str) -> None:
    """Open ``url`` (a notebook under /lab/tree) and wait until JupyterLab and the notebook's kernel are ready."""
    page.goto(url)
    page.wait_for_function("() => !!window.jupyterapp", timeout=LONG)
    page.wait_for_function(KERNEL_IDLE, timeout=LONG)


def run_all(page: Any) -> None:
    """Run every cell of the current notebook and wait until each has run and the kernel is idle."""
    page.evaluate("window.jupyterapp.commands.execute('notebook:run-all-cells')")
    page.wait_for_function(ALL_CELLS_RAN, timeout=3 * LONG, polling=250)
