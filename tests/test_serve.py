"""``devknow serve``: a real server process, checked with the official MCP SDK client and with our own client.

The server serves a temporary folder of small documents written here. The SDK client (async, run with
anyio inside the test) initializes in both protocol eras, lists the tools (which must equal
``devknow_jupyter/tools.py``) and calls each one; tokens and the DNS rebinding checks are probed with
plain HTTP requests.
"""

from __future__ import annotations

import ipaddress
import json
import os
import socket
import subprocess
import sys
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from devknow_jupyter import DevKnowClient
from devknow_jupyter.cli import EXIT_STATUS
from devknow_jupyter.errors import AuthenticationError, ConfigurationError, DocumentNotFoundError
from devknow_jupyter.registry import tool_definitions
from devknow_jupyter.tools import TOOLS
from tests.conftest import ROOT, free_port, stop_process, wait_for_port

TOKEN = "serve-test-token-5d2a"  # a made-up token for these tests
SETUP = "documents/docs.lantern.test/setup"
ALERTS = "documents/docs.lantern.test/alerts"
API = "documents/docs.lantern.test/api"
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "probe", "version": "0"}},
}
MCP_HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}

PAGES = {
    "setup": """---
name: documents/docs.lantern.test/setup
uri: https://docs.lantern.test/setup
title: Set up Lantern
description: Install the Lantern relay and pair a sensor.
---
# Set up Lantern

Lantern relays telemetry from greenhouse sensors to your dashboard.

## Install the relay

Download the relay package and run the installer. The relay starts at boot.

## Pair a sensor

Hold the pairing button on the humidity sensor for five seconds, then confirm on the relay.
""",
    "alerts": """---
name: documents/docs.lantern.test/alerts
uri: https://docs.lantern.test/alerts
title: Lantern alerts
description: Get a message when a greenhouse gets too warm.
---
# Lantern alerts

## Thresholds

An alert fires when a reading stays above its threshold for three minutes.

## Quiet hours

Alerts wait until quiet hours end, unless the reading is critical.
""",
    "api": """---
name: documents/docs.lantern.test/api
uri: https://docs.lantern.test/api
title: Lantern HTTP API
description: Read sensor data over HTTP.
---
# Lantern HTTP API

## Tokens

Every request needs a relay token in the Authorization header.

## Readings

`GET /v1/readings` returns the latest reading of every sensor as JSON.
""",
}


@dataclass
class Served:
    """A ``devknow serve`` process and where it listens."""

    url: str
    port: int
    proc: subprocess.Popen
    log: Path

    def stop(self) -> None:
        stop_process(self.proc)


