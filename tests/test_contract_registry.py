"""The done-when of issue 23 item 1: a tool added through the registry shows in every face.

The test-only tool ``outline_document`` (``tests/registry_tool.py``) is added in **1 file** holding the four parts
the registry asks for: its registry entry, its model, its view and the backend that serves it (in the product:
``registry.py``, ``models.py``, ``render/views.py`` and ``local/backend.py``, 4 files, none of them a face).
With it installed, and no face edited, it is served by:

* the magics: ``%devoutline NAME`` in a real IPython shell;
* the CLI: ``devknow outline NAME`` (text and ``--json``);
* the panel API: ``GET devknow/api/tools/outline?text=NAME`` on a real Jupyter server (another process, which
  installs the tool as a server extension);
* ``devknow serve``: listed by ``tools/list`` and called over MCP by :class:`DevKnowClient` (the MCP backend's
  generic ``invoke``) on a real loopback server.

Each face is checked for the headings of one fixture page, and the base registry is checked to be untouched
afterwards (the tool is gone once uninstalled, so the test can fail both ways).
"""

from __future__ import annotations

import io
import json
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from devknow_jupyter import DevKnowClient, registry
from devknow_jupyter.cli import main
from devknow_jupyter.contract import AnswerQuery, SearchQuery
from devknow_jupyter.local.backend import LocalBackend
from tests import registry_tool
from tests.conftest import FIXTURE_DOCS, free_port, stop_process

RESTRICT = "documents/docs.example.dev/keys/restrict"
LOCAL = f"local:{FIXTURE_DOCS}"


def expected_headings() -> list[str]:
    """The page's headings, read here from its Markdown."""
    with DevKnowClient(LOCAL, cache=False) as client:
        content = client.get_documents([RESTRICT])[0].content
    return [line.lstrip("#").strip() for line in content.splitlines() if line.startswith("#")]


@pytest.fixture
def outline_tool() -> Iterator[None]:
    registry_tool.install()
    yield
    registry_tool.uninstall()


def test_without_the_tool_no_face_knows_it(capsys: pytest.CaptureFixture[str]) -> None:
    assert registry.find_entry("outline") is None
    assert main(["outline", RESTRICT]) == 2  # argparse: no such command
    assert [entry.name for entry in registry.entries()] == ["search_documents", "get_documents", "answer_query"]


def test_the_python_api_and_the_cli(outline_tool: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DEVKNOW_CACHE_DIR", str(tmp_path))
    headings = expected_headings()
    assert headings and "Restrict an API key" in headings
    with DevKnowClient(LOCAL, cache=False) as client:
        assert client.run_tool("outline", RESTRICT) == registry_tool.Outline(RESTRICT, headings)
    out = io.StringIO()
    monkeypatch.setattr("sys.stdout", out)
    assert main(["outline", RESTRICT, "--endpoint", LOCAL]) == 0
    assert out.getvalue().splitlines() == [f"{n}. {heading}" for n, heading in enumerate(headings, 1)]
    out.truncate(0)
    out.seek(0)
    assert main(["outline", RESTRICT, "--json", "--endpoint", LOCAL]) == 0
    assert json.loads(out.getvalue()) == {"name": RESTRICT, "headings": headings}


def test_the_magic_in_an_ipython_shell(outline_tool: None, ip, tmp_path: Path) -> None:
    ip.run_line_magic("reload_ext", "devknow_jupyter")  # the magics are made from the registry when loaded
    ip.run_line_magic("devknow", f"--endpoint {LOCAL}")
    ip.run_line_magic("devoutline", RESTRICT)
    assert ip.user_ns["_devoutline"] == registry_tool.Outline(RESTRICT, expected_headings())
    ip.run_line_magic("unload_ext", "devknow_jupyter")
    assert "devoutline" not in ip.magics_manager.magics["line"]
    ip.run_line_magic("load_ext", "devknow_jupyter")


def test_devknow_serve_lists_and_serves_it_over_mcp(outline_tool: None) -> None:
    import uvicorn

    from devknow_jupyter.local.server import build_app

    backend = LocalBackend.from_spec(LOCAL)
    port = free_port()
    config = uvicorn.Config(build_app(backend, port=port), host="127.0.0.1", port=port, log_level="error")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        for _ in range(200):  # until uvicorn listens
            if server.started:
                break
            threading.Event().wait(0.05)
        with DevKnowClient(f"http://127.0.0.1:{port}/mcp", cache=False, offline_fallback=False) as client:
            assert registry_tool.NAME in {tool["name"] for tool in client.list_tools()}
            assert "outline" in client.backend.capabilities.operations
            assert client.run_tool("outline", RESTRICT) == registry_tool.Outline(RESTRICT, expected_headings())
            # The three tools still go through the typed contract alike.
            assert client.backend.search(SearchQuery("restrict a key")).names[0] == RESTRICT
            assert client.backend.answer(AnswerQuery("restrict a key")).references
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        backend.close()


def test_the_panel_api_on_a_jupyter_server(outline_tool: None, tmp_path: Path) -> None:
    from tests.test_labext import start_jupyter_server

    config = {
        "ServerApp": {"jpserver_extensions": {"tests.registry_tool": True, "devknow_jupyter.labext": True}},
        "DevKnowServer": {"endpoint": LOCAL},
    }
    server = start_jupyter_server(tmp_path, config=config)
    try:
        status, reply, text = server.call("GET", f"tools/outline?text={RESTRICT}")
        assert status == 200, text
        assert reply["tool"] == registry_tool.NAME
        assert reply["result"] == {"name": RESTRICT, "headings": expected_headings()}
        assert reply["html"].startswith('<ol class="devknow-outline"><li>')
        status, reply, _ = server.call("GET", "tools/nothing?text=x")
        assert status == 400 and "outline" in reply["error"]["hint"]
    finally:
        stop_process(server.proc)
