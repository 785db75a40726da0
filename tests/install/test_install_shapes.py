"""Every install shape as users get it: the built wheel installed into a fresh virtualenv per shape (no extras,
``[rest]``, ``[server]``, ``[semantic]``, ``[lab]``) and the sdist once, with no Node on PATH; in each, what the
shape promises, run with that virtualenv's own Python and commands.

The base shape is installed with plain pip, by the README's own command for a built wheel; the others with uv,
whose cache is shared across shapes and runs, so the heavy shared dependencies are downloaded once. All shapes
install at once (threads running the installers), then each one's checks run. Servers the shapes talk to run
from this environment: the MCP test server, the REST look-alike (tests/servers/). The seconds each shape took
are printed at the end (``-s``) and written to install-shapes-seconds.json in the run's temporary folder.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.conftest import FIXTURE_DOCS, RunningServer, free_port, stop_process, wait_for_port
from tests.install.conftest import BuiltDists
from tests.install.venvs import UV, Venv, readme_install_commands
from tests.servers.rest_server import RestServer

pytestmark = pytest.mark.timeout(900)  # a first run on a machine downloads every shape's packages

ANSI = re.compile(r"\x1b\[[0-9;]*m")
NPM_NAME = "devknow-jupyter"
#: shape → the extras it installs (``sdist``: the source distribution, no extras).
SHAPES = {"base": "", "rest": "rest", "server": "server", "semantic": "semantic", "lab": "lab", "sdist": ""}


def wheel_command() -> str:
    """The README's line that installs a built wheel from ``dist/``: the base shape runs it as it is."""
    (line,) = [line for line in readme_install_commands() if "dist/" in line]
    return line


def _install(name: str, dists: BuiltDists, root: Path) -> Venv:
    started = time.monotonic()
    # The sdist is built by the installer with no Node on PATH: the prebuilt panel in it must do.
    shape = Venv(name, root / name, node=name != "sdist")
    if name == "base":  # plain pip, as users do: the README's own command, in a folder with the wheel in dist/
        shape.create(pip=True)
        (shape.folder / "dist").mkdir()
        shutil.copy2(dists.wheel, shape.folder / "dist")
        shape.shell(wheel_command())
    else:
        shape.create(pip=False)
        target = str(dists.sdist) if name == "sdist" else f"{NPM_NAME} @ {dists.wheel.as_uri()}"
        if SHAPES[name]:
            target = f"{NPM_NAME}[{SHAPES[name]}] @ {dists.wheel.as_uri()}"
        shape.run(*UV, "pip", "install", "-q", "--python", shape.bin / "python", target)
    shape.timed("install", started)
    return shape


@pytest.fixture(scope="module")
def shapes(built_dists: BuiltDists, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Venv]]:
    """Every shape installed, all at once. The virtualenvs stay for pytest's temporary-folder retention to remove
    (uv's are mostly hard links into its cache; deleting them here took 40 s)."""
    root = tmp_path_factory.mktemp("shapes")
    with ThreadPoolExecutor(max_workers=len(SHAPES)) as pool:
        futures = {name: pool.submit(_install, name, built_dists, root) for name in SHAPES}
        installed = {name: future.result() for name, future in futures.items()}
    yield installed
    report = {name: shape.seconds for name, shape in installed.items()}
    (root.parent / "install-shapes-seconds.json").write_text(json.dumps(report, indent=1))
    print(f"\ninstall shapes, seconds: {json.dumps(report)}")


@pytest.mark.parametrize("name", list(SHAPES))
def test_each_shape_imports_from_its_venv_and_has_only_its_extras(shapes: dict[str, Venv], name: str) -> None:
    shape = shapes[name]
    seen = shape.probe("imports")
    assert seen["package"].startswith(str(shape.folder / "venv")), seen["package"]  # the wheel's, not a checkout's
    # jupyterlab brings requests, but not Google's client: only the shape's own extra is complete.
    assert seen["extras_installed"] == ([SHAPES[name]] if SHAPES[name] else [])
    assert seen["extras_imported"] == []  # importing the client, the magics and the CLI loads none of them