def write_docs(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for slug, text in PAGES.items():
        (folder / f"{slug}.md").write_text(text, encoding="utf-8")
    return folder


def start_serve(workdir: Path, docs: Path, *extra: str, env: dict[str, str] | None = None) -> Served:
    port = free_port()
    log = workdir / f"serve-{port}.log"
    # Explicit cache dir: module-wide servers start before the per-test isolation applies.
    base = {**os.environ, "DEVKNOW_CACHE_DIR": str(workdir / "cache")}
    for variable in ("DEVKNOW_API_KEY", "GOOGLE_API_KEY", "DEVKNOW_ENDPOINT", "DEVKNOW_SERVE_TOKEN"):
        base.pop(variable, None)
    env = {**base, **(env or {})}
    args = [sys.executable, "-m", "devknow_jupyter", "serve", "--docs", str(docs), "--port", str(port), *extra]
    with log.open("wb") as out:
        proc = subprocess.Popen(args, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env)
    wait_for_port(port, proc, log)
    return Served(f"http://127.0.0.1:{port}/mcp", port, proc, log)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """One server with default options (SSE, sessions, no token) for the module."""
    workdir = tmp_path_factory.mktemp("serve")
    server = start_serve(workdir, write_docs(workdir / "docs"))
    yield server
    server.stop()


@pytest.fixture
def serve_factory(tmp_path: Path) -> Iterator[Callable[..., Served]]:
    """Start servers with extra options; all are stopped after the test."""
    servers: list[Served] = []
    docs = write_docs(tmp_path / "docs")

    def start(*extra: str, env: dict[str, str] | None = None) -> Served:
        server = start_serve(tmp_path, docs, *extra, env=env)
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()


def with_sdk_client(url: str, body: Callable[[Client], Awaitable[Any]], *, mode: str = "auto", headers=None) -> Any:
    """Connect the official SDK client (as the starter guide shows) and run ``body`` with it."""

    async def run() -> Any:
        async with (
            httpx2.AsyncClient(headers=headers or {}, timeout=30) as http,
            Client(streamable_http_client(url, http_client=http), mode=mode) as client,
        ):
            return await body(client)

    return anyio.run(run)


# -- the official SDK client ----------------------------------------------------------------------


def test_prints_its_url(served: Served) -> None:
    text = served.log.read_text()
    assert "devknow serve: 3 documents from local:" in text
    assert f"at http://127.0.0.1:{served.port}/mcp" in text


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_sdk_lists_exactly_our_tools(served: Served, mode: str) -> None:
    async def body(client: Client) -> list[dict[str, Any]]:
        listed = await client.list_tools()
        return [tool.model_dump(by_alias=True, exclude_none=True, mode="json") for tool in listed.tools]

    tools = {tool["name"]: tool for tool in with_sdk_client(served.url, body, mode=mode)}
    assert list(tools) == list(TOOLS)
    for spec in tool_definitions(local=True):
        tool = tools[spec["name"]]
        for field in ("title", "description", "inputSchema", "outputSchema", "annotations"):
            assert tool[field] == spec[field], (spec["name"], field)
        assert tool["annotations"]["readOnlyHint"] is True and tool["annotations"]["idempotentHint"] is True


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_sdk_calls_each_tool(served: Served, mode: str) -> None:
    async def body(client: Client) -> dict[str, Any]:
        return {
            "search": await client.call_tool("search_documents", {"query": "pair a humidity sensor"}),
            "get": await client.call_tool("get_documents", {"names": [API, SETUP]}),
            "answer": await client.call_tool("answer_query", {"query": "When does an alert fire?"}),
        }

    results = with_sdk_client(served.url, body, mode=mode)
    for result in results.values():
        assert not result.is_error
        assert json.loads(result.content[0].text) == result.structured_content
    hits = results["search"].structured_content["results"]
    assert hits[0]["parent"] == SETUP and "pairing button" in hits[0]["content"]
    docs = results["get"].structured_content["documents"]
    assert [doc["name"] for doc in docs] == [API, SETUP]
    assert docs[0] == {
        "name": API,
        "uri": "https://docs.lantern.test/api",
        "title": "Lantern HTTP API",
        "description": "Read sensor data over HTTP.",
        "content": PAGES["api"].split("---\n", 2)[2],
    }
    answer = results["answer"].structured_content
    assert "three minutes" in answer["answerText"] and ALERTS in answer["references"]


def test_sdk_client_passes_the_site_filter(served: Served) -> None:
    async def body(client: Client) -> dict[str, Any]:
        listed = await client.list_tools()
        search = next(tool for tool in listed.tools if tool.name == "search_documents")
        return {
            "schema": search.input_schema,
            "same site": await client.call_tool("search_documents", {"query": "relay token", "source": "lantern.test"}),
            "other site": await client.call_tool("search_documents", {"query": "relay token", "source": "adk.dev"}),
            "bad": await client.call_tool("search_documents", {"query": "relay token", "source": 7}),
        }

    results = with_sdk_client(served.url, body)
    assert results["schema"]["properties"]["source"]["type"] == "string"
    assert results["same site"].structured_content["results"][0]["parent"] == API  # a subdomain counts
    other = results["other site"].structured_content
    assert other["results"] == [] and "No page on adk.dev" in other["notices"][0]
    assert results["bad"].is_error and "INVALID_ARGUMENT" in results["bad"].content[0].text


def test_sdk_sees_tool_errors(served: Served) -> None:
    async def body(client: Client) -> dict[str, Any]:
        out: dict[str, Any] = {
            "unknown": await client.call_tool("get_documents", {"names": [SETUP, "documents/docs.lantern.test/x"]}),
            "empty": await client.call_tool("search_documents", {"query": "  "}),
        }
        try:
            await client.call_tool("get_documents", {"names": [f"documents/docs.lantern.test/{i}" for i in range(21)]})
        except MCPError as exc:
            out["too_many"] = exc
        return out

    out = with_sdk_client(served.url, body)
    assert out["unknown"].is_error and "NOT_FOUND" in out["unknown"].content[0].text
    assert "documents/docs.lantern.test/x" in out["unknown"].content[0].text
    assert out["empty"].is_error and out["empty"].content[0].text.startswith("INVALID_ARGUMENT")
    assert out["too_many"].code == -32602 and "at most 20 names" in out["too_many"].message


def test_unknown_tool_is_a_tool_error(served: Served) -> None:
    with httpx.Client(timeout=10) as http:
        response = http.post(
            served.url,
            headers={
                **MCP_HEADERS,
                "MCP-Protocol-Version": "2026-07-28",
                "Mcp-Method": "tools/call",
                "Mcp-Name": "nope",
            },
            json={
                "jsonrpc": "2.0",
                "id": 7,
                "method": "tools/call",
                "params": {
                    "name": "nope",
                    "arguments": {},
                    "_meta": {
                        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                        "io.modelcontextprotocol/clientCapabilities": {},
                    },
                },
            },
        )
    assert response.status_code == 200, response.text
    result = response.json()["result"]
    assert result["isError"] is True and result["content"][0]["text"].startswith("Unknown tool: nope")


# -- our own client -------------------------------------------------------------------------------


def test_devknow_client_against_serve(served: Served) -> None:
    with DevKnowClient(served.url, cache=False) as client:
        assert client.backend_kind == "remote"
        assert client.list_tools() == tool_definitions(local=True)
        hits = client.search_documents("relay token authorization")
        assert hits.names[0] == API
        docs = client.get_documents([*hits.names, "https://docs.lantern.test/alerts"])
        assert docs[-1].name == ALERTS and docs[-1].title == "Lantern alerts"
        answer = client.answer_query("How do I install the relay?")
        assert SETUP in answer.references
        with pytest.raises(DocumentNotFoundError) as caught:
            client.get_documents([SETUP, "documents/docs.lantern.test/missing"])
        assert caught.value.missing == ["documents/docs.lantern.test/missing"]
        assert [doc.name for doc in caught.value.documents] == [SETUP]


def test_json_response_and_stateless(serve_factory: Callable[..., Served]) -> None:
    server = serve_factory("--json-response", "--stateless")
    with httpx.Client(timeout=10) as http:
        response = http.post(server.url, headers=MCP_HEADERS, json=INITIALIZE)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("application/json")
    assert "mcp-session-id" not in response.headers
    with DevKnowClient(server.url, cache=False) as client:
        assert client.search_documents("quiet hours").names[0] == ALERTS

    async def body(client: Client) -> Any:
        return await client.call_tool("get_documents", {"names": [ALERTS]})

    assert with_sdk_client(server.url, body, mode="legacy").structured_content["documents"][0]["name"] == ALERTS


# -- security -------------------------------------------------------------------------------------


def test_token_is_required_when_set(serve_factory: Callable[..., Served]) -> None:
    server = serve_factory("--token", TOKEN)
    with httpx.Client(timeout=10) as http:
        missing = http.post(server.url, headers=MCP_HEADERS, json=INITIALIZE)
        wrong = http.post(server.url, headers={**MCP_HEADERS, "Authorization": "Bearer nope"}, json=INITIALIZE)
        bearer = http.post(server.url, headers={**MCP_HEADERS, "Authorization": f"Bearer {TOKEN}"}, json=INITIALIZE)
        key = http.post(server.url, headers={**MCP_HEADERS, "X-Goog-Api-Key": TOKEN}, json=INITIALIZE)
    assert missing.status_code == 401 and wrong.status_code == 401
    assert missing.json()["error"]["status"] == "UNAUTHENTICATED"
    assert missing.headers["www-authenticate"].startswith("Bearer")
    assert bearer.status_code == 200 and key.status_code == 200

    with DevKnowClient(server.url, cache=False) as client, pytest.raises(AuthenticationError):
        client.search_documents("relay")
    with DevKnowClient(server.url, api_key=TOKEN, cache=False) as client:
        assert client.search_documents("relay").names

    async def body(client: Client) -> Any:
        return await client.call_tool("search_documents", {"query": "quiet hours"})

    headers = {"Authorization": f"Bearer {TOKEN}"}
    assert with_sdk_client(server.url, body, headers=headers).structured_content["results"][0]["parent"] == ALERTS
    assert TOKEN not in server.log.read_text()


def test_token_from_the_environment(serve_factory: Callable[..., Served]) -> None:
    server = serve_factory(env={"DEVKNOW_SERVE_TOKEN": TOKEN})
    with httpx.Client(timeout=10) as http:
        assert http.post(server.url, headers=MCP_HEADERS, json=INITIALIZE).status_code == 401
    with DevKnowClient(server.url, api_key=TOKEN, cache=False) as client:
        assert client.answer_query("quiet hours").references == [ALERTS]
    assert "clients must send the token" in server.log.read_text()
    assert TOKEN not in server.log.read_text()


def test_foreign_origin_and_host_are_rejected(served: Served) -> None:
    def post(**headers: str) -> httpx.Response:
        with httpx.Client(timeout=10) as http:
            return http.post(served.url, headers={**MCP_HEADERS, **headers}, json=INITIALIZE)

    foreign = post(Origin="http://evil.example")
    other_port = post(Origin="http://127.0.0.1:1")
    rebound = post(Host=f"evil.example:{served.port}")
    own = post(Origin=f"http://127.0.0.1:{served.port}")
    alias = post(Origin=f"http://localhost:{served.port}")
    assert foreign.status_code == 403 and other_port.status_code == 403
    assert rebound.status_code == 421
    assert own.status_code == 200 and alias.status_code == 200


def test_stops_on_terminate(serve_factory: Callable[..., Served]) -> None:
    server = serve_factory()
    server.proc.terminate()
    # A clean stop: uvicorn re-raises SIGTERM after its graceful shutdown; we exit 0 instead of dying by it.
    assert server.proc.wait(timeout=15) == 0
    with pytest.raises(httpx.ConnectError), httpx.Client(timeout=5) as http:
        http.post(server.url, headers=MCP_HEADERS, json=INITIALIZE)


# -- the names the server answers to (issue 12, item 10) -------------------------------------------------------


def own_address(family: socket.AddressFamily) -> str | None:
    """This machine's address on its default route (not loopback), or None when it has none."""
    target = "198.51.100.1" if family == socket.AF_INET else "2001:db8::1"  # documentation ranges; nothing is sent
    with socket.socket(family, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect((target, 9))
        except OSError:
            return None
        address = probe.getsockname()[0]
    return None if ipaddress.ip_address(address).is_loopback else address


def initialize(url: str, **headers: str) -> httpx.Response:
    with httpx.Client(timeout=10) as http:
        return http.post(url, headers={**MCP_HEADERS, **headers}, json=INITIALIZE)


@pytest.mark.parametrize("bound", ["0.0.0.0", "::"])
def test_bound_to_every_address_it_answers_at_the_machine_s_own_addresses(serve_factory, bound: str) -> None:
    addresses = [a for a in (own_address(socket.AF_INET), own_address(socket.AF_INET6) if bound == "::" else None) if a]
    if not addresses:
        pytest.skip("this machine has no address besides loopback")
    server = serve_factory("--host", bound)
    for address in addresses:
        shown = f"[{address}]" if ":" in address else address
        url = f"http://{shown}:{server.port}/mcp"
        with DevKnowClient(url, cache=False) as client:
            assert client.search_documents("pair a humidity sensor")[0].parent == SETUP
        assert initialize(url, Origin=f"http://{shown}:{server.port}").status_code == 200
        # DNS rebinding is still refused: a foreign name, another address, a foreign page.
        assert initialize(url, Host=f"evil.example:{server.port}").status_code == 421
        assert initialize(url, Host=f"203.0.113.9:{server.port}").status_code == 421
        assert initialize(url, Host=f"{shown}:{server.port + 1}").status_code == 421
        assert initialize(url, Origin="http://evil.example").status_code == 403
    assert initialize(server.url).status_code == 200  # and loopback as before
    assert initialize(server.url, Host=f"{socket.gethostname()}:{server.port}").status_code == 200


def test_allow_host_adds_names_and_refuses_the_rest(serve_factory) -> None:
    server = serve_factory("--allow-host", "docs.lantern.test", "--allow-host", "Proxy.Lantern.test:443")
    port = server.port
    for host in (f"docs.lantern.test:{port}", "docs.lantern.test", "DOCS.lantern.test:8443", "proxy.lantern.test:443"):
        assert initialize(server.url, Host=host).status_code == 200, host
    for host in ("proxy.lantern.test:444", "proxy.lantern.test", f"evil.example:{port}", "docs.lantern.test.evil:80"):
        assert initialize(server.url, Host=host).status_code == 421, host
    assert initialize(server.url, Host="docs.lantern.test", Origin="https://docs.lantern.test").status_code == 200
    assert initialize(server.url, Host="docs.lantern.test", Origin="https://evil.example").status_code == 403
    # Our own client through that name, as behind a proxy that keeps the Host header.
    with DevKnowClient(server.url, headers={"Host": "docs.lantern.test"}, cache=False) as client:
        assert client.answer_query("quiet hours").references == [ALERTS]


def test_allow_host_refuses_what_is_not_a_host_name(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "devknow_jupyter", "serve", "--docs", str(write_docs(tmp_path / "docs")),
         "--port", str(free_port()), "--allow-host", "http://docs.lantern.test/"],
        cwd=ROOT, capture_output=True, text=True, timeout=60,
        env={**os.environ, "DEVKNOW_CACHE_DIR": str(tmp_path / "cache")},
    )  # fmt: skip
    assert done.returncode == EXIT_STATUS[ConfigurationError], done.stderr
    assert done.stderr.strip() == (
        "devknow: error: --allow-host takes a host name or address, optionally with :PORT, "
        "not 'http://docs.lantern.test/'."
    )
