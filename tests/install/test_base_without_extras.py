"""A base install (no extras) works: this environment, with every package outside the core dependencies made
unimportable (``tests/install/core.py``'s sitecustomize), runs the Python API, the CLI and the magics.

The quick guard for what ``test_install_shapes.py`` checks in real virtualenvs: an import of an extra's module
at base level (``requests`` through ``rest/``, ``mcp``, ``jupyter_server``, ...) fails here in seconds. The
servers the steps talk to run unblocked, in this process (the MCP test server in its own).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import FIXTURE_DOCS, ROOT, RunningServer, free_port
from tests.install.core import write_blocker

PROBE = Path(__file__).with_name("probe.py")
DEVKNOW = Path(sys.executable).with_name("devknow")


@pytest.fixture
def base_env(tmp_path: Path) -> dict[str, str]:
    """The environment of a process that sees only the core dependencies (and this checkout's package)."""
    blocker = write_blocker(tmp_path / "blocker")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(blocker.parent), str(ROOT)])}
    env.pop("DEVKNOW_SEMANTIC")  # as a user has it: semantic ranking is on when its extra is there (it is not)
    return env


def run(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(args, capture_output=True, text=True, env=env, cwd=cwd, timeout=120)


def probe(step: str, *args: str, env: dict[str, str], cwd: Path) -> dict:
    result = run([sys.executable, str(PROBE), step, *args], env, cwd)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.splitlines()[-1])


def test_the_blocker_really_hides_the_extras(base_env: dict[str, str], tmp_path: Path) -> None:
    code = "import importlib.util as u; import requests"
    result = run([sys.executable, "-c", code], base_env, tmp_path)
    assert result.returncode == 1 and "No module named 'requests' (not a core dependency)" in result.stderr


def test_python_api_offline_live_and_fallback(
    base_env: dict[str, str], tmp_path: Path, sdk_server: RunningServer, closed_port_url: str
) -> None:
    seen = probe("api", sdk_server.url, closed_port_url, env=base_env, cwd=tmp_path)
    assert "documents/devknow-jupyter.dev/guide/create-an-api-key" in seen["local_search"]
    assert len(seen["local_search"]) == 3 and seen["local_get"] and seen["local_answer"]
    assert seen["mcp_backend"] == "remote" and seen["mcp_search"][0] == "documents/docs.example.dev/keys/restrict"
    assert seen["mcp_get"] == seen["mcp_search"][:1]
    assert seen["fallback_backend"] == "local (offline fallback)" and seen["fallback_search"]
    assert "could not be reached" in seen["fallback_notices"][0]
    assert seen["rest_without_extra"].endswith("which is not installed: pip install 'devknow-jupyter[rest]'")
    assert seen["extras_imported"] == []


def test_magics_in_an_ipython_shell(base_env: dict[str, str], tmp_path: Path, sdk_server: RunningServer) -> None:
    seen = probe("magics", sdk_server.url, env=base_env, cwd=tmp_path)
    assert seen["load_ext"] and seen["magics"] == ["deverror", "devget", "devknow", "devsearch"]
    assert seen["cell_magics"] == ["devask"]
    for magic in ("devknow", "devsearch", "devget", "devask"):
        assert seen[magic] == {"success": True, "stderr": ""}, magic
    assert seen["hits"][0] == seen["page"][0] == "documents/docs.example.dev/keys/restrict"
    assert "documents/docs.example.dev/keys/restrict" in seen["answer_references"]
    assert seen["extras_imported"] == []


def test_cli_search_index_and_one_line_for_a_missing_extra(base_env: dict[str, str], tmp_path: Path) -> None:
    search = run([str(DEVKNOW), "search", "api", "key"], base_env, tmp_path)
    assert search.returncode == 0, search.stderr
    assert "documents/devknow-jupyter.dev/guide/create-an-api-key" in search.stdout
    indexed = run([str(DEVKNOW), "index", str(FIXTURE_DOCS)], base_env, tmp_path)
    assert indexed.returncode == 0, indexed.stderr
    found = run([str(DEVKNOW), "--endpoint", "local", "search", "restrict", "an", "API", "key"], base_env, tmp_path)
    assert "documents/docs.example.dev/keys/restrict" in found.stdout, found.stderr

    serve = run([str(DEVKNOW), "serve", "--port", str(free_port())], base_env, tmp_path)
    rest = run([str(DEVKNOW), "--endpoint", "http://127.0.0.1:9/mcp", "--protocol", "rest", "search", "key"],
               base_env, tmp_path)
    for result, extra in ((serve, "server"), (rest, "rest")):
        assert result.returncode != 0 and "Traceback" not in result.stderr, result.stderr
        first = result.stderr.splitlines()[0]
        assert first.startswith("devknow: error: ") and first.endswith(f"pip install 'devknow-jupyter[{extra}]'")
