"""The protocol row of ``%devknow`` and ``devknow status`` (MCP with its era, REST, local) and the installed
knowledge packs in ``devknow status``: through the CLI (``main([...])``) and a real IPython shell, against
the MCP test server, the REST loopback server and the local index."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from devknow_jupyter import packs
from devknow_jupyter.cli import main


def status_rows(text: str) -> dict[str, str]:
    """``devknow status``'s text as {row name: value}."""
    rows = {}
    for line in text.splitlines():
        name, _, value = line.partition("  ")
        rows[name.strip()] = value.strip()
    return rows


NOTE = """---
name: documents/notes.team.test/deploy
uri: https://notes.team.test/deploy
title: Deploying
---
Deploys leave from the release branch on Tuesdays, once the checklist is green.
"""


def notes_pack(tmp_path: Path) -> Path:
    """A one-page pack called ``notes``, built from a folder of our own words."""
    (tmp_path / "team-notes").mkdir()
    (tmp_path / "team-notes" / "deploy.md").write_text(NOTE, encoding="utf-8")
    return packs.build([tmp_path / "team-notes"], tmp_path / "notes.pack").path


def test_local_status_names_the_protocol_and_the_installed_packs(tmp_path: Path, capsys) -> None:
    assert main(["--endpoint", "local", "status"]) == 0
    rows = status_rows(capsys.readouterr().out)
    assert rows["protocol"] == "local index (no network)" and rows["packs"] == "none"
    assert "era" not in rows  # folded into the protocol row
    packs.add(notes_pack(tmp_path))
    assert main(["--endpoint", "local", "status"]) == 0
    assert status_rows(capsys.readouterr().out)["packs"] == "notes (1 page)"
    assert main(["--endpoint", "local", "--json", "status"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["protocol"] == "local" and data["packs"] == ["notes (1 page)"]


def test_a_served_pack_is_listed(tmp_path: Path, capsys) -> None:
    pack = notes_pack(tmp_path)
    assert main(["--endpoint", f"local:{pack}", "--json", "status"]) == 0
    assert json.loads(capsys.readouterr().out)["packs"] == ["notes (1 page)"]


def test_mcp_status_names_the_era(sdk_server, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    monkeypatch.setenv("DEVKNOW_API_KEY", "k-status-rows-2")
    assert main(["--endpoint", sdk_server.url, "status"]) == 0
    protocol = status_rows(capsys.readouterr().out)["protocol"]
    assert protocol.startswith("MCP, ") and " era (" in protocol
    assert main(["--endpoint", sdk_server.url, "--json", "status"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["protocol"] == "mcp" and data["era"] in ("modern", "handshake")
    assert protocol == f"MCP, {data['era']} era ({data['protocol_version']})"


def test_rest_status_and_the_magics_protocol_row(ip, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    pytest.importorskip("google.developer_knowledge_v1", reason="the rest extra is not installed")
    from tests.servers.rest_server import RestServer

    with RestServer() as server:
        monkeypatch.setenv("DEVKNOW_API_KEY", server.api_key)
        assert main(["--endpoint", server.url, "--protocol", "rest", "status"]) == 0
        assert status_rows(capsys.readouterr().out)["protocol"] == "REST (the API's v1 surface)"
        monkeypatch.setenv("DEVKNOW_ENDPOINT", server.url)
        monkeypatch.setenv("DEVKNOW_PROTOCOL", "rest")
        status = ip.run_line_magic("devknow", "")
    assert dict(status.rows)["protocol"] == "REST (the API's v1 surface)"


def test_the_magics_protocol_row_names_the_mcp_era(sdk_server, ip, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DEVKNOW_API_KEY", "k-status-rows-3")
    monkeypatch.setenv("DEVKNOW_ENDPOINT", sdk_server.url)
    rows = dict(ip.run_line_magic("devknow", "").rows)
    assert rows["protocol"].startswith("MCP, ") and " era (" in rows["protocol"]
    monkeypatch.setenv("DEVKNOW_ENDPOINT", "local")
    ip.run_line_magic("devknow", "--endpoint local")
    assert dict(ip.run_line_magic("devknow", "").rows)["protocol"] == "local index (no network)"


def test_the_magics_list_the_installed_packs_as_devknow_status_does(ip, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("DEVKNOW_ENDPOINT", "local")
    assert dict(ip.run_line_magic("devknow", "").rows)["packs"] == "none"
    packs.add(notes_pack(tmp_path))
    ip.run_line_magic("devknow", "--endpoint local")
    assert dict(ip.run_line_magic("devknow", "").rows)["packs"] == "notes (1 page)"
