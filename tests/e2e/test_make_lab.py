"""``make lab`` opens a working copy of the quickstart with the Developer docs panel, with no key, and leaves
``git status`` as it was.

The test runs the Makefile's real ``lab`` recipe (``make lab LAB_ARGS=...``) from the checkout. So that it
does not build a virtualenv (minutes), ``VENV`` points at a folder whose ``bin/jupyter`` is this
environment's and whose install stamp is fresh, as after a first ``make lab``; the copy step and the
``jupyter lab`` command line are the recipe's own. The Jupyter config, data and runtime folders are
temporary, with our extensions enabled as ``pip install`` enables them (the shared venv of a checkout has
no shared-data files of its own). The test waits for ``/api/status``, then checks that the server serves
``.lab/`` (the working copy, not ``examples/``), that the notebook it opens is ``quickstart.ipynb`` there,
that the lab page lists the devknow-jupyter extension, and that the panel's API answers from the offline
index; then it stops the server.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from tests.conftest import ROOT, free_port
from tests.e2e.lab_server import OFFLINE_ENV, enable_devknow

COPY = ROOT / ".lab" / "quickstart.ipynb"
KEYS = ("DEVKNOW_API_KEY", "GOOGLE_API_KEY", "DEVKNOW_ENDPOINT")


def _git_status() -> str:
    return subprocess.run(["git", "status", "--porcelain"], cwd=ROOT, capture_output=True, text=True,
                          check=True).stdout


def _get(url: str, token: str) -> tuple[int, bytes]:
    request = urllib.request.Request(url, headers={"Authorization": f"token {token}"})
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def test_make_lab_serves_a_working_copy_with_the_panel_and_no_key(tmp_path: Path) -> None:
    make = shutil.which("make")
    jupyter = Path(sys.executable).with_name("jupyter")
    if make is None or not jupyter.exists() or not (ROOT / ".git").exists():
        pytest.skip("needs make, a git checkout and this environment's jupyter command")
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "jupyter").symlink_to(jupyter)
    (venv / "bin" / "python").symlink_to(sys.executable)
    (venv / ".lab-installed").touch()  # newer than pyproject.toml and the panel's sources: no reinstall
    state = tmp_path / "state"
    enable_devknow(state)
    status_before = _git_status()
    copy_existed = COPY.exists()
    copies_before = set(COPY.parent.glob("*.ipynb")) if COPY.parent.exists() else set()

    port, token = free_port(), "make-lab-test-token"
    env = {name: value for name, value in os.environ.items() if name not in KEYS}
    env.update(OFFLINE_ENV)
    env.update(
        JUPYTER_CONFIG_DIR=str(state / "config"),
        JUPYTER_DATA_DIR=str(state / "data"),
        JUPYTER_RUNTIME_DIR=str(state / "runtime"),
        JUPYTER_PLATFORM_DIRS="1",
        DEVKNOW_CACHE_DIR=str(state / "devknow-cache"),
        PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
    )
    lab_args = " ".join([
        "--no-browser", "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={port}", "--ServerApp.port_retries=0",
        f"--IdentityProvider.token={token}", "--LabApp.news_url=None",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
    ])
    log_path = tmp_path / "make-lab.log"
    with log_path.open("wb") as out:
        # Its own process group: make and the jupyter it starts are stopped together if the server won't stop.
        proc = subprocess.Popen([make, "-C", str(ROOT), "lab", f"VENV={venv}", f"LAB_ARGS={lab_args}"], env=env,
                                stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while _status(base, token) != 200:
            assert proc.poll() is None, f"make lab exited with {proc.returncode}:\n{log_path.read_text()}"
            assert time.monotonic() < deadline, f"no /api/status within 90 s:\n{log_path.read_text()}"
            time.sleep(0.3)
        make_log = log_path.read_text()
        assert "pip install" not in make_log, "make lab reinstalled although the stamp is fresh"

        # The server serves the working copy's folder; the file it opens is the copy.
        (info_file,) = (state / "runtime").glob("jpserver-[0-9]*.json")
        assert Path(json.loads(info_file.read_text())["root_dir"]) == COPY.parent
        (open_file,) = (state / "runtime").glob("jpserver-file-to-run-*-open.html")
        assert re.search(r"/lab/tree/quickstart\.ipynb\b", open_file.read_text()), open_file.read_text()
        status, body = _get(f"{base}/api/contents/quickstart.ipynb", token)
        assert status == 200
        served = json.loads(body)["content"]
        if not copy_existed:  # a fresh copy of the tracked notebook
            tracked = json.loads((ROOT / "examples" / "quickstart.ipynb").read_text(encoding="utf-8"))
            assert [cell["source"] for cell in served["cells"]] == [
                "".join(cell["source"]) for cell in tracked["cells"]
            ]

        # Every notebook the quickstart links to ("Next steps") is there beside it, as a working copy.
        linked = re.findall(r"\]\(([\w.-]+\.ipynb)\)", "".join("".join(cell["source"]) for cell in served["cells"]))
        assert set(linked) >= {"python-api.ipynb", "offline-and-serve.ipynb"}, linked
        for name in linked:
            status, body = _get(f"{base}/api/contents/{name}", token)
            assert status == 200, (name, body[:200])

        # The lab page lists the panel's extension; the panel's API answers without a key.
        status, page = _get(f"{base}/lab", token)
        assert status == 200
        config = json.loads(re.search(rb'<script id="jupyter-config-data" type="application/json">(.*?)</script>',
                                      page, re.S).group(1))
        assert "devknow-jupyter" in [extension["name"] for extension in config["federated_extensions"]]
        status, body = _get(f"{base}/devknow/api/status", token)
        assert status == 200 and json.loads(body)["backend"] == "local", body
    finally:
        _stop(proc, base, token)
        for made in set(COPY.parent.glob("*.ipynb")) - copies_before if COPY.parent.exists() else ():
            made.unlink(missing_ok=True)
        if not copy_existed and COPY.parent.exists() and not any(COPY.parent.iterdir()):
            COPY.parent.rmdir()
    assert _git_status() == status_before, "make lab changed the checkout's git status"


def _status(base: str, token: str) -> int | None:
    try:
        return _get(f"{base}/api/status", token)[0]
    except (urllib.error.URLError, OSError):
        return None


def _stop(proc: subprocess.Popen, base: str, token: str) -> None:
    """Ask the server to shut down; make then exits. Terminate the group (ours) only if it does not."""
    request = urllib.request.Request(f"{base}/api/shutdown", data=b"", method="POST",
                                     headers={"Authorization": f"token {token}"})
    try:
        urllib.request.urlopen(request, timeout=10).close()
    except (urllib.error.URLError, OSError):
        pass
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=20)
