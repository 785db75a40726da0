"""Answers grounded in some sites and recent pages: ``source``/``since`` of ``answer_query``, ``ask``,
``%%devask`` and ``devknow ask``.

REST's AnswerQuery takes a ``filter`` (AIP-160, like SearchDocumentChunks'); the local index (and `devknow
serve`, and the offline fallback) one site and ``since``; the MCP tools none, and their answers say so in one
line. Against the REST loopback server
(``tests/servers/rest_server.py``, which refuses a filter it cannot parse), the MCP test server and the
local index.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

pytest.importorskip("google.developer_knowledge_v1", reason="the rest extra is not installed")

from devknow_jupyter import Answer, ConfigurationError, DevKnowClient, SearchResults, ToolError
from devknow_jupyter.local.backend import LocalBackend
from tests.servers.rest_server import RestServer

QUESTION = "How do I create a bucket?"
TWO_SITES = '(data_source = "docs.cloud.google.com" OR data_source = "firebase.google.com")'


@pytest.fixture
def server():
    with RestServer() as running:
        yield running


def rest_client(server: RestServer) -> DevKnowClient:
    return DevKnowClient(server.url, protocol="rest", api_key=server.api_key, cache=False, offline_store=False)


def test_rest_answers_take_sites_and_a_date_as_one_filter(server: RestServer) -> None:
    with rest_client(server) as client:
        sites = ["docs.cloud.google.com", "firebase.google.com"]
        answer = client.answer_query(QUESTION, source=sites, since="2026-01-01")
    assert isinstance(answer, Answer) and answer.citations and answer.info.notices == []
    body = server.calls_to(":answerQuery")[0].body
    assert body["filter"] == f'{TWO_SITES} AND update_time >= "2026-01-01T00:00:00Z"'


def test_rest_answers_without_options_send_no_filter(server: RestServer) -> None:
    with rest_client(server) as client:
        client.answer_query(QUESTION)
    assert "filter" not in server.calls_to(":answerQuery")[0].body


def test_a_path_is_filtered_by_its_site_and_said(server: RestServer) -> None:
    with rest_client(server) as client:
        answer = client.answer_query(QUESTION, source="firebase.google.com/docs/storage")
    assert server.calls_to(":answerQuery")[0].body["filter"] == 'data_source = "firebase.google.com"'
    assert answer.info.notices == [
        "Not applied to the answer: the path of firebase.google.com/docs/storage (the service filters by site)."
    ]


def test_ask_falls_back_to_a_search_with_the_same_filter(server: RestServer) -> None:
    server.quota_left["answer"] = 0
    with rest_client(server) as client:
        result = client.ask(QUESTION, source="firebase.google.com")
    assert isinstance(result, SearchResults) and "quota" in result.info.notices[0].lower()
    assert server.calls_to("searchDocumentChunks")[0].query["filter"] == ['data_source = "firebase.google.com"']
    assert all("firebase.google.com" in name for name in result.names)


def test_mcp_answers_say_in_one_line_what_they_cannot_apply(sdk_server) -> None:
    with DevKnowClient(sdk_server.url, api_key="k-answer-filter-3", cache=False, offline_store=False) as client:
        answer = client.answer_query("restrict an API key", source="web.dev", since="2026-02-01")
    assert answer.answer_text
    assert answer.info.notices == [
        "Not applied: source web.dev and since 2026-02-01T00:00:00Z (this server's answers take no filter)."
    ]


def write_kite_pages(folder: Path) -> Path:
    """Our own words: the same question answered on two sites; the 2020 site's page is the better match."""
    folder.mkdir(parents=True, exist_ok=True)
    pages = {
        "old": ("kites.example", "Flying a kite in strong wind", "Fly a kite in strong wind with a short line, "
                "a heavy tail and a kite made for strong wind. Strong wind kites need a short line.", OLD),
        "new": ("sails.example", "Sails and wind", "A kite or a sail in strong wind wants a short line.", NEW),
    }
    for slug, (site, title, body, stamp) in pages.items():
        path = folder / f"{slug}.md"
        path.write_text(
            f"---\nname: documents/{site}/{slug}\nuri: https://{site}/{slug}\ntitle: {title}\n---\n"
            f"# {title}\n\n{body}\n",
            encoding="utf-8",
        )
        os.utime(path, (stamp, stamp))
    return folder