def test_base_python_api_cli_and_magics(shapes: dict[str, Venv], sdk_server: RunningServer,
                                        closed_port_url: str) -> None:
    shape, started = shapes["base"], time.monotonic()
    seen = shape.probe("api", sdk_server.url, closed_port_url)
    assert "documents/devknow-jupyter.dev/guide/create-an-api-key" in seen["local_search"]
    assert seen["mcp_backend"] == "remote" and seen["mcp_search"][0] == "documents/docs.example.dev/keys/restrict"
    assert seen["fallback_backend"] == "local (offline fallback)" and seen["fallback_search"]
    assert seen["rest_without_extra"].endswith("pip install 'devknow-jupyter[rest]'")
    magics = shape.probe("magics", sdk_server.url)
    assert magics["magics"] == ["deverror", "devget", "devknow", "devsearch"] and magics["cell_magics"] == ["devask"]
    assert all(magics[magic] == {"success": True, "stderr": ""} for magic in ("devsearch", "devget", "devask"))
    assert magics["hits"][0] == magics["page"][0] == "documents/docs.example.dev/keys/restrict"
    search = shape.run("devknow", "search", "api", "key")
    assert "documents/devknow-jupyter.dev/guide/create-an-api-key" in search.stdout
    serve = shape.run("devknow", "serve", "--port", str(free_port()), check=False)
    assert serve.returncode != 0 and "Traceback" not in serve.stderr
    assert serve.stderr.splitlines()[0].endswith("pip install 'devknow-jupyter[server]'")
    shape.timed("checks", started)


def test_rest_shape_calls_the_loopback_rest_server(shapes: dict[str, Venv]) -> None:
    shape, started = shapes["rest"], time.monotonic()
    with RestServer() as server:
        seen = shape.probe("rest", server.url, server.api_key)
        calls = [call.path for call in server.calls]
    assert seen["protocol"] == "rest" and seen["get"] and seen["answer"]
    assert len(seen["search"]) == 2 and all("/docs.cloud.google.com/" in name for name in seen["search"])
    assert any("searchDocumentChunks" in path for path in calls) and any("answerQuery" in path for path in calls)
    shape.timed("checks", started)


def test_server_shape_serves_to_the_official_sdk_client(shapes: dict[str, Venv]) -> None:
    from mcp import Client

    from tests.test_serve import with_sdk_client

    shape, started = shapes["server"], time.monotonic()
    port = free_port()
    log = shape.folder / "serve.log"
    with log.open("wb") as out:
        proc = subprocess.Popen([str(shape.bin / "devknow"), "serve", "--docs", str(FIXTURE_DOCS), "--port", str(port)],
                                cwd=shape.folder, env=shape.env, stdout=out, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL)
    try:
        wait_for_port(port, proc, log, deadline=60)

        async def body(client: Client) -> dict:
            tools = await client.list_tools()
            found = await client.call_tool("search_documents", {"query": "restrict an API key"})
            return {"tools": [tool.name for tool in tools.tools], "hits": found.structured_content["results"]}

        seen = with_sdk_client(f"http://127.0.0.1:{port}/mcp", body)
    finally:
        stop_process(proc)
    assert seen["tools"] == ["search_documents", "get_documents", "answer_query"]
    assert seen["hits"][0]["parent"] == "documents/docs.example.dev/keys/restrict"
    shape.timed("checks", started)


def test_semantic_shape_ranks_with_the_in_wheel_embeddings(shapes: dict[str, Venv]) -> None:
    shape, started = shapes["semantic"], time.monotonic()
    seen = shape.probe("semantic", FIXTURE_DOCS, shape.folder / "semantic.sqlite3")
    assert seen["enabled"] and seen["page_vectors"] == len(list(FIXTURE_DOCS.glob("*.md")))
    assert seen["hits"] and seen["hits"][0] == "documents/docs.example.dev/keys/restrict"
    shape.timed("checks", started)


def test_lab_shape_lists_both_extensions_enabled(shapes: dict[str, Venv]) -> None:
    shape, started = shapes["lab"], time.monotonic()
    lab = shape.run("jupyter", "labextension", "list")
    listed = ANSI.sub("", lab.stdout + lab.stderr)
    assert re.search(rf"{NPM_NAME} v\S+ enabled\s+OK", listed), listed
    assert str(shape.folder / "venv" / "share" / "jupyter" / "labextensions") in listed
    server = shape.run("jupyter", "server", "extension", "list")
    listed = ANSI.sub("", server.stdout + server.stderr)
    assert re.search(r"devknow_jupyter\.labext enabled", listed), listed
    assert re.search(r"devknow_jupyter\.labext\s+OK", listed), listed  # it imported and validated
    shape.timed("checks", started)


def test_sdist_installs_without_node_and_carries_the_built_panel(shapes: dict[str, Venv]) -> None:
    shape = shapes["sdist"]
    assert shutil.which("node", path=shape.env["PATH"]) is None and shutil.which("jlpm", path=shape.env["PATH"]) is None
    panel = shape.folder / "venv" / "share" / "jupyter" / "labextensions" / NPM_NAME
    assert (panel / "package.json").is_file() and list((panel / "static").glob("remoteEntry.*.js"))
    search = shape.run("devknow", "search", "api", "key")
    assert "documents/devknow-jupyter.dev/guide/create-an-api-key" in search.stdout