OLD, NEW = 1_577_836_800, 1_780_272_000  # 2020-01-01 and 2026-06-01, as file modification times
KITE_QUESTION = "how do I fly a kite in strong wind"


def test_local_answers_are_grounded_in_one_site(tmp_path: Path) -> None:
    with DevKnowClient(f"local:{write_kite_pages(tmp_path / 'kites')}", cache=False) as client:
        unfiltered = client.answer_query(KITE_QUESTION)
        grounded = client.answer_query(KITE_QUESTION, source="sails.example")
        tools = {tool["name"]: tool for tool in client.list_tools()}
    assert unfiltered.references[0] == "documents/kites.example/old"
    assert grounded.references == ["documents/sails.example/new"] and grounded.info.notices == []
    assert {"source", "since"} <= set(tools["answer_query"]["inputSchema"]["properties"])  # `devknow serve` too


def test_local_answers_leave_out_pages_older_than_since(tmp_path: Path) -> None:
    with DevKnowClient(f"local:{write_kite_pages(tmp_path / 'kites')}", cache=False) as client:
        recent = client.answer_query(KITE_QUESTION, since="2026-01-01")
        none_left = client.answer_query(KITE_QUESTION, source="kites.example", since="2026-01-01")
    assert recent.references == ["documents/sails.example/new"] and recent.info.notices == []
    assert none_left.references == []
    assert none_left.info.notices == [
        "No matching page was updated since 2026-01-01T00:00:00Z (1 older ones left out)."
    ]


def test_local_answers_say_what_they_cannot_apply(tmp_path: Path) -> None:
    folder = write_kite_pages(tmp_path / "kites")
    with DevKnowClient(f"local:{folder}", cache=False) as client:
        answer = client.answer_query(KITE_QUESTION, source=["kites.example", "sails.example"])
        with pytest.raises(ConfigurationError, match="Not a date"):
            client.answer_query(KITE_QUESTION, since="the day before yesterday")
    assert answer.info.notices == [
        "Not applied: source kites.example, sails.example (this server's answers take one site)."
    ]
    assert answer.references[0] == "documents/kites.example/old"
    backend = LocalBackend.from_spec(f"local:{folder}")  # what `devknow serve` runs: the tool's own error
    try:
        with pytest.raises(ToolError, match="answer_query failed: INVALID_ARGUMENT: since"):
            backend.call_tool("answer_query", {"query": KITE_QUESTION, "since": "the day before yesterday"})
    finally:
        backend.close()


def test_the_offline_fallback_grounds_its_answer_too(closed_port_url: str) -> None:
    with DevKnowClient(closed_port_url, api_key="k-answer-filter-9", cache=False, offline_store=False) as client:
        answer = client.answer_query("How do I clear the cache?", source="devknow-jupyter.dev")
        elsewhere = client.answer_query("How do I clear the cache?", source="adk.dev")
    assert answer.references and all(name.startswith("documents/devknow-jupyter.dev/") for name in answer.references)
    assert "could not be reached" in answer.info.notices[0] and len(answer.info.notices) == 1
    assert elsewhere.references == [] and len(elsewhere.info.notices) == 1


def test_devask_magic_passes_source_and_since(server: RestServer, ip, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DEVKNOW_API_KEY", server.api_key)
    monkeypatch.setenv("DEVKNOW_ENDPOINT", server.url)
    monkeypatch.setenv("DEVKNOW_PROTOCOL", "rest")
    answer = ip.run_cell_magic("devask", "--source web.dev,developer.chrome.com --since 2025-06-01", QUESTION)
    assert isinstance(answer, Answer)
    expected = '(data_source = "web.dev" OR data_source = "developer.chrome.com")'
    expected += ' AND update_time >= "2025-06-01T00:00:00Z"'
    assert server.calls_to(":answerQuery")[0].body["filter"] == expected


def test_cli_ask_passes_sources_and_since(server: RestServer, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    from devknow_jupyter.cli import main

    monkeypatch.setenv("DEVKNOW_API_KEY", server.api_key)
    argv = ["--endpoint", server.url, "--protocol", "rest", "--json", "ask", "--source", "docs.cloud.google.com"]
    argv += ["--source", "firebase.google.com", "--since", "2026-01-01", QUESTION]
    assert main(argv) == 0
    assert json.loads(capsys.readouterr().out)["answerText"]
    assert server.calls_to(":answerQuery")[0].body["filter"] == f'{TWO_SITES} AND update_time >= "2026-01-01T00:00:00Z"'
